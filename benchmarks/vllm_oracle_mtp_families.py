"""kvplan's vLLM pool with the MTP drafts of MiMo-7B, ERNIE-4.5 MoE, Nemotron-H and MiMo-V2 against vLLM's own code.

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

    PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_mtp_families.py 0.34

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


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "0.34"
    rules, _ = resolve(version)
    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    planning = oracle.planner()[0]
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
