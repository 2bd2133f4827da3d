"""vLLM 0.33.0's own KV cache planner on the specs GLM-5.3-Flash (model_type glm5_next) registers, on CPU.

Like benchmarks/vllm_oracle_dsv41.py. What is vLLM's own code and what is a stand-in:

- model_config is vLLM's real ModelConfig built from tests/data/configs/glm-5.3-flash-exl3-derivative.json
  (copied to a temporary folder with the derivative's quantization_config / reap keys removed: weight
  quantization does not enter any KV spec; tests/test_families_2026.py says where the file comes from). It parses the text config with transformers' own Glm5NextTextConfig (5.25.0 in
  /tmp/vdeps), so linear_num_heads / linear_head_dim / linear_conv_kernel_dim come from linear_attn_config.
- cache_config is vLLM's CacheConfig (defaults: block_size None -> 16, enable_prefix_caching True,
  cache_dtype auto, mamba_cache_dtype auto, mamba_ssm_cache_dtype auto); vLLM's own
  HybridAttentionMambaModelConfig.verify_and_update_config turns on mamba_cache_mode "align" and sets
  mamba_block_size = block_size (model_executor/models/config.py:585-600, :750-776).
- the platform reports SM90 (H100/H200): current_platform.get_device_capability is patched to 9.0; is_cuda is
  patched to True only while vLLM's _resolve_kda_prefill_backend runs (kda.py:137-160).
- the MLA backend is picked by CudaPlatform.get_valid_backends with vLLM's own priority list
  (platforms/cuda.py:83-156) and each backend's validate_configuration; FlashInfer's SM90 NoPE probe
  (has_flashinfer_sm90_nope_mla, utils/flashinfer.py:442) is patched to True: vLLM 0.33 pins
  flashinfer-python==0.7.2.post1 (>= 0.6.18, which the probe looks for). vllm._C_stable_libtorch is stubbed
  so platforms/cuda.py imports on a CPU box.
- per DSA layer, the indexer K cache and the tail ring are vLLM's real Glm5NextIndexerCache and
  Glm5NextTailCache (common/attention.py:79-184), constructed with the arguments Indexer.__init__ passes
  (attention.py:260-277) and registering themselves; the MLA layer is a stand-in carrying the attributes
  MLAAttention.__init__ computes (mla_attention.py:470-570) and using vLLM's MLAAttention.get_kv_cache_spec
  (mla_attention.py:1371-1400); registered at "<layer>.self_attn.attn" (layers/mla.py:122-132) after the
  indexer caches, as in Glm5NextMLAAttention.__init__ (attention.py:507-566).
- per KDA layer, a Glm5NextLinearAttention instance with the attributes __init__ sets (no weights) uses
  vLLM's own get_kv_cache_spec / get_state_shape / get_state_dtype (kda.py:163-202, abstract.py:72-91).
- cache_config.block_size / mamba_block_size / mamba_page_size_padded come from vLLM's
  Platform.update_block_size_for_backend (platforms/interface.py:750-792, 940-1132), incl. the hybrid
  alignment with ModelRegistry.resolve_model_cls -> Glm5NextForConditionalGeneration's mamba classmethods.
- specs are collected by Model Runner V2's get_kv_cache_spec (v1/worker/gpu/attn_utils.py:138-157, incl.
  customize_attention_spec); the layout by vLLM's get_supported_kv_cache_layouts + resolve_kv_cache_layout
  (v1/attention/backends/utils.py:243-385); the planner is kv_cache_planning (get_kv_cache_groups,
  get_kv_cache_config_from_groups, get_kv_cache_capacity, get_kv_cache_configs).

tests/test_families_2026.py asserts the figures it printed; kvplan/engines/vllm_glm5next.py computes them
from its own rules. Run it from a folder other than the repository's root, with vLLM 0.33.0's sdist, the
packages benchmarks/vllm_oracle.py lists, transformers 5.25 (for Glm5NextTextConfig), einops, torchvision,
compressed-tensors and loguru on the path:
    cd /tmp && PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps:$REPO/benchmarks HF_HUB_OFFLINE=1 \
        $REPO/.venv/bin/python $REPO/benchmarks/vllm_oracle_glm5next.py [--specs] [--tp N] [--kv-cache-dtype fp8]

It runs on vLLM 0.34.0's sdist too (einops, apache-tvm-ffi, compressed-tensors, loguru and a torchvision that
imports against the CPU torch: PyPI's 0.28.0 wheel loads only with its meta registrations skipped), where the
figures are 0.33's (tests/test_families_2026.py VLLM_GLM5_NEXT_034).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import types
from pathlib import Path
from types import SimpleNamespace

sys.modules.setdefault("vllm._C_stable_libtorch", types.ModuleType("vllm._C_stable_libtorch"))

import torch  # noqa: E402

from vllm.config.cache import CacheConfig  # noqa: E402
from vllm.config.model import ModelConfig  # noqa: E402
from vllm.config.vllm import set_current_vllm_config  # noqa: E402
from vllm.model_executor.layers.attention.mla_attention import MLAAttention  # noqa: E402
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase  # noqa: E402
from vllm.model_executor.models.config import HybridAttentionMambaModelConfig  # noqa: E402
from vllm.platforms import current_platform  # noqa: E402
from vllm.platforms.interface import DeviceCapability, Platform  # noqa: E402

from vllm_stub_config import plan_case, planner, print_specs, vllm_config as stub_vllm_config  # noqa: E402

planning = planner()[0]
GIB = 2**30
CONFIG = Path(__file__).resolve().parents[1] / "tests" / "data" / "configs" / "glm-5.3-flash-exl3-derivative.json"


def model_dir() -> str:
    """A folder holding the config without the derivative's weight-quantization keys."""
    import tempfile

    raw = json.loads(CONFIG.read_text())
    for key in ("quantization_config", "reap", "native_mtp_n_routed_experts"):
        raw.pop(key, None)
    folder = tempfile.mkdtemp(prefix="glm5next-")
    Path(folder, "config.json").write_text(json.dumps(raw))
    return folder
MEMS = (10, 40)
LENS = (8192, 131072)
OPTIONS = {"kv_cache_dtype": "auto"}


def set_sm90() -> None:
    cap = DeviceCapability(9, 0)
    type(current_platform).get_device_capability = classmethod(lambda cls, device_id=0: cap)


def kda_prefill_backend(mc) -> str:
    """vLLM's _resolve_kda_prefill_backend, with the platform reporting CUDA SM90 (kda.py:344-351)."""
    import vllm.models.glm5next.common.kda as kda

    plat = type(current_platform)
    saved = plat.is_cuda
    plat.is_cuda = lambda self: True
    try:
        return kda._resolve_kda_prefill_backend("auto", mc.hf_text_config.linear_head_dim, mc.dtype,
                                                mc.hf_text_config.linear_lower_bound)
    finally:
        plat.is_cuda = saved


def pick_mla_backend(mc, cache_dtype: str):
    """CudaPlatform.get_valid_backends over vLLM's SM90 MLA priority list (sparse, head 512)."""
    import vllm.platforms.cuda as cuda_plat
    import vllm.utils.flashinfer as fi
    import vllm.v1.attention.backends.mla.flashinfer_mla_sparse_sm90 as sm90

    fi.has_flashinfer_sm90_nope_mla = lambda: True
    sm90.has_flashinfer_sm90_nope_mla = lambda: True
    from vllm.v1.attention.selector import AttentionSelectorConfig

    sel = AttentionSelectorConfig(head_size=mc.get_head_size(), dtype=mc.dtype, kv_cache_dtype=cache_dtype,
                                  block_size=None, use_mla=True, use_sparse=True)
    valid, invalid = cuda_plat.CudaPlatform.get_valid_backends(DeviceCapability(9, 0), sel,
                                                               num_heads=mc.hf_text_config.num_attention_heads)
    best = min(valid, key=lambda c: c.priority)
    return best.backend_class, [c.backend.name for c in valid], {b.name: r for b, (_, r) in invalid.items()}


class MLAStandIn(AttentionLayerBase):
    """What MLAAttention.__init__ leaves on the layer that get_kv_cache_spec reads."""

    get_kv_cache_spec = MLAAttention.get_kv_cache_spec

    def __init__(self, backend, head_size, kv_cache_dtype, topk_buffer_width):
        self.attn_backend = backend
        self.head_size = head_size
        self.kv_cache_dtype = kv_cache_dtype
        self.sliding_window = None
        self.topk_buffer_width = topk_buffer_width
        self.indexer = object()  # Glm5NextMLAAttention always builds an Indexer (index_topk set)
        self.non_causal_multi_token_decode = False

    def get_attn_backend(self):
        return self.attn_backend


def build_config(mc, spec_tokens: int, tp: int = 1):
    cfg = stub_vllm_config(mc.max_model_len, mnbt=8192)
    cfg.model_config = mc
    cfg.cache_config = CacheConfig()
    cfg.cache_config.kv_cache_layout = None  # resolved below by vLLM's resolve_kv_cache_layout
    cfg.scheduler_config.enable_chunked_prefill = True
    cfg.scheduler_config.max_num_seqs = 1024
    cfg.parallel_config.tensor_parallel_size = tp
    cfg.parallel_config.use_sequence_parallel_moe = False
    cfg.parallel_config.cp_kv_cache_interleave_size = 1
    cfg.compilation_config = SimpleNamespace(static_forward_context={})
    cfg.num_speculative_tokens = spec_tokens
    cfg.speculative_config = SimpleNamespace(num_speculative_tokens=spec_tokens) if spec_tokens else None
    cfg.additional_config = {}
    cfg.use_v2_model_runner = True
    cfg.quant_config = None
    cfg.use_flashinfer_replayssm = False  # 0.34 (_align_hybrid_block_size): --use-replayssm is off by default
    cfg.cache_config.cache_dtype = OPTIONS["kv_cache_dtype"]
    HybridAttentionMambaModelConfig.verify_and_update_config(cfg)  # align mode, mamba_block_size
    return cfg


def build_layers(cfg, mc, report):
    """Every module Glm5NextDecoderLayer.__init__ registers, in order (model.py:356-412, 743-747)."""
    from vllm.models.glm5next.common.attention import Glm5NextIndexerCache, Glm5NextTailCache
    from vllm.models.glm5next.common.kda import Glm5NextLinearAttention
    from vllm.models.glm5next.common.model import get_sparse_topk_buffer_width, _is_kda_layer

    text = mc.hf_text_config
    cache_config = cfg.cache_config
    ctx = cfg.compilation_config.static_forward_context
    backend_cls, valid, invalid = pick_mla_backend(mc, cache_config.cache_dtype)
    report.update(mla_backend=backend_cls.get_name(), mla_valid=valid, mla_invalid=invalid)
    kda_backend = kda_prefill_backend(mc)
    report["kda_prefill_backend"] = kda_backend
    topk_width = get_sparse_topk_buffer_width(text)
    report["topk_buffer_width"] = topk_width
    index_head = text.index_head_dim + text.index_head_dim // 128 * 4  # attention.py:260-266
    for i in range(text.num_hidden_layers):
        prefix = f"language_model.model.layers.{i}.self_attn"
        if _is_kda_layer(text, i):
            layer = Glm5NextLinearAttention.__new__(Glm5NextLinearAttention)
            torch.nn.Module.__init__(layer)
            layer.prefix, layer.tp_size, layer.num_spec = prefix, cfg.parallel_config.tensor_parallel_size, cfg.num_speculative_tokens
            layer.model_config, layer.cache_config = mc, cache_config
            layer.head_dim, layer.num_heads = text.linear_head_dim, text.linear_num_heads
            layer.conv_size = text.linear_conv_kernel_dim
            layer.kda_prefill_backend = kda_backend
            ctx[prefix] = layer  # kda.py:325
        else:
            Glm5NextIndexerCache(head_dim=index_head, dtype=torch.uint8, prefix=f"{prefix}.indexer.k_cache",
                                 cache_config=cache_config, index_kpool=text.index_kpool)
            Glm5NextTailCache(head_dim=text.index_head_dim, dtype=torch.bfloat16,
                              prefix=f"{prefix}.indexer.tail_cache", cache_config=cache_config,
                              index_kpool=text.index_kpool)
            ctx[f"{prefix}.attn"] = MLAStandIn(backend_cls, mc.get_head_size(), cache_config.cache_dtype,
                                               topk_width)


def registered_specs(mc, spec_tokens: int, tp: int = 1):
    from vllm.distributed.kv_transfer.kv_connector.utils import get_current_attn_backends
    from vllm.v1.attention.backends.utils import get_supported_kv_cache_layouts, resolve_kv_cache_layout
    from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec as mrv2_get_kv_cache_spec

    set_sm90()
    cfg = build_config(mc, spec_tokens, tp)
    report = {}
    with set_current_vllm_config(cfg):
        build_layers(cfg, mc, report)
        report["backends_in_order"] = [b.get_name() for b in Platform._find_non_ssm_backends(cfg)]
        Platform.update_block_size_for_backend(cfg)
        report["block_size"] = cfg.cache_config.block_size
        report["mamba_block_size"] = cfg.cache_config.mamba_block_size
        report["mamba_page_size_padded"] = cfg.cache_config.mamba_page_size_padded
        report["mamba_cache_mode"] = cfg.cache_config.mamba_cache_mode
        specs = mrv2_get_kv_cache_spec(cfg)
        backends = get_current_attn_backends(cfg)
        supported = [layout.name for layout in get_supported_kv_cache_layouts(backends)]
        layout = resolve_kv_cache_layout(cfg, [supported], list(specs.values()))
        report["layouts_supported"] = supported
        report["layout"] = layout.name
    return cfg, specs, report


def describe(spec) -> str:
    name = type(spec).__name__
    fields = [f"block {spec.block_size}"]
    if hasattr(spec, "shapes"):
        fields.append(f"shapes {spec.shapes} dtypes {[str(d).removeprefix('torch.') for d in spec.dtypes]}")
        fields.append(f"mamba_cache_mode {spec.mamba_cache_mode}, spec blocks {spec.num_speculative_blocks}, "
                      f"prefill ckpt blocks {spec.num_prefill_checkpoint_blocks} (align "
                      f"{spec.prefill_checkpoint_alignment})")
        fields.append(f"state {spec.real_page_size_bytes} B")
    else:
        fields.append(f"heads {spec.num_kv_heads} head_size {spec.head_size}/{spec.head_size_v} "
                      f"dtype {str(spec.dtype).removeprefix('torch.')}")
        fields.append(f"tokens_per_state {spec.tokens_per_state} -> {spec.num_states} states/block")
        for attr in ("cache_role", "cache_dtype_str", "topk_buffer_width", "is_index_group_leader"):
            if hasattr(spec, attr):
                fields.append(f"{attr} {getattr(spec, attr)}")
        fields.append(f"block_stride_alignment {spec.block_stride_alignment} (-> {spec.get_block_stride_alignment()} B)")
        fields.append(f"prefix_cacheable {spec.prefix_cacheable}")
    fields.append(f"page {spec.page_size_bytes:,} B")
    return f"{name}: " + ", ".join(fields)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--specs", action="store_true", help="print every registered layer name")
    parser.add_argument("--spec-tokens", type=int, default=0,
                        help="num_speculative_tokens (MTP); 0 = default. The MTP draft layer itself is NOT built")
    parser.add_argument("--tp", type=int, default=1, help="tensor parallel size (KDA state is TP-sharded)")
    parser.add_argument("--kv-cache-dtype", default="auto", help="--kv-cache-dtype (auto = bf16 on Hopper, fp8)")
    args = parser.parse_args()
    OPTIONS["kv_cache_dtype"] = args.kv_cache_dtype
    mc = ModelConfig(model=model_dir(), skip_tokenizer_init=True, max_model_len=LENS[0])
    cfg, specs, report = registered_specs(mc, args.spec_tokens, args.tp)
    print(f"=== SM90, GLM-5.3-Flash ({mc.architecture}), TP {args.tp}, num_speculative_tokens {args.spec_tokens}, "
          f"--kv-cache-dtype {args.kv_cache_dtype}")
    for key, value in report.items():
        print(f"    {key}: {value}")
    print_specs(specs, describe, args.specs, 8)
    for gib in MEMS:
        for max_len in LENS:
            memory = int(gib * GIB)
            cfg_case, groups, kv, tokens, concurrency, fits = plan_case(cfg, specs, memory, max_len)
            per_block = planning._pool_bytes_per_block(cfg_case, groups)
            per_req = [math.ceil(g.kv_cache_spec.max_memory_usage_bytes(cfg_case) / g.kv_cache_spec.page_size_bytes)
                       if not hasattr(g.kv_cache_spec, "max_memory_usage_pages")
                       else g.kv_cache_spec.max_memory_usage_pages(cfg_case) for g in groups]
            if gib == MEMS[0] and max_len == LENS[0]:
                print(f"    {len(groups)} groups:")
                for g in groups:
                    s = g.kv_cache_spec
                    inner = (sorted({type(x).__name__ for x in s.kv_cache_specs.values()})
                             if hasattr(s, "kv_cache_specs") else "")
                    pages = ([x.page_size_bytes for x in s.kv_cache_specs.values()]
                             if hasattr(s, "kv_cache_specs") else [s.page_size_bytes])
                    print(f"      {type(s).__name__}{inner}: {len(g.layer_names)} layers, block {s.block_size}, "
                          f"pages {sorted(set(pages))} sum {sum(pages):,} B; first {g.layer_names[:3]}")
                print(f"    bytes per block (pool) {per_block:,}")
            try:
                start = planning.get_kv_cache_configs(cfg_case, [dict(specs)], [memory], groups)[0]
                start_txt = f"ok ({start.num_blocks:,} blocks)"
            except ValueError as exc:
                start_txt = "ValueError: " + str(exc).split(" Try increasing")[0][:200]
            print(f"  SM90 {gib} GiB, max_model_len {max_len:,}: {kv.num_blocks:,} blocks, {tokens:,} tokens, "
                  f"{concurrency:.4f}x, fits {fits}; blocks/request {sum(per_req)} {per_req}; "
                  f"get_kv_cache_configs: {start_txt}")


if __name__ == "__main__":
    main()
