"""Per-module tables of the text models under multimodal and audio wrappers, and of TeleChat3
(configs/weight_tables/wrap.py): they add up to the family's parameter count, and the bytes each TP rank holds
whole are worked out here by hand from the config numbers and the module shapes (transformers 5.25
modeling_mllama.py, modeling_qwen3_omni_moe.py, modeling_qwen2.py; what vLLM builds whole: the module's
docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.core.estimate import estimate
from kvplan.weights.estimate import estimated

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "configs"
SPECS = ROOT / "model_specs"

_FILES = {
    "phi3_v": CONFIGS / "phi-3-vision-128k-instruct.json",
    "phi4mm": CONFIGS / "phi-4-multimodal-instruct-text.json",
    "dots_ocr": CONFIGS / "dots-mocr-trimmed.json",
    "qwen2_5_omni_text": CONFIGS / "qwen2.5-omni-7b-trimmed.json",
    "qwen3_omni_moe_text": CONFIGS / "qwen3-omni-30b-a3b-instruct-tf5-trimmed.json",
    "qwen3_asr_text": CONFIGS / "qwen3-asr-1.7b-trimmed.json",
    "moonshot_kimia": CONFIGS / "kimi-audio-7b-instruct-reconstructed.json",
    "telechat3": CONFIGS / "telechat3-36b-thinking-mlx-4bit.json",
    "mllama_text_model": SPECS / "llama-3.2-11b-vision.json",
    "gemma3n_text": SPECS / "gemma-3n-e4b.json",
    "mimo_v2": CONFIGS / "mimo-v2.6-flash.json",
}


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("model_type", sorted(_FILES))
def test_the_table_adds_up_to_the_parameter_count(model_type):
    family, f, _, layers, dims = _read(_raw(_FILES[model_type]), model_type)
    assert f.model_type == model_type
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_llama_3_2_11b_vision_counts_its_cross_attention_layers_and_keeps_their_norms_whole():
    model = build_model(_raw(SPECS / "llama-3.2-11b-vision.json"), "llama-3.2-11b-vision")
    # hidden 4,096, 32 heads x 128, 8 KV heads, intermediate 14,336, vocab 128,256 (untied), 40 layers of which
    # 8 cross-attention (3, 8, ..., 38). MllamaTextModel: embed_tokens of 128,256 + 8 rows; the head of 128,256
    embed, head = 128264 * 4096, 128256 * 4096
    attention = 2 * 4096 * 4096 + 2 * 4096 * 8 * 128  # q, o; k, v (self_attn or cross_attn alike)
    layer = attention + 3 * 4096 * 14336 + 2 * 4096
    cross_extra = 2 * 128 + 2  # cross_attn.q_norm, k_norm over head_dim; the two one-element gates
    total = embed + head + 4096 + 40 * layer + 8 * cross_extra
    assert total == 9_775_192_080  # 34,832 (8 x 4,096 embedding rows + 8 x 258) more than Llama's count
    assert model.param_count == total
    # whole on every TP rank: 40 x 2 norms, the final norm, 8 x (q_norm + k_norm + 2 gates); BF16
    whole = 40 * 2 * 4096 + 4096 + 8 * (2 * 128 + 2)
    assert whole == 333_840
    # the checkpoint's vision tower and projector, 895,028,755 parameters of which 107,639,315 are held whole on
    # every TP rank (tests/test_vision_towers.py counts both by hand), add to the text model's
    tower, tower_whole = 895_028_755, 107_639_315
    assert model.weight_replicated_bytes == 2 * (whole + tower_whole)
    # TP 2: the text model's (19,550,384,160 - 667,680) / 2 + 667,680 B a GPU, and the tower's split part halved
    # with its whole part added
    text_gpu = (2 * total - 2 * whole) // 2 + 2 * whole
    assert text_gpu == 9_775_525_920
    assert stage_weight_bytes(estimated(model), 40, tp=2) == [text_gpu + (2 * tower - 2 * tower_whole) // 2
                                                              + 2 * tower_whole]


def test_qwen3_omni_thinker_keeps_its_routers_and_qk_norms_whole():
    raw = _raw(_FILES["qwen3_omni_moe_text"])
    model = build_model(raw, "qwen3-omni")
    # text_config: hidden 2,048, 48 layers, 32 heads x 128, 4 KV heads, 128 experts of 768, vocab 152,064 untied
    attention = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128  # q, o; k, v; q_norm, k_norm
    moe = 128 * 3 * 2048 * 768 + 128 * 2048  # experts; the router mlp.gate [128, 2,048]
    total = 2 * 152064 * 2048 + 2048 + 48 * (attention + moe + 2 * 2048)
    assert total == 30_532_646_912 and model.param_count == total
    # whole: 48 x (2 norms + q_norm + k_norm + router) + the final norm; BF16
    whole = 48 * (2 * 2048 + 2 * 128 + 128 * 2048) + 2048
    # with the thinker's towers (tests/test_vision_towers3.py): 1,186,558,576 parameters, 23,144,448 of them whole
    assert whole == 12_793_856 and model.weight_replicated_bytes == 2 * (whole + 23_144_448) == 71_876_608
    # TP 4: (2 x (30,532,646,912 + 1,186,558,576) - 71,876,608) / 4 + 71,876,608 = 15,913,510,200 B a GPU (it was
    # 15,285,514,240 B without the towers)
    assert stage_weight_bytes(estimated(model), 48, tp=4) == [15_913_510_200]


def test_qwen3_omni_thinker_reads_mlp_only_layers():
    raw = _raw(_FILES["qwen3_omni_moe_text"])
    raw["thinker_config"]["text_config"]["mlp_only_layers"] = [0]
    model = build_model(raw, "qwen3-omni-dense-0")
    # layer 0 becomes a dense mlp of intermediate_size 768 (Qwen3OmniMoeThinkerTextDecoderLayer): 3 x 2,048 x 768
    # in place of 128 experts and the router
    total = 30_532_646_912 - (128 * 3 * 2048 * 768 + 128 * 2048) + 3 * 2048 * 768
    assert model.param_count == total == 29_933_123_584
    # one router fewer held whole (and the thinker's towers' 23,144,448 whole, as above)
    assert model.weight_replicated_bytes == 2 * (12_793_856 - 128 * 2048 + 23_144_448)


def test_kimi_audio_keeps_norms_whole_and_splits_the_qkv_biases():
    model = build_model(_raw(_FILES["moonshot_kimia"]), "kimi-audio")
    # Qwen2 decoder: hidden 3,584, 28 layers, 28 heads x 128, 4 KV heads; q/k/v biases split with the heads
    # (ColumnParallelLinear), o_proj without one; whole: 28 x 2 norms + the final norm
    whole = 28 * 2 * 3584 + 3584
    assert whole == 204_288 and model.weight_replicated_bytes == 2 * whole
    total = model.param_count
    assert stage_weight_bytes(estimated(model), 28, tp=2) == [(2 * total - 2 * whole) // 2 + 2 * whole]


def test_phi_3_vision_names_the_fused_phi3_modules():
    family, f, _, layers, dims = _read(_raw(_FILES["phi3_v"]), "phi3_v")
    names = {m.name for m in table(f, layers, dims)}
    assert {"layers.0.self_attn.qkv_proj", "layers.0.mlp.gate_up_proj"} <= names
    assert "layers.0.self_attn.q_proj" not in names
    model = build_model(_raw(_FILES["phi3_v"]), "phi-3-vision")
    # hidden 3,072, 32 layers: 32 x 2 norms + the final norm held whole, BF16; and the image encoder's whole part
    # (configs/vision_towers.py, vLLM 0.34 clip.py / phi3v.py): the CLIP ViT-L/14-336's class embedding, patch conv
    # 3 x 14^2 x 1,024, 577 positions, the pre LayerNorm, the 23 layers vLLM builds (img_processor.layer_idx -2; no
    # post LayerNorm then) of two LayerNorms and the out_proj / fc2 biases; glb_GN / sub_GN 2 x 4,096 and
    # img_projection 4,096 x 3,072 and 3,072 x 3,072 with biases
    h = 1024
    tower = (h + 3 * 196 * h + 577 * h + 2 * h + 23 * (4 * h + 2 * h)
             + 2 * 4096 + 4096 * 3072 + 3072 + 3072 * 3072 + 3072)
    assert 2 * (32 * 2 * 3072 + 3072) == 399_360
    assert model.weight_replicated_bytes == 399_360 + 2 * tower


def test_omni_checkpoint_names_under_thinker():
    family, f, _, layers, dims = _read(_raw(_FILES["qwen2_5_omni_text"]), "qwen2_5_omni_text")
    modules = {m.name: m for m in table(f, layers, dims)}
    # qwen2_5_omni_thinker.py hf_to_vllm_mapper: "thinker.model." -> "language_model.model."
    assert "thinker.model.layers.3.self_attn.q_proj" in modules["layers.3.self_attn.q_proj"].names()


def test_gemma_3n_e4b_keeps_altup_and_the_per_layer_input_projections_whole():
    model = build_model(_raw(SPECS / "gemma-3n-e4b.json"), "gemma-3n-e4b")
    # text_config: hidden 2,048, 35 layers (the last 15 KV-shared: no k/v_proj, no k_norm), 8 heads x 256, 2 KV
    # heads, intermediate 16,384, per-layer input 256, altup_num_inputs 4, laurel_rank 64, vocab 262,400 (tied),
    # vocab_size_per_layer_input 262,144
    shared_layer = (2 * 2048 * 2048 + 256  # q_proj, o_proj, q_norm
                    + 3 * 2048 * 16384 + 4 * 2048  # mlp, four norms
                    + 2 * 2048 * 64 + 2048  # laurel
                    + 2048 + 4 * 4 + 16 * 4 + 2048 * 4 + 2048  # altup: scale, coefs, router, router_norm
                    + 2 * 2048 * 256 + 2048)  # per-layer input gate, projection, norm
    own_layer = shared_layer + 2 * 2048 * 512 + 256  # k_proj, v_proj, k_norm
    model_level = (262400 * 2048 + 2048 + 262144 * 35 * 256 + 2048 * 35 * 256 + 256  # embeddings, norms, PLE
                   + 6 * 2048 * 2048)  # altup_projections and altup_unembed_projections (3 each)
    total = model_level + 20 * own_layer + 15 * shared_layer
    assert total == 6_835_235_568 and model.param_count == total
    # whole on every TP rank (vLLM 0.34 gemma3n.py): the norms, altup's coefs, router and scale, the per-layer
    # input gate and projection (ReplicatedLinear)
    shared_whole = (4 * 2048 + 256 + 2048 + 2048 + 2048 + 2048  # norms, q_norm, laurel, scale, router_norm, PLE norm
                    + 16 + 64 + 2048 * 4 + 2 * 2048 * 256)
    whole = 20 * (shared_whole + 256) + 15 * shared_whole + 2048 + 256
    # the spec's vision and audio towers (tests/test_vision_gemma3n.py): 983,281,504 parameters, of which
    # 975,482,720 whole on every rank (MobileNetV5 294,126,912, the audio encoder 681,348,640, four embedder norms)
    tower, tower_whole = 983_281_504, 294_126_912 + 681_348_640 + 2 * 2048 + 2 * 1536
    assert tower_whole == 975_482_720
    assert whole == 37_579_504 and model.weight_replicated_bytes == 2 * whole + 2 * tower_whole
    # TP 2, BF16: (13,670,471,136 + 1,966,563,008 - 2,026,124,448) / 2 + 2,026,124,448 (before the towers:
    # (13,670,471,136 - 75,159,008) / 2 + 75,159,008 = 6,872,815,072)
    assert stage_weight_bytes(estimated(model), 35, tp=2) == [(2 * (total + tower) - 2 * (whole + tower_whole)) // 2
                                                              + 2 * (whole + tower_whole)] == [8_831_579_296]


def test_mimo_v2_6_flash_fp8_keeps_its_ignored_o_proj_module_by_module():
    # XiaomiMiMo/MiMo-V2.6-Flash-RL's config.json (tests/test_families_2026.py gives its source): quant_method fp8,
    # 128 x 128 blocks, ignored_layers = every layer's self_attn.o_proj (and the MTP block's, not counted here);
    # vLLM 0.34 Fp8Config reads ignored_layers before modules_to_not_convert
    model = build_model(_raw(_FILES["mimo_v2"]), "mimo-v2.6-flash")
    total = 308_778_780_864
    assert model.param_count == total
    # in BF16: embeddings and head 2 x 152,576 x 4,096; 48 o_proj of 64 heads x 128 (v_head_dim) -> 4,096; norms
    # 48 x 2 x 4,096 + 4,096; 47 MoE layers' routers 256 x 4,096 + 256 (moe_layer_freq: all but layer 0); the 39
    # sliding layers' 64 sinks
    o_proj = 48 * 64 * 128 * 4096
    plain = 2 * 152576 * 4096 + o_proj + 48 * 2 * 4096 + 4096 + 47 * (256 * 4096 + 256) + 39 * 64
    assert o_proj == 1_610_612_736 and plain == 2_910_210_240
    quantized = total - plain
    # the config's store_dtype "mxfp4" stores the routed experts as MXFP4 (vLLM Fp8Config.get_quant_method ->
    # Mxfp4MoEMethod): 47 x 256 x 3 x 4,096 x 2,048 weights at 17/32 B (tests/test_quant_store_dtype.py); the other
    # quantized linears 1 B a weight and a float32 scale a 128 x 128 block
    experts = 47 * 256 * 3 * 4096 * 2048
    fp8 = quantized - experts
    assert model.weight_bytes == experts * 17 // 32 + fp8 + fp8 // 4096 + 2 * plain == 169_754_494_080
    # whole on every TP rank: the norms and the routers with their score biases, in BF16
    assert model.weight_replicated_bytes == 2 * (48 * 2 * 4096 + 4096 + 47 * (256 * 4096 + 256)) == 99_384_832


def test_gemma_3n_without_num_kv_shared_layers_shares_the_last_15_as_transformers_does():
    # Gemma3nTextConfig's num_kv_shared_layers defaults to 15 (transformers 5.25 configuration_gemma3n.py); kvplan
    # read an absent value as 0, so all 35 layers of E4B held their own cache and counted their own k/v_proj.
    raw = json.loads((SPECS / "gemma-3n-e4b.json").read_text())
    stated = build_model(raw, "e4b")
    del raw["text_config"]["num_kv_shared_layers"]
    silent = build_model(raw, "e4b-silent")
    # 35 layers, the last 15 reuse earlier caches: 20 own one; 2 KV heads of 256 in BF16, K and V:
    # 20 x 2 x 2 x 256 x 2 B = 40,960 B a token below the 512-token window
    assert estimate(silent, 256).bytes_per_token == estimate(stated, 256).bytes_per_token \
        == 20 * 2 * 2 * 256 * 2 == 40_960
    assert silent.param_count == stated.param_count
