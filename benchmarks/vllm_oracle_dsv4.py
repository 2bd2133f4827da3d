"""vLLM's own KV cache planner on the specs DeepSeek-V4 registers (no GPU): groups, blocks, tokens.

The specs are those of vLLM's DeepSeek-V4 model code on the FlashMLA fp8_ds_mla path, the
same in every release from 0.20.0 to 0.33.0 (attention.py, compressor.py, the MTP model,
v1/attention/backends/mla/sparse_swa.py), in registration order; --mtp N appends the MTP
draft layers speculative decoding adds (window only). The layout is BLHNC (the indexer
backend accepts only block-outermost layouts). The planner is whichever release is on the
path. tests/test_deepseek_v4.py asserts figures it printed (VLLM_DSV4,
VLLM_DSV4_BY_RELEASE); kvplan/engines/vllm_dsv4.py computes them from its own rules.

    PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps:benchmarks .venv/bin/python benchmarks/vllm_oracle_dsv4.py flash
    ... vllm_oracle_dsv4.py flash --mtp 1 --mnbt 4096 --case 10.29:1048576
    ... vllm_oracle_dsv4.py --grid 0.25     (kvplan against that release's planner, 72 cases)
    (benchmarks/vllm_oracle.py lists the packages vLLM's planner imports; 0.20-0.23 need a few more, see
    benchmarks/vllm_oracle_versions.py)
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
from pathlib import Path

import torch
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec, get_kv_quant_mode

from vllm_stub_config import capacity, mtp_retained_tokens, planner, start_check, vllm_config  # this folder

planning = planner()[0]

GIB = 2**30
ROOT = Path(__file__).resolve().parents[1]
CASES = ((10, 131072), (40, 1048576), (7.01, 912128))


def make(cls, **fields):
    """cls(**fields), dropping the fields a release's class lacks (0.29 names tokens_per_state compress_ratio)."""
    names = {f.name for f in dataclasses.fields(cls)}
    if "tokens_per_state" in fields and "tokens_per_state" not in names:
        fields["compress_ratio"] = fields.pop("tokens_per_state")
    return cls(**{k: v for k, v in fields.items() if k in names})


def state(ratio: int, head_dim: int):
    """CompressorStateCache: coff x ratio tokens of kv and score, float32."""
    coff = 2 if ratio == 4 else 1
    return make(SlidingWindowMLASpec, block_size=4 if ratio == 4 else 8, num_kv_heads=1, max_tp_shards=1,
                head_size=2 * coff * head_dim, dtype=torch.float32, sliding_window=coff * ratio, alignment=576)


def specs(config: dict, mtp_layers: int = 0) -> dict:
    quant = get_kv_quant_mode("fp8_ds_mla")
    fp8_ds_mla = dict(num_kv_heads=1, max_tp_shards=1, head_size=config["head_dim"], dtype=torch.uint8,
                      cache_dtype_str="fp8_ds_mla", state_content_bytes=584, alignment=576,
                      model_version="deepseek_v4", kv_quant_mode=quant)
    index = config["index_head_dim"]
    out = {}
    # an MTP draft layer (index num_hidden_layers and on) is window-only: vLLM sets its compress_ratio to 1
    ratios = config["compress_ratios"][:config["num_hidden_layers"]] + [1] * mtp_layers
    for i, ratio in enumerate(ratios):
        prefix = f"model.layers.{i}.attn"
        if ratio == 4:  # the indexer registers its key cache and its compressor's state first
            out[f"{prefix}.indexer.k_cache"] = make(MLAAttentionSpec, block_size=256, num_kv_heads=1, max_tp_shards=1,
                                                    head_size=index + index // 128 * 4, dtype=torch.uint8,
                                                    tokens_per_state=4, alignment=576)
            out[f"{prefix}.indexer.compressor.state_cache"] = state(4, index)
        out[f"{prefix}.swa_cache"] = make(SlidingWindowMLASpec, block_size=64, sliding_window=config["sliding_window"],
                                          block_stride_alignment=None, **fp8_ds_mla)
        if ratio > 1:
            out[prefix] = make(MLAAttentionSpec, block_size=256, tokens_per_state=ratio, **fp8_ds_mla)
            out[f"{prefix}.compressor.state_cache"] = state(ratio, config["head_dim"])
    return out


def plan(config: dict, mtp: int, memory: int, max_len: int, mnbt: int, in_flight: int | None, tokens: int = 0):
    """vLLM's (blocks, tokens, concurrency, start check passed, groups) for one case. tokens: the draft tokens,
    whose multi-module MTP retained tokens tag every SlidingWindowMLASpec (windows and compressor states), as
    get_kv_cache_configs / get_global_kv_cache_groups does before grouping (config/speculative.py gives the draft
    config model_type deepseek_mtp and n_predict = num_nextn_predict_layers)."""
    cfg = vllm_config(max_len, layout="BLHNC", mnbt=mnbt, in_flight=in_flight)
    registered = specs(config, mtp)
    n = config["num_nextn_predict_layers"]
    kept = mtp_retained_tokens(dict(model_type="deepseek_mtp", n_predict=n, num_nextn_predict_layers=n),
                               tokens) if mtp and tokens else 0
    if kept:
        registered = {k: dataclasses.replace(v, extra_retained_tokens=kept) if isinstance(v, SlidingWindowMLASpec)
                      else v for k, v in registered.items()}
    groups = planning.get_kv_cache_groups(cfg, dict(registered))
    kv = planning.get_kv_cache_config_from_groups(cfg, groups, memory)
    tokens, concurrency = capacity(cfg, kv, max_len)
    return kv.num_blocks, tokens, concurrency, start_check(cfg, registered, groups, memory), groups


def grid(release: str) -> None:
    """kvplan's DeepSeek-V4 pool against this release's planner: Flash and Pro, with and without the MTP
    layer, 7.01 / 10 / 40 GiB, 8K / 128K / 1M, 2,048 / 8,192 batched tokens."""
    from kvplan.configs.build import build_model
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_pool import in_flight_tokens
    from kvplan.engines.vllm_rules import resolve
    from kvplan.sources import load_model

    rules = resolve(release)[0]

    def compare(label: str, config: dict, model, mtp: int, tokens: int) -> None:
        """Every memory, length and batched-token case of one model and draft, tallied; prints those that differ."""
        for gib, max_len, mnbt in itertools.product((7.01, 10, 40), (8192, 131072, 1048576), (2048, 8192)):
            memory = int(gib * GIB)
            blocks, got_tokens, _, fits, _ = plan(config, mtp, memory, max_len, mnbt,
                                                  in_flight_tokens(rules, mnbt, 1), tokens)
            pool = simulate(model, kv_memory_bytes=memory, max_model_len=max_len, max_num_batched_tokens=mnbt,
                            rules=rules, draft_layers=mtp, num_speculative_tokens=tokens,
                            allow_long_max_model_len=True)
            theirs, ours = (blocks, got_tokens, fits), (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits)
            tally[theirs == ours] += 1
            if theirs != ours:
                print(f"DIFFER vLLM {release} {label} {gib} GiB {max_len} mnbt {mnbt}: vLLM {theirs}, kvplan {ours}")

    tally = {True: 0, False: 0}
    for name in ("flash", "pro"):
        config = json.loads((ROOT / "model_specs" / f"deepseek-v4-{name}.json").read_text())
        model = load_model(f"deepseek-v4-{name}")
        for mtp in (0, 1):
            compare(f"{name} mtp {mtp}", config, model, mtp, 0)
    print(f"vLLM {release} DeepSeek-V4 grid: {tally[True]} agree, {tally[False]} differ")
    # Flash with two MTP layers (constructed: the published config has one), 1 / 2 / 4 draft tokens: from 0.28 two
    # or more draft tokens make it multi-module MTP, every window and compressor state keeping tokens - 1 more
    config = json.loads((ROOT / "model_specs" / "deepseek-v4-flash.json").read_text())
    config.update(num_nextn_predict_layers=2, compress_ratios=config["compress_ratios"] + [0])
    model = build_model(config, "deepseek-v4-flash-2mtp")
    tally = {True: 0, False: 0}
    for tokens in (1, 2, 4):
        compare(f"flash-2mtp tokens {tokens}", config, model, 2, tokens)
    print(f"vLLM {release} DeepSeek-V4-Flash, 2 MTP layers, 1/2/4 draft tokens: {tally[True]} agree, "
          f"{tally[False]} differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="flash", choices=("flash", "pro"))
    parser.add_argument("--mtp", type=int, default=0, help="MTP draft layers served (speculative decoding)")
    parser.add_argument("--mnbt", type=int, default=8192, help="max_num_batched_tokens")
    parser.add_argument("--in-flight", type=int, default=None,
                        help="max_in_flight_tokens (default two batches, async scheduling; releases from 0.26)")
    parser.add_argument("--case", action="append", default=[], metavar="GIB:MAX_MODEL_LEN",
                        help="available KV memory and max_model_len (default: the three test cases)")
    parser.add_argument("--grid", metavar="RELEASE", help="compare kvplan with this release's planner on a grid")
    args = parser.parse_args()
    if args.grid:
        grid(args.grid)
        return
    config = json.loads((ROOT / "model_specs" / f"deepseek-v4-{args.name}.json").read_text())
    cases = [(float(c.split(":")[0]), int(c.split(":")[1])) for c in args.case] or CASES
    for gib, max_len in cases:
        blocks, tokens, concurrency, fits, groups = plan(config, args.mtp, int(gib * GIB), max_len, args.mnbt,
                                                         args.in_flight)
        layout = [(type(g.kv_cache_spec).__name__, len(g.layer_names), g.kv_cache_spec.page_size_bytes) for g in groups]
        print(f"deepseek-v4-{args.name} at {gib} GiB, max_model_len {max_len:,}: {blocks:,} blocks, "
              f"{tokens:,} tokens, {concurrency:.4f}x, fits {fits}; groups {layout}")


if __name__ == "__main__":
    main()
