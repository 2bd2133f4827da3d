"""vLLM 0.34.0's own KV cache planner on the specs Mistral Large 4 registers (no GPU).

Mistral Large 4 ships a Mistral-format params.json. This script builds the cache specs with vLLM's own code
wherever that code runs on a CPU:

- the config is vLLM's adapt_config_dict (transformers_utils/configs/mistral.py) of the params.json, and
  MistralLarge4ForCausalLM.verify_and_update_config (model_executor/models/config.py) runs on it (with the
  checkpoint's dsa.fp8_kv_cache and --kv-cache-dtype auto it picks fp8_ds_mla);
- the layer plan is vLLM's get_layer_specs (models/mistral/common/layer_spec.py): which layers own a latent,
  which run an indexer;
- every indexer's key cache is vLLM's own MistralIndexerCache (models/mistral/nvidia/indexer.py), constructed
  with the arguments MistralIndexer.__init__ passes (index_head_dim fp8 bytes + a 4-byte scale per 128, uint8)
  and registered in the same order (before the layer's attention, which MistralMLAAttention.__init__ builds
  after its indexer);
- the latent attention is a stand-in carrying what MLAAttention.__init__ leaves on the layer (head_size
  kv_lora_rank + qk_rope_head_dim, the KV dtype after _canonicalize_sparse_mla_kv_cache_dtype, the top-k
  buffer width, the indexer, kv_sharing_target_layer_name for layers that read an earlier layer's latent); its
  spec comes from vLLM's own MLAAttention.get_kv_cache_spec, customised by the backend vLLM picks;
- the sparse MLA backend is the first in CudaPlatform's priority list (platforms/cuda.py
  _get_backend_priorities) that accepts the KV dtype (supported_kv_cache_dtypes) and the compute capability;
  FlashAttention's sparse MLA (Hopper, bf16 only) and FA4's (Blackwell, bf16, 16 heads or fewer a rank) do not
  import on a CPU, so FLASHMLA_SPARSE stands in for them (the script prints what it skipped): for a bf16
  latent all three take a multiple of 64 tokens and align blocks to whole rows (align_blocks_to_rows), so the
  figures are the same;
- cache_config.block_size is set by vLLM's Platform._preferred_block_size_for_backends over the backends in
  layer order (phase 1 of update_block_size_for_backend);
- the specs are collected by Model Runner V2's get_kv_cache_spec (v1/worker/gpu/attn_utils.py, which skips the
  KV-sharing layers and applies customize_attention_spec);
- the layout is vLLM's get_supported_kv_cache_layouts + resolve_kv_cache_layout (v1/attention/backends/utils.py);
- the planner is vLLM 0.34's kv_cache_planning (get_kv_cache_groups, get_kv_cache_config_from_groups,
  get_kv_cache_capacity, get_kv_cache_configs).

Run it from a folder other than the repository's root, with vLLM 0.34.0's sdist and the packages
benchmarks/vllm_oracle.py lists (plus einops, apache-tvm-ffi) on the path:

    cd /tmp && PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps:$REPO/benchmarks \\
        $REPO/.venv/bin/python $REPO/benchmarks/vllm_oracle_large4.py [--specs] [--grid]

--grid compares kvplan's pool (kvplan.engines.vllm, release 0.34) with the planner over the params.json forms of
tests/test_families_vllm034.py (LARGE4_PARAMS: KV sharing, NoPE every second layer, one indexer per four
layers; without KV sharing; with dsa.fp8_kv_cache), Hopper and Blackwell, --kv-cache-dtype auto / fp8 /
bfloat16, TP 1 and 8, 7.01 / 40 GiB, 8K / 128K / 1M.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

from vllm.config.attention import AttentionConfig
from vllm.config.cache import CacheConfig
from vllm.config.vllm import set_current_vllm_config
from vllm.distributed.kv_transfer.kv_connector.utils import get_current_attn_backends
from vllm.model_executor.layers.attention.mla_attention import (MLAAttention,
                                                                _canonicalize_sparse_mla_kv_cache_dtype)
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
from vllm.model_executor.models.config import MistralLarge4ForCausalLM as Large4Config
from vllm.models.mistral.common.layer_spec import get_layer_specs
from vllm.models.mistral.nvidia.indexer import MistralIndexer, MistralIndexerCache
from vllm.platforms import current_platform
from vllm.platforms.interface import DeviceCapability
from vllm.transformers_utils.configs.mistral import adapt_config_dict
from vllm.v1.attention.backends.utils import get_supported_kv_cache_layouts, resolve_kv_cache_layout
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec as mrv2_get_kv_cache_spec

from vllm_stub_config import plan_case, planner, print_specs, vllm_config as stub_vllm_config

planning = planner()[0]
REPO = Path(__file__).resolve().parents[1]
GIB = 2**30
MEMS = (7.01, 40)
LENS = (8192, 131072, 1048576)
# taken without their device probe, should their modules import (a stock CUDA build ships their kernels)
KERNEL_PROBED = {"FLASH_ATTN_MLA_SPARSE", "FLASH_ATTN_MLA_SPARSE_FA4"}
SKIPPED: dict[str, str] = {}  # backends whose module does not import on a CPU


def set_arch(major: int) -> None:
    """Make vLLM's current_platform report compute capability major.0 (SM90 / SM100)."""
    cap = DeviceCapability(major, 0)
    type(current_platform).get_device_capability = classmethod(lambda cls, device_id=0: cap)


def pick_backend(cfg, kv_cache_dtype: str, num_heads: int, major: int):
    """The sparse MLA backend CudaPlatform would pick (its priority order, dtype and capability checks)."""
    import types

    sys.modules.setdefault("vllm._C_stable_libtorch", types.ModuleType("vllm._C_stable_libtorch"))  # its ops only
    from vllm.platforms.cuda import _get_backend_priorities

    for enum in _get_backend_priorities(True, DeviceCapability(major, 0), num_heads, kv_cache_dtype, False, 576):
        try:
            cls = enum.get_class()
        except Exception as exc:  # noqa: BLE001 - its module needs a GPU library this CPU build lacks
            SKIPPED.setdefault(enum.name, f"{type(exc).__name__}: {str(exc)[:80]}")
            continue
        if not cls.is_sparse() or not cls.supports_compute_capability(DeviceCapability(major, 0)):
            continue
        if kv_cache_dtype not in cls.supported_kv_cache_dtypes:
            continue
        if cls.get_name() in KERNEL_PROBED:
            return cls
        with set_current_vllm_config(cfg):
            reason = cls.supports_combination(576, torch.bfloat16, kv_cache_dtype, None, True, False, True, False,
                                              DeviceCapability(major, 0))
        if reason is None:
            return cls
    raise SystemExit(f"no sparse MLA backend for {kv_cache_dtype} on SM{major}0")


class MLAStandIn(AttentionLayerBase):
    """What MLAAttention.__init__ leaves on the layer that get_kv_cache_spec reads."""

    get_kv_cache_spec = MLAAttention.get_kv_cache_spec

    def __init__(self, backend_cls, **attrs):
        self.backend_cls = backend_cls
        self.impl = SimpleNamespace(get_fp8_ds_mla_row_bytes=lambda: 656)  # AttentionImpl's (v1/attention/backend.py)
        self.is_draft_layer = False
        self.__dict__.update(attrs)

    def get_attn_backend(self):
        return self.backend_cls


def build_config(params: dict, kv_cache_dtype: str, tp: int, max_len: int, mnbt: int = 8192):
    hf = adapt_config_dict(copy.deepcopy(params), {})
    cfg = stub_vllm_config(max_len, mnbt=mnbt)
    cfg.cache_config = CacheConfig()
    cfg.cache_config.cache_dtype = kv_cache_dtype
    cfg.cache_config.kv_cache_layout = None  # resolved by vLLM's resolve_kv_cache_layout once the specs exist
    cfg.attention_config = AttentionConfig()
    cfg.compilation_config = SimpleNamespace(static_forward_context={})
    cfg.parallel_config.tensor_parallel_size = tp
    cfg.parallel_config.data_parallel_size = 1
    cfg.parallel_config.set_dcp_defaults = lambda comm_backend="ag_rs", q_replicate=False: None
    cfg.model_config.hf_config = hf
    cfg.model_config.hf_text_config = hf
    cfg.model_config.original_max_model_len = max_len
    cfg.model_config.dtype = torch.bfloat16  # dtype auto of a bf16 checkpoint
    cfg.scheduler_config.max_num_seqs = 1024
    cfg.num_speculative_tokens = 0
    Large4Config.verify_and_update_config(cfg)  # dsa.fp8_kv_cache + auto -> fp8_ds_mla
    return cfg, hf


def registered_specs(params: dict, kv_cache_dtype: str, tp: int, major: int, max_len: int):
    set_arch(major)
    cfg, hf = build_config(params, kv_cache_dtype, tp, max_len)
    heads = hf.num_attention_heads // tp
    backend = pick_backend(cfg, cfg.cache_config.cache_dtype, heads, major)
    dtype = _canonicalize_sparse_mla_kv_cache_dtype(backend, cfg.cache_config.cache_dtype)
    if dtype != cfg.cache_config.cache_dtype:  # MLAAttention.__init__ writes it back
        cfg.cache_config.cache_dtype = dtype
    ctx = cfg.compilation_config.static_forward_context
    topk_width = hf.index_topk if getattr(hf, "index_topk", None) is not None else None
    with set_current_vllm_config(cfg):
        for spec in get_layer_specs(hf):
            prefix = f"model.layers.{spec.layer_idx}.self_attn"
            indexer = None
            if spec.has_indexer:  # MistralIndexer.__init__: its k_cache, registered before the attention
                head = hf.index_head_dim + hf.index_head_dim // MistralIndexer.quant_block_size * 4
                indexer = MistralIndexerCache(head_dim=head, dtype=torch.uint8, prefix=f"{prefix}.indexer.k_cache",
                                              cache_config=cfg.cache_config)
            target = f"model.layers.{spec.kv_source_layer}.self_attn.attn" if spec.shares_kv else None
            ctx[f"{prefix}.attn"] = MLAStandIn(
                backend, kv_cache_dtype=dtype, head_size=hf.kv_lora_rank + hf.qk_rope_head_dim, sliding_window=None,
                topk_buffer_width=topk_width, indexer=indexer, non_causal_multi_token_decode=False,
                kv_sharing_target_layer_name=target)
        plat = type(current_platform)
        backends = plat._find_non_ssm_backends(cfg)
        cfg.cache_config.block_size = plat._preferred_block_size_for_backends(
            backends, CacheConfig.DEFAULT_BLOCK_SIZE, cfg)
        specs = mrv2_get_kv_cache_spec(cfg)
        supported = [layout.name for layout in get_supported_kv_cache_layouts(get_current_attn_backends(cfg))]
        layout = resolve_kv_cache_layout(cfg, [supported], list(specs.values()))
    report = dict(backend=backend.get_name(), cache_dtype=dtype, block_size=cfg.cache_config.block_size,
                  backends=[b.get_name() for b in backends], layout=layout.name)
    return cfg, specs, report


def describe(spec) -> str:
    return (f"{type(spec).__name__}: block {spec.block_size}, head_size {spec.head_size}, "
            f"dtype {str(spec.dtype).removeprefix('torch.')}, role {getattr(spec, 'cache_role', '-')}, "
            f"leader {getattr(spec, 'is_index_group_leader', '-')}, cache_dtype_str {spec.cache_dtype_str}, "
            f"state_content_bytes {spec.state_content_bytes}, page {spec.page_size_bytes} B "
            f"(block stride alignment {spec.get_block_stride_alignment()})")


def forms() -> dict[str, dict]:
    sys.path.insert(0, str(REPO / "tests"))
    from test_families_vllm034 import LARGE4_PARAMS

    plain = {k: v for k, v in LARGE4_PARAMS.items() if k != "kv_sharing"}
    return {"shared": LARGE4_PARAMS, "plain": plain,
            "fp8ckpt": {**LARGE4_PARAMS, "dsa": {**LARGE4_PARAMS["dsa"], "fp8_kv_cache": True}}}


def grid() -> None:
    """kvplan's pool against vLLM's planner over the forms, GPUs, KV dtypes, TP sizes, memories and lengths."""
    sys.path.insert(0, str(REPO))
    from kvplan.configs.build import build_model
    from kvplan.configs.mistral_params import to_config
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    rules = resolve("0.34")[0]
    agree = differ = 0
    for name, params in forms().items():
        model = build_model(to_config(params, "params.json"), name)
        for major, gpu in ((9, "h100"), (10, "b200")):
            for dtype in ("auto", "fp8", "bfloat16"):
                for tp in (1, 8):
                    cfg, specs, report = registered_specs(params, dtype, tp, major, 8192)
                    # kvplan: the dtype vLLM serves for auto with dsa.fp8_kv_cache is planned with --kv-cache-dtype
                    # left to kvplan's own resolution
                    for gib in MEMS:
                        for max_len in LENS:
                            memory = int(gib * GIB)
                            _, _, kv, tokens, _, fits = plan_case(cfg, specs, memory, max_len)
                            theirs = (kv.num_blocks, tokens, fits)
                            pool = simulate(model, tp=tp, kv_memory_bytes=memory, max_model_len=max_len,
                                            max_num_batched_tokens=8192, gpu=gpu,
                                            kv_cache_dtype=None if dtype == "auto" else dtype,
                                            allow_long_max_model_len=True, rules=rules)
                            ours = (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits)
                            if theirs == ours:
                                agree += 1
                            else:
                                differ += 1
                                print(f"DIFFER {name} {gpu} {dtype} (vLLM {report['backend']} "
                                      f"{report['cache_dtype']}) tp {tp} {gib} GiB {max_len}: vLLM {theirs}, "
                                      f"kvplan {ours}")
    print(f"vLLM 0.34 Mistral Large 4 grid: {agree} agree, {differ} differ")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--form", default="shared", choices=("shared", "plain", "fp8ckpt"))
    parser.add_argument("--arch", default="sm90", choices=("sm90", "sm100"))
    parser.add_argument("--kv-cache-dtype", default="auto")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--specs", action="store_true", help="print every registered spec's name")
    parser.add_argument("--grid", action="store_true", help="compare kvplan's pool with vLLM's planner on a grid")
    args = parser.parse_args()
    if args.grid:
        grid()
        return
    params = forms()[args.form]
    major = {"sm90": 9, "sm100": 10}[args.arch]
    cfg, specs, report = registered_specs(params, args.kv_cache_dtype, args.tp, major, 8192)
    print(f"=== {args.form} SM{major}0 TP {args.tp}: backend {report['backend']}, --kv-cache-dtype "
          f"{args.kv_cache_dtype} -> {report['cache_dtype']}; backends {report['backends']} -> block_size "
          f"{report['block_size']}; layout {report['layout']}")
    print(f"    not importable here: {SKIPPED}")
    print_specs(specs, describe, args.specs, 12)
    for gib in MEMS:
        for max_len in LENS:
            memory = int(gib * GIB)
            case, groups, kv, tokens, concurrency, fits = plan_case(cfg, specs, memory, max_len)
            if gib == MEMS[0] and max_len == LENS[0]:
                for g in groups:
                    print(f"    group {type(g.kv_cache_spec).__name__}: {len(g.layer_names)} layers, page "
                          f"{g.kv_cache_spec.page_size_bytes:,} B")
                print(f"    bytes per block {planning._pool_bytes_per_block(case, groups):,}")
            print(f"  {gib} GiB, max_model_len {max_len:,}: {kv.num_blocks:,} blocks, {tokens:,} tokens, "
                  f"{concurrency:.4f}x, fits {fits}")


if __name__ == "__main__":
    main()
