"""Golden tests for the family table: bundled published configs, worked out by hand.

Every expected figure is computed below from the config's own numbers and the
family's rule (see the comment on each), in bf16 (2 bytes) unless stated, not read
from kvplan's output. Engine conventions: a window keeps W tokens, a chunked layer
the (n - 1) % C + 1 tokens of the current chunk, a conv state d_conv - 1 columns.
"""

from __future__ import annotations

import json
import warnings

import pytest

from kvplan import estimate, load_model
from kvplan.configs import build_model
from kvplan.errors import ConfigError

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GIB = 1024**3
K128 = 131072


def est(name, tokens=K128, overrides=()):
    return estimate(load_model(name, overrides=overrides), tokens)


def rows(e):
    return {k.kind: k for k in e.kinds}


def test_llama4_scout_chunked_and_full_layers():
    # 48 layers, no_rope_layers [] -> interval 4: layer i full (NoPE) iff (i + 1) % 4 == 0 -> 12 full,
    # 36 chunked (RoPE) layers of attention_chunk_size 8192; 8 KV heads x 128
    e = est("llama-4-scout")
    per_layer = 2 * 8 * 128 * 2  # 4,096 B per token and layer
    r = rows(e)
    assert r["full attention"].layers == 12 and r["full attention"].retained_tokens == K128
    assert r["chunked attention 8192"].layers == 36 and r["chunked attention 8192"].retained_tokens == 8192
    assert e.kv_bytes_per_sequence == 12 * K128 * per_layer + 36 * 8192 * per_layer
    # one token into a new chunk: the chunked layers hold just that token
    e2 = est("llama-4-scout", K128 + 1)
    assert rows(e2)["chunked attention 8192"].retained_tokens == 1
    assert e2.kv_bytes_per_sequence == 12 * (K128 + 1) * per_layer + 36 * 1 * per_layer


def test_llama4_explicit_no_rope_layers_and_no_chunk():
    from kvplan.sources import bundled_config, resolve_bundled

    cfg = bundled_config(resolve_bundled("llama-4-scout"))
    text = dict(cfg["text_config"], num_hidden_layers=4, no_rope_layers=[1, 0, 1, 1])
    kinds = [layer.kind for layer in build_model(dict(cfg, text_config=text), "t").layers]
    assert kinds == ["chunked attention 8192", "full attention", "chunked attention 8192", "chunked attention 8192"]
    # without attention_chunk_size every layer is full (vLLM's reading)
    text = dict(text, attention_chunk_size=None)
    assert {layer.kind for layer in build_model(dict(cfg, text_config=text), "t").layers} == {"full attention"}


def test_glm4_9b_two_kv_heads_from_multi_query_group_num():
    # chatglm: multi_query_attention true -> multi_query_group_num 2 KV heads of kv_channels 128, 40 layers
    assert est("glm-4-9b-chat").bytes_per_token == 40 * 2 * 2 * 128 * 2 == 40_960
    # the transformers port (model_type glm) names them num_key_value_heads
    assert est("glm-4-9b-chat-hf").bytes_per_token == 40_960
    assert est("glm-4-9b-0414").bytes_per_token == 40_960


def test_legacy_names_gpt2_mpt_dbrx():
    assert est("gpt2", 1024).bytes_per_token == 12 * 2 * 12 * (768 // 12) * 2  # n_layer, n_head, n_embd
    # MPT: n_layers 32, n_heads 32, d_model 4096, no kv_n_heads -> MHA of 128
    assert est("mpt-7b-instruct", 2048).bytes_per_token == 32 * 2 * 32 * 128 * 2
    # DBRX: attn_config.kv_n_heads 8 of d_model / n_heads = 6144 / 48 = 128, 40 layers
    assert est("dbrx-instruct", 2048).bytes_per_token == 40 * 2 * 8 * 128 * 2 == 163_840


def test_mpt_reads_kv_n_heads_when_set():
    from kvplan.sources import bundled_config, resolve_bundled

    cfg = bundled_config(resolve_bundled("mpt-7b-instruct"))
    cfg = dict(cfg, attn_config=dict(cfg["attn_config"], kv_n_heads=8))
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 32 * 2 * 8 * 128 * 2


def test_deepseek_without_an_expert_count_is_not_read_as_dense(tmp_path):
    # A DeepSeek-V3 config with no n_routed_experts (alibaba/InferSim's copy renames it num_routed_experts) is the
    # 671B MoE to transformers (DeepseekV3Config: 256 routed experts) and a dense model to DeepSeek's remote code:
    # the cache is read (61 layers x (512 + 64) x 2 B = 70,272 B per token), the parameters are not counted
    raw = json.loads((ROOT / "model_specs" / "deepseek-v3.json").read_text())
    raw = raw.get("config", raw)
    raw = {k: v for k, v in raw.items() if k != "n_routed_experts"}
    model = build_model(raw, "dsv3-no-experts")
    assert estimate(model, 1).kv_bytes_per_sequence == 61 * (512 + 64) * 2 == 70_272
    assert model.param_count == 0
    assert any("'n_routed_experts' is not set" in note and "--set-new" in note for note in model.notes)


def test_latent_beyond_deepseek():
    # GLM-4.7-Flash: kv_lora_rank 512 + qk_rope_head_dim 64 per token, 47 layers (head_dim is NOT a width)
    assert est("glm-4.7-flash").bytes_per_token == 47 * (512 + 64) * 2
    # LongCat-Flash: two MLA sublayers per decoder layer: 2 x num_layers 28 = 56 latent caches
    assert est("longcat-flash-chat").bytes_per_token == 56 * (512 + 64) * 2 == 64_512
    # MiniCPM3 as vLLM stores it: K and V of 40 heads x (qk_nope 64 + qk_rope 32), V zero-padded to 96
    assert est("minicpm3-4b").bytes_per_token == 62 * 2 * 40 * 96 * 2 == 952_320


def test_kimi_linear_mla_on_listed_layers_kda_state_elsewhere():
    # linear_attn_config: full_attn_layers [4, 8, 12, 16, 20, 24, 27] (1-based) -> 7 MLA, 20 KDA
    e = est("kimi-linear-48b-a3b")
    assert e.bytes_per_token == 7 * (512 + 64) * 2 == 8_064
    # KDA: conv (4 - 1) x 3 x 32 x 128 in bf16 + recurrent 32 x 128 x 128 in float32, per layer
    per_layer = 3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4
    assert e.state_bytes_per_sequence == 20 * per_layer == 43_417_600


def test_minimax_m1_lightning_layers():
    # attn_type_list: 1 (softmax) on 10 of 80 layers; 8 KV heads x head_dim 128 (NOT 6144 / 64 = 96)
    for name in ("minimax-m1", "minimax-text-01", "minimax-m1-hf"):
        e = est(name)
        assert e.bytes_per_token == 10 * 2 * 8 * 128 * 2 == 40_960
        # lightning state: 64 heads x 128 x 128 in the model dtype, on 70 layers
        assert e.state_bytes_per_sequence == 70 * 64 * 128 * 128 * 2 == 146_800_640


def test_minimax_m2_plain_gqa():
    assert est("minimax-m2").bytes_per_token == 62 * 2 * 8 * 128 * 2


def test_granite_4_h_and_bamba_mamba2():
    # granite-4.0-h-small: layer_types 4 attention (8 KV x 4096/32) + 36 Mamba-2:
    # d_inner 2 x 4096 = 8192, conv (4-1) x (8192 + 2 x 1 x 128), SSM 128 heads x 64 x 128, bf16
    e = est("granite-4.0-h-small")
    assert e.bytes_per_token == 4 * 2 * 8 * 128 * 2
    assert e.state_bytes_per_sequence == 36 * (3 * (8192 + 2 * 128) + 128 * 64 * 128) * 2 == 77_322_240
    t = est("granite-4.0-h-tiny")
    assert t.bytes_per_token == 4 * 2 * 4 * 128 * 2
    assert t.state_bytes_per_sequence == 36 * (3 * (3072 + 2 * 128) + 48 * 64 * 128) * 2 == 29_030_400
    # Bamba-9B: attn_layer_indices [9, 18, 27] -> 3 attention layers, 29 Mamba-2 layers
    b = est("bamba-9b")
    assert b.bytes_per_token == 3 * 2 * 8 * 128 * 2 == 12_288
    assert b.state_bytes_per_sequence == 29 * (3 * 8448 + 128 * 64 * 128) * 2 == 62_287_360


def test_nemotron_both_config_forms_agree():
    # the transformers-5 form (layers_block_type) of the bundled Nemotron-H-8B config
    tf5 = json.load(open("tests/data/configs/nemotron-h-8b-tf5.json"))
    old = load_model("nemotron-h-8b")
    new = build_model(tf5, "tf5")
    assert [layer.kind for layer in new.layers] == [layer.kind for layer in old.layers]
    assert estimate(new, 4096).bytes_per_sequence == estimate(old, 4096).bytes_per_sequence


def test_nemotron_3_nano_fp32_ssm_state():
    # 6 '*' attention layers (2 KV x 128), 23 'M' Mamba-2 layers; d_inner 64 x 64 = 4096,
    # conv (4-1) x (4096 + 2 x 8 x 128) bf16, SSM 64 x 64 x 128 in float32 (mamba_ssm_cache_dtype)
    e = est("nemotron-3-nano-30b-a3b")
    assert e.bytes_per_token == 6 * 2 * 2 * 128 * 2
    assert e.state_bytes_per_sequence == 23 * (3 * (4096 + 2 * 8 * 128) * 2 + 64 * 64 * 128 * 4) == 49_082_368


def test_lfm2_short_conv_state():
    # full_attn_idxs [2, 5, 8, 10, 12, 14]: 6 attention layers (8 KV x 2048/32), 10 conv layers of
    # (conv_L_cache 3 - 1) x hidden 2048 in bf16
    e = est("lfm2-1.2b")
    assert e.bytes_per_token == 6 * 2 * 8 * 64 * 2 == 12_288
    assert e.state_bytes_per_sequence == 10 * 2 * 2048 * 2 == 81_920


def test_recurrentgemma_local_attention_and_rg_lru():
    # block_types (recurrent, recurrent, attention) tiled over 26 layers -> 8 attention layers,
    # 1 KV head x 256, window attention_window_size 2048; RG-LRU: conv 3 x 2560 bf16 + 2560 float32
    e = est("recurrentgemma-2b-it")
    assert e.kv_bytes_per_sequence == 8 * 2048 * 2 * 1 * 256 * 2
    assert e.state_bytes_per_sequence == 18 * (3 * 2560 * 2 + 2560 * 4) == 460_800


def test_zamba2_hybrid_layers_each_keep_a_cache():
    # 9 'hybrid' layers keep K/V of 32 heads x attention_head_dim 2 x 2560 / 32 = 160; Mamba-2 on all 54:
    # d_inner 5120 (80 heads x 64), conv 3 x (5120 + 2 x 64), SSM 80 x 64 x 64
    e = est("zamba2-2.7b", 4096)
    assert e.bytes_per_token == 9 * 2 * 32 * 160 * 2 == 184_320
    assert e.state_bytes_per_sequence == 54 * (3 * 5248 + 80 * 64 * 64) * 2 == 37_089_792
    # Zamba-7B: 13 hybrid layers of 16 heads x 2 x 3712 / 16 = 464
    assert est("zamba-7b-v1", 4096).bytes_per_token == 13 * 2 * 16 * 464 * 2


def test_qwen35_gated_deltanet():
    # Qwen3.6-27B (model_type qwen3_5): 64 layers, full every 4th -> 16 full (4 KV x 256) + 48 GDN;
    # GDN conv (4-1) x (2 x 16 x 128 + 48 x 128) bf16, SSM 48 x 128 x 128 in float32 (mamba_ssm_dtype)
    e = est("qwen3.6-27b")
    assert e.bytes_per_token == 16 * 2 * 4 * 256 * 2 == 65_536
    assert e.state_bytes_per_sequence == 48 * (3 * (2 * 16 * 128 + 48 * 128) * 2 + 48 * 128 * 128 * 4)


def test_gemma4_global_layers_have_their_own_width():
    # 60 layers, 5 sliding : 1 full -> 50 sliding (16 KV x 256, window 1024), 10 full
    # (num_global_key_value_heads 4 x global_head_dim 512, attention_k_eq_v)
    e = est("gemma-4-31b")
    assert e.kv_bytes_per_sequence == 50 * 1024 * 2 * 16 * 256 * 2 + 10 * K128 * 2 * 4 * 512 * 2


def test_gemma4_global_kv_heads_only_with_attention_k_eq_v():
    # Gemma4TextConfig takes num_global_key_value_heads for the full layers only when attention_k_eq_v, whose
    # default is false (a saved config.json leaves a false one out)
    cfg = {"model_type": "gemma4_text", "num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 4,
           "head_dim": 64, "hidden_size": 512, "sliding_window": 16, "global_head_dim": 128,
           "num_global_key_value_heads": 2}
    full = 100 * 2 * 128 * 2  # one K/V head of 128, per token
    assert estimate(build_model(cfg, "t"), 100).kv_bytes_per_sequence == 5 * 16 * 2 * 4 * 64 * 2 + 4 * full
    on = dict(cfg, attention_k_eq_v=True)
    assert estimate(build_model(on, "t"), 100).kv_bytes_per_sequence == 5 * 16 * 2 * 4 * 64 * 2 + 2 * full


def test_gemma4_vision_bidirectional_keeps_the_text_cache_causal():
    # google/gemma-4-26B-A4B's text_config says use_bidirectional_attention "vision": image tokens attend both
    # ways, the text stays causal (transformers' modeling_gemma4.py: is_causal = use_bidirectional_attention !=
    # "all"). Its 30 layers: 25 sliding (8 KV x 256, window 1,024) = 25 x 2 x 8 x 256 x 2 = 204,800 B per token,
    # 5 full (attention_k_eq_v: 2 global KV heads x 512) = 5 x 2 x 2 x 512 x 2 = 20,480 B per token
    cfg = {"model_type": "gemma4_text", "num_hidden_layers": 30, "num_attention_heads": 16, "num_key_value_heads": 8,
           "head_dim": 256, "hidden_size": 2816, "sliding_window": 1024, "global_head_dim": 512,
           "num_global_key_value_heads": 2, "attention_k_eq_v": True, "use_bidirectional_attention": "vision"}
    model = build_model({"model_type": "gemma4", "text_config": cfg}, "t")
    assert estimate(model, 1).kv_bytes_per_sequence == 225_280
    assert estimate(model, 2048).kv_bytes_per_sequence == 25 * 1024 * 8192 + 5 * 2048 * 4096
    with pytest.raises(ConfigError, match="use_bidirectional_attention"):
        build_model(dict(cfg, use_bidirectional_attention="all"), "t")


def test_gemma4_per_layer_config_form():
    cfg = {"model_type": "gemma4_text", "num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 4,
           "head_dim": 64, "hidden_size": 512, "sliding_window": 16,
           "per_layer_config": {"05": {"head_dim": 128, "num_key_value_heads": 2}}}
    e = estimate(build_model(cfg, "t"), 100)
    assert e.kv_bytes_per_sequence == 5 * 16 * 2 * 4 * 64 * 2 + 100 * 2 * 2 * 128 * 2


def test_exaone4_letter_pattern():
    # sliding_window_pattern "LLLG": every 4th layer global, 64 layers -> 48 sliding (4096) + 16 full, 8 KV x 128
    e = est("exaone-4.0-32b")
    per = 2 * 8 * 128 * 2
    assert e.kv_bytes_per_sequence == 48 * 4096 * per + 16 * K128 * per


def test_window_rules_as_transformers_applies_them():
    base = dict(hidden_size=256, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
                sliding_window=8, use_sliding_window=True, max_window_layers=4)

    def windows(cfg):
        return [c.policy.window_tokens for layer in build_model(cfg, "t").layers for c in layer.caches]

    # qwen2_moe: even layers below max_window_layers slide
    assert windows(dict(base, model_type="qwen2_moe")) == [8, None, 8, None, None, None]
    # qwen3_moe: every layer slides; max_window_layers is not read
    assert windows(dict(base, model_type="qwen3_moe")) == [8] * 6
    # dense qwen2: layers >= max_window_layers slide
    assert windows(dict(base, model_type="qwen2")) == [None] * 4 + [8, 8]
    for mt in ("qwen2", "qwen2_moe", "qwen3_moe"):
        assert windows(dict(base, model_type=mt, use_sliding_window=False)) == [None] * 6
    # jamba: transformers reads no sliding_window: the attention layer stays full
    jamba = dict(base, model_type="jamba", num_hidden_layers=8, sliding_window=8)
    assert windows(jamba) == [None]


def test_nested_text_models():
    # Qwen2.5-VL (flat file): 28 layers, 4 KV heads, width hidden 3584 / 28 = 128; use_sliding_window false
    assert est("qwen2.5-vl-7b").bytes_per_token == 28 * 2 * 4 * 128 * 2
    # Qwen3-VL-30B-A3B: text_config 48 layers, 4 KV x head_dim 128
    assert est("qwen3-vl-30b-a3b").bytes_per_token == 48 * 2 * 4 * 128 * 2
    # llava-1.5-7b: a sparse llama text_config; LlamaConfig defaults fill 32 layers, 32 KV heads x 128
    assert est("llava-1.5-7b", 4096).bytes_per_token == 32 * 2 * 32 * 128 * 2
    # Mistral-Small-3.1: text_config mistral, sliding_window null -> full, 40 layers, 8 KV x 128
    assert est("mistral-small-3.1-24b").bytes_per_token == 40 * 2 * 8 * 128 * 2


def test_mllama_cross_attention_layers_hold_no_text_tokens():
    # 40 layers, cross_attention_layers [3, 8, ..., 38]: 32 self-attention layers of 8 KV x 4096/32
    e = est("llama-3.2-11b-vision")
    assert e.bytes_per_token == 32 * 2 * 8 * 128 * 2


def test_gpt_neo_local_layers_keep_the_window():
    # attention_types [[["global", "local"], 6]]: 6 global, 6 local (window_size 256), MHA 12 x 64
    e = est("gpt-neo-125m", 2048)
    per = 2 * 12 * 64 * 2
    assert e.kv_bytes_per_sequence == 6 * 2048 * per + 6 * 256 * per


def test_every_bundled_config_is_read_exactly():
    from kvplan.sources import bundled_index

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alias in bundled_index():
            assert load_model(alias).reading == "exact", alias


# -- unknown model types and bad input ---------------------------------------------

STANDARD = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2)


@pytest.mark.parametrize("field, value", [
    ("kv_lora_rank", 512), ("mamba_d_state", 16), ("cross_attention_layers", [1]), ("block_types", ["a"]),
    ("attn_layer_indices", [1]), ("layer_pattern", [0, 1, 0, 1]), ("text_config", {"model_type": "llama"}),
])
def test_unknown_type_with_a_structural_marker_is_refused(field, value):
    with pytest.raises(ConfigError, match=repr(field)) as info:
        build_model(dict(STANDARD, model_type="mystery", **{field: value}), "cfg.json")
    assert "not supported yet" in info.value.one_line()


def test_unknown_type_guess_is_marked_everywhere(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(STANDARD, model_type="mystery")))
    with pytest.warns(UserWarning, match="guessed"):
        model = build_model(json.loads(path.read_text()), "t")
    assert model.reading == "guessed"
    code, out, _ = cli("estimate", str(path), "--context", "1k", "--format", "json")
    assert code == 0
    assert json.loads(out)["model"]["reading"] == "guessed"
    code, out, _ = cli("estimate", str(path), "--context", "1k")
    assert code == 0 and "GUESSED" in out


def test_unknown_type_honours_an_explicit_use_sliding_window_false():
    # MiMo-7B's shape under an unknown model_type (mimo itself has a family record now: test_families_remote_decoders.py):
    # a Qwen2 derivative keeping sliding_window 32,768 beside use_sliding_window false is served full on every layer.
    # 36 layers x 2 x 8 KV heads x 128 x 2 B x 131,072 tokens = 19,327,352,832 B per sequence, not capped at 32,768
    cfg = dict(model_type="qwen2_derivative_unknown", hidden_size=4096, num_hidden_layers=36, num_attention_heads=32,
               num_key_value_heads=8, sliding_window=32768, use_sliding_window=False, max_window_layers=32)
    with pytest.warns(UserWarning, match="guessed"):
        model = build_model(cfg, "t")
    assert estimate(model, 131_072).kv_bytes_per_sequence == 19_327_352_832
    # left out, the window still counts on every layer (transformers' generic rule)
    with pytest.warns(UserWarning, match="guessed"):
        windowed = build_model({k: v for k, v in cfg.items() if k != "use_sliding_window"}, "t")
    assert estimate(windowed, 131_072).kv_bytes_per_sequence == 36 * 2 * 8 * 128 * 2 * 32_768


@pytest.mark.parametrize("change, field", [
    ({"layer_types": ["full_attention", "mystery_attention", "full_attention", "full_attention"]}, "layer_types[1]"),
    ({"layer_types": ["full_attention"] * 3}, "layer_types"),
    ({"layer_types": ["full_attention", "compressed_sparse_attention"] * 2}, "compressed_sparse_attention"),
    ({"sliding_window": 0, "layer_types": ["sliding_attention"] * 4}, "sliding_window"),
    ({"sliding_window": -8}, "sliding_window"),
])
def test_bad_layer_markers_name_the_field(cli, tmp_path, change, field):
    cfg = dict(STANDARD, model_type="olmo3", **change)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, _, err = cli("estimate", str(path), "--context", "1k")
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0] and "config.json" in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("cfg, field", [
    ({"model_type": "llama4", "text_config": [1, 2]}, "text_config"),
    ({"model_type": "llama4", "text_config": {"attention_chunk_size": 0}}, "attention_chunk_size"),
    ({"model_type": "nemotron_h", "hybrid_override_pattern": "M*X", **STANDARD}, "hybrid_override_pattern"),
    ({"model_type": "nemotron_h", **STANDARD, "hybrid_override_pattern": 5}, "hybrid_override_pattern"),
    ({"model_type": "nemotron_h", **STANDARD, "layers_block_type": ["mamba", "attention", "ssm"]}, "layers_block_type"),
    ({"model_type": "bamba", "attn_layer_indices": [1, 9], **STANDARD}, "attn_layer_indices"),
    ({"model_type": "gemma3_text", "sliding_window_pattern": 0, **STANDARD}, "sliding_window_pattern"),
    ({"model_type": "kimi_linear", **STANDARD, "kv_lora_rank": 8, "qk_rope_head_dim": 4,
      "linear_attn_config": {"full_attn_layers": [1, 2], "kda_layers": [3], "num_heads": 2, "head_dim": 8}},
     "linear_attn_config"),
])
def test_bad_family_markers_name_the_field(cfg, field):
    with pytest.raises(ConfigError, match=field):
        build_model(cfg, "cfg.json")


def test_nan_and_float_fields_never_reach_arithmetic():
    for value in (float("nan"), float("inf"), 32.0, "32", [32], {"n": 32}, True):
        with pytest.raises(ConfigError, match="num_hidden_layers"):
            build_model(dict(STANDARD, model_type="llama", num_hidden_layers=value), "cfg.json")
    with pytest.raises(ConfigError, match="<= 10,000"):
        build_model(dict(STANDARD, model_type="llama", num_hidden_layers=10**8), "cfg.json")


# (alias, context, KV bytes per token worked by hand from the config: layers x 2 (K, V) x KV heads x width x 2 B)
ATTENTION_ONLY = [
    ("gpt-j-6b", 2048, 28 * 2 * 16 * (4096 // 16) * 2),  # n_layer 28, n_head 16 (MHA), n_embd 4096
    ("pythia-1b", 2048, 16 * 2 * 8 * (2048 // 8) * 2),  # gpt_neox: MHA, hidden / heads
    ("bloom", 2048, 70 * 2 * 112 * (14336 // 112) * 2),  # n_layer 70, n_head 112, hidden 14336
    ("opt-6.7b", 2048, 32 * 2 * 32 * 128 * 2),
    ("xglm-1.7b", 2048, 24 * 2 * 16 * (2048 // 16) * 2),  # num_layers, attention_heads, d_model
    ("baichuan2-7b-chat", 4096, 32 * 2 * 32 * 128 * 2),  # MHA (fused W_pack)
    ("internlm2.5-7b-chat", 4096, 32 * 2 * 8 * 128 * 2),
    ("internlm3-8b-instruct", 4096, 48 * 2 * 2 * 128 * 2),
    ("stablelm-2-1.6b", 4096, 24 * 2 * 32 * (2048 // 32) * 2),
    ("persimmon-8b-base", 4096, 36 * 2 * 64 * (4096 // 64) * 2),
    ("chatglm3-6b", 8192, 28 * 2 * 2 * 128 * 2),  # multi_query_group_num 2, kv_channels 128 (default)
    ("qwen3-vl-4b", 4096, 36 * 2 * 8 * 128 * 2),
    ("qwen3-vl-8b", 4096, 36 * 2 * 8 * 128 * 2),
    ("phi-4", 4096, 40 * 2 * 10 * (5120 // 40) * 2),
    ("glm-4.7", 4096, 92 * 2 * 8 * 128 * 2),  # head_dim 128 (5120 / 96 is not an integer)
    ("glm-4.5-air", 4096, 46 * 2 * 8 * 128 * 2),
]


@pytest.mark.parametrize("alias, context, per_token", ATTENTION_ONLY)
def test_attention_only_bundled_models(alias, context, per_token):
    e = est(alias, context)
    assert e.bytes_per_token == per_token
    assert e.kv_bytes_per_sequence == per_token * context


def test_windowed_bundled_models():
    # command-r7b (cohere2): sliding_window_pattern 4 -> 8 full + 24 sliding, 8 KV x 128; a sliding layer keeps
    # sliding_window + 1 = 4097 tokens (vLLM 0.33 commandr.py CohereAttention passes sliding_window + 1)
    per = 2 * 8 * 128 * 2
    assert est("command-r7b").kv_bytes_per_sequence == 8 * K128 * per + 24 * 4097 * per
    # olmo-3-7b: layer_types 24 sliding (4096) + 8 full, MHA 32 x 128
    per = 2 * 32 * 128 * 2
    assert est("olmo-3-7b").kv_bytes_per_sequence == 8 * K128 * per + 24 * 4096 * per
    # gemma-3-4b: sparse text_config; Gemma3TextConfig defaults 4 KV x 256, pattern 6 over 34 layers -> 5 full
    per = 2 * 4 * 256 * 2
    assert est("gemma-3-4b").kv_bytes_per_sequence == 5 * K128 * per + 29 * 1024 * per
    # gemma-3-12b: 48 layers -> 8 full, 40 sliding; 8 KV x 256
    per = 2 * 8 * 256 * 2
    assert est("gemma-3-12b").kv_bytes_per_sequence == 8 * K128 * per + 40 * 1024 * per


def test_recurrent_only_bundled_models():
    # falcon-mamba-7b: d_inner = intermediate_size 8192 (not expand 16 x 4096); conv 3 x 8192, SSM 8192 x 16, bf16
    e = est("falcon-mamba-7b")
    assert e.bytes_per_token == 0
    assert e.state_bytes_per_sequence == 64 * (3 * 8192 + 8192 * 16) * 2
    # rwkv-4-430m (float32 checkpoint): per layer 2 x 1024 token shifts + 3 x 1024 WKV values, all 4 B here
    assert est("rwkv-4-430m-pile").state_bytes_per_sequence == 24 * (2 * 1024 * 4 + 3 * 1024 * 4)
    # rwkv-4-world-169m names no dtype: token shifts in bf16, WKV in float32
    assert est("rwkv-4-world-169m").state_bytes_per_sequence == 12 * (2 * 768 * 2 + 3 * 768 * 4)


def test_other_hybrids():
    # olmo-hybrid-7b: 8 full (30 KV x 3840/30 = 128) + 24 GDN: conv 3 x (2 x 30 x 96 + 30 x 192) bf16,
    # SSM 30 x 96 x 192 in float32
    e = est("olmo-hybrid-7b")
    assert e.bytes_per_token == 8 * 2 * 30 * 128 * 2
    assert e.state_bytes_per_sequence == 24 * (3 * (2 * 30 * 96 + 30 * 192) * 2 + 30 * 96 * 192 * 4)
    # lfm2-8b-a1b: 6 attention (8 KV x 2048/32) + 18 conv layers of (3 - 1) x 2048
    e = est("lfm2-8b-a1b")
    assert e.bytes_per_token == 6 * 2 * 8 * 64 * 2
    assert e.state_bytes_per_sequence == 18 * 2 * 2048 * 2
    # qwen3.5-35b-a3b: 10 full (2 KV x 256) + 30 GDN: conv 3 x (2 x 16 x 128 + 32 x 128), SSM 32 x 128 x 128 fp32
    e = est("qwen3.5-35b-a3b")
    assert e.bytes_per_token == 10 * 2 * 2 * 256 * 2
    assert e.state_bytes_per_sequence == 30 * (3 * (2 * 16 * 128 + 32 * 128) * 2 + 32 * 128 * 128 * 4)


# -- image-text wrappers whose text models kvplan reads (tests/parity checks each against transformers) --------

def _bpt(config, tokens=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimate(build_model(config, "t"), tokens).bytes_per_token


def test_qwen2_vl_flat_and_windows():
    # Qwen2-VL-7B-Instruct (flat file): 28 layers, hidden 3584 / 28 heads = 128 wide, 4 KV heads (k_proj
    # 3584 -> 512 in the published module dump); use_sliding_window false -> every layer full
    cfg = {"model_type": "qwen2_vl", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
           "num_key_value_heads": 4, "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 28,
           "torch_dtype": "bfloat16"}
    assert _bpt(cfg) == 28 * 2 * 4 * 128 * 2 == 57_344
    # a head_dim key is not read (Qwen2VLAttention: head_dim = hidden_size // num_heads)
    assert _bpt(dict(cfg, head_dim=64)) == 57_344
    # with the window on, layers >= max_window_layers slide; absent, Qwen2VLTextConfig's 80 (> 28: none slides)
    on = dict(cfg, use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    kinds = [layer.kind for layer in build_model(on, "t").layers]
    assert kinds == ["full attention"] * 20 + ["sliding window 4096"] * 8
    on.pop("max_window_layers")
    assert {layer.kind for layer in build_model(on, "t").layers} == {"full attention"}


def test_glm_vision_text_models():
    # GLM-4.1V-9B: glm4v_text 40 layers, 32 heads of 4096 / 32 = 128, 2 KV heads; head_dim is not read
    text = {"model_type": "glm4v_text", "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32,
            "num_key_value_heads": 2}
    assert _bpt({"model_type": "glm4v", "text_config": text}) == 40 * 2 * 2 * 128 * 2 == 40_960
    assert _bpt({"model_type": "glm4v", "text_config": dict(text, head_dim=64)}) == 40_960
    # an absent num_key_value_heads means Glm4vTextConfig's 2; GLM-4.6V and glmga wrap the same text model
    text.pop("num_key_value_heads")
    for wrapper in ("glm4v", "glm46v", "glmga"):
        assert _bpt({"model_type": wrapper, "text_config": text}) == 40_960
    # GLM-4.5V (published config): glm4v_moe_text 46 layers, 8 KV heads of head_dim 128 (not 4096 / 96):
    # k_proj 4096 -> 1024 in its module dump
    moe = {"model_type": "glm4v_moe_text", "hidden_size": 4096, "num_hidden_layers": 46, "num_attention_heads": 96,
           "num_key_value_heads": 8, "head_dim": 128}
    assert _bpt({"model_type": "glm4v_moe", "text_config": moe}) == 46 * 2 * 8 * 128 * 2 == 188_416
    # GLM-OCR (transformers' GlmOcrTextConfig defaults): 16 layers, 8 KV heads of 1024 / 16 = 64
    ocr = {"model_type": "glm_ocr_text", "hidden_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16}
    assert _bpt({"model_type": "glm_ocr", "text_config": ocr}) == 16 * 2 * 8 * 64 * 2 == 32_768


@pytest.mark.parametrize(("wrapper", "text", "per_token"), [
    # ERNIE-4.5-VL-28B-A3B (Ernie4_5_VLMoeTextConfig defaults): 28 layers, 2560 / 20 = 128, KV 4 by default
    ("ernie4_5_vl_moe", {"hidden_size": 2560, "num_hidden_layers": 28, "num_attention_heads": 20},
     28 * 2 * 4 * 128 * 2),
    # Granite-4 Vision's text model (its defaults): 32 layers, KV heads default to the 32 query heads, 4096 / 32
    ("granite4_vision", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32},
     32 * 2 * 32 * 128 * 2),
    # granite-docling (its defaults): 28 layers, 1024 / 16 = 64, KV 4 by default
    ("granite_docling", {"hidden_size": 1024, "num_hidden_layers": 28, "num_attention_heads": 16},
     28 * 2 * 4 * 64 * 2),
    # PaddleOCR-VL (PaddleOCRTextConfig defaults): 18 layers, KV 2 and head_dim 128 by default
    ("paddleocr_vl", {"hidden_size": 1024, "num_hidden_layers": 18, "num_attention_heads": 16},
     18 * 2 * 2 * 128 * 2),
    # HunyuanOCR's published text_config: 24 layers, 8 KV heads of head_dim 128 (not 1024 / 16)
    ("hunyuan_vl", {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                    "num_key_value_heads": 8, "head_dim": 128}, 24 * 2 * 8 * 128 * 2),
    # Aria (AriaTextConfig defaults written out): 32 layers, head_dim 4096 / 32, KV heads = query heads
    ("aria", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}, 32 * 2 * 32 * 128 * 2),
])
def test_wrapped_full_attention_text_models(wrapper, text, per_token):
    assert _bpt({"model_type": wrapper, "text_config": text}) == per_token
    assert _bpt({"model_type": wrapper, "text_config": text}, 1000) == per_token


def test_hunyuan_vl_needs_head_dim():
    # HunYuanVLTextAttention reads config.head_dim with no fallback: a config without it is refused
    text = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16}
    with pytest.raises(ConfigError, match="head_dim"):
        build_model({"model_type": "hunyuan_vl", "text_config": text}, "t")


def test_mistral_small_4_latent():
    # Mistral-Small-4 (a mistral3 wrapper around a mistral4 text model): MLA caches the latent, kv_lora_rank 256
    # + qk_rope_head_dim 64 per token and layer, 36 layers; num_key_value_heads 32 means nothing for the cache
    text = {"model_type": "mistral4", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32,
            "num_key_value_heads": 32, "kv_lora_rank": 256, "q_lora_rank": 1024, "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 64, "v_head_dim": 128}
    assert _bpt({"model_type": "mistral3", "text_config": text}) == 36 * (256 + 64) * 2 == 23_040
    assert _bpt(text) == 23_040


def test_cohere2_moe_windows():
    # Cohere2MoeConfig defaults: 40 layers, 64 heads, KV heads default to 64, head_dim 128, sliding_window 4096,
    # pattern 4 -> layers 3, 7, ..., 39 full (10), 30 sliding over sliding_window + 1 = 4097 tokens (vLLM 0.33
    # cohere2_moe.py passes sliding_window + 1); 2 x 64 x 128 x 2 = 32,768 B per token and layer
    cfg = {"model_type": "cohere2_moe", "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = estimate(build_model(cfg, "t"), K128)
    per_layer = 2 * 64 * 128 * 2
    assert rows(e)["full attention"].layers == 10 and rows(e)["sliding window 4097"].layers == 30
    assert e.kv_bytes_per_sequence == 10 * K128 * per_layer + 30 * 4097 * per_layer
    # first_k_dense_replace 3 with prefix pattern 2: S F S, then the rest counted afresh (layer 3 + 3 = 6 full)
    kinds = [layer.kind for layer in build_model(dict(cfg, num_hidden_layers=8, first_k_dense_replace=3,
                                                      prefix_dense_sliding_window_pattern=2), "t").layers]
    full = [i for i, kind in enumerate(kinds) if kind == "full attention"]
    assert full == [1, 6]


def test_granite_swa_every_fourth_layer_full():
    # GraniteSWAConfig defaults: 24 layers, 20 heads of 2560 / 20 = 128, 4 KV heads; layers 0, 4, ..., 20 full
    # (6), 18 sliding of 128 tokens; 2 x 4 x 128 x 2 = 2,048 B per token and layer
    cfg = {"model_type": "granite_swa", "hidden_size": 2560, "num_hidden_layers": 24, "num_attention_heads": 20}
    e = estimate(build_model(cfg, "t"), K128)
    assert rows(e)["full attention"].layers == 6 and rows(e)["sliding window 128"].layers == 18
    assert e.kv_bytes_per_sequence == 6 * K128 * 2048 + 18 * 128 * 2048
    # GraniteMoeSWAConfig: KV heads default to the query heads (32 of 4096 / 32 = 128), 32 layers: 8 full
    moe = {"model_type": "granitemoe_swa", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}
    e = estimate(build_model(moe, "t"), K128)
    assert e.kv_bytes_per_sequence == (8 * K128 + 24 * 128) * 2 * 32 * 128 * 2


MIMO_V2_FLASH_HUB = {
    # XiaomiMiMo/MiMo-V2-Flash's config.json as published (the cache fields)
    "model_type": "mimo_v2_flash", "hidden_size": 4096, "num_hidden_layers": 48, "num_attention_heads": 64,
    "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128, "swa_num_attention_heads": 64,
    "swa_num_key_value_heads": 8, "swa_head_dim": 192, "swa_v_head_dim": 128, "sliding_window": 128,
    "sliding_window_size": 128, "max_position_embeddings": 262144,
    "hybrid_layer_pattern": [0 if i == 0 or (i + 1) % 6 == 0 else 1 for i in range(48)],
}


def test_mimo_v2_flash_hub_config():
    # layer 0 and 5, 11, ..., 47 full (9): 4 KV heads x (K 192 + V 128) x 2 B = 2,560 B per token and layer;
    # 39 sliding layers: twice the KV heads (8) = 5,120 B, window sliding_window_size 128 + 1 = 129 tokens
    e = estimate(build_model(MIMO_V2_FLASH_HUB, "t"), K128)
    r = rows(e)
    assert r["full attention"].layers == 9 and r["sliding window 129"].layers == 39
    assert e.kv_bytes_per_sequence == 9 * K128 * 2560 + 39 * 129 * 5120
    assert estimate(build_model(MIMO_V2_FLASH_HUB, "t"), 1).bytes_per_token == 9 * 2560 + 39 * 5120 == 222_720


@pytest.mark.parametrize("change", [{"swa_num_key_value_heads": 4}, {"swa_v_head_dim": 64},
                                    {"hybrid_layer_pattern": [1] * 48}])
def test_mimo_v2_flash_fields_transformers_ignores_must_agree(change):
    with pytest.raises(ConfigError, match=next(iter(change))):
        build_model(dict(MIMO_V2_FLASH_HUB, **change), "t")


def test_laguna_per_layer_query_heads_leave_kv_alone():
    # Laguna-XS.2's form: 40 layers, full when i % 4 == 0 (10), 30 sliding of 512; 48 / 64 query heads per layer
    # but K/V 8 heads x head_dim 128 everywhere: 2 x 8 x 128 x 2 = 4,096 B per token and layer
    cfg = {"model_type": "laguna", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 48,
           "num_key_value_heads": 8, "head_dim": 128, "sliding_window": 512,
           "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(40)],
           "num_attention_heads_per_layer": [48 if i % 4 == 0 else 64 for i in range(40)]}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == (10 * K128 + 30 * 512) * 4096
    # LagunaConfig without layer_types: every layer full, although sliding_window defaults to 512
    plain = {k: v for k, v in cfg.items() if k not in ("layer_types", "sliding_window")}
    assert estimate(build_model(plain, "t"), K128).kv_bytes_per_sequence == 40 * K128 * 4096


def test_doge_keep_window_size_evicts_nothing():
    # DogeConfig defaults: 32 layers, 8 heads of 1024 / 8 = 128, KV heads = query heads: 2 x 8 x 128 x 2 = 4,096 B
    # per token and layer; keep_window_size 2048 masks attention but the cache keeps every token
    cfg = {"model_type": "doge", "hidden_size": 1024, "num_hidden_layers": 32, "num_attention_heads": 8,
           "keep_window_size": 2048}
    assert estimate(build_model(cfg, "t"), K128).kv_bytes_per_sequence == 32 * K128 * 4096
    # a sliding_window applies to every layer
    e = estimate(build_model(dict(cfg, sliding_window=4096), "t"), K128)
    assert e.kv_bytes_per_sequence == 32 * 4096 * 4096


def test_lfm3_conv_sliding_and_full_layers():
    # Lfm3Config defaults: 24 layers; full when i % 4 == 2 (6), sliding when i % 4 == 0 and i > 0 (5), else conv
    # (13); attention 4 KV heads x head_dim 128 = 2,048 B per token and layer, sliding_window 256; conv state
    # (conv_L_cache 7 - 1) x hidden 2048 x 2 B = 24,576 B per layer and sequence
    cfg = {"model_type": "lfm3", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
           "torch_dtype": "bfloat16"}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == (6 * K128 + 5 * 256) * 2048
    assert e.state_bytes_per_sequence == 13 * 6 * 2048 * 2 == 319_488
    # the image-text wrapper reads the same text model
    assert estimate(build_model({"model_type": "lfm3_vl", "text_config": cfg}, "t"), K128).bytes_per_sequence \
        == e.bytes_per_sequence


def test_youtu_llm_latent():
    # Youtu-LLM-2B's config (tencent): 32 layers of MLA, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 per token
    # and layer, 2 B each: 32 x 576 x 2 = 36,864 B per token (num_key_value_heads 16 means nothing here)
    cfg = {"model_type": "youtu", "hidden_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 16,
           "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
           "qk_rope_head_dim": 64, "v_head_dim": 128, "intermediate_size": 6144, "vocab_size": 128256}
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 32 * 576 * 2 == 36_864


def test_hyperclovax_vision_v2_reads_its_text_model():
    # HyperCLOVA X vision v2 wraps a hyperclovax text model (transformers' generic rule): 4 layers, 2 KV x 128
    text = {"model_type": "hyperclovax", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
            "num_key_value_heads": 2, "head_dim": 128}
    assert _bpt({"model_type": "hyperclovax_vision_v2", "text_config": text}) == 4 * 2 * 2 * 128 * 2


@pytest.mark.parametrize(("wrapper", "text", "per_token"), [
    # Qwen3-Omni-30B-A3B's thinker text_config (published): 48 layers, 4 KV heads of head_dim 128 (not 2048 / 32)
    ("qwen3_omni_moe_thinker", {"hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
                                "num_key_value_heads": 4, "head_dim": 128}, 48 * 2 * 4 * 128 * 2),
    # Molmo2 (Molmo2TextConfig defaults): 36 layers, 8 KV heads and head_dim 128 by default
    ("molmo2", {"hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32}, 36 * 2 * 8 * 128 * 2),
    # Cosmos3-Edge (its defaults): 28 layers, 8 KV heads and head_dim 128 by default
    ("cosmos3_edge", {"hidden_size": 2048, "num_hidden_layers": 28, "num_attention_heads": 16},
     28 * 2 * 8 * 128 * 2),
    # DeepSeek-OCR-2 (its defaults): 32 layers, KV heads = query heads, head_dim forced to 4096 / 32 = 128
    ("deepseek_ocr2", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "head_dim": 64},
     32 * 2 * 32 * 128 * 2),
])
def test_more_wrapped_full_attention_text_models(wrapper, text, per_token):
    assert _bpt({"model_type": wrapper, "text_config": text}) == per_token
    assert _bpt({"model_type": wrapper, "text_config": text}, 5000) == per_token


def test_qwen2_5_omni_thinker_windows():
    # Qwen2.5-Omni-7B's thinker text model: 28 layers, 3584 / 28 = 128 wide, 4 KV heads; use_sliding_window false
    text = {"hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
            "use_sliding_window": False, "sliding_window": 32768}
    assert _bpt({"model_type": "qwen2_5_omni_thinker", "text_config": text}) == 28 * 2 * 4 * 128 * 2
    # with the window on and max_window_layers absent (Qwen2_5OmniTextConfig's 28), no layer slides
    on = dict(text, use_sliding_window=True, sliding_window=4096)
    kinds = {layer.kind for layer in build_model({"model_type": "qwen2_5_omni_thinker", "text_config": on}, "t").layers}
    assert kinds == {"full attention"}


def test_muse_text_models_full_every_fourth_from_the_last():
    # MuseGlimmerTextConfig defaults: 52 layers, full when (51 - i) % 4 == 0 -> layers 3, 7, ..., 51 (13), 39
    # sliding of 2048; 2 KV heads x head_dim 128 = 1,024 B per token and layer
    text = {"hidden_size": 6656, "num_hidden_layers": 52, "num_attention_heads": 32}
    model = build_model({"model_type": "muse_glimmer", "text_config": text}, "t")
    full = [i for i, layer in enumerate(model.layers) if layer.kind == "full attention"]
    assert full == list(range(3, 52, 4))
    assert estimate(model, K128).kv_bytes_per_sequence == (13 * K128 + 39 * 2048) * 1024
    # MuseSparkTextConfig defaults: 62 layers -> full at 1, 5, ..., 61 (16), 46 sliding; 16 KV x 64 = 4,096 B
    spark = {"hidden_size": 8192, "num_hidden_layers": 62, "num_attention_heads": 128}
    e = estimate(build_model({"model_type": "muse_spark", "text_config": spark}, "t"), K128)
    assert e.kv_bytes_per_sequence == (16 * K128 + 46 * 2048) * 4096


def test_axk1_latent_defaults():
    # AXK1Config defaults: 61 layers of MLA, kv_lora_rank 512 + qk_rope_head_dim 64 by default: 61 x 576 x 2 B
    cfg = {"model_type": "axk1", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 64}
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 61 * 576 * 2 == 70_272


def test_axk2_latent_and_indexer_keys():
    # AXK2Config defaults: 48 layers, each an MLA latent of kv_lora_rank 128 + qk_rope_head_dim 32 (bf16: 320 B)
    # plus indexer keys of index_head_dim 128 (fp8: 128 B + one fp32 scale per 128 channels: 4 B) = 452 B
    cfg = {"model_type": "axk2", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32}
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 48 * ((128 + 32) * 2 + 128 + 4) == 21_696


def test_zaya_kv_plus_cca_state():
    # ZayaConfig defaults: 40 'hybrid' layers, 8 heads, 2 KV heads x head_dim 128: K/V 2 x 2 x 128 x 2 = 1,024 B
    # per token and layer; CCA state per layer: conv (2 - 1) + (2 - 1) = 2 columns of (8 + 2) x 128 channels
    # = 2,560 plus the delayed value half 2 x 128 / 2 = 128 elements, bf16
    cfg = {"model_type": "zaya", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 8,
           "torch_dtype": "bfloat16"}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == 40 * K128 * 1024
    assert e.state_bytes_per_sequence == 40 * (2 * 10 * 128 + 128) * 2 == 215_040
    # hybrid_sliding layers keep the window
    cfg = dict(cfg, sliding_window=4096, layer_types=["hybrid_sliding" if i % 2 else "hybrid" for i in range(40)])
    assert estimate(build_model(cfg, "t"), K128).kv_bytes_per_sequence == 20 * (K128 + 4096) * 1024


def test_bailing_hybrid_mla_and_kda_layers():
    # BailingHybridConfig defaults: 42 layers, full when (i + 1) % 6 == 0 (7 MLA layers: (512 + 64) x 2 B =
    # 1,152 B per token); 35 Kimi Delta Attention layers with 32 heads of head_dim 128: conv (4 - 1) x 3 x 32 x
    # 128 bf16 = 73,728 B and a float32 state 32 x 128 x 128 = 2,097,152 B per layer and sequence
    cfg = {"model_type": "bailing_hybrid", "hidden_size": 2560, "num_hidden_layers": 42, "num_attention_heads": 32,
           "torch_dtype": "bfloat16"}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == 7 * K128 * 1152
    assert e.state_bytes_per_sequence == 35 * (73_728 + 2_097_152) == 75_980_800


def test_hy_v4_indexers_on_full_layers_only():
    # HYV4Config defaults: 34 MLA layers, (512 + 64) x 2 B = 1,152 B per token each; indexer keys (128 fp8 + one
    # fp32 scale = 132 B) only on 'full' indexer layers: 0 and 1, 5, ..., 33 ((i - 1) % 4 == 0) = 10 layers
    cfg = {"model_type": "hy_v4", "hidden_size": 2816, "num_hidden_layers": 34, "num_attention_heads": 32}
    assert estimate(build_model(cfg, "t"), 1).bytes_per_token == 34 * 1152 + 10 * 132 == 40_488
    # an explicit indexer_types wins
    types = ["full"] * 2 + ["shared"] * 32
    assert estimate(build_model(dict(cfg, indexer_types=types), "t"), 1).bytes_per_token == 34 * 1152 + 2 * 132


def test_inkling_kv_and_four_conv_states():
    # InklingTextConfig defaults: 66 'hybrid' layers, sliding when (i + 1) % 6 != 0 (55), full otherwise (11).
    # Full: 8 KV x 128 -> 4,096 B per token; sliding: swa 16 KV x 128 -> 8,192 B, window sliding_window_size 512.
    # Four short convs (kernel 4: 3 columns) on K, V and twice hidden 6144: full 3 x (2 x 1024 + 2 x 6144) x 2 B
    # = 86,016 B, sliding 3 x (2 x 2048 + 2 x 6144) x 2 B = 98,304 B per layer and sequence
    cfg = {"model_type": "inkling_text", "hidden_size": 6144, "num_hidden_layers": 66, "num_attention_heads": 64,
           "torch_dtype": "bfloat16"}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == 11 * K128 * 4096 + 55 * 512 * 8192
    assert e.state_bytes_per_sequence == 11 * 86_016 + 55 * 98_304 == 6_352_896
    # local_layer_ids name the sliding layers when layer_types is absent
    kinds = [layer.kind for layer in build_model(dict(cfg, num_hidden_layers=4, local_layer_ids=[1]), "t").layers]
    assert [("sliding" in kind) for kind in kinds] == [False, True, False, False]


def test_inkling2_defaults():
    # Inkling2TextConfig defaults: 48 layers, 'hybrid' (full) when (i + 1) % 6 == 0 (8), else sliding (40, window
    # 1024); 8 KV x 128 on both kinds = 4,096 B per token; convs 3 x (2 x 1024 + 2 x 4608) x 2 B = 67,584 B a layer
    cfg = {"model_type": "inkling2_text", "hidden_size": 4608, "num_hidden_layers": 48, "num_attention_heads": 48,
           "torch_dtype": "bfloat16"}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == (8 * K128 + 40 * 1024) * 4096
    assert e.state_bytes_per_sequence == 48 * 67_584
    # local_layer_ids is not an Inkling-2 field: transformers ignores it, and so does kvplan
    assert estimate(build_model(dict(cfg, local_layer_ids=[0]), "t"), K128).kv_bytes_per_sequence \
        == e.kv_bytes_per_sequence


def test_gemma4_unified_text_defaults():
    # Gemma4UnifiedTextConfig defaults (saved form): 30 layers, 5 sliding : 1 full (5, 11, ..., 29), window 1024;
    # 4 KV heads of head_dim 256 on sliding layers (4,096 B per token), per_layer_config head_dim 512 on the
    # full layers (8,192 B per token)
    cfg = {"model_type": "gemma4_unified_text", "hidden_size": 2304, "num_hidden_layers": 30, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 256, "use_bidirectional_attention": "vision",
           "per_layer_config": {f"{i:02d}": {"head_dim": 512} for i in (5, 11, 17, 23, 29)}}
    e = estimate(build_model({"model_type": "gemma4_unified", "text_config": cfg}, "t"), K128)
    assert e.kv_bytes_per_sequence == 25 * 1024 * 4096 + 5 * K128 * 8192
    with pytest.raises(ConfigError, match="use_bidirectional_attention"):
        build_model(dict(cfg, use_bidirectional_attention="all"), "t")


def test_mistral_large4_nope_layers_and_indexers():
    # MistralLarge4TextConfig defaults: 72 MLA layers; every 4th ((i + 1) % 4 == 0: 18) is NoPE and caches the
    # latent without its rope key (512 x 2 B = 1,024 B), the other 54 cache (512 + 64) x 2 B = 1,152 B; indexer
    # keys on every layer (index_topk_freq 1): 128 fp8 + one fp32 scale = 132 B
    text = {"hidden_size": 6144, "num_hidden_layers": 72, "num_attention_heads": 64}
    e = estimate(build_model({"model_type": "mistral_large4", "text_config": text}, "t"), 1)
    assert e.bytes_per_token == 54 * 1152 + 18 * 1024 + 72 * 132 == 90_144
    # KV sharing between layers is refused by name
    with pytest.raises(ConfigError, match="kv_source_layers"):
        build_model({"model_type": "mistral_large4",
                     "text_config": dict(text, kv_source_layers=[0, 0] + list(range(2, 72)))}, "t")


def test_step3p5_legacy_mtp_entries_and_per_layer_config():
    # Step3p7TextConfig's legacy form: layer_types lists 45 decoder layers + num_nextn_predict_layers 3 MTP
    # entries (dropped); 8 KV heads x head_dim 128 = 4,096 B per token and layer; full when i % 4 == 0 (12 of
    # 45), 33 sliding of 512; the sliding layers' extra query heads (per_layer_config) change no cache
    types = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)]
    text = {"model_type": "step3p5", "hidden_size": 4096, "num_hidden_layers": 45, "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 128, "sliding_window": 512, "layer_types": types,
            "num_nextn_predict_layers": 3,
            "per_layer_config": {str(i): {"num_attention_heads": 96} for i in range(45) if i % 4}}
    e = estimate(build_model({"model_type": "step3p7", "text_config": text}, "t"), K128)
    assert e.kv_bytes_per_sequence == (12 * K128 + 33 * 512) * 4096
    # a per-layer KV width is read; a per-layer key kvplan does not read is refused by name
    wide = dict(text, per_layer_config={"1": {"num_key_value_heads": 16}})
    e = estimate(build_model(wide, "t"), K128)
    assert e.kv_bytes_per_sequence == (12 * K128 + 33 * 512) * 4096 + 512 * 4096
    with pytest.raises(ConfigError, match="sliding_window"):
        build_model(dict(text, per_layer_config={"1": {"sliding_window": 64}}), "t")
    # lightning-index sparse layers are refused
    sparse = {k: v for k, v in text.items() if k != "layer_types"}
    with pytest.raises(ConfigError, match="sparse"):
        build_model(dict(sparse, sparse_attention_config={"sparse_attention_freq": [1, 0] * 24}), "t")


def test_dots3_note_dsa_and_sliding_latents():
    # Dots3NoteTextConfig defaults, legacy form (no layer_types, no per_layer_config): 46 layers; DSA where i < 2
    # or i % 4 == 1 (0, 1, 5, 9, ..., 45: 13 layers): latent 512 + 64 (1,152 B) + indexer keys 128 fp8 + one
    # fp32 scale (132 B); the other 33 are sliding MLA over sliding_window_size 512 with swa_kv_lora_rank 1024 +
    # swa_head_dim 256 - swa_qk_nope_head_dim 192 = 64 -> (1024 + 64) x 2 = 2,176 B per token
    cfg = {"model_type": "dots3_note_text", "hidden_size": 5120, "num_hidden_layers": 46, "num_attention_heads": 128}
    e = estimate(build_model(cfg, "t"), K128)
    assert e.kv_bytes_per_sequence == 13 * K128 * (1152 + 132) + 33 * 512 * 2176
    # use_dsa false: the full layers are plain MLA (no indexer keys)
    e = estimate(build_model(dict(cfg, use_dsa=False), "t"), K128)
    assert e.kv_bytes_per_sequence == 13 * K128 * 1152 + 33 * 512 * 2176
    # a canonical file's per_layer_config gives the sliding layers' widths, and "full_attention" stays full
    canon = dict(cfg, sliding_window=1024, layer_types=["full_attention", "sliding_attention"] * 23,
                 per_layer_config={str(i): {"kv_lora_rank": 256, "qk_rope_head_dim": 32} for i in range(1, 46, 2)})
    e = estimate(build_model(canon, "t"), K128)
    assert e.kv_bytes_per_sequence == 23 * K128 * 1152 + 23 * 1024 * (256 + 32) * 2


def test_minimax_m3_full_layers_and_sparse_layers():
    # MiniMaxM3VLTextConfig defaults: 60 full layers of 4 KV heads x 128 = 2,048 B per token and layer
    text = {"hidden_size": 6144, "num_hidden_layers": 60, "num_attention_heads": 64}
    assert _bpt({"model_type": "minimax_m3_vl", "text_config": text}) == 60 * 2048
    # a sparse layer also caches one index key of index_head_dim (128 by default) x 2 B (tests/test_minimax_m3.py)
    sparse = dict(text, layer_types=["minimax_m3_sparse"] + ["full_attention"] * 59)
    assert _bpt({"model_type": "minimax_m3_vl", "text_config": sparse}) == 60 * 2048 + 128 * 2


@pytest.mark.parametrize("model_type", ["minimax_m3", "minimax_m3_text"])
def test_minimax_m3_flat_text_config(model_type):
    # MiniMaxAI/MiniMax-M3's flat config (model_type 'minimax_m3'; vLLM's own class for it is MiniMaxM3TextConfig,
    # 'minimax_m3_text'): sparse_attention_config.sparse_attention_freq [0] x 3 + [1] x 57 -> 3 full layers of
    # 2 x 4 x 128 x 2 = 2,048 B and 57 sparse layers of 2,048 + one 128-wide index key (256 B):
    # 6,144 + 57 x 2,304 = 137,472 B per token
    cfg = {"model_type": model_type, "hidden_size": 6144, "num_hidden_layers": 60, "num_attention_heads": 64,
           "num_key_value_heads": 4, "head_dim": 128,
           "sparse_attention_config": {"use_sparse_attention": True, "sparse_index_dim": 128,
                                       "sparse_num_index_heads": 4, "sparse_topk_blocks": 16,
                                       "sparse_block_size": 128, "sparse_attention_freq": [0] * 3 + [1] * 57,
                                       "sparse_disable_index_value": [0] * 3 + [1] * 57}}
    assert _bpt(cfg) == 137_472
    assert _bpt({"model_type": "minimax_m3_vl", "text_config": dict(cfg, model_type="minimax_m3_vl_text")}) == 137_472


@pytest.mark.parametrize(("wrapper", "text", "per_token"), [
    # GOT-OCR 2.0 and MOSS-Transcribe-Diarize wrap Qwen2 / Qwen3 text models kvplan reads: their own rules apply
    ("got_ocr2", {"model_type": "qwen2", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                  "num_key_value_heads": 16}, 24 * 2 * 16 * 64 * 2),
    ("moss_transcribe_diarize", {"model_type": "qwen3", "hidden_size": 2048, "num_hidden_layers": 28,
                                 "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128},
     28 * 2 * 8 * 128 * 2),
    # Emu3 (Emu3TextConfig defaults): 32 layers, 8 KV heads of 4096 / 32 = 128
    ("emu3", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}, 32 * 2 * 8 * 128 * 2),
])
def test_other_wrappers_of_read_text_models(wrapper, text, per_token):
    assert _bpt({"model_type": wrapper, "text_config": text}) == per_token
