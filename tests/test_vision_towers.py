"""The vision tower and projector of image-text wrappers in the config estimate (kvplan/configs/vision_towers.py).

Each family's count is checked against the modules transformers 5.25 builds on the meta device from the bundled
config's vision_config (the tower class and the projector class alone, not the text model), and a few are also
counted by hand from the shapes; the estimate's weight bytes and the per-GPU split are re-derived by hand."""

from __future__ import annotations

import json
import warnings

import pytest
from meta_params import meta_params as _meta_params

from kvplan.sources import load_config, load_model


def _gemma3(c):
    from transformers.models.gemma3.modeling_gemma3 import Gemma3MultiModalProjector
    from transformers.models.siglip.modeling_siglip import SiglipVisionModel
    return SiglipVisionModel(c.vision_config), Gemma3MultiModalProjector(c)


def _qwen2_5_vl(c):
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VisionTransformerPretrainedModel
    return (Qwen2_5_VisionTransformerPretrainedModel._from_config(c.vision_config),)


def _qwen3_vl_moe(c):
    from transformers.models.qwen3_vl_moe.modeling_qwen3_vl_moe import Qwen3VLMoeVisionModel
    return (Qwen3VLMoeVisionModel._from_config(c.vision_config),)


def _qwen3_vl(c):
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionModel
    return (Qwen3VLVisionModel._from_config(c.vision_config),)


def _qwen3_5_moe(c):
    from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import Qwen3_5MoeVisionModel
    return (Qwen3_5MoeVisionModel._from_config(c.vision_config),)


def _llama4(c):
    from transformers.models.llama4.modeling_llama4 import Llama4MultiModalProjector, Llama4VisionModel
    return Llama4VisionModel(c.vision_config), Llama4MultiModalProjector(c)


def _mistral3(c):
    from transformers.models.mistral3.modeling_mistral3 import Mistral3MultiModalProjector
    from transformers.models.pixtral.modeling_pixtral import PixtralVisionModel
    return PixtralVisionModel(c.vision_config), Mistral3MultiModalProjector(c)


def _llava(c):
    # vLLM 0.34 llava.py builds CLIP only up to vision_feature_layer (-2: 23 of its 24 layers) and without
    # post_layernorm (require_post_norm=False): transformers' CLIP of 23 layers, less its post_layernorm
    from transformers.models.clip.modeling_clip import CLIPVisionModel
    from transformers.models.llava.modeling_llava import LlavaMultiModalProjector
    c.vision_config.num_hidden_layers = 24 + c.vision_feature_layer + 1
    tower = CLIPVisionModel(c.vision_config)
    return tower.embeddings, tower.pre_layrnorm, tower.encoder, LlavaMultiModalProjector(c)


def _mllama(c):
    from transformers.models.mllama.modeling_mllama import MllamaModel, MllamaVisionModel
    return MllamaVisionModel(c.vision_config), MllamaModel(c).multi_modal_projector


def _glm4v_moe(c):
    from transformers.models.glm4v_moe.modeling_glm4v_moe import Glm4vMoeVisionModel
    return (Glm4vMoeVisionModel._from_config(c.vision_config),)


GLM_4_5V = "tests/data/configs/glm-4.5v-transformers5.json"
TOWERS = {"llama-3.2-11b-vision": _mllama, GLM_4_5V: _glm4v_moe, "gemma-3-27b": _gemma3, "gemma-3-4b": _gemma3, "qwen2.5-vl-7b": _qwen2_5_vl,
          "qwen3-vl-8b": _qwen3_vl, "qwen3-vl-30b-a3b": _qwen3_vl_moe, "qwen3.5-35b-a3b": _qwen3_5_moe,
          "llama-4-scout": _llama4, "mistral-small-3.1-24b": _mistral3, "llava-1.5-7b": _llava}


@pytest.mark.parametrize("alias", sorted(TOWERS))
def test_tower_and_projector_match_transformers_modules(alias):
    transformers = pytest.importorskip("transformers")
    raw = load_config(alias)[0]
    config = transformers.AutoConfig.for_model(**raw)
    expected = _meta_params(lambda: TOWERS[alias](config))
    model = load_model(alias)
    width = 4 if model.float_dtype == "float32" else 2
    assert model.weight_vision[0] == expected and model.weight_vision[1] == width * expected


# -- by hand from the shapes -------------------------------------------------------------------------------------

def _qwen3_vl_hand(out: int) -> tuple[int, int]:
    """Qwen3-VL-8B / 30B-A3B's tower (hidden 1,152, MLP 4,304, 27 blocks, patch 16, 2 frames, 2,304 positions, merge
    2, three deepstack mergers): (parameters, those vLLM 0.34 holds whole on every TP rank)."""
    h, i, m = 1152, 4304, 1152 * 4
    patch = 3 * 2 * 16 * 16 * h + h  # Conv3d with bias: whole
    pos = 2304 * h  # nn.Embedding: whole
    block = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)
    block_whole = 4 * h + 2 * h  # two LayerNorms, the proj and linear_fc2 biases
    merger = 2 * h + (m * m + m) + (m * out + out)
    deepstack = 2 * m + (m * m + m) + (m * out + out)
    total = patch + pos + 27 * block + merger + 3 * deepstack
    whole = patch + pos + 27 * block_whole + (2 * h + out) + 3 * (2 * m + out)
    return total, whole


def test_qwen3_vl_towers_by_hand():
    assert _qwen3_vl_hand(4096) == (576_388_336, 4_657_792)
    assert load_model("qwen3-vl-8b").weight_vision == (576_388_336, 2 * 576_388_336, 2 * 4_657_792)
    assert _qwen3_vl_hand(2048) == (538_631_408, 4_649_600)
    assert load_model("qwen3-vl-30b-a3b").weight_vision == (538_631_408, 2 * 538_631_408, 2 * 4_649_600)


def test_qwen2_5_vl_tower_by_hand():
    # hidden 1,280, MLP 3,420, 32 blocks, patch 14 on 2 frames, merge 2, out 3,584: the Conv3d (no bias), a block's
    # two RMSNorms, qkv and proj with biases, a gated MLP with biases; the merger's RMSNorm and two biased linears
    h, i, m = 1280, 3420, 1280 * 4
    block = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (2 * h * i + 2 * i) + (i * h + h)
    total = 3 * 2 * 14 * 14 * h + 32 * block + h + (m * m + m) + (m * 3584 + 3584)
    # whole: the Conv3d, the norms, the proj / down_proj biases and the merger's norm and second bias
    whole = 3 * 2 * 14 * 14 * h + 32 * (2 * h + 2 * h) + h + 3584
    assert (total, whole) == (676_550_144, 1_673_984)
    assert load_model("qwen2.5-vl-7b").weight_vision == (total, 2 * total, 2 * whole)


def test_llama4_scout_tower_by_hand():
    # hidden 1,408, MLP 5,632, 34 layers, patch 14 on 336: the unfold linear 3 x 14^2 x 1,408; class embedding,
    # 577 positions and two LayerNorms; a layer: two LayerNorms, q/k/v/o and fc1 / fc2 with biases; the adapter
    # 5,632 x 4,096 and 4,096 x 4,096; the projector 4,096 x 5,120 (text hidden)
    h, i = 1408, 5632
    layer = 4 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h)
    total = 3 * 196 * h + h + 577 * h + 4 * h + 34 * layer + i * 4096 + 4096 * 4096 + 4096 * 5120
    assert total == 871_932_416
    # whole: the class and position embeddings, the four outer LayerNorm vectors, and a layer's two LayerNorms with
    # the o_proj and fc2 biases (RowParallelLinear); the unfold linear, fc1s and the projector are column-parallel
    whole = h + 577 * h + 4 * h + 34 * (4 * h + 2 * h)
    assert load_model("llama-4-scout").weight_vision == (total, 2 * total, 2 * whole)


# Mistral Small 3.1's text model, by hand: 40 layers of q / o 5,120 x 4,096, k / v 5,120 x 1,024, MLP 3 x 5,120 x
# 32,768 and two norms, untied embeddings and head 2 x 131,072 x 5,120, the final norm
MISTRAL_TEXT = 40 * (2 * 5120 * 4096 + 2 * 5120 * 1024 + 3 * 5120 * 32768 + 2 * 5120) + 2 * 131072 * 5120 + 5120
# its Pixtral tower (hidden 1,024, MLP 4,096, 24 layers, patch 14): patch conv 3 x 14^2 x 1,024, ln_pre, a layer of
# q/k/v/o 1,024 x 1,024, a gated MLP 3 x 1,024 x 4,096 and two RMSNorms; the projector's norm, patch merger
# 4 x 1,024 x 1,024, linear_1 1,024 x 5,120 and linear_2 5,120 x 5,120 (no biases)
MISTRAL_TOWER = (3 * 196 * 1024 + 1024 + 24 * (4 * 1024 * 1024 + 3 * 1024 * 4096 + 2 * 1024)
                 + 1024 + 4 * 1024 * 1024 + 1024 * 5120 + 5120 * 5120)
# held whole on every TP rank: the text model's norms; the conv, ln_pre, the layers' norms, the projector's norm and
# patch merger (an nn.Linear in vLLM 0.34 mistral3.py)
MISTRAL_WHOLE = 40 * 2 * 5120 + 5120 + 3 * 196 * 1024 + 1024 + 24 * 2 * 1024 + 1024 + 4 * 1024 * 1024


def test_bundled_mistral_small_estimate_before_and_after(cli):
    assert MISTRAL_TEXT == 23_572_403_200 and MISTRAL_TOWER == 438_958_080
    code, out, err = cli("estimate", "mistral-small-3.1-24b", "--gpu", "h100", "--engine", "vllm", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    w = data["model"]["weights"]
    assert w["source"] == "estimated from config"
    # was 47,144,806,400 B (the text model only)
    assert w["total_bytes"] == 2 * (MISTRAL_TEXT + MISTRAL_TOWER) == 48_022_722_560
    assert w["by_role"] == {"vision": 2 * MISTRAL_TOWER}
    assert any(n.startswith("vision tower counted: PixtralVisionModel") for n in w["notes"])
    assert data["capacity"]["weight_bytes_per_gpu"] == 48_022_722_560


def test_tp_holds_the_towers_whole_part_on_every_rank(cli):
    from kvplan.engines.vllm_load import config_weights_per_gpu

    model = load_model("mistral-small-3.1-24b")
    total, whole = 2 * (MISTRAL_TEXT + MISTRAL_TOWER), 2 * MISTRAL_WHOLE
    # TP 2 (8 KV heads: no KV-head replication): the whole part on each rank, the rest halved
    assert config_weights_per_gpu(model, tp=2) == (total - whole) // 2 + whole
    # TP 2 x PP 2: the tower on the first stage only (vLLM 0.34 interfaces.py _mark_tower_model)
    text_whole, tower, tower_whole = 2 * (40 * 2 * 5120 + 5120), 2 * MISTRAL_TOWER, whole - 2 * (40 * 2 * 5120 + 5120)
    rest = -(-(total - text_whole - tower) // 4) + text_whole // 2
    code, out, err = cli("weights", "mistral-small-3.1-24b", "--tp", "2", "--pp", "2", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["weight_bytes_per_gpu_by_stage"] == [rest + tower_whole + (tower - tower_whole) // 2, rest]


def test_a_config_without_its_vision_config_plans_the_text_model_alone(cli):
    # vLLM 0.34 skips the tower with --language-model-only; kvplan plans that with --set vision_config=null
    totals = []
    for extra in ((), ("--set", "vision_config=null")):
        code, out, err = cli("estimate", "mistral-small-3.1-24b", *extra, "-f", "json")
        assert code == 0, err
        totals.append(json.loads(out)["model"]["weights"]["total_bytes"])
    assert totals == [2 * (MISTRAL_TEXT + MISTRAL_TOWER), 2 * MISTRAL_TEXT]


def test_a_wrapper_kvplan_does_not_count_says_so():
    model = load_model("deepseek-v4.1-flash")
    assert model.weight_vision == (0, 0, 0)
    assert any(n.startswith("vision tower not counted: kvplan has no count of model_type 'deepseek_v41'")
               for n in model.notes)


# Llama 3.2 11B Vision's tower, by hand (hidden 1,280, MLP 5,120, 32 local + 8 global layers, patch 14 on 560, 4
# tiles, 8 aspect ratios: 9 embedding rows, 40^2 + 1 = 1,601 positions): the patch conv 3 x 14^2 x 1,280 (no bias),
# class embedding, the position gate and table, the tile position table 9 x 4 x 1,601 x 1,280, pre / post tile
# tables 9 x 4 x 1,280 with a gate each, layernorm_pre / post; a layer: two LayerNorms, q/k/v/o 1,280 x 1,280 (no
# biases), fc1 / fc2 with biases; a global layer's two gates; the projector 7,680 x 4,096 with bias
MLLAMA_EMBED = 1280 + 1 + 1601 * 1280 + 9 * 4 * 1601 * 1280 + 2 * (9 * 4 * 1280 + 1) + 4 * 1280
MLLAMA_LAYER = 4 * 1280 + 4 * 1280 * 1280 + (1280 * 5120 + 5120) + (5120 * 1280 + 1280)
MLLAMA_TOWER = 3 * 196 * 1280 + MLLAMA_EMBED + 40 * MLLAMA_LAYER + 8 * 2 + 7680 * 4096 + 4096
# whole on every TP rank (SGLang 0.5.23 mllama.py: vLLM 0.34 builds no Mllama): the embeddings, gates and
# LayerNorms, each fc2 bias (RowParallelLinear) and the projector (ReplicatedLinear); the patch linear, q/k/v/o and
# fc1 are split
MLLAMA_WHOLE = MLLAMA_EMBED + 40 * (4 * 1280 + 1280) + 8 * 2 + 7680 * 4096 + 4096
MLLAMA_TEXT = 9_775_192_080  # MllamaForCausalLM on the meta device (tests/test_tables_wrap.py counts it by hand)


def test_mllama_tower_by_hand_and_the_published_total():
    assert (MLLAMA_TOWER, MLLAMA_WHOLE) == (895_028_755, 107_639_315)
    # Llama-3.2-11B-Vision's checkpoint: 10,670,220,835 parameters (its model card's 10.6B; the safetensors total)
    assert MLLAMA_TEXT + MLLAMA_TOWER == 10_670_220_835
    model = load_model("llama-3.2-11b-vision")
    assert model.param_count == MLLAMA_TEXT
    assert model.weight_vision == (MLLAMA_TOWER, 2 * MLLAMA_TOWER, 2 * MLLAMA_WHOLE)
    assert any(n.startswith("vision tower counted: MllamaVisionModel") and "SGLang 0.5.23 mllama.py" in n
               for n in model.notes)


def test_bundled_llama_3_2_vision_estimate_before_and_after(cli):
    code, out, err = cli("estimate", "llama-3.2-11b-vision", "--gpu", "h100", "--engine", "vllm", "-f", "json")
    assert code == 0, err
    w = json.loads(out)["model"]["weights"]
    # was 19,550,384,160 B (the text model only)
    assert w["total_bytes"] == 2 * (MLLAMA_TEXT + MLLAMA_TOWER) == 21_340_441_670
    assert w["by_role"] == {"vision": 2 * MLLAMA_TOWER}


def test_a_text_only_class_on_a_wrapper_config_counts_no_tower():
    from kvplan.configs.build import build_model

    raw = dict(load_config("gemma-3-27b")[0], architectures=["Gemma3ForCausalLM"])
    assert build_model(raw, "g").weight_vision == (0, 0, 0)
    assert build_model(load_config("gemma-3-27b")[0], "g").weight_vision[0] == 423_060_336


def test_gemma4_tower_is_whole_on_every_rank():
    # Gemma4Config's vision_config is optional (no tower without it: the bundled gemma-4-31b); with
    # Gemma4VisionConfig's defaults, against transformers' modules on the meta device, and by hand: input_proj
    # 3 x 16^2 x 768, position table 2 x 10,240 x 768, 16 layers of q/k/v/o 4 x 768 x 768, q/k norms 2 x 64, MLP
    # 3 x 768 x 3,072 and four norms, embed_vision 768 x 5,376 (the text hidden). vLLM 0.34 gemma4_mm.py replaces
    # every linear of the tower by a ReplicatedLinear: all of it on every TP rank
    transformers = pytest.importorskip("transformers")
    from transformers.models.gemma4.modeling_gemma4 import Gemma4MultimodalEmbedder, Gemma4VisionModel

    from kvplan.configs.build import build_model
    from kvplan.engines.vllm_load import config_weights_per_gpu

    raw = dict(load_config("gemma-4-31b")[0], vision_config={"model_type": "gemma4_vision"})
    config = transformers.AutoConfig.for_model(**raw)
    expected = _meta_params(lambda: (Gemma4VisionModel(config.vision_config),
                                     Gemma4MultimodalEmbedder(config.vision_config, config.text_config)))
    hand = 3 * 256 * 768 + 2 * 10240 * 768 + 16 * (4 * 768 * 768 + 2 * 64 + 3 * 768 * 3072 + 4 * 768) + 768 * 5376
    assert expected == hand == 171_493_376
    text, model = load_model("gemma-4-31b"), build_model(raw, "g4")
    assert text.weight_vision == (0, 0, 0)
    assert model.weight_vision == (hand, 2 * hand, 2 * hand)
    assert model.weight_bytes == text.weight_bytes + 2 * hand
    assert config_weights_per_gpu(model, tp=4) == config_weights_per_gpu(text, tp=4) + 2 * hand


def test_a_decode_step_reads_the_text_model_not_the_tower(cli):
    # Qwen2.5-VL-7B's language model is Qwen2.5-7B's 7,615,616,512 parameters (published), 15,231,233,024 B in
    # bf16; the tower runs once per image at prefill, so a decode step at batch 1 reads those bytes only, while
    # the weights held (the plan's pool) include the tower
    code, out, err = cli("estimate", "qwen2.5-vl-7b", "--gpu", "h100", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    vision = data["model"]["weights"]["by_role"]["vision"]
    assert data["model"]["weight_bytes"] == 15_231_233_024 + vision
    assert data["decode"]["weight_read_bytes_per_gpu"] == 15_231_233_024


# -- InternVL ------------------------------------------------------------------------------------------------------

INTERNVL3_1B = "tests/data/configs/internvl3-1b-pretrained.json"


def _internvl_hf(chat: dict) -> dict:
    """The transformers-format (InternVL3-1B-hf style) config of the same checkpoint: InternVLVisionConfig names
    qkv_bias attention_bias and qk_normalization use_qk_norm; the converted tower has no final norm
    (use_mean_pooling) and the same tensors."""
    v = chat["vision_config"]
    vision = {"model_type": "internvl_vision", "hidden_size": v["hidden_size"],
              "intermediate_size": v["intermediate_size"], "num_hidden_layers": v["num_hidden_layers"],
              "num_attention_heads": v["num_attention_heads"], "attention_bias": v["qkv_bias"],
              "use_qk_norm": v["qk_normalization"], "norm_type": v["norm_type"],
              "image_size": [v["image_size"]] * 2, "patch_size": [v["patch_size"]] * 2, "use_mean_pooling": True}
    return {"model_type": "internvl", "architectures": ["InternVLForConditionalGeneration"],
            "downsample_ratio": chat["downsample_ratio"], "torch_dtype": "bfloat16", "vision_config": vision,
            "text_config": chat["llm_config"]}


def test_internvl_towers_match_transformers_modules_and_split_as_vllm():
    transformers = pytest.importorskip("transformers")
    from transformers.models.internvl.modeling_internvl import InternVLMultiModalProjector, InternVLVisionModel

    from kvplan.configs.build import build_model

    chat = load_config(INTERNVL3_1B)[0]
    hf = _internvl_hf(chat)
    config = transformers.AutoConfig.for_model(**hf)
    expected = _meta_params(lambda: (InternVLVisionModel(config.vision_config),
                                     InternVLMultiModalProjector(config)))
    # InternViT-300M by hand (hidden 1,024, MLP 4,096, 24 layers, patch 14 on 448: 1,025 positions): class
    # embedding, the patch conv with bias, positions; a layer: two LayerNorms, ls1 / ls2, qkv and proj with
    # biases, fc1 / fc2 with biases; mlp1: LayerNorm over 4 x 1,024, 4,096 x 896 and 896 x 896 with biases
    h, i = 1024, 4096
    layer = 4 * h + 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)
    vit = h + (3 * 196 * h + h) + 1025 * h + 24 * layer
    mlp1 = 2 * 4096 + (4096 * 896 + 896) + (896 * 896 + 896)
    assert vit == 304_012_288  # InternViT-300M-448px's published 304M
    assert expected == vit + mlp1 == 308_495_104
    # vLLM 0.34 intern_vit.py: qkv / fc1 split, proj / fc2 row-parallel (biases whole), embeddings, norms, ls and
    # mlp1 (nn.Linear) whole; interns1_vit.py (the transformers format): q/k/v and projection_layer nn.Linear, whole
    chat_whole = h + (3 * 196 * h + h) + 1025 * h + 24 * (4 * h + 2 * h + h + h) + mlp1
    hf_whole = chat_whole + 24 * ((h * 3 * h + 3 * h) + h * h)
    assert load_model(INTERNVL3_1B).weight_vision == (expected, 2 * expected, 2 * chat_whole)
    assert build_model(hf, "internvl3-1b-hf").weight_vision == (expected, 2 * expected, 2 * hf_whole)


def test_internvit_6b_attention_is_whole_under_tp():
    # InternViT-6B's 25 heads: vLLM 0.34 InternParallelAttention falls back to data parallelism when TP does not
    # divide them, so qkv and proj are whole on every rank at any even TP; InternMLP still splits
    from kvplan.configs.build import build_model

    raw = load_config(INTERNVL3_1B)[0]
    raw = dict(raw, vision_config=dict(raw["vision_config"], hidden_size=3200, intermediate_size=12800,
                                       num_attention_heads=25, num_hidden_layers=45, norm_type="rms_norm",
                                       qk_normalization=True, qkv_bias=False))
    h, i = 3200, 12800
    layer = 2 * h + 2 * h + 2 * h + 3 * h * h + (h * h + h) + (h * i + i) + (i * h + h)
    mlp1 = 2 * 4 * h + (4 * h * 896 + 896) + (896 * 896 + 896)
    embed = h + (3 * 196 * h + h) + 1025 * h
    total = embed + 45 * layer + mlp1
    whole = embed + 45 * (layer - (h * i + i) - i * h) + mlp1
    assert build_model(raw, "internvl-6b").weight_vision == (total, 2 * total, 2 * whole)


def test_kimi_vl_moonvit_by_hand():
    # transformers 5.25 has no Kimi-VL classes: MoonViT by hand from vLLM 0.34 moonvit.py (hidden 1,152, MLP 4,304,
    # 27 blocks, patch 14, a 64 x 64 position table): the patch conv with bias; a block's two LayerNorms, wqkv and
    # wo with biases, fc0 / fc1 with biases; the final LayerNorm. The projector (kimi_vl.py): pre_norm over 1,152,
    # linear_1 4,608 x 4,608 and linear_2 4,608 x 2,048 (text hidden), biased
    h, i, m = 1152, 4304, 4 * 1152
    block = 4 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)
    vit = (3 * 196 * h + h) + 64 * 64 * h + 27 * block + 2 * h
    projector = 2 * h + (m * m + m) + (m * 2048 + 2048)
    assert (vit, projector) == (416_866_032, 30_679_808)
    # whole: the patch conv and position table, a block's LayerNorms and wo / fc1 biases, the final LayerNorm and
    # the projector (ReplicatedLinear)
    whole = (3 * 196 * h + h) + 64 * 64 * h + 27 * (4 * h + 2 * h) + 2 * h + projector
    model = load_model("tests/data/configs/kimi-vl-a3b-instruct.json")
    assert model.weight_vision == (vit + projector, 2 * (vit + projector), 2 * whole)
    # Kimi-VL-A3B-Instruct is published as 16.4B parameters (its Hugging Face page)
    assert abs(model.param_count + vit + projector - 16.4e9) < 0.05e9


def test_an_internvl_vision_config_missing_a_field_is_a_note_not_a_guess(cli, tmp_path):
    # the remote-code InternVisionConfig's defaults are not read here: a config without qkv_bias counts no tower
    raw = load_config(INTERNVL3_1B)[0]
    del raw["vision_config"]["qkv_bias"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, out, err = cli("weights", str(path), "--format", "json")
    assert code == 0 and "Traceback" not in err
    w = json.loads(out)["weights"]
    assert w["total_bytes"] == 2 * 629_697_920  # the text model (tests/test_vl_wrappers.py counts it by hand)
    assert any(n.startswith("vision tower not counted (vision_config has no 'qkv_bias')") for n in w["notes"])


def test_glm_4_5v_tower_whole_part_by_hand(cli):
    # GLM-4.5V (hidden 1,536, 24 blocks, patch 14 on 2 frames, 336 / 14 = 24: 576 positions, merge 2, out 4,096):
    # vLLM 0.34 glm4_1v.py holds the Conv3d with bias, the position embedding, the blocks' RMSNorms,
    # post_conv_layernorm / post_layernorm, the downsample Conv2d (1,536 x 2^2 -> 4,096, biased) and the merger's
    # LayerNorm whole; every linear (qkv, proj, the MLPs, the merger's proj) is split
    h, o = 1536, 4096
    whole = (3 * 2 * 196 * h + h) + 576 * h + 24 * 2 * h + 2 * h + (h * 4 * o + o) + 2 * o
    model = load_model(GLM_4_5V)
    assert model.weight_vision[0] == 858_681_856 and model.weight_vision[2] == 2 * whole == 55_895_040
    # GLM-4.5V is published as 108B parameters (its Hugging Face page): the text model and the tower
    assert abs(model.param_count + model.weight_vision[0] - 108e9) < 0.5e9
    code, out, err = cli("weights", GLM_4_5V, "--format", "json")
    assert code == 0, err
    # was 213,704,502,528 B: the text model only, 106,852,251,264 parameters (tests/test_wild_configs_moe.py)
    assert json.loads(out)["weights"]["total_bytes"] == 2 * (106_852_251_264 + 858_681_856) == 215_421_866_240


def test_glm_4_1v_tower_matches_transformers_modules():
    # GLM-4.1V (glm4v): Glm4vVisionConfig's defaults (GLM-4.1V-9B's tower), against transformers' Glm4vVisionModel
    transformers = pytest.importorskip("transformers")
    from transformers.models.glm4v.modeling_glm4v import Glm4vVisionModel

    from kvplan.configs.build import build_model

    text = {"model_type": "glm4v_text", "num_hidden_layers": 40, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 2, "intermediate_size": 13696, "vocab_size": 151552}
    raw = {"model_type": "glm4v", "architectures": ["Glm4vForConditionalGeneration"], "text_config": text,
           "vision_config": {"model_type": "glm4v_vision"}}
    config = transformers.AutoConfig.for_model(**raw)
    expected = _meta_params(lambda: (Glm4vVisionModel._from_config(config.vision_config),))
    assert build_model(raw, "glm-4.1v").weight_vision[:2] == (expected, 2 * expected)


@pytest.mark.parametrize("alias, field", [("qwen2.5-vl-7b", "depth"), (GLM_4_5V, "depth"),
                                          ("llama-3.2-11b-vision", "num_global_layers")])
def test_a_huge_tower_depth_is_an_error_not_a_hang(alias, field):
    # a tower's layer count is held to kvplan's layer maximum (configs/fields.py MAX_LAYERS), as the text model's
    # num_hidden_layers is: before, 10^12 blocks were counted one by one (or listed: MemoryError). Above it the
    # vision_config is malformed: an error naming it, as for the text model (it was a note on a text-only estimate)
    from kvplan.configs.build import build_model
    from kvplan.errors import ConfigError

    raw = load_config(alias)[0]
    raw = dict(raw, vision_config=dict(raw["vision_config"], **{field: 10**12}))
    with pytest.raises(ConfigError, match=f"vision_config: '{field}' must be <= 10,000"):
        build_model(raw, "huge")


PHI3_V = "tests/data/configs/phi-3-vision-128k-instruct.json"


def test_phi3_vision_tower_matches_transformers_clip_and_the_published_total(cli):
    # vLLM 0.34 phi3v.py builds a fixed CLIP ViT-L/14 at 336 (CLIP_VIT_LARGE_PATCH14_336_CONFIG) up to
    # img_processor.layer_idx (-2: 23 of its 24 layers) and without post_layernorm (clip.py drops it when a layer is
    # left out): against transformers' CLIPVisionModel on the meta device; then glb_GN / sub_GN (4 x 1,024 each)
    # and img_projection 4,096 x 3,072 and 3,072 x 3,072 with biases (the text hidden 3,072), all whole on every
    # rank (nn.Linear)
    transformers = pytest.importorskip("transformers")
    from transformers.models.clip.modeling_clip import CLIPVisionModel

    def built(layers):
        config = transformers.CLIPVisionConfig(hidden_size=1024, image_size=336, intermediate_size=4096,
                                               num_attention_heads=16, num_hidden_layers=layers, patch_size=14)
        return _meta_params(lambda: (CLIPVisionModel(config),))

    clip = built(23) - 2 * 1024
    extra = 2 * 4096 + (4096 * 3072 + 3072) + (3072 * 3072 + 3072)
    model = load_model(PHI3_V)
    assert model.weight_vision[:2] == (clip + extra, 2 * (clip + extra))
    # Phi-3-vision-128k-instruct is published as 4.15B parameters (its Hugging Face page): the checkpoint's whole
    # CLIP; the text model is Phi-3-mini's 3,821,079,552 (tests/test_vl_wrappers.py)
    assert model.param_count == 3_821_079_552 and round((model.param_count + built(24) + extra) / 1e7) == 415
    # vLLM skips it with the image limit at 0: planned by dropping img_processor, where its settings live
    totals = []
    for extra_args in ((), ("--set", "img_processor=null")):
        code, out, err = cli("weights", PHI3_V, *extra_args, "--format", "json")
        assert code == 0, err
        totals.append(json.loads(out)["weights"]["total_bytes"])
    assert totals == [2 * (3_821_079_552 + clip + extra), 2 * 3_821_079_552]


# MiniCPM-V 2.6 (openbmb/MiniCPM-V-2_6's config.json, the fields read): Qwen2-7B's text model, SigLIP-400M at 980
MINICPMV_2_6 = {"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6, "hidden_size": 3584,
                "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
                "intermediate_size": 18944, "vocab_size": 151666, "tie_word_embeddings": False,
                "torch_dtype": "bfloat16", "query_num": 64, "drop_vision_last_layer": False,
                "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
                                  "model_type": "siglip", "num_attention_heads": 16, "num_hidden_layers": 27,
                                  "patch_size": 14}}


def test_minicpmv_tower_matches_transformers_siglip_and_the_resampler_by_hand():
    # vLLM 0.34 minicpmv.py: Idefics2VisionTransformer is SigLIP's tower without its head (transformers'
    # SiglipVisionModel with vision_use_head false, on the meta device), less its last layer with
    # drop_vision_last_layer (the remote MiniCPMVConfig's default True); Resampler2_5: query 64 x 3,584, kv_proj
    # 1,152 x 3,584, nn.MultiheadAttention(3,584) (torch on the meta device), ln_q / ln_kv / ln_post, proj
    # 3,584 x 3,584; all of the resampler whole on every rank
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.siglip.modeling_siglip import SiglipVisionModel

    from kvplan.configs.build import build_model

    def siglip(layers):
        config = transformers.SiglipVisionConfig(**dict(MINICPMV_2_6["vision_config"], num_hidden_layers=layers,
                                                        vision_use_head=False))
        return _meta_params(lambda: (SiglipVisionModel(config),))

    attention = _meta_params(lambda: (torch.nn.MultiheadAttention(3584, 28),))
    resampler = 64 * 3584 + 1152 * 3584 + attention + 3 * 2 * 3584 + 3584 * 3584
    model = build_model(MINICPMV_2_6, "minicpm-v-2.6")
    assert model.weight_vision[:2] == (siglip(27) + resampler, 2 * (siglip(27) + resampler))
    # MiniCPM-V 2.6 is published as 8.1B parameters (its Hugging Face page)
    assert round((model.param_count + model.weight_vision[0]) / 1e8) == 81
    # without drop_vision_last_layer in the config, the remote default (True) drops one layer
    raw = {k: v for k, v in MINICPMV_2_6.items() if k != "drop_vision_last_layer"}
    assert build_model(raw, "minicpm-v").weight_vision[0] == siglip(26) + resampler
    # MiniCPM-V 2.0 (no version, hidden 2,304, 64 queries) builds a timm tower kvplan does not count
    raw = dict(MINICPMV_2_6, hidden_size=2304, num_attention_heads=36, num_key_value_heads=36, version=None)
    notes = build_model(raw, "minicpm-v-2").notes
    assert any(n.startswith("vision tower not counted (MiniCPM-V version 2.0") for n in notes)


def test_gemma4_audio_tower_matches_transformers_checkpoint_tensors():
    # Gemma 4 E2B / E4B carry an audio_config: Gemma4AudioModel and embed_audio, against transformers' modules on
    # the meta device; their state_dict (parameters and the persistent input / output min / max buffers of the
    # clipped linears, which the checkpoint holds). vLLM 0.34 gemma4_mm.py holds all of it whole on every rank
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.gemma4.modeling_gemma4 import Gemma4AudioModel, Gemma4MultimodalEmbedder

    from kvplan.configs.build import build_model

    raw = dict(load_config("gemma-4-31b")[0], vision_config={"model_type": "gemma4_vision"})
    vision = build_model(raw, "g4").weight_vision
    raw["audio_config"] = {"model_type": "gemma4_audio"}
    config = transformers.AutoConfig.for_model(**raw)
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        modules = (Gemma4AudioModel(config.audio_config),
                   Gemma4MultimodalEmbedder(config.audio_config, config.text_config))
    audio = sum(t.numel() for m in modules for t in m.state_dict().values())
    # by hand, Gemma4AudioConfig's defaults (hidden 1,024, 12 layers, 8 heads of 128, channels 128 / 32, kernel 5,
    # clipped linears, output 1,536) and the text hidden 5,376: a layer's two feed-forwards (1,024 -> 4,096 ->
    # 1,024, two norms each), q/k/v/post and relative_k_proj, per_dim_scale, the light conv (linear_start 2 x
    # 1,024^2, linear_end, a depthwise kernel of 5, two norms), three norms, and 4 clip bounds for each of its 10
    # clippable linears (2 + 2 feed-forward, q/k/v/post, linear_start / end)
    h = 1024
    layer = 2 * (8 * h * h + 2 * h) + 4 * h * h + h * h + 128 + 3 * h * h + 5 * h + 2 * h + 3 * h + 10 * 4
    hand = (9 * 128 + 128 + 9 * 128 * 32 + 32 + 32 * 32 * h) + 12 * layer + (h * 1536 + 1536) + 1536 * 5376
    assert audio == hand
    model = build_model(raw, "g4-audio")
    assert model.weight_vision == (vision[0] + audio, 2 * (vision[0] + audio), 2 * (vision[0] + audio))
    assert any("Gemma4AudioModel" in n and "--set audio_config=null" in n for n in model.notes)


def test_phi4_multimodal_remote_code_encoders_say_they_are_not_counted(cli, tmp_path):
    # Phi-4-multimodal's remote-code config keeps its image and audio encoders' settings under embd_layer, not
    # vision_config: the weights are its text model's, which the note must say (it said nothing)
    from pathlib import Path

    data = Path(__file__).parent / "data" / "configs"
    raw = json.loads((data / "phi-4-multimodal-instruct-text.json").read_text())
    raw["embd_layer"] = {"embedding_cls": "image", "image_embd_layer": {}, "audio_embd_layer": {}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    code, out, err = cli("estimate", str(path), "-f", "json")
    assert code == 0, err
    assert any(n.startswith("vision tower not counted") for n in json.loads(out)["model"]["weights"]["notes"])
