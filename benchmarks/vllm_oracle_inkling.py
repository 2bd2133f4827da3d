"""kvplan's vLLM pool for Inkling against vLLM's own planner (no GPU), on the specs Inkling's layers register.

The specs are built here from the config as vLLM's code builds them, not from kvplan's layer specs:
models/inkling/nvidia/model.py InklingDecoderLayer makes, per layer, InklingConvState first (sconv_swa_attn.py:
SlidingWindowSpec(block_size = sliding_window = sconv_kernel_size, num_kv_heads = KV heads // TP, head_size =
2 x head_dim + 2 x hidden_size // KV heads rounded up to a power of two, head_size_v = 0, bfloat16)), then
InklingAttention (attention.py: SlidingWindowSpec(sliding_window_size) on local_layer_ids, else FullAttentionSpec,
cache_config.block_size, the KV dtype). That release's get_kv_cache_groups and get_kv_cache_config_from_groups
then give groups, blocks and tokens, compared with kvplan.engines.vllm.simulate.

    PYTHONPATH=/tmp/vsd/vllm-0.34.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_inkling.py 0.34

(the packages: see benchmarks/vllm_oracle.py). Prints one line per case: "agree" or both figures. With --mtp,
also two configs with an MTP draft at num_speculative_tokens 1 and 3: the depth layers' specs after the target's,
and every SlidingWindowSpec tagged with the extra_retained_tokens vLLM's speculator config gives (the loop of
get_global_kv_cache_groups, which needs a whole VllmConfig, is redone here).
"""

from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path

import torch

from kvplan.configs.build import build_model
from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve

from vllm_stub_config import capacity, mtp_retained_tokens, planner, start_check, vllm_config  # this folder

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


def registered_specs(raw: dict, tp: int, block: int, kv_dtype: torch.dtype, iface, draft_tokens: int = 0) -> dict:
    """vLLM's specs in registration order, from the config (InklingModelConfig's defaults where absent); with
    draft_tokens, the MTP depths after the target's layers (nvidia/mtp.py: min(mtp_config.num_nextn_predict_
    layers, num_speculative_tokens) InklingDecoderLayers, local by mtp_config.local_layer_ids)."""
    t = raw.get("text_config", raw)
    hidden, n = t["hidden_size"], t["num_hidden_layers"]
    heads = t["num_attention_heads"]
    head_dim = t.get("head_dim") or hidden // heads
    kv = t["num_key_value_heads"]
    local = set(t.get("local_layer_ids") or ())
    kernel = t.get("sconv_kernel_size") or t.get("conv_kernel_size") or 4
    window = t.get("sliding_window_size", 512)
    names = [(f"layers.{i}", i in local) for i in range(n)]
    if draft_tokens:
        mtp = raw["mtp_config"]
        mtp_local = set(mtp.get("local_layer_ids") or ())
        depths = min(mtp["num_nextn_predict_layers"], draft_tokens)
        names += [(f"draft.layers.{d}.transformer_block", d in mtp_local) for d in range(depths)]
    out = {}
    for prefix, is_local in names:
        layer_kv = (t.get("swa_num_key_value_heads") or kv) if is_local else kv
        layer_hd = (t.get("swa_head_dim") or head_dim) if is_local else head_dim
        raw_head = 2 * layer_hd + 2 * (hidden // layer_kv)
        out[f"{prefix}.conv_state"] = iface.SlidingWindowSpec(
            block_size=kernel, num_kv_heads=layer_kv // tp, head_size=1 << (raw_head - 1).bit_length(),
            head_size_v=0, dtype=torch.bfloat16, sliding_window=kernel)
        common = dict(block_size=block, num_kv_heads=max(1, layer_kv // tp), head_size=layer_hd, dtype=kv_dtype)
        out[f"{prefix}.attn"] = (iface.SlidingWindowSpec(sliding_window=window, **common) if is_local
                                   else iface.FullAttentionSpec(**common))
    return out


def retained_tokens(raw: dict, tokens: int) -> int:
    """extra_retained_tokens as vLLM's own code gives it for Inkling's draft (vllm_stub_config.mtp_retained_tokens:
    VllmConfig.num_prefill_lookahead_tokens less one, as get_global_kv_cache_groups tags every SlidingWindowSpec),
    with the draft config hf_config_override writes: n_predict = num_nextn_predict_layers = the MTP depths."""
    depths = raw["mtp_config"]["num_nextn_predict_layers"]
    return mtp_retained_tokens({"n_predict": depths, "num_nextn_predict_layers": depths, "model_type": "inkling_mtp"},
                               tokens)


def tag_retained(specs: dict, retained: int) -> dict:
    """get_global_kv_cache_groups' loop: every SlidingWindowSpec (conv states too) gets extra_retained_tokens."""
    from dataclasses import replace

    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    return {k: replace(v, extra_retained_tokens=retained) if isinstance(v, iface.SlidingWindowSpec) else v
            for k, v in specs.items()}


def draft_cases() -> dict[str, dict]:
    """Configs with an MTP draft (mtp_config at the top level, where vLLM reads it): 3 depths, the second local,
    on Inkling-Small; 3 depths, the first and third local, on the close-counts config (the draft moves its
    group size); one depth on the all-full config (3 tokens reuse it: one module, nothing retained)."""
    base = cases()
    small = base["inkling-small"] | {"mtp_config": {"num_nextn_predict_layers": 3, "local_layer_ids": [1]}}
    close = base["inkling-close-counts"] | {"mtp_config": {"num_nextn_predict_layers": 3, "local_layer_ids": [0, 2]}}
    tiny = base["inkling-tiny-all-full"] | {"mtp_config": {"num_nextn_predict_layers": 1}}
    return {"inkling-small-mtp3": small, "inkling-close-mtp3": close, "inkling-tiny-mtp1": tiny}


def main() -> None:
    import importlib

    version = next((a for a in sys.argv[1:] if not a.startswith("--")), "0.34")
    rules, _ = resolve(version)
    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    planning = planner()[0]
    agree = differ = 0
    plain = [(name, raw, 0) for name, raw in cases().items()]
    drafted = [(name, raw, k) for name, raw in draft_cases().items() for k in (1, 3)] if "--mtp" in sys.argv else []
    for (name, raw, k), tp, dtype, gib, max_len in itertools.product(plain + drafted, (1, 2), ("auto", "fp8"),
                                                                      (10, 40), (8192, 131072)):
        model = build_model(raw, name)
        draft = dict(draft_layers=model.mtp_layers, num_speculative_tokens=k) if k else {}
        pool = simulate(model, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                        kv_cache_dtype=dtype, max_num_batched_tokens=8192, allow_long_max_model_len=True, **draft)
        cfg = vllm_config(max_len, mnbt=8192, in_flight=pool.in_flight_tokens)
        block = rules.default_block_tokens
        kv_dtype = torch.bfloat16 if dtype == "auto" else torch.uint8
        specs = registered_specs(raw, tp, block, kv_dtype, iface, k)
        if k:
            specs = tag_retained(specs, retained_tokens(raw, k))
        registered = dict(specs)
        groups = planning.get_kv_cache_groups(cfg, specs)
        kv = planning.get_kv_cache_config_from_groups(cfg, groups, gib * GIB)
        tokens = capacity(cfg, kv, max_len)[0]
        theirs = (len(groups), sorted(len(g.layer_names) for g in groups), kv.num_blocks, tokens,
                  start_check(cfg, registered, groups, gib * GIB))
        ours = (len(pool.groups), sorted(len(g.layers) for g in pool.groups), pool.num_blocks,
                pool.gpu_kv_cache_tokens, pool.fits)
        case = f"vLLM {version} {name}{f' k {k}' if k else ''} tp {tp} {dtype} {gib} GiB {max_len}"
        if theirs == ours:
            agree += 1
            print(f"{case}: {ours[0]} groups, {ours[2]:,} blocks, {ours[3]:,} tokens: agree")
        else:
            differ += 1
            print(f"{case}: DIFFER vLLM {theirs}, kvplan {ours}")
    print(f"vLLM {version} Inkling: {agree} agree, {differ} differ")


if __name__ == "__main__":
    main()
