"""Per-output-row weight scales of row-parallel modules named otherwise than o_proj / down_proj (weights.roles
is_row_parallel): whole on every TP rank, per family, as vLLM 0.34 and SGLang 0.5.23 load a channel scale into a
RowParallelLinear (output_size_per_partition = output_size; ChannelQuantScaleParameter copied as it is).

Each config is a small one built here; the figures are summed by hand from the architecture's modules (transformers
5.25 modeling_gpt_neox.py, modeling_phi.py, modeling_falcon.py, modeling_persimmon.py), a compressed-tensors
"channel" checkpoint storing one int8 / FP8 byte a linear weight and one float32 scale an output row
(compressed_tensors_w8a8_int8.py / _fp8.py create_weights: ChannelQuantScaleParameter [rows, 1] float32), the rest
in bfloat16. On one GPU of TP t
kvplan's config estimate holds whole the norms, the row-parallel biases and the row-parallel scales and splits the
rest evenly (rounded up).
"""

from __future__ import annotations

import json

from tests.kvplan_inprocess import estimate_json

H, INTER, LAYERS, VOCAB, HEADS = 64, 256, 2, 1024, 4


def _channel(kind: str, head: str) -> dict:
    """compressed-tensors 8-bit per output channel, dynamic per-token activations (no input scales stored)."""
    return {"quant_method": "compressed-tensors", "format": f"{kind}-quantized", "ignore": [head],
            "config_groups": {"group_0": {"targets": ["Linear"],
                                          "weights": {"num_bits": 8, "type": kind, "strategy": "channel",
                                                      "symmetric": True, "dynamic": False},
                                          "input_activations": {"num_bits": 8, "type": kind, "strategy": "token",
                                                                "symmetric": True, "dynamic": True}}}}


def _per_gpu(tmp_path, config: dict, tp: int) -> tuple[int, int]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    d = estimate_json(str(path), "--tp", str(tp), "--gpu", "H200")
    return d["model"]["weight_bytes"], d["capacity"]["weight_bytes_per_gpu"]


def test_gpt_neox_attention_dense_and_dense_4h_to_h_scales_whole_at_tp2(tmp_path):
    # GPTNeoXForCausalLM, all linears biased: per layer attention.query_key_value 64 -> 192, attention.dense 64 -> 64,
    # mlp.dense_h_to_4h 64 -> 256, mlp.dense_4h_to_h 256 -> 64; input_layernorm and post_attention_layernorm (weight
    # and bias, 2 x 64 each); gpt_neox.embed_in and embed_out 1,024 x 64 (embed_out kept in bfloat16: ignore list);
    # final_layer_norm 2 x 64
    config = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "hidden_size": H,
              "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": INTER,
              "vocab_size": VOCAB, "max_position_embeddings": 2048, "rotary_pct": 0.25, "tie_word_embeddings": False,
              "use_parallel_residual": True, "torch_dtype": "bfloat16",
              "quantization_config": _channel("int", "embed_out")}
    int8 = LAYERS * (64 * 192 + 64 * 64 + 64 * 256 + 256 * 64)
    rows = LAYERS * (192 + 64 + 256 + 64)
    biases = LAYERS * (192 + 64 + 256 + 64)
    norms = LAYERS * 2 * 2 * 64 + 2 * 64
    total = int8 + 4 * rows + 2 * (biases + norms + 2 * VOCAB * 64)
    assert total == 368_640
    # whole on each rank: the norms, attention.dense's and dense_4h_to_h's biases (RowParallelLinear) and their 64 + 64
    # float32 scales a layer (GPT-NeoX's base_model_tp_plan makes both "rowwise": vLLM 0.34's Transformers backend
    # builds them as RowParallelLinear)
    whole = 2 * (norms + LAYERS * (64 + 64)) + 4 * LAYERS * (64 + 64)
    assert _per_gpu(tmp_path, config, 2) == (total, -(-(total - whole) // 2) + whole) == (368_640, 185_728)
    # before: the 1,024 B of those scales split, 185,216 B a GPU


def test_phi_dense_and_fc2_scales_whole_at_tp4(tmp_path):
    # PhiForCausalLM, FP8 per channel: per layer self_attn.q/k/v_proj 64 -> 64 and self_attn.dense 64 -> 64, mlp.fc1
    # 64 -> 256 and mlp.fc2 256 -> 64, all biased; one input_layernorm (weight, bias); model.final_layernorm;
    # embed_tokens and lm_head 1,024 x 64, lm_head with a 1,024 bias (kept in bfloat16: ignore list)
    config = {"model_type": "phi", "architectures": ["PhiForCausalLM"], "hidden_size": H,
              "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": INTER,
              "vocab_size": VOCAB, "max_position_embeddings": 2048, "partial_rotary_factor": 0.5,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "quantization_config": _channel("float", "lm_head")}
    fp8 = LAYERS * (4 * 64 * 64 + 64 * 256 + 256 * 64)
    rows = LAYERS * (4 * 64 + 256 + 64)
    biases = LAYERS * (4 * 64 + 256 + 64)
    norms = LAYERS * 2 * 64 + 2 * 64
    total = fp8 + 4 * rows + 2 * (biases + norms + 2 * VOCAB * 64 + VOCAB)
    assert total == 370_176
    # whole: the norms, self_attn.dense's and fc2's biases and their float32 scales (PhiConfig.base_model_tp_plan:
    # layers.*.self_attn.dense and layers.*.mlp.fc2 "rowwise"); the lm_head bias is vocabulary-parallel
    whole = 2 * (norms + LAYERS * (64 + 64)) + 4 * LAYERS * (64 + 64)
    assert _per_gpu(tmp_path, config, 4) == (total, -(-(total - whole) // 4) + whole) == (370_176, 94_272)
    # before: 93,504 B a GPU


def test_falcon_self_attention_dense_and_dense_4h_to_h_scales_whole_at_tp2(tmp_path):
    # FalconForCausalLM without multi_query (4 KV heads), parallel_attn, no biases: per layer
    # self_attention.query_key_value 64 -> 192, self_attention.dense 64 -> 64, mlp.dense_h_to_4h 64 -> 256,
    # mlp.dense_4h_to_h 256 -> 64, input_layernorm (2 x 64); transformer.word_embeddings 1,024 x 64, ln_f 2 x 64; the
    # head tied
    config = {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": H,
              "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "vocab_size": VOCAB, "multi_query": False,
              "parallel_attn": True, "bias": False, "new_decoder_architecture": False, "alibi": False,
              "tie_word_embeddings": True, "torch_dtype": "bfloat16", "quantization_config": _channel("int", "lm_head")}
    int8 = LAYERS * (64 * 192 + 64 * 64 + 64 * 256 + 256 * 64)
    rows = LAYERS * (192 + 64 + 256 + 64)
    norms = LAYERS * 2 * 64 + 2 * 64
    total = int8 + 4 * rows + 2 * (norms + VOCAB * 64)
    assert total == 234_752
    # whole: the norms and the float32 scales of self_attention.dense and dense_4h_to_h (vLLM 0.34 falcon.py
    # FalconAttention.dense, FalconMLP.dense_4h_to_h: RowParallelLinear)
    whole = 2 * norms + 4 * LAYERS * (64 + 64)
    assert _per_gpu(tmp_path, config, 2) == (total, -(-(total - whole) // 2) + whole) == (234_752, 118_272)
    # before: 117,760 B a GPU


def test_persimmon_dense_scales_whole_as_sglang_builds_it_at_tp2(tmp_path):
    # PersimmonForCausalLM (SGLang 0.5.23 persimmon.py: PersimmonAttention.dense and PersimmonMLP.dense_4h_to_h are
    # RowParallelLinear; vLLM no longer registers it): per layer self_attn.query_key_value 64 -> 192 and
    # self_attn.dense 64 -> 64, mlp.dense_h_to_4h 64 -> 256 and dense_4h_to_h 256 -> 64, all biased; q_layernorm and
    # k_layernorm over head_dim 16 and input_layernorm, post_attention_layernorm (LayerNorms: weight and bias);
    # final_layernorm; embed_tokens and an untied lm_head 1,024 x 64 (kept in bfloat16: ignore list)
    config = {"model_type": "persimmon", "architectures": ["PersimmonForCausalLM"], "hidden_size": H,
              "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": INTER,
              "vocab_size": VOCAB, "max_position_embeddings": 2048, "partial_rotary_factor": 0.5,
              "qk_layernorm": True, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "quantization_config": _channel("int", "lm_head")}
    int8 = LAYERS * (64 * 192 + 64 * 64 + 64 * 256 + 256 * 64)
    rows = LAYERS * (192 + 64 + 256 + 64)
    biases = LAYERS * (192 + 64 + 256 + 64)
    norms = LAYERS * (2 * 2 * 16 + 2 * 2 * 64) + 2 * 64
    total = int8 + 4 * rows + 2 * (biases + norms + 2 * VOCAB * 64)
    assert total == 368_896
    whole = 2 * (norms + LAYERS * (64 + 64)) + 4 * LAYERS * (64 + 64)
    assert _per_gpu(tmp_path, config, 2) == (total, -(-(total - whole) // 2) + whole) == (368_896, 185_984)
    # before: 185,472 B a GPU


def test_a_dense_scale_is_whole_only_where_the_family_builds_dense_row_parallel():
    # a tensor table (safetensors names, one float32 weight_scale [rows, 1] a quantized weight): GPT-NeoX's
    # attention.dense is row-parallel (scale whole), its mlp.dense_h_to_4h column-parallel (split); a `dense` of a
    # family without that rule (BERT's intermediate.dense, a ColumnParallelLinear in vLLM 0.34 bert.py
    # BertIntermediate) and Falcon's column-parallel query_key_value stay split with their rows
    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.weights.roles import TensorEntry, fold

    def held(names_rows: dict, family: str, tp: int) -> int:
        entries = [TensorEntry(n, "F32", rows, 4 * rows, (rows, 1)) for n, rows in names_rows.items()]
        return stage_weight_bytes(fold(entries, source="safetensors", origin="hand", quantization="", files=1,
                                       family=family), 1, tp=tp)[0]

    neox = {"gpt_neox.layers.0.attention.dense.weight_scale": 64,  # 256 B, whole
            "gpt_neox.layers.0.mlp.dense_h_to_4h.weight_scale": 256}  # 1,024 B, split
    assert held(neox, "gpt_neox", 4) == 256 + 1_024 // 4 == 512  # before: (256 + 1,024) / 4 = 320
    bert = {"encoder.layer.0.intermediate.dense.weight_scale": 256}  # 1,024 B, split
    assert held(bert, "bert", 4) == 1_024 // 4
    falcon = {"transformer.h.0.self_attention.dense.weight_scale": 64,  # 256 B, whole
              "transformer.h.0.self_attention.query_key_value.weight_scale": 192}  # 768 B, split
    assert held(falcon, "falcon", 2) == 256 + 768 // 2
    # the name alone decides nothing: the same module path is row-parallel in one family and not in another
    from kvplan.weights.roles import is_row_parallel

    assert is_row_parallel("layers.0.attention.dense", "gpt_neox")
    assert not is_row_parallel("layers.0.attention.dense", "bert")
    assert not is_row_parallel("encoder.layer.0.intermediate.dense", "gpt_neox")


def test_qwen1_w2_is_column_parallel():
    # Qwen (1): SGLang 0.5.23 qwen.py stacks mlp.w2 as shard 0 and mlp.w1 as shard 1 of gate_up_proj (a
    # MergedColumnParallelLinear); mlp.c_proj and attn.c_proj are its RowParallelLinears. A per-channel scale of w2
    # (11,008 rows, 44,032 B) splits with its rows; c_proj's (4,096 rows, 16,384 B) sits whole on each rank
    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.weights.roles import TensorEntry, fold

    rows = {"transformer.h.0.mlp.w2.weight_scale": 11_008, "transformer.h.0.mlp.w1.weight_scale": 11_008,
            "transformer.h.0.mlp.c_proj.weight_scale": 4_096}
    entries = [TensorEntry(n, "F32", r, 4 * r, (r, 1)) for n, r in rows.items()]
    record = fold(entries, source="safetensors", origin="hand", quantization="", files=1, family="qwen")
    assert stage_weight_bytes(record, 1, tp=2)[0] == 2 * 44_032 // 2 + 16_384 == 60_416  # before: 82_432
