"""SGLang's pool for Ling / Ring 2.5 (BailingMoeV2_5ForCausalLM: MLA full layers + lightning linear layers), read in
the 0.5.23 wheel and the 0.5.9 sdist (python/sglang/srt/...):
- utils/hf_transformers/config.py HfModelConfigParser (0.5.9 hf_transformers_utils.get_config): model_type
  bailing_hybrid is re-read through SGLang's own configs/bailing_hybrid.py BailingHybridConfig (defaults: 20 layers,
  16 heads, hidden 2,048, head_dim 128, layer_group_size 1, group_norm_size 1, kv_lora_rank 512, qk_rope_head_dim
  64); layers_block_type: full when (l + 1) % layer_group_size == 0.
- configs/hybrid_arch.py hybrid_lightning_config (no short_conv_kernel_size: use_kda false) makes it a state model;
  BailingHybridConfig.mamba2_cache_params = Mamba2StateShape.create(intermediate_size=0, n_groups=0,
  num_heads=num_attention_heads, head_dim, state_size=head_dim, conv_kernel=1) on linear_layer_ids: conv shape
  (0 / TP, 0), temporal (heads / TP, head_dim, head_dim); dtype mamba2_state_dtype(None): float32
  (configs/mamba_utils.py BaseLinearStateParams.mamba_cache_per_req).
- model_executor/pool_configurator.py DefaultPoolConfigurator: the cell counts full_attention_layer_ids only, MLA
  (configs/model_config.py: BailingMoeV2_5ForCausalLM is AttentionArch.MLA; calculate_mla_kv_cache_dim
  kv_lora_rank + qk_rope_head_dim).
- 0.5.23 mem_cache/kv_cache_configurator._handle_max_mamba_cache: K = int((B - per) // per), B = rest x 0.9 / 1.9;
  arg_groups/overrides.py: BailingMoeV2_5ForCausalLM is in _MAMBA_EXTRA_BUFFER_ARCHS (linear_attn_backend "triton"
  by default), so extra_buffer under the overlap schedule: requests <= K // 5.
- 0.5.9 model_runner_kv_cache_mixin.handle_max_mamba_cache: K = int(B // per); server_args turns the radix cache
  off for BailingMoeV2_5ForCausalLM (_handle_mamba_radix_cache(support_mamba_cache=False)), so init_memory_pool's
  ratio is 1 and a given max_running_requests is the state pool's size.
- models/bailing_moe_linear.py BailingMoELinearAttention asserts heads % TP == 0, tp <= group_norm_size and
  group_norm_size % tp == 0; BailingMoELinearModel asserts num_hidden_layers % layer_group_size == 0.
Configs: NO real Ling / Ring 2.5 config.json was found (searched the code index for BailingMoeV2_5ForCausalLM
configs, Ling-2.5-1T / Ring-2.5-1T / Ling-2.6-flash): the configs below are hand-written, the checkpoints' class
defaults (BailingMoeV2_5Config: inclusionAI/Ring-V2.5 models/configuration_bailing_moe_v2_5.py) with
layer_group_size written out as a real config carries it. Every expected value is worked out by hand below.
"""

from __future__ import annotations

import json

import pytest

from kvplan.engines.sglang import cell, pool
from kvplan.engines.sglang_rules import RULES
from kvplan.errors import UsageError
from kvplan.sources import load_model

GIB = 2**30
R0523, R059 = RULES["0.5.23"], RULES["0.5.9"]
V25 = {"model_type": "bailing_hybrid", "architectures": ["BailingMoeV2_5ForCausalLM"], "torch_dtype": "bfloat16",
       "layer_group_size": 5}


def _ling25(tmp_path, **changes):
    raw = dict(V25)
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return load_model(str(path))


def test_ling25_cell_and_lightning_state(tmp_path):
    # 20 layers, layer_group_size 5: MLA on 4, 9, 14, 19; cell 4 x (512 + 64) x 2 B = 4,608 B a token.
    # 16 lightning layers, each (16, 128, 128) float32 = 1,048,576 B, no conv: 16,777,216 B a request
    c = cell(_ling25(tmp_path), 1)
    assert (c.kind, c.bytes, c.full_layers) == ("mla", 4 * 576 * 2, 4) == ("mla", 4_608, 4)
    assert (c.state.conv_bytes, c.state.ssm_bytes, c.state.layers) == (0, 16 * 16 * 128 * 128 * 4, 16)
    assert c.state.bytes == 16_777_216


@pytest.mark.parametrize("rules,states,requests", [(R0523, 605, 605 // 5), (R059, 606, 606)])
def test_ling25_state_pool(tmp_path, rules, states, requests):
    # 20 GiB = 21,474,836,480 B; B = 20 GiB x 0.9 / 1.9 = 10,172,290,964.2; per = 16,777,216 (606.31 states)
    # 0.5.23: K = int((B - per) // per) = 605, tokens (20 GiB - 606 x per) // 4,608 = 11,307,843,584 // 4,608 =
    # 2,453,959; extra_buffer: requests <= 605 // 5 = 121 (the estimate is 4,096, tokens // 2 far above)
    # 0.5.9: K = int(B // per) = 606, the same 606 x per taken, so the same tokens; radix cache off: ratio 1, 606
    got = pool(_ling25(tmp_path), rest_bytes=20 * GIB, context_len=8192, rules=rules)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (states, 2_453_959, requests)
    # the state log line: (K + 1) states x per = 606 x 16 MiB = 9.47 GiB (0.5.23), 607 x 16 MiB = 9.48 GiB (0.5.9)
    assert got.log_lines()[0].startswith(f"Mamba Cache is allocated. max_mamba_cache_size: {states}, "
                                         "conv_state size: 0.00GB, ssm_state size: 9.4")


def test_ling25_059_given_requests_size_the_state_pool(tmp_path):
    # 0.5.9 handle_max_mamba_cache, radix cache off and max_running_requests 64 given: 64 states, no ratio split;
    # tokens (21,474,836,480 - 64 x 16,777,216) // 4,608 = 20,401,094,656 // 4,608 = 4,427,320
    got = pool(_ling25(tmp_path), rest_bytes=20 * GIB, context_len=8192, rules=R059, max_running_requests=64)
    assert (got.mamba_cache_size, got.max_total_num_tokens, got.max_running_requests) == (64, 4_427_320, 64)


def test_ling25_tensor_parallel_shards_the_state_heads(tmp_path):
    # --tp 2 with group_norm_size 4 (the checkpoints' class default, written out): 8 heads a rank, 16 x 8 x 128 x
    # 128 x 4 B = 8,388,608 B a request; the MLA latent is not sharded: still 4,608 B a token
    c = cell(_ling25(tmp_path, group_norm_size=4), 2)
    assert (c.bytes, c.state.bytes) == (4_608, 16 * 8 * 128 * 128 * 4) == (4_608, 8_388_608)


@pytest.mark.parametrize("changes, tp, message", [
    ({}, 2, "group_norm_size is 1 \\(SGLang's BailingHybridConfig default\\)"),  # 1 < tp 2: SGLang asserts
    ({"group_norm_size": 4}, 8, "tp <= group_norm_size"),
    ({"group_norm_size": 6, "num_attention_heads": 12, "hidden_size": 1536}, 8, "does not divide"),
    ({"layer_group_size": None}, 1, "its default 1"),  # SGLang's 1 (every layer full) against the checkpoints' 5
    ({"num_hidden_layers": 22}, 1, "num_hidden_layers 22 % layer_group_size 5"),
    ({"full_attention_type": "gqa"}, 1, "GQA"),
    ({"short_conv_kernel_size": 4}, 1, "use_kda"),
    ({"num_linear_key_value_heads": 8}, 1, "num_linear_key_value_heads 8"),
])
def test_ling25_where_sglang_pools_otherwise_or_does_not_start(tmp_path, changes, tp, message):
    with pytest.raises(UsageError, match=message):
        cell(_ling25(tmp_path, **changes), tp)


def test_ling25_059_pools_a_short_conv_config_as_lightning(tmp_path):
    # 0.5.9's BailingHybridConfig has no use_kda: hybrid_lightning_config takes every bailing_hybrid config, so the
    # 0.5.23 refusal above does not apply; the state is the same 16,777,216 B
    assert cell(_ling25(tmp_path, short_conv_kernel_size=4), 1, rules=R059).state.bytes == 16_777_216


def test_ling25_cli(cli, tmp_path):
    _ling25(tmp_path)
    path = str(tmp_path / "config.json")
    rc, out, err = cli("estimate", path, "--kv-memory", "20GiB", "--context", "8k", "--engine", "sglang",
                       "--format", "json")
    assert rc == 0, err
    engine = json.loads(out)["engine"]
    assert (engine["cell_bytes"], engine["state_bytes_per_request"]) == (4_608, 16_777_216)
    assert (engine["mamba_cache_size"], engine["max_total_num_tokens"], engine["max_running_requests"]) == (
        605, 2_453_959, 121)
    # the default fraction on an H100 (81,559 MiB), TP 1, MLA: 512 + 8,192 x 1.5 + 256 x 2 + 1/8 x 1,024 + 1,536 (the
    # breakable prefill graphs' flat MLA reserve; lightning is not KDA, so they stay on) = 14,976 MiB ->
    # round((81,559 - 14,976) / 81,559, 3) = 0.816
    rc, out, err = cli("estimate", path, "--gpu", "h100", "--context", "8k", "--engine", "sglang", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["engine"]["mem_fraction_static"] == 0.816
    rc, out, err = cli("estimate", path, "--gpu", "h100", "--context", "8k", "--engine", "sglang", "--tp", "2")
    assert rc == 2 and "group_norm_size" in err and "Traceback" not in err
