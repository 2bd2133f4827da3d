"""vLLM 0.33.0's own KV cache planner on the specs DeepSeek-V4.1 registers (no GPU).

Like benchmarks/vllm_oracle_dsv4.py, but instead of re-typing the specs it builds them with
vLLM's own code wherever that code runs on a CPU:

- the attention class is picked by vLLM's `_select_dsv4_attn_cls`
  (models/deepseek_v41/nvidia/model.py:201) with the platform patched to report SM90 or
  SM100 (mega attention's kernel probe is patched to "available" on SM100: a stock CUDA
  build ships it);
- the layer modules are vLLM's own `DeepseekV4IndexerCache` (attention.py:1243),
  `DeepseekV4SWACache` (sparse_swa.py:76) and `CompressorStateCache` (compressor.py:206),
  constructed with the same arguments `DeepseekV4Attention.__init__` passes
  (attention.py:313-615), registering themselves in `static_forward_context` in the
  same order; the attention layer itself is a stand-in carrying the attributes
  `DeepseekV4Attention.__init__` computes (with vLLM's `_resolve_dsv4_kv_cache_dtype`,
  `_use_v41_mxfp8_kv_record`), whose spec comes from vLLM's own
  `DeepseekV4Attention.get_kv_cache_spec` (attention.py:1206);
- cache_config.block_size is set by vLLM's `Platform._preferred_block_size_for_backends`
  over the backends in layer order (platforms/interface.py:750-781, phase 1 of
  update_block_size_for_backend);
- the specs are collected by Model Runner V2's `get_kv_cache_spec`
  (v1/worker/gpu/attn_utils.py:138, incl. customize_attention_spec);
- the planner is vLLM 0.33's kv_cache_planning: get_kv_cache_groups,
  get_kv_cache_config_from_groups, get_kv_cache_capacity, and get_kv_cache_configs
  (the start check) itself.

tests/test_deepseek_v41.py asserts the figures it printed (VLLM_V41); kvplan/engines/vllm_dsv41.py
computes them from its own rules. Run it from a folder other than the repository's root (the
repository's kernels/ shadows the `kernels` package transformers imports), with vLLM 0.33.0's
sdist, the packages benchmarks/vllm_oracle.py lists and einops on the path:

    cd /tmp && PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps:$REPO/benchmarks \
        $REPO/.venv/bin/python $REPO/benchmarks/vllm_oracle_dsv41.py [--arch sm90|sm100|both] [--specs] [--grid]

It runs on vLLM 0.34.0's sdist as well (0.34's deps add einops and apache-tvm-ffi); give --grid --release 0.34
so that kvplan plans with the same release's rules. On 0.34.0 it agrees on the same 54 cases
(tests/test_deepseek_v41.py test_vllm_034_pool_by_hand_at_40_gib).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from types import SimpleNamespace

import torch

from vllm.config.attention import AttentionConfig
from vllm.config.cache import CacheConfig
from vllm.config.vllm import set_current_vllm_config
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
from vllm.platforms import current_platform
from vllm.platforms.interface import DeviceCapability

import vllm.models.deepseek_v41.attention as v41attn
import vllm.models.deepseek_v41.nvidia.flash_mla_mega_attn as mega_mod
import vllm.models.deepseek_v41.nvidia.model as v41model
from vllm.models.deepseek_v41.compressor import CompressorStateCache
from vllm.v1.attention.backends.mla.sparse_swa import DeepseekV4SWACache
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec as mrv2_get_kv_cache_spec

from vllm_stub_config import plan_case, planner, print_specs, vllm_config as stub_vllm_config

planning = planner()[0]

GIB = 2**30
CONFIG = Path(__file__).resolve().parents[1] / "model_specs" / "deepseek-v4.1-flash.json"
MEMS = (10, 40, 7.01)
LENS = (8192, 131072, 1048576)


def set_arch(major: int) -> None:
    """Make vLLM's current_platform report compute capability major.0 (SM90 / SM100)."""
    cap = DeviceCapability(major, 0)
    type(current_platform).get_device_capability = classmethod(lambda cls, device_id=0: cap)
    # Mega attention probes torch.ops._flashmla_C; a stock CUDA build on SM100 has it.
    mega_mod.is_flashmla_mega_attn_supported = (
        lambda: (True, None) if major == 10 else (False, "FlashMLA mega attention requires sm_10x GPUs.")
    )


class AttnStandIn(AttentionLayerBase):
    """What DeepseekV4Attention.__init__ leaves on the layer that get_kv_cache_spec reads."""

    get_kv_cache_spec = v41attn.DeepseekV4Attention.get_kv_cache_spec

    def __init__(self, backend_cls):
        self.backend_cls = backend_cls

    def get_attn_backend(self):
        return self.backend_cls


OPTIONS = {"kv_cache_dtype": "auto", "indexer_kv_dtype": "auto"}


def build_config(text: dict, max_len: int, mnbt: int, in_flight: int | None):
    """The stub VllmConfig: vllm_stub_config's planner slice plus what the DSV4.1 layer
    constructors read. CacheConfig / AttentionConfig are vLLM's own (their defaults)."""
    cfg = stub_vllm_config(max_len, layout="BLHNC", mnbt=mnbt, in_flight=in_flight)
    cfg.cache_config = CacheConfig()
    cfg.cache_config.kv_cache_layout = "BLHNC"  # DeepseekV4IndexerBackend: BLHNC / BLNHC only
    cfg.cache_config.cache_dtype = OPTIONS["kv_cache_dtype"]
    cfg.attention_config = AttentionConfig(indexer_kv_dtype=OPTIONS["indexer_kv_dtype"])
    cfg.compilation_config = SimpleNamespace(static_forward_context={})
    cfg.num_speculative_tokens = 0
    cfg.use_v2_model_runner = True  # config/vllm.py:731-767: default True on CUDA with Triton
    cfg.parallel_config.tensor_parallel_size = 1
    cfg.parallel_config.prefill_context_parallel_size = 1
    hf = SimpleNamespace(**text)
    hf.text_config = hf
    cfg.model_config.hf_config = hf
    cfg.model_config.original_max_model_len = max_len
    cfg.kernel_config = SimpleNamespace(enable_jit_warmup=False)
    cfg.lora_config = None  # 0.34's _select_dsv4_attn_cls: mega attention only without LoRA
    return cfg


def build_layers(cfg, text: dict) -> dict:
    """Construct every module DeepseekV4Attention.__init__ registers, in its order, for the
    40 backbone layers (make_layers(config.num_hidden_layers), nvidia/model.py:820);
    returns a report of the choices made."""
    attn_cls = v41model._select_dsv4_attn_cls(cfg)
    cache_config = cfg.cache_config
    ctx = cfg.compilation_config.static_forward_context
    packed = attn_cls.packed_kv_cache_dtype.fget(None)  # property, does not read self
    uses_fp4_index = v41attn.dsa_indexer_uses_fp4(cfg)
    report = dict(attn_cls=attn_cls.__name__, backend=attn_cls.backend_cls.get_name(),
                  swa_backend=attn_cls.swa_backend_cls.get_name(), packed_default=packed,
                  indexer_fp4=uses_fp4_index)
    kv_sources = set(text["kv_source_layer_ids"])
    index_sources = set(text["index_source_layer_ids"])
    for layer_id in range(text["num_hidden_layers"]):
        prefix = f"language_model.model.layers.{layer_id}.attn"
        ratio = int(text["compress_ratios"][layer_id])
        is_kv_source = layer_id in kv_sources
        is_index_source = layer_id in index_sources
        attn = AttnStandIn(attn_cls.backend_cls)
        attn.layer_id, attn.compress_ratio, attn.head_dim = layer_id, ratio, text["head_dim"]
        attn.is_kv_source = is_kv_source
        ctx[prefix] = attn  # attention.py:436, before the indexer and compressor
        if is_index_source and is_kv_source:  # attention.py:446-455
            v41attn.DeepseekV4IndexerCache(
                head_dim=v41attn._indexer_k_cache_head_dim(text["index_head_dim"], uses_fp4_index),
                dtype=torch.uint8, prefix=f"{prefix}.indexer.k_cache", cache_config=cache_config,
                compress_ratio=ratio)
        # attention.py:515-531
        attn.kv_cache_dtype, attn.kv_cache_torch_dtype = v41attn._resolve_dsv4_kv_cache_dtype(
            attn_cls.use_fp8_ds_mla_layout, cache_config.cache_dtype, cache_config, packed)
        attn.kv_mxfp8 = v41attn._use_v41_mxfp8_kv_record()
        attn.swa_bytes_per_token = 528 if attn.kv_mxfp8 else 584
        attn.compressed_bytes_per_token = 288 if attn.kv_cache_dtype == "nvfp4_ds_mla" else attn.swa_bytes_per_token
        attn.kv_page_alignment = 512 if attn.kv_mxfp8 else 576
        # attention.py:538-561 (PCP 1, CUDA)
        bounded = cache_config.swa_bounded_replay and cfg.use_v2_model_runner
        DeepseekV4SWACache(  # attention.py:562-580
            head_dim=text["head_dim"], window_size=text["sliding_window"], dtype=attn.kv_cache_torch_dtype,
            prefix=f"{prefix}.swa_cache", cache_config=cache_config, backend_cls=attn_cls.swa_backend_cls,
            block_size=32, packed_bytes_per_token=attn.swa_bytes_per_token,
            packed_page_alignment=attn.kv_page_alignment,
            packed_block_stride_alignment=(math.lcm(attn.swa_bytes_per_token, attn.compressed_bytes_per_token)
                                           if attn.kv_mxfp8 else None),
            bounded_replay=bounded)
        if is_kv_source and ratio > 1:  # attention.py:588 -> compressor.py:306-314
            CompressorStateCache(state_dim=2 * text["head_dim"], dtype=torch.float32,
                                 prefix=f"{prefix}.compressor.state_cache")
    report["cache_dtype"] = cache_config.cache_dtype
    report["bounded_replay"] = bounded
    return report


def resolve_block_size(cfg) -> list[str]:
    """Phase 1 of Platform.update_block_size_for_backend (platforms/interface.py:771-781)."""
    plat = type(current_platform)
    backends = plat._find_non_ssm_backends(cfg)
    if not cfg.cache_config.user_specified_block_size:
        cfg.cache_config.block_size = plat._preferred_block_size_for_backends(
            backends, CacheConfig.DEFAULT_BLOCK_SIZE, cfg)
    return [b.get_name() for b in backends]


def registered_specs(text: dict, arch: int, max_len: int, mnbt: int, in_flight: int | None):
    set_arch(arch)
    cfg = build_config(text, max_len, mnbt, in_flight)
    with set_current_vllm_config(cfg):
        report = build_layers(cfg, text)
        report["backends"] = resolve_block_size(cfg)
        report["block_size"] = cfg.cache_config.block_size
        specs = mrv2_get_kv_cache_spec(cfg)
    return cfg, specs, report


def describe(spec) -> str:
    fields = [f"block {spec.block_size}", f"head_size {spec.head_size}", f"dtype {str(spec.dtype).removeprefix('torch.')}"]
    for name in ("tokens_per_state", "state_content_bytes", "alignment", "sliding_window", "bounded_replay",
                 "cache_dtype_str"):
        value = getattr(spec, name, None)
        if value is not None and not (name == "tokens_per_state" and value == 1 and type(spec).__name__ != "MLAAttentionSpec"):
            fields.append(f"{name} {value}")
    fields.append(f"block_stride_alignment {spec.block_stride_alignment} (-> {spec.get_block_stride_alignment()})")
    fields.append(f"page {spec.page_size_bytes} B (unpadded {spec.real_page_size_bytes})")
    return f"{type(spec).__name__}: " + ", ".join(fields)


def full_start(cfg, specs, groups, memory: int) -> str:
    """vLLM's get_kv_cache_configs itself (null block held back, the start check)."""
    try:
        kv = planning.get_kv_cache_configs(cfg, [specs], [memory], groups)[0]
        return f"ok ({kv.num_blocks:,} blocks)"
    except ValueError as exc:
        return "ValueError: " + str(exc).split(" Try increasing")[0]


def grid(release: str) -> None:
    """kvplan's pool (kvplan.engines.vllm_dsv41) against vLLM's planner: Hopper and Blackwell, the kv cache
    dtypes each takes, 7.01 / 10 / 40 GiB, 8K / 128K / 1M, 2,048 / 8,192 batched tokens."""
    import sys

    sys.path.insert(0, str(CONFIG.parents[1]))
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve
    from kvplan.sources import load_model

    rules = resolve(release)[0]
    model = load_model("deepseek-v4.1-flash")
    text = json.loads(CONFIG.read_text())["text_config"]
    agree = differ = 0
    for arch, gpu, dtypes in ((9, "h200", ("auto",)), (10, "b200", ("auto", "fp8_ds_mla"))):
        for dtype, mnbt in ((d, m) for d in dtypes for m in (2048, 8192)):
            OPTIONS.update(kv_cache_dtype=dtype)
            cfg, specs, _ = registered_specs(text, arch, 8192, mnbt, None)
            for gib in MEMS:
                for max_len in LENS:
                    memory = int(gib * GIB)
                    _, _, kv, tokens, _, fits = plan_case(cfg, specs, memory, max_len)
                    theirs = (kv.num_blocks, tokens, fits)
                    pool = simulate(model, kv_memory_bytes=memory, max_model_len=max_len, max_num_batched_tokens=mnbt,
                                    gpu=gpu, kv_cache_dtype=None if dtype == "auto" else dtype,
                                    allow_long_max_model_len=True, rules=rules)
                    ours = (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits)
                    if theirs == ours:
                        agree += 1
                    else:
                        differ += 1
                        print(f"DIFFER {gpu} {dtype} mnbt {mnbt} {gib} GiB {max_len}: vLLM {theirs}, kvplan {ours}")
    print(f"vLLM {release} DeepSeek-V4.1 grid: {agree} agree, {differ} differ")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="both", choices=("sm90", "sm100", "both"))
    parser.add_argument("--mnbt", type=int, default=8192)
    parser.add_argument("--in-flight", type=int, default=None)
    parser.add_argument("--specs", action="store_true", help="print every registered spec")
    parser.add_argument("--kv-cache-dtype", default="auto", help="--kv-cache-dtype (auto, fp8, fp8_ds_mla, nvfp4_ds_mla)")
    parser.add_argument("--indexer-kv-dtype", default="auto", help="attention_config.indexer_kv_dtype (auto=fp8, mxfp4)")
    parser.add_argument("--grid", action="store_true", help="compare kvplan's pool with vLLM's planner on a grid")
    parser.add_argument("--release", default="0.33", help="the vLLM release on the path, for kvplan's rules (0.33, 0.34)")
    args = parser.parse_args()
    if args.grid:
        grid(args.release)
        return
    OPTIONS.update(kv_cache_dtype=args.kv_cache_dtype, indexer_kv_dtype=args.indexer_kv_dtype)
    text = json.loads(CONFIG.read_text())["text_config"]
    arches = {"sm90": [9], "sm100": [10], "both": [9, 10]}[args.arch]
    for arch in arches:
        cfg, specs, report = registered_specs(text, arch, 8192, args.mnbt, args.in_flight)
        print(f"=== SM{arch}0: {report['attn_cls']} (backend {report['backend']}, SWA backend "
              f"{report['swa_backend']}); --kv-cache-dtype {OPTIONS['kv_cache_dtype']} -> {report['cache_dtype']}; indexer "
              f"{'MXFP4' if report['indexer_fp4'] else 'FP8'}; SWA bounded_replay {report['bounded_replay']}")
        print(f"    backends in layer order {report['backends']} -> cache_config.block_size {report['block_size']}")
        print_specs(specs, describe, args.specs, 12)
        for gib in MEMS:
            for max_len in LENS:
                memory = int(gib * GIB)
                cfg_case, groups, kv, tokens, concurrency, fits = plan_case(cfg, specs, memory, max_len)
                per_block = planning._pool_bytes_per_block(cfg_case, groups)
                layout = [(type(g.kv_cache_spec).__name__.replace("UniformTypeKVCacheSpecs", "U")
                           + ":" + type(next(iter(g.kv_cache_spec.kv_cache_specs.values()))).__name__
                           if hasattr(g.kv_cache_spec, "kv_cache_specs") else type(g.kv_cache_spec).__name__,
                           len(g.layer_names), g.kv_cache_spec.page_size_bytes) for g in groups]
                per_req = [math.ceil(g.kv_cache_spec.max_memory_usage_bytes(cfg_case) / g.kv_cache_spec.page_size_bytes)
                           for g in groups]
                if gib == MEMS[0] and max_len == LENS[0]:
                    print(f"    groups (type, layers, page bytes): {layout}")
                    print(f"    bytes per block {per_block:,}")
                start = full_start(cfg_case, dict(specs), groups, memory)
                print(f"  SM{arch}0 {gib} GiB, max_model_len {max_len:,}: {kv.num_blocks:,} blocks, "
                      f"{tokens:,} tokens, {concurrency:.4f}x, fits {fits}; blocks/request {sum(per_req)} "
                      f"{per_req}; get_kv_cache_configs: {start}")


if __name__ == "__main__":
    main()
