"""The line under fit's table that defines its columns (kvplan/reports/fit.py build) says what fit/screen.py puts
in them. DeepSeek-V2-Lite's cache is an MLA latent: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values of 2 B (bf16)
a token a layer, 27 layers, which TP does not split (every rank holds the whole latent) and PP splits by layers
(14 + 13)."""

from __future__ import annotations

import json
import subprocess
import sys

LATENT_BYTES = (512 + 64) * 2  # a token, a layer
TOKENS, SEQUENCES = 32 * 1024, 16


def _fit(*extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvplan", "fit", "deepseek-v2-lite", "--context", "32k",
                           "--concurrency", str(SEQUENCES), "--gpu", "h100", "--max-gpus", "2", *extra],
                          capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": "", "COLUMNS": "200"})


def test_kv_per_gpu_of_an_mla_model_is_not_split_by_tp():
    run = _fit("--format", "json")
    assert run.returncode == 0, run.stderr
    kv = {(o["tp"], o["pp"]): o["kv_bytes_per_gpu"] for o in json.loads(run.stdout)["options"]
          if o["kv_dtype"] == "bf16"}
    whole = 27 * LATENT_BYTES * TOKENS * SEQUENCES  # 16,307,453,952
    assert kv[(1, 1)] == kv[(2, 1)] == whole
    assert kv[(1, 2)] == 14 * LATENT_BYTES * TOKENS * SEQUENCES  # the 14-layer stage: 8,455,716,864


def test_the_columns_line_says_so():
    run = _fit("--format", "markdown")
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if "columns:" in x)
    assert "TP splits it by K/V heads" not in line  # false for this model: the latent is whole on every TP rank
    assert "keeps an MLA latent whole on every rank" in line
    assert "W/GPU GiB = the weights on the heaviest GPU" in line  # the heaviest stage's, not the fullest KV one's
