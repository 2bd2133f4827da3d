"""Parameter counts and readings checked against vLLM 0.33's model files for rows other helpers added:
Moondream 3's text model (params_moondream.py), Sarvam-MoE as BailingMoeForCausalLM (sarvam.py), DeepSeek-VL2's
kv_lora_rank-null variants, and Moondream 2 refused by name. (Kimi-Audio's moonshot_kimia type: test_audio_wrappers.py.)

Expected values are worked out by hand from the module shapes the cited files build; bf16 (2 bytes) caches.

Configs: moondream3-preview-shape.json (tests/data/configs, hand-written, see test_vla_wrappers.py); deepseek-ocr.json
(deepseek-ai/DeepSeek-OCR's config.json, see test_vla_wrappers.py). No public config.json of a Sarvam-MoE checkpoint
(sarvamai/sarvam-30b) was found in the code index, so SARVAM below is hand-written, shaped as the remote
SarvamMoEConfig's fields (sarvamai/mlx-lm mlx_lm/models/configuration_sarvam_moe.py) and shrunk; the Moondream 2
config is hand-written with the remote HfConfig's model_type and architecture (hf_moondream.py: HfConfig,
model_type "moondream1", self.config = {}).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"
ROOT = Path(__file__).parent.parent


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


# -- Moondream 3 (vLLM 0.33 moondream3.py Moondream3TextModel / Moondream3ForCausalLM) ------------------------

def test_moondream3_default_text_model_count():
    model = build_model(_raw("moondream3-preview-shape.json"), "moondream3")
    # Moondream3TextConfig defaults: dim 2048, 32 heads, 32 KV heads, head_dim 64, ff_dim 8192, vocab 51200,
    # 24 layers; moe: start_layer 4, 64 experts, top 8, expert_inner_dim 1024
    qkv_proj = 2048 * (32 + 2 * 32) * 64 + 6144           # 12,589,056 (biased)
    out_proj = 2048 * 2048 + 2048                          # 4,196,352
    tau = 32 + 2 * 32 * 3 * 2048                           # tau_alpha + tau_wq + tau_wv = 393,248
    ln = 2 * 2048                                          # LayerNorm weight and bias
    base = qkv_proj + out_proj + tau + ln                  # 17,182,752 a layer
    dense = 2048 * 8192 + 8192 + 8192 * 2048 + 2048        # fc1 + fc2 = 33,564,672 (layers 0-3)
    expert = 2 * 1024 * 2048 + 2048 * 1024                 # fused gate/up fc1 + fc2 = 6,291,456
    moe = 64 * expert + 2048 * 64 + 64                     # + router with bias = 402,784,320 (layers 4-23)
    outside = 51200 * 2048 + 2 * 2048 + 51200 * 2048 + 51200  # wte, post_ln, lm_head with bias
    total = outside + 24 * base + 4 * dense + 20 * moe
    assert model.param_count == total == 8_812_101_632
    # a token passes 8 of the 64 experts on each of the 20 MoE layers
    assert model.active_param_count == total - 20 * 56 * expert == 1_765_670_912


def test_moondream3_reads_config_text_moe():
    raw = _raw("moondream3-preview-shape.json")
    # hand-written: 3 layers, dim 64, 4 heads, 2 KV heads (head_dim 16), ff 128, vocab 100; MoE from layer 1,
    # 4 experts, top 2, inner 32
    raw["config"] = {"text": {"n_layers": 3, "dim": 64, "n_heads": 4, "n_kv_heads": 2, "ff_dim": 128,
                              "vocab_size": 100,
                              "moe": {"start_layer": 1, "n_experts": 4, "n_experts_per_tok": 2,
                                      "expert_inner_dim": 32}}}
    model = build_model(raw, "md3-small")
    base = (64 * 128 + 128) + (64 * 64 + 64) + (4 + 2 * 4 * 192) + 128   # qkv (4+4)x16=128, out, tau, ln: 14,148
    dense = 64 * 128 + 128 + 128 * 64 + 64                                # 16,576
    expert = 3 * 32 * 64                                                  # 6,144
    moe = 4 * expert + 64 * 4 + 4                                         # 24,836
    outside = 2 * 100 * 64 + 100 + 2 * 64                                 # 13,028
    assert model.param_count == outside + 3 * base + dense + 2 * moe == 121_720
    assert model.active_param_count == 121_720 - 2 * 2 * expert == 97_144
    # K/V unchanged by the MoE: 2 x 3 x 2 x 16 x 2 B = 384 B per token
    assert estimate(model, 64).bytes_per_token == 2 * 3 * 2 * 16 * 2 == 384


def test_moondream3_bad_moe():
    raw = _raw("moondream3-preview-shape.json")
    # Moondream3TextConfig calls moe.get(...): a moe that is not an object cannot build the config at all
    raw["config"] = {"text": {"moe": "big"}}
    with pytest.raises(ConfigError, match="'config.text.moe' must be a JSON object"):
        build_model(raw, "md3")
    # more experts a token than experts: the cache reads, the count is left out with the reason in a note
    raw["config"] = {"text": {"moe": {"n_experts": 4, "n_experts_per_tok": 8}}}
    model = build_model(raw, "md3")
    assert model.param_count == 0 and any("more than n_experts" in note for note in model.notes)


# -- Sarvam-MoE (vLLM 0.33 sarvam.py SarvamMoEForCausalLM(BailingMoeForCausalLM), bailing_moe.py) ------------

SARVAM = {"model_type": "sarvam_moe", "architectures": ["SarvamMoEForCausalLM"], "vocab_size": 1000,
          "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 3, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 32, "num_experts": 8, "num_shared_experts": 1,
          "num_experts_per_tok": 2, "moe_intermediate_size": 16, "first_k_dense_replace": 1, "use_qk_norm": True,
          "moe_router_enable_expert_bias": True, "use_rmsnorm": True, "tie_word_embeddings": False,
          "torch_dtype": "bfloat16"}


def test_sarvam_moe_counts_as_bailing_moe():
    model = build_model(dict(SARVAM), "sarvam")
    # BailingAttention: query_key_value 64 -> (4 + 2 x 2) x 32 = 256, no bias; dense 128 -> 64; RMSNorm q/k norms
    # (use_rmsnorm) of 32 each; two RMSNorms of 64 a layer
    base = 64 * 256 + 128 * 64 + 2 * 32 + 2 * 64         # 24,768
    dense = 3 * 64 * 256                                  # layer 0 (first_k_dense_replace 1): 49,152
    expert = 3 * 64 * 16                                  # 3,072
    moe = 8 * expert + 64 * 8 + 8 + 3 * 64 * 16 * 1       # experts, router, expert_bias, one shared: 28,168
    outside = 2 * 1000 * 64 + 64                          # word embeddings, untied lm_head, final norm
    assert model.param_count == outside + 3 * base + dense + 2 * moe == 307_856
    assert model.active_param_count == 307_856 - 2 * 6 * expert == 270_992
    # K/V of 2 KV heads x head_dim 32 on 3 layers: 2 x 3 x 2 x 32 x 2 B = 768 B per token
    assert estimate(model, 64).bytes_per_token == 768
    # without use_rmsnorm vLLM builds nn.LayerNorm query / key norms: a bias of 32 more each, 3 layers
    config = {k: v for k, v in SARVAM.items() if k != "use_rmsnorm"}
    assert build_model(config, "sarvam").param_count == 307_856 + 3 * 2 * 32


def test_sarvam_moe_takes_the_remote_config_defaults():
    # remote SarvamMoEConfig: use_qk_norm and moe_router_enable_expert_bias default to True, use_bias /
    # use_qkv_bias to False, one shared expert; transformers' later names n_routed_experts read as num_experts
    config = {k: v for k, v in SARVAM.items()
              if k not in ("use_qk_norm", "moe_router_enable_expert_bias", "num_shared_experts", "num_experts")}
    config["n_routed_experts"] = 8
    assert build_model(config, "sarvam").param_count == 307_856


@pytest.mark.parametrize("field", ["num_attention_heads", "head_dim"])
def test_sarvam_moe_without_the_fields_its_config_classes_disagree_on_is_refused(field):
    config = {k: v for k, v in SARVAM.items() if k != field}
    with pytest.raises(ConfigError, match=f"no '{field}'.*remote SarvamMoEConfig"):
        build_model(config, "sarvam")


# -- DeepSeek-VL2 (vLLM 0.33 deepseek_vl2.py -> deepseek_v2.py DeepseekV2DecoderLayer) -------------------------

def test_deepseek_vl2_tiny_layout_reads_as_plain_attention():
    # DeepSeek-VL2-Tiny's language_config: use_mla false, kv_lora_rank null, qk_nope_head_dim = qk_rope_head_dim = 0
    # (DeepSeek-VL2 issue #81, SGLang issue #5537); DeepSeek-OCR's real language_config has that layout, here
    # under DeepseekVLV2ForCausalLM (hand-modified architecture). use_mha -> DeepseekAttention: K/V of 10 heads x
    # 1280 / 10 = 128 on 12 layers: 2 x 12 x 10 x 128 x 2 B = 61,440 B per token
    raw = _raw("deepseek-ocr.json")
    raw["architectures"] = ["DeepseekVLV2ForCausalLM"]
    model = build_model(raw, "deepseek-vl2-tiny-like")
    assert model.model_type == "deepseek" and model.reading == "exact"
    assert estimate(model, 1024).bytes_per_token == 2 * 12 * 10 * 128 * 2 == 61_440


def test_deepseek_vl2_null_rank_with_qk_dims_is_refused_as_unloadable():
    # DeepseekV2Attention builds kv_a_proj_with_mqa of kv_lora_rank + qk_rope_head_dim outputs: None + 64 fails
    raw = _raw("deepseek-ocr.json")
    raw["language_config"].update(qk_nope_head_dim=64, qk_rope_head_dim=64)
    with pytest.raises(ConfigError, match="cannot be built with a null rank") as info:
        build_model(raw, "x")
    assert "DeepSeek-VL2-Tiny" in info.value.hint


# -- Moondream 2 (HfMoondream, model_type moondream1) --------------------------------------------------------

def test_moondream2_is_refused_by_name(tmp_path):
    raw = {"model_type": "moondream1", "architectures": ["HfMoondream"], "config": {}}
    with pytest.raises(ConfigError, match="Moondream 2.*Moondream3ForCausalLM"):
        build_model(raw, "moondream2")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    done = subprocess.run([sys.executable, "-m", "kvplan", "estimate", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Moondream 2" in done.stderr
