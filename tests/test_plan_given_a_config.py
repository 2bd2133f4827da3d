"""`kvplan plan config.json`: a model's Hugging Face config given where a scenario goes is named as such
(kvplan/workload/schema.py Checker.section), not refused as "unknown key 'architectures' (did you mean
'techniques'?)"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8}


@pytest.mark.parametrize("fit", [False, True])
def test_config_json_is_named(tmp_path, fit):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG))
    run = subprocess.run([sys.executable, "-m", "kvplan", "plan", str(path), *(["--fit"] if fit else [])],
                         capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
    assert run.returncode == 2  # an invalid scenario file (docs/scenarios.md)
    line = run.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "this is a model config" in line and "kvplan estimate FILE" in line
    assert "did you mean" not in line
