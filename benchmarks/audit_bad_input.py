"""Audit every command's handling of bad option values, odd paths and the user's own files; print a table.

    python benchmarks/audit_bad_input.py            # the curated cases, then every option x BAD_VALUES
    python benchmarks/audit_bad_input.py --curated  # the curated cases only (about 100 runs)
    python benchmarks/audit_bad_input.py --show-ok  # also list what each command accepted from BAD_VALUES

What benchmarks/fuzz_configs.py does not reach: option values (negative, zero, huge, NaN, empty, malformed
technique specs), paths that are no file (a folder, a pipe, a sparse 8 GiB file, an empty, binary, UTF-16 or
BOM + CRLF file, a symlink loop), scenario YAML (alias bombs, plain size, wrong types), bench documents the gate
reads (malformed, empty, another schema version, NaN, negative figures), and every option that writes a file
(--out, --plot, --json, --csv, --update-baseline) aimed at a file of the user's.

Each run is `kvplan ARGV` in-process (tests/config_fuzz.run_argv: kvplan.cli.common.run, as the console script
runs it) in a scratch folder of user files, classified:
- crash: anything but a result (exit 0) or kvplan's own one-line error (exit 1/2): an internal error, a
  traceback, several error lines, or no answer within --limit seconds (a hang on a pipe is one);
- accepted: a curated case that must be refused ended with exit 0;
- changed: a user file in the scratch folder was overwritten, removed or left with a kvplan temp file.
Exit 1 when any run is a crash, accepted or changed. `bench` is left to its curated cases (an accepted value
would run the kernels).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import config_fuzz  # noqa: E402

LOG = ROOT / "tests" / "data" / "vllm_logs" / "v0191_qwen3_8b_a100_40gb_tokenkaki.log"
BASELINE = ROOT / "benchmarks" / "baseline-cpu.json"
SCENARIO = ROOT / "scenarios" / "agent-tool-loop.yaml"

# what each command needs before its options (fit kept to one GPU kind and count: a fast search)
REQUIRED = {"estimate": ["llama-3.1-8b"], "sweep": ["llama-3.1-8b", "-n", "2"],
            "compare": ["llama-3.1-8b", "qwen3-8b"], "fit": ["llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1"],
            "weights": ["llama-3.1-8b"], "calibrate": [str(LOG), "--model", "qwen3-8b"],
            "gate": [str(BASELINE), "--baseline", str(BASELINE)], "plan": ["agent-tool-loop"],
            "models": [], "techniques": [], "gpus": []}
BAD_VALUES = ("", " ", "-1", "0", "1.5", "1e30", "nan", "inf", "9" * 400, "abc", "-1GiB", "0GiB", "1k..0",
              "fp8:,", "\u0663", "../" * 3 + "nosuch", "=", "a=b=c", "h100=-1", "window:9999999999999,pattern=0:0",
              "x" * 5000)


def scratch_files(folder: Path) -> None:
    """The user's files the cases point at."""
    config = json.loads((ROOT / "model_specs" / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "bom-crlf.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(config, indent=1).replace("\n", "\r\n").encode())
    (folder / "utf16.json").write_bytes(json.dumps(config).encode("utf-16"))
    (folder / "empty.json").write_bytes(b"")
    (folder / "binary.json").write_bytes(bytes(range(256)) * 8)
    (folder / "notes.txt").write_text("the user's notes\n")
    (folder / "table.csv").write_text("the user's table\n")
    (folder / "chart.png").write_bytes(b"the user's chart")
    (folder / "bench.json").write_text("the user's bench run\n")
    (folder / "a-folder").mkdir()
    (folder / "model").mkdir()
    (folder / "model" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "model" / "figure.png").write_bytes(b"the model card's figure")
    (folder / "ckpt").mkdir()  # apart: a config's own folder is read for its checkpoint (--weights auto)
    for name in ("huge.json", "huge.log", "huge.yaml", "ckpt/huge.safetensors"):
        with open(folder / name, "wb") as fh:  # 8 GiB of hole: no disk used
            fh.truncate(8 * 1024**3)
    if hasattr(os, "mkfifo"):
        for name in ("pipe.json", "pipe.log", "pipe.yaml", "ckpt/pipe.safetensors"):
            os.mkfifo(folder / name)
        os.mkfifo(folder / "pipe.csv")
        os.symlink("pipe.json", folder / "pipe-link.csv")
    os.symlink("loop-b", folder / "loop-a")
    os.symlink("loop-a", folder / "loop-b")
    (folder / "utf16.log").write_bytes(LOG.read_text(encoding="utf-8").encode("utf-16"))
    scenario = SCENARIO.read_text(encoding="utf-8")
    yaml_cases = {
        "bomb.yaml": "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefg", "bcdefgh")),
        "recursive.yaml": "a: &a [*a]\n",
        "deep.yaml": "a: " + "[" * 5000 + "]" * 5000 + "\n",
        "keys.yaml": "".join(f"k{i}: {i}\n" for i in range(50_001)),
        "broken.yaml": "name: [unclosed\n",
        "list.yaml": "- 1\n- 2\n",
        "types.yaml": scenario.replace("concurrency: 48", "concurrency: [48]"),
        "nan.yaml": scenario.replace("max_kv_gib_per_gpu: 50", "max_kv_gib_per_gpu: .nan"),
        "python.yaml": scenario.replace("prompt_tokens: 14000", "prompt_tokens: !!python/object:os.system x"),
        "crlf.yaml": scenario.replace("\n", "\r\n"),
    }
    for name, text in yaml_cases.items():
        (folder / name).write_text(text, encoding="utf-8", newline="")
    doc = json.loads(BASELINE.read_text(encoding="utf-8"))
    edits = {"v99": lambda d: d.update(schema_version=99), "no-results": lambda d: d.update(results=[]),
             "nan": lambda d: d["results"][0].update(measured_bytes=float("nan")),
             "negative": lambda d: d["results"][0].update(error_rel=-1.0),
             "text-figure": lambda d: d["results"][0].update(measured_bytes="1048576"),
             "kind-list": lambda d: d["environment"].update(device_kind=["cuda"])}
    for name, edit in edits.items():
        edited = copy.deepcopy(doc)
        edit(edited)
        (folder / f"gate-{name}.json").write_text(json.dumps(edited), encoding="utf-8")
    (folder / "gate-cut.json").write_text(json.dumps(doc)[:300], encoding="utf-8")


# (argv, what must happen: "refuse" (exit 1 or 2, one line) or "ok"); paths are relative to the scratch folder
CURATED = [
    # option values
    (["estimate", "llama-3.1-8b", "--kv-memory", "-1GiB"], "refuse"),
    (["estimate", "llama-3.1-8b", "--kv-memory", ""], "refuse"),
    (["estimate", "llama-3.1-8b", "--gpu-memory", ""], "refuse"),
    (["estimate", "llama-3.1-8b", "--context", "0"], "refuse"),
    (["estimate", "llama-3.1-8b", "--context", "1e30"], "refuse"),
    (["estimate", "llama-3.1-8b", "--tp", "0"], "refuse"),
    (["estimate", "llama-3.1-8b", "--tp", "3"], "refuse"),
    (["estimate", "llama-3.1-8b", "--gpu", "h1000"], "refuse"),
    (["estimate", "llama-3.1-8b", "-t", "window:0"], "refuse"),
    (["estimate", "llama-3.1-8b", "-t", "int4:group=32,,"], "refuse"),
    (["estimate", "llama-3.1-8b", "-t", "evict:nan"], "refuse"),
    (["estimate", "llama-3.1-8b", "-t", "offload:cpu=-1GiB", "--gpu", "h100"], "refuse"),
    (["estimate", "llama-3.1-8b", "--engine", "vllm", "--gpu", "h100", "--max-num-seqs", "99999999999"], "refuse"),
    (["estimate", "llama-3.1-8b", "--gpu", "h100", "--reserve", "0GiB"], "ok"),
    (["estimate", "llama-3.1-8b", "--draft-model", "", "--engine", "vllm", "--gpu", "h100"], "refuse"),
    (["sweep", "llama-3.1-8b", "--context", "4k..1k"], "refuse"),
    (["fit", "llama-3.1-8b", "--price", "h100=nan"], "refuse"),
    (["calibrate", str(LOG), "--model", ""], "refuse"),
    (["calibrate", str(LOG), "--model", "qwen3-8b", "--as-version", ""], "refuse"),
    (["bench", "--device", "cpu", "-t", "fp8", "--context", ""], "refuse"),
    (["bench", "--device", "cpu", "-t", "fp8", "--repeats", "0"], "refuse"),
    (["gate", str(BASELINE), "--baseline", str(BASELINE), "--max-regression", "nan%"], "refuse"),
    # paths that are no file, or files that are no config / log / scenario
    (["estimate", "a-folder"], "refuse"),
    (["estimate", "pipe.json"], "refuse"),
    (["estimate", "huge.json"], "refuse"),
    (["estimate", "empty.json"], "refuse"),
    (["estimate", "binary.json"], "refuse"),
    (["estimate", "utf16.json"], "refuse"),
    (["estimate", "bom-crlf.json"], "ok"),
    (["estimate", "loop-a"], "refuse"),
    (["weights", "llama-3.1-8b", "--weights", "ckpt/pipe.safetensors"], "refuse"),
    (["weights", "llama-3.1-8b", "--weights", "ckpt/huge.safetensors"], "refuse"),
    (["weights", "llama-3.1-8b", "--weights", "loop-a"], "refuse"),
    (["weights", "llama-3.1-8b", "--weights", "empty.json"], "refuse"),
    (["calibrate", "pipe.log"], "refuse"),
    (["calibrate", "huge.log"], "refuse"),
    (["calibrate", "a-folder"], "refuse"),
    (["calibrate", "utf16.log", "--model", "qwen3-8b"], "ok"),
    (["plan", "pipe.yaml"], "refuse"),
    (["plan", "huge.yaml"], "refuse"),
    (["plan", "loop-a"], "refuse"),
    (["plan", "crlf.yaml"], "ok"),
    *[(["plan", name], "refuse") for name in ("bomb.yaml", "recursive.yaml", "deep.yaml", "keys.yaml", "broken.yaml",
                                             "list.yaml", "types.yaml", "nan.yaml", "python.yaml")],
    # bench documents
    *[(["gate", f"gate-{name}.json", "--baseline", str(BASELINE)], "refuse")
      for name in ("v99", "no-results", "nan", "negative", "text-figure", "kind-list", "cut")],
    (["gate", "empty.json", "--baseline", str(BASELINE)], "refuse"),
    (["gate", str(BASELINE), "--baseline", "pipe.json"], "refuse"),
    # options that write: a file of the user's is never replaced without --force, nor a file of the model's
    (["sweep", "llama-3.1-8b", "-n", "2", "--out", "table.csv"], "refuse"),
    (["sweep", "llama-3.1-8b", "-n", "2", "--plot", "chart.png"], "refuse"),
    (["sweep", "model", "-n", "2", "--plot", "model/figure.png", "--force"], "refuse"),
    (["sweep", "config.json", "-n", "2", "--out", "config.json", "--force"], "refuse"),
    (["sweep", "llama-3.1-8b", "-n", "2", "--out", "a-folder"], "refuse"),
    (["sweep", "llama-3.1-8b", "-n", "2", "--out", "loop-a"], "refuse"),
    (["sweep", "llama-3.1-8b", "-n", "2", "--out", "pipe.csv", "--force"], "refuse"),
    (["sweep", "llama-3.1-8b", "-n", "2", "--out", "pipe-link.csv", "--force"], "refuse"),
    (["fit", "llama-3.1-8b", "--gpu", "h100", "--max-gpus", "1", "--plot", "chart.png"], "refuse"),
    (["fit", "model", "--gpu", "h100", "--max-gpus", "1", "--plot", "model/figure.png", "--force"], "refuse"),
    (["bench", "--device", "cpu", "-t", "fp8", "--json", "bench.json"], "refuse"),
    (["bench", "--device", "cpu", "-t", "fp8", "--csv", "table.csv"], "refuse"),
    (["gate", str(BASELINE), "--baseline", "notes.txt", "--update-baseline"], "refuse"),
    (["gate", str(BASELINE), "--baseline", "config.json", "--update-baseline"], "refuse"),
]


def snapshot(folder: Path) -> dict[str, tuple]:
    """Name -> (kind, size, content hash, mode) of every entry (a pipe or a sparse file is not read)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(folder))] = ("link", os.readlink(path))
            continue
        info = path.stat()
        digest = None
        if path.is_file() and info.st_size < 16 * 1024**2:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        out[str(path.relative_to(folder))] = (oct(info.st_mode), info.st_size, digest)
    return out


def generated() -> list[tuple[list[str], str]]:
    """Every option that takes a value (repeatable ones once), of every command but bench, with each of
    BAD_VALUES: no crash allowed."""
    import typer

    from kvplan.cli.app import COMMANDS, app

    group = typer.main.get_command(app)
    cases = []
    for name in COMMANDS:
        if name == "bench":
            continue
        for param in group.commands[name].params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False):
                continue
            flag = max(param.opts, key=len)
            cases += [([name, *REQUIRED[name], flag, value], "any") for value in BAD_VALUES]
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--curated", action="store_true", help="the curated cases only")
    parser.add_argument("--show-ok", action="store_true", help="list the generated cases each command accepted")
    parser.add_argument("--limit", type=float, default=20.0, help="seconds a run may take (default 20)")
    args = parser.parse_args()
    config_fuzz.TIME_LIMIT_S = args.limit
    os.environ["HF_HUB_OFFLINE"] = "1"  # a Hub id must fail at once, from the cache
    cases = CURATED + ([] if args.curated else generated())
    problems, accepted, start = [], [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kvplan-audit-") as tmp:
        folder = Path(tmp)
        scratch_files(folder)
        before = snapshot(folder)
        home = os.getcwd()
        os.chdir(folder)
        try:
            for argv, want in cases:
                outcome = config_fuzz.run_argv(argv)
                shown = " ".join(a if len(a) < 40 else a[:20] + f"...({len(a)})" for a in argv)
                line = (outcome.stderr.strip().splitlines() or [""])[-1]
                flags = []
                if outcome.crash is not None:
                    flags.append(f"CRASH {outcome.crash} at {outcome.site}")
                if want == "refuse" and outcome.code == 0:
                    flags.append("ACCEPTED")
                if want == "ok" and outcome.code != 0:
                    flags.append("REFUSED")
                after = snapshot(folder)
                if after != before:
                    gone = sorted(k for k in before if after.get(k) != before[k])
                    new = sorted(k for k in after if k not in before)
                    flags.append(f"CHANGED {gone} NEW {new}")
                    for name in new:  # outputs a case was allowed to write: not the next case's problem
                        (folder / name).unlink() if (folder / name).is_file() else None
                    before = snapshot(folder)
                if want == "any" and outcome.code == 0:
                    accepted.append(shown)
                if flags or want != "any":
                    print(f"{'!!' if flags else 'ok'} [{outcome.code}] {outcome.seconds:5.2f}s {shown[:100]}\n"
                          f"      {' '.join(flags) or line[:200]}", flush=True)
                if flags:
                    problems.append(shown)
        finally:
            os.chdir(home)
    print(f"\n{len(cases):,} runs in {time.perf_counter() - start:.0f} s: {len(problems)} problems")
    if args.show_ok:
        print(f"accepted ({len(accepted)}), to review by eye:\n  " + "\n  ".join(accepted))
    for shown in problems:
        print(f"  problem: {shown}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
