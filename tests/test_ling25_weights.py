"""Ling / Ring 2.5 (bailing_hybrid, BailingMoeV2_5ForCausalLM) module by module (configs/weight_tables/moe.py ling25)
and the parameters the engines build in float32 (configs/param_fp32.py _LING25_RULES), read in vLLM 0.34
models/bailing_moe_linear.py (and layers/mamba/linear/bailing_linear_attn.py), SGLang 0.5.23 (wheel) and 0.5.9
(sdist) python/sglang/srt/models/bailing_moe_linear.py. No real Ling 2.5 config.json is bundled
(tests/test_sglang_ling25.py): the config below is the checkpoints' class defaults (BailingMoeV2_5Config) with
layer_group_size 5 written out, group_norm_size 4 (so SGLang starts at TP 2) and moe_router_enable_expert_bias true.

Hand arithmetic shared by the tests (hidden 2,048, 16 heads x head_dim 128 = inner 2,048, vocab 157,184, 20 layers;
MLA on layers 4, 9, 14, 19 (layer_group_size 5), lightning on the other 16; layer 0 dense (first_k_dense_replace 1),
layers 1-19 MoE of 256 experts x 512, one shared expert of 512, expert_bias):
- embeddings and LM head 157,184 x 2,048 = 321,912,832 each; final norm 2,048
- lightning attention: query_key_value 2,048 x 6,144 = 12,582,912; query / key norms 2 x 128 = 256; g_proj
  2,048 x 2,048 = 4,194,304; g_norm 2,048; dense 4,194,304: 20,973,824
- MLA (no q_lora_rank): q_proj 2,048 x 16 x 192 = 6,291,456; kv_a_proj_with_mqa 2,048 x 576 = 1,179,648;
  kv_a_layernorm 512; kv_b_proj 512 x 16 x 256 = 2,097,152; dense 2,048 x 2,048 = 4,194,304: 13,763,072
- MoE: experts 256 x 3 x 2,048 x 512 = 805,306,368; router 2,048 x 256 = 524,288; expert_bias 256; shared
  3 x 2,048 x 512 = 3,145,728: 808,976,640. Dense MLP 3 x 2,048 x 5,120 = 31,457,280. Two norms a layer: 4,096
- total 2 x 321,912,832 + 2,048 + 16 x (20,973,824 + 4,096) + 4 x (13,763,072 + 4,096) + 19 x 808,976,640
  + 31,457,280 = 643,827,712 + 335,646,720 + 55,068,672 + 15,370,556,160 + 31,457,280 = 16,436,556,544
"""

from __future__ import annotations

import json

import pytest

from kvplan.configs import weight_tables
from kvplan.engines import sglang_fp32, vllm_fp32
from kvplan.sources import load_model

LING25 = {"model_type": "bailing_hybrid", "architectures": ["BailingMoeV2_5ForCausalLM"], "torch_dtype": "bfloat16",
          "layer_group_size": 5, "group_norm_size": 4, "moe_router_enable_expert_bias": True}
TOTAL = 16_436_556_544
LM_HEAD = 157_184 * 2_048  # 321,912,832
ROUTERS = 19 * (524_288 + 256)  # 19 MoE layers' gate and expert_bias: 9,966,336


def _load(tmp_path, **changes):
    raw = {**LING25, **changes}
    raw = {k: v for k, v in raw.items() if v is not None}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return load_model(str(path)), str(path)


def test_ling25_table_adds_up_to_the_count():
    checked = weight_tables.checked_table(dict(LING25), "ling25")
    assert checked is not None
    modules = {m.name: m for m in checked[1]}
    assert sum(m.weight + m.other for m in modules.values()) == TOTAL == 16_436_556_544
    assert modules["lm_head"].weight == LM_HEAD == 321_912_832
    # layer 4 is MLA (its output projection named attention.dense as the checkpoint names it), layer 3 lightning
    assert modules["layers.4.attention.dense"].weight == 2_048 * 2_048
    assert modules["layers.4.attention.kv_a_proj_with_mqa"].weight == 2_048 * 576 == 1_179_648
    assert modules["layers.3.attention.query_key_value"].weight == 2_048 * 6_144 == 12_582_912
    assert modules["layers.3.attention.g_norm"].other == 2_048
    assert modules["layers.0.mlp.down_proj"].weight == 5_120 * 2_048  # the one dense layer
    assert modules["layers.19.mlp.gate.expert_bias"].other == 256


def test_ling25_table_with_biases_and_a_query_lora():
    # use_bias: each lightning layer's query_key_value bias 6,144 + dense bias 2,048 = 8,192, x 16 = 131,072; the
    # dense MLP's 2 x 5,120 + 2,048 = 12,288; each shared expert's 2 x 512 + 2,048 = 3,072, x 19 = 58,368 (MLA has
    # no biases). q_lora_rank 1,536: q_a_proj 2,048 x 1,536 = 3,145,728 + q_a_layernorm 1,536 + q_b_proj 1,536 x
    # 3,072 = 4,718,592 = 7,865,856 in place of q_proj 6,291,456: + 1,574,400, x 4 = 6,297,600.
    # 16,436,556,544 + 131,072 + 12,288 + 58,368 + 6,297,600 = 16,443,055,872
    checked = weight_tables.checked_table({**LING25, "use_bias": True, "q_lora_rank": 1536}, "ling25")
    assert checked is not None
    assert sum(m.weight + m.other for m in checked[1]) == 16_443_055_872


@pytest.mark.parametrize("release", ["0.5.23", "0.5.9"])
def test_sglang_holds_the_lm_head_router_and_bias_in_float32(tmp_path, release):
    # bailing_moe_linear.py: ParallelLMHead(params_dtype=torch.float32) 321,912,832, split over TP by vocabulary
    # rows (157,184 is a multiple of 64 x TP for TP 1, 2: no padding); BailingMoE router_dtype (absent: float32)
    # and BailingMoEGate expert_bias float32, whole on every rank: 9,966,336. 331,879,168 parameters, + 2 B each.
    # TP 1: 663,758,336 B; TP 2: 321,912,832 x 2 / 2 + 9,966,336 x 2 = 321,912,832 + 19,932,672 = 341,845,504 B
    model, _ = _load(tmp_path)
    for tp, extra in ((1, 663_758_336), (2, 341_845_504)):
        up = sglang_fp32.upcast(model, release, tp=tp)
        assert (up.params, up.extra_bytes_per_param, up.stage_bytes) == (LM_HEAD + ROUTERS, 2, (extra,))


def test_sglang_router_in_bf16_and_no_expert_bias(tmp_path):
    # router_dtype "bf16": BailingMoE builds the gate in bfloat16; moe_router_enable_expert_bias left out: 0.5.23's
    # BailingHybridConfig defaults it to false, kvplan adds nothing for it. The LM head alone: 321,912,832 x 2 B
    model, _ = _load(tmp_path, router_dtype="bf16", moe_router_enable_expert_bias=None)
    up = sglang_fp32.upcast(model, "0.5.23", tp=1)
    assert (up.params, up.stage_bytes) == (LM_HEAD, (2 * LM_HEAD,)) == (321_912_832, (643_825_664,))


def test_sglang_puts_the_float32_lm_head_on_the_last_stage(tmp_path):
    # SGLang 0.5.23 bailing_moe_linear.py builds lm_head only `if self.pp_group.is_last_rank` (else PPMissingLayer):
    # at PP 2 (layers 0-9 and 10-19), router_dtype bf16 and no expert_bias, its 321,912,832 parameters x 2 B more
    # sit on the second stage, split over TP 2: 321,912,832 B; nothing on the first
    model, _ = _load(tmp_path, router_dtype="bf16", moe_router_enable_expert_bias=None)
    up = sglang_fp32.upcast(model, "0.5.23", tp=2, pp=2)
    assert up.stage_bytes == (0, LM_HEAD) == (0, 321_912_832)


def test_vllm_holds_the_router_and_bias_in_float32_not_the_lm_head(tmp_path):
    # vLLM 0.34 BailingMoeV25: GateLinear params_dtype float32 and gate.expert_bias float32 (whole); its
    # ParallelLMHead in the model dtype. 9,966,336 parameters, + 2 B: 19,932,672 B a GPU at any TP. 0.16.0 has no
    # bailing_moe_linear.py (0.17.0 is the first release read that builds it)
    model, _ = _load(tmp_path)
    up = vllm_fp32.upcast(model)
    assert (up.whole_params, up.split_params) == (ROUTERS, 0) == (9_966_336, 0)
    assert up.per_gpu_bytes(tp=2) == 19_932_672
    assert vllm_fp32.upcast(model, "0.16.0") is None


def test_the_sglang_pool_loses_the_float32_lm_head(cli, tmp_path):
    # SGLang's pool: int(T0 x mem_fraction_static) - the weights on a GPU. At TP 2 kvplan's weights a GPU are
    # 16,436,556,544 x 2 B / 2 = 16,436,556,544 for the split part, + what every rank holds whole, once more at 2 B
    # (/ 2 x 2): the routers and biases 9,966,336, MLA's kv_a_proj_with_mqa 4 x 1,179,648 = 4,718,592 and
    # kv_a_layernorm 4 x 512 = 2,048, the layer norms 20 x 4,096 = 81,920, the final norm 2,048, the lightning
    # query / key norms 16 x 256 = 4,096: 14,775,040 B. Then + 341,845,504 B of float32 (above)
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES
    from kvplan.engines.vllm_profile import driver_total_bytes

    _, path = _load(tmp_path)
    rc, out, err = cli("estimate", path, "--engine", "sglang", "--gpu", "h100", "--tp", "2", "--context", "8k",
                       "--mem-util", "0.85", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["capacity"]["weight_bytes_per_gpu"] == 16_436_556_544 + 14_775_040
    t0 = driver_total_bytes(lookup("h100")) - PRELOAD_BYTES - PRELOAD_TP_BYTES
    assert data["engine"]["kv_memory_bytes"] == int(t0 * 0.85) - (16_451_331_584 + 341_845_504)
    assert any("331,879,168 parameters SGLang holds in float32" in n for n in data["engine"]["notes"])
