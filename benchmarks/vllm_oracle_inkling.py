"""kvplan's vLLM pool for Inkling against vLLM's own planner (no GPU), on the specs Inkling's layers register.

The specs are built here from the config as vLLM's code builds them, not from kvplan's layer specs:
models/inkling/nvidia/model.py InklingDecoderLayer makes, per layer, InklingConvState first (sconv_swa_attn.py:
SlidingWindowSpec(block_size = sliding_window = sconv_kernel_size, num_kv_heads = KV heads // TP, head_size =
2 x head_dim + 2 x hidden_size // KV heads rounded up to a power of two, head_size_v = 0, bfloat16)), then
InklingAttention (attention.py: SlidingWindowSpec(sliding_window_size) on local_layer_ids, else FullAttentionSpec,
cache_config.block_size, the KV dtype). That release's get_kv_cache_groups and get_kv_cache_config_from_groups
then give groups, blocks and tokens, compared with kvplan.engines.vllm.simulate.

    PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_inkling.py 0.34

(the packages: see benchmarks/vllm_oracle.py). Prints one line per case: "agree" or both figures.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import torch

from kvplan.configs.build import build_model
from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve

from vllm_stub_config import capacity, planner, start_check, vllm_config  # this folder

GIB = 2**30
DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "configs"


def cases() -> dict[str, dict]:
    small = json.loads((DATA / "inkling-small-text-quoted.json").read_text())
    text66 = {"model_type": "inkling_model", "num_hidden_layers": 66, "num_attention_heads": 64,
              "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 6144,
              "local_layer_ids": [i for i in range(66) if (i + 1) % 6], "sliding_window_size": 512,
              "swa_num_attention_heads": 64, "swa_num_key_value_heads": 16, "swa_head_dim": 128,
              "sconv_kernel_size": 4}
    tiny = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 4,
            "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}
    # equal conv pages of two shapes (full: 2 heads x 512; local: 4 heads x 256) and close layer counts (8 local,
    # 6 full): vLLM keeps the two conv specs apart, which decides the group size
    close = tiny | {"num_hidden_layers": 14, "local_layer_ids": list(range(8)), "swa_num_key_value_heads": 4,
                    "swa_head_dim": 64, "swa_num_attention_heads": 4}
    return {"inkling-small": small, "inkling-close-counts": close,
            "inkling-66": {"model_type": "inkling_mm_model", "architectures": ["InklingForConditionalGeneration"],
                           "text_config": text66},
            "inkling-tiny-all-full": tiny}


def registered_specs(raw: dict, tp: int, block: int, kv_dtype: torch.dtype, iface) -> dict:
    """vLLM's specs in registration order, from the config (InklingModelConfig's defaults where absent)."""
    t = raw.get("text_config", raw)
    hidden, n = t["hidden_size"], t["num_hidden_layers"]
    heads = t["num_attention_heads"]
    head_dim = t.get("head_dim") or hidden // heads
    kv = t["num_key_value_heads"]
    local = set(t.get("local_layer_ids") or ())
    kernel = t.get("sconv_kernel_size") or t.get("conv_kernel_size") or 4
    window = t.get("sliding_window_size", 512)
    out = {}
    for i in range(n):
        is_local = i in local
        layer_kv = (t.get("swa_num_key_value_heads") or kv) if is_local else kv
        layer_hd = (t.get("swa_head_dim") or head_dim) if is_local else head_dim
        raw_head = 2 * layer_hd + 2 * (hidden // layer_kv)
        out[f"layers.{i}.conv_state"] = iface.SlidingWindowSpec(
            block_size=kernel, num_kv_heads=layer_kv // tp, head_size=1 << (raw_head - 1).bit_length(),
            head_size_v=0, dtype=torch.bfloat16, sliding_window=kernel)
        common = dict(block_size=block, num_kv_heads=max(1, layer_kv // tp), head_size=layer_hd, dtype=kv_dtype)
        out[f"layers.{i}.attn"] = (iface.SlidingWindowSpec(sliding_window=window, **common) if is_local
                                   else iface.FullAttentionSpec(**common))
    return out


def main() -> None:
    import importlib

    version = sys.argv[1] if len(sys.argv) > 1 else "0.34"
    rules, _ = resolve(version)
    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    planning = planner()[0]
    agree = differ = 0
    for (name, raw), tp, dtype, gib, max_len in itertools.product(cases().items(), (1, 2), ("auto", "fp8"),
                                                                   (10, 40), (8192, 131072)):
        model = build_model(raw, name)
        pool = simulate(model, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                        kv_cache_dtype=dtype, max_num_batched_tokens=8192, allow_long_max_model_len=True)
        cfg = vllm_config(max_len, mnbt=8192, in_flight=pool.in_flight_tokens)
        block = rules.default_block_tokens
        kv_dtype = torch.bfloat16 if dtype == "auto" else torch.uint8
        specs = registered_specs(raw, tp, block, kv_dtype, iface)
        registered = dict(specs)
        groups = planning.get_kv_cache_groups(cfg, specs)
        kv = planning.get_kv_cache_config_from_groups(cfg, groups, gib * GIB)
        tokens = capacity(cfg, kv, max_len)[0]
        theirs = (len(groups), sorted(len(g.layer_names) for g in groups), kv.num_blocks, tokens,
                  start_check(cfg, registered, groups, gib * GIB))
        ours = (len(pool.groups), sorted(len(g.layers) for g in pool.groups), pool.num_blocks,
                pool.gpu_kv_cache_tokens, pool.fits)
        case = f"vLLM {version} {name} tp {tp} {dtype} {gib} GiB {max_len}"
        if theirs == ours:
            agree += 1
            print(f"{case}: {ours[0]} groups, {ours[2]:,} blocks, {ours[3]:,} tokens: agree")
        else:
            differ += 1
            print(f"{case}: DIFFER vLLM {theirs}, kvplan {ours}")
    print(f"vLLM {version} Inkling: {agree} agree, {differ} differ")


if __name__ == "__main__":
    main()
