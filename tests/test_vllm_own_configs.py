"""model_types vLLM 0.34 reads with config classes of its own (configs/vllm_own.py): Fun-Audio-Chat and Inkling's own
layout read exactly, the rest refused by name, none of them left to the generic guess.

Expected values are worked out by hand from the config's numbers and vLLM 0.34's code (bf16: 2 bytes):
- funaudiochat: transformers_utils/configs/funaudiochat.py FunAudioChatConfig (text_config by its model_type, qwen2
  by default), model_executor/models/funaudiochat.py (built as Qwen3ForCausalLM; qwen3.py Qwen3Attention:
  head_dim = config.head_dim or hidden_size // heads);
- inkling_model: models/inkling/configs.py InklingModelConfig, nvidia/model.py InklingDecoderLayer / InklingModel,
  nvidia/attention.py InklingAttention (FullAttentionSpec, or SlidingWindowSpec of sliding_window_size on local
  layers), nvidia/sconv_swa_attn.py InklingConvState (the K, V, attention- and MLP-output short convolutions).

Configs:
- tests/data/configs/inkling-small-text-quoted.json: Inkling-Small's text_config as a public Rust test quotes "the
  42-layer release, from its own config.json" (code index id 57423025716, fn small()), its values as given, nested
  as text_config (model_type inkling_model) of an inkling_mm_model config with InklingForConditionalGeneration,
  the layout vLLM's own tests and a public fake-checkpoint writer use (code index ids 55215711652, 68866808278);
- Inkling's 66-layer text_config as another public test quotes it (code index id 68439258833, _inkling_config), with
  its hand-worked expectation of K/V and short-conv bytes at 1M tokens, which the test below restates;
- Falcon's original RefinedWebModel / RefinedWeb configs (falcon-7b, falcon-40b) as public tt-metal files quote them
  (code index ids 3503026307 and 5862211615), trimmed to the fields RWConfig reads; the falcon-40b one with its
  added new_decoder_architecture / num_kv_heads removed, as tiiuae/falcon-40b's original file has neither (the
  case RWConfig's hidden_size-8192 rule exists for);
- hand-written here: Fun-Audio-Chat (no public config.json of Fun-Audio-Chat-8B was found; vLLM 0.34's test
  registry marks it is_available_online=False): a qwen3 text_config with Qwen3-8B's shape (36 layers, 8 KV heads
  of 128); and small inkling_model configs exercising InklingModelConfig's defaults.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.configs.families import FAMILIES, REFUSED
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"

FUN_AUDIO_CHAT = {
    "architectures": ["FunAudioChatForConditionalGeneration"], "model_type": "funaudiochat", "torch_dtype": "bfloat16",
    "audio_config": {"model_type": "funaudiochat_audio_encoder", "encoder_layers": 32, "d_model": 1280},
    "text_config": {"model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936},
}


def test_fun_audio_chat_caches_its_qwen3_text_model():
    model = build_model(FUN_AUDIO_CHAT, "fun-audio-chat")
    assert model.reading == "exact" and model.family == FAMILIES["qwen3"].name and len(model.layers) == 36
    e = estimate(model, 32768)
    # 2 (K, V) x 36 layers x 8 KV heads x 128 x 2 B = 147,456 B per token; the audio encoders keep nothing
    assert e.bytes_per_token == 2 * 36 * 8 * 128 * 2 == 147_456
    assert e.state_bytes_per_sequence == 0


def test_fun_audio_chat_text_config_without_a_model_type_is_qwen2():
    # FunAudioChatConfig: text_config.setdefault("model_type", "qwen2") -> Qwen2Config, which has no head_dim, so
    # Qwen3Attention takes hidden_size // heads = 2048 // 32 = 64 (Qwen3Config's default would be 128)
    text = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 4}
    model = build_model(FUN_AUDIO_CHAT | {"text_config": text}, "fun-audio-chat-qwen2")
    assert model.family == FAMILIES["qwen2"].name
    # 2 x 4 layers x 4 KV heads x 64 x 2 B = 4,096 B per token
    assert estimate(model, 1024).bytes_per_token == 2 * 4 * 4 * 64 * 2 == 4_096


def test_fun_audio_chat_without_text_config_is_refused():
    raw = {k: v for k, v in FUN_AUDIO_CHAT.items() if k != "text_config"} | {"num_hidden_layers": 4}
    with pytest.raises(ConfigError, match="funaudiochat.*text_config"):
        build_model(raw, "fun-audio-chat")


def _inkling_small() -> dict:
    return json.loads((DATA / "inkling-small-text-quoted.json").read_text())


def test_inkling_small_checkpoint_reads_as_vllm_builds_it():
    model = build_model(_inkling_small(), "inkling-small")
    assert model.reading == "exact" and model.family == FAMILIES["inkling_model"].name and len(model.layers) == 42
    e = estimate(model, 131072)
    # local_layer_ids lists 35 layers (every i with i % 6 != 5 below 42); 7 full layers (5, 11, ..., 41).
    # K/V per token and layer: 2 x 8 KV heads x 128 x 2 B = 4,096 B on both kinds (swa_* equal the full sizes here)
    # full: 7 x 131,072 x 4,096 = 3,758,096,384 B; local: 35 x 512 (sliding_window_size) x 4,096 = 73,400,320 B
    assert e.kv_bytes_per_sequence == 7 * 131072 * 4096 + 35 * 512 * 4096 == 3_831_496_704
    # short convs on every layer: (4 - 1) x (2 x 8 x 128 + 2 x 4096) = 30,720 values x 2 B = 61,440 B; 42 layers
    assert e.state_bytes_per_sequence == 42 * 3 * (2 * 8 * 128 + 2 * 4096) * 2 == 2_580_480


def test_inkling_small_parameters_as_vllm_builds_them():
    model = build_model(_inkling_small(), "inkling-small")
    h, vocab = 4096, 201024  # padded_vocab_size absent -> vocab_size's 201,024 rows (unpadded 200,058 is logits only)
    # attention (full): qkvr 4096 x (32 x 128 + 2 x 8 x 128 + 16 x 32 = 6,656) = 27,262,976; wo_ud 32 x 128 x 4096 =
    # 16,777,216; rel_logits_proj 16 x 1024 = 16,384; q/k norms 2 x 128; k/v sconv 2 x 8 x 128 x 4 = 8,192
    full = 4096 * 6656 + 32 * 128 * 4096 + 16 * 1024 + 2 * 128 + 2 * 8 * 128 * 4
    local = full - 16 * 1024 + 16 * 512  # rel_logits_proj over sliding_window_size (512)
    extras = 2 * h + 2 * h * 4  # attn/mlp norms, attn/mlp output sconvs
    dense = 3 * h * 16384  # layers 0, 1 (dense_mlp_idx 2): dense_intermediate_size; no use_global_scale
    expert = 3 * h * 2048
    moe = (256 + 2) * h + (256 + 2) * expert  # gate rows over routed + shared, routed + sink experts
    ends = 2 * vocab * h + h  # embed_tokens, untied lm_head, final norm (no use_embed_norm)
    total = ends + 7 * full + 35 * local + 42 * extras + 2 * dense + 40 * moe
    assert total == 263_655_184_896
    assert model.param_count == total
    # a token leaves 256 - 6 routed experts idle in each of the 40 MoE layers
    assert model.active_param_count == total - 40 * (256 - 6) * expert == 11_996_944_896


def test_inkling_66_layers_at_one_million_tokens():
    text = {"model_type": "inkling_model", "num_hidden_layers": 66, "num_attention_heads": 64, "num_key_value_heads": 8,
            "head_dim": 128, "hidden_size": 6144, "local_layer_ids": [i for i in range(66) if (i + 1) % 6],
            "sliding_window_size": 512, "swa_num_attention_heads": 64, "swa_num_key_value_heads": 16,
            "swa_head_dim": 128, "use_sconv": True, "sconv_kernel_size": 4}
    raw = {"model_type": "inkling_mm_model", "architectures": ["InklingForConditionalGeneration"], "text_config": text}
    e = estimate(build_model(raw, "inkling"), 1024**2)
    # 11 full layers (5, 11, ..., 65) x 1M x 2 x 8 x 128 x 2 B; 55 local x 512 x 2 x 16 x 128 x 2 B
    assert e.kv_bytes_per_sequence == 2 * 11 * 1024**2 * 8 * 128 * 2 + 2 * 55 * 512 * 16 * 128 * 2
    # convs: 3 columns of (2 x 8 x 128 + 2 x 6144) on full layers, (2 x 16 x 128 + 2 x 6144) on local ones
    assert e.state_bytes_per_sequence == (11 * 3 * (2 * 8 * 128 + 2 * 6144) * 2
                                          + 55 * 3 * (2 * 16 * 128 + 2 * 6144) * 2)


def test_inkling_model_defaults_follow_inkling_model_config():
    # the top-level text-only layout (InklingForCausalLM), sparse: InklingModelConfig fills head_dim = 256 // 4 = 64,
    # the swa_* sizes from the full ones, sliding_window_size 512, kernel 4, and local_layer_ids [] (all full)
    raw = {"model_type": "inkling_model", "architectures": ["InklingForCausalLM"], "num_hidden_layers": 4,
           "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2}
    e = estimate(build_model(raw, "inkling-tiny"), 4096)
    # 4 full layers x 2 x 2 KV heads x 64 x 2 B = 2,048 B per token; no window
    assert e.bytes_per_token == 4 * 2 * 2 * 64 * 2 == 2_048
    assert e.kv_bytes_per_sequence == 4096 * 2_048
    # convs: 4 layers x (4 - 1) x (2 x 2 x 64 + 2 x 256) x 2 B = 4 x 4,608
    assert e.state_bytes_per_sequence == 4 * 3 * (2 * 2 * 64 + 2 * 256) * 2 == 18_432

    # local layers 0 and 2 without swa_*: the full sizes over 512 tokens; layer_types is not read by vLLM
    local = raw | {"local_layer_ids": [0, 2], "layer_types": ["hybrid"] * 4}
    model = build_model(local, "inkling-tiny-local")
    assert [c.policy.window_tokens for layer in model.layers for c in layer.caches] == [512, None, 512, None]
    # 2 full x 4,096 x 512 B + 2 local x 512 x 512 B
    assert estimate(model, 4096).kv_bytes_per_sequence == 2 * 4096 * 512 + 2 * 512 * 512

    # swa_* given: local layers keep 1 KV head of 32 (2 x 1 x 32 x 2 B = 128 B a token) and convs of that width
    swa = local | {"swa_num_key_value_heads": 1, "swa_head_dim": 32, "sconv_kernel_size": 3}
    e = estimate(build_model(swa, "inkling-tiny-swa"), 4096)
    assert e.kv_bytes_per_sequence == 2 * 4096 * 512 + 2 * 512 * 128
    # kernel 3: 2 columns; full layers 2 x (2 x 2 x 64 + 512), local 2 x (2 x 1 x 32 + 512), x 2 B each
    assert e.state_bytes_per_sequence == 2 * 2 * (256 + 512) * 2 + 2 * 2 * (64 + 512) * 2


def test_kimi_k31_reads_as_kimi_k3():
    # vLLM 0.34 _CONFIG_REGISTRY: kimi_k31 -> KimiK3Config, the kimi_k3 class; the same config under either name
    # caches the same (tests/data/configs/kimi-k3.json: moonshotai/Kimi-K3's config.json, see test_kimi_k3.py)
    raw = json.loads((DATA / "kimi-k3.json").read_text())
    k3, k31 = build_model(raw, "k3"), build_model(raw | {"model_type": "kimi_k31"}, "k31")
    assert k31.reading == "exact" and k31.layers == k3.layers and k31.param_count == k3.param_count
    # 24 MLA layers x (512 + 64) x 2 B a token (test_kimi_k3.py's figure)
    assert estimate(k31, 32768).bytes_per_token == 24 * (512 + 64) * 2


FALCON_7B_RW = {"architectures": ["RWForCausalLM"], "bias": False, "hidden_size": 4544, "model_type": "RefinedWebModel",
                "multi_query": True, "n_head": 71, "n_layer": 32, "parallel_attn": True, "torch_dtype": "bfloat16",
                "vocab_size": 65024}
FALCON_40B_RW = {"alibi": False, "architectures": ["RWForCausalLM"], "bias": False, "hidden_size": 8192,
                 "model_type": "RefinedWeb", "n_head": 128, "n_head_kv": 8, "n_layer": 60, "parallel_attn": True,
                 "torch_dtype": "bfloat16", "vocab_size": 65024}


def test_falcon_7b_refinedwebmodel_is_multi_query():
    model = build_model(FALCON_7B_RW, "falcon-7b")
    assert model.reading == "exact" and len(model.layers) == 32
    # multi_query: one KV head of 4544 / 71 = 64; 2 x 32 layers x 1 x 64 x 2 B = 8,192 B per token
    assert estimate(model, 2048).bytes_per_token == 2 * 32 * 1 * 64 * 2 == 8_192
    # falcon.py: query_key_value 4544 x (4544 + 2 x 64), dense 4544 x 4544, MLP 2 x 4544 x 18,176, one LayerNorm
    # (parallel_attn) of 2 x 4544 a layer; tied embeddings 65,024 x 4544 and ln_f: 6,921,720,704, Falcon-7B's count
    layer = 4544 * 4672 + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544
    assert model.param_count == 32 * layer + 65024 * 4544 + 2 * 4544 == 6_921_720_704


def test_falcon_40b_refinedweb_keeps_its_eight_kv_heads():
    # RWConfig sets new_decoder_architecture at hidden_size 8192, so n_head_kv (8) counts: 2 x 60 x 8 x 64 x 2 B
    model = build_model(FALCON_40B_RW, "falcon-40b")
    assert estimate(model, 2048).bytes_per_token == 2 * 60 * 8 * 64 * 2 == 122_880
    # the same file under transformers' falcon model_type has no such rule: multi_query's one KV head
    assert estimate(build_model(FALCON_40B_RW | {"model_type": "falcon"}, "f"), 2048).bytes_per_token == 2 * 60 * 64 * 2
    # new architecture: query_key_value 8192 x (2 x 8 + 128) x 64, dense, MLP 2 x 8192 x 32,768, two LayerNorms
    # (ln_attn, ln_mlp); tied embeddings and ln_f: 41,303,293,952, Falcon-40B's count
    layer = 8192 * 144 * 64 + 8192 * 8192 + 2 * 8192 * 32768 + 2 * 2 * 8192
    assert model.param_count == 60 * layer + 65024 * 8192 + 2 * 8192 == 41_303_293_952
    # n_head_kv absent: RWConfig's default is 1, not the heads
    rest = {k: v for k, v in FALCON_40B_RW.items() if k != "n_head_kv"}
    assert estimate(build_model(rest, "f"), 2048).bytes_per_token == 2 * 60 * 1 * 64 * 2


@pytest.mark.parametrize("model_type", ["colqwen3", "ops_colqwen3", "qwen3_vl_nemotron_embed"])
def test_colqwen3_retrieval_models_are_refused_as_pooling_models(model_type):
    # vLLM 0.34 registry.py: ColQwen3, OpsColQwen3Model and Qwen3VLNemotronEmbedModel -> colqwen3.py ColQwen3Model
    # (is_pooling_model, default pooling CLS / ALL): one forward pass per request, nothing cached across steps
    raw = {"model_type": model_type, "architectures": ["ColQwen3"], "num_hidden_layers": 4, "hidden_size": 256,
           "num_attention_heads": 4, "num_key_value_heads": 2}
    with pytest.raises(ConfigError, match="pooling"):
        build_model(raw, model_type)


@pytest.mark.parametrize("model_type, why", [
    ("mimovl", "vision encoder config"), ("moondream3_text", "text sub-config"), ("ultrabert", "bidirectional encoder"),
])
def test_sub_configs_and_encoders_are_refused_by_name(model_type, why):
    raw = {"model_type": model_type, "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4}
    with pytest.raises(ConfigError, match=why):
        build_model(raw, model_type)


def test_both_spellings_of_unlimited_ocr_are_refused_alike():
    # the checkpoints write 'unlimited-ocr' (vLLM 0.34 configs/unlimited_ocr.py UnlimitedOCRConfig), transformers
    # 5.25 'unlimited_ocr' (and 'unlimited_ocr_text' for its text model): one reason for all three
    assert REFUSED["unlimited-ocr"] == REFUSED["unlimited_ocr"] == REFUSED["unlimited_ocr_text"]
    for model_type in ("unlimited-ocr", "unlimited_ocr", "unlimited_ocr_text"):
        raw = {"model_type": model_type, "architectures": ["UnlimitedOCRForCausalLM"], "num_hidden_layers": 2,
               "hidden_size": 64, "num_attention_heads": 2}
        with pytest.raises(ConfigError, match="reference_sliding_attention"):
            build_model(raw, model_type)


def test_a_refused_type_is_one_line_and_a_nonzero_exit(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "colqwen3", "num_hidden_layers": 4, "hidden_size": 256,
                                "num_attention_heads": 4}))
    r = subprocess.run([sys.executable, "-m", "kvplan", "estimate", str(path)], capture_output=True, text=True)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "colqwen3" in r.stderr and "GUESSED" not in r.stdout
