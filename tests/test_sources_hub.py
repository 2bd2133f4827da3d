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


# Misbehaving Hubs: every cause gets its own one-line message, within the budget.

def _one_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def bad_hub():
    with HubServer({"acme/tiny": TINY, "acme/slow": TINY, "acme/cut": TINY},
                   status={"acme/private": (401, ""), "acme/terms": (403, "GatedRepo"),
                           "acme/down": (500, ""), "acme/busy": (503, ""), "acme/limited": (429, ""),
                           "acme/forbidden": (403, "")},
                   hang={"acme/slow"}, cut={"acme/cut"}) as server:
        yield server


@pytest.mark.parametrize("repo, words", [
    ("acme/private", ["refused the credentials", "401", "hf auth login"]),
    ("acme/terms", ["gated", "403", "accept its terms"]),
    ("acme/forbidden", ["no access", "403"]),
    ("acme/down", ["failing", "500", "try again later"]),
    ("acme/busy", ["failing", "503"]),
    ("acme/limited", ["rate-limiting", "429"]),
    ("acme/cut", ["cut mid-file"]),
])
def test_each_hub_failure_has_its_own_message(bad_hub, tmp_path, repo, words):
    code, out, err = run_kvplan(["estimate", repo], tmp_path, bad_hub.url, HF_TOKEN="hf_topsecret123",
                                KVPLAN_HUB_TIMEOUT="5")
    line = _one_line(err)
    assert code == 1 and out == ""
    for word in words:
        assert word in line, line
    assert "hf_topsecret123" not in err + out
    # exactly one request: no retry storm
    assert len([r for r in bad_hub.requests if r[1].startswith(f"/{repo}/")]) == 1


def test_a_hub_that_never_answers_is_bounded_by_the_budget(bad_hub, tmp_path):
    import time

    start = time.monotonic()
    code, out, err = run_kvplan(["estimate", "acme/slow"], tmp_path, bad_hub.url, KVPLAN_HUB_TIMEOUT="1.5")
    elapsed = time.monotonic() - start
    line = _one_line(err)
    assert code == 1 and "did not answer within 1.5 s" in line or "no answer from the Hub within 1.5 s" in line, line
    assert elapsed < 1.5 + 8, elapsed  # the budget plus interpreter start-up, not minutes


def test_a_failing_hub_falls_back_to_the_cached_copy(bad_hub, tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/tiny", "--format", "json"], tmp_path, bad_hub.url)
    assert code == 0, err
    bad_hub.status["acme/tiny"] = (500, "")
    code, out, err = run_kvplan(["estimate", "acme/tiny", "--format", "json"], tmp_path, bad_hub.url)
    assert code == 0, err
    assert json.loads(out)["bytes_per_token"] == TINY_BYTES_PER_TOKEN
    # one warning for the config (the cached copy stands in) and one for the weights, whose shard
    # headers the failing Hub cannot give either (the config estimate stands in); no traceback
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("kvplan: warning:") for line in lines), err
    assert "500" in lines[0] and "local Hugging Face cache" in lines[0]
    assert "safetensors headers (500)" in lines[1] and "estimated from the config" in lines[1]
    assert json.loads(out)["model"]["weights"]["source"] == "estimated from config"


def test_unreachable_hub_says_so(tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/tiny"], tmp_path, "http://127.0.0.1:9", KVPLAN_HUB_TIMEOUT="3")
    line = _one_line(err)
    assert code == 1 and "cannot reach the Hub" in line and "HF_HUB_OFFLINE" in line


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_bad_budget_is_a_usage_error(tmp_path, value):
    code, out, err = run_kvplan(["estimate", "acme/tiny"], tmp_path, "http://127.0.0.1:9", KVPLAN_HUB_TIMEOUT=value)
    line = _one_line(err)
    assert code == 2 and "KVPLAN_HUB_TIMEOUT" in line


def test_default_budget_bounds_every_wait(monkeypatch):
    """With default settings no Hub lookup can wait past 35 s: the whole lookup is
    cut at the 30 s budget (connect and each read at 10 s inside it)."""
    from kvplan import hub

    monkeypatch.delenv("KVPLAN_HUB_TIMEOUT", raising=False)
    assert hub.budget_s() == 30.0 and hub.REQUEST_TIMEOUT_S == 10.0
    monkeypatch.setenv("KVPLAN_HUB_TIMEOUT", "2.5")
    assert hub.budget_s() == 2.5


def test_the_budget_cuts_a_stuck_lookup_in_process(monkeypatch):
    import time

    from kvplan import hub
    from kvplan.errors import SourceError

    monkeypatch.setenv("KVPLAN_HUB_TIMEOUT", "0.3")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_fetch", lambda *a: time.sleep(5))  # a DNS lookup that never returns
    monkeypatch.setattr(hub, "cached_config", lambda *a: None)
    start = time.monotonic()
    with pytest.raises(SourceError, match="no answer from the Hub within 0.3 s"):
        hub.config_text("acme/tiny", None)
    assert time.monotonic() - start < 1.5
