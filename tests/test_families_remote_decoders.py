"""Remote-code text decoders vLLM 0.33 serves, read exactly (kvplan/configs/remote_decoders.py): MiMo (mimo), MiniCPM
(minicpm), TeleChat2 (telechat), Orion (orion), Solar (solar), TeleFLM (teleflm), Step-1 (step1),
openPangu-Embedded (PanguEmbedded), PLaMo 3 (plamo3).

Configs (tests/data/configs/):
- mimo-7b.json: XiaomiMiMo/MiMo-7B's config.json as a public fine-tuning repository first committed it with the
  checkpoint files (jj8127/mimo_kor, commit 60c075c, config.json, byte for byte; its configuration_mimo.py is
  MiMoConfig(Qwen2Config) with num_nextn_predict_layers, and its model.safetensors.index.json says total_size
  15,666,819,072 with the model.mtp_layers.0.* tensors listed).
- minicpm-1b-longrope-note.json: the "full config.json" OpenBMB/MiniCPM's LongRoPE note for vLLM prints
  (code index id 60097118524), verbatim: MiniCPM-1B's fields (openbmb/CPM-2B, 52 layers of 1536) with the
  architecture renamed MiniCPMLongRopeForCausalLM by that note. Like early MiniCPM checkpoints it has no
  model_type (their config is found through auto_map), so kvplan refuses it until one is given.
- TeleChat2, Orion, Solar, TeleFLM and Step-1: no public config.json was found in the code index; the tests use
  small hand-written configs with the field names of each remote config class (Tele-AI's Telechat2Config: n_layer,
  n_head, ffn_hidden_size; StepConfig: num_attention_groups) and check the rules, not a checkpoint.
Expected values are worked out by hand from vLLM 0.33's model files (mimo.py / qwen2.py, minicpm.py,
telechat2.py / llama.py, orion.py, solar.py, teleflm.py, step1.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError
from kvplan.weights.mtp import with_mtp_estimate
from kvplan.weights.record import Weights
from kvplan.capacity.weights import served_bytes

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


# -- MiMo-7B --------------------------------------------------------------------------------------------------

MIMO_PARAMS = 7_622_619_136


def test_mimo_7b_bytes_per_token_by_hand():
    model = build_model(_raw("mimo-7b.json"), "mimo-7b")
    assert model.reading == "exact" and model.family == "mimo" and model.num_layers == 36
    # use_sliding_window false: MiMoConfig (Qwen2Config) drops the 32,768 window, every layer full;
    # K and V of 8 KV heads x 4,096 / 32 = 128, bf16: 2 x 36 x 8 x 128 x 2 B
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {None}
    assert estimate(model, 32768).bytes_per_token == 2 * 36 * 8 * 128 * 2 == 147_456


def test_mimo_7b_parameters_and_the_checkpoint_total():
    model = build_model(_raw("mimo-7b.json"), "mimo-7b")
    # embeddings and the untied head 2 x 151,680 x 4,096 = 1,242,562,560; per layer q and o 4,096 x 4,096,
    # k and v 4,096 x 1,024, q/k/v biases 4,096 + 2 x 1,024 (41,949,184), gated MLP 3 x 4,096 x 11,008
    # (135,266,304), two RMSNorms 8,192: 177,223,680 x 36 = 6,380,052,480; final norm 4,096
    assert model.param_count == 1_242_562_560 + 6_380_052_480 + 4_096 == MIMO_PARAMS
    # the checkpoint's index: 15,666,819,072 B in bf16 = 7,833,409,536 parameters = the model plus one MTP layer
    # (input_proj 2 x 4,096 x 4,096 = 33,554,432, three norms 12,288, a decoder layer 177,223,680)
    assert 15_666_819_072 // 2 == MIMO_PARAMS + 33_554_432 + 12_288 + 177_223_680


def test_mimo_7b_checkpoint_total_less_its_mtp_module_is_the_served_model():
    raw = _raw("mimo-7b.json")
    model = build_model(raw, "mimo-7b")
    w = with_mtp_estimate(Weights(total_bytes=15_666_819_072, source="index"), model, raw)
    # (177,223,680 + 33,554,432) x 2 B + 3 x 4,096 x 2 B
    assert w.mtp_estimated_bytes == (177_223_680 + 33_554_432) * 2 + 3 * 4_096 * 2 == 421_580_800
    assert served_bytes(w, model.num_layers) == 2 * MIMO_PARAMS


def test_mimo_sliding_window_covers_every_layer_or_is_refused():
    raw = {**_raw("mimo-7b.json"), "use_sliding_window": True}
    model = build_model(raw, "mimo-swa")  # max_window_layers 36 = every layer: vLLM slides all of them
    assert {(layer.caches[0].policy.window_tokens) for layer in model.layers} == {32768}
    with pytest.raises(ConfigError, match="max_window_layers 28 < 36"):
        build_model({**raw, "max_window_layers": 28}, "mimo-swa")


# -- MiniCPM ------------------------------------------------------------------------------------------------

def test_minicpm_without_model_type_is_one_line():
    with pytest.raises(ConfigError, match="no 'model_type'"):
        build_model(_raw("minicpm-1b-longrope-note.json"), "minicpm-1b")


def test_minicpm_1b_bytes_and_parameters_by_hand():
    raw = {**_raw("minicpm-1b-longrope-note.json"), "model_type": "minicpm"}
    model = build_model(raw, "minicpm-1b")
    assert model.reading == "exact" and model.family == "minicpm"
    # 8 KV heads of 1,536 / 24 = 64, K and V on 52 layers, bf16
    assert estimate(model, 4096).bytes_per_token == 2 * 52 * 8 * 64 * 2 == 106_496
    # the config does not say tie_word_embeddings, and the remote class copies disagree: not counted
    assert not model.param_count
    tied = build_model({**raw, "tie_word_embeddings": True}, "minicpm-1b")
    # embeddings 73,448 x 1,536 = 112,816,128 (tied); per layer q, o 1,536 x 1,536, k, v 1,536 x 512
    # (6,291,456), MLP 3 x 1,536 x 3,840 (17,694,720), norms 3,072: 23,989,248 x 52 = 1,247,440,896; norm 1,536
    assert tied.param_count == 112_816_128 + 1_247_440_896 + 1_536 == 1_360_258_560


def test_minicpm4_sparse_config_is_not_read_by_vllm():
    raw = {**_raw("minicpm-1b-longrope-note.json"), "model_type": "minicpm", "tie_word_embeddings": True,
           "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "init_blocks": 1, "block_size": 64,
                             "window_size": 2048, "topk": 64, "use_nope": False, "dense_len": 8192}}
    model = build_model(raw, "minicpm4-like")
    assert estimate(model, 4096).bytes_per_token == 106_496  # unchanged: every token cached
    assert any("InfLLM v2" in note for note in model.notes)


def test_minicpm_moe_parameters():
    raw = {"model_type": "minicpm", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
           "num_hidden_layers": 2, "intermediate_size": 32, "vocab_size": 100, "tie_word_embeddings": True,
           "num_experts": 8, "num_experts_per_tok": 2}
    model = build_model(raw, "minicpm-moe")
    # attention 2 x 64 x 64 + 2 x 64 x 32 = 12,288; experts 8 x 3 x 64 x 32 = 49,152; router 64 x 8 = 512;
    # norms 128: 62,080 a layer; embeddings 6,400 and final norm 64
    assert model.param_count == 6_400 + 64 + 2 * 62_080 == 130_624
    # a token runs 2 of the 8 experts: 6 x 6,144 idle a layer
    assert model.active_param_count == 130_624 - 2 * 6 * 6_144


# -- TeleChat2, Orion, Solar, TeleFLM, Step-1 (hand-written configs) --------------------------------------------

TELECHAT = {"model_type": "telechat", "architectures": ["TeleChat2ForCausalLM"], "hidden_size": 64, "n_layer": 2,
            "n_head": 4, "num_key_value_heads": 2, "ffn_hidden_size": 96, "vocab_size": 100}


def test_telechat_reads_its_own_field_names():
    model = build_model(TELECHAT, "telechat")
    assert model.reading == "exact" and model.num_layers == 2
    # 2 KV heads of 64 / 4 = 16: 2 x 2 layers x 2 x 16 x 2 B
    assert estimate(model, 1024).bytes_per_token == 2 * 2 * 2 * 16 * 2 == 256
    # tied (PretrainedConfig's default) 100 x 64 = 6,400; per layer q, o 4,096 each, k, v 64 x 32 each, dense's
    # bias 64 (12,352), gated MLP 3 x 64 x 96 + down_proj's bias 64 (18,496), norms 128; final norm 64
    assert model.param_count == 6_400 + 2 * (12_352 + 18_496 + 128) + 64 == 68_416


def test_telechat_without_kv_heads_is_refused():
    raw = dict(TELECHAT)
    del raw["num_key_value_heads"]
    with pytest.raises(ConfigError, match="num_key_value_heads"):
        build_model(raw, "telechat")
    # a public TeleChat MoE research config (962086838/LLaMA-Factory config.json, code index id 37167459472) carries
    # num_moe_experts 16, which vLLM's TeleChat2 does not build
    with pytest.raises(ConfigError, match="num_moe_experts"):
        build_model({**TELECHAT, "num_moe_experts": 16, "expert_chosen": 2}, "telechat-moe")


def test_orion_layer_norms_have_biases():
    raw = {"model_type": "orion", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 4, "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": False}
    model = build_model(raw, "orion")
    assert estimate(model, 1024).bytes_per_token == 2 * 2 * 4 * 16 * 2 == 512
    # embeddings and head 12,800; attention 4 x 4,096; MLP 18,432; two LayerNorms 2 x 128; final LayerNorm 128
    assert model.param_count == 12_800 + 2 * (16_384 + 18_432 + 256) + 128 == 83_072
    del raw["tie_word_embeddings"]
    assert not build_model(raw, "orion").param_count  # the class default was not read: not counted


def test_solar_skip_connections_cache_nothing():
    raw = {"model_type": "solar", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": False,
           "bskcn_1": [0], "bskcn_2": [1], "bskcn_3": [2], "bskcn_4": [3], "bskcn_tv": [0.9, 0.8],
           "sliding_window": None}
    model = build_model(raw, "solar")
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {None}
    assert estimate(model, 1024).bytes_per_token == 2 * 4 * 2 * 16 * 2 == 512
    # 12,800 + 4 x (4,096 + 2 x 2,048 + 4,096 + 18,432 + 128) + 64
    assert model.param_count == 12_800 + 4 * 30_848 + 64 == 136_256


def test_teleflm_is_llamas_rule():
    raw = {"model_type": "teleflm", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 4, "intermediate_size": 96, "vocab_size": 100, "tie_word_embeddings": False,
           "use_mup": True, "mup_scale_factor": 8, "output_mult": 1.0, "sliding_window": 512}
    model = build_model(raw, "teleflm")
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {512}
    assert model.param_count == 12_800 + 2 * (16_384 + 18_432 + 128) + 64 == 82_752


def test_step1_kv_heads_are_attention_groups():
    raw = {"model_type": "step1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_attention_groups": 2, "intermediate_size": 96, "vocab_size": 100}
    model = build_model(raw, "step1")
    assert estimate(model, 1024).bytes_per_token == 2 * 2 * 2 * 16 * 2 == 256
    # tied by default: 6,400 + 2 x (4,096 + 2 x 2,048 + 4,096 + 18,432 + 128) + 64
    assert model.param_count == 6_400 + 2 * 30_848 + 64 == 68_160
    with pytest.raises(ConfigError, match="use_moe"):
        build_model({**raw, "use_moe": True}, "step1")


@pytest.mark.parametrize("name", ["minicpm", "mimo", "telechat", "orion", "solar", "teleflm", "step1", "PanguEmbedded", "plamo3"])
def test_rules_cite_vllm(name):
    from kvplan.configs.families import FAMILIES
    assert "vLLM 0.33" in FAMILIES[name].rules[0]


# -- openPangu-Embedded -------------------------------------------------------------------------------------

# openPangu-Embedded-7B's config.json fields as a public re-aliasing script's test lists them ("the fields of the
# real openPangu-Embedded-7B config.json that the rewrite reads", code index id 62448714441): a subset, every field
# vLLM 0.33's OpenPanguEmbeddedAttention and the counter read among them
PANGU_EMBEDDED_7B = {
    "architectures": ["PanguEmbeddedForCausalLM"], "model_type": "PanguEmbedded",
    "auto_map": {"AutoConfig": "configuration_openpangu_dense.PanguEmbeddedConfig",
                 "AutoModelForCausalLM": "modeling_openpangu_dense.PanguEmbeddedForCausalLM"},
    "bias": True, "attention_dropout": 0.0, "bos_token_id": 1, "pad_token_id": 0, "eos_token_id": 45892,
    "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12800, "max_position_embeddings": 32768,
    "num_attention_heads": 32, "num_hidden_layers": 34, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
    "rope_theta": 16000000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 153376,
}


def test_pangu_embedded_7b_by_hand():
    model = build_model(PANGU_EMBEDDED_7B, "openpangu-embedded-7b")
    assert model.reading == "exact" and model.family == "PanguEmbedded"
    # 8 KV heads x 4,096 / 32 = 128 on 34 layers, bf16
    assert estimate(model, 4096).bytes_per_token == 2 * 34 * 8 * 128 * 2 == 139_264
    # embeddings and head 2 x 153,376 x 4,096 = 1,256,456,192; per layer q, o 4,096 x 4,096, k, v 4,096 x 1,024,
    # 'bias' on q/k/v (4,096 + 2 x 1,024) and o (4,096): 41,953,280; MLP 3 x 4,096 x 12,800 = 157,286,400; norms
    # 8,192: 199,247,872 x 34 = 6,774,427,648; final norm 4,096
    assert model.param_count == 1_256_456_192 + 6_774_427_648 + 4_096 == 8_030_887_936


def test_pangu_embedded_interleaved_windows():
    model = build_model({**PANGU_EMBEDDED_7B, "interleaved_sliding_window": [None, 4096]}, "pe")
    assert [layer.caches[0].policy.window_tokens for layer in model.layers[:4]] == [None, 4096, None, 4096]
    every = build_model({**PANGU_EMBEDDED_7B, "interleaved_sliding_window": 2048}, "pe")
    assert {layer.caches[0].policy.window_tokens for layer in every.layers} == {2048}
    with pytest.raises(ConfigError, match="param_sink_number"):
        build_model({**PANGU_EMBEDDED_7B, "param_sink_number": 128}, "pe")


# -- PLaMo 3 ------------------------------------------------------------------------------------------------

# hand-written: the shapes of SGLang's Plamo3Config unit test (sglang test/.../test_plamo3.py, code index id
# 59807822217), whose expected layout for 8 layers, pattern 4, window 128 is [128, 128, 128, None] x 2; no
# public config.json of pfnet/plamo-3 was found in the code index
PLAMO3 = {"model_type": "plamo3", "architectures": ["Plamo3ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 8,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 128,
          "window_size": 128, "sliding_window_pattern": 4, "intermediate_size": 128, "vocab_size": 64}


def test_plamo3_layout_and_parameters():
    model = build_model(PLAMO3, "plamo3")
    assert [layer.caches[0].policy.window_tokens for layer in model.layers] == [128, 128, 128, None] * 2
    assert estimate(model, 1024).bytes_per_token == 2 * 8 * 2 * 16 * 2 == 1_024
    # tied embeddings 64 x 64 = 4,096; per layer q, o 64 x 64, k, v 64 x 32 (12,288), q_norm and k_norm 2 x 16,
    # MLP 3 x 64 x 128 = 24,576, four RMSNorms 256: 37,152 x 8 = 297,216; final norm 64
    assert model.param_count == 4_096 + 297_216 + 64 == 301_376


def test_plamo3_class_defaults():
    # Plamo3Config: 32 layers, sliding_window_pattern 8, window_size 2048: layers 7, 15, 23, 31 full
    model = build_model({"model_type": "plamo3", "hidden_size": 4096, "intermediate_size": 13312,
                         "vocab_size": 32000}, "plamo3-defaults")
    assert [i for i, layer in enumerate(model.layers) if layer.caches[0].policy.window_tokens is None] == [7, 15, 23, 31]
    assert {layer.caches[0].policy.window_tokens for layer in model.layers} == {None, 2048}
    # 4 KV heads x 128
    assert estimate(model, 4096).bytes_per_token == 2 * 32 * 4 * 128 * 2 == 65_536
