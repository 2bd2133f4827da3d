"""SGLang's pools for pure state-space models, Gemma 3n's shared-KV layers, and the refusal of architectures SGLang does
not register. Read in the sglang 0.5.23 wheel (and 0.5.9 where named), python/sglang/srt/...:
- configs/mamba.py _mamba1_cache_params (MambaConfig, FalconMambaConfig): Mamba2StateShape.create_full_rank
  (configs/mamba_utils.py): conv (intermediate_size / TP, conv_kernel - 1), temporal (intermediate_size / TP, 1,
  state_size); configs/mamba2.py Mamba2Config: Mamba2StateShape.create (conv intermediate_size + 2 x n_groups x
  state_size, temporal num_heads / TP x head_dim x state_size); dtypes mamba2_state_dtype(None): conv bfloat16,
  temporal float32; mamba_cache_per_req = (conv x 2 B + temporal x 4 B) x layers.
- configs/model_config.py PURE_SSM_ARCHITECTURES: head_dim 0, no KV heads; model_executor/pool_configurator.py
  DefaultPoolConfigurator: the cell counts mambaish_config.full_attention_layer_ids (none), and a zero cell sizes
  the token pool at --max-total-tokens, else context_len (_zero_kv_max_tokens).
- mem_cache/kv_cache_configurator.py _handle_max_mamba_cache: K = int((B - per) // per), B = rest x 0.9 / 1.9;
  resolve_max_num_reqs: min(max(min(int(tokens / context x 512), 4096), 2048), tokens // 2, K // 3) (3 slots: the
  archs are in neither _MAMBA_RADIX_CACHE_ARCHS nor _MAMBA_EXTRA_BUFFER_ARCHS, arg_groups/overrides.py).
- models/gemma3n_causal.py (0.5.9 and 0.5.23): the last num_kv_shared_layers layers save no KV but the pool holds
  num_effective_layers = num_hidden_layers layers (0.5.9 model_runner; 0.5.23 layer_setup._compute_model_num_layers).
Every expected figure is worked out by hand below.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.sglang import cell, pool
from kvplan.engines.sglang_rules import RULES
from kvplan.errors import UsageError
from kvplan.sources import load_model

GIB = 2**30
R0523, R059 = RULES["0.5.23"], RULES["0.5.9"]


@pytest.mark.parametrize("tp,conv,ssm", [
    # mamba-2.8b: 64 layers, intermediate_size 5,120 (= 2 x 2,560), state_size 16, conv_kernel 4.
    # a layer: conv 5,120 x 3 x 2 B = 30,720; temporal 5,120 x 1 x 16 x 4 B = 327,680; x 64:
    # conv 1,966,080, temporal 20,971,520, together 22,937,600 B (21.875 MiB). TP 2 halves both.
    (1, 1_966_080, 20_971_520),
    (2, 983_040, 10_485_760),
])
def test_mamba1_state_per_request(tp, conv, ssm):
    c = cell(load_model("mamba-2.8b"), tp, rules=R0523)
    assert (c.bytes, c.full_layers) == (0, 0)  # no attention layer: a zero cell
    assert (c.state.conv_bytes, c.state.ssm_bytes, c.state.layers) == (conv, ssm, 64)


def test_mamba2_state_per_request():
    # Mamba-Codestral-7B: 64 layers, intermediate_size 8,192, n_groups 8, state_size 128, 128 heads of 64, kernel 4.
    # conv (8,192 + 2 x 8 x 128) x 3 x 2 B = 61,440; temporal 128 x 64 x 128 x 4 B = 4,194,304; x 64 = 272,367,616
    c = cell(load_model("mamba-codestral-7b"), 1, rules=R0523)
    assert (c.bytes, c.state.bytes) == (0, 272_367_616)


def test_mamba1_pool_at_100_gib():
    # B = 100 GiB x 0.9 / 1.9 = 50,861,454,821.05; K = int((B - 22,937,600) // 22,937,600) = 2,216;
    # tokens = context_len 4,096 (a zero cell); requests min(max(min(512, 4,096), 2,048), 4,096 // 2, 2,216 // 3) = 738.
    # the state line: 2,217 x 1,966,080 B = 4.06 GB (2**30), 2,217 x 20,971,520 B = 43.30 GB
    got = pool(load_model("mamba-2.8b"), rest_bytes=100 * GIB, context_len=4096, rules=R0523)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (2216, 4096, 738)
    assert got.state_slots_per_request == 3
    assert got.log_lines() == [
        "Mamba Cache is allocated. max_mamba_cache_size: 2216, conv_state size: 4.06GB, ssm_state size: 43.30GB",
        "max_total_num_tokens=4096, max_running_requests=738, context_len=4096"]
    # --max-total-tokens sizes the token pool (no memory: the cell is zero), so the request estimate rises
    got = pool(load_model("mamba-2.8b"), rest_bytes=100 * GIB, context_len=4096, max_total_tokens=1_000_000,
               rules=R0523)
    assert (got.max_total_num_tokens, got.max_running_requests) == (1_000_000, 738)


def test_mamba_2_8b_on_one_h200():
    r = CliRunner().invoke(app, ["estimate", "mamba-2.8b", "--engine", "sglang", "--gpu", "h200", "-c", "4k",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    eng = json.loads(r.output)["engine"]
    per = 22_937_600  # by hand above
    rest = eng["kv_memory_bytes"]  # the profiled memory (the memory model's own tests cover it): the input here
    states = int((rest * 0.9 / 1.9 - per) // per)
    assert eng["state_bytes_per_request"] == per
    assert (eng["mamba_cache_size"], eng["max_total_num_tokens"]) == (states, 4096)
    assert eng["max_running_requests"] == min(2048, states // 3)
    assert eng["concurrent_requests"] == 1  # the token pool holds one 4K request's tokens


def test_pure_ssm_refusals():
    with pytest.raises(UsageError, match=r"^SGLang 0\.5\.9 registers no MambaForCausalLM \(SGLang 0\.5\.23 does\)"):
        cell(load_model("mamba-2.8b"), 1, rules=R059)
    with pytest.raises(UsageError, match="create_full_rank asserts"):
        cell(load_model("mamba-2.8b"), 3, rules=R0523)  # 5,120 % 3 != 0


@pytest.mark.parametrize("model,arch", [("bamba-9b", "BambaForCausalLM"), ("zamba2-2.7b", "Zamba2ForCausalLM"),
                                        ("jamba-v0.1", "JambaForCausalLM")])
def test_unregistered_state_model_leads_with_the_registry(model, arch):
    # sglang_registry_data: no release registers these; the refusal says so first, not "the state is not modelled"
    with pytest.raises(UsageError, match=f"^SGLang 0\\.5\\.23 registers no {arch}, "):
        cell(load_model(model), 1, rules=R0523)


def test_unregistered_refusal_is_one_line_exit_2():
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "kvplan", "estimate", "bamba-9b", "--engine", "sglang", "--gpu", "h200"],
                       capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvplan: error: SGLang 0.5.23 registers no BambaForCausalLM")


@pytest.mark.parametrize("rules", [R059, R0523])
@pytest.mark.parametrize("tp,cell_bytes,tokens", [
    # gemma-3n-E4B: 35 layers pooled (the last 15 share earlier layers' KV but keep their rows), 2 KV heads of 256:
    # 2 x (256 + 256) x 35 x 2 B = 71,680 B a token; 10 GiB // 71,680 = 149,796. TP 2: 1 head, 35,840, 299,593
    (1, 71_680, 149_796),
    (2, 35_840, 299_593),
])
def test_gemma3n_pools_every_layer(rules, tp, cell_bytes, tokens):
    got = pool(load_model("gemma-3n-e4b"), rest_bytes=10 * GIB, context_len=4096, tp=tp, rules=rules)
    assert (got.cell.kind, got.cell.full_layers, got.cell.bytes) == ("mha", 35, cell_bytes)
    # requests: min(max(min(int(tokens / 4,096 x 512), 4,096), 2,048), tokens // 2) = 4,096
    assert (got.max_total_num_tokens, got.max_running_requests) == (tokens, 4096)
    assert any("last 15 reuse earlier layers' KV" in n for n in got.notes)


def _emit_json(*args):
    r = CliRunner().invoke(app, ["estimate", "mamba-2.8b", "--engine", "sglang", "--kv-memory", "100GiB", "-c", "4k",
                                 "--emit", "sglang", "--format", "json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)  # stderr holds the --batch warning where the batch does not fit (render.py)


@pytest.mark.parametrize("batch,tokens,held", [
    # 100 GiB: 2,216 states (test_mamba1_pool_at_100_gib), 3 a request: the state pool runs 2,216 // 3 = 738 requests.
    # --batch 64: 64 x 4,096 = 262,144 tokens (requests min(4,096, 131,072, 738) = 738 >= 64): 64 held at once.
    (64, 262_144, 64),
    # --batch 1,000 is above 738: 738 x 4,096 = 3,022,848 tokens, 738 held at once
    (1000, 3_022_848, 738),
])
def test_emit_sizes_max_total_tokens_for_the_batch(batch, tokens, held):
    # kv_cache_configurator._apply_token_constraints keeps the flag: the zero cell's capacity is the flag itself
    # (pool_configurator._zero_kv_max_tokens), so min(flag, flag) = flag
    data = _emit_json("-b", str(batch))
    argv = data["emit"]["argv"]
    assert argv[argv.index("--max-total-tokens") + 1] == str(tokens)
    eng = data["engine"]  # the estimate with the emitted flag: the token pool and requests it holds
    assert (eng["max_total_num_tokens"], eng["max_running_requests"], eng["concurrent_requests"]) == (tokens, 738, held)
    assert eng["mamba_cache_size"] == 2216  # the state pool does not move: the token pool costs no memory
    assert any("costs no memory" in n and f"lets {held:,} requests" in n for n in data["emit"]["notes"])
