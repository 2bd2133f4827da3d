"""Model types of transformers 5.25 that are not decoders (vision towers, text encoders, backbones, mask decoders,
parts of refused or encoder-decoder models) are refused by name (kvplan/configs/encoders_refused.py); kvplan used to
read each as a guessed decoder, since its config carries num_hidden_layers and num_attention_heads.

The configs below carry those standard decoder fields, so the generic rule would accept them: only the refusal by
name stops them. The fields are the models' own where one is quoted (the CLIP ViT-L/14-336 tower is the
vision_config of model_specs/llava-1.5-7b.json), else their transformers 5.25 config class defaults
(models/<name>/configuration_<name>.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.encoders_refused import ENCODERS_REFUSED
from kvplan.configs.families import BY_ARCHITECTURE, FAMILIES, REFUSED
from kvplan.core.estimate import estimate

SPECS = Path(__file__).resolve().parents[1] / "model_specs"


@pytest.mark.parametrize("raw, words", [
    # llava-1.5-7b.json's vision_config (CLIP ViT-L/14 at 336 px)
    ({"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
      "num_hidden_layers": 24, "image_size": 336, "patch_size": 14}, "vision tower"),
    # Idefics3VisionConfig defaults
    ({"model_type": "idefics3_vision", "hidden_size": 1152, "num_attention_heads": 16, "num_hidden_layers": 27},
     "vision tower"),
    # SiglipTextConfig defaults
    ({"model_type": "siglip_text_model", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12},
     "text encoder"),
    # DebertaV2Config defaults (DeBERTa-v2-xlarge's shape)
    ({"model_type": "deberta-v2", "hidden_size": 1536, "num_attention_heads": 24, "num_hidden_layers": 24},
     "bidirectional attention"),
    # OpenAIPrivacyFilterConfig: a token tagger with a bidirectional sliding-window mask
    ({"model_type": "openai_privacy_filter", "hidden_size": 640, "num_attention_heads": 14, "num_hidden_layers": 8,
      "num_key_value_heads": 2, "sliding_window": 128}, "encoder"),
    # Dinov2Config defaults
    ({"model_type": "dinov2", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12}, "backbone"),
    # SamMaskDecoderConfig defaults
    ({"model_type": "sam_mask_decoder", "hidden_size": 256, "num_attention_heads": 8, "num_hidden_layers": 2},
     "mask decoder"),
    # BltGlobalTransformerConfig defaults
    ({"model_type": "blt_global_transformer", "hidden_size": 4096, "num_attention_heads": 32,
      "num_hidden_layers": 25}, "sub-config of blt"),
    # T5Gemma2DecoderConfig-shaped
    ({"model_type": "t5gemma2_decoder", "hidden_size": 2304, "num_attention_heads": 8, "num_key_value_heads": 4,
      "num_hidden_layers": 26, "head_dim": 256}, "encoder-decoder"),
    # EsmcConfig and NeoMMEConfig defaults (bidirectional encoders; NeoMME's window is a bidirectional one)
    ({"model_type": "esmc", "hidden_size": 2560, "num_attention_heads": 40, "num_hidden_layers": 80, "head_dim": 64},
     "bidirectional attention"),
    ({"model_type": "neomme", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
      "num_hidden_layers": 17, "head_dim": 64, "sliding_window": 256}, "bidirectional attention"),
    # Gemma4VisionConfig defaults (Gemma4Config's vision_config)
    ({"model_type": "gemma4_vision", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 16,
      "head_dim": 64}, "vision tower"),
    # TimesFmConfig and TimesFm2_5Config defaults (causal decoders over value patches, no cache)
    ({"model_type": "timesfm", "hidden_size": 1280, "num_attention_heads": 16, "num_hidden_layers": 50,
      "head_dim": 80}, "time-series forecaster"),
    ({"model_type": "timesfm2_5", "hidden_size": 1280, "num_attention_heads": 16, "num_key_value_heads": 16,
      "num_hidden_layers": 20, "head_dim": 80}, "no KV cache"),
])
def test_a_non_decoder_config_is_refused_in_one_line(tmp_path, estimate_error, raw, words):
    path = tmp_path / f"{raw['model_type']}.json"
    path.write_text(json.dumps(raw))
    line = estimate_error(path)  # non-zero exit, one 'kvplan: error:' line, no traceback
    assert repr(raw["model_type"]) in line and words in line, line
    assert "guessed" not in line


def test_no_new_refusal_shadows_or_is_shadowed():
    # a model_type with a family record is read by it (build.resolve looks FAMILIES up first), so a refusal of one
    # would be dead; none of these types had a record on main before this change (FAMILIES is unchanged by it)
    by_architecture = {model_type for model_type, _ in BY_ARCHITECTURE}
    assert not set(ENCODERS_REFUSED) & set(FAMILIES)
    assert not set(ENCODERS_REFUSED) & by_architecture
    # merged last among the dicts of REFUSED that name them: no other entry replaces these reasons
    assert all(REFUSED[name] == why for name, why in ENCODERS_REFUSED.items())


def test_no_new_refusal_is_a_causal_lm_of_the_installed_transformers():
    # transformers lists every type it builds a causal LM (or an image-text-to-text model) for in these mappings;
    # none of the refused types may be one (types the installed release lacks are not checked)
    modeling_auto = pytest.importorskip("transformers.models.auto.modeling_auto")
    generators = set(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(
        modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)
    assert not set(ENCODERS_REFUSED) & generators


def test_glm_image_text_has_a_record_and_is_not_refused():
    # GLM-Image's generator is a causal token decoder SGLang 0.5.23 serves: read exactly (tests/test_glm_image.py)
    assert "glm_image_text" in FAMILIES and "glm_image_text" not in REFUSED


def test_a_wrapper_with_a_refused_vision_tower_still_reads_its_text_model():
    # only a top-level model_type is refused: llava-1.5's vision_config is a clip_vision_model, its text_config
    # LlamaConfig's defaults (32 layers, 32 KV heads, head_dim 4096 / 32 = 128), fp16:
    # 2 (K, V) x 32 x 32 x 128 x 2 B = 524,288 B per token
    model = build_model(json.loads((SPECS / "llava-1.5-7b.json").read_text()), "llava-1.5-7b")
    assert model.reading == "exact"
    assert estimate(model, 4096).bytes_per_token == 2 * 32 * 32 * 128 * 2 == 524_288
