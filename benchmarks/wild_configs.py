"""Run `kvplan estimate` (plain, then --gpu h100 with --engine vllm and --engine sglang) on every config.json of
a folder, and print one line per file: the reading, K/V bytes per token, the parameter count, the weights as kvplan
sizes them, and each engine's outcome (a refusal's line, or "ok"). With --meta, the parameter count transformers
builds on the meta device is printed beside kvplan's (transformers and torch needed; a type transformers lacks says
so). For a sweep of real Hub configs (docs/models.md, "Real configs from the Hub"):

    $REPO/.venv/bin/python $REPO/benchmarks/wild_configs.py FOLDER [--meta]

FOLDER holds NAME.json files, or NAME/config.json folders (with the checkpoint's hf_quant_config.json or
quantize_config.json beside it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def _estimate(path: Path, *extra: str) -> tuple[dict | None, str]:
    out = subprocess.run([sys.executable, "-m", "kvplan", "estimate", str(path), "--format", "json", *extra],
                         capture_output=True, text=True)
    if out.returncode:
        lines = out.stderr.strip().splitlines() or ["(no message)"]
        return None, ("CRASH " if "Traceback" in out.stderr else "refused: ") + lines[-1].removeprefix("kvplan: error: ")
    return json.loads(out.stdout), "ok"


def _meta_params(path: Path) -> str:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    raw = {k: v for k, v in json.loads(path.read_text()).items()
           if k not in ("quantization_config", "quantization", "auto_map")}
    try:
        config = AutoConfig.for_model(**raw)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except Exception as exc:  # transformers has no class for it, or cannot build it
        return f"transformers: {type(exc).__name__}"
    return f"transformers {sum(p.numel() for p in model.parameters()):,}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--meta", action="store_true", help="also count the parameters with transformers (meta device)")
    args = ap.parse_args()
    # FOLDER/NAME.json, or FOLDER/NAME/config.json where a checkpoint's side files (hf_quant_config.json,
    # quantize_config.json) sit beside it, as kvplan reads them for a config.json (kvplan/sources.py)
    paths = sorted([*args.folder.glob("*.json"), *args.folder.glob("*/config.json")])
    for path in paths:
        d, outcome = _estimate(path)
        line = f"{path.parent.name if path.name == 'config.json' else path.stem}: "
        if d is None:
            line += outcome
        else:
            m = d["model"]
            weights = "no figure" if m["weight_bytes"] is None else f"{m['weight_bytes'] / 1e9:.2f} GB"
            line += (f"{m.get('reading', 'exact')}, {d['bytes_per_token']:,} B/token, {m['param_count']:,} parameters, "
                     f"weights {weights} ({m['weights']['quantization']})")
            if args.meta:
                line += f", {_meta_params(path)}"
        for engine in ("vllm", "sglang"):
            line += f"; {engine}: {_estimate(path, '--gpu', 'h100', '--engine', engine)[1]}"
        print(line)


if __name__ == "__main__":
    main()
