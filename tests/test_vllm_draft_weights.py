"""The drafter's weights under speculative decoding, and a checkpoint total's MTP module
(kvplan.weights.mtp, kvplan.engines.vllm_draft_weights).

Expected figures are worked out by hand from the configs' shapes and vLLM's sharing rules
(the proposer frees the MTP embedding when PP = 1, an fc-layout module's own lm_head always, the
DeepSeek/GLM layout's shared_head.head from 0.16.0; eh_proj is an nn.Linear, whole on every rank).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from kvplan.configs.build import last_layer_params
from kvplan.engines.vllm_draft_weights import draft_checkpoint_drafter, mtp_drafter
from kvplan.sources import load_config, load_model
from kvplan.weights.mtp import mtp_module
from kvplan.weights.record import NO_LAYER, Weights

from test_param_counts import _qwen35_mtp

CONFIGS = Path(__file__).parent / "data" / "configs"

H3 = 7168  # DeepSeek-V3 hidden size
V3_VOCAB = 129_280
# one DeepSeek-V3 MoE decoder layer, from its config:
V3_ATTN = (H3 * 1536 + 1536 + 1536 * 128 * 192  # q_a_proj, q_a_layernorm, q_b_proj (128 heads x (128 + 64))
           + H3 * 576 + 512 + 512 * 128 * 256  # kv_a_proj_with_mqa (512 + 64), kv_a_layernorm, kv_b_proj
           + 128 * 128 * H3)  # o_proj
V3_MOE = 256 * 3 * H3 * 2048 + H3 * 256 + 256 + 3 * H3 * 2048  # experts, router + e_score_correction_bias, shared
V3_LAYER = V3_ATTN + 2 * H3 + V3_MOE
V3_COPY = V3_VOCAB * H3 * 2  # one bf16 embedding or head
# the layer in FP8: 1 B a parameter plus one float32 weight_scale_inv per 128 x 128 block (4 / 16,384 B a weight)
V3_LAYER_BYTES = int(V3_LAYER * (1 + 4 / 128**2))


def _spec(name):
    return load_model(name), load_config(name)[0]


def test_deepseek_v3_mtp_layer_is_its_published_11_5b():
    assert V3_ATTN == 187_107_328
    assert V3_LAYER == 11_507_286_272  # README_WEIGHTS.md: "11.5B unique parameters" (the layer, rounded)
    raw, _, source = load_config("deepseek-v3")
    assert last_layer_params(raw, source) == V3_LAYER


def test_a_checkpoint_total_leaves_out_its_estimated_mtp_module(cli):
    # the bundled DeepSeek-V3 total (688,586,727,753 B) holds layer 61: the FP8 decoder layer (with its block
    # scales), eh_proj (2 x 7,168 -> 7,168) and three norms in bf16, and its own embedding and head copies
    stored = V3_LAYER_BYTES + 2 * H3 * H3 * 2 + 3 * H3 * 2 + 2 * V3_COPY
    assert stored == 15_419_566_336 + 2_809_396
    rc, out, err = cli("estimate", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--context", "8k", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["model"]["mtp_weight_bytes"] == stored
    assert data["model"]["weights"]["mtp_estimated_bytes"] == stored
    # the rest is the config estimate and 13,776,741 B of shard headers, so each rank holds the estimate's
    # whole bytes whole (tests/test_bundled_replicated.py): 61 x (q_a_proj + kv_a_proj_with_mqa = 15,138,816 FP8
    # weights + 3,696 B of scales + 4 norms 16,384 x 2 B) + 58 routers (256 x 7,168 + 256) x 2 B + final norm
    # 7,168 x 2 B = 1,138,597,040 (before this, an even split: -(-(688,586,727,753 - stored) // 8))
    whole = 61 * (15_138_816 + 3_696 + 16_384 * 2) + 58 * (256 * H3 + 256) * 2 + H3 * 2
    assert data["capacity"]["weight_bytes_per_gpu"] == -(-(688_586_727_753 - stored - whole) // 8) + whole
    assert any("MTP module" in n and "left out" in n for n in data["model"]["weights"]["notes"])


def test_a_family_whose_mtp_layout_is_not_read_keeps_its_total_and_says_so(cli, tmp_path):
    # deepseek_v2 declares num_nextn_predict_layers here, but kvplan reads no MTP layout for it
    raw, _, _ = load_config("deepseek-v2-lite")
    raw = dict(raw, num_nextn_predict_layers=1)
    (tmp_path / "config.json").write_text(json.dumps(raw))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 10**10},
                                                                       "weight_map": {}}))
    rc, out, err = cli("weights", str(tmp_path / "config.json"), "--format", "json")
    assert rc == 0, err
    w = json.loads(out)["weights"]
    assert w["mtp_estimated_bytes"] == 0
    assert any("num_nextn_predict_layers" in n and "overstated" in n for n in w["notes"])


def test_deepseek_v3_drafter_per_release_and_split():
    model, raw = _spec("deepseek-v3")
    # TP 8, PP 1, from 0.16.0: the layer sharded but what vLLM 0.34 builds whole in a DeepseekV2DecoderLayer
    # (deepseek_mtp.py DeepSeekMultiTokenPredictorLayer.mtp_block): q_a_proj 7,168 x 1,536 and kv_a_proj_with_mqa
    # 7,168 x 576 (deepseek_v2.py, disable_tp / ReplicatedLinear), its 4 norms 2 x 7,168 + 1,536 + 512 and the
    # router 7,168 x 256 + 256 (GateLinear), 16,990,464 parameters at the layer's 1 + 4 / 16,384 B = 16,994,612 B;
    # eh_proj and the 3 module norms whole, embedding and head shared
    whole = int((H3 * 1536 + H3 * 576 + 2 * H3 + 1536 + 512 + H3 * 256 + 256) * (1 + 4 / 128**2))
    assert whole == 16_990_464 + 4_148
    base = -(-(V3_LAYER_BYTES - whole) // 8) + whole + 2 * H3 * H3 * 2 + 3 * H3 * 2
    # (11,510,095,668 - 16,994,612) / 8 = 1,436,637,632; before, the whole layer split: 1,643,974,688 + 351,175
    assert base == 1_436_637_632 + 16_994_612 + 205_520_896 + 43_008 == 1_659_196_148
    assert mtp_drafter(model, raw, None, tp=8, release="0.16.0").bytes_per_gpu == base
    # 0.15.0 keeps the layer's own shared_head.head (vocabulary-parallel)
    assert mtp_drafter(model, raw, None, tp=8, release="0.15.0").bytes_per_gpu == base + V3_COPY // 8
    # PP 2: the predictor's embedding is loaded apart from the target's
    assert mtp_drafter(model, raw, None, tp=8, pp=2, release="0.33.0").bytes_per_gpu == base + V3_COPY // 8


def test_fc_layout_drafter_is_qwen_mtp_module():
    model, raw = _spec("qwen3.6-27b")
    module = mtp_module(model, raw)
    # the same module test_param_counts sizes by hand: 24 heads, 4 KV heads, a dense 17,408 MLP
    assert module.layer_params + 2 * 5120 * 5120 + 3 * 5120 == _qwen35_mtp(5120, 24, 4, 3 * 5120 * 17408)
    assert module.embed_bytes == module.head_bytes == 0  # the mtp.* namespace stores no copies
    # Qwen3-Next at TP 2: one full-attention MoE layer (q doubled for its gate, 512 experts of 512, a shared
    # expert of 512 with its gate, router), mtp.fc column-parallel, three norms whole; embedding and head shared
    model, raw = _spec("qwen3-next-80b-a3b")
    attn = 2048 * 16 * 256 * 2 + 2 * 2048 * 2 * 256 + 16 * 256 * 2048 + 2 * 256
    moe = 512 * 3 * 2048 * 512 + 2048 * 512 + 3 * 2048 * 512 + 2048
    layer = attn + moe + 2 * 2048
    assert layer == 1_642_076_672
    expected = layer * 2 // 2 + 2 * 2048 * 2048 * 2 // 2 + 3 * 2048 * 2
    for release in ("0.11.0", "0.15.0", "0.33.0"):  # its own lm_head is replaced in every release
        assert mtp_drafter(model, raw, None, tp=2, release=release).bytes_per_gpu == expected


# MiMo-7B (mimo-7b.json: hidden 4,096, 32 heads, 8 KV heads x 128, intermediate 11,008, attention_bias, vocab
# 151,680, bfloat16). vLLM 0.34.0 mimo_mtp.py MiMoMultiTokenPredictorLayer: a Qwen2DecoderLayer (q/k/v with
# bias), input_proj an nn.Linear (2 x 4,096 -> 4,096, no bias, no quant_config: whole on every rank), three norms
MIMO_LAYER = (4096 * 4096 + 4096  # q_proj + bias
              + 2 * (4096 * 1024 + 1024)  # k_proj, v_proj + biases
              + 4096 * 4096  # o_proj
              + 3 * 4096 * 11008  # gate, up, down
              + 2 * 4096)  # input_layernorm, post_attention_layernorm
MIMO_PROJ_B = 2 * 4096 * 4096 * 2
MIMO_NORMS_B = 3 * 4096 * 2  # token_layernorm, hidden_layernorm, final_layernorm
# ERNIE-4.5-21B-A3B (ernie-4.5-21b-a3b-quoted.json: hidden 2,560, 20 heads, 4 KV heads, head_dim null -> 128,
# intermediate_size 12,288, no torch_dtype -> 2 B). ernie_mtp.py ErnieMultiTokenPredictorLayer: a dense
# LlamaDecoderLayer (not the target's MoE layer; no bias: the config sets none of the keys llama.py reads),
# mtp_linear_proj an nn.Linear (2 x 2,560 -> 2,560), mtp_emb_norm and mtp_hidden_norm (no final norm)
ERNIE_LAYER = (2560 * 2560 + 2 * 2560 * 512 + 2560 * 2560  # q, k, v (4 x 128), o
               + 3 * 2560 * 12288  # gate, up, down
               + 2 * 2560)  # two norms
ERNIE_PROJ_B = 2 * 2560 * 2560 * 2
ERNIE_NORMS_B = 2 * 2560 * 2


def _ernie_mtp():
    from kvplan.configs.build import build_model

    raw = {**json.loads((CONFIGS / "ernie-4.5-21b-a3b-quoted.json").read_text()), "num_mtp_layers": 1}
    return build_model(raw, "ernie-21b-mtp"), raw


def test_mimo_and_ernie_drafters_by_hand():
    assert MIMO_LAYER == 177_223_680 and ERNIE_LAYER == 110_105_600
    model, raw = _spec(str(CONFIGS / "mimo-7b.json"))
    assert mtp_drafter(model, raw, None, tp=1, release="0.34.0").bytes_per_gpu == MIMO_LAYER * 2 + MIMO_PROJ_B \
        + MIMO_NORMS_B == 421_580_800
    # TP 2: the decoder layer halves, input_proj stays whole (the fc layout's mtp.fc would halve)
    assert mtp_drafter(model, raw, None, tp=2, release="0.34.0").bytes_per_gpu == MIMO_LAYER * 2 // 2 + MIMO_PROJ_B \
        + MIMO_NORMS_B
    # PP 2: the module's own embedding (151,680 x 4,096 x 2 B) stays; its lm_head is replaced in every release
    assert mtp_drafter(model, raw, None, pp=2, release="0.11.0").bytes_per_gpu == 421_580_800 + 151680 * 4096 * 2
    model, raw = _ernie_mtp()
    assert mtp_drafter(model, raw, None, tp=1, release="0.34.0").bytes_per_gpu == ERNIE_LAYER * 2 + ERNIE_PROJ_B \
        + ERNIE_NORMS_B == 246_435_840
    assert mtp_drafter(model, raw, None, tp=4, release="0.34.0").bytes_per_gpu == ERNIE_LAYER * 2 // 4 \
        + ERNIE_PROJ_B + ERNIE_NORMS_B


def test_the_profile_subtracts_mimo_ernie_and_nemotron_h_drafters(cli, tmp_path):
    ernie = tmp_path / "ernie-mtp.json"
    ernie.write_text(json.dumps(_ernie_mtp()[1]))

    def available(config, *extra):
        rc, out, err = cli("estimate", str(config), "--engine", "vllm", "--gpu", "h100", "--max-model-len", "8192",
                           "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    # beside the drafter, Model Runner V2's grammar bitmask holds 1 + num_speculative_tokens rows a sequence
    # (model_runner.py load_model, decode_query_len): one MTP layer, 1 draft token, so 1,024 sequences (vLLM 0.34's
    # default on an H100) x 1 row more x cdiv(vocab, 32) words x 4 B: MiMo 151,680 -> 4,740 words, 19,415,040 B;
    # ERNIE 103,424 -> 3,232, 13,238,272 B; Nemotron-H 131,072 -> 4,096, 16,777,216 B
    assert available(CONFIGS / "mimo-7b.json") - available(CONFIGS / "mimo-7b.json", "--mtp") \
        == 421_580_800 + 1024 * 4740 * 4
    assert available(ernie) - available(ernie, "--mtp") == 246_435_840 + 1024 * 3232 * 4
    nemotron = tmp_path / "nemotron-mtp.json"
    nemotron.write_text(json.dumps(_nemotron_mtp()[1]))
    assert available(nemotron) - available(nemotron, "--mtp") == 1_284_743_200 + 1024 * 4096 * 4


# Nemotron-H-8B (nemotron-h-8b-tf5.json: hidden 4,096, 32 heads, 8 KV heads x 128, mtp_layers_block_type
# [full_attention, moe] = '*E', 8 routed experts of 7,688, one shared expert of 7,688, no latent, bfloat16) with
# num_nextn_predict_layers 1. vLLM 0.34.0 nemotron_h_mtp.py: the '*' layer (norm, qkv_proj, o_proj), the 'E'
# layer (norm; NemotronHMoE: non-gated experts up + down, shared NemotronHMLP up + down, GateLinear router, float32
# e_score_correction_bias), enorm + hnorm + eh_proj on the first, final_layernorm on the last; no embedding/head
NEMOTRON_ATTN = 4096 + 4096 * (32 + 2 * 8) * 128 + 32 * 128 * 4096
NEMOTRON_MOE = 4096 + 8 * 2 * 4096 * 7688 + 2 * 4096 * 7688  # norm, experts, shared expert
NEMOTRON_WHOLE_B = 3 * 4096 * 2 + 4096 * 8 * 2 + 8 * 4  # three norms, router, its float32 bias
NEMOTRON_EH_B = 2 * 4096 * 4096 * 2


def _nemotron_mtp():
    from kvplan.configs.build import build_model

    raw = {**json.loads((CONFIGS / "nemotron-h-8b-tf5.json").read_text()), "num_nextn_predict_layers": 1}
    return build_model(raw, "nemotron-h-mtp"), raw


def test_nemotron_h_drafter_by_hand():
    assert NEMOTRON_ATTN == 41_947_136 and NEMOTRON_MOE == 566_824_960
    model, raw = _nemotron_mtp()
    total = (NEMOTRON_ATTN + NEMOTRON_MOE) * 2 + NEMOTRON_EH_B + NEMOTRON_WHOLE_B
    assert mtp_drafter(model, raw, None, tp=1, release="0.34.0").bytes_per_gpu == total == 1_284_743_200
    # TP 2: layers and eh_proj (column-parallel) halve; norms, router and its bias stay whole
    assert mtp_drafter(model, raw, None, tp=2, release="0.17.0").bytes_per_gpu == \
        (NEMOTRON_ATTN + NEMOTRON_MOE) * 2 // 2 + NEMOTRON_EH_B // 2 + NEMOTRON_WHOLE_B
    # an attention-only step ('*'): no MoE layer, no router
    model, raw = _nemotron_mtp()
    raw = {**raw, "mtp_layers_block_type": ["full_attention"]}
    assert mtp_drafter(model, raw, None, tp=1).bytes_per_gpu == NEMOTRON_ATTN * 2 + NEMOTRON_EH_B + 3 * 4096 * 2


# MiMo-V2.6-Flash (mimo-v2.6-flash.json: hidden 4,096, SWA 64 heads x 192 (v 128), 8 KV heads, intermediate 16,384,
# attention sinks, FP8 with 128 x 128 blocks: 1 + 4 / 16,384 B a linear parameter). vLLM 0.34.0 mimo_v2_mtp.py: one
# MiMoV2MTPLayer whatever num_nextn_predict_layers (3) says; eh_proj a ReplicatedLinear without quant_config
MIMO_V2_LAYER = (4096 * (64 * 192 + 8 * 192 + 8 * 128)  # fused qkv (no padding: 16 x 192, 2 x 192, 2 x 128 rows
                 + 64 * 128 * 4096  # o_proj                      a chunk of ckpt_tp 4 are whole 128-row blocks)
                 + 64  # attention_sink_bias, one a head
                 + 3 * 4096 * 16384  # gate, up, down
                 + 2 * 4096)  # input_layernorm, pre_mlp_layernorm
MIMO_V2_FP8 = MIMO_V2_LAYER + MIMO_V2_LAYER // 4096  # block scales: 4 B per 128 x 128 block
MIMO_V2_REST_B = 2 * 4096 * 4096 * 2 + 3 * 4096 * 2  # eh_proj, enorm + hnorm + final_layernorm, whole


def test_mimo_v2_drafter_by_hand(cli):
    assert MIMO_V2_LAYER == 295_706_688 and MIMO_V2_FP8 == 295_778_882
    model, raw = _spec(str(CONFIGS / "mimo-v2.6-flash.json"))
    assert mtp_drafter(model, raw, None, tp=1).bytes_per_gpu == MIMO_V2_FP8 + MIMO_V2_REST_B  # one layer, not 3
    per_gpu = -(-MIMO_V2_FP8 // 8) + MIMO_V2_REST_B
    assert mtp_drafter(model, raw, None, tp=8).bytes_per_gpu == per_gpu == 104_105_801

    def available(*extra):
        rc, out, err = cli("estimate", str(CONFIGS / "mimo-v2.6-flash.json"), "--engine", "vllm", "--gpu", "h100",
                           "--tp", "8", "--max-model-len", "8192", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    # + V2's grammar bitmask, one row more a sequence for the one draft token (model_runner.py decode_query_len):
    # 1,024 sequences x cdiv(152,576, 32) = 4,768 words x 4 B = 19,529,728 B
    assert available() - available("--mtp") == per_gpu + 1024 * 4768 * 4
    # from a tensor table: the checkpoint's model.mtp.layers.1 and .2 are not loaded (one layer built)
    parts = (("embeddings", NO_LAYER, 1000), ("mtp", 0, 800), ("mtp", 1, 800), ("mtp", 2, 800))
    record = Weights(total_bytes=3400, source="safetensors", parts=parts)
    assert mtp_drafter(model, raw, record, tp=2).bytes_per_gpu == 400
    # a fused qkv vLLM would pad per checkpoint chunk (96-row K chunks) is not sized
    padded = mtp_drafter(model, {**raw, "swa_head_dim": 96, "swa_v_head_dim": 96}, None, tp=8)
    assert padded.bytes_per_gpu is None and "could not be sized" in padded.how


def test_a_tensor_table_sizes_the_drafter_exactly():
    # 2 decoder layers; layer 2 = num_layers is the MTP layer, DeepSeek-style, with its own copies
    parts = [("embeddings", NO_LAYER, 1000), ("lm_head", NO_LAYER, 1000)]
    for layer in range(2):
        parts += [("attention", layer, 400), ("experts", layer, 4000), ("norms", layer, 20)]
    parts += [("attention", 2, 400), ("experts", 2, 4000), ("norms", 2, 20), ("router", 2, 8),
              ("embeddings", 2, 1000), ("lm_head", 2, 1000), ("other", 2, 300)]  # other: eh_proj
    record = Weights(total_bytes=sum(n for *_, n in parts), source="safetensors", parts=tuple(parts))
    model, raw = _spec("deepseek-v3")
    model = replace(model, layers=model.layers[:2])
    split = 200 + 2000 + 20 + 8 + 300  # TP 2: attention and experts halve; norms, router, eh_proj whole
    assert mtp_drafter(model, raw, record, tp=2, release="0.16.0").bytes_per_gpu == split
    assert mtp_drafter(model, raw, record, tp=2, release="0.15.0").bytes_per_gpu == split + 500  # own head
    assert mtp_drafter(model, raw, record, tp=2, pp=2, release="0.16.0").bytes_per_gpu == split + 500  # embedding


def test_draft_checkpoints():
    # the 1B-shaped draft config (tests/data/configs): draft_model shares nothing, so the draft's parameters
    # at 2 B, sharded over TP 2
    draft = load_model(str(CONFIGS / "draft-llama-1b-shape.json"))
    assert draft.param_count > 10**9
    got = draft_checkpoint_drafter(draft, "draft_model", None, tp=2)
    assert got.bytes_per_gpu == draft.param_count * 2 // 2
    # an EAGLE head from its config alone is not modelled, and says why
    head = load_model(str(CONFIGS / "eagle3-head-llama-8b-shape.json"))
    got = draft_checkpoint_drafter(head, "eagle3", None, tp=1)
    assert got.bytes_per_gpu is None and "not modelled" in got.how


def test_the_profile_subtracts_the_drafter(cli):
    # the same server with and without MTP: the available KV memory differs by the drafter alone
    def available(*extra):
        rc, out, err = cli("estimate", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--context", "8k",
                           "--engine", "vllm@0.16", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    assert available() - available("--mtp") == 1_659_196_148  # test_deepseek_v3_drafter_per_release_and_split


def _table(entries, family=""):
    # a hand-built tensor table (name, bytes): BF16, 2 B an element
    from kvplan.weights.roles import TensorEntry, fold

    rows = [TensorEntry(name, "BF16", n // 2, n) for name, n in entries]
    return fold(rows, source="safetensors", origin="hand", quantization="none", files=1, family=family)


def test_mtp_tables_keep_norms_routers_and_nn_linear_projections_whole():
    # vLLM 0.34.0: mimo_mtp.py input_proj and ernie_mtp.py mtp_linear_proj are nn.Linear, mimo_v2_mtp.py eh_proj a
    # ReplicatedLinear, nemotron_h_mtp.py eh_proj a ColumnParallelLinear (split); RMSNorms, nemotron_h.py GateLinear
    # (+ e_score_correction_bias) and fc1/fc2_latent_proj (ReplicatedLinear) whole; the decoder layers split
    mimo = _table([("model.embed_tokens.weight", 5000), ("model.layers.0.mlp.up_proj.weight", 600),
                   ("model.mtp_layers.0.input_proj.weight", 1000), ("model.mtp_layers.0.token_layernorm.weight", 10),
                   ("model.mtp_layers.0.hidden_layernorm.weight", 10), ("model.mtp_layers.0.final_layernorm.weight", 10),
                   ("model.mtp_layers.0.mtp_block.self_attn.q_proj.weight", 400),
                   ("model.mtp_layers.0.mtp_block.mlp.gate_proj.weight", 600),
                   ("model.mtp_layers.0.mtp_block.input_layernorm.weight", 10)])
    model, raw = _spec(str(CONFIGS / "mimo-7b.json"))
    # TP 2: 1000 + 3 x 10 + 10 whole, (400 + 600) / 2 (was 2,040 / 2 = 1,020: every tensor split)
    assert mtp_drafter(model, raw, mimo, tp=2, release="0.34.0").bytes_per_gpu == 1000 + 30 + 10 + 500 == 1540
    v2 = _table([("model.mtp.layers.0.enorm.weight", 8), ("model.mtp.layers.0.hnorm.weight", 8),
                 ("model.mtp.layers.0.final_layernorm.weight", 8), ("model.mtp.layers.0.eh_proj.weight", 800),
                 ("model.mtp.layers.0.self_attn.q_proj.weight", 400), ("model.mtp.layers.0.mlp.gate_proj.weight", 600),
                 ("model.mtp.layers.1.self_attn.q_proj.weight", 400), ("model.mtp.layers.1.enorm.weight", 8)])
    model, raw = _spec(str(CONFIGS / "mimo-v2.6-flash.json"))
    # layer 0 only (one MiMoV2MTPLayer); TP 2: 24 + 800 whole, (400 + 600) / 2
    assert mtp_drafter(model, raw, v2, tp=2).bytes_per_gpu == 24 + 800 + 500 == 1324
    nemo = _table([("mtp.layers.0.enorm.weight", 8), ("mtp.layers.0.hnorm.weight", 8),
                   ("mtp.layers.0.eh_proj.weight", 800), ("mtp.layers.0.norm.weight", 8),
                   ("mtp.layers.0.mixer.q_proj.weight", 200), ("mtp.layers.1.norm.weight", 8),
                   ("mtp.layers.1.mixer.gate.weight", 64), ("mtp.layers.1.mixer.gate.e_score_correction_bias", 16),
                   ("mtp.layers.1.mixer.experts.0.up_proj.weight", 1000),
                   ("mtp.layers.1.mixer.fc1_latent_proj.weight", 40), ("mtp.layers.1.final_layernorm.weight", 8)])
    model, raw = _nemotron_mtp()
    # TP 2: norms 5 x 8, router 64 + 16, latent 40 whole; eh_proj, q_proj, experts halve: (800 + 200 + 1000) / 2
    assert mtp_drafter(model, raw, nemo, tp=2, release="0.34.0").bytes_per_gpu == 40 + 80 + 40 + 1000 == 1160


def test_deepseek_v3_mtp_table_keeps_the_layers_mla_down_projections_whole():
    # DeepSeek-V3's MTP layer 61 is a DeepseekV2DecoderLayer (vLLM 0.34.0 deepseek_mtp.py mtp_block), whose
    # q_a_proj and kv_a_proj_with_mqa vLLM builds whole (deepseek_v2.py: disable_tp / ReplicatedLinear), with their
    # scales; q_b_proj and o_proj split. Bytes: q_a 1,536 x 7,168 FP8 = 11,010,048 + scales 12 x 56 x 4 = 2,688;
    # kv_a 576 x 7,168 = 4,128,768 + scales 5 x 56 x 4 = 1,120; q_b 24,576 x 1,536 = 37,748,736; o_proj 7,168 x
    # 16,384 = 117,440,512; eh_proj 7,168 x 14,336 BF16 = 205,520,896 (whole)
    rows = [("model.layers.61.self_attn.q_a_proj.weight", 11_010_048),
            ("model.layers.61.self_attn.q_a_proj.weight_scale_inv", 2_688),
            ("model.layers.61.self_attn.kv_a_proj_with_mqa.weight", 4_128_768),
            ("model.layers.61.self_attn.kv_a_proj_with_mqa.weight_scale_inv", 1_120),
            ("model.layers.61.self_attn.q_b_proj.weight", 37_748_736),
            ("model.layers.61.self_attn.o_proj.weight", 117_440_512),
            ("model.layers.61.eh_proj.weight", 205_520_896)]
    model, raw = _spec("deepseek-v3")
    # TP 8: 11,010,048 + 2,688 + 4,128,768 + 1,120 = 15,142,624 whole, (37,748,736 + 117,440,512) / 8 = 19,398,656,
    # eh_proj 205,520,896 (before: the attention split, ceil(170,331,872 / 8) = 21,291,484 + 205,520,896)
    got = mtp_drafter(model, raw, _table(rows), tp=8, release="0.34.0").bytes_per_gpu
    assert got == 15_142_624 + 19_398_656 + 205_520_896 == 240_062_176


def test_ernie_mtp_tensors_size_the_drafter_only_for_ernie():
    # vLLM 0.34.0 ernie_mtp.py maps model.mtp_{emb_norm,hidden_norm,linear_proj,block}.0.*; ernie45_moe.py drops
    # every name holding "mtp" from the target
    rows = [("model.layers.0.mlp.up_proj.weight", 600), ("model.mtp_emb_norm.0.weight", 8),
            ("model.mtp_hidden_norm.0.weight", 8), ("model.mtp_linear_proj.0.weight", 800),
            ("model.mtp_block.0.self_attn.q_proj.weight", 400), ("model.mtp_block.0.mlp.up_proj.weight", 600),
            ("model.mtp_block.0.input_layernorm.weight", 8)]
    model, raw = _ernie_mtp()
    ernie = _table(rows, family="ernie4_5_moe")
    assert ernie.by_role["mtp"] == 8 + 8 + 800 + 400 + 600 + 8 == 1824 and ernie.by_role["mlp"] == 600
    drafter = mtp_drafter(model, raw, ernie, tp=4, release="0.34.0")
    # TP 4: two norms, mtp_linear_proj and the block's norm whole; q_proj and up_proj / 4
    assert drafter.bytes_per_gpu == 16 + 800 + 8 + 100 + 150 == 1074 and "tensor table" in drafter.how
    # another family: the names are not MTP, and the drafter falls back to the config
    other = _table(rows)
    assert "mtp" not in other.by_role
    assert "estimated from the config" in mtp_drafter(model, raw, other, tp=4, release="0.34.0").how


def test_the_profile_reads_an_ernie_drafter_from_the_safetensors_beside_its_config(cli, tmp_path):
    import numpy as np
    from test_weights_safetensors import H, dense_tensors, write_sharded

    tensors = dense_tensors()
    tensors.update({"model.mtp_block.0.self_attn.q_proj.weight": np.zeros((H, H), np.float16),
                    "model.mtp_linear_proj.0.weight": np.zeros((H, 2 * H), np.float16),
                    "model.mtp_emb_norm.0.weight": np.ones(H, np.float32),
                    "model.mtp_hidden_norm.0.weight": np.ones(H, np.float32)})
    write_sharded(tmp_path / "m", tensors, config=_ernie_mtp()[1])

    def available(*extra):
        rc, out, err = cli("estimate", str(tmp_path / "m" / "config.json"), "--engine", "vllm", "--gpu", "h100",
                           "--max-model-len", "8192", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    # TP 1: the module's 64 x 64 + 64 x 128 fp16 and two 64-entry fp32 norms, not the config's 246,435,840 B estimate;
    # + V2's grammar bitmask row for the draft token, 1,024 x cdiv(103,424, 32) x 4 = 13,238,272 B
    assert available() - available("--mtp") == 64 * 64 * 2 + 64 * 128 * 2 + 2 * 64 * 4 + 1024 * 3232 * 4 \
        == 25_088 + 13_238_272


# Step-3.5 (vLLM 0.34.0 step3p5_mtp.py Step3p5AMultiTokenPredictorLayer, step3p5.py Step3p5DecoderLayer / Step3p5MLP):
# a constructed config in the hub's shape (45 layers + 3 trailing sliding layer_types entries, 64 query heads, 96 on
# sliding layers by attention_other_setting, 8 K/V heads x 128, the head-wise gate, intermediate 11,264, vocab
# 128,896). One sliding MTP layer:
STEP35_LAYER = (4096 * (96 + 2 * 8) * 128  # qkv_proj over 96 query heads
                + 96 * 128 * 4096  # o_proj
                + 2 * 128  # q_norm, k_norm
                + 4096 * 96  # g_proj (use_head_wise_attn_gate)
                + 3 * 4096 * 11264  # gate_up_proj, down_proj (dense: layer 45+ is not in moe_layers_enum)
                + 2 * 4096)  # input_layernorm, post_attention_layernorm
STEP35_HEAD = 128_896 * 4096 * 2  # each layer's own shared_head.head, bf16: kept (has_own_lm_head)
STEP35_WHOLE = 2 * 4096 * 4096 * 2 + 3 * 4096 * 2  # eh_proj (nn.Linear), enorm + hnorm + shared_head.norm


def test_step35_drafter_keeps_a_head_per_layer_by_hand():
    from kvplan.configs import build_model

    raw = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
           "num_hidden_layers": 45, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
           "sliding_window": 512, "intermediate_size": 11264, "vocab_size": 128896, "num_nextn_predict_layers": 3,
           "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)],
           "moe_layers_enum": ",".join(str(i) for i in range(3, 45)), "use_head_wise_attn_gate": True,
           "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96}}
    model = build_model(raw, "step-3.5")
    assert STEP35_LAYER == 247_865_600
    tp1 = 3 * STEP35_LAYER * 2 + 3 * STEP35_WHOLE + 3 * STEP35_HEAD
    assert mtp_drafter(model, raw, None, tp=1, release="0.34.0").bytes_per_gpu == tp1 == 4_856_342_016
    tp8 = 3 * STEP35_LAYER * 2 // 8 + 3 * STEP35_WHOLE + 3 * STEP35_HEAD // 8
    assert mtp_drafter(model, raw, None, tp=8, release="0.34.0").bytes_per_gpu == tp8 == 783_268_032
    # with PP 2 the predictor's own embedding stays (maybe_share_target_embed returns early)
    pp2 = mtp_drafter(model, raw, None, tp=8, pp=2, release="0.34.0").bytes_per_gpu
    assert pp2 == tp8 + 128_896 * 4096 * 2 // 8 == 915_257_536
    # an MTP layer in moe_layers_enum is a MoE layer: not sized
    moe = {**raw, "moe_layers_enum": ",".join(str(i) for i in range(3, 48))}
    assert mtp_drafter(build_model(moe, "step-3.5"), moe, None, tp=8).bytes_per_gpu is None
