"""Safetensors headers from the Hub over real HTTP: the loopback server serves
shards and answers Range requests; kvplan reads only the headers, one range
request per shard. Subprocesses, because huggingface_hub reads HF_ENDPOINT and
HF_HUB_OFFLINE when imported."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hub_server import HubServer
from test_sources_hub import TINY, run_kvplan

st = pytest.importorskip("safetensors.numpy")


def shards(n: int, per_shard: int = 3, dim: int = 32) -> tuple[dict[str, bytes], int]:
    """n shards of per_shard F16 layer tensors + an index; (files, bytes written)."""
    files, weight_map, total = {}, {}, 0
    for s in range(n):
        tensors = {f"model.layers.{s * per_shard + k}.mlp.up_proj.weight": np.zeros((dim, dim), np.float16) for k in range(per_shard)}
        if s == 0:
            tensors["model.embed_tokens.weight"] = np.zeros((1000, dim), np.float32)
        name = f"model-{s + 1:05d}-of-{n:05d}.safetensors"
        files[name] = st.save(tensors)
        weight_map.update({t: name for t in tensors})
        total += sum(a.nbytes for a in tensors.values())
    files["model.safetensors.index.json"] = json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}).encode()
    return files, total


@pytest.fixture
def hub():
    files, total = shards(4)
    broken = dict(files)
    del broken["model-00003-of-00004.safetensors"]
    single = {"model.safetensors": st.save({"lm_head.weight": np.zeros((10, 8), np.float32)})}
    bad = {"model.safetensors": b"\x05\x00\x00"}
    repos = {r: TINY for r in ("acme/sharded", "acme/broken", "acme/single", "acme/bad", "acme/tiny")}
    with HubServer(repos, files={"acme/sharded": files, "acme/broken": broken, "acme/single": single, "acme/bad": bad}) as server:
        server.total = total
        yield server


def test_sharded_headers_one_range_request_per_shard(hub, tmp_path):
    code, out, err = run_kvplan(["weights", "acme/sharded", "--format", "json"], tmp_path, hub.url)
    assert code == 0, err
    data = json.loads(out)
    assert data["weights"]["source"] == "safetensors" and data["weights"]["files"] == 4
    assert data["weights"]["total_bytes"] == hub.total
    shard_ranges = [p for p, _ in hub.ranges if p.endswith(".safetensors")]
    assert sorted(shard_ranges) == sorted(set(shard_ranges)) and len(shard_ranges) == 4
    # nothing but headers: no plain GET of a shard
    assert not [p for m, p, _ in hub.requests if m == "GET" and p.endswith(".safetensors") and p not in dict(hub.ranges)]


def test_estimate_says_where_the_bytes_came_from(hub, tmp_path):
    code, out, err = run_kvplan(["estimate", "acme/single", "--format", "json"], tmp_path, hub.url)
    assert code == 0, err
    data = json.loads(out)
    assert data["model"]["weights"]["source"] == "safetensors" and data["model"]["weight_bytes"] == 10 * 8 * 4
    code, out, err = run_kvplan(["estimate", "acme/tiny", "--format", "json"], tmp_path, hub.url)
    assert code == 0, err
    assert json.loads(out)["model"]["weights"]["source"] == "estimated from config"


def test_revision_and_token_reach_the_range_requests(hub, tmp_path):
    code, _, err = run_kvplan(["weights", "acme/single", "--revision", "v1"], tmp_path, hub.url, HF_TOKEN="hf_secret")
    assert code == 0, err
    assert ("GET", "/acme/single/resolve/v1/model.safetensors", "Bearer hf_secret") in [
        (m, p.split("?")[0], a) for m, p, a in hub.requests
    ]


def test_offline_uses_the_cached_index(hub, tmp_path):
    code, _, err = run_kvplan(["weights", "acme/sharded"], tmp_path, hub.url)
    assert code == 0, err
    code, out, err = run_kvplan(["weights", "acme/sharded", "--format", "json"], tmp_path, hub.url, HF_HUB_OFFLINE="1")
    assert code == 0, err
    data = json.loads(out)
    assert data["weights"]["source"] == "index" and data["weights"]["total_bytes"] == hub.total


def test_missing_shard_and_bad_header_are_one_line(hub, tmp_path):
    code, out, err = run_kvplan(["weights", "acme/broken"], tmp_path, hub.url)
    assert code == 1 and out == ""
    assert "model-00003-of-00004.safetensors" in err and "missing" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_kvplan(["estimate", "acme/bad"], tmp_path, hub.url)
    assert code == 1 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "acme/bad" in err
