"""Under TP above a model's KV heads, vLLM's QKVParallelLinear (0.11.0-0.34.0 layers/linear.py: num_kv_heads = 1,
num_kv_head_replicas = tp / total_num_kv_heads) gives every rank one whole KV head of k_proj / v_proj (or of a fused
qkv's key and value rows), with the bias and the scales that follow those rows: 1 / kv_heads of them a rank, not
1 / tp. Every figure below is worked out by hand from the config (and for the tensor tables from the shapes
written), with the figure the even split gave before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvplan.capacity.weights import kv_note, stage_weight_bytes
from kvplan.configs import build_model
from kvplan.engines.vllm_load import config_weights_per_gpu
from kvplan.sources import load_model_and_weights
from kvplan.weights.estimate import estimated
from kvplan.weights.load import from_safetensors

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
save_file = pytest.importorskip("safetensors.numpy").save_file


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text(encoding="utf-8"))


def test_qwen3_30b_a3b_at_tp_8_holds_one_of_its_4_kv_heads_a_rank():
    # Qwen3-30B-A3B: 48 layers, hidden 2,048, 4 KV heads of 128: k_proj + v_proj 2 x 2,048 x 512 = 2,097,152
    # parameters a layer, x 48 x 2 B = 201,326,592 B. The bundled index total 61,064,245,248 B is the config
    # estimate, with 25,587,712 B whole on every rank (docs/weights.md). TP 8: (61,064,245,248 - 25,587,712 -
    # 201,326,592) / 8 + 25,587,712 + 201,326,592 / 4 = 7,604,666,368 + 25,587,712 + 50,331,648
    # (before: (61,064,245,248 - 25,587,712) / 8 + 25,587,712 = 7,655,419,904)
    model, record = load_model_and_weights("qwen3-30b-a3b")
    assert record.source == "bundled" and record.total_bytes == 61_064_245_248
    assert stage_weight_bytes(record, 48, tp=8) == [7_680_585_728]
    assert stage_weight_bytes(estimated(model), 48, tp=8) == [7_680_585_728]
    assert config_weights_per_gpu(model, 8, 1, "0.34.0") == 7_680_585_728
    # TP 4 is the KV heads: the even split, as before; TP 2 x PP 2 too
    assert stage_weight_bytes(record, 48, tp=4) == [(61_064_245_248 - 25_587_712) // 4 + 25_587_712]
    assert kv_note(record, model, 8) is None


def test_llama_3_1_70b_at_tp_16_holds_one_of_its_8_kv_heads_a_rank():
    # Llama-3.1-70B: 80 layers, hidden 8,192, 8 KV heads of 128: k/v 2 x 8,192 x 1,024 x 80 x 2 B =
    # 2,684,354,560 B; whole: (80 x 2 + 1) x 8,192 norm weights x 2 B = 2,637,824 B; bundled total 141,107,412,992.
    # TP 16: (141,107,412,992 - 2,637,824 - 2,684,354,560) / 16 + 2,637,824 + 2,684,354,560 / 8
    # = 8,651,276,288 + 2,637,824 + 335,544,320 (before: 8,821,686,272)
    model, record = load_model_and_weights("llama-3.1-70b")
    assert record.total_bytes == 141_107_412_992
    assert stage_weight_bytes(record, 80, tp=16) == [8_989_458_432]
    # PP 2 as well: 40 layers a stage, the shares divided by the stages as the rest of a total without a table
    # (141,107,412,992 - 2,637,824 - 2,684,354,560) / 32 + 2,637,824 / 2 + 2,684,354,560 / 16
    assert stage_weight_bytes(record, 80, tp=16, pp=2) == [4_325_638_144 + 1_318_912 + 167_772_160] * 2


QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128, "hidden_size": 5120,
             "intermediate_size": 25600, "max_position_embeddings": 40960, "model_type": "qwen3",
             "num_attention_heads": 64, "num_hidden_layers": 64, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
             "rope_theta": 1000000, "tie_word_embeddings": False, "torch_dtype": "float16", "vocab_size": 151936,
             "quantization_config": {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm",
                                     "zero_point": True}}


def test_qwen3_32b_awq_at_tp_16_keeps_the_kv_heads_scales_and_zeros_with_them():
    # Qwen3-32B-AWQ (int4, group 128: 0.5 + 2.5 / 128 = 0.51953125 B a weight with its qzeros and fp16 scales, which
    # follow the output rows): 19,325,298,688 B, 1,353,728 B of norms whole (tests/test_vllm_logs_qwen3_32b.py).
    # k_proj + v_proj: 64 layers x 2 x 5,120 x 1,024 = 671,088,640 weights x 0.51953125 = 348,651,520 B.
    # TP 16, 8 KV heads: (19,325,298,688 - 1,353,728 - 348,651,520) / 16 + 1,353,728 + 348,651,520 / 8
    # = 1,185,955,840 + 1,353,728 + 43,581,440 (before: 1,209,100,288)
    model = build_model(QWEN3_32B, "qwen3-32b-awq")
    assert model.weight_bytes == 19_325_298_688 and model.weight_replicated_bytes == 1_353_728
    assert model.weight_kv_bytes == ((8, 348_651_520),)
    assert stage_weight_bytes(estimated(model), 64, tp=16) == [1_230_891_008]
    assert config_weights_per_gpu(model, 16, 1, "0.34.0") == 1_230_891_008


# a Llama-shaped checkpoint written here: hidden 64, 4 heads and 2 KV heads of 16, 2 layers, FP8 per-channel
LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "float16"}


def _fp8_linear(t: dict, name: str, outputs: int, inputs: int) -> None:
    t[name + ".weight"] = np.zeros((outputs, inputs), np.uint8)  # 1 B a weight
    # per output channel: splits with the rows, but whole on every rank for a row-parallel o_proj / down_proj
    t[name + ".weight_scale"] = np.ones((outputs, 1), np.float32)
    t[name + ".input_scale"] = np.ones(1, np.float32)  # a scalar: whole on every rank


def test_a_tensor_table_keeps_one_kv_head_of_k_v_proj_and_their_channel_scales(tmp_path):
    t = {"model.embed_tokens.weight": np.zeros((100, 64), np.float16), "model.norm.weight": np.ones(64, np.float32),
         "lm_head.weight": np.zeros((100, 64), np.float16)}
    for i in range(2):
        p = f"model.layers.{i}."
        _fp8_linear(t, p + "self_attn.q_proj", 64, 64)
        _fp8_linear(t, p + "self_attn.k_proj", 32, 64)
        _fp8_linear(t, p + "self_attn.v_proj", 32, 64)
        _fp8_linear(t, p + "self_attn.o_proj", 64, 64)
        _fp8_linear(t, p + "mlp.gate_proj", 128, 64)
        _fp8_linear(t, p + "mlp.up_proj", 128, 64)
        _fp8_linear(t, p + "mlp.down_proj", 64, 128)
        t[p + "input_layernorm.weight"] = np.ones(64, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(64, np.float32)
    save_file(t, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    record = from_safetensors(tmp_path, LLAMA)
    # a layer's attention: q and o 4,096 + 256 + 4, k and v 2,048 + 128 + 4: 13,072 B; the 4 input scales and
    # o_proj's channel scales (RowParallelLinear: whole on every rank) whole (16 + 256 B); k and v's weights and
    # channel scales 2 x 2,176 = 4,352 B, one of the 2 KV heads a rank at TP 4:
    # 272 + 4,352 / 2 + (13,072 - 272 - 4,352) / 4 = 4,560 (before KV heads: 16 + 13,056 / 4 = 3,280).
    # MLP: 3 x 8,192 + scales 512 + 512 + 256 + 3 scalars 12 = 25,868, down_proj's scales whole:
    # 268 + 25,600 / 4 = 6,668. Norms 512 whole.
    # Two layers: 2 x (4,560 + 6,668 + 512) = 23,480; embeddings and head 12,800 / 4 each, the final norm 256.
    assert [(role, layer, n, heads) for role, layer, n, heads in record.kv_parts] == [
        ("attention", 0, 4_352, 2), ("attention", 1, 4_352, 2)]
    assert stage_weight_bytes(record, 2, tp=4) == [23_480 + 3_200 + 3_200 + 256] == [30_136]
    assert stage_weight_bytes(record, 2, tp=2) == [  # TP 2 = the KV heads: the even split
        2 * (272 + (13_072 - 272) // 2 + 268 + (25_868 - 268) // 2 + 512) + 6_400 + 6_400 + 256]


FALCON = {"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
          "vocab_size": 100, "multi_query": True, "parallel_attn": True, "new_decoder_architecture": False,
          "bias": False, "tie_word_embeddings": True, "torch_dtype": "float16"}


def test_a_fused_query_key_value_keeps_its_one_kv_head_on_every_rank(tmp_path):
    # Falcon-7B's layout (multi_query: one KV head; vLLM 0.34 falcon.py builds query_key_value as a
    # QKVParallelLinear with total_num_kv_heads 1), shrunk: hidden 64, 4 heads of 16, 2 layers. query_key_value
    # [64 + 2 x 16, 64] fp16 = 12,288 B, of which the key and value rows are 32 / 96: 4,096 B, held whole at TP 2.
    t = {"transformer.word_embeddings.weight": np.zeros((100, 64), np.float16),
         "transformer.ln_f.weight": np.ones(64, np.float16), "transformer.ln_f.bias": np.zeros(64, np.float16)}
    for i in range(2):
        p = f"transformer.h.{i}."
        t[p + "self_attention.query_key_value.weight"] = np.zeros((96, 64), np.float16)
        t[p + "self_attention.dense.weight"] = np.zeros((64, 64), np.float16)
        t[p + "mlp.dense_h_to_4h.weight"] = np.zeros((256, 64), np.float16)
        t[p + "mlp.dense_4h_to_h.weight"] = np.zeros((64, 256), np.float16)
        t[p + "input_layernorm.weight"] = np.ones(64, np.float16)
        t[p + "input_layernorm.bias"] = np.zeros(64, np.float16)
    save_file(t, str(tmp_path / "model.safetensors"))
    record = from_safetensors(tmp_path, FALCON)
    assert [(layer, n, heads) for _, layer, n, heads in record.kv_parts] == [(0, 4_096, 1), (1, 4_096, 1)]
    # a layer at TP 2: attention 4,096 + (12,288 + 8,192 - 4,096) / 2 = 12,288 (before: 10,240), MLP 65,536 / 2,
    # its LayerNorm 256 whole: 45,312; x 2 + the tied embeddings 12,800 / 2 + ln_f 256 = 97,280 (before: 93,184)
    assert stage_weight_bytes(record, 2, tp=2) == [97_280]


def test_the_config_estimate_counts_fused_rows_and_minimax_m2_k_norm():
    # Falcon-7B (bundled config): 32 layers, hidden 4,544, one KV head of 64, no biases: 32 x 4,544 x 128 x 2 B
    # = 37,224,448 B of key and value rows in query_key_value. ChatGLM3-6B: 28 layers, hidden 4,096, 2 KV groups
    # of 128 with add_qkv_bias: 28 x (4,096 x 512 + 512) x 2 B = 117,469,184 B
    assert build_model(_raw("falcon-7b"), "falcon-7b").weight_kv_bytes == ((1, 37_224_448),)
    assert build_model(_raw("chatglm3-6b"), "chatglm3-6b").weight_kv_bytes == ((2, 117_469_184),)
    # MiniMax-M2: 62 layers, hidden 3,072, 8 KV heads of 128; k_proj + v_proj 2 x 3,072 x 1,024 and k_norm over the
    # keys, 1,024 (vLLM 0.34 minimax_m2.py shards it by KV head above them: weight_shard_world_size =
    # total_num_kv_heads): 62 x 6,292,480 x 2 B = 780,267,520 B; TP 16 holds 1 / 8 of it a rank, 97,533,440 B
    model = build_model(_raw("minimax-m2"), "minimax-m2")
    assert model.weight_kv_bytes == ((8, 780_267_520),)
    whole = model.weight_replicated_bytes
    assert config_weights_per_gpu(model, 16) == (model.weight_bytes - whole - 780_267_520) // 16 + whole + 97_533_440


def test_mla_has_no_kv_heads_to_replicate():
    # DeepSeek-V2-Lite at TP 8: its latent projections are whole already (docs/weights.md: 3,988,544,512 B a GPU);
    # no k_proj / v_proj, no KV head, no note
    model, record = load_model_and_weights("deepseek-v2-lite")
    assert model.weight_kv_bytes == ()
    assert stage_weight_bytes(record, 27, tp=8) == [3_988_544_512]
    assert kv_note(record, model, 8) is None


def _without_bamba_table(monkeypatch):
    """Bamba's per-module table taken away: every bundled model with KV heads has a table now
    (configs/weight_tables/hybrid_more.py has Bamba's), so Bamba-9B stands for a family without one."""
    from kvplan.configs import weight_tables

    monkeypatch.delitem(weight_tables.TABLES, "bamba")


def test_a_family_without_a_table_says_the_replication_is_not_counted(cli, monkeypatch):
    # Bamba-9B (8 KV heads) with no per-module table (_without_bamba_table; RecurrentGemma, which this test used,
    # has one now: configs/weight_tables/rest.py): at TP 16 the plan splits evenly and says so; at TP 8 nothing
    _without_bamba_table(monkeypatch)
    model, record = load_model_and_weights("bamba-9b")
    assert record.kv_parts is None
    note = kv_note(record, model, 16)
    assert note is not None and note.startswith("KV-head replication not counted") and "bamba" in note
    assert kv_note(record, model, 8) is None
    code, out, _ = cli("weights", "bamba-9b", "--tp", "16", "--format", "markdown")
    assert code == 0 and "KV-head replication not counted" in " ".join(out.split())
    code, out, _ = cli("weights", "qwen3-30b-a3b", "--tp", "8", "--format", "markdown")
    assert code == 0 and "KV-head replication" not in " ".join(out.split())


def test_the_plans_replication_note_is_in_the_json(cli, monkeypatch):
    # Bamba-9B has 8 KV heads; without a per-module table (_without_bamba_table) at TP 16 kvplan's own plan splits
    # the k/v projections evenly and says so. `estimate` printed that line only in its text; the JSON carries it in
    # model.weights.notes (as `kvplan weights` does in weights.notes); at TP 8 (not above the KV heads) there is
    # nothing to say.
    import json

    _without_bamba_table(monkeypatch)

    args = ("estimate", "bamba-9b", "--gpu", "h100", "--context", "8k", "--format", "json")
    code, out, err = cli(*args, "--tp", "16")
    assert code == 0, err
    notes = json.loads(out)["model"]["weights"]["notes"]
    assert [n for n in notes if n.startswith("KV-head replication not counted: at TP 16")]
    code, out, err = cli(*args, "--tp", "8")
    assert code == 0, err
    assert not [n for n in json.loads(out)["model"]["weights"]["notes"] if "KV-head replication" in n]
    code, out, err = cli("weights", "bamba-9b", "--tp", "16", "--format", "json")
    assert code == 0, err
    assert [n for n in json.loads(out)["weights"]["notes"] if n.startswith("KV-head replication not counted")]
