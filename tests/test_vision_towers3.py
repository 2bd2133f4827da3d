"""The image and audio towers counted in session 26's third vision pass (kvplan/configs/vision_towers.py): the
Qwen-Omni thinkers, ... Each count is checked against transformers 5.25's modules on the meta device, and the part
vLLM 0.34 holds whole on every TP rank is worked out by hand from the shapes."""

from __future__ import annotations

import json
import warnings

import pytest
from meta_params import meta_params as _meta_params

from kvplan.sources import load_config, load_model

QWEN2_5_OMNI = "tests/data/configs/qwen2.5-omni-7b-trimmed.json"
QWEN3_OMNI = "tests/data/configs/qwen3-omni-30b-a3b-instruct-tf5-trimmed.json"


def test_qwen2_5_omni_thinker_towers_match_transformers_and_the_split_by_hand():
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen2_5_omni import modeling_qwen2_5_omni as m

    thinker = transformers.AutoConfig.for_model(**load_config(QWEN2_5_OMNI)[0]).thinker_config
    expected = _meta_params(lambda: (m.Qwen2_5OmniVisionEncoder._from_config(thinker.vision_config),
                                     m.Qwen2_5OmniAudioEncoder._from_config(thinker.audio_config)))
    # by hand: the vision tower is Qwen2.5-VL-7B's (hidden 1,280, MLP 3,420, 32 blocks, out 3,584: 676,550,144, of
    # which 1,673,984 whole: tests/test_vision_towers.py); the audio encoder (d_model 1,280, FFN 5,120, 32 layers,
    # 128 mel bins, out 3,584): conv1 128 x 3 -> 1,280 and conv2 1,280 x 3 -> 1,280 with biases, the bos / eos
    # embedding 2 x 3,584, a layer's two LayerNorms, q / v / out with biases and k without, fc1 / fc2 with biases;
    # ln_post and proj 1,280 -> 3,584 with bias. vLLM 0.34 builds transformers' own audio encoder: all of it whole
    h, i = 1280, 5120
    layer = 4 * h + 4 * h * h + 3 * h + (h * i + i) + (i * h + h)
    audio = (128 * 3 * h + h) + (h * 3 * h + h) + 2 * 3584 + 32 * layer + 2 * h + (h * 3584 + 3584)
    assert expected == 676_550_144 + audio
    model = load_model(QWEN2_5_OMNI)
    assert model.weight_vision == (expected, 2 * expected, 2 * (1_673_984 + audio))
    assert any(n.startswith("vision tower counted: Qwen2.5-Omni thinker") for n in model.notes)


def test_qwen3_omni_thinker_towers_match_transformers_and_the_split_by_hand():
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen3_omni_moe import modeling_qwen3_omni_moe as m

    thinker = transformers.AutoConfig.for_model(**load_config(QWEN3_OMNI)[0]).thinker_config
    expected = _meta_params(lambda: (m.Qwen3OmniMoeVisionEncoder._from_config(thinker.vision_config),
                                     m.Qwen3OmniMoeAudioEncoder._from_config(thinker.audio_config)))
    # by hand: the vision tower is Qwen3-VL-30B-A3B's (out 2,048: 538,631,408, of which 4,649,600 whole:
    # tests/test_vision_towers.py); the audio encoder (d_model 1,280, FFN 5,120, 32 layers, 128 mel bins, 480
    # downsample channels, out 2,048): three 3 x 3 Conv2d with biases (1 -> 480 -> 480 -> 480), conv_out 480 x 16
    # -> 1,280 without bias, a layer's two LayerNorms, q/k/v/out and fc1 / fc2 with biases, ln_post, proj1 1,280 ->
    # 1,280 and proj2 1,280 -> 2,048 with biases
    h, i, d = 1280, 5120, 480
    layer = 4 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h)
    convs = (9 * d + d) + 2 * (9 * d * d + d) + d * 16 * h
    post = 2 * h + (h * h + h) + (h * 2048 + 2048)
    audio = convs + 32 * layer + post
    assert expected == 538_631_408 + audio
    # whole on every rank (vLLM 0.34 Qwen3OmniMoeAudioEncoder): the convolutions, conv_out, ln_post, proj1 / proj2
    # (ReplicatedLinear), a layer's LayerNorms and its out_proj / fc2 biases (RowParallelLinear)
    audio_whole = convs + 32 * (4 * h + 2 * h) + post
    model = load_model(QWEN3_OMNI)
    assert model.weight_vision == (expected, 2 * expected, 2 * (4_649_600 + audio_whole))


def test_qwen_omni_estimate_before_and_after(cli):
    # the config estimate now adds the thinker's towers (1,186,558,576 parameters, above) to the text model's
    # 30,532,646,912 (tests/test_omni.py): it was 61,065,293,824 B, the text model alone
    code, out, err = cli("estimate", QWEN3_OMNI, "-f", "json")
    assert code == 0, err
    w = json.loads(out)["model"]["weights"]
    assert w["by_role"] == {"vision": 2 * 1_186_558_576}
    assert w["total_bytes"] == 2 * (30_532_646_912 + 1_186_558_576) == 63_438_410_976
    # a thinker without its audio_config is not counted, and says so
    raw = load_config(QWEN2_5_OMNI)[0]
    raw = dict(raw, thinker_config={k: v for k, v in raw["thinker_config"].items() if k != "audio_config"})
    from kvplan.configs.build import build_model

    model = build_model(raw, "omni")
    assert model.weight_vision == (0, 0, 0)
    assert any(n.startswith("vision tower not counted (thinker_config has no audio_config") for n in model.notes)


# -- the InternViT wrappers (NVLM-D, H2OVL, Skywork-R1V) ------------------------------------------------------------

# InternViT-6B-448px-V1-5's vision_config (NVLM-D-72B and Skywork-R1V-38B carry it): hidden 3,200, MLP 12,800, 45
# layers, 25 heads of 128, RMSNorm, q/k norms, no qkv bias; with a small hand-written Qwen2 text model (hidden 512,
# MLP 1,024) so that mlp1's shapes are easy to follow
INTERNVIT_6B = {"hidden_size": 3200, "intermediate_size": 12800, "num_hidden_layers": 45, "num_attention_heads": 25,
                "image_size": 448, "patch_size": 14, "qkv_bias": False, "qk_normalization": True,
                "norm_type": "rms_norm"}
_TEXT = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 512, "num_hidden_layers": 3,
         "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 1024, "vocab_size": 1000,
         "use_sliding_window": False}


def _wrapper(model_type: str, arch: str, **extra) -> dict:
    return {"model_type": model_type, "architectures": [arch], "downsample_ratio": 0.5, "select_layer": -1,
            "torch_dtype": "bfloat16", "llm_config": _TEXT, "vision_config": INTERNVIT_6B, **extra}


def _internvit_6b_checkpoint() -> int:
    """InternViT-6B's tensors as transformers 5.25 builds them (InternVLVisionModel, the same tensors as the remote
    code's; use_mean_pooling: no final norm), on the meta device."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.internvl.modeling_internvl import InternVLVisionModel

    config = transformers.InternVLVisionConfig(
        hidden_size=3200, intermediate_size=12800, num_hidden_layers=45, num_attention_heads=25, image_size=[448, 448],
        patch_size=[14, 14], attention_bias=False, use_qk_norm=True, norm_type="rms_norm", use_mean_pooling=True)
    return _meta_params(lambda: (InternVLVisionModel(config),))


def test_nvlm_d_tower_holds_its_dummy_heads_and_its_own_mlp1():
    from kvplan.configs.build import build_model

    h, i, dim = 3200, 12800, 32 * 128
    # by hand, the checkpoint: class embedding, the patch conv with bias, 1,025 positions; a layer of two RMSNorms,
    # ls1 / ls2, q/k norms, qkv without bias, proj with bias, fc1 / fc2 with biases
    layer = 2 * h + 2 * h + 2 * h + 3 * h * h + (h * h + h) + (h * i + i) + (i * h + h)
    embeddings = h + (3 * 196 * h + h) + 1025 * h
    assert _internvit_6b_checkpoint() == embeddings + 45 * layer == 5_536_496_000  # the published "5.5B"
    # vLLM 0.34 nvlm_d.py builds it with num_dummy_heads=7: qkv 3,200 -> 3 x 32 x 128, q/k norms over 4,096 and proj
    # 4,096 -> 3,200; 32 heads divide TP, so qkv / fc1 split, proj / fc2 row-parallel. mlp1: a LayerNorm over 4 x
    # 3,200 and 12,800 x 1,024 (the text MLP) and 1,024 x 512 without biases, whole (nn.Linear)
    vllm_layer = layer + 3 * h * (dim - h) + 2 * (dim - h) + (dim - h) * h
    mlp1 = 2 * 12800 + 12800 * 1024 + 1024 * 512
    tower = embeddings + 45 * vllm_layer + mlp1
    whole = embeddings + 45 * (2 * h + 2 * h + 2 * dim + h + h) + mlp1
    model = build_model(_wrapper("NVLM_D", "NVLM_D"), "nvlm-d")
    assert model.weight_vision == (tower, 2 * tower, 2 * whole)
    # the other InternViT wrappers hold the checkpoint's 25 heads (odd: qkv and proj whole at an even TP) and
    # InternVL's mlp1 (12,800 x 512 and 512 x 512, biased)
    mlp1 = 2 * 12800 + (12800 * 512 + 512) + (512 * 512 + 512)
    tower = embeddings + 45 * layer + mlp1
    whole = embeddings + 45 * (2 * h + 2 * h + 2 * h + 3 * h * h + h * h + h + h) + mlp1
    for model_type, arch in (("skywork_chat", "SkyworkR1VChatModel"), ("h2ovl_chat", "H2OVLChatModel")):
        model = build_model(_wrapper(model_type, arch), model_type)
        assert model.weight_vision == (tower, 2 * tower, 2 * whole), model_type


def test_internvit_wrappers_build_the_tower_up_to_select_layer():
    # vLLM 0.34 internvl.py / nvlm_d.py / h2ovl.py / skyworkr1v.py _init_vision_model: num_hidden_layers +
    # select_layer + 1 layers (select_layer -4: 42 of InternViT-6B's 45); the checkpoint's last three are not loaded
    from kvplan.configs.build import build_model

    h, i = 3200, 12800
    layer = 2 * h + 2 * h + 2 * h + 3 * h * h + (h * h + h) + (h * i + i) + (i * h + h)
    for model_type, arch in (("internvl_chat", "InternVLChatModel"), ("skywork_chat", "SkyworkR1VChatModel")):
        full = build_model(_wrapper(model_type, arch), model_type).weight_vision[0]
        cut = build_model(_wrapper(model_type, arch, select_layer=-4), model_type).weight_vision[0]
        assert full - cut == 3 * layer, model_type
        assert build_model(_wrapper(model_type, arch, select_layer=41), model_type).weight_vision[0] == cut
    # a select_layer past the tower is a malformed config: one error naming it
    from kvplan.errors import ConfigError

    with pytest.raises(ConfigError, match="select_layer 45 is not a layer of the 45-layer vision tower"):
        build_model(_wrapper("h2ovl_chat", "H2OVLChatModel", select_layer=45), "h")


# -- towers vLLM builds only up to the feature layer (LLaVA, Phi-3-vision) ---------------------------------------------

def test_llava_tower_is_built_up_to_its_deepest_feature_layer():
    # vLLM 0.34 llava.py _get_num_hidden_layers (utils.py get_layer_index: 24 + index + 1 for a negative index, the
    # index itself otherwise; the deepest of a list) and require_post_norm=False: LLaVA-1.5-7B's CLIP ViT-L/14-336
    # (hidden 1,024, MLP 4,096) keeps 23 of its 24 layers and no post_layernorm: 12,596,224 + 2,048 parameters fewer
    # than the checkpoint's 324,487,168 (tests/test_vision_towers.py's count before)
    from kvplan.configs.build import build_model

    h, i = 1024, 4096
    layer = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)
    assert layer == 12_596_224
    raw = load_config("llava-1.5-7b")[0]
    assert load_model("llava-1.5-7b").weight_vision[0] == 324_487_168 - layer - 2 * h == 311_888_896
    # a list: the deepest; a positive index: that many layers (the projector takes 1,024 per feature layer)
    for feature, layers, n in (([-2, -12], 23, 2), (10, 10, 1)):
        got = build_model(dict(raw, vision_feature_layer=feature), "llava").weight_vision[0]
        assert got == 311_888_896 - (23 - layers) * layer + (n - 1) * h * 4096, feature
    from kvplan.errors import ConfigError

    with pytest.raises(ConfigError, match="vision_feature_layer -30 is not a layer of the 24-layer vision tower"):
        build_model(dict(raw, vision_feature_layer=-30), "llava")


# -- MiniCPM-o ------------------------------------------------------------------------------------------------------

# MiniCPM-o 2.6 (openbmb/MiniCPM-o-2_6's config.json, the fields read): Qwen2.5-7B's text model, SigLIP-400M at 980,
# a Whisper-medium encoder
MINICPMO_2_6 = {"architectures": ["MiniCPMO"], "model_type": "minicpmo", "version": "2.6", "hidden_size": 3584,
                "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
                "intermediate_size": 18944, "vocab_size": 151700, "tie_word_embeddings": False,
                "torch_dtype": "bfloat16", "query_num": 64, "drop_vision_last_layer": False, "audio_pool_step": 2,
                "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
                                  "model_type": "siglip_vision_model", "num_attention_heads": 16,
                                  "num_hidden_layers": 27, "patch_size": 14},
                "audio_config": {"model_type": "whisper", "d_model": 1024, "encoder_layers": 24,
                                 "encoder_attention_heads": 16, "encoder_ffn_dim": 4096, "num_mel_bins": 80,
                                 "max_source_positions": 1500}}


def test_minicpmo_counts_siglip_the_resampler_and_the_whisper_encoder():
    # vLLM 0.34 minicpmo.py MiniCPMO2_6: MiniCPM-V 2.6's SigLIP (transformers' SiglipVisionModel without its head,
    # on the meta device) and Resampler2_5 (query 64 x 3,584, kv_proj 1,152 x 3,584, nn.MultiheadAttention(3,584),
    # three LayerNorms, proj 3,584 x 3,584); the apm, transformers' WhisperEncoder (on the meta device), and
    # audio_projection_layer 1,024 (4,096 / 4) x 3,584 and 3,584 x 3,584 with biases: all but SigLIP's split
    # linears whole on every rank
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.siglip.modeling_siglip import SiglipVisionModel
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    from kvplan.configs.build import build_model

    vision = transformers.SiglipVisionConfig(**dict(MINICPMO_2_6["vision_config"], vision_use_head=False))
    siglip = _meta_params(lambda: (SiglipVisionModel(vision),))
    attention = _meta_params(lambda: (torch.nn.MultiheadAttention(3584, 28),))
    resampler = 64 * 3584 + 1152 * 3584 + attention + 3 * 2 * 3584 + 3584 * 3584
    whisper = _meta_params(lambda: (WhisperEncoder(transformers.WhisperConfig(**MINICPMO_2_6["audio_config"])),))
    projection = (1024 * 3584 + 3584) + (3584 * 3584 + 3584)
    model = build_model(MINICPMO_2_6, "minicpm-o-2.6")
    total = siglip + resampler + whisper + projection
    assert model.weight_vision[:2] == (total, 2 * total)
    # whole: SigLIP's embeddings, norms and out_proj / fc2 biases (27 layers, hidden 1,152), the resampler and the
    # audio part; a SigLIP layer's q/k/v and fc1 (weights and biases) and out_proj / fc2 weights are split
    h, i = 1152, 4304
    split = 27 * ((h * 3 * h + 3 * h) + h * h + (h * i + i) + i * h)
    assert model.weight_vision[2] == 2 * (total - split)
    # `version` absent is 2.6 (MiniCPMO.__new__); no audio_config: not counted, and said so
    raw = {k: v for k, v in MINICPMO_2_6.items() if k != "version"}
    assert build_model(raw, "minicpm-o").weight_vision == model.weight_vision
    raw = {k: v for k, v in MINICPMO_2_6.items() if k != "audio_config"}
    assert any(n.startswith("vision tower not counted (MiniCPM-o has no audio_config")
               for n in build_model(raw, "minicpm-o").notes)


# -- Phi-4-multimodal (phi4mm remote code) ----------------------------------------------------------------------------

def _phi4mm() -> dict:
    """Phi-4-multimodal-instruct's config.json: the text fields (tests/data/configs) and its encoders' settings
    (audio_processor, embd_layer, img_processor null), as published."""
    from pathlib import Path

    raw = json.loads((Path(__file__).parent / "data" / "configs" / "phi-4-multimodal-instruct-text.json").read_text())
    conformer = {"activation": "swish", "attention_dim": 1024, "attention_heads": 16, "batch_norm": False,
                 "bias_in_glu": True, "causal": True, "chunk_size": -1, "cnn_layer_norm": True,
                 "conv_activation": "swish", "conv_glu_type": "swish", "depthwise_multiplier": 1,
                 "depthwise_seperable_out_channel": 1024, "dropout_rate": 0.0,
                 "encoder_embedding_config": {"input_size": 80}, "ext_pw_kernel_size": 1, "ext_pw_out_channel": 1024,
                 "input_layer": "nemo_conv", "input_size": 80, "kernel_size": 3, "left_chunk": 18,
                 "linear_units": 1536, "nemo_conv_settings": {"conv_channels": 1024}, "num_blocks": 24,
                 "relative_attention_bias_args": {"t5_bias_max_distance": 500, "type": "t5"}, "time_reduction": 8}
    audio = {"compression_rate": 8, "downsample_rate": 1, "embedding_cls": "audio", "projection_cls": "mlp",
             "use_conv_downsample": False, "use_qformer": False}
    return dict(raw, audio_processor={"name": "cascades", "config": conformer}, img_processor=None,
                embd_layer={"embedding_cls": "image_audio", "audio_embd_layer": audio,
                            "image_embd_layer": {"crop_size": 448, "embedding_cls": "tune_image"}})


def test_phi4mm_encoders_match_transformers_phi4_multimodal_as_vllm_builds_them(cli, tmp_path):
    # transformers 5.25's phi4_multimodal modules hold the same checkpoint's encoders: on the meta device, with the
    # text hidden 3,072 and the t5 bias distance 500. vLLM 0.34 phi4mm.py builds the SigLIP-NaViT up to
    # img_processor.layer_idx (-2: 26 of its 27 layers) without post_layernorm or head; and its
    # MeanVarianceNormLayer keeps global_mean / global_invstd (2 x 80) as parameters, buffers in transformers
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.phi4_multimodal import modeling_phi4_multimodal as m

    from kvplan.configs.build import build_model

    config = transformers.Phi4MultimodalConfig(
        hidden_size=3072, intermediate_size=8192, num_hidden_layers=1, vocab_size=200064,
        audio_config=transformers.Phi4MultimodalAudioConfig(bias_max_distance=500),
        vision_config=transformers.Phi4MultimodalVisionConfig())
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        image, audio = m.Phi4MultimodalImageEmbedding(config), m.Phi4MultimodalAudioEmbedding(config)

    def count(*modules):
        return sum(p.numel() for mod in modules for p in mod.parameters())

    navit = image.img_processor
    layers = navit.encoder.layers
    vision = count(image) - count(layers[26], navit.post_layernorm, navit.head)
    speech = count(audio) + 2 * 80
    model = build_model(_phi4mm(), "phi-4-multimodal")
    assert model.weight_vision[:2] == (vision + speech, 2 * (vision + speech))
    # by hand: the audio encoder 441,238,144 (NeMo subsampling 12,616,704, t5 bias 1,000 x 16, 24 blocks of two
    # GLU feed-forwards 4,724,736, attention 4 x (1,024^2 + 1,024), conv module 4,206,592, two LayerNorms) and two
    # projection MLPs 1,024 -> 3,072 -> 3,072
    block = 2 * 4_724_736 + 4 * (1024 * 1024 + 1024) + 4_206_592 + 4 * 1024
    assert speech == 12_616_704 + 16_000 + 24 * block + 2 * 80 + 2 * (1024 * 3072 + 3072 + 3072 * 3072 + 3072)
    # whole on every rank: all of the audio part; of the vision part the embeddings (patch conv and 1,024 positions),
    # a layer's two LayerNorms and out_proj / fc2 biases, glb_GN / sub_GN and img_projection (nn.Linear)
    h = 1152
    whole = (3 * 196 * h + h + 1024 * h) + 26 * 6 * h + 2 * h + (h * 3072 + 3072 + 3072 * 3072 + 3072) + speech
    assert model.weight_vision[2] == 2 * whole
    # the estimate adds these 877,486,272 parameters to the text model's (it was the text model's alone)
    assert vision + speech == 877_486_272
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_phi4mm()))
    code, out, err = cli("estimate", str(path), "-f", "json")
    assert code == 0, err
    assert json.loads(out)["model"]["weights"]["by_role"] == {"vision": 2 * 877_486_272}
