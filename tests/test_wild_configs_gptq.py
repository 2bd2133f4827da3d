"""Real GPTQ configs from the sixth sweep (docs/models.md "Sweep 6"): TheBloke's AutoGPTQ checkpoints of 2023, each a
single model.safetensors whose Git LFS pointer gives the file's size (the tensors' bytes, an 8-byte length and the
JSON header). Each expected figure is counted by hand from the config and AutoGPTQ's QuantLinear
(auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py: qweight int32 [in // 32 * bits, out], qzeros int32
[ceil(in / g), out // 32 * bits], scales float16 [ceil(in / g), out], g_idx int32 [in], and a float16 bias [out],
zeros, which AutoGPTQ up to 0.7.1 adds to every quantized linear; group_size -1 is g = in) and checked against the
file's size: the file holds the hand count, the zero biases and a header of under 150 B a tensor.

tests/data/configs/:
- mythomax-l2-13b-gptq-8bit-g-1.json: TheBloke/MythoMax-L2-13B-GPTQ's branch gptq-8bit--1g-actorder_True as the
  public repo Barksdale27/1 holds it (commit cf34829aabf688565881aa4534c2aca264cdd79a, config.json unchanged;
  model.safetensors' LFS pointer: size 13,361,903,336)
- genz-70b-gptq-3bit-g-1.json: TheBloke/Genz-70b-GPTQ's 3-bit, group -1 branch as itdevwu/Genz-70b-GPTQ holds it
  (commit a28238b0df4895382f9cd2675eaf36e7dbfb012a; model.safetensors: size 26,774,982,616)

- qwen-vl-chat-int4.json: Qwen/Qwen-VL-Chat-Int4's config.json as the public repo x1ngzai/Qwen-VL-Chat-Int4 holds it
  (commit 1cd721a27dd000fc4cf688c6ad58e614da1d600d, unchanged; its model.safetensors.index.json: total_size
  9,731,786,240, 1,461 tensors, 594 of them under transformer.visual)

tests/data/quantize_config/wizard-vicuna-30b-gptq-4bit-128g/: config.json and quantize_config.json of
TheBloke/Wizard-Vicuna-30B-Uncensored-GPTQ's 4-bit, group 128 branch before it moved the quantization into
config.json, as CesarChaMal/Wizard-Vicuna-30B-Uncensored-GPTQ holds them (commit
e249a768b706f3324562ddf1b5187619f5961e89, both unchanged; gptq_model-4bit-128g.safetensors: size 17,554,104,608).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.kvplan_inprocess import kvplan

DATA = Path(__file__).resolve().parent / "data"
CONFIGS = DATA / "configs"
WIZARD = DATA / "quantize_config" / "wizard-vicuna-30b-gptq-4bit-128g"


def _weights(path) -> dict:
    out = kvplan("weights", str(path), "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["weights"]


def _llama_gptq(hidden, inter, layers, kv_out, vocab, bits, group, float_bytes=2):
    """(bytes, output rows, tensors) of a Llama GPTQ checkpoint by hand, without the zero biases: q / o hidden ->
    hidden, k / v hidden -> kv_out, gate / up hidden -> inter, down inter -> hidden."""
    linears = [(hidden, hidden), (hidden, kv_out), (hidden, kv_out), (hidden, hidden),
               (hidden, inter), (hidden, inter), (inter, hidden)]
    layer = 2 * hidden * float_bytes  # input_layernorm, post_attention_layernorm
    for n_in, n_out in linears:
        g = n_in if group == -1 else group
        layer += (n_in // 32 * bits) * n_out * 4  # qweight
        layer += -(-n_in // g) * (n_out // 32 * bits) * 4  # qzeros
        layer += -(-n_in // g) * n_out * 2  # scales
        layer += n_in * 4  # g_idx
    rows = layers * sum(n_out for _, n_out in linears)
    tensors = layers * (5 * len(linears) + 2) + 3  # + embed_tokens, norm, lm_head
    return layers * layer + 2 * vocab * hidden * float_bytes + hidden * float_bytes, rows, tensors


def _check_file(file_bytes, hand, rows, tensors):
    # the file: the hand count, AutoGPTQ's zero float16 biases (2 B an output row) and the header
    header = file_bytes - hand - 2 * rows
    assert 8 < header < 150 * tensors


def test_gptq_group_minus_one_counts_each_rows_scale_and_zero():
    # MythoMax-L2-13B 8-bit, group -1: one group of all inputs per output row, a float16 scale and an 8-bit zero
    # point (qzeros int32 [1, out // 4]) per row: 3 B; 53,248 output rows a layer (4 x 5,120 + 2 x 13,824 + 5,120)
    hand, rows, tensors = _llama_gptq(5120, 13824, 40, 5120, 32000, 8, -1)
    # by hand: a layer's 317,194,240 weights at 1 B, 53,248 rows x 3 B, 44,544 g_idx x 4 B, two norms 20,480 B;
    # embeddings and head 2 x 32,000 x 5,120 x 2 B, the final norm 10,240 B
    assert hand == 40 * (317_194_240 + 53_248 * 3 + 44_544 * 4 + 20_480) + 655_360_000 + 10_240 == 13_357_475_840
    _check_file(13_361_903_336, hand, rows, tensors)  # header 167,656 B for 1,483 tensors
    w = _weights(CONFIGS / "mythomax-l2-13b-gptq-8bit-g-1.json")
    # before: the per-row scales and zero points were left out (2,129,920 rows x 3 B = 6,389,760 B under)
    assert w["total_bytes"] == hand
    assert any("zero float16 biases" in n for n in w["notes"])


def test_gptq_three_bit_rows_are_a_fraction_of_a_byte_each():
    # GenZ 70B 3-bit, group -1 (Llama 2 70B: 8 KV heads of 128): 2 + 3/8 B an output row, 83,968 rows a layer
    hand, rows, tensors = _llama_gptq(8192, 28672, 80, 1024, 32000, 3, -1)
    weights = 8192 * (2 * 8192 + 2 * 1024) + 3 * 8192 * 28672
    assert weights == 855_638_016
    layer = weights * 3 // 8 + 83_968 * 19 // 8 + (6 * 8192 + 28672) * 4 + 2 * 8192 * 2
    assert hand == 80 * layer + 2 * 32000 * 8192 * 2 + 8192 * 2 == 26_761_211_904
    _check_file(26_774_982_616, hand, rows, tensors)  # header 335,832 B for 2,963 tensors
    # before: 26,745,257,984 (80 x 83,968 rows x 2.375 B = 15,953,920 B under)
    assert _weights(CONFIGS / "genz-70b-gptq-3bit-g-1.json")["total_bytes"] == hand


def test_autogptq_quantize_config_beside_config_json_is_read(tmp_path):
    # Wizard-Vicuna-30B 4-bit, group 128: config.json names no quantization (transformers 4.30), AutoGPTQ's
    # quantize_config.json beside it does. By hand: 535,035,904 weights a layer at 1/2 + 2.5/128 B
    # (277,967,872 B), 57,856 g_idx x 4 B, two norms; embeddings and head 2 x 32,000 x 6,656 x 2 B
    hand, rows, tensors = _llama_gptq(6656, 17920, 60, 6656, 32000, 4, 128)
    assert hand == 60 * (277_967_872 + 57_856 * 4 + 2 * 6656 * 2) + 851_968_000 + 6656 * 2 == 17_545_536_512
    _check_file(17_554_104_608, hand, rows, tensors)  # header 273,696 B for 2,223 tensors
    w = _weights(WIZARD / "config.json")
    # before: sized as float16, 32,528,943,616 parameters x 2 B = 65,057,887,232 B (+271%)
    assert w["total_bytes"] == hand
    assert w["quantization"] == "GPTQ int4, group 128"
    # the folder reads the same
    assert _weights(WIZARD)["total_bytes"] == hand
    # a quantize_config.json of another layout (no bits and desc_act, no quant_method) is not read
    other = tmp_path / "other"
    shutil.copytree(WIZARD, other)
    (other / "quantize_config.json").write_text(json.dumps({"w_bit": 4, "q_group_size": 128}))
    assert _weights(other / "config.json")["total_bytes"] == 65_057_887_232
    # config.json's own quantization_config wins over the file
    raw = json.loads((WIZARD / "config.json").read_text())
    raw["quantization_config"] = {"quant_method": "gptq", "bits": 8, "group_size": 128, "desc_act": False}
    (other / "config.json").write_text(json.dumps(raw))
    (other / "quantize_config.json").write_text((WIZARD / "quantize_config.json").read_text())
    assert _weights(other / "config.json")["quantization"] == "GPTQ int8, group 128"


def test_qwen_vl_tower_is_named_as_not_counted():
    # Qwen-VL-Chat-Int4: the Qwen-7B text model in GPTQ int4 and, under transformer.visual, its ViT and resampler in
    # float16 (visual.py: conv1 1,664 x 3 x 14 x 14; a 256 x 1,664 positional embedding; ln_pre; 48 blocks of ln_1,
    # in_proj 1,664 -> 4,992 and out_proj 1,664 -> 1,664 with biases, ln_2, c_fc 1,664 -> 8,192 and c_proj 8,192 ->
    # 1,664 with biases; attn_pool: pos_embed and query 256 x 4,096, kv_proj 1,664 -> 4,096, a 4,096-wide
    # MultiheadAttention with biases, ln_q, ln_kv; ln_post over 4,096 and proj 4,096 x 4,096)
    block = 2 * 2 * 1664 + (1664 * 4992 + 4992) + (1664 * 1664 + 1664) + (1664 * 8192 + 8192) + (8192 * 1664 + 1664)
    pool = 2 * 256 * 4096 + 1664 * 4096 + (4096 * 3 * 4096 + 3 * 4096) + (4096 * 4096 + 4096) + 2 * 2 * 4096
    tower = 1664 * 3 * 14 * 14 + 256 * 1664 + 2 * 1664 + 48 * block + pool + 2 * 4096 + 4096 * 4096
    assert tower == 1_935_610_624
    # the text model as AutoGPTQ stores it (docs/models.md sweep 5: a Qwen-7B-Chat-Int4 index totals exactly this):
    # a layer's c_attn 4,096 -> 12,288, c_proj 4,096 -> 4,096, w1 / w2 4,096 -> 11,008, mlp.c_proj 11,008 -> 4,096 at
    # 1/2 + 2.5/128 B a weight, g_idx, float16 biases (c_attn's and AutoGPTQ's zero ones) and two norms; wte and
    # lm_head 151,936 x 4,096, ln_f
    weights = 4096 * 12288 + 4096 * 4096 + 2 * 4096 * 11008 + 11008 * 4096
    layer = weights // 2 + weights // 128 * 5 // 2 + (4 * 4096 + 11008) * 4 + (12288 + 2 * 4096 + 2 * 11008) * 2 \
        + 2 * 4096 * 2
    text = 32 * layer + 2 * 151936 * 4096 * 2 + 4096 * 2
    assert text + 2 * tower == 9_731_786_240  # the index's total_size, to the byte
    w = _weights(CONFIGS / "qwen-vl-chat-int4.json")
    # SGLang 0.5.23 qwen.py skips transformer.visual.* at load: kvplan sizes the text model, without a per-module
    # count of 'qwen' as its parameter count (the layers' weights, c_attn's bias and norms, ln_f) at the GPTQ rate
    # and the embeddings at 2 B (g_idx and AutoGPTQ's zero biases not placed: 6,415,792 B under), and now says the
    # tower is left out
    quantized = 32 * (weights + 12288 + 2 * 4096) + 4096
    assert w["total_bytes"] == quantized // 128 * 133 // 2 + 2 * 151936 * 4096 * 2 == text - 6_415_792
    assert any(n.startswith("vision tower not counted: Qwen-VL's `visual` encoder") for n in w["notes"])
