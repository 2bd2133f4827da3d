"""kvplan's vLLM model against vLLM's own planner, release by release (no GPU).

For each bundled model and release, kvplan's engine model gives the caches vLLM
registers (kind, block size, bytes per token or state page, window). This script
turns them into vLLM's own spec classes (FullAttentionSpec, SlidingWindowSpec,
ChunkedLocalAttentionSpec, MLAAttentionSpec, MambaSpec) with the same page bytes,
runs that release's get_kv_cache_groups and get_kv_cache_config_from_groups, and
compares groups, blocks and tokens. The block sizes, page paddings and state pages
are kvplan's: what this checks is the grouping and the counting of each release.

    PYTHONPATH=/tmp/vsd_full/vllm-0.26.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle_versions.py 0.26

(see benchmarks/vllm_oracle.py for the packages vLLM's planner imports; releases before 0.20
import a few more: diskcache, blake3, setproctitle, mistral-common, pydantic-extra-types,
pycountry, tiktoken, regex, installed with pip install --no-deps --target). Prints one
line per model and "agree" or the first difference. With --grid it runs issue 14's grid
instead (every bundled model, TP 1/2/4/8, auto/fp8, 10/40 GiB, 8K/128K) and prints the
cases that differ and a count. The start check (`fits`) is compared too: the memory test
each release's get_kv_cache_configs runs (vllm_stub_config.start_check). With --mtp only the
models with an MTP draft kvplan models run, their draft layers in the pool (kvplan.engines.vllm_speculative;
the draft's layer names follow the target's, as the drafter registers them); --spec-tokens K adds K draft
tokens (the state layers' MambaSpec.num_speculative_blocks, where the release has it). --draft CONFIG
(with --grid, without --mtp) puts a separate draft checkpoint's layers (an EAGLE head, a small LLM) on every
model, with --spec-tokens K draft tokens.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import itertools
import sys

import torch

from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve
from kvplan.sources import load_model

from vllm_stub_config import capacity, planner, start_check, vllm_config  # this folder

GIB = 2**30
MODELS = ("llama-3.1-8b", "gpt-oss-20b", "gemma-3-12b", "deepseek-v3", "deepseek-v3.2-exp", "qwen3-next-80b-a3b",
          "llama-4-scout", "mistral-7b-v0.1")


def vllm_specs(pool, iface):
    """One vLLM spec per kvplan page spec, uint8 elements sized to kvplan's bytes."""
    out = {}
    u8 = torch.uint8
    for i, spec in enumerate(pool.layer_specs):
        block = spec.block_tokens
        if spec.kind in ("full", "sliding", "chunked"):
            half = spec.token_bytes // 2
            common = dict(block_size=block, num_kv_heads=1, head_size=half, dtype=u8)
            if spec.padded_page_bytes is not None:
                common["page_size_padded"] = spec.padded_page_bytes
            if spec.kind == "full":
                out[f"l{i}"] = iface.FullAttentionSpec(**common)
            elif spec.kind == "sliding":
                out[f"l{i}"] = iface.SlidingWindowSpec(sliding_window=spec.window_tokens, **common)
            else:
                out[f"l{i}"] = iface.ChunkedLocalAttentionSpec(attention_chunk_size=spec.window_tokens, **common)
        elif spec.kind in ("mla", "indexer"):
            # MLAAttention's spec names the KV dtype (cache_dtype_str); the V3.2 indexer's names none, so the two
            # never merge into one uniform spec (releases before 0.33 compare nothing else when merging)
            dtype_str = pool.kv_cache_dtype if spec.kind == "mla" else None
            out[f"l{i}"] = iface.MLAAttentionSpec(block_size=block, num_kv_heads=1, head_size=spec.token_bytes, dtype=u8,
                                                  cache_dtype_str=dtype_str)
        elif spec.kind == "mamba":
            fields = dict(block_size=block, shapes=((spec.state_bytes,),), dtypes=(u8,),
                          page_size_padded=spec.page_bytes)
            names = {f.name for f in dataclasses.fields(iface.MambaSpec)}
            own = spec.state_pages - spec.speculative_pages  # the pages without the draft tokens'
            if "mamba_cache_mode" in names:
                fields["mamba_cache_mode"] = "align" if own > 1 else "none"
            if "num_prefill_checkpoint_blocks" in names and own > 2:
                fields["num_prefill_checkpoint_blocks"] = own - 2
            if spec.speculative_pages:
                fields["num_speculative_blocks"] = spec.speculative_pages
            out[f"l{i}"] = iface.MambaSpec(**fields)
        else:
            raise SystemExit(f"no vLLM spec for kvplan kind {spec.kind!r}")
    return out


def draft_count(model) -> int:
    """The MTP layers vLLM's drafter registers for `model` (0: no MTP draft kvplan models; DeepSeek-V4 has its
    own oracle, vllm_oracle_dsv4.py)."""
    from kvplan.engines.vllm_family_rules import is_deepseek_v4
    from kvplan.engines.vllm_speculative import draft_layer_count
    from kvplan.errors import UsageError

    if is_deepseek_v4(model):
        return 0
    try:
        return draft_layer_count(model)
    except UsageError:
        return 0


def raw_pool(model, rules, **kwargs):
    """The pool whose specs the model runner registers when vLLM turns the hybrid manager off for chunked local
    attention (before 0.14): the chunked layers as chunked (vLLM sizes them as full only after its start check,
    in unify_hybrid_kv_cache_specs); None when the manager stays on."""
    pool = simulate(model, rules=rules, **kwargs)
    if rules.chunked_hybrid_manager or not any("turns the hybrid KV cache manager off" in n for n in pool.notes):
        return pool, None
    return pool, simulate(model, rules=dataclasses.replace(rules, chunked_hybrid_manager=True), **kwargs)


def compare(pool, rules, iface, planning, memory: int, max_model_len: int, raw=None):
    """(vLLM's (groups, layers per group, blocks, tokens, start check), kvplan's) for one pool; raw: the
    registered specs when they differ from the pool's (raw_pool)."""
    mamba = [s for s in pool.layer_specs if s.kind == "mamba"]
    cfg = vllm_config(max_model_len, mnbt=pool.max_num_batched_tokens, in_flight=pool.in_flight_tokens,
                      mamba_align=bool(mamba and mamba[0].state_pages - mamba[0].speculative_pages > 1),
                      hybrid_manager=raw is None)
    specs = vllm_specs(raw or pool, iface)
    registered = dict(specs)  # get_kv_cache_groups unifies the dict in place when the hybrid manager is off
    groups = planning.get_kv_cache_groups(cfg, specs)
    if "kv_cache_specs" in inspect.signature(planning.get_kv_cache_config_from_groups).parameters:  # 0.11.x
        kv = planning.get_kv_cache_config_from_groups(cfg, groups, specs, memory)
    else:
        kv = planning.get_kv_cache_config_from_groups(cfg, groups, memory)
    tokens = capacity(cfg, kv, max_model_len)[0]
    theirs = (len(groups), [len(g.layer_names) for g in groups], kv.num_blocks, tokens)
    ours = (len(pool.groups), [len(g.layers) for g in pool.groups], pool.num_blocks,
            pool.gpu_kv_cache_tokens if rules.tokens_from_concurrency else tokens)
    theirs += (start_check(cfg, registered, groups, memory),)
    # kvplan's fits also holds the Mamba decode-graph check (max_num_seqs <= blocks), which vLLM runs elsewhere
    ours += (pool.fits or "max_num_seqs" in (pool.refusal or ""),)
    return theirs, ours


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else "0.33"
    grid = "--grid" in sys.argv
    mtp = "--mtp" in sys.argv
    spec_tokens = int(sys.argv[sys.argv.index("--spec-tokens") + 1]) if "--spec-tokens" in sys.argv else 0
    draft = load_model(sys.argv[sys.argv.index("--draft") + 1]) if "--draft" in sys.argv else None
    rules, _ = resolve(version)
    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    planning = planner()[0]
    if not grid:
        for name in MODELS:
            model = load_model(name)
            drafts = draft_count(model) if mtp else 0
            if mtp and not drafts:
                continue
            pool, raw = raw_pool(model, rules, kv_memory_bytes=10 * GIB, max_model_len=32768, draft_layers=drafts,
                                num_speculative_tokens=spec_tokens if drafts else 0)
            theirs, ours = compare(pool, rules, iface, planning, 10 * GIB, 32768, raw)
            verdict = "agree" if theirs == ours else f"DIFFER: vLLM {theirs}, kvplan {ours}"
            print(f"vLLM {version} {name}: {theirs[2]:,} blocks, {theirs[3]:,} tokens: {verdict}")
        return
    # issue 14's grid: every bundled model, TP 1/2/4/8, auto/fp8, 10/40 GiB, 8K/128K
    from kvplan.errors import KvplanError
    from kvplan.sources import bundled_index
    from kvplan.workflows import apply_kv_dtype

    agree = differ = skipped = refused = 0
    for name in sorted(bundled_index()):
        try:
            base = load_model(name)
            models = {dtype: apply_kv_dtype(base, dtype)[0] for dtype in ("auto", "fp8")}
        except KvplanError:
            skipped += 32
            continue
        drafts = draft_count(base) if mtp else 0
        if mtp and not drafts:
            continue
        extra = {"draft_model": draft} if draft is not None else {}
        for tp, dtype, gib, max_len in itertools.product((1, 2, 4, 8), ("auto", "fp8"), (10, 40), (8192, 131072)):
            try:
                pool, raw = raw_pool(models[dtype], rules, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp,
                                     allow_long_max_model_len=True, draft_layers=drafts,
                                     num_speculative_tokens=spec_tokens if drafts or draft else 0, **extra)
                theirs, ours = compare(pool, rules, iface, planning, gib * GIB, max_len, raw)
            except (KvplanError, SystemExit):
                skipped += 1
                continue
            if theirs == ours:
                agree += 1
                refused += not ours[4]
            else:
                differ += 1
                print(f"DIFFER vLLM {version} {name} tp {tp} {dtype} {gib} GiB {max_len}: vLLM {theirs}, kvplan {ours}")
    checked = f"start check compared: {refused} of them refused"
    print(f"vLLM {version} grid: {agree} agree ({checked}), {differ} differ, "
          f"{skipped} not compared (kvplan refuses or cannot map)")


if __name__ == "__main__":
    main()
