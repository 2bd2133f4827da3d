"""The README's examples ("output pasted from real runs") still print what the README shows.

Each ```text block of README.md that starts with `$ kvplan ...` is run in-process; every output line the README
shows (less the "..." that mark trimmed rows) must be a line of the fresh run. Rich's table borders and column
padding depend on the terminal's width, so runs of spaces and of border characters are compared collapsed; the
figures and words are compared exactly. bench and gate need torch and a bench file: their examples are checked
by tests/test_bench.py and tests/test_gate.py, not here. docgen keeps docs/*.md's examples fresh; this test is
the README's (it found the fit example's vLLM column stale after a profile change).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kvplan.docgen import run_cli

README = Path(__file__).resolve().parent.parent / "README.md"
SKIPPED = ("bench", "gate")  # need torch / a bench file
ELIDED = {"...", "(rows trimmed)"}


def _examples() -> list[tuple[str, list[str]]]:
    out = []
    for block in re.findall(r"```text\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("$ kvplan "):
            continue
        argv = shlex.split(lines[0][2:])
        if argv[1] in SKIPPED:
            continue
        out.append((lines[0][2:], [line for line in lines[1:] if line.strip() and line.strip() not in ELIDED]))
    return out


def _norm(line: str) -> str:
    line = re.sub(r"[━─═]+", "-", line.rstrip())
    return re.sub(r" +", " ", line)


EXAMPLES = _examples()


def test_the_readme_has_examples_to_check():
    # the estimate, compare, fit and --engine vllm examples at least
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("command,shown", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_prints_what_the_readme_shows(command, shown, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # wide enough that no cell wraps (the README's tables were pasted unwrapped)
    code, output = run_cli(shlex.split(command)[1:], columns=200)
    assert code == 0, output[-2000:]
    got = {_norm(line) for line in output.splitlines()}
    missing = [line for line in shown if _norm(line) not in got]
    assert not missing, f"{command}: README lines no longer printed:\n" + "\n".join(missing[:10])


def test_the_readme_counts_the_model_types_kvplan_lists():
    # "kvplan reads N model_types exactly": the rows of `kvplan models --family` (it said 275, then 362, each time
    # a family was added without the README)
    import json

    code, output = run_cli(["models", "--family", "--format", "json"])
    assert code == 0, output[-2000:]
    listed = len(json.loads(output)["families"])
    said = re.search(r"kvplan reads (\d+) model_types exactly", README.read_text(encoding="utf-8"))
    assert said is not None and int(said.group(1)) == listed
