"""Checkpoints whose quantized linears are in more than one format, sized module by module (configs/quant_mixed.py,
configs/weight_mixed.py).

Real configs:
- tests/data/modelopt_published/nemotron-3.5-lightning-30b-a3b-nvfp4.config.json and its hf_quant_config.json (gzipped,
  byte for byte otherwise: 928 KB of quantized_layers), HF repo nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4,
  copied from ai-dynamo/aiconfigurator@095f58a51c4ca8e61b66ec108d86f223f8d559ce
  aic-core/src/aiconfigurator_core/model_configs/nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4_*.json.
  quant_algo MIXED_PRECISION: experts, shared experts and the LM head W4A16_NVFP4, Mamba in_proj / out_proj FP8,
  attention, embeddings, conv1d and routers excluded.
- tests/data/mixed_formats/deepseek-v4-flash-nvfp4-fp8.config.json, HF repo RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8, from
  ai-dynamo/aiconfigurator@5d4aa2df64e4b2e2d14d6b9f129fcf941c491af8 (RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8_config.json):
  compressed-tensors config groups FP8 block (attention) and NVFP4 (ffn gate/up/down_proj).
Every figure below is worked by hand from the config and the layouts vLLM 0.34 modelopt.py creates (module doc of
configs/quant_mixed.py), not read from kvplan.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from kvplan_inprocess import estimate_json

DATA = Path(__file__).resolve().parent / "data"
LIGHTNING = DATA / "modelopt_published" / "nemotron-3.5-lightning-30b-a3b-nvfp4"


def _weights(path) -> dict:
    return estimate_json(str(path), "--format", "json")["model"]


def _lightning(tmp_path, table=None) -> Path:
    folder = tmp_path / "lightning"
    folder.mkdir()
    shutil.copy(f"{LIGHTNING}.config.json", folder / "config.json")
    quant = gzip.decompress(Path(f"{LIGHTNING}.hf_quant_config.json.gz").read_bytes())
    if table is not None:
        doc = json.loads(quant)
        table(doc["quantization"]["quantized_layers"])
        quant = json.dumps(doc).encode()
    (folder / "hf_quant_config.json").write_bytes(quant)
    return folder


# Nemotron-3.5-Lightning by hand: hidden 2688, vocab 131072, 52 layers = 23 Mamba, 23 MoE, 6 attention
H, V = 2688, 131072
# MoE layer: 128 experts of up_proj + down_proj (relu2, no gate), 1856 wide; a shared expert 3712 wide
EXPERTS = 23 * 128 * 2 * H * 1856  # 29,374,808,064
SHARED = 23 * 2 * H * 3712  # 458,981,376
HEAD = V * H  # 352,321,536 (tie_word_embeddings false)
W4A16 = EXPERTS + SHARED + HEAD  # 30,186,110,976
W4A16_TENSORS = 23 * 128 * 2 + 23 * 2 + 1  # 5,935: one float32 weight_scale_2 each, no input_scale
# Mamba mixer: in_proj 2688 -> 2 x 4096 (64 heads x 64) + 2 x 8 groups x 128 state + 64 heads; out_proj 4096 -> 2688
FP8 = 23 * (H * (2 * 4096 + 2 * 8 * 128 + 64) + 4096 * H)  # 890,265,600
FP8_TENSORS = 23 * 2  # float32 weight_scale and input_scale each
# bfloat16: embeddings; attention q (32 x 128), k and v (2 x 128), o; conv1d (4096 + 2 x 8 x 128 channels x 4 + bias),
# A_log, D, dt_bias (64 each), the gated norm (4096); 52 layer norms and the final norm; routers (128 x 2688 + a
# 128 bias)
PLAIN = (V * H + 6 * (H * 4096 + 2 * H * 256 + 4096 * H) + 23 * (6144 * 4 + 6144 + 3 * 64 + 4096)
         + 53 * H + 23 * (128 * H + 128))  # 501,563,712


def test_modelopt_mixed_precision_sizes_each_module_in_its_own_format(tmp_path):
    model = _weights(_lightning(tmp_path))
    expected = (W4A16 * (0.5 + 1 / 16) + W4A16_TENSORS * 4  # uint8 [out, in/2] + F8_E4M3 per 16 + weight_scale_2
                + FP8 * 1 + FP8_TENSORS * 8  # F8_E4M3 + weight_scale + input_scale
                + PLAIN * 2)
    assert expected == 18_873_104_556
    assert model["param_count"] == W4A16 + FP8 + PLAIN
    assert model["weight_bytes"] == expected
    note = " ".join(model["weights"]["notes"])
    assert "30,186,110,976 weights as W4A16_NVFP4" in note and "890,265,600 weights as FP8" in note
    # attention is excluded, so no k_proj holds ModelOpt's k_scale: said, not counted
    assert "KV-cache scales of 6 attention layers" in note


def test_an_algo_kvplan_has_not_read_is_refused_naming_the_module(tmp_path):
    def per_channel(table):
        table["backbone.layers.0.mixer.in_proj"] = {"quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}

    model = _weights(_lightning(tmp_path, per_channel))
    assert not model["weight_bytes"]
    assert any("'backbone.layers.0.mixer.in_proj' quant_algo 'FP8_PER_CHANNEL_PER_TOKEN'" in n
               for n in model["weights"]["notes"])


def test_an_entry_naming_no_module_of_the_count_is_refused(tmp_path):
    def renamed(table):
        table["backbone.layers.0.mixer.in_proj_fused"] = table.pop("backbone.layers.0.mixer.in_proj")

    model = _weights(_lightning(tmp_path, renamed))
    assert not model["weight_bytes"]
    assert any("'backbone.layers.0.mixer.in_proj_fused' names no module" in n for n in model["weights"]["notes"])


def test_experts_split_across_formats_are_refused(tmp_path):
    def one_expert_fp8(table):
        table["backbone.layers.1.mixer.experts.127.up_proj"] = {"quant_algo": "FP8"}

    model = _weights(_lightning(tmp_path, one_expert_fp8))
    assert not model["weight_bytes"]
    assert any("routed experts of layers.1.mixer are not all in one format" in n for n in model["weights"]["notes"])


def test_compressed_tensors_groups_whose_targets_name_no_module_are_refused():
    # RedHatAI's NVFP4 group targets ffn.(gate|up|down)_proj; the DeepSeek-V4 checkpoints kvplan's count follows name
    # the experts ffn.experts.E.w1 / w2 / w3 (configs/weight_tables/mla.py), so which modules are NVFP4 is not known
    model = _weights(DATA / "mixed_formats" / "deepseek-v4-flash-nvfp4-fp8.config.json")
    assert not model["weight_bytes"]
    assert any("target 're:.*ffn.*(gate|up|down)_proj$' matches no module" in n for n in model["weights"]["notes"])


def _qwen3_moe(quant: dict) -> dict:
    return {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 256,
            "intermediate_size": 512, "moe_intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_experts": 8,
            "num_experts_per_tok": 2, "vocab_size": 1000, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "max_position_embeddings": 4096, "quantization_config": quant}


def test_compressed_tensors_groups_of_different_formats(tmp_path):
    # constructed on the shape of unsloth/Qwen3.6-35B-A3B-NVFP4-Fast's groups (an FP8 channel group for attention and
    # the head, NVFP4 for re:.*mlp.experts.*), on a small Qwen3-MoE; routers (mlp.gate) stay bfloat16
    fp8 = {"num_bits": 8, "type": "float", "strategy": "channel"}
    nvfp4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
    quant = {"quant_method": "compressed-tensors", "format": "mixed-precision", "ignore": [],
             "config_groups": {
                 "group_0": {"format": "float-quantized", "weights": fp8,
                             "targets": ["re:.*self_attn.(q|k|v|o)_proj$", "lm_head"]},
                 "group_1": {"format": "nvfp4-pack-quantized", "weights": nvfp4, "input_activations": nvfp4,
                             "targets": ["re:.*mlp.experts.*"]}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_qwen3_moe(quant)))
    model = _weights(path)
    attn = 256 * 256 + 2 * 256 * 128 + 256 * 256  # q (4 x 64), k and v (2 x 64), o: per layer
    experts = 8 * 3 * 256 * 128  # per layer
    head = 1000 * 256
    plain = 1000 * 256 + 2 * (2 * 64 + 2 * 256 + 8 * 256) + 256  # embeddings; q/k norms, layer norms, router; norm
    fp8_bytes = (2 * attn + head) * 1 + 4 * (2 * (256 + 128 + 128 + 256) + 1000)  # + a float32 scale per output row
    nvfp4_bytes = 2 * experts * (0.5 + 1 / 16) + 2 * 8 * 3 * 8  # + weight_global_scale and input_global_scale each
    assert model["param_count"] == 2 * attn + head + 2 * experts + plain
    assert model["weight_bytes"] == fp8_bytes + nvfp4_bytes + plain * 2


def test_a_group_size_that_is_not_a_number_is_refused_in_one_line(tmp_path):
    # a quantized_layers entry whose group_size is a JSON list (or object) was hashed as a table key: "internal
    # error: TypeError: unhashable type" (a fuzz of the real Lightning files); it is now read as any other
    # group_size the format does not take: one line naming the module
    from kvplan_inprocess import refused_line

    name = "nemotron-3.5-lightning-30b-a3b-nvfp4"
    published = Path(__file__).resolve().parent / "data" / "modelopt_published"
    config = json.loads((published / f"{name}.config.json").read_text(encoding="utf-8"))
    quant = json.loads(gzip.open(published / f"{name}.hf_quant_config.json.gz").read())
    table = quant["quantization"]["quantized_layers"]
    first = next(k for k, v in table.items() if v.get("quant_algo") == "W4A16_NVFP4")
    for odd in ([1, 2], {"a": 1}):
        table[first]["group_size"] = odd
        folder = tmp_path / f"case{len(str(odd))}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        (folder / "hf_quant_config.json").write_text(json.dumps(quant), encoding="utf-8")
        line = refused_line(str(folder), "--engine", "vllm", "--gpu", "h100")
        assert repr(first) in line and "group_size" in line
