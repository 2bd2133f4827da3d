"""vLLM 0.33.0's own KV cache planner on the specs Qwen4-Exp (Qwen3.8-Flash-Next) registers, on CPU.

Like benchmarks/vllm_oracle_glm5next.py: vLLM's own code wherever it runs on a CPU.

- hf config: transformers' Qwen4ExpConfig (5.25, the copy this oracle ran vLLM 0.33 with) built from
  tests/data/configs/qwen3.8-flash-next.json (the shipped config.json, its text_config whole; its layer_types
  are derived by the config class: 3 x linear_attention + 1 x indexed_attention, repeated 12 times).
- config hooks: vLLM's Qwen3_5ForConditionalGenerationConfig.verify_and_update_config (mamba_ssm_cache_dtype
  <- hf mamba_ssm_dtype "float32", model_executor/models/config.py:952-976, applied to Qwen4Exp by
  config.py:1010-1016) and HybridAttentionMambaModelConfig / MambaModelConfig (prefix caching on by default
  -> mamba_cache_mode "align", mamba_block_size = block_size, config.py:752-777).
- layers, registered into static_forward_context in Qwen4ExpDecoderLayer.__init__ order
  (models/qwen4_exp/nvidia/model.py:191-256): the PLE conv (ple_layer.py) before the mixer of its layer;
  GDN layers; QSA layers = indexer raw_key_cache (QSAKeyStateCache) + compressed_key_cache
  (QSACompressedKeyCache) -- vLLM's real classes, common/qsa_cache.py:811-874, built with the arguments
  QSAIndexer.__init__ passes (nvidia/indexer_qsa.py:148-180) -- then the QSA owner (self_attn.attn).
  The QSA owner, the GDN layer and the PLE layer are stand-ins (their real __init__ allocates weights and
  needs a TP group / a 51B-row embedding); each carries the attributes its __init__ computes and uses the
  real class's own get_kv_cache_spec (qsa.py:552-560; qwen_gdn_linear_attn.py:739-750 ->
  mamba/abstract.py:72-91; ple_layer.py:205-220).
- GDN prefill backend: vLLM's _resolve_gdn_prefill_backend with the platform patched to CUDA SM90 (Hopper)
  -> "flashinfer" -> checkpoint alignment 64 in align mode (qwen_gdn_linear_attn.py:689-702).
- block size: vLLM's Platform._find_non_ssm_backends, _preferred_block_size_for_backends (phase 1),
  _align_hybrid_block_size (phase 2, with ModelRegistry.resolve_model_cls pointed at vLLM's
  Qwen4ExpForConditionalGeneration, whose get_mamba_specs_from_config sizes the mamba page) and
  _check_aligned_block_size (platforms/interface.py:750-795, 940-1114).
- specs: Model Runner V2's get_kv_cache_spec (v1/worker/gpu/attn_utils.py:138-155, incl.
  customize_attention_spec).
- planner: vLLM 0.33 kv_cache_planning get_kv_cache_groups, get_kv_cache_config_from_groups,
  kv_cache_utils.get_kv_cache_capacity, the start check (vllm_stub_config.start_check), and
  get_kv_cache_configs itself.

tests/test_families_2026.py asserts figures it printed; kvplan/engines/vllm_qwen4exp.py computes them from its
own rules, and --grid compares the two. Run it from a folder other than the repository's root (its kernels/
shadows a package), with vLLM 0.33.0's sdist, the packages benchmarks/vllm_oracle.py lists, transformers 5.25,
compressed-tensors, loguru and torchvision on the path:
    cd /tmp && PYTHONPATH=<vllm-0.33.0>:<deps>:$REPO/benchmarks $REPO/.venv/bin/python \
        $REPO/benchmarks/vllm_oracle_qwen4exp.py [--specs] [--tp N] [--kv-cache-dtype fp8] [--indexer-kv-dtype fp8] \
        [--language-model-only] [--no-prefix-caching] [--gdn-backend triton] [--block-size B] [--grid [--release 0.34]]

It runs on vLLM 0.34.0's sdist as well (einops, apache-tvm-ffi and a torchvision that imports against the CPU
torch on the path, as benchmarks/vllm_oracle_glm5next.py says), where the raw-key ring is QSARawKeyCache
(common/qsa_indexer.py) and the owner's backend Qwen4ExpQSABackend; give --grid --release 0.34 so that kvplan
plans with 0.34's rules: 168 of 168 cases agree (0.33.0 with --release 0.33: 168 of 168): 64 at the default
block, 32 under PP (plan_pp: each stage's specs through get_global_kv_cache_groups and get_kv_cache_configs), 72
with a --block-size (BLOCK_SIZES; 24 of them refused by both, the indexer caches' divisibility check).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import nn

from transformers import Qwen4ExpConfig

from vllm.config.attention import AttentionConfig
from vllm.config.cache import CacheConfig
from vllm.config.vllm import set_current_vllm_config
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
from vllm.platforms.interface import Platform
from vllm.transformers_utils.config import uses_mrope

import vllm.models.qwen4_exp.nvidia.model as q4model  # import first: qsa.py has a cycle through it
import vllm.models.qwen4_exp.nvidia.qsa as q4qsa
try:  # 0.34 renamed common/qsa_cache.py to common/qsa_indexer.py and QSAKeyStateCache to QSARawKeyCache
    from vllm.models.qwen4_exp.common.qsa_indexer import QSACompressedKeyCache, QSARawKeyCache as QSAKeyStateCache
    QSA_OWNER_BACKEND = q4qsa.Qwen4ExpQSABackend  # 0.34: its own backend, no longer FlashAttention's subclass
except ImportError:  # 0.33
    from vllm.models.qwen4_exp.common.qsa_cache import QSACompressedKeyCache, QSAKeyStateCache
    QSA_OWNER_BACKEND = q4qsa.Qwen4ExpQSAFlashAttentionBackend
from vllm.models.qwen4_exp.nvidia.ple_layer import Qwen4ExpPLELayer
from vllm.model_executor.layers.mamba.gdn import qwen_gdn_linear_attn as gdnmod
from vllm.model_executor.models import ModelRegistry
from vllm.model_executor.models.config import (
    HybridAttentionMambaModelConfig,
    Qwen3_5ForConditionalGenerationConfig,
    _strip_qwen4_exp_mrope,
)
from vllm.utils.torch_utils import kv_cache_dtype_str_to_dtype
from vllm.v1.attention.backends.gdn_attn import FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec as mrv2_get_kv_cache_spec

from vllm_stub_config import (capacity, full_start, group_label, hopper, planner, print_plans, print_specs,
                              start_check, vllm_config as stub_vllm_config)

planning = planner()[0]

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "tests" / "data" / "configs" / "qwen3.8-flash-next.json"
GIB = 2**30
MEMS = (10, 40)
LENS = (8192, 131072)
BLOCK_SIZES = (6, 96, 2048)  # --block-size: 6 is not a multiple of indexer_compress_ratio 4 (both refuse)
ARCH = "Qwen4ExpForConditionalGeneration"
OPTIONS = dict(kv_cache_dtype="auto", indexer_kv_dtype="auto", language_model_only=False,
               prefix_caching=True, gdn_backend="auto", tp=1, block_size=None)


def load_hf_config():
    raw = json.loads(CONFIG.read_text())
    return Qwen4ExpConfig(**raw)


def build_config(hf, max_len: int, mnbt: int):
    text = hf.text_config
    cfg = stub_vllm_config(max_len, layout="BLHNC", mnbt=mnbt)
    # --block-size: CacheConfig(block_size=B) sets user_specified_block_size (config/cache.py
    # _apply_block_size_default), which skips phase 1 of the block-size resolution
    cache = CacheConfig(block_size=OPTIONS["block_size"]) if OPTIONS["block_size"] else CacheConfig()
    cache.kv_cache_layout = "BLHNC"  # QSAStateBackend declares (BLHNC, BLNHC) only: qsa_cache.py:753-756
    cache.cache_dtype = OPTIONS["kv_cache_dtype"]
    cache.enable_prefix_caching = OPTIONS["prefix_caching"]
    cache.mamba_cache_mode = "none"  # CacheConfig default; the hybrid hook below derives it
    cfg.cache_config = cache
    cfg.attention_config = AttentionConfig(indexer_kv_dtype=OPTIONS["indexer_kv_dtype"])
    cfg.compilation_config = SimpleNamespace(static_forward_context={})
    cfg.additional_config = {"gdn_prefill_backend": OPTIONS["gdn_backend"]}
    cfg.num_speculative_tokens = 0
    cfg.speculative_config = None
    cfg.lora_config = None
    cfg.quant_config = None
    cfg.use_v2_model_runner = True
    cfg.scheduler_config.enable_chunked_prefill = True
    cfg.scheduler_config.max_num_seqs = 1024
    cfg.scheduler_config.disable_chunked_mm_input = False
    cfg.parallel_config.tensor_parallel_size = OPTIONS["tp"]
    mm = SimpleNamespace(language_model_only=OPTIONS["language_model_only"])
    mc = SimpleNamespace(
        max_model_len=max_len, original_max_model_len=max_len, dtype=torch.bfloat16,
        hf_config=hf, hf_text_config=text, architecture=ARCH, use_mla=False, is_hybrid=True,
        multimodal_config=mm,
    )
    # ModelConfig.get_num_kv_heads / get_head_size for a plain GQA text config
    mc.get_num_kv_heads = lambda pc: max(1, text.num_key_value_heads // pc.tensor_parallel_size)
    mc.get_head_size = lambda: text.head_dim
    cfg.model_config = mc
    # config/vllm.py:2755-2767: the per-arch hook, then the hybrid hook
    Qwen3_5ForConditionalGenerationConfig.verify_and_update_config(cfg)
    if OPTIONS["language_model_only"]:
        _strip_qwen4_exp_mrope(mc)  # config.py:1047-1049
    HybridAttentionMambaModelConfig.verify_and_update_config(cfg)
    mc.uses_mrope = uses_mrope(hf)  # config/model.py:1986-1988
    return cfg


class QSAOwnerStandIn(AttentionLayerBase):
    """What Qwen4ExpQSAAttention.__init__ leaves for get_kv_cache_spec (qsa.py:337-500)."""

    get_kv_cache_spec = q4qsa.Qwen4ExpQSAAttention.get_kv_cache_spec

    def __init__(self, cfg, text, prefix):
        tp = cfg.parallel_config.tensor_parallel_size
        total_kv = int(text.num_key_value_heads)
        self.num_kv_heads = max(1, total_kv // tp)  # qsa.py:393-399
        self.head_dim = int(text.head_dim)  # qsa.py:400
        self.kv_cache_dtype = q4qsa.qsa_kv_cache_dtype(cfg.cache_config, prefix)  # qsa.py:463
        self.kv_cache_torch_dtype = kv_cache_dtype_str_to_dtype(self.kv_cache_dtype, cfg.model_config)
        assert self.kv_cache_torch_dtype in (torch.bfloat16, torch.uint8)
        self.layer_name = f"{prefix}.attn"
        cfg.compilation_config.static_forward_context[self.layer_name] = self  # qsa.py:534-537

    def get_attn_backend(self):
        return QSA_OWNER_BACKEND


class GDNStandIn(gdnmod.QwenGatedDeltaNetAttention):
    """What QwenGatedDeltaNetAttention.__init__ leaves for get_kv_cache_spec."""

    def __init__(self, cfg, text, prefix):
        nn.Module.__init__(self)
        self.prefix = prefix
        self.tp_size = cfg.parallel_config.tensor_parallel_size
        self.model_config = cfg.model_config
        self.cache_config = cfg.cache_config
        self.speculative_config = cfg.speculative_config
        self.num_spec = 0  # gdn/base.py:43-47
        self.num_k_heads = text.linear_num_key_heads
        self.num_v_heads = text.linear_num_value_heads
        self.head_k_dim = text.linear_key_head_dim
        self.head_v_dim = text.linear_value_head_dim
        self.conv_kernel_size = text.linear_conv_kernel_dim
        with hopper():
            _, self.gdn_prefill_backend = gdnmod._resolve_gdn_prefill_backend(cfg)
        self.vllm_config = cfg
        self._checkpoint_alignment = None  # qwen_gdn_linear_attn.py:691-702
        if cfg.cache_config.mamba_cache_mode == "align" and self.gdn_prefill_backend == "flashinfer":
            self._checkpoint_alignment = FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
            self._max_num_batched_tokens = cfg.scheduler_config.max_num_batched_tokens
        cfg.compilation_config.static_forward_context[prefix] = self


class PLEStandIn(Qwen4ExpPLELayer):
    """What Qwen4ExpPLELayer.__init__ leaves for get_kv_cache_spec (ple_layer.py:84-156)."""

    def __init__(self, cfg, text, prefix):
        nn.Module.__init__(self)
        self.model_config = cfg.model_config
        self.cache_config = cfg.cache_config
        self.prefix = prefix
        self.hidden_size = int(text.hidden_size)
        self.hc_count = text.hc_count
        self.hc_hidden_size = self.hidden_size * self.hc_count
        self.conv_kernel_size = int(text.ple_conv_kernel_size)
        self.short_conv_dilation = int(text.ngram_size)
        self.conv_state_len = (self.conv_kernel_size - 1) * self.short_conv_dilation
        self.num_spec_tokens = cfg.num_speculative_tokens
        cfg.compilation_config.static_forward_context[prefix] = self


def build_layers(cfg, hf) -> dict:
    text = hf.text_config
    cache_config = cfg.cache_config
    qsa_types = q4model._QSA_LAYER_TYPES
    report = {"layer_types": list(text.layer_types)}
    indexer_kv = cfg.attention_config.resolve_indexer_kv_dtype("bf16")  # indexer_qsa.py:152-164
    indexer_dtype = {"fp8": torch.float8_e4m3fn, "bf16": torch.bfloat16}[indexer_kv]
    report["indexer_dtype"] = indexer_dtype
    report["cache_rope_positions"] = cfg.model_config.uses_mrope
    for i, kind in enumerate(text.layer_types):
        prefix = f"language_model.model.layers.{i}"
        if (i + 1) in text.ple_layer_ids:  # model.py:210-225, before the mixer
            PLEStandIn(cfg, text, f"{prefix}.ple")
        if kind == "linear_attention":
            GDNStandIn(cfg, text, f"{prefix}.linear_attn")
        elif kind in qsa_types and getattr(text, "indexer_n_heads", None) is not None:
            sa = f"{prefix}.self_attn"
            QSAKeyStateCache(  # indexer_qsa.py:165-173
                head_size=int(text.indexer_head_dim), dtype=torch.bfloat16,
                cache_rope_positions=cfg.model_config.uses_mrope,
                prefix=f"{sa}.indexer.raw_key_cache", cache_config=cache_config,
                compress_ratio=int(text.indexer_compress_ratio), vllm_config=cfg)
            QSACompressedKeyCache(  # indexer_qsa.py:174-181
                head_size=int(text.indexer_head_dim), dtype=indexer_dtype,
                compress_ratio=int(text.indexer_compress_ratio),
                prefix=f"{sa}.indexer.compressed_key_cache", cache_config=cache_config, vllm_config=cfg)
            QSAOwnerStandIn(cfg, text, sa)
        else:
            raise ValueError(kind)
    report["gdn_backend"] = next(
        l.gdn_prefill_backend for l in cfg.compilation_config.static_forward_context.values()
        if isinstance(l, GDNStandIn))
    return report


def resolve_block_size(cfg) -> dict:
    """Platform.update_block_size_for_backend, phases 1-3 (platforms/interface.py:750-795)."""
    plat = Platform
    out = {}
    backends = plat._find_non_ssm_backends(cfg)
    out["backends"] = [b.get_name() for b in backends]
    cache_config = cfg.cache_config
    if not cache_config.user_specified_block_size:
        cache_config.block_size = plat._preferred_block_size_for_backends(
            backends, CacheConfig.DEFAULT_BLOCK_SIZE, cfg)
    out["phase1_block_size"] = cache_config.block_size
    pre = cache_config.block_size
    saved = ModelRegistry.resolve_model_cls
    ModelRegistry.resolve_model_cls = lambda *a, **k: (q4model.Qwen4ExpForConditionalGeneration, ARCH)
    try:
        with hopper():
            mamba_specs = q4model.Qwen4ExpForConditionalGeneration.get_mamba_specs_from_config(cfg)
            out["mamba_specs_for_alignment"] = [(s.shapes, s.dtypes, s.page_size_bytes) for s in mamba_specs]
            plat._align_hybrid_block_size(cfg, backends[0])
            if cache_config.kv_cache_dtype_skip_layers:
                plat._align_heterogeneous_kv_block_size(cfg, backends[0])
            plat._check_aligned_block_size(cfg, backends, pre)
    finally:
        ModelRegistry.resolve_model_cls = saved
    out["block_size"] = cache_config.block_size
    out["mamba_block_size"] = cache_config.mamba_block_size
    out["mamba_page_size_padded"] = cache_config.mamba_page_size_padded
    out["mamba_cache_mode"] = cache_config.mamba_cache_mode
    out["mamba_ssm_cache_dtype"] = cache_config.mamba_ssm_cache_dtype
    return out


def registered_specs(max_len: int, mnbt: int):
    hf = load_hf_config()
    cfg = build_config(hf, max_len, mnbt)
    with set_current_vllm_config(cfg):
        report = build_layers(cfg, hf)
        report.update(resolve_block_size(cfg))
        specs = mrv2_get_kv_cache_spec(cfg)
    return cfg, specs, report


def describe(spec) -> str:
    name = type(spec).__name__
    if name == "MambaSpec":
        shapes = ", ".join(f"{tuple(s)} {str(d).removeprefix('torch.')}" for s, d in zip(spec.shapes, spec.dtypes))
        return (f"MambaSpec: block {spec.block_size}, states [{shapes}], mamba_type {spec.mamba_type.name}, "
                f"tp_replicated {spec.tp_replicated}, mode {spec.mamba_cache_mode}, spec_blocks {spec.num_speculative_blocks}, "
                f"prefill_checkpoint_blocks {spec.num_prefill_checkpoint_blocks} (alignment {spec.prefill_checkpoint_alignment}), "
                f"page {spec.page_size_bytes} B (unpadded {spec.real_page_size_bytes})")
    fields = [f"block {spec.block_size}", f"kv_heads {spec.num_kv_heads}", f"head_size {spec.head_size}",
              f"head_size_v {spec.head_size_v}", f"dtype {str(spec.dtype).removeprefix('torch.')}"]
    if getattr(spec, "tokens_per_state", 1) != 1:
        fields.append(f"tokens_per_state {spec.tokens_per_state}")
    if getattr(spec, "sliding_window", None) is not None:
        fields.append(f"sliding_window {spec.sliding_window}")
    fields.append(f"kv_quant_mode {spec.kv_quant_mode.name}")
    fields.append(f"num_states {spec.num_states}")
    fields.append(f"block_stride_alignment {spec.block_stride_alignment} (-> {spec.get_block_stride_alignment()})")
    fields.append(f"page {spec.page_size_bytes} B (unpadded {spec.real_page_size_bytes})")
    return f"{name}: " + ", ".join(fields)


def plan(gib: float, max_len: int, mnbt: int = 8192) -> tuple[int, int, bool]:
    """(blocks, tokens, fits) as vLLM's planner gives them under OPTIONS."""
    memory = int(gib * GIB)
    c, specs, _ = registered_specs(max_len, mnbt)  # rebuilt: without prefix caching mamba_block_size = max_len
    groups = planning.get_kv_cache_groups(c, dict(specs))
    kv = planning.get_kv_cache_config_from_groups(c, groups, memory)
    tokens, _ = capacity(c, kv, max_len)
    return kv.num_blocks, tokens, start_check(c, specs, groups, memory)


def plan_pp(gib: float, max_len: int, pp: int, mnbt: int = 8192) -> tuple[int, int, bool]:
    """(blocks, tokens, fits) as vLLM's engine core plans a PP pipeline under OPTIONS: each stage registers the
    specs of the decoder layers get_pp_indices gives it (make_layers builds no other layer: its PLE conv and its
    QSA indexer caches go with it), then get_global_kv_cache_groups on every stage's specs, get_kv_cache_configs
    (each stage's projected groups and check, the fewest blocks for all) and generate_scheduler_kv_cache_config,
    as EngineCore._initialize_kv_caches calls them (v1/engine/core.py). Each stage's memory check is recorded
    instead of raised, so the blocks still come out where a request does not fit."""
    from vllm.distributed.utils import get_pp_indices
    from vllm.v1.core.kv_cache_utils import generate_scheduler_kv_cache_config

    memory = int(gib * GIB)
    c, specs, _ = registered_specs(max_len, mnbt)
    c.num_prefill_lookahead_tokens = 0  # VllmConfig.num_prefill_lookahead_tokens without a speculative config
    c.model_config.supports_kv_cache_grouping = False  # models/qwen4_exp declares no get_kv_cache_groups
    layers = len(c.model_config.hf_text_config.layer_types)
    workers = []
    for rank in range(pp):
        start, end = get_pp_indices(layers, rank, pp)
        workers.append({name: spec for name, spec in specs.items()
                        if start <= int(name.split("layers.")[1].split(".")[0]) < end})
    assert sum(map(len, workers)) == len(specs)
    failed = []
    check = planning._check_enough_kv_cache_memory

    def record(*args, **kwargs):
        try:
            check(*args, **kwargs)
        except ValueError as err:
            failed.append(err)

    planning._check_enough_kv_cache_memory = record
    try:
        groups = planning.get_global_kv_cache_groups(c, workers)
        configs = planning.get_kv_cache_configs(c, workers, [memory] * pp, groups)
    finally:
        planning._check_enough_kv_cache_memory = check
    kv = generate_scheduler_kv_cache_config(configs)
    tokens, _ = capacity(c, kv, max_len)
    return kv.num_blocks, tokens, not failed


def grid(release: str) -> None:
    """kvplan's pool (kvplan.engines.vllm_qwen4exp) under `release`'s rules against vLLM's planner: TP 1/2/4/8,
    KV dtype auto/fp8, prefix caching on/off, 10 / 40 GiB, 8K / 128K; then PP 2 and 4 at TP 1 and 2 (plan_pp); then
    --block-size 6, 96 and 2048 at TP 1, 2 (fp8) and 8 (a refusal agrees where both refuse)."""
    import sys

    sys.path.insert(0, str(REPO))
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve
    from kvplan.errors import UsageError
    from kvplan.sources import load_model

    rules = resolve(release)[0]
    model = load_model(str(CONFIG))
    counts = {"agree": 0, "differ": 0}

    def compare(label: str, theirs, ours) -> None:  # both refusing counts as agreeing
        if theirs == ours or (isinstance(theirs, str) and isinstance(ours, str)):
            counts["agree"] += 1
        else:
            counts["differ"] += 1
            print(f"DIFFER {label}: vLLM {theirs}, kvplan {ours}")

    for tp in (1, 2, 4, 8):
        for dtype in ("auto", "fp8"):
            for prefix in (True, False):
                OPTIONS.update(tp=tp, kv_cache_dtype=dtype, prefix_caching=prefix)
                for gib in MEMS:
                    for max_len in LENS:
                        theirs = plan(gib, max_len)
                        pool = simulate(model, kv_memory_bytes=int(gib * GIB), max_model_len=max_len, tp=tp,
                                        gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype,
                                        prefix_caching=prefix, rules=rules)
                        compare(f"tp {tp} {dtype} prefix {prefix} {gib} GiB {max_len}", theirs,
                                (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits))
    for pp in (2, 4):  # PP at TP 1 and 2, bf16, both prefix caching modes
        for tp in (1, 2):
            for prefix in (True, False):
                OPTIONS.update(tp=tp, kv_cache_dtype="auto", prefix_caching=prefix)
                for gib in MEMS:
                    for max_len in LENS:
                        theirs = plan_pp(gib, max_len, pp)
                        pool = simulate(model, kv_memory_bytes=int(gib * GIB), max_model_len=max_len, tp=tp, pp=pp,
                                        gpu="h200", prefix_caching=prefix, rules=rules)
                        compare(f"pp {pp} tp {tp} prefix {prefix} {gib} GiB {max_len}", theirs,
                                (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits))
    for block in BLOCK_SIZES:  # --block-size at TP 1, 2 (fp8) and 8, both prefix caching modes
        for tp, dtype in ((1, "auto"), (2, "fp8"), (8, "auto")):
            for prefix in (True, False):
                OPTIONS.update(tp=tp, kv_cache_dtype=dtype, prefix_caching=prefix, block_size=block)
                for gib in MEMS:
                    for max_len in LENS:
                        try:
                            theirs = plan(gib, max_len)
                        except ValueError as err:  # the indexer caches' check (_QSAStateCache / _QSAIndexerCache)
                            theirs = f"refused: {err}"
                        try:
                            pool = simulate(model, kv_memory_bytes=int(gib * GIB), max_model_len=max_len, tp=tp,
                                            gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype,
                                            prefix_caching=prefix, rules=rules, block_tokens=block)
                            ours = (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits)
                        except UsageError as err:
                            ours = f"refused: {err}"
                        compare(f"block {block} tp {tp} {dtype} prefix {prefix} {gib} GiB {max_len}", theirs, ours)
                        if block == BLOCK_SIZES[0]:
                            print(f"block {block} tp {tp}: vLLM {theirs}; kvplan {ours}")
    OPTIONS.update(block_size=None)
    print(f"vLLM {release} Qwen4-Exp grid: {counts['agree']} agree, {counts['differ']} differ")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mnbt", type=int, default=8192)
    p.add_argument("--specs", action="store_true", help="print every registered layer name")
    p.add_argument("--kv-cache-dtype", default="auto")
    p.add_argument("--indexer-kv-dtype", default="auto")
    p.add_argument("--language-model-only", action="store_true")
    p.add_argument("--no-prefix-caching", action="store_true")
    p.add_argument("--gdn-backend", default="auto", help="additional_config gdn_prefill_backend (auto, triton)")
    p.add_argument("--mems", default=None, help="comma list of GiB")
    p.add_argument("--lens", default=None, help="comma list of max_model_len")
    p.add_argument("--tp", type=int, default=1, help="tensor parallel size")
    p.add_argument("--block-size", type=int, default=None, help="vllm serve --block-size (default: none given)")
    p.add_argument("--grid", action="store_true", help="compare kvplan's pool with vLLM's planner on a grid")
    p.add_argument("--release", default="0.33", help="the vLLM release on the path, for kvplan's rules (0.33, 0.34)")
    a = p.parse_args()
    OPTIONS.update(kv_cache_dtype=a.kv_cache_dtype, indexer_kv_dtype=a.indexer_kv_dtype,
                   language_model_only=a.language_model_only, prefix_caching=not a.no_prefix_caching,
                   gdn_backend=a.gdn_backend, tp=a.tp, block_size=a.block_size)
    if a.grid:
        grid(a.release)
        return
    mems = [float(x) for x in a.mems.split(",")] if a.mems else MEMS
    lens = [int(x) for x in a.lens.split(",")] if a.lens else LENS

    cfg, specs, rep = registered_specs(lens[0], a.mnbt)
    print(f"=== Qwen4-Exp ({ARCH}) on SM90, options {OPTIONS}")
    lt = rep["layer_types"]
    print(f"    layer_types: {lt.count('linear_attention')} linear_attention, "
          f"{sum(t != 'linear_attention' for t in lt)} {sorted(set(lt) - {'linear_attention'})} at "
          f"{[i for i, t in enumerate(lt) if t != 'linear_attention']}")
    print(f"    GDN prefill backend {rep['gdn_backend']}; mamba_cache_mode {rep['mamba_cache_mode']}; "
          f"mamba_ssm_cache_dtype {rep['mamba_ssm_cache_dtype']}; indexer dtype {rep['indexer_dtype']}; "
          f"raw-key ring caches MRoPE positions {rep['cache_rope_positions']}")
    print(f"    non-SSM backends in layer order {rep['backends']} -> phase 1 block_size {rep['phase1_block_size']}")
    print(f"    mamba specs for alignment (shapes, dtypes, page): {rep['mamba_specs_for_alignment']}")
    print(f"    -> cache_config.block_size {rep['block_size']}, mamba_block_size {rep['mamba_block_size']}, "
          f"mamba_page_size_padded {rep['mamba_page_size_padded']}")
    print_specs(specs, describe, a.specs, 10)
    print_plans(lambda max_len: registered_specs(max_len, a.mnbt)[:2], mems, lens, group_label, full_start)



if __name__ == "__main__":
    main()
