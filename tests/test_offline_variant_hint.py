"""Offline, a Hub id that is not cached but extends a bundled one by a '-' suffix (the -Instruct checkpoint of a
bundled base, a dated release) names the bundled config in the hint (kvplan/sources.py _hub_config,
_bundled_base); an id that extends none keeps the plain hint. The bundled ids are model_specs/index.json's."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(model, tmp_path):
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "PATH": ""}  # an empty HF cache
    return subprocess.run([sys.executable, "-m", "kvplan", "estimate", model, "--context", "8k"],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("model, alias, hf_id", [
    ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b", "meta-llama/Llama-3.1-70B"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", "deepseek-ai/DeepSeek-V3"),
])
def test_variant_names_the_bundled_base(tmp_path, model, alias, hf_id):
    run = _run(model, tmp_path)
    assert run.returncode != 0 and run.stdout == ""
    line = run.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"kvplan: error: {model}: offline")
    assert f"the bundled {alias} ({hf_id})" in line


def test_unrelated_id_keeps_the_plain_hint(tmp_path):
    # Qwen3-235B-A22B is not bundled; no bundled id is a prefix of it (Qwen/Qwen3-30B-A3B is a different model)
    line = _run("Qwen/Qwen3-235B-A22B-FP8", tmp_path).stderr.strip()
    assert "offline" in line and "bundled" not in line
