"""kvplan's vLLM pool with the MTP drafts of MiMo-7B, ERNIE-4.5 MoE, Nemotron-H, MiMo-V2 and Step-3.5 against vLLM's
own code.

Two checks per case, no GPU:
- the draft layer's page, built here from the config as each vLLM MTP file builds it, with that release's own spec
  classes: MiMo (mimo_mtp.py, Qwen2Attention: hidden_size / num_attention_heads wide), ERNIE (ernie_mtp.py,
  LlamaAttention: head_dim, else the same quotient) and Nemotron-H (nemotron_h_mtp.py, NemotronHAttention:
  head_dim) a FullAttentionSpec of num_key_value_heads // TP heads; MiMo-V2 (mimo_v2_mtp.py) a SlidingWindowSpec of
  swa_num_key_value_heads // TP heads, K swa_head_dim, V swa_v_head_dim, window sliding_window_size; Nemotron-H's
  Mamba-2 state from mamba_utils.MambaStateShapeCalculator.mamba2_state_shape(num_spec = the draft tokens), which
  must equal kvplan's unpadded state (conv in bf16, SSM in float32);
- the release's get_kv_cache_groups and get_kv_cache_config_from_groups on kvplan's specs (vllm_oracle_versions
  .compare): groups, layers per group, blocks, tokens and the start check.

Step-3.5 (0.33+; step3p5_case) is checked end to end from the config instead: transformers' Step3p7TextConfig (the
class vLLM 0.33 / 0.34 read step3p5 with) and vLLM's own step3p5._get_layer_type give every layer's kind, target and
MTP (indices num_hidden_layers + k); each registers a FullAttentionSpec or SlidingWindowSpec(sliding_window) of
num_attention_groups // TP heads of head_dim, as Step3p5DecoderLayer builds it; every SlidingWindowSpec is tagged
with extra_retained_tokens from VllmConfig.num_prefill_lookahead_tokens (the release's own property, on a stub of
the speculative config); then the release's planner gives groups, blocks, tokens and the start check.

    PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_mtp_families.py 0.34
    PYTHONPATH=... .venv/bin/python benchmarks/vllm_oracle_mtp_families.py 0.34 --step3p5   # Step-3.5 only

(the packages: see benchmarks/vllm_oracle.py; the PYTHONPATH must not put the repository root, whose kernels/
shadows a package transformers imports, before site-packages). Prints the cases that differ and a count per family.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vllm_oracle_versions as oracle  # noqa: E402
from vllm_stub_config import mtp_retained_tokens  # noqa: E402

from kvplan.configs.build import build_model  # noqa: E402
from kvplan.engines.vllm import simulate  # noqa: E402
from kvplan.engines.vllm_rules import resolve  # noqa: E402
from kvplan.workflows import apply_kv_dtype  # noqa: E402

CONFIGS = Path(__file__).resolve().parent.parent / "tests" / "data" / "configs"
GIB = 2**30


def _raw(name: str, **extra) -> dict:
    return {**json.loads((CONFIGS / name).read_text()), **extra}


CASES = {  # name -> (config, draft tokens tried)
    "mimo-7b": (_raw("mimo-7b.json"), (1,)),
    "ernie-4.5-21b-a3b+mtp": (_raw("ernie-4.5-21b-a3b-quoted.json", num_mtp_layers=1), (1,)),
    "nemotron-h-8b+mtp": (_raw("nemotron-h-8b-tf5.json", num_nextn_predict_layers=1), (1, 3)),
    "mimo-v2.6-flash": (_raw("mimo-v2.6-flash.json"), (1,)),
}


def draft_page(iface, raw: dict, tp: int, block: int, dtype) -> int:
    """The draft layer's page as its vLLM MTP file registers it."""
    if raw["model_type"] == "mimo_v2":
        spec = iface.SlidingWindowSpec(block_size=block, num_kv_heads=max(1, raw["swa_num_key_value_heads"] // tp),
                                       head_size=raw["swa_head_dim"], head_size_v=raw["swa_v_head_dim"],
                                       dtype=dtype, sliding_window=raw["sliding_window_size"])
        return spec.page_size_bytes
    heads = raw["num_attention_heads"]
    head = raw["hidden_size"] // heads if raw["model_type"] == "mimo" else raw.get("head_dim") or raw["hidden_size"] // heads
    spec = iface.FullAttentionSpec(block_size=block, num_kv_heads=max(1, raw["num_key_value_heads"] // tp),
                                   head_size=head, dtype=dtype)
    return spec.page_size_bytes


def mamba_state(raw: dict, tp: int, spec_tokens: int) -> int:
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateShapeCalculator

    conv, ssm = MambaStateShapeCalculator.mamba2_state_shape(
        tp_world_size=tp, intermediate_size=raw["mamba_num_heads"] * raw["mamba_head_dim"], n_groups=raw["n_groups"],
        num_heads=raw["mamba_num_heads"], head_dim=raw["mamba_head_dim"], state_size=raw["ssm_state_size"],
        conv_kernel=raw["conv_kernel"], num_spec=spec_tokens)
    return math.prod(conv) * 2 + math.prod(ssm) * 4


def _step35(num_layers: int, **extra) -> dict:
    """A Step-3.5 config in the hub's shape (constructed, not a checkpoint's file): 64 query heads, head_dim 128, a
    512-token window, full attention on every 4th layer."""
    return {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
            "num_hidden_layers": num_layers, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
            "sliding_window": 512, "max_position_embeddings": 262144, "vocab_size": 128896, **extra}


STEP35 = {  # name -> (config, draft tokens tried)
    # the hub's legacy form: 45 + 3 layer_types entries, the trailing three (indices 45-47) sliding
    "step-3.5-legacy": (_step35(45, num_nextn_predict_layers=3, layer_types=[
        "full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)]), (1, 3)),
    # transformers' saved form: mtp_layer_types, one full and two sliding
    "step-3.5-mtp-types": (_step35(45, num_nextn_predict_layers=3, layer_types=[
        "full_attention" if i % 4 == 0 else "sliding_attention" for i in range(45)],
        mtp_layer_types=["sliding_attention", "full_attention", "sliding_attention"]), (1, 3, 6)),
    # no layer_types: every layer full, the draft's too; 4 K/V heads
    "step-3.5-no-types": (_step35(8, num_nextn_predict_layers=2, num_attention_groups=4), (1, 2)),
}


def step3p5_specs(raw: dict, tp: int, block: int, dtype, iface, draft: bool) -> dict:
    """The specs vLLM registers for a step3p5 config: the target's layers and, with the draft, the MTP layers."""
    from transformers.models.step3p7.configuration_step3p7 import Step3p7TextConfig
    from vllm.model_executor.models.step3p5 import _get_layer_type

    config = Step3p7TextConfig(**{k: v for k, v in raw.items() if k != "architectures"})
    count = config.num_hidden_layers + (config.num_nextn_predict_layers if draft else 0)
    out = {}
    for i in range(count):
        common = dict(block_size=block, num_kv_heads=max(1, config.num_attention_groups // tp),
                      head_size=config.head_dim, dtype=dtype)
        sliding = _get_layer_type(config, i) == "sliding_attention" and config.sliding_window is not None
        out[f"model.layers.{i}.self_attn.attn"] = (iface.SlidingWindowSpec(sliding_window=config.sliding_window,
                                                                           **common)
                                                   if sliding else iface.FullAttentionSpec(**common))
    return out


def mimo_sliding_specs(raw: dict, tp: int, block: int, dtype, iface, draft: bool) -> dict:
    """The specs vLLM registers for a MiMo-7B config with use_sliding_window: every Qwen2Attention (the target's and
    mimo_mtp.py's MTP layers, numbered after them) takes the cache config's sliding_window (Qwen2DecoderLayer
    asserts max_window_layers = num_hidden_layers), num_key_value_heads // TP heads of hidden_size /
    num_attention_heads."""
    count = raw["num_hidden_layers"] + (raw["num_nextn_predict_layers"] if draft else 0)
    head = raw["hidden_size"] // raw["num_attention_heads"]
    return {f"model.layers.{i}.self_attn.attn": iface.SlidingWindowSpec(
        block_size=block, num_kv_heads=max(1, raw["num_key_value_heads"] // tp), head_size=head, dtype=dtype,
        sliding_window=raw["sliding_window"]) for i in range(count)}


# families checked end to end from the config: name -> (config, draft tokens tried, the spec builder, the draft
# config's model_type as config/speculative.py hf_config_override names it; it sets n_predict and keeps
# num_nextn_predict_layers)
SLIDING_MTP = {
    # MiMo-7B's shape with use_sliding_window, a 4,096-token window and two MTP layers (constructed: the published
    # checkpoint has one MTP layer and no window); 3 draft tokens are refused (above n_predict 2, not a multiple)
    "mimo-7b-sliding-2mtp": (_raw("mimo-7b.json", use_sliding_window=True, sliding_window=4096,
                                  num_nextn_predict_layers=2), (1, 2, 4), mimo_sliding_specs, "mimo_mtp"),
}


def sliding_mtp_case(version: str, rules, iface, planning, cases: dict) -> None:
    """cases: name -> (config, draft tokens tried, spec builder, the draft config's model_type)."""
    from dataclasses import replace

    for name, (raw, token_counts, specs_of, draft_type) in cases.items():
        base = build_model(raw, name)
        agree = differ = 0
        for kv, tp, gib, max_len, tokens in itertools.product(("auto", "fp8"), (1, 2, 4, 8), (10, 40), (8192, 131072),
                                                              (0,) + token_counts):
            model = apply_kv_dtype(base, kv)[0]
            draft = dict(draft_layers=base.mtp_layers, num_speculative_tokens=tokens) if tokens else {}
            pool = simulate(model, rules=rules, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp,
                            max_num_batched_tokens=8192, allow_long_max_model_len=True, **draft)
            cfg = oracle.vllm_config(max_len, mnbt=8192, in_flight=pool.in_flight_tokens)
            dtype = torch.bfloat16 if kv == "auto" else torch.float8_e4m3fn
            specs = specs_of(raw, tp, rules.default_block_tokens, dtype, iface, bool(tokens))
            n = raw["num_nextn_predict_layers"]
            kept = mtp_retained_tokens(dict(model_type=draft_type, n_predict=n, num_nextn_predict_layers=n),
                                       tokens) if tokens else 0
            if kept:
                specs = {k: replace(v, extra_retained_tokens=kept) if isinstance(v, iface.SlidingWindowSpec) else v
                         for k, v in specs.items()}
            registered = dict(specs)
            groups = planning.get_kv_cache_groups(cfg, specs)
            kv_config = planning.get_kv_cache_config_from_groups(cfg, groups, gib * GIB)
            theirs = (len(groups), sorted(len(g.layer_names) for g in groups), kv_config.num_blocks,
                      oracle.capacity(cfg, kv_config, max_len)[0], oracle.start_check(cfg, registered, groups, gib * GIB))
            ours = (len(pool.groups), sorted(len(g.layers) for g in pool.groups), pool.num_blocks,
                    pool.gpu_kv_cache_tokens, pool.fits)
            if theirs == ours:
                agree += 1
            else:
                differ += 1
                print(f"DIFFER vLLM {version} {name} {kv} tp {tp} {gib} GiB {max_len} tokens {tokens}: "
                      f"vLLM {theirs}, kvplan {ours}")
        print(f"vLLM {version} {name}: {agree} agree, {differ} differ")


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "0.34"
    rules, _ = resolve(version)
    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    planning = oracle.planner()[0]
    if "--step3p5" in sys.argv:
        sliding_mtp_case(version, rules, iface, planning,
                         {k: (raw, counts, step3p5_specs, "step3p5_mtp") for k, (raw, counts) in STEP35.items()})
        return
    if "--sliding" in sys.argv:
        sliding_mtp_case(version, rules, iface, planning, SLIDING_MTP)
        return
    for name, (raw, token_counts) in CASES.items():
        base = build_model(raw, name)
        agree = differ = 0
        for kv, tp, gib, max_len, tokens in itertools.product(("auto", "fp8"), (1, 2, 4, 8), (10, 40), (8192, 131072),
                                                              (0,) + token_counts):
            model = apply_kv_dtype(base, kv)[0]
            pool = simulate(model, rules=rules, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp,
                            draft_layers=1 if tokens else 0, num_speculative_tokens=tokens,
                            allow_long_max_model_len=True)
            theirs, ours = oracle.compare(pool, rules, iface, planning, gib * GIB, max_len)
            problems = [] if theirs == ours else [f"planner: vLLM {theirs}, kvplan {ours}"]
            if tokens:
                spec = pool.layer_specs[-1]  # the draft's layer, registered last
                dtype = torch.bfloat16 if kv == "auto" else torch.float8_e4m3fn
                block = spec.block_tokens
                theirs_page = draft_page(iface, raw, tp, block, dtype)
                if theirs_page != spec.page_bytes:
                    problems.append(f"draft page: vLLM {theirs_page}, kvplan {spec.page_bytes}")
            mamba = [s for s in pool.layer_specs if s.kind == "mamba"]
            if mamba and kv == "auto":  # the state's dtypes do not follow --kv-cache-dtype
                state = mamba_state(raw, tp, tokens)
                if state != mamba[0].state_bytes:
                    problems.append(f"Mamba state: vLLM {state}, kvplan {mamba[0].state_bytes}")
            if problems:
                differ += 1
                print(f"DIFFER vLLM {version} {name} {kv} tp {tp} {gib} GiB {max_len} tokens {tokens}: "
                      + "; ".join(problems))
            else:
                agree += 1
        print(f"vLLM {version} {name}: {agree} agree, {differ} differ")


if __name__ == "__main__":
    main()
