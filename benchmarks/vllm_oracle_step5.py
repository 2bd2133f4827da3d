"""vLLM 0.33.0's own KV cache planner on the specs Step-5 (Step5ForConditionalGeneration) registers (no GPU).

Like benchmarks/vllm_oracle_qwen4exp.py: vLLM's own code wherever it runs on a CPU.

- hf config: vLLM's own Step5VLConfig / Step5Config (transformers_utils/configs/step5.py; transformers 5.25 has
  no step5) built from tests/data/configs/step-5-preview-reconstructed.json (values of the Step-5-Preview checkpoint,
  re-keyed as step5_vl; tests/test_families_2026.py says where they come from). 92 layers: 69 sliding_attention, 23 full_attention (3, 7, ..., 91);
  layer_types_with_mtp adds 3 sliding MTP layers (92-94).
- layers, registered into static_forward_context in Step5DecoderLayer / Step5Attention.__init__ order
  (models/step5/nvidia/model.py:1826-1930, 857-1260): the attention layer `{prefix}.self_attn.attn`, then for DSA
  layers `...attn.sparse_summary_cache` (Step5SparseSummaryCacheLayer, real class) and `...attn.csa_tail_ring`
  (Step5CSATailRing, real class). The Attention layers are stand-ins that carry what Attention.__init__ computes
  (model_executor/layers/attention/attention.py:241-330) and use Attention.get_kv_cache_spec itself; the per-layer
  choices (sliding window, DSA or not, heads, TP geometry) come from vLLM's own Step5 helpers.
- block size: vLLM's Platform._find_non_ssm_backends, _preferred_block_size_for_backends (phase 1) and
  _check_aligned_block_size (platforms/interface.py:676-823). Step5 is not is_hybrid, so no phase 2.
- layout: vLLM's get_supported_kv_cache_layouts + resolve_kv_cache_layout (v1/attention/backends/utils.py:243-355).
- specs: Model Runner V2's get_kv_cache_spec (v1/worker/gpu/attn_utils.py:138-155, incl. customize_attention_spec).
- planner: vLLM 0.33 kv_cache_planning get_kv_cache_groups, get_kv_cache_config_from_groups,
  kv_cache_utils.get_kv_cache_capacity, the start check (vllm_stub_config.start_check) and get_kv_cache_configs.

tests/test_families_2026.py asserts figures it printed; kvplan/engines/vllm_step5.py computes them from its own
rules, and --grid compares the two (64 cases). Run it from a folder other than the repository's root, with vLLM
0.33.0's sdist, the packages benchmarks/vllm_oracle.py lists and transformers 5.25 on the path:
    cd /tmp && PYTHONPATH=<vllm-0.33.0>:<deps>:$REPO/benchmarks $REPO/.venv/bin/python \
        $REPO/benchmarks/vllm_oracle_step5.py [--specs] [--kv-cache-dtype fp8] [--tp 1,2,4,8] [--block-size N] \
        [--mtp K] [--mems 10,40] [--lens 8192,131072] [--grid]

On vLLM 0.34.0's sdist (deps as benchmarks/vllm_oracle_dsv41.py says) give --grid --release 0.34, so that kvplan
plans with 0.34's rules: 64 of 64 cases agree (block 64 by default there).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import nn

# vLLM falls back to a Triton placeholder on a machine without a GPU; the Step5 ops modules read
# tl.extra.cuda.libdevice at import time (models/step5/nvidia/ops/summary_update.py:17).
from vllm.triton_utils import tl

if not hasattr(tl, "extra"):
    tl.extra = SimpleNamespace(cuda=SimpleNamespace(libdevice=SimpleNamespace()))

from vllm.config.cache import CacheConfig
from vllm.config.vllm import set_current_vllm_config
from vllm.model_executor.layers.attention.attention import Attention
from vllm.platforms.interface import Platform
from vllm.transformers_utils.configs.step5 import Step5VLConfig
from vllm.utils.torch_utils import kv_cache_dtype_str_to_dtype
from vllm.v1.attention.backend import AttentionType
from vllm.v1.attention.backends.utils import get_supported_kv_cache_layouts, resolve_kv_cache_layout
from vllm.v1.worker.gpu.attn_utils import get_kv_cache_spec as mrv2_get_kv_cache_spec

import vllm.models.step5.nvidia.model as s5
from vllm.models.step5.nvidia.sparse_attention import (
    Step5DSAAttentionBackend,
    Step5SplitKVFlashAttentionBackend,
)

try:  # 0.34 moved the ring and the summary cache to models/step5/common
    from vllm.models.step5.common.csa_tail_ring import Step5CSATailRing
    from vllm.models.step5.common.sparse_summary_cache import Step5SparseSummaryCacheLayer
except ImportError:  # 0.33
    from vllm.models.step5.nvidia.csa_tail_ring import Step5CSATailRing
    from vllm.models.step5.nvidia.sparse_summary_cache import Step5SparseSummaryCacheLayer

from vllm_stub_config import (capacity, full_start, group_label, hopper, planner, print_plans, print_specs,
                              start_check, vllm_config as stub_vllm_config)

planning = planner()[0]

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "tests" / "data" / "configs" / "step-5-preview-reconstructed.json"
GIB = 2**30
MEMS = (10, 40)
LENS = (8192, 131072)
ARCH = "Step5ForConditionalGeneration"
OPTIONS = dict(kv_cache_dtype="auto", tp=1, block_size=None, mtp=0)


def load_hf_config():
    raw = json.loads(CONFIG.read_text())
    raw.pop("_comment", None)
    raw["text_config"].pop("_comment", None)
    raw["vision_config"].pop("model_type", None)
    return Step5VLConfig(**raw)


def build_config(hf, max_len: int, mnbt: int):
    text = hf.text_config
    tp = OPTIONS["tp"]
    cfg = stub_vllm_config(max_len, layout="BLNHC", mnbt=mnbt)
    cache = CacheConfig(block_size=OPTIONS["block_size"])  # default None -> 16, user_specified False
    cache.kv_cache_layout = None  # resolved below with vLLM's own resolver
    cache.cache_dtype = OPTIONS["kv_cache_dtype"]
    cfg.cache_config = cache
    cfg.compilation_config = SimpleNamespace(static_forward_context={}, cudagraph_num_of_warmups=0)
    cfg.attention_config = SimpleNamespace(hisparse_config=None)
    cfg.speculative_config = (
        SimpleNamespace(method="mtp", num_speculative_tokens=OPTIONS["mtp"]) if OPTIONS["mtp"] else None
    )
    cfg.lora_config = None
    cfg.quant_config = None
    cfg.scheduler_config.max_num_seqs = 1024
    cfg.parallel_config.tensor_parallel_size = tp
    cfg.parallel_config.use_ubatching = False
    mc = SimpleNamespace(
        max_model_len=max_len, original_max_model_len=max_len, dtype=torch.bfloat16,
        hf_config=text, hf_text_config=text, architecture=ARCH, use_mla=False, is_hybrid=False,
    )
    mc.get_num_kv_heads = lambda pc: max(1, text.num_attention_groups // pc.tensor_parallel_size)
    mc.get_head_size = lambda: text.head_dim
    cfg.model_config = mc
    return cfg


class AttentionStandIn(Attention):
    """What Attention.__init__ (attention.py:241-330) leaves for get_kv_cache_spec, for the arguments
    Step5Attention passes (model.py:1196-1209): quant_config None, per_layer_sliding_window only on sliding
    layers, attn_backend Step5DSAAttentionBackend (DSA) or Step5SplitKVFlashAttentionBackend."""

    def __init__(self, cfg, *, num_heads, num_kv_heads, head_size, sliding_window, backend, prefix):
        nn.Module.__init__(self)
        kv_cache_dtype = cfg.cache_config.cache_dtype  # attention.py:276-279 (no skip layers)
        self.kv_cache_torch_dtype = kv_cache_dtype_str_to_dtype(kv_cache_dtype, cfg.model_config)
        self.kv_cache_dtype = kv_cache_dtype
        self.num_heads = num_heads
        self.head_size = head_size
        self.head_size_v = head_size
        self.num_kv_heads = num_kv_heads
        self.sliding_window = sliding_window
        self.attn_backend = backend
        self.attn_type = AttentionType.DECODER
        self.kv_sharing_target_layer_name = None
        self.layer_name = prefix
        ctx = cfg.compilation_config.static_forward_context
        assert prefix not in ctx
        ctx[prefix] = self


def build_decoder_layer(cfg, text, layer_idx: int, prefix: str, report: dict, draft: bool = False):
    """Step5DecoderLayer.__init__ (model.py:1833-1926) + Step5Attention.__init__ (model.py:885-1254), KV part."""
    tp = cfg.parallel_config.tensor_parallel_size
    sliding_window = getattr(text, "sliding_window", None)  # model.py:1842-1849
    sparse_config = s5.get_step5_sparse_config(text)  # model.py:1853
    assert s5.checkpoint_has_step5_sparse_config(text)  # model.py:1854-1858
    use_dsa_for_layer = sparse_config is not None and s5._is_step5_full_attention_layer(text, layer_idx, sparse_config)
    layer_types = s5._get_step5_layer_types(text)
    num_heads, num_groups, head_dim = text.num_attention_heads, text.num_attention_groups, text.head_dim
    other = getattr(text, "attention_other_setting", None)  # model.py:1869-1881
    if other and layer_idx < len(layer_types) and layer_types[layer_idx] == other["attention_type"]:
        num_heads, num_groups, head_dim = other["num_attention_heads"], other["num_attention_groups"], other["head_dim"]
    # Step5Attention: layer type, sliding window, heads (model.py:895-913, 926-960)
    layer_type = s5._per_layer_value(layer_types, layer_idx, name="layer_types",
                                     default="sliding_attention" if layer_idx % 2 == 0 else "full_attention")
    if sliding_window is not None and layer_type == "sliding_attention":
        if getattr(text, "swa_num_attention_heads", None) is not None:
            num_heads = text.swa_num_attention_heads
    else:
        sliding_window = None
    sparse = sparse_config if use_dsa_for_layer else None
    assert num_heads % tp == 0
    if num_groups >= tp:
        assert num_groups % tp == 0
    else:
        assert tp % num_groups == 0
    local_kv = max(1, num_groups // tp)
    use_dsa = sparse is not None and sliding_window is None  # model.py:1017
    if use_dsa:
        assert head_dim in (128, 192)  # model.py:1033-1037
        s5._validate_step5_dsa_parallel_geometry(  # model.py:1045-1051
            total_num_heads=num_heads, total_num_kv_heads=num_groups,
            indexer_num_heads=int(sparse.sparse_indexer_num_heads),
            index_tp_size=int(sparse.index_tp_size), tp_size=tp)
        assert Step5DSAAttentionBackend.supports_head_size(head_dim)
        assert Step5DSAAttentionBackend.supports_kv_cache_dtype(cfg.cache_config.cache_dtype)
    backend = Step5DSAAttentionBackend if use_dsa else Step5SplitKVFlashAttentionBackend
    attn_prefix = f"{prefix}.self_attn.attn"
    attn = AttentionStandIn(cfg, num_heads=num_heads // tp, num_kv_heads=local_kv, head_size=head_dim,
                            sliding_window=sliding_window, backend=backend, prefix=attn_prefix)
    attn.is_draft_layer = draft
    if use_dsa:
        ctx = cfg.compilation_config.static_forward_context
        summary = Step5SparseSummaryCacheLayer(  # model.py:1243-1247
            prefix=f"{attn_prefix}.sparse_summary_cache", target_impl=SimpleNamespace(),
            static_forward_context=ctx)
        nspec = (int(cfg.speculative_config.num_speculative_tokens)
                 if cfg.speculative_config is not None and cfg.speculative_config.method == "mtp" else 0)
        ring = Step5CSATailRing(  # model.py:1248-1253
            prefix=f"{attn_prefix}.csa_tail_ring", main_layer_name=attn_prefix,
            num_speculative_tokens=nspec, static_forward_context=ctx)
        summary.is_draft_layer = ring.is_draft_layer = draft
        report.setdefault("ring_required_rows", ring.required_rows)
    report.setdefault("kinds", []).append("dsa" if use_dsa else ("swa" if sliding_window else "full"))
    report.setdefault("sparse_config", sparse_config)


def build_layers(cfg, hf) -> dict:
    text = hf.text_config
    report = {"layer_types_with_mtp": list(s5._get_step5_layer_types(text))}
    with hopper():
        for i in range(text.num_hidden_layers):  # Step5Model: make_layers(num_hidden_layers) (model.py:2083-2090)
            build_decoder_layer(cfg, text, i, f"language_model.model.layers.{i}", report)
        if cfg.speculative_config is not None:  # Step5MTP: layers num_hidden_layers .. + num_nextn_predict_layers
            for i in range(text.num_hidden_layers, text.num_hidden_layers + text.num_nextn_predict_layers):
                build_decoder_layer(cfg, text, i, f"draft.model.layers.{i}.mtp_block", report, draft=True)
    return report


def resolve_block_size(cfg) -> dict:
    """Platform.update_block_size_for_backend, phase 1 (platforms/interface.py:751-798); not hybrid."""
    plat = Platform
    out = {}
    backends = plat._find_non_ssm_backends(cfg)
    out["backends"] = [b.get_name() + ("(Step5SplitKV)" if b is Step5SplitKVFlashAttentionBackend else "")
                       for b in backends]
    cache_config = cfg.cache_config
    pre = cache_config.block_size
    with hopper():
        if not cache_config.user_specified_block_size:
            cache_config.block_size = plat._preferred_block_size_for_backends(
                backends, CacheConfig.DEFAULT_BLOCK_SIZE, cfg)
        plat._check_aligned_block_size(cfg, backends, pre)
    out["block_size"] = cache_config.block_size
    out["kernel_block_sizes"] = {b.get_name(): b.get_supported_kernel_block_sizes() for b in backends}
    out["layouts"] = [l.name for l in get_supported_kv_cache_layouts(backends)]
    return out


def registered_specs(max_len: int, mnbt: int):
    hf = load_hf_config()
    cfg = build_config(hf, max_len, mnbt)
    with set_current_vllm_config(cfg):
        report = build_layers(cfg, hf)
        report.update(resolve_block_size(cfg))
        with hopper():
            specs = mrv2_get_kv_cache_spec(cfg)
        layout = resolve_kv_cache_layout(cfg, [report["layouts"]], specs.values())
        report["layout"] = layout.name
    return cfg, specs, report


def describe(spec) -> str:
    name = type(spec).__name__
    fields = [f"block {spec.block_size}", f"kv_heads {spec.num_kv_heads}", f"head_size {spec.head_size}",
              f"head_size_v {spec.head_size_v}", f"dtype {str(spec.dtype).removeprefix('torch.')}"]
    if getattr(spec, "tokens_per_state", 1) != 1:
        fields.append(f"tokens_per_state {spec.tokens_per_state}")
    if getattr(spec, "sliding_window", None) is not None:
        fields.append(f"sliding_window {spec.sliding_window}")
    fields.append(f"kv_quant_mode {spec.kv_quant_mode.name}")
    fields.append(f"num_states {spec.num_states}")
    fields.append(f"block_stride_alignment {spec.block_stride_alignment} (-> {spec.get_block_stride_alignment()} B)")
    fields.append(f"page {spec.page_size_bytes} B")
    if spec.is_draft:
        fields.append("draft")
    return f"{name}: " + ", ".join(fields)


def run_case(a, mems, lens) -> None:
    try:
        cfg, specs, rep = registered_specs(lens[0], a.mnbt)
    except ValueError as exc:
        print(f"=== Step-5 ({ARCH}) on SM90, options {OPTIONS}: REFUSED while building specs: {exc}")
        return
    kinds = rep["kinds"]
    print(f"=== Step-5 ({ARCH}) on SM90, options {OPTIONS}")
    print(f"    layers: {kinds.count('swa')} sliding (FLASH_ATTN/Step5SplitKV), {kinds.count('dsa')} DSA at "
          f"{[i for i, k in enumerate(kinds) if k == 'dsa'][:4]}...; sparse topk {rep['sparse_config'].topk}, "
          f"region {rep['sparse_config'].region_block_size}, proxy_dim {rep['sparse_config'].proxy_dim}; "
          f"ring required rows {rep.get('ring_required_rows')}")
    print(f"    non-SSM backends in layer order {rep['backends']} -> block_size {rep['block_size']}; "
          f"layout candidates {rep['layouts']} -> {rep['layout']}")
    print_specs(specs, describe, a.specs, 6)
    print_plans(lambda max_len: registered_specs(max_len, a.mnbt)[:2], mems, lens, group_label, full_start)




def plan(gib: float, max_len: int, mnbt: int = 8192) -> tuple[int, int, bool]:
    """(blocks, tokens, fits) as vLLM's planner gives them under OPTIONS."""
    memory = int(gib * GIB)
    c, specs, _ = registered_specs(max_len, mnbt)
    groups = planning.get_kv_cache_groups(c, dict(specs))
    kv = planning.get_kv_cache_config_from_groups(c, groups, memory)
    tokens, _ = capacity(c, kv, max_len)
    return kv.num_blocks, tokens, start_check(c, specs, groups, memory)


def grid(release: str) -> None:
    """kvplan's pool (kvplan.engines.vllm_step5) against vLLM's planner: TP 1/2/4/8, KV dtype auto/fp8, block
    16 and 32, 10 / 40 GiB, 8K / 128K; a plan vLLM refuses while building its specs must be refused by kvplan."""
    import sys

    sys.path.insert(0, str(REPO))
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve
    from kvplan.errors import UsageError
    from kvplan.sources import load_model

    rules = resolve(release)[0]
    model = load_model(str(CONFIG))
    agree = differ = 0
    for tp in (1, 2, 4, 8):
        for dtype in ("auto", "fp8"):
            for block in (None, 32):
                OPTIONS.update(tp=tp, kv_cache_dtype=dtype, block_size=block, mtp=0)
                for gib in MEMS:
                    for max_len in LENS:
                        try:
                            theirs = plan(gib, max_len)
                        except ValueError:
                            theirs = "refused"
                        try:
                            pool = simulate(model, kv_memory_bytes=int(gib * GIB), max_model_len=max_len, tp=tp,
                                            gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype,
                                            block_tokens=block, allow_long_max_model_len=True, rules=rules)
                            ours = (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits)
                        except UsageError:
                            ours = "refused"
                        if theirs == ours:
                            agree += 1
                        else:
                            differ += 1
                            print(f"DIFFER tp {tp} {dtype} block {block} {gib} GiB {max_len}: vLLM {theirs}, "
                                  f"kvplan {ours}")
    print(f"vLLM {release} Step-5 grid: {agree} agree, {differ} differ")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mnbt", type=int, default=8192)
    p.add_argument("--specs", action="store_true", help="print every registered layer name")
    p.add_argument("--kv-cache-dtype", default="auto")
    p.add_argument("--tp", default="1", help="comma list of tensor parallel sizes")
    p.add_argument("--block-size", type=int, default=None, help="--block-size (user specified)")
    p.add_argument("--mtp", type=int, default=0, help="MTP num_speculative_tokens (approximate, see REPORT)")
    p.add_argument("--mems", default=None, help="comma list of GiB")
    p.add_argument("--lens", default=None, help="comma list of max_model_len")
    p.add_argument("--grid", action="store_true", help="compare kvplan's pool with vLLM's planner on a grid")
    p.add_argument("--release", default="0.33", help="the vLLM release on the path, for kvplan's rules (0.33, 0.34)")
    a = p.parse_args()
    if a.grid:
        grid(a.release)
        return
    mems = [float(x) for x in a.mems.split(",")] if a.mems else MEMS
    lens = [int(x) for x in a.lens.split(",")] if a.lens else LENS
    for tp in [int(x) for x in a.tp.split(",")]:
        OPTIONS.update(kv_cache_dtype=a.kv_cache_dtype, tp=tp, block_size=a.block_size, mtp=a.mtp)
        run_case(a, mems, lens)


if __name__ == "__main__":
    main()
