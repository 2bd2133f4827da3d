"""What speculative decoding costs vLLM's KV pool, per bundled model with an MTP draft (no GPU, no vLLM).

For each model: vLLM's blocks, tokens and concurrency without a draft, with its MTP layers (one draft
token a layer, vLLM's default) and with 3 draft tokens, at one memory and length, under the newest rules
or a given release. The figures come from kvplan.engines.vllm.simulate; docs/engines.md quotes them.

With --gpu the KV memory is not fixed but predicted from the GPU as vLLM's profile finds it
(kvplan.engines.vllm_profile, the bundled weights), so the MTP rows also lose the drafter's weights
(kvplan.engines.vllm_draft_weights): the table then adds the drafter per GPU and the available memory.

    .venv/bin/python benchmarks/vllm_speculative_costs.py [--gib 40] [--len 131072] [--version 0.33]
    .venv/bin/python benchmarks/vllm_speculative_costs.py --gpu h200 --tp 8 [--version 0.15]
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
    parser.add_argument("--gpu", help="predict the KV memory on this catalog GPU instead of --gib")
    parser.add_argument("--tp", type=int, default=1, help="tensor parallel size (with --gpu)")
    args = parser.parse_args()
    rules, _ = resolve(args.version)
    memory = int(args.gib * GIB)
    where = f"{args.gpu} x {args.tp} (predicted)" if args.gpu else f"{args.gib:g} GiB per GPU"
    print(f"vLLM {rules.version}, {where}, max_model_len {args.max_len:,}")
    print(f"{'model':<22} {'draft':>5} {'blocks':>8} {'tokens':>11} {'conc.':>7} {'blocks vs none':>15}"
          + (f" {'drafter GiB':>11} {'KV GiB':>7}" if args.gpu else ""))
    for name in sorted(bundled_index()):
        try:
            model = load_model(name)
            layers = draft_layer_count(model)
        except KvplanError:
            continue
        rows = [("none", 0, 0), ("mtp", layers, layers), ("mtp+3", layers, 3)]
        base = None
        for label, drafts, tokens in rows:
            extra = ""
            try:
                if args.gpu:
                    memory, drafter = predicted(model, args.gpu, args.tp, rules, drafts)
                    shown = "-" if drafter is None else f"{drafter / GIB:.2f}"  # "-": not modelled
                    extra = f" {shown:>11} {memory / GIB:>7.2f}"
                pool = simulate(model, kv_memory_bytes=memory, max_model_len=args.max_len, rules=rules,
                                draft_layers=drafts, num_speculative_tokens=tokens, allow_long_max_model_len=True)
            except KvplanError as exc:
                print(f"{name:<22} {label:>5} refused: {exc.message[:70]}")
                break
            base = base or pool.num_blocks
            change = f"{100 * (pool.num_blocks / base - 1):+.1f}%"
            print(f"{name:<22} {label:>5} {pool.num_blocks:>8,} {pool.gpu_kv_cache_tokens:>11,} "
                  f"{pool.max_concurrency:>7.2f} {change:>15}{extra}")


def predicted(model, gpu: str, tp: int, rules, drafts: int) -> tuple[int, int | None]:
    """(available KV memory per GPU, the drafter's weights per GPU, None where not modelled) as vLLM's
    profile would find them."""
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.vllm_draft_weights import drafter_weights
    from kvplan.engines.vllm_profile import predict_available
    from kvplan.engines.vllm_load import checkpoint_weights

    card = lookup(gpu)
    record = checkpoint_weights(model)
    drafter = drafter_weights(model, record, draft_layers=drafts, tp=tp, release=rules.version)
    est = predict_available(model, total_bytes=card.usable_bytes,
                            gpu_memory_utilization=rules.gpu_memory_utilization, tp=tp,
                            max_num_batched_tokens=rules.max_num_batched_tokens(card.memory_bytes, card.name),
                            weights=record, version=rules.version, gpu=card.name,
                            max_num_seqs=rules.max_num_seqs(card.memory_bytes, card.name), drafter=drafter)
    if est.pool_bytes <= 0:
        raise KvplanError(f"no KV memory on {card.name} x {tp}")
    return est.pool_bytes, drafter.bytes_per_gpu if drafter else 0


if __name__ == "__main__":
    main()
