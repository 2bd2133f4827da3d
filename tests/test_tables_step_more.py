"""Per-module tables of configs/weight_tables/step_more.py (Step-3.5 / 3.7's text model, step3p5) and the
parameter counts they mirror (configs/params_step.py). Figures worked out by hand from the config and the module
shapes of transformers 5.25 models/step3p7/modeling_step3p7.py and vLLM 0.34 model_executor/models/step3p5.py;
what vLLM holds whole on every TP rank: the table module's docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import checked_table, table
from kvplan.engines.vllm_load import config_weights_per_gpu
from tests.weight_table_checks import adds_up as _adds_up, per_gpu as _per_gpu

# Step-3.5-Flash (stepfun-ai/Step-3.5-Flash) in its hub config's shape. No verbatim copy of the hub's config.json
# was found with the search tools; the fields below are those public files agree on: the vLLM recipes'
# StepFun/Step-3.5-Flash.md (196B parameters, 11B active), the Step3p5Config defaults vendored in public ports
# (hidden 4,096, intermediate 11,264, 64 heads, 8 attention groups, 45 layers, moe_intermediate_size 1,280,
# 288 experts, top 8), test configs of public ports quoting the Step-3.5/3.7-Flash text config (vocab 128,896,
# head_dim 128, share_expert_dim 1,280, attention_other_setting of 96 heads on sliding layers,
# use_head_wise_attn_gate, full attention on every 4th layer, moe_layers_enum 3.., 3 MTP layers)
TYPES = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)]
STEP35_FLASH = {
    "architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096, "num_hidden_layers": 45,
    "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128, "intermediate_size": 11264,
    "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
                                "num_attention_groups": 8, "head_dim": 128},
    "use_head_wise_attn_gate": True, "moe_layers_enum": ",".join(str(i) for i in range(3, 48)),
    "sliding_window": 512, "layer_types": TYPES, "num_nextn_predict_layers": 3, "max_position_embeddings": 262144,
    "vocab_size": 128896, "moe_num_experts": 288, "moe_top_k": 8, "moe_intermediate_size": 1280,
    "share_expert_dim": 1280, "use_moe_router_bias": True, "need_fp32_gate": True, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16"}

# One layer of each kind (no biases):
# full (i % 4 == 0: 12 layers): q/o 2 x 4,096 x 64 x 128 = 67,108,864, k/v 2 x 4,096 x 8 x 128 = 8,388,608,
#   q_norm + k_norm 2 x 128, g_proj 4,096 x 64 = 262,144: 75,759,872
# sliding (33 layers): q/o 2 x 4,096 x 96 x 128 = 100,663,296, k/v 8,388,608, norms 256, g_proj 4,096 x 96 =
#   393,216: 109,445,376
# dense MLP (layers 0-2): 3 x 4,096 x 11,264 = 138,412,032
# MoE (layers 3-44, 42): experts 288 x 3 x 4,096 x 1,280 = 4,529,848,320, router 288 x 4,096 = 1,179,648 and its
#   bias 288, shared expert 3 x 4,096 x 1,280 = 15,728,640: 4,546,756,896
# two norms a layer 8,192; embeddings and the untied head 2 x 128,896 x 4,096 = 1,055,916,032; final norm 4,096
TOTAL = 12 * 75_759_872 + 33 * 109_445_376 + 45 * 8_192 + 3 * 138_412_032 + 42 * 4_546_756_896 + 1_055_916_032 + 4_096
# held whole on every TP rank: per layer two norms + q_norm / k_norm 8,448, the final norm, the 42 routers and biases
WHOLE = 45 * 8_448 + 4_096 + 42 * (1_179_648 + 288)


def test_step35_flash_counts_sliding_heads_the_head_gate_the_moe_layers_and_the_shared_expert():
    # (Before: the generic counter read no expert count under moe_num_experts and no sliding heads:
    # 10,682,216,448 parameters, every layer a 64-head layer with a dense MLP)
    model = build_model(STEP35_FLASH, "step-3.5-flash")
    assert TOTAL == 196_956_130_368 and model.param_count == TOTAL
    # active: 8 of 288 experts, 8 x 3 x 4,096 x 1,280 = 125,829,120 instead of 4,529,848,320 in each MoE layer
    assert model.active_param_count == TOTAL - 42 * (4_529_848_320 - 125_829_120) == 11_987_323_968
    _adds_up(STEP35_FLASH, "step-3.5-flash")


def test_step35_flash_keeps_norms_and_routers_whole_and_splits_the_rest():
    model = build_model(STEP35_FLASH, "step-3.5-flash")
    assert WHOLE == 49_941_568 and model.weight_replicated_bytes == 2 * WHOLE == 99_883_136
    # TP 4: (196,956,130,368 - 49,941,568) x 2 B / 4 = 98,453,094,400 split, plus the whole 99,883,136
    assert _per_gpu(model, 45, 4) == 98_453_094_400 + 99_883_136 == 98_552_977_536
    assert config_weights_per_gpu(model, 4, 1, "0.34.0") == 98_552_977_536
    # TP 16 > 8 KV heads: each rank holds one KV head of k_proj / v_proj (1/8 of them, not 1/16): the KV share
    # 45 x 2 x 4,096 x 1,024 = 377,487,360 parameters, 2 B each
    kv = 45 * 2 * 4_096 * 1_024
    split = (TOTAL - WHOLE - kv) * 2 // 16
    assert _per_gpu(model, 45, 16) == split + kv * 2 // 8 + 2 * WHOLE == 24_760_342_656


def test_step35_names_its_modules_as_the_checkpoint_does():
    family, f, _, layers, dims = _read(STEP35_FLASH, "step-3.5-flash")
    names = {m.name: m for m in table(f, layers, dims)}
    # layer 3: the first MoE layer (sliding: 96 heads); its experts are one stacked tensor a projection
    assert names["layers.3.moe.gate_proj"].weight == 288 * 4_096 * 1_280 and names["layers.3.moe.gate_proj"].experts == 288
    assert names["layers.3.moe.gate"].other == 288 * 4_096 and names["layers.3.moe.router_bias"].other == 288
    assert names["layers.3.share_expert.down_proj"].weight == 1_280 * 4_096
    assert names["layers.3.self_attn.g_proj"].weight == 4_096 * 96
    assert names["layers.4.self_attn.q_proj"].weight == 4_096 * 64 * 128  # a full layer: 64 heads
    assert "layers.2.mlp.gate_proj" in names and "layers.2.moe.gate" not in names
    assert not any(n.startswith("layers.45.") for n in names)  # the MTP layers are not the decoder's


def test_step35_without_the_head_wise_gate_and_with_per_layer_config():
    # use_head_wise_attn_gate false: vLLM 0.34 Step3p5Attention builds no g_proj: 12 x 262,144 + 33 x 393,216 fewer
    raw = dict(STEP35_FLASH, use_head_wise_attn_gate=False)
    assert build_model(raw, "no-gate").param_count == TOTAL - 12 * 262_144 - 33 * 393_216 == 196_940_008_512
    _adds_up(raw, "no-gate")
    # a per_layer_config (transformers' saved form) wins over attention_other_setting: layer 1 at 32 heads,
    # every other layer at num_attention_heads 64: the 33 sliding layers lose 32 heads each, layer 1 64
    per_layer = dict(STEP35_FLASH, per_layer_config={"1": {"num_attention_heads": 32}})
    sliding_64 = 2 * 4_096 * 64 * 128 + 2 * 4_096 * 8 * 128 + 256 + 4_096 * 64
    sliding_32 = 2 * 4_096 * 32 * 128 + 2 * 4_096 * 8 * 128 + 256 + 4_096 * 32
    want = TOTAL - 33 * 109_445_376 + 32 * sliding_64 + sliding_32
    assert want == 195_810_823_232
    assert build_model(per_layer, "per-layer").param_count == want
    _adds_up(per_layer, "per-layer")


def test_step35_an_unreadable_moe_layers_enum_is_said_not_guessed():
    # the counter names the field; the plan says the parameters were not counted (no table either)
    model = build_model(dict(STEP35_FLASH, moe_layers_enum="3,x"), "bad")
    assert model.param_count == 0 and any("moe_layers_enum" in note for note in model.notes)
    assert checked_table(dict(STEP35_FLASH, moe_layers_enum="3,x"), "bad") is None


def test_step35_counter_matches_transformers_on_the_meta_device():
    # a small hub-form config (legacy layer_types with one trailing MTP entry, attention_other_setting, a
    # moe_layers_enum that skips layer 3), with and without biases, tied or not: transformers 5.25's
    # Step3p7TextModel (plus an LM head of vocab x hidden unless tied) against the counter
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import warnings

    from transformers import Step3p7TextConfig
    from transformers.models.step3p7.modeling_step3p7 import Step3p7TextModel

    raw = {"model_type": "step3p5", "hidden_size": 64, "num_hidden_layers": 7, "num_attention_heads": 4,
           "num_attention_groups": 2, "head_dim": 16, "intermediate_size": 96, "vocab_size": 100,
           "moe_num_experts": 4, "moe_top_k": 2, "moe_intermediate_size": 32, "share_expert_dim": 24,
           "moe_layers_enum": "1,2,4,5,6,7", "num_nextn_predict_layers": 1, "sliding_window": 8,
           "layer_types": ["full_attention"] + ["sliding_attention"] * 3 + ["full_attention"]
           + ["sliding_attention"] * 3,
           "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 6},
           "use_head_wise_attn_gate": True}
    for extra in ({}, {"attention_bias": True, "mlp_bias": True}, {"tie_word_embeddings": True}):
        one = {**raw, **extra}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = Step3p7TextConfig(**{k: v for k, v in one.items() if k != "model_type"})
            saved = json.loads(config.to_json_string(use_diff=True))
            with torch.device("meta"):
                model = Step3p7TextModel(config)
        theirs = sum(p.numel() for p in model.parameters()) + sum(
            b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
        theirs += 0 if config.tie_word_embeddings else 100 * 64
        assert [layer.self_attn.num_heads for layer in model.layers] == [4, 6, 6, 6, 4, 6, 6]
        for form in (one, saved):  # the hub's form and transformers' saved form (per_layer_config)
            family, f, _, layers, dims = _read(form, "tiny")
            assert family.params(f, layers, dims)[0] == theirs
            _adds_up(form, "tiny")


# -- Muse Spark's text model (muse_spark_text) ------------------------------------------------------------------

# No public Muse Spark config was found with the search tools: MuseSparkTextConfig's defaults (transformers 5.25
# configuration_muse_spark.py, whose docstring ties output_multiplier to "the released checkpoint"), written out
MUSE_SPARK_TEXT = {
    "model_type": "muse_spark_text", "hidden_size": 8192, "num_hidden_layers": 62, "num_attention_heads": 128,
    "num_key_value_heads": 16, "head_dim": 64, "intermediate_size": 16384, "vocab_size": 202048,
    "num_local_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 4096, "moe_hidden_size": 4096,
    "sliding_window": 2048, "tie_word_embeddings": False}
# per layer: q_proj, gate_proj, o_proj 3 x 8,192 x 128 x 64 = 201,326,592, k/v_proj 2 x 8,192 x 16 x 64 =
# 16,777,216 (qk_norm / o_norm have no weight); input / pre_ / post_feedforward_layernorm and the two residual
# gates 5 x 8,192 = 40,960; the MoE: router 256 x 8,192 = 2,097,152 and its bias 256, pre_expert_proj and
# post_expert_proj 2 x 8,192 x 4,096 = 67,108,864, pre_expert_norm and post_expert_norm 2 x 4,096 = 8,192, the
# experts at width 4,096: 256 x 3 x 4,096 x 4,096 = 12,884,901,888. Together 13,172,261,120 a layer
MUSE_LAYER = 201_326_592 + 16_777_216 + 40_960 + 2_097_152 + 256 + 67_108_864 + 8_192 + 12_884_901_888
# embeddings and the untied head 2 x 202,048 x 8,192 = 3,310,354,432, the final norm 8,192
MUSE_TOTAL = 62 * MUSE_LAYER + 3_310_354_432 + 8_192
# whole on every TP rank: the five vectors, the router and bias, pooler and unpooler, the two expert norms a
# layer (40,960 + 2,097,408 + 67,108,864 + 8,192 = 69,255,424), the final norm
MUSE_WHOLE = 62 * 69_255_424 + 8_192


def test_muse_spark_text_counts_the_pooled_moe_and_the_output_gate():
    # (Before: the generic counter, 2,325,824 against transformers' 2,087,992 on the harness's shrunk config)
    model = build_model(MUSE_SPARK_TEXT, "muse-spark")
    assert MUSE_LAYER == 13_172_261_120 and MUSE_TOTAL == 819_990_552_064 and model.param_count == MUSE_TOTAL
    # active: 8 of 256 experts, 8 x 3 x 4,096 x 4,096 = 402,653,184 instead of 12,884,901,888 a layer
    assert model.active_param_count == MUSE_TOTAL - 62 * (12_884_901_888 - 402_653_184) == 46_091_132_416
    _adds_up(MUSE_SPARK_TEXT, "muse-spark")
    # the wrapper reads the same text model
    wrapped = build_model({"model_type": "muse_spark", "text_config": MUSE_SPARK_TEXT}, "muse-spark-wrapped")
    assert wrapped.param_count == MUSE_TOTAL


def test_muse_spark_text_keeps_the_pooler_and_unpooler_whole():
    model = build_model(MUSE_SPARK_TEXT, "muse-spark")
    assert MUSE_WHOLE == 4_293_844_480 and model.weight_replicated_bytes == 2 * MUSE_WHOLE == 8_587_688_960
    # TP 8: (819,990,552,064 - 4,293,844,480) x 2 B / 8 = 203,924,176,896 split, plus the whole 8,587,688,960
    assert _per_gpu(model, 62, 8) == 203_924_176_896 + 8_587_688_960 == 212_511_865_856
    assert config_weights_per_gpu(model, 8, 1, "0.34.0") == 212_511_865_856
    family, f, _, layers, dims = _read(MUSE_SPARK_TEXT, "muse-spark")
    names = {m.name: m for m in table(f, layers, dims)}
    pooler = names["layers.0.mlp.pre_expert_proj"]
    assert pooler.whole and pooler.weight == 8_192 * 4_096 and names["layers.0.mlp.post_expert_proj"].whole
    assert names["layers.0.mlp.experts.gate_up_proj"].weight == 256 * 2 * 4_096 * 4_096


def test_muse_spark_text_dense_layers():
    # mlp_layer_types: a dense layer holds gate/up/down_proj of intermediate_size, 3 x 8,192 x 16,384 =
    # 402,653,184, instead of the MoE's 69,214,464 + 12,884,901,888
    raw = dict(MUSE_SPARK_TEXT, mlp_layer_types=["dense"] + ["sparse"] * 61)
    want = MUSE_TOTAL - (2_097_408 + 67_108_864 + 8_192 + 12_884_901_888) + 402_653_184
    assert build_model(raw, "muse-dense").param_count == want == 807_439_088_896
    _adds_up(raw, "muse-dense")


# -- Inkling under vLLM's own config type (inkling_model) ------------------------------------------------------

INKLING = json.loads((Path(__file__).parent / "data" / "configs" / "inkling-small-text-quoted.json").read_text())
# its text_config: hidden 4,096, 42 layers (35 local: local_layer_ids; full: 5, 11, ..., 41), 32 heads and 8 KV
# heads of 128 on both kinds, d_rel 16, rel_extent 1,024 (local: sliding_window_size 512), kernel 4; layers 0-1
# dense (dense_intermediate_size 16,384), the rest MoE (256 routed + 2 sink experts of intermediate_size 2,048);
# vocab 201,024; use_global_scale / use_gate_bias / use_embed_norm absent (InklingModelConfig: False)
# a layer's attention and its vectors: wq_du / wo_ud 2 x 4,096 x 4,096 = 33,554,432, wk_dv / wv_dv 2 x 4,096 x
# 1,024 = 8,388,608, wr_du 4,096 x 32 x 16 = 2,097,152, q/k_norm 256, k/v_sconv 2 x 1,024 x 4 = 8,192,
# attn_norm + mlp_norm 8,192, attn_sconv + mlp_sconv 2 x 4,096 x 4 = 32,768: 44,089,600, plus
# rel_logits_proj.proj 16 x 1,024 = 16,384 (full) or 16 x 512 = 8,192 (local)
INK_FULL, INK_LOCAL = 44_089_600 + 16_384, 44_089_600 + 8_192
INK_DENSE = 3 * 4_096 * 16_384  # w13_dn + w2_md: 201,326,592
# gate 258 x 4,096 = 1,056,768, experts 256 x 3 x 4,096 x 2,048 = 6,442,450,944, sinks 2 x 3 x 4,096 x 2,048 =
# 50,331,648
INK_MOE = 1_056_768 + 6_442_450_944 + 50_331_648
INK_TOTAL = 7 * INK_FULL + 35 * INK_LOCAL + 2 * INK_DENSE + 40 * INK_MOE + 2 * 201_024 * 4_096 + 4_096
# whole: q/k_norm, attn/mlp_norm and rel_logits_proj a layer (24,832 full, 16,640 local), the 40 gates, the
# replicated embed 823,394,304 (InklingReplicatedEmbedding), the final norm
INK_WHOLE = 7 * 24_832 + 35 * 16_640 + 40 * 1_056_768 + 201_024 * 4_096 + 4_096


def test_inkling_model_names_the_tml_tensors_and_adds_up():
    model = build_model(INKLING, "inkling")
    assert INK_TOTAL == 263_655_184_896 and model.param_count == INK_TOTAL
    modules = _adds_up(INKLING, "inkling")
    names = {m.name: m for m in modules}
    assert names["layers.5.attn.rel_logits_proj.proj"].other == 16 * 1_024
    assert names["layers.0.mlp.w13_dn"].weight == 4_096 * 2 * 16_384
    assert names["layers.2.mlp.experts.w13_weight"].weight == 256 * 2 * 2_048 * 4_096
    assert names["layers.2.mlp.shared_experts.shared_w2_weight"].weight == 2 * 4_096 * 2_048
    assert names["model.llm.unembed"].top and "layers.2.mlp.gate.bias" not in names
    # a checkpoint's own name matches under model.llm.
    assert "model.llm.layers.3.attn.wq_du" in names["layers.3.attn.wq_du"].names()


@pytest.mark.parametrize("version, more", [("0.25.0", 0), ("0.26.0", 1_966_080), ("0.34.0", 1_966_080)])
def test_vllm_pads_inkling_gate_rows_to_a_multiple_of_8(version, more):
    # models/inkling/nvidia/moe.py InklingGate (0.26.0 to 0.34.0): 256 routed + 2 sink experts = 258 rows, padded
    # to 264: 6 x 4,096 more a MoE layer, 40 layers, BF16, whole on every rank: 1,966,080 B a GPU at TP 8 over the
    # checkpoint's 67,430,040,576 (0.25.0 has no vllm/models/inkling: nothing added)
    from kvplan.engines.vllm_profile import predict_available
    from kvplan.sources import load_model

    model = load_model(str(Path(__file__).parent / "data" / "configs" / "inkling-small-text-quoted.json"))
    est = predict_available(model, total_bytes=141 * 2**30, gpu_memory_utilization=0.9, tp=8, version=version)
    assert 6 * 4_096 * 40 * 2 == 1_966_080
    assert est.weight_bytes == 67_430_040_576 + more


def test_inkling_model_holds_the_embedding_norms_and_gates_whole():
    model = build_model(INKLING, "inkling")
    assert INK_WHOLE == 866_425_344 and model.weight_replicated_bytes == 2 * INK_WHOLE
    # TP 8: (263,655,184,896 - 866,425,344) x 2 B / 8 = 65,697,189,888 split, plus 1,732,850,688 whole
    assert _per_gpu(model, 42, 8) == 65_697_189_888 + 1_732_850_688 == 67_430_040_576
    # the flags add the gates' global_scale and bias, each dense MLP's global_scale and embed_norm, all whole
    flagged = dict(INKLING, text_config=dict(INKLING["text_config"], use_global_scale=True, use_gate_bias=True,
                                             use_embed_norm=True))
    extra = 40 * (1 + 256) + 2 * 1 + 4_096
    assert build_model(flagged, "inkling-flags").weight_replicated_bytes == 2 * (INK_WHOLE + extra)
    _adds_up(flagged, "inkling-flags")


# transformers 5.25 conversion_mapping.py "inkling_mm_model": the TML names -> transformers' (gate / up halves of
# the fused w13 tensors summed under one name)
_TML_TO_TRANSFORMERS = (
    ("embed_norm", "embed_tokens.embed_norm"), ("attn.wq_du", "self_attn.q_proj"), ("attn.wk_dv", "self_attn.k_proj"),
    ("attn.wv_dv", "self_attn.v_proj"), ("attn.wr_du", "self_attn.r_proj"), ("attn.wo_ud", "self_attn.o_proj"),
    (".attn.q_norm", ".self_attn.q_norm"), (".attn.k_norm", ".self_attn.k_norm"),
    (".attn.k_sconv", ".self_attn.k_sconv.conv1d"), (".attn.v_sconv", ".self_attn.v_sconv.conv1d"),
    (".attn.rel_logits_proj", ".self_attn.rel_logits_proj"), ("attn_sconv", "attn_sconv.conv1d"),
    ("mlp_sconv", "mlp_sconv.conv1d"), ("mlp_norm", "post_attention_layernorm"), ("attn_norm", "input_layernorm"),
    ("mlp.experts.w13_weight", "mlp.experts.gate_up_proj"), ("mlp.experts.w2_weight", "mlp.experts.down_proj"),
    ("mlp.shared_experts.shared_w13_weight", "mlp.shared_experts.gate_up"),
    ("mlp.shared_experts.shared_w2_weight", "mlp.shared_experts.down_proj"), ("mlp.w13_dn", "mlp.gate_up"),
    ("mlp.w2_md", "mlp.down_proj"), ("mlp.gate.bias", "mlp.gate.e_score_correction_bias"))


def test_inkling_model_renamed_as_transformers_renames_it_is_the_inkling_text_table():
    # with the three flags on (transformers always builds what they switch on), the same widths read as
    # inkling_text: hybrid_more.py's table, checked against transformers' modules by test_quant_exclude.py
    import re

    text = dict(INKLING["text_config"], use_global_scale=True, use_gate_bias=True, use_embed_norm=True)
    family, f, _, layers, dims = _read(text, "inkling")
    ours: dict[str, int] = {}
    for m in table(f, layers, dims):
        name = "lm_head" if m.name == "model.llm.unembed" else m.name
        for old, new in _TML_TO_TRANSFORMERS:
            name = name.replace(old, new)
        name = "embed_tokens" if name == "embed" else name
        ours[name] = ours.get(name, 0) + m.weight + m.other
    family, f, _, layers, dims = _read(dict(text, model_type="inkling_text", conv_kernel_size=4), "inkling-text")
    theirs: dict[str, int] = {}
    for m in table(f, layers, dims):
        name = re.sub(r"\.(gate_proj|up_proj)$", ".gate_up", m.name)
        theirs[name] = theirs.get(name, 0) + m.weight + m.other
    assert ours == theirs


# -- Step-5: a counter only (no per-module table yet) ----------------------------------------------------------

def test_step5_preview_counts_what_its_safetensors_headers_hold():
    # tests/data/configs/step-5-preview-reconstructed.json; the shapes below are those a public study of
    # rene98c/Step-5-Preview-BF16's safetensors headers lists (every shard's header read; 2,449 tensors), which
    # match vLLM 0.34 models/step5/nvidia/model.py's modules:
    # every layer: q_proj / o_proj [12288, 4096] (64 heads x 192), k_proj / v_proj [768, 4096], g_proj [64, 4096],
    #   q_norm / k_norm [192], two norms [4096]: 107,225,472
    # the 23 full_attention layers (3, 7, ..., 91) add the sparse indexer: sparse_indexer_q [4096, 4096],
    #   sparse_indexer_k / _z [256, 4096], sparse_indexer_w [16, 4096], ssmax_s [64], sparse_indexer_q_norm [256],
    #   sparse_indexer_k_norm weight and bias [256]: 18,940,736
    # MoE layers 3-90 (88): moe.gate [352, 4096], moe.router_bias [352], moe.gate_proj / up_proj [352, 1536, 4096],
    #   moe.down_proj [352, 4096, 1536], share_expert 3 x 1,536 x 4,096: 6,664,094,048
    # dense layers 0-2 and 91: mlp 3 x 13,824 x 4,096 = 169,869,312
    # embed_tokens and lm_head 2 x 128,896 x 4,096 = 1,055,916,032, norm 4,096; the 3 MTP layers not counted
    # (Before: no count at all: "parameters not counted")
    raw = json.loads((Path(__file__).parent / "data" / "configs" / "step-5-preview-reconstructed.json").read_text())
    total = 92 * 107_225_472 + 23 * 18_940_736 + 88 * 6_664_094_048 + 4 * 169_869_312 + 1_055_916_032 + 4_096
    model = build_model(raw, "step-5")
    assert model.param_count == total == 598_476_053_952
    # active: 8 of 352 experts a MoE layer
    assert model.active_param_count == total - 88 * (352 - 8) * 3 * 1_536 * 4_096 == 27_111_185_856
    # a DSA layer without the head-wise gate is one vLLM 0.34 refuses: not counted, said in a note
    ungated = dict(raw, text_config=dict(raw["text_config"], use_head_wise_attn_gate=False))
    model = build_model(ungated, "step-5-ungated")
    assert model.param_count == 0 and any("use_head_wise_attn_gate" in note for note in model.notes)


def test_step5_preview_whole_parts_and_the_index_provider_split():
    raw = json.loads((Path(__file__).parent / "data" / "configs" / "step-5-preview-reconstructed.json").read_text())
    modules = _adds_up(raw, "step-5")
    # whole on every rank: q/k_norm and the two norms a layer 8,576 (x 92); on the 23 DSA layers the single index
    # key head sparse_indexer_k and sparse_indexer_z 2 x 256 x 4,096 = 2,097,152, ssmax_s 64, the indexer's q_norm
    # 256 and LayerNorm k_norm 512: 2,097,984; the 88 routers 352 x 4,096 + 352 = 1,442,144; the final norm
    whole = 92 * 8_576 + 23 * 2_097_984 + 88 * 1_442_144 + 4_096
    model = build_model(raw, "step-5")
    assert whole == 175_955_392 and model.weight_replicated_bytes == 2 * whole
    # shares split over min(TP, 4): k/v_proj by the 4 KV heads (92 x 2 x 768 x 4,096 = 578,813,952), and the
    # indexer's sparse_indexer_q (23 x 4,096 x 4,096 = 385,875,968) and sparse_indexer_w (23 x 16 x 4,096 =
    # 1,507,328) by the 4 index providers
    shares = 578_813_952 + 385_875_968 + 1_507_328
    split = 598_476_053_952 - whole - shares
    assert _per_gpu(model, 92, 4) == split * 2 // 4 + shares * 2 // 4 + 2 * whole == 299_501_960_064
    assert _per_gpu(model, 92, 8) == split * 2 // 8 + shares * 2 // 4 + 2 * whole == 150_168_484_736
    names = {m.name for m in modules}
    assert "layers.3.self_attn.sparse_indexer_w" in names and "layers.4.self_attn.sparse_indexer_w" not in names
    assert "layers.7.moe.router_bias" in names and "layers.91.mlp.down_proj" in names
