"""SGLang 0.5.23's pool for ZAYA1 (ZayaForCausalLM), read in the 0.5.23 wheel (python/sglang/srt/...):
- configs/zaya.py ZayaConfig (registered over transformers' class): full_attention_layer_ids = the "a" entries of
  zaya_layers (the Megatron-style layout: attention and MoE half-layers, models/zaya.py); heads, KV heads the first
  non-zero cca_num_q_heads / num_query_groups_list entries, head_dim 128 unless written (kv_channels if null);
  mamba2_cache_params per attention layer: conv [((heads + KV heads) x head_dim / TP, (cca_time0 - 1) +
  (cca_time1 - 1)), (hidden_size, 1)], temporal (1, 1, 0); conv dtype bfloat16 (SGLANG_MAMBA_CONV_DTYPE);
  mamba_cache_per_req (configs/mamba_utils.py) = conv elements x 2 B x layers. ZayaConfig asserts
  num_query_groups (default 2) == num_key_value_heads.
- models/zaya.py load_weights: Megatron-style names only (self_attn.qkv.*, zaya_block.*), others skipped with a
  warning, so a transformers-layout config (no zaya_layers) is refused. ZayaAttention: RadixAttention with KV heads / TP; asserts heads % TP == 0 and
  num_query_groups % TP == 0; ZayaBlock raises ValueError for TP > num_experts.
- model_executor/pool_configurator.py: the cell counts full_attention_layer_ids; mem_cache/kv_cache_configurator.py
  _handle_max_mamba_cache: K = int((B - per) // per), B = rest x 0.9 / 1.9, tokens = (rest - (K + 1) x per) // cell.
- arg_groups/overrides.py: ZayaForCausalLM in _MAMBA_RADIX_CACHE_ARCHS, not _MAMBA_EXTRA_BUFFER_ARCHS: no_buffer,
  3 state slots a request.
Configs: hand-written with the field names transformers 5.25's and SGLang's ZayaConfig read (no real ZAYA1
config.json was at hand); every expected value is worked out by hand below.
"""

from __future__ import annotations

import json

import pytest

from kvplan.engines.sglang import Speculation, cell, pool
from kvplan.engines.sglang_rules import RULES
from kvplan.errors import UsageError
from kvplan.sources import load_model

GIB = 2**30
R0523, R059 = RULES["0.5.23"], RULES["0.5.9"]
# Megatron-style: 40 half-layers, "a" (attention) at the even ids, MoE of 16 experts at the odd ones
ZAYA_40 = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 40,
           "zaya_layers": ["a", 16] * 20, "cca_num_q_heads": [8, 0] * 20, "num_query_groups_list": [2, 0] * 20,
           "num_attention_heads": 16, "num_key_value_heads": 2, "kv_channels": 128, "cca_time0": 2, "cca_time1": 2,
           "rope_scaling": False, "vocab_size": 1000, "torch_dtype": "bfloat16"}
# transformers 5.25's layout: 40 layers, each attention + MoE
ZAYA_HF_40 = {"model_type": "zaya", "architectures": ["ZayaForCausalLM"], "hidden_size": 2048,
              "num_hidden_layers": 40, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
              "vocab_size": 1000, "torch_dtype": "bfloat16"}


def _zaya(tmp_path, **changes):
    raw = {**ZAYA_40, **changes}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return load_model(str(path))


@pytest.mark.parametrize("tp,cell_bytes,state_bytes", [
    # 40 half-layers, "a" at 0, 2, ..., 38: 20 attention layers (kvplan's own reading counts the same 20).
    # cell: 2 KV heads / TP x (128 + 128) x 20 layers x 2 B: TP 1 20,480, TP 2 10,240.
    # state a layer: conv_qk (8 + 2) x 128 / TP channels x (1 + 1) columns + prev_hs 2,048 x 1, x 2 B:
    # TP 1 (2,560 + 2,048) x 2 = 9,216, x 20 = 184,320; TP 2 (1,280 + 2,048) x 2 = 6,656, x 20 = 133,120
    (1, 20_480, 184_320),
    (2, 10_240, 133_120),
])
def test_cell_and_cca_state_per_rank(tmp_path, tp, cell_bytes, state_bytes):
    c = cell(_zaya(tmp_path), tp, rules=R0523)
    assert (c.kind, c.full_layers, c.bytes, c.k_per_token) == ("mha", 20, cell_bytes, cell_bytes // 2)
    assert (c.state.conv_bytes, c.state.ssm_bytes, c.state.layers) == (state_bytes, 0, 20)
    assert not c.notes


@pytest.mark.parametrize("tp,states,tokens,log_gb", [
    # 10 GiB = 10,737,418,240 B; B = 10 GiB x 0.9 / 1.9 = 5,086,145,482.1
    # TP 1: per 184,320: K = int((B - per) // per) = 27,593; tokens (10 GiB - 27,594 x 184,320) // 20,480 =
    # 5,651,292,160 // 20,480 = 275,942; the state line 27,594 x 184,320 B = 4.74 GB
    (1, 27_593, 275_942, "4.74"),
    # TP 2: per 133,120: K = 38,206; tokens (10 GiB - 38,207 x 133,120) // 10,240 = 5,651,302,400 // 10,240 =
    # 551,885; the state line 38,207 x 133,120 B = 5,086,115,840 B = 4.74 GB
    (2, 38_206, 551_885, "4.74"),
])
def test_pool_at_10_gib(tmp_path, tp, states, tokens, log_gb):
    # no_buffer (not an extra-buffer arch): 3 slots a request; the estimate at context 4,096: min(max(tokens / 4,096
    # x 512, 2,048), 4,096) = 4,096, below K // 3 and tokens // 2
    got = pool(_zaya(tmp_path), rest_bytes=10 * GIB, context_len=4096, tp=tp, rules=R0523)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (states, tokens, 4096)
    assert got.state_slots_per_request == 3
    assert got.log_lines()[0] == (f"Mamba Cache is allocated. max_mamba_cache_size: {states}, conv_state size: "
                                  f"{log_gb}GB, ssm_state size: 0.00GB")


def test_zaya_layers_name_the_attention_layers(tmp_path):
    # zaya_layers wins over num_hidden_layers (4 here): 8 entries with "a" at 0, 3, 4, 7 -> 4 attention layers;
    # cca_time0 3: (3 - 1) + (2 - 1) = 3 conv columns: ((8 + 2) x 128 x 3 + 2,048) x 2 B = 11,776 B a layer,
    # x 4 = 47,104; the cell 4 layers x 2 KV heads x (128 + 128) x 2 B = 4,096 B a token
    kinds = ["a", 16, 16, "a", "a", 16, 16, "a"]
    model = _zaya(tmp_path, num_hidden_layers=4, zaya_layers=kinds, cca_time0=3,
                  cca_num_q_heads=[8 if k == "a" else 0 for k in kinds],
                  num_query_groups_list=[2 if k == "a" else 0 for k in kinds])
    c = cell(model, 1, rules=R0523)
    assert (c.full_layers, c.bytes, c.state.bytes) == (4, 4_096, 47_104)


@pytest.mark.parametrize("changes,tp,rules,says", [
    ({}, 4, R0523, "num_query_groups (2) divisible by TP"),  # 2 KV heads at TP 4: no KV replication
    ({"cca_num_q_heads": [6, 0] * 20, "num_query_groups_list": [3, 0] * 20, "num_key_value_heads": 3}, 2, R0523,
     "num_attention_heads (6) and num_query_groups (3)"),
    ({"num_key_value_heads": 4}, 1, R0523, "num_query_groups (2) == num_key_value_heads (4)"),
    ({"num_query_groups_list": None, "num_key_value_heads": 4}, 1, R0523,
     "num_query_groups (2, its default) == num_key_value_heads (4)"),
    # no head_dim: SGLang's ZayaConfig keeps its default 128 (kv_channels counts only when head_dim is null),
    # where kvplan reads kv_channels 64
    ({"kv_channels": 64}, 1, R0523, "SGLang's attention is 2 KV heads x 128"),
    ({"num_experts": 1}, 2, R0523, "greater than num_experts (1)"),
    ({}, 1, R059, "SGLang 0.5.9 registers no ZayaForCausalLM"),
])
def test_refusals(tmp_path, changes, tp, rules, says):
    with pytest.raises(UsageError) as err:
        cell(_zaya(tmp_path, **changes), tp, rules=rules)
    assert says in str(err.value)


def test_transformers_layout_is_refused(tmp_path):
    # models/zaya.py load_weights: a transformers-layout checkpoint's names (self_attn.qkv_proj.q_proj,
    # mlp.experts.gate_up_proj) match no SGLang parameter and are skipped with a warning: not planned
    path = tmp_path / "config.json"
    path.write_text(json.dumps(ZAYA_HF_40))
    with pytest.raises(UsageError, match="SGLang 0.5.23 cannot load ZAYA1 in transformers' layout"):
        cell(load_model(str(path)), 1, rules=R0523)


def test_speculation_is_refused_not_guessed(tmp_path):
    spec = Speculation("STANDALONE", 3, 4, 40, draft_name="zaya-draft", draft_architecture="ZayaForCausalLM")
    with pytest.raises(UsageError, match="has not read how it keeps the CCA state's draft-token conv windows"):
        pool(_zaya(tmp_path), rest_bytes=10 * GIB, context_len=4096, speculation=spec, rules=R0523)


def test_cli_plans_tp2_and_refuses_tp4_in_one_line(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(ZAYA_40))
    rc, out, err = cli("estimate", str(path), "--engine", "sglang", "--kv-memory", "10GiB", "--tp", "2",
                       "--format", "json")
    engine = json.loads(out)["engine"]
    assert rc == 0 and (engine["mamba_cache_size"], engine["max_total_num_tokens"]) == (38_206, 551_885)
    assert engine["state_bytes_per_request"] == 133_120 and engine["cell_bytes"] == 10_240
    rc, out, err = cli("estimate", str(path), "--engine", "sglang", "--kv-memory", "10GiB", "--tp", "4")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "ZayaAttention shards heads across ranks" in err
