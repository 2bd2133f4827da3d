"""Run vLLM's own KV cache planner (no GPU) on the specs some models register; print groups, blocks, tokens.

kvplan models vLLM from its source; this script asks vLLM itself, for the figures
tests/test_vllm_oracle.py and tests/test_minimax_m3.py assert. It needs an unpacked vLLM sdist
and vLLM's pure-Python imports, none of which kvplan depends on:

    # unpack vllm-0.33.0.tar.gz (the sdist on PyPI) into /tmp/vsd, then:
    pip install --target /tmp/vdeps pydantic msgspec cachetools cloudpickle psutil pyzmq prometheus_client cbor2 \\
        aiohttp openai-harmony openai pybase64 uvloop py-cpuinfo xgrammar fastapi partial-json-parser llguidance
    PYTHONPATH=/tmp/vsd/vllm-0.33.0:/tmp/vdeps .venv/bin/python benchmarks/vllm_oracle.py

With `--kimi-k3 RELEASE` (0.33 or 0.34, the sdist on the path) it compares kvplan's Kimi K3 pool under that
release's rules with the planner instead (kimi_k3_grid; 0.34.0 needs einops and apache-tvm-ffi as well).

The specs are what the layers register in 0.33.0: FullAttentionSpec / SlidingWindowSpec (block 16, KV heads,
head size, bf16, the window) for Llama-3.1-8B, gpt-oss-20b (sliding 128 on even layers) and Gemma-3-12B
(sliding 1024, every 6th layer full); for MiniMax-M3 (models/minimax_m3/nvidia/model.py, common/indexer.py)
FullAttentionSpec(block 128, KV heads per rank, 128 + 128) on each of the 60 layers and, on the 57 sparse ones,
MLAAttentionSpec(block 128, one head of 128, bf16, the INDEXER role). The scheduler settings are `vllm serve`'s
on an H100: 8,192 batched tokens, two batches in flight (async scheduling).
"""

from __future__ import annotations

import torch
import vllm.v1.core.kv_cache_planning as planning
from vllm.v1.core.kv_cache_utils import get_kv_cache_capacity
from vllm.model_executor.layers.mamba.mamba_utils import MambaStateDtypeCalculator, MambaStateShapeCalculator
from vllm.v1.attention.backends.registry import MambaAttentionBackendEnum
from vllm.v1.kv_cache_interface import (FullAttentionSpec, MambaSpec, MLAAttentionSpec, SlidingWindowSpec,
                                        SparseCacheRole)

from vllm_stub_config import vllm_config  # this folder

GIB = 2**30


def minimax_m3(kv_dtype: torch.dtype, heads: int) -> dict:
    out = {}
    for i in range(60):
        out[f"model.layers.{i}.self_attn.attn"] = FullAttentionSpec(
            block_size=128, num_kv_heads=heads, head_size=128, head_size_v=128, dtype=kv_dtype)
        if i >= 3:
            out[f"model.layers.{i}.self_attn.indexer.k_cache"] = MLAAttentionSpec(
                block_size=128, num_kv_heads=1, head_size=128, dtype=torch.bfloat16, cache_role=SparseCacheRole.INDEXER)
    return out


def dense_and_sliding() -> dict[str, dict]:
    bf16 = torch.bfloat16

    def full(heads, dim):
        return FullAttentionSpec(block_size=16, num_kv_heads=heads, head_size=dim, dtype=bf16)

    def sliding(heads, dim, window):
        return SlidingWindowSpec(block_size=16, num_kv_heads=heads, head_size=dim, dtype=bf16, sliding_window=window)

    return {
        "llama-3.1-8b": {f"l{i}": full(8, 128) for i in range(32)},
        "gpt-oss-20b": {f"l{i}": sliding(8, 64, 128) if i % 2 == 0 else full(8, 64) for i in range(24)},
        "gemma-3-12b": {f"l{i}": full(8, 256) if i % 6 == 5 else sliding(8, 256, 1024) for i in range(48)},
    }


def latent_and_hybrid() -> dict[str, dict]:
    """DeepSeek-V3 (bf16 latent of 576, block 16), V3.2 (bf16 latent + 132-byte fp8 indexer keys, block 64) and
    Qwen3-Next-80B (36 Gated DeltaNet layers and every 4th full, block 576, the state page padded to the attention
    page and one prefill checkpoint page: kvplan's inputs, so this checks the grouping and counting only)."""
    bf16 = torch.bfloat16
    v32 = {}
    for i in range(61):
        v32[f"l{i}.attn"] = MLAAttentionSpec(block_size=64, num_kv_heads=1, head_size=576, dtype=bf16)
        v32[f"l{i}.indexer"] = MLAAttentionSpec(block_size=64, num_kv_heads=1, head_size=132, dtype=torch.uint8)
    gdn = dict(block_size=576, shapes=((8192, 3), (32, 128, 128)), dtypes=(bf16, bf16), page_size_padded=1179648,
               mamba_type=MambaAttentionBackendEnum.GDN_ATTN, mamba_cache_mode="align", num_prefill_checkpoint_blocks=1)
    # Kimi K3: 93 layers, MLA (576, bf16) on the 24 of full_attn_layers (1-based 4, 8, ..., 92, 93), KDA on the
    # rest; kvplan's block (5,760: the MLA page holds a KDA state of 6,512,640 B) and padded page; under FlashKDA
    # the KDA MambaSpec keeps one prefill checkpoint page (models/kimi_k3/nvidia/kda.py get_kv_cache_spec). The
    # state shapes and dtypes are vLLM's own (kda.py get_state_shape / get_state_dtype call these calculators with
    # linear_attn_config's num_heads 96, head_dim 128, short_conv_kernel_size 4): a conv state over q, k and v,
    # 3 x 96 x 128 = 36,864 channels by 3 columns, and a float32 recurrent state of 96 x 128 x 128
    full = {i - 1 for i in list(range(4, 93, 4)) + [93]}
    kda = dict(block_size=5760, shapes=MambaStateShapeCalculator.kda_state_shape(1, 96, 128, conv_kernel_size=4),
               dtypes=MambaStateDtypeCalculator.kda_state_dtype(bf16, "auto", "auto"),
               page_size_padded=6_635_520, mamba_type=MambaAttentionBackendEnum.GDN_ATTN, mamba_cache_mode="align",
               num_prefill_checkpoint_blocks=1)
    return {
        "kimi-k3 (flashkda)": {f"l{i}": MLAAttentionSpec(block_size=5760, num_kv_heads=1, head_size=576, dtype=bf16)
                               if i in full else MambaSpec(**kda) for i in range(93)},
        "deepseek-v3": {f"l{i}": MLAAttentionSpec(block_size=16, num_kv_heads=1, head_size=576, dtype=bf16)
                        for i in range(61)},
        "deepseek-v3.2-exp": v32,
        "qwen3-next-80b-a3b": {f"l{i}": FullAttentionSpec(block_size=576, num_kv_heads=2, head_size=256, dtype=bf16)
                               if i % 4 == 3 else MambaSpec(**gdn) for i in range(48)},
    }


def dory() -> dict:
    """Dory (transformers 5.25's default config, tests/data/configs/transformers-5.25-defaults.json): vLLM 0.33's
    model_executor/models/dory.py builds one Attention per attention block and, in per_loop mode, one more per
    loop of a recurrent block (named after block loop x num_hidden_layers + i): 56 specs, sliding 1,024 or full,
    4 KV heads x 256."""
    import json
    from pathlib import Path

    config = json.loads((Path(__file__).resolve().parents[1] / "tests" / "data" / "configs"
                         / "transformers-5.25-defaults.json").read_text())["dory"]
    types, first, count = config["layer_types"], config["n_input_layers"], config["n_recurrent_layers"]
    out = {}
    for i, kind in enumerate(types):
        if kind == "mlp":
            continue
        spec = (SlidingWindowSpec(block_size=16, num_kv_heads=4, head_size=256, dtype=torch.bfloat16,
                                  sliding_window=config["sliding_window"]) if kind == "sliding_attention" else
                FullAttentionSpec(block_size=16, num_kv_heads=4, head_size=256, dtype=torch.bfloat16))
        out[f"backbone.layers.{i}.mixer.attn"] = spec
        if first <= i < first + count:
            for loop in range(1, config["n_recurrent_loops"]):
                out[f"backbone.layers.{loop * len(types) + i}.mixer.attn"] = spec
    return out


def iquest_loop() -> dict:
    """IQuest-Coder-V1-40B-Loop (tests/data/configs/iquest-coder-v1-40b-loop.json): vLLM 0.33's iquest_loopcoder.py
    builds per layer loop 0's Attention (full) and loop 1's (named layer 80 + i, a 64-token sliding window)."""
    out = {}
    for i in range(80):
        out[f"model.layers.{i}.self_attn.attn"] = FullAttentionSpec(block_size=16, num_kv_heads=8, head_size=128,
                                                                    dtype=torch.bfloat16)
        out[f"model.layers.{80 + i}.self_attn.attn"] = SlidingWindowSpec(
            block_size=16, num_kv_heads=8, head_size=128, dtype=torch.bfloat16, sliding_window=64)
    return out


def report(label: str, specs: dict, memory_gib: int, max_model_len: int) -> None:
    cfg = vllm_config(max_model_len)
    groups = planning.get_kv_cache_groups(cfg, specs)
    kv = planning.get_kv_cache_config_from_groups(cfg, groups, memory_gib * GIB)
    tokens, concurrency = get_kv_cache_capacity(cfg, kv)
    kinds = [f"{type(g.kv_cache_spec).__name__} x {len(g.layer_names)}" for g in groups]
    print(f"{label} at {memory_gib} GiB, max_model_len {max_model_len:,}: {kinds}, {kv.num_blocks:,} blocks, "
          f"{tokens:,} tokens, {concurrency:.4f}x")


def kimi_k3_grid(release: str) -> None:
    """kvplan's Kimi K3 pool (tests/data/configs/kimi-k3.json, --engine vllm@RELEASE) against this release's
    planner on latent_and_hybrid()'s specs: with FlashKDA's prefill-checkpoint page (h200, b200) and without it
    (the Triton prefill: a100-80gb), 10 / 40 GiB, 32K / 128K. The block (5,760) and the padded page are kvplan's
    inputs: the grid checks the grouping and the counting of the release on the path; the KDA state a page holds
    is checked apart, vLLM's calculators' bytes against kvplan's (a mismatch exits 1)."""
    import dataclasses
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from kvplan.configs.build import build_model
    from kvplan.engines.vllm import simulate
    from kvplan.engines.vllm_rules import resolve

    from kvplan.core.estimate import estimate

    model = build_model(json.loads((root / "tests/data/configs/kimi-k3.json").read_text()), "kimi-k3.json")
    base = latent_and_hybrid()["kimi-k3 (flashkda)"]
    # the state a KDA page holds, vLLM's (its calculators' shapes and dtypes) against kvplan's: the padded page
    # (kvplan's input) decides the counting, so this is the check of the state itself
    kda_specs = [spec for spec in base.values() if isinstance(spec, MambaSpec)]
    theirs = kda_specs[0].state_content_size_bytes
    ours = estimate(model, 1).state_bytes_per_sequence // len(kda_specs)
    print(f"KDA state a layer: vLLM {release} {theirs:,} B {[tuple(s) for s in kda_specs[0].shapes]}, kvplan {ours:,} B"
          f" ({'agree' if theirs == ours else 'DIFFER'})")
    agree = differ = 0
    for gpu, checkpoints in (("h200", 1), ("b200", 1), ("a100-80gb", 0)):
        specs = {k: dataclasses.replace(v, num_prefill_checkpoint_blocks=checkpoints) if isinstance(v, MambaSpec)
                 else v for k, v in base.items()}
        for gib, max_len in ((10, 32768), (40, 32768), (10, 131072), (40, 131072)):
            cfg = vllm_config(max_len)
            groups = planning.get_kv_cache_groups(cfg, specs)
            kv = planning.get_kv_cache_config_from_groups(cfg, groups, gib * GIB)
            tokens, _ = get_kv_cache_capacity(cfg, kv)
            pool = simulate(model, kv_memory_bytes=gib * GIB, max_model_len=max_len, gpu=gpu,
                            rules=resolve(release)[0])
            if (kv.num_blocks, tokens) == (pool.num_blocks, pool.gpu_kv_cache_tokens):
                agree += 1
            else:
                differ += 1
                print(f"DIFFER {gpu} {gib} GiB {max_len}: vLLM {(kv.num_blocks, tokens)}, kvplan "
                      f"{(pool.num_blocks, pool.gpu_kv_cache_tokens)}")
    print(f"vLLM {release} Kimi K3 grid: {agree} agree, {differ} differ")
    if theirs != ours:
        raise SystemExit(1)


def main() -> None:
    import sys

    if sys.argv[1:2] == ["--kimi-k3"]:  # --kimi-k3 RELEASE: kvplan's Kimi K3 pool against the planner on the path
        kimi_k3_grid(sys.argv[2])
        return
    for name, layers in {**dense_and_sliding(), **latent_and_hybrid()}.items():
        report(name, layers, 10, 32768)
    for label, dtype, heads in (("minimax-m3 auto, tp 1", torch.bfloat16, 4),
                                ("minimax-m3 fp8, tp 1", torch.float8_e4m3fn, 4),
                                ("minimax-m3 auto, tp 4", torch.bfloat16, 1)):
        report(label, minimax_m3(dtype, heads), 40, 131072)
    for gib, max_len in ((10, 8192), (40, 131072)):
        report("dory (per_loop, 2 loops)", dory(), gib, max_len)
        report("iquest-coder-v1-40b-loop", iquest_loop(), gib, max_len)


if __name__ == "__main__":
    main()
