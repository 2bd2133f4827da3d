"""Time to read a 100-shard checkpoint's safetensors headers from the loopback
Hub (tests/hub_server.py), and the number of range requests per shard.

Target (issue 13): under 2 s, at most one range request per shard. Prints
figures; asserts nothing.

    python benchmarks/bench_weights_hub.py [--shards 100] [--tensors 40] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def build(shards: int, tensors: int) -> dict[str, bytes]:
    """Shards holding `tensors` small tensors each (headers of a few KB, like a real shard's)."""
    import numpy as np
    from safetensors.numpy import save

    files, weight_map = {}, {}
    for s in range(shards):
        part = {f"model.layers.{s}.mlp.experts.{k}.up_proj.weight": np.zeros((8, 8), np.float16) for k in range(tensors)}
        name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        files[name] = save(part)
        weight_map.update({t: name for t in part})
    files["model.safetensors.index.json"] = json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}).encode()
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--tensors", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from hub_server import HubServer

    config = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}
    with HubServer({"bench/many": config}, files={"bench/many": build(args.shards, args.tensors)}) as hub, \
            tempfile.TemporaryDirectory() as home:
        os.environ.update(HF_ENDPOINT=hub.url, HF_HOME=home, HF_HUB_DISABLE_TELEMETRY="1")
        os.environ.pop("HF_HUB_OFFLINE", None)
        from kvplan.weights.load import from_hub

        times = []
        for _ in range(args.runs):
            hub.ranges.clear()
            start = time.perf_counter()
            w = from_hub("bench/many", None, config)
            times.append(time.perf_counter() - start)
        per_shard: dict[str, int] = {}
        for path, _ in hub.ranges:
            per_shard[path] = per_shard.get(path, 0) + 1
    print(f"shards: {args.shards}, tensors per shard: {args.tensors}, tensors read: {w.tensors:,}, bytes: {w.total_bytes:,}")
    print(f"read the headers of {args.shards} shards: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s over {args.runs} runs (target < 2 s)")
    print(f"range requests per shard (last run): max {max(per_shard.values())}, shards hit {len(per_shard)}")


if __name__ == "__main__":
    main()
