"""What speculative decoding costs vLLM's KV pool, per bundled model with an MTP draft (no GPU, no vLLM).

For each model: vLLM's blocks, tokens and concurrency without a draft, with its MTP layers (one draft
token a layer, vLLM's default) and with 3 draft tokens, at one memory and length, under the newest rules
or a given release. The figures come from kvplan.engines.vllm.simulate; docs/engines.md quotes them.

    .venv/bin/python benchmarks/vllm_speculative_costs.py [--gib 40] [--len 131072] [--version 0.33]
"""

from __future__ import annotations

import argparse

from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_rules import resolve
from kvplan.engines.vllm_speculative import draft_layer_count
from kvplan.errors import KvplanError
from kvplan.sources import bundled_index, load_model

GIB = 2**30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=40.0, help="KV memory per GPU, GiB")
    parser.add_argument("--len", type=int, default=131072, dest="max_len", help="max_model_len")
    parser.add_argument("--version", default="latest", help="vLLM release whose rules apply")
    args = parser.parse_args()
    rules, _ = resolve(args.version)
    memory = int(args.gib * GIB)
    print(f"vLLM {rules.version}, {args.gib:g} GiB per GPU, max_model_len {args.max_len:,}")
    print(f"{'model':<22} {'draft':>5} {'blocks':>8} {'tokens':>11} {'conc.':>7} {'blocks vs none':>15}")
    for name in sorted(bundled_index()):
        try:
            model = load_model(name)
            layers = draft_layer_count(model)
        except KvplanError:
            continue
        rows = [("none", 0, 0), ("mtp", layers, layers), ("mtp+3", layers, 3)]
        base = None
        for label, drafts, tokens in rows:
            try:
                pool = simulate(model, kv_memory_bytes=memory, max_model_len=args.max_len, rules=rules,
                                draft_layers=drafts, num_speculative_tokens=tokens, allow_long_max_model_len=True)
            except KvplanError as exc:
                print(f"{name:<22} {label:>5} refused: {exc.message[:70]}")
                break
            base = base or pool.num_blocks
            change = f"{100 * (pool.num_blocks / base - 1):+.1f}%"
            print(f"{name:<22} {label:>5} {pool.num_blocks:>8,} {pool.gpu_kv_cache_tokens:>11,} "
                  f"{pool.max_concurrency:>7.2f} {change:>15}")


if __name__ == "__main__":
    main()
