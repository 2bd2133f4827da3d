"""The Hub path over real HTTP: a loopback server stands in for huggingface.co.

Each case runs `python -m kvplan` in a subprocess because huggingface_hub reads
HF_ENDPOINT and HF_HUB_OFFLINE when it is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hub_server import HubServer

TINY = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "intermediate_size": 1024, "vocab_size": 1000}
TINY_BYTES_PER_TOKEN = 2 * 4 * 2 * 64 * 2


def run_kvplan(args, tmp_path, endpoint=None, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1", **env_extra)
    if endpoint:
        env["HF_ENDPOINT"] = endpoint
    proc = subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def hub():
    with HubServer({"acme/tiny": TINY}, gated={"acme/gated"}) as server:
        yield server


def test_hub_config_over_http_then_cached_offline(hub, tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/tiny", "--context", "1024", "--format", "json"], tmp_path, hub.url)
    assert code == 0, err
    data = json.loads(out)
    assert data["bytes_per_token"] == TINY_BYTES_PER_TOKEN
    assert data["model"]["source"] == "hf://acme/tiny"
    assert any(path.startswith("/acme/tiny/resolve/main/config.json") for _, path, _ in hub.requests)
    # now offline: the local HF cache answers
    code, out, err = run_kvplan(["estimate", "acme/tiny", "--format", "json"], tmp_path, hub.url, HF_HUB_OFFLINE="1")
    assert code == 0, err
    assert json.loads(out)["bytes_per_token"] == TINY_BYTES_PER_TOKEN


def test_hub_revision_and_token_are_sent(hub, tmp_path):
    code, _, err = run_kvplan(["estimate", "acme/tiny", "--revision", "v1"], tmp_path, hub.url, HF_TOKEN="hf_secret")
    assert code == 0, err
    assert ("GET", "/acme/tiny/resolve/v1/config.json", "Bearer hf_secret") in [
        (m, p.split("?")[0], a) for m, p, a in hub.requests
    ]


def test_gated_repo_is_one_line(hub, tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/gated"], tmp_path, hub.url)
    assert code == 1
    assert "gated" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_repo_is_one_line(hub, tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/nothing-here"], tmp_path, hub.url)
    assert code == 1
    assert "no such repository" in err and "Traceback" not in err


def test_offline_with_empty_cache(tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/tiny"], tmp_path, "http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    assert code == 1
    assert "offline" in err and "Traceback" not in err
