"""Per-module tables of Nemotron-NAS, Mamba, Falcon-Mamba, Mamba-2, OLMo Hybrid, Zamba v1, GPT-Neo and RecurrentGemma
(configs/weight_tables/rest.py). They add up to the parameter counts, and the bytes each TP rank holds whole are
worked out here by hand from the configs (transformers 5.25 modeling_mamba.py, modeling_falcon_mamba.py,
modeling_mamba2.py, modeling_olmo_hybrid.py, modeling_zamba.py, modeling_gpt_neo.py, modeling_recurrent_gemma.py;
vLLM 0.34 nemotron_nas.py; what vLLM holds whole: the module's docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from tests.weight_table_checks import per_gpu as _per_gpu

ROOT = Path(__file__).resolve().parent.parent
SPECS, DATA = ROOT / "model_specs", ROOT / "tests" / "data" / "configs"
TYPES = ("nemotron-nas", "mamba", "falcon_mamba", "mamba2", "olmo_hybrid", "zamba", "gpt_neo", "recurrent_gemma",
         "iquestloopcoder", "lfm3", "domynedge", "moondream3")


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def _configs() -> list:
    bundled = [_raw(n) for n in ("mamba-2.8b", "falcon-mamba-7b", "mamba-codestral-7b", "olmo-hybrid-7b",
                                 "zamba-7b-v1", "gpt-neo-125m", "recurrentgemma-2b-it", "recurrentgemma-9b")]
    test = [json.loads((DATA / f"{n}.json").read_text()) for n in
            ("llama-3.3-nemotron-super-49b-v1", "iquest-coder-v1-40b-loop", "lfm3-audio-training-export-handwritten",
             "domyn-edge-defaults-handwritten", "moondream3-preview-shape")]
    return bundled + test


@pytest.mark.parametrize("raw", _configs(), ids=lambda raw: str(raw.get("model_type")))
def test_the_table_adds_up_to_the_parameter_count(raw):
    family, f, _, layers, dims = _read(raw, "rest")
    assert f.model_type in TYPES
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_nemotron_super_49b_keeps_only_the_norms_of_its_live_blocks_whole():
    raw = json.loads((DATA / "llama-3.3-nemotron-super-49b-v1.json").read_text())
    model = build_model(raw, "nemotron-super")
    # 80 layers of hidden 8,192, 64 query heads of 128; 49 keep attention (n_heads_in_group 8: 8 KV heads), 31 are
    # no_op; every FFN is live, of int(2 x ffn_mult x 8,192 / 3) rounded up to 256: ffn_mult 5.25 -> 28,672 (49
    # layers), 2.625 -> 14,336 (6), 0.5 -> 2,816 (6), 1.0 -> 5,632 (8), 1.3125 -> 7,168 (10), 3.28125 -> 17,920 (1)
    widths = 49 * 28672 + 6 * 14336 + 6 * 2816 + 8 * 5632 + 10 * 7168 + 17920
    attention = 2 * 8192 * 8192 + 2 * 8192 * 1024
    total = 49 * attention + 3 * 8192 * widths + (49 + 80 + 1) * 8192 + 2 * 128256 * 8192
    assert model.param_count == total == 49_867_145_216
    # whole: input_layernorm on the 49 attention layers, post_attention_layernorm on all 80, the final norm (no
    # biases: attention_bias and mlp_bias false)
    whole = (49 + 80 + 1) * 8192
    assert whole == 1_064_960 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (99,734,290,432 - 2,129,920) / 2 + 2,129,920
    assert _per_gpu(model, 80, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 49_868_210_176


def test_nemotron_nas_names_its_linear_replacements():
    raw = json.loads((DATA / "llama-3.3-nemotron-super-49b-v1.json").read_text())
    blocks = [dict(b) for b in raw["block_configs"]]
    blocks[1] = {"attention": {"replace_with_linear": True}, "ffn": {"replace_with_linear": True}}
    family, f, _, layers, dims = _read(dict(raw, block_configs=blocks), "nemotron-linear")
    modules = {m.name: m for m in table(f, layers, dims)}
    # the remote modeling_decilm.py's DeciLMLinearAttention / DeciLMLinearMLP: one hidden x hidden linear each,
    # with the layer's two norms
    assert modules["layers.1.self_attn.linear_attn"].weight == modules["layers.1.mlp.linear_mlp"].weight == 8192 ** 2
    assert "layers.1.self_attn.q_proj" not in modules and "layers.1.input_layernorm" in modules


def test_mamba_2_8b_float32_keeps_its_norms_whole():
    model = build_model(_raw("mamba-2.8b"), "mamba-2.8b")
    # 64 layers of hidden 2,560, inner 5,120, state 16, conv 4 (with a bias), dt_rank 160, no in/out biases;
    # vocab 50,280, tied; float32
    layer = (2560 + 2560 * 10240 + 5120 * 5 + 5120 * (160 + 32) + 160 * 5120 + 5120 + 5120 * 16 + 5120
             + 5120 * 2560)
    total = 64 * layer + 50280 * 2560 + 2560
    assert model.param_count == total == 2_768_345_600
    whole = 64 * 2560 + 2560  # layers.N.norm and norm_f
    assert whole == 166_400 and model.weight_replicated_bytes == 4 * whole
    # TP 2: (11,073,382,400 - 665,600) / 2 + 665,600
    assert _per_gpu(model, 64, 2) == (4 * total - 4 * whole) // 2 + 4 * whole == 5_537_024_000


def test_falcon_mamba_7b_counts_one_norm_a_layer():
    model = build_model(_raw("falcon-mamba-7b"), "falcon-mamba-7b")
    # FalconMambaBlock has one RMSNorm; its mixer's dt / b / c norms are weightless (FalconMambaWeightlessRMSNorm
    # holds a non-persistent buffer). 64 layers of hidden 4,096, inner 8,192, state 16, conv 4, dt_rank 256;
    # vocab 65,024, untied. Was 64 x 4,096 more
    layer = (4096 + 4096 * 16384 + 8192 * 5 + 8192 * (256 + 32) + 256 * 8192 + 8192 + 8192 * 16 + 8192
             + 8192 * 4096)
    total = 64 * layer + 2 * 65024 * 4096 + 4096
    assert model.param_count == total == 7_272_665_088
    whole = 64 * 4096 + 4096
    assert model.weight_replicated_bytes == 2 * whole == 532_480
    # TP 2, BF16: (14,545,330,176 - 532,480) / 2 + 532,480
    assert _per_gpu(model, 64, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 7_272_931_328


def test_mamba_codestral_splits_its_eight_groups():
    model = build_model(_raw("mamba-codestral-7b"), "mamba-codestral-7b")
    # 64 layers of hidden 4,096; 128 heads x 64 = 8,192 inner, 8 groups of state 128 (B and C 2,048 rows), conv 4
    # with a bias; vocab 32,768, untied. n_groups 8: vLLM splits B and C with the heads, nothing of the mixer whole
    layer = (4096 + 4096 * (2 * 8192 + 2048 + 128) + (8192 + 2048) * 5 + 3 * 128 + 8192 + 8192 * 4096)
    total = 64 * layer + 2 * 32768 * 4096 + 4096
    assert model.param_count == total == 7_285_403_648
    whole = 64 * 4096 + 4096
    assert model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (14,570,807,296 - 532,480) / 2 + 532,480
    assert _per_gpu(model, 64, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 7_285_669_888


def test_a_one_group_mamba2_holds_b_and_c_whole():
    raw = dict(_raw("mamba-codestral-7b"), n_groups=1)
    family, f, _, layers, dims = _read(raw, "codestral-one-group")
    from kvplan.configs.weight_tables import replicated_params

    # per layer the norm, in_proj's B and C rows 2 x 128 x 4,096 and conv1d's 256 channels x (4 + 1); norm_f
    assert replicated_params(table(f, layers, dims)) == 64 * (4096 + 256 * 4096 + 256 * 5) + 4096 == 67_457_024


def test_olmo_hybrid_7b_keeps_its_norms_and_gated_norms_whole():
    model = build_model(_raw("olmo-hybrid-7b"), "olmo-hybrid-7b")
    # 32 layers of hidden 3,840, every 4th attention (8 layers: 30 heads of 128, q_norm and k_norm over 3,840 each,
    # post_attention and post_feedforward norms); 24 Gated DeltaNet layers (o_norm over the 192-wide value heads,
    # attention_layer_norm and feedforward_layer_norm); the final norm. No biases
    whole = 8 * (3840 + 3840 + 2 * 3840) + 24 * (192 + 2 * 3840) + 3840
    assert whole == 315_648 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 7_430_870_688
    # TP 2, BF16: (14,861,741,376 - 631,296) / 2 + 631,296
    assert _per_gpu(model, 32, 2) == 7_431_186_336
    # vLLM 0.34 olmo_hybrid.py builds q/k/v/o without biases: a config with attention_bias gets no table
    family, f, _, layers, dims = _read(dict(_raw("olmo-hybrid-7b"), attention_bias=True), "olmo-biased")
    assert table(f, layers, dims) == []


def test_zamba_7b_holds_its_hybrid_linears_and_norms_whole():
    model = build_model(_raw("zamba-7b-v1"), "zamba-7b-v1")
    # 76 Mamba layers of hidden 3,712, each with its input_layernorm; 13 hybrid layers (2, then 7, 13, ..., 73)
    # add a linear 3,712 x 3,712 (whole, as Zamba2's ReplicatedLinear); the one shared block's input_layernorm over
    # attention_hidden_size 7,424 and pre_ff_layernorm; final_layernorm
    whole = 76 * 3712 + 13 * 3712 * 3712 + 7424 + 3712 + 3712
    assert whole == 179_423_232 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 7_232_490_496
    # TP 2, BF16: (14,464,980,992 - 358,846,464) / 2 + 358,846,464
    assert _per_gpu(model, 76, 2) == 7_411_913_728


def test_gpt_neo_125m_keeps_norms_positions_and_output_biases_whole():
    model = build_model(_raw("gpt-neo-125m"), "gpt-neo-125m")
    # 12 blocks of hidden 768: ln_1 and ln_2 (weight and bias), attn.attention.out_proj's and mlp.c_proj's biases;
    # wpe 2,048 x 768 (a plain embedding); ln_f
    whole = 12 * (2 * 2 * 768 + 768 + 768) + 2048 * 768 + 2 * 768
    assert whole == 1_629_696 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 125_198_592
    # TP 2, BF16: (250,397,184 - 3,259,392) / 2 + 3,259,392
    assert _per_gpu(model, 12, 2) == 126_828_288


def test_recurrentgemma_9b_keeps_norms_and_output_biases_whole():
    model = build_model(_raw("recurrentgemma-9b"), "recurrentgemma-9b")
    # 38 layers of hidden 4,096 (recurrent, recurrent, attention repeated: 12 attention, 26 recurrent): two norms
    # and mlp_block.down_proj's bias a layer, o_proj's bias on attention layers, linear_out's on recurrent ones;
    # final_norm
    whole = 38 * (2 * 4096 + 4096) + 12 * 4096 + 26 * 4096 + 4096
    assert whole == 626_688 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 8_579_977_216
    # one KV head of 256: at TP 2 vLLM's QKVParallelLinear gives each rank the whole head, so the 12 layers'
    # k_proj and v_proj (12 x 2 x 4,096 x 256 = 25,165,824) sit on both ranks too
    kv = 12 * 2 * 4096 * 256
    # TP 2, BF16: (17,159,954,432 - 1,253,376 - 50,331,648) / 2 + 1,253,376 + 50,331,648
    assert _per_gpu(model, 38, 2) == (2 * 8_579_977_216 - 2 * whole - 2 * kv) // 2 + 2 * whole + 2 * kv \
        == 8_605_769_728


def test_iquest_loop_coder_splits_its_gate_projections_with_the_heads():
    model = build_model(json.loads((DATA / "iquest-coder-v1-40b-loop.json").read_text()), "iquest-loop")
    # 80 layers of hidden 5,120, 40 query / 8 KV heads of 128, MLP 27,648, vocab 76,800 untied; per layer one
    # gate_projections.N of head_dim 128 -> 40 heads with a bias (vLLM 0.34 iquest_loopcoder.py LoopGateProjection,
    # a ColumnParallelLinear: split, bias too)
    layer = 2 * 5120 * 5120 + 2 * 5120 * 1024 + 3 * 5120 * 27648 + 2 * 5120 + 128 * 40 + 40
    total = 80 * layer + 2 * 76800 * 5120 + 5120
    assert model.param_count == total == 39_794_696_320
    whole = 80 * 2 * 5120 + 5120  # the two norms a layer and the final norm
    assert whole == 824_320 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (79,589,392,640 - 1,648,640) / 2 + 1,648,640
    assert _per_gpu(model, 80, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 39_795_520_640


def test_lfm3_audio_text_model_keeps_its_norms_whole():
    model = build_model(json.loads((DATA / "lfm3-audio-training-export-handwritten.json").read_text()), "lfm3")
    # the text model under "lfm" with Lfm3Config's defaults: 24 layers of hidden 2,048, attention where i % 4 == 2
    # or (i % 4 == 0 and i > 0) (11 layers: 16 query / 4 KV heads of 128, q_norm and k_norm over 128, the gate
    # 2,048 -> 16), short convolutions elsewhere (13: conv 2,048 x 7, in_proj 2,048 x 6,144, out_proj 2,048 x
    # 2,048, no biases); MLP 7,680; four norms a layer (sandwich); vocab 128,000 tied; float32
    attention = 2 * 2048 * 2048 + 2 * 2048 * 512 + 2 * 128 + 2048 * 16
    conv = 2048 * 7 + 3 * 2048 * 2048 + 2048 * 2048
    total = 11 * attention + 13 * conv + 24 * (3 * 2048 * 7680 + 4 * 2048) + 128000 * 2048 + 2048
    assert model.param_count == total == 1_728_801_536
    whole = 24 * 4 * 2048 + 11 * 2 * 128 + 2048  # the layer norms, q_norm / k_norm, embedding_norm
    assert whole == 201_472 and model.weight_replicated_bytes == 4 * whole
    # TP 2, float32: (6,915,206,144 - 805,888) / 2 + 805,888
    assert _per_gpu(model, 24, 2) == (4 * total - 4 * whole) // 2 + 4 * whole == 3_458_006_016
    # LFM3-Audio's checkpoints name the text model lfm.model.* (vLLM 0.34 lfm3_audio.py hf_to_vllm_mapper)
    family, f, _, layers, dims = _read(json.loads((DATA / "lfm3-audio-training-export-handwritten.json").read_text()),
                                       "lfm3")
    conv_in = next(m for m in table(f, layers, dims) if m.name == "layers.0.conv.in_proj")
    assert "lfm.model.layers.0.conv.in_proj" in conv_in.names()


def test_domyn_edge_keeps_its_sandwich_norms_and_k_norms_whole():
    model = build_model(json.loads((DATA / "domyn-edge-defaults-handwritten.json").read_text()), "domyn-edge")
    # 36 layers of hidden 2,560, 32 query / 8 KV heads of head_sizes[i]: 256 on 12 layers, 64 on 24; per layer
    # q/k/v/o (2,560 x 48 x d + 32 x d x 2,560), k_norm over d, four norms, MLP 3 x 2,560 x 9,728; vocab 115,269 tied
    def layer(d: int) -> int:
        return 2560 * 48 * d + 32 * d * 2560 + d + 4 * 2560 + 3 * 2560 * 9728

    total = 12 * layer(256) + 24 * layer(64) + 115269 * 2560 + 2560
    assert model.param_count == total == 3_928_780_288
    whole = 36 * 4 * 2560 + 12 * 256 + 24 * 64 + 2560  # the norms, k_norm (vLLM's q_norm has no weight)
    assert whole == 375_808 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (7,857,560,576 - 751,616) / 2 + 751,616
    assert _per_gpu(model, 36, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 3_929_156_096


def test_moondream3_keeps_its_layernorms_routers_and_row_biases_whole():
    model = build_model(json.loads((DATA / "moondream3-preview-shape.json").read_text()), "moondream3")
    # Moondream3TextConfig's defaults: 24 blocks of dim 2,048, 32 heads of 64 (qkv 6,144 wide), ff_dim 8,192
    # below start_layer 4, then 64 experts of 1,024 (fc1 2 x 1,024 x 2,048, fc2 2,048 x 1,024) with a router
    # [64, 2,048] and its bias; vocab 51,200, lm_head with a bias, never tied
    attention = 2048 * 6144 + 6144 + 2048 * 2048 + 2048 + 32 + 2 * 32 * 3 * 2048  # qkv, proj, tau
    dense = 2048 * 8192 + 8192 + 8192 * 2048 + 2048
    moe = 64 * 3 * 1024 * 2048 + 2048 * 64 + 64
    total = 24 * (attention + 2 * 2048) + 4 * dense + 20 * moe + 2 * 51200 * 2048 + 51200 + 2 * 2048
    assert model.param_count == total == 8_812_101_632
    # whole: each block's ln (weight and bias) and attn.proj's bias, the dense fc2 biases, the routers, post_ln
    whole = 24 * (2 * 2048 + 2048) + 4 * 2048 + 20 * (2048 * 64 + 64) + 2 * 2048
    assert whole == 2_782_464 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (17,624,203,264 - 5,564,928) / 2 + 5,564,928
    assert _per_gpu(model, 24, 2) == (2 * total - 2 * whole) // 2 + 2 * whole == 8_814_884_096


def test_falcon3_mamba_bnb_8bit_is_sized_module_by_module():
    # PrunaAI/tiiuae-Falcon3-Mamba-7B-Instruct-bnb-8bit-smashed (config.json, refs/pr/1): bitsandbytes 8-bit,
    # llm_int8_skip_modules ["lm_head"], float16; the falcon-mamba-7b shape (64 layers of hidden 4,096, inner 8,192,
    # state 16, dt_rank 256, vocab 65,024 untied)
    quant = {"_load_in_4bit": False, "_load_in_8bit": True, "bnb_4bit_compute_dtype": "bfloat16",
             "bnb_4bit_quant_storage": "uint8", "bnb_4bit_quant_type": "fp4", "bnb_4bit_use_double_quant": False,
             "llm_int8_enable_fp32_cpu_offload": False, "llm_int8_has_fp16_weight": False,
             "llm_int8_skip_modules": ["lm_head"], "llm_int8_threshold": 6.0, "load_in_4bit": False,
             "load_in_8bit": True, "quant_method": "bitsandbytes"}
    raw = dict(_raw("falcon-mamba-7b"), quantization_config=quant, torch_dtype="float16", expand=2,
               mixer_rms_eps=1e-05, eos_token_id=0)
    model = build_model(raw, "falcon3-mamba-bnb8")
    # int8 (bitsandbytes replaces the nn.Linear layers): in_proj 4,096 x 16,384, x_proj 8,192 x 288, dt_proj's
    # weight 256 x 8,192, out_proj 8,192 x 4,096 a layer; each with a float32 SCB per output row (16,384 + 288 +
    # 8,192 + 4,096 = 28,960) and a one-byte weight_format
    quantized = 64 * (4096 * 16384 + 8192 * 288 + 256 * 8192 + 8192 * 4096)
    assert quantized == 6_727_663_616
    # float16: the rest of 7,272,665,088 (embeddings, the kept head, norms, conv1d, dt_proj's bias, A_log, D)
    floats = 7_272_665_088 - quantized
    assert model.weight_bytes == quantized + 2 * floats + 64 * 28960 * 4 + 64 * 4 == 7_825_080_576
    assert "read module by module" in next(n for n in model.notes if n.startswith("weights estimated"))
