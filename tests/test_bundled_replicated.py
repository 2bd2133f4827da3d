"""Bundled totals that differ from the config estimate by an explained amount (the MTP module estimated in them,
the safetensors files' headers) keep what vLLM 0.34.0 holds whole on every TP rank whole (weights/estimate.py
with_config_replicated); the figures are worked out from the configs' shapes (model_specs/*.json) and the
bundled totals (model_specs/weights.json), with the estimate's conventions: FP8 128 x 128 block scales at
4 B / 16,384 weights, BF16 norms, routers and score-correction biases."""

from __future__ import annotations

import json
from dataclasses import replace

from kvplan.sources import load_model
from kvplan.weights.estimate import with_config_replicated
from kvplan.weights.load import from_bundled
from kvplan_inprocess import kvplan

# per MLA layer (hidden 7,168, q_lora_rank 1,536, kv_lora_rank 512 + rope 64), whole on every rank:
#   q_a_proj 1,536 x 7,168 + kv_a_proj_with_mqa 576 x 7,168 = 15,138,816 FP8 weights + 15,138,816 / 4,096 = 3,696 B
#   of scales; norms 2 x 7,168 + q_a_layernorm 1,536 + kv_a_layernorm 512 = 16,384 x 2 B = 32,768 B
LAYER_WHOLE = 15_138_816 + 3_696 + 32_768  # 15,175,280 B


def _per_gpu(name: str, tp: int) -> int:
    out = kvplan("weights", name, "--tp", str(tp), "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["weight_bytes_per_gpu"]


def test_deepseek_v3_bundled_total_with_mtp_and_headers_keeps_mla_projections_whole():
    # whole: 61 layers x 15,175,280 + 58 MoE routers x (256 x 7,168 + 256) x 2 B + final norm 7,168 x 2 B
    whole = 61 * LAYER_WHOLE + 58 * (256 * 7_168 + 256) * 2 + 7_168 * 2
    assert whole == 925_692_080 + 212_890_624 + 14_336 == 1_138_597_040
    # MTP layer 61 (deepseek_mtp.py: a DeepseekV2DecoderLayer, eh_proj, 3 norms, embedding and head copies):
    # decoder: attention q_a 11,010,048 + q_a_norm 1,536 + q_b 1,536 x 128 x 192 = 37,748,736 + kv_a 4,128,768
    #   + kv_a_norm 512 + kv_b 512 x 128 x 256 = 16,777,216 + o_proj 128 x 128 x 7,168 = 117,440,512: 187,107,328;
    #   experts 257 x 3 x 7,168 x 2,048 = 11,318,329,344; gate 1,835,008 + bias 256; 2 norms 14,336:
    #   11,507,286,272 (DeepSeek's README_WEIGHTS: 11.5B) at 1 + 1/4,096 B = + 2,809,396 (floor)
    # eh_proj 2 x 7,168 x 7,168 x 2 B = 205,520,896; norms 3 x 7,168 x 2 = 43,008; copies 2 x 129,280 x 7,168 x 2 B
    mtp = 11_507_286_272 + 2_809_396 + 205_520_896 + 43_008 + 2 * 129_280 * 7_168 * 2
    assert mtp == 15_422_375_732
    # 688,586,727,753 (bundled) - 673,150,575,280 (estimate) - mtp = 13,776,741 B left, under 0.01% of the total:
    # the files' headers
    assert 688_586_727_753 - 673_150_575_280 - mtp == 13_776_741 <= 688_586_727_753 // 10_000
    # TP 8: ceil((688,586,727,753 - mtp - whole) / 8) + whole = 84,003,219,373 + 1,138,597,040 (before: an even
    # split, ceil(673,164,352,021 / 8) = 84,145,544,003)
    assert _per_gpu("deepseek-v3", 8) == 84_003_219_373 + 1_138_597_040 == 85_141_816_413
    model = load_model("deepseek-v3")
    from kvplan.engines.vllm_load import checkpoint_weights

    record = checkpoint_weights(model)
    assert record.replicated_bytes == whole and record.mtp_estimated_bytes == mtp
    assert any(n.startswith("assumed to hold the modules") and "13,776,741 B" in n for n in record.notes)


def test_kimi_k2_bundled_total_with_headers_keeps_mla_projections_whole():
    # Kimi-K2 (61 layers, the first dense, 384 experts, no MTP): 61 x 15,175,280 + 60 x (384 x 7,168 + 384) x 2 B
    # + 7,168 x 2 B
    whole = 61 * LAYER_WHOLE + 60 * (384 * 7_168 + 384) * 2 + 7_168 * 2
    assert whole == 1_256_053_936
    # 1,029,190,981,272 - estimate 1,029,173,196,976 = 17,784,296 B of headers (< 102,919,098, 0.01%)
    # TP 8: (1,029,190,981,272 - whole) / 8 = 128,491,865,917 + whole (before: 128,648,872,659)
    assert (1_029_190_981_272 - whole) % 8 == 0
    assert _per_gpu("kimi-k2", 8) == (1_029_190_981_272 - whole) // 8 + whole == 129_747_919_853


def test_an_unexplained_difference_is_still_split_evenly():
    model = load_model("kimi-k2")
    bundled = from_bundled("kimi-k2")
    # 0.02% above the estimate: more than the files' headers
    more = replace(bundled, total_bytes=model.weight_bytes + model.weight_bytes // 5_000)
    assert with_config_replicated(more, model).replicated_bytes == 0
    # below the estimate, or an index total_size (tensor bytes, no headers) 1 B off: not explained
    assert with_config_replicated(replace(bundled, total_bytes=model.weight_bytes - 1), model).replicated_bytes == 0
    index = replace(bundled, source="index", total_bytes=model.weight_bytes + 1)
    assert with_config_replicated(index, model).replicated_bytes == 0
    assert with_config_replicated(replace(index, total_bytes=model.weight_bytes), model).replicated_bytes == 1_256_053_936


def test_gguf_names_of_the_mla_projections_the_indexer_and_o_proj_bias_are_held_whole():
    # one DeepSeek-V3.2-shaped layer (hidden 64, q_lora_rank 32, kv_lora_rank 16 + rope 8, 4 heads of 24, an indexer
    # of 2 heads x 16) named as llama.cpp's gguf-py 0.19.0 writes it (constants.py TENSOR_NAMES), F16 at 2 B, norms
    # and the bias F32 at 4 B
    from kvplan.capacity.weights import stage_weight_bytes
    from kvplan.weights.roles import TensorEntry, fold

    shapes = {
        "blk.0.attn_q_a.weight": ((32, 64), 2),  # q_a_proj: 4,096 B, whole
        "blk.0.attn_q_a_norm.weight": ((32,), 4),  # 128 B, whole (a norm)
        "blk.0.attn_kv_a_mqa.weight": ((24, 64), 2),  # kv_a_proj_with_mqa: 3,072 B, whole
        "blk.0.attn_q_b.weight": ((96, 32), 2),  # 6,144 B, split
        "blk.0.indexer.attn_q_b.weight": ((32, 32), 2),  # indexer wq_b: 2,048 B, whole
        "blk.0.indexer.attn_k.weight": ((16, 64), 2),  # indexer wk: 2,048 B, whole
        "blk.0.indexer.proj.weight": ((2, 64), 2),  # indexer weights_proj: 256 B, whole
        "blk.0.indexer.k_norm.weight": ((16,), 4),  # 64 B, whole (a norm)
        "blk.0.attn_output.weight": ((64, 64), 2),  # o_proj: 8,192 B, split
        "blk.0.attn_output.bias": ((64,), 4),  # o_proj's bias (RowParallelLinear): 256 B, whole
    }
    entries = []
    for name, (shape, width) in shapes.items():
        elements = 1
        for d in shape:
            elements *= d
        entries.append(TensorEntry(name, "F16" if width == 2 else "F32", elements, elements * width, shape))
    w = fold(entries, source="gguf", origin="m.gguf", quantization="", files=1)
    # TP 4: whole 4,096 + 128 + 3,072 + 2,048 + 2,048 + 256 + 64 + 256 = 11,968; split (6,144 + 8,192) / 4 = 3,584
    # (before: only the two norms whole, 192 + the other 26,112 B / 4 = 6,720)
    assert stage_weight_bytes(w, 1, tp=4) == [11_968 + 3_584] == [15_552]
