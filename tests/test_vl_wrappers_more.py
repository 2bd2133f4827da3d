"""More image/audio-text wrappers vLLM 0.33 serves (configs/vl_wrappers.py, families.py): Ovis, MiniCPM-o,
Phi-4-multimodal, dots.ocr, BAGEL, Isaac, Qwen2-Audio, GLM-ASR and MiDashengLM; and the text model SGLang
0.5.23 picks from a wrapper's config (engines/sglang_rules.py hf_text_config).

Expected bytes are worked out by hand from the config's numbers and the layout vLLM 0.33's model file builds
(cited on each test), in bf16 (2 bytes).

Configs (tests/data/configs/):
- phi-4-multimodal-instruct-text.json: microsoft/Phi-4-multimodal-instruct's config.json as TensorRT-LLM's
  public test module quotes it (code index id 4044839065, PHI4MM_CONFIG in its test_modeling_phi4mm), its top-level
  (text) fields only: the nested audio_processor / embd_layer blocks, rope_scaling's long/short factor lists,
  `_name_or_path` and `_attn_implementation` are left out, and num_hidden_layers is the original 32 that the
  module's own comment gives (it cuts it to 2 for its test);
- dots-mocr-trimmed.json: mlx-community/dots.mocr-4bit's config.json as a public Swift test quotes it (code index
  id 61051606353, "trimmed to the fields we decode"), less its mlx `quantization` block.
The Ovis, MiniCPM-o, BAGEL, Isaac, Qwen2-Audio, GLM-ASR and MiDashengLM configs below are hand-written and minimal (no public copy of a whole
config.json was found in the code index): only the fields the reading needs, shaped as the config classes read them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES
from kvplan.configs.vl_wrappers import minicpmo_text
from kvplan.core.estimate import estimate
from kvplan.engines.sglang_rules import context_limit, hf_text_config
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


# a small qwen2-shaped text model (hand-written): 4 layers, 8 heads of 64 (512 / 8), 2 KV heads
QWEN2_TEXT = {"model_type": "qwen2", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
              "num_key_value_heads": 2, "intermediate_size": 1024, "vocab_size": 1000,
              "max_position_embeddings": 32768}
QWEN2_BYTES = 4 * 2 * 64 * 2 * 2  # 4 layers x 2 KV heads x 64 x (K, V) x 2 B = 2,048 B per token


def test_ovis_reads_its_llm_config_by_its_model_type():
    # vLLM 0.33 configs/ovis.py OvisConfig: text_config = AutoConfig.for_model(llm_config's model_type, ...);
    # ovis.py Ovis builds init_vllm_registered_model on config.get_text_config()
    raw = {"model_type": "ovis", "architectures": ["Ovis"], "llm_config": dict(QWEN2_TEXT),
           "visual_tokenizer_config": {"model_type": "siglip_visual_tokenizer", "vocab_size": 65536},
           "multimodal_max_length": 8192, "hidden_size": 512}
    model = build_model(raw, "ovis")
    assert model.reading == "exact" and model.family == "qwen2"
    assert estimate(model, 1024).bytes_per_token == QWEN2_BYTES == 2_048
    # OvisConfig needs llm_config (without it text_config is None): refused, not read flat
    flat = {k: v for k, v in raw.items() if k != "llm_config"}
    with pytest.raises(ConfigError, match="keeps its text model under 'llm_config', which the config lacks"):
        build_model(flat, "ovis-flat")


@pytest.mark.parametrize("version, text", [(None, "qwen2"), (2.6, "qwen2"), ("2.6", "qwen2"), (4.5, "qwen3"),
                                           ("4.5.1", "qwen3")])
def test_minicpmo_version_picks_the_text_model(version, text):
    # vLLM 0.33 minicpmo.py MiniCPMO.__new__: version's first two numbers (absent: 2.6) pick MiniCPMO2_6
    # (MiniCPMV2_6: Qwen2) or MiniCPMO4_5 (MiniCPMV4_5: Qwen3); flat fields, hand-written:
    # 2 layers x 2 KV heads x 64 x 2 x 2 B = 1,024 B per token
    raw = {"model_type": "minicpmo", "architectures": ["MiniCPMO"], "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
           "vocab_size": 1000, "query_num": 64}
    if version is not None:
        raw["version"] = version
    assert minicpmo_text(raw, "minicpmo") == text
    model = build_model(raw, "minicpmo")
    assert model.family == FAMILIES[text].name and model.reading == "exact"
    assert estimate(model, 1024).bytes_per_token == 2 * 2 * 64 * 2 * 2 == 1_024


@pytest.mark.parametrize("version, message", [(2.5, "version 2.5 is not one vLLM 0.33 serves"),
                                              ("two", "'version' must be a number"),
                                              (True, "'version' must be a number")])
def test_minicpmo_unserved_version_is_one_line(version, message):
    raw = {"model_type": "minicpmo", "version": version, "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4}
    with pytest.raises(ConfigError, match=message):
        build_model(raw, "minicpmo")


def test_phi4mm_runs_as_llama_with_its_window_on_every_layer():
    # vLLM 0.33 phi4mm.py Phi4MMForCausalLM builds LlamaModel on the flat config; no layer_types, so each
    # Attention takes cache_config.sliding_window (the config's 262,144) on every layer:
    # 32 layers x 8 KV heads x 128 (3072 / 24) x (K, V) x 2 B = 131,072 B per token
    model = build_model(_raw("phi-4-multimodal-instruct-text.json"), "phi4mm")
    assert model.reading == "exact" and model.family == "phi4mm"
    e = estimate(model, 300_000)
    assert e.bytes_per_token == 32 * 8 * 128 * 2 * 2 == 131_072
    assert e.kv_bytes_per_sequence == 262_144 * 131_072  # the window caps what a layer keeps
    # the text model only: 32 layers of q, o (3072 x 3072), k, v (3072 x 1024), a 3 x 3072 x 8192 MLP and two
    # norms; tied embeddings of 200,064 x 3072; the final norm (3.8B, as Phi-4-mini's text model is published)
    per_layer = 2 * 3072 * 3072 + 2 * 3072 * 1024 + 3 * 3072 * 8192 + 2 * 3072
    assert model.param_count == 32 * per_layer + 200064 * 3072 + 3072


def test_dots_ocr_is_read_flat_as_qwen2():
    # vLLM 0.33 configs/dotsocr.py DotsOCRConfig(Qwen2Config); dots_ocr.py builds Qwen2ForCausalLM with
    # hf_config=self.config: 28 layers x 2 KV heads x 128 (1536 / 12) x 2 x 2 B = 28,672 B per token
    model = build_model(_raw("dots-mocr-trimmed.json"), "dots_ocr")
    assert model.reading == "exact" and model.family == "qwen2"
    assert estimate(model, 4096).bytes_per_token == 28 * 2 * 128 * 2 * 2 == 28_672
    # Qwen2's biases on q, k, v: 28 x (1536 x (1536 + 2 x 256) + (1536 + 2 x 256) + 1536^2 + 3 x 1536 x 8960
    # + 2 x 1536) + untied embeddings and head of 151,936 x 1536 + the final norm (about 1.8B, the published
    # dots.ocr being 3B with its 1.2B vision encoder)
    per_layer = 1536 * (1536 + 2 * 256) + (1536 + 2 * 256) + 1536 * 1536 + 3 * 1536 * 8960 + 2 * 1536
    assert model.param_count == 28 * per_layer + 2 * 151936 * 1536 + 1536


def test_bagel_reads_llm_config_as_qwen2_whatever_it_names():
    # vLLM 0.33 configs/bagel.py BagelConfig: llm_config -> Qwen2Config(**llm_config) (its model_type is not
    # looked at); bagel.py builds Qwen2ForCausalLM with hf_config=config.llm_config
    text = dict(QWEN2_TEXT, model_type="qwen2_mot")
    raw = {"model_type": "bagel", "architectures": ["BagelForConditionalGeneration"], "llm_config": text,
           "visual_und": True, "visual_gen": True}
    model = build_model(raw, "bagel")
    assert model.reading == "exact" and model.family == "qwen2"
    assert estimate(model, 1024).bytes_per_token == QWEN2_BYTES
    # without llm_config BagelConfig runs Qwen2Config(): refused rather than read flat
    flat = {**{k: v for k, v in raw.items() if k != "llm_config"}, **QWEN2_TEXT, "model_type": "bagel"}
    with pytest.raises(ConfigError, match="keeps its text model under 'llm_config'"):
        build_model(flat, "bagel-flat")


def test_isaac_reads_text_config_as_qwen3_or_the_top_level():
    # vLLM 0.33 configs/isaac.py IsaacConfig: text_config -> Qwen3Config(**text_config), absent -> Qwen3Config
    # (**kwargs) from the top-level fields; isaac.py builds Qwen3ForCausalLM (Qwen2Model reads get_text_config())
    text = dict(QWEN2_TEXT, model_type="qwen3", head_dim=128)  # 4 layers x 2 KV heads x 128 x 2 x 2 B = 4,096
    nested = build_model({"model_type": "isaac", "text_config": text, "vision_token": "<image>"}, "isaac")
    flat = build_model({**text, "model_type": "isaac"}, "isaac-flat")
    for model in (nested, flat):
        assert model.reading == "exact" and model.family == FAMILIES["qwen3"].name
        assert estimate(model, 1024).bytes_per_token == 4 * 2 * 128 * 2 * 2 == 4_096


def test_qwen2_audio_reads_text_config_as_qwen2():
    # transformers Qwen2AudioConfig.__post_init__: text_config's model_type defaults to qwen2, and an absent
    # text_config is Qwen2Config() (not the top-level fields); vLLM 0.33 qwen2_audio.py builds Qwen2ForCausalLM
    # with hf_config=config.text_config
    text = {k: v for k, v in QWEN2_TEXT.items() if k != "model_type"}
    model = build_model({"model_type": "qwen2_audio", "text_config": text, "audio_config": {"d_model": 1280}},
                        "qwen2_audio")
    assert model.reading == "exact" and model.family == "qwen2"
    assert estimate(model, 1024).bytes_per_token == QWEN2_BYTES
    with pytest.raises(ConfigError, match="keeps its text model under 'text_config'"):
        build_model({**text, "model_type": "qwen2_audio"}, "qwen2-audio-flat")


def test_glmasr_fills_its_text_model_from_its_own_defaults():
    # transformers GlmAsrConfig.__post_init__: text_config = LlamaConfig(**{**_default_text_config_kwargs,
    # **text_config}); absent, the defaults alone (28 layers, 16 heads and 4 KV heads of 2048 / 16 = 128);
    # vLLM 0.33 glmasr.py builds LlamaForCausalLM: 28 x 4 x 128 x 2 x 2 B = 57,344 B per token
    absent = build_model({"model_type": "glmasr", "audio_config": {"hidden_size": 1280}}, "glmasr")
    assert absent.reading == "exact" and absent.family == "llama"
    assert estimate(absent, 1024).bytes_per_token == 28 * 4 * 128 * 2 * 2 == 57_344
    # a text_config naming some fields keeps the defaults for the rest: 12 layers, the default 4 KV heads of 128
    some = build_model({"model_type": "glmasr", "text_config": {"num_hidden_layers": 12}}, "glmasr")
    assert estimate(some, 1024).bytes_per_token == 12 * 4 * 128 * 2 * 2 == 24_576


def test_midashenglm_reads_qwen2_5_omni_text_defaults():
    # vLLM 0.33 configs/midashenglm.py: Qwen2_5OmniTextConfig(**text_config) if text_config else
    # Qwen2_5OmniTextConfig(); its defaults (transformers): 28 layers, 28 heads of 3584 / 28 = 128, 4 KV heads,
    # no window (use_sliding_window false); midashenglm.py builds Qwen2ForCausalLM: 28 x 4 x 128 x 2 x 2 B
    for text in ({}, None):
        raw = {"model_type": "midashenglm", "audio_encoder_config": {"embed_dim": 1280}}
        if text is not None:
            raw["text_config"] = text
        model = build_model(raw, "midashenglm")
        assert model.reading == "exact" and model.family == "qwen2"
        assert estimate(model, 1024).bytes_per_token == 28 * 4 * 128 * 2 * 2 == 57_344
    # a full text_config is read as Qwen2 whatever model_type it names (qwen2_5_omni_text)
    text = {k: v for k, v in QWEN2_TEXT.items() if k != "model_type"}
    model = build_model({"model_type": "midashenglm", "text_config": {**text, "model_type": "qwen2_5_omni_text"}},
                        "midashenglm")
    assert estimate(model, 1024).bytes_per_token == QWEN2_BYTES


# -- SGLang: which sub-config is the text model ----------------------------------------------------------------


def test_sglang_text_config_follows_get_hf_text_config_priority():
    # SGLang 0.5.23 utils/hf_transformers/common.py get_hf_text_config: thinker_config (its text_config, else
    # itself) > llm_config > language_config > text_config; a Llava*ForCausalLM architecture keeps the config
    llm, lang, text = {"n": "llm"}, {"n": "language"}, {"n": "text"}
    assert hf_text_config({"llm_config": llm, "language_config": lang, "text_config": text}) is llm
    assert hf_text_config({"language_config": lang, "text_config": text}) is lang
    assert hf_text_config({"text_config": text}) is text
    thinker = {"text_config": text}
    assert hf_text_config({"thinker_config": thinker, "llm_config": llm}) is text
    assert hf_text_config({"thinker_config": {"n": "thinker"}})["n"] == "thinker"
    flat = {"architectures": ["LlavaLlamaForCausalLM"], "text_config": text}
    assert hf_text_config(flat) is flat and hf_text_config(flat, flat=False) == {}
    assert hf_text_config({"n": "flat"})["n"] == "flat" and hf_text_config({"n": "flat"}, flat=False) == {}


def test_sglang_context_length_reads_internvl_llm_config():
    # SGLang 0.5.23 model_config.py: context_len = get_context_length(hf_text_config), the llm_config for
    # InternVL: its max_position_embeddings 32,768 x the dynamic rope factor 2 = 65,536 (kvplan read the top
    # level before, which names no context length)
    raw = _raw("internvl3-1b-pretrained.json")
    assert "max_position_embeddings" not in raw
    assert context_limit(raw) == (32768 * 2, True)
    # DeepSeek-VL2 keeps it under language_config
    assert context_limit({"model_type": "deepseek_vl_v2", "language_config": {"max_position_embeddings": 4096}}) \
        == (4096, True)
