"""Per-module tables of the Qwen3-VL, Qwen3-VL-MoE and Qwen2.5-VL text models, ERNIE 4.5 (dense and MoE) and
MiMo-7B, Granite 3 and InternLM3 (configs/weight_tables/vl.py): they add up to the parameter count, and the bytes each TP rank holds
whole are worked out here by hand from the configs (module shapes: transformers 5.25 modeling_qwen3_vl.py,
modeling_qwen3_vl_moe.py, modeling_qwen2_5_vl.py, modeling_ernie4_5.py, modeling_ernie4_5_moe.py,
modeling_granite.py, modeling_llama.py for internlm3; vLLM 0.34 mimo.py on qwen2.py; what vLLM 0.34 builds whole: the module's docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from tests.weight_table_checks import per_gpu as _per_gpu

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def _raw(name: str) -> dict:
    path = SPECS / f"{name}.json"
    return json.loads((path if path.exists() else CONFIGS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["qwen3-vl-4b", "qwen3-vl-8b", "qwen3-vl-30b-a3b", "qwen2.5-vl-7b",
                                  "alpamayo2-super-tiny", "ernie-4.5-0.3b", "ernie-4.5-21b-a3b-quoted", "mimo-7b",
                                  "internlm3-8b-instruct", "granite-speech-4.0-1b-quoted"])
def test_the_table_adds_up_to_the_parameter_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_qwen3_vl_8b_keeps_norms_and_qk_norms_whole():
    model = build_model(_raw("qwen3-vl-8b"), "qwen3-vl-8b")
    # text model: 36 layers, hidden 4,096, 32 query / 8 KV heads of 128, mlp 12,288, vocab 151,936, untied.
    # a layer: q, o 4,096 x 4,096; k, v 4,096 x 1,024; q_norm, k_norm 128 each; mlp 3 x 4,096 x 12,288; 2 norms
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 2 * 128 + 3 * 4096 * 12288 + 2 * 4096
    total = 2 * 151936 * 4096 + 4096 + 36 * layer
    assert total == 8_190_735_360 and model.param_count == total
    # whole on every TP rank: the two norms, q_norm and k_norm a layer, the final norm; BF16
    whole = 36 * (2 * 4096 + 2 * 128) + 4096
    # and the vision tower's part held whole (hand-counted in tests/test_vision_towers.py: 4,657,792 x 2 B)
    assert whole == 308_224 and model.weight_replicated_bytes == 2 * whole + model.weight_vision[2]
    assert model.weight_vision[2] == 2 * 4_657_792
    # TP 2: (16,381,470,720 - 616,448) / 2 + 616,448 = 8,191,043,584 B a GPU (308,224 B above an even split)
    # + the tower on the first stage: its whole part and half the rest (576,388,336 parameters, 4,657,792 whole)
    assert _per_gpu(model, 36, 2) == 8_191_043_584 + 2 * 4_657_792 + (2 * 576_388_336 - 2 * 4_657_792) // 2


def test_qwen3_vl_30b_a3b_keeps_norms_and_routers_whole():
    model = build_model(_raw("qwen3-vl-30b-a3b"), "qwen3-vl-30b-a3b")
    # 48 layers, hidden 2,048, 32 query / 4 KV heads of 128, 128 experts of 768, vocab 151,936, untied.
    # a layer: q, o 2,048 x 4,096; k, v 2,048 x 512; q/k norms 2 x 128; experts 128 x 3 x 2,048 x 768;
    # router mlp.gate [128, 2,048]; 2 norms
    attention = 2 * 2048 * 4096 + 2 * 2048 * 512
    layer = attention + 2 * 128 + 128 * 3 * 2048 * 768 + 128 * 2048 + 2 * 2048
    total = 2 * 151936 * 2048 + 2048 + 48 * layer
    assert total == 30_532_122_624 and model.param_count == total
    # whole: 48 x (2 norms + q/k norms + router) + the final norm = 12,793,856; BF16
    whole = 48 * (2 * 2048 + 2 * 128 + 128 * 2048) + 2048
    assert whole == 12_793_856 and model.weight_replicated_bytes == 2 * whole + model.weight_vision[2]  # + the tower (tests/test_vision_towers.py)
    # TP 4: (61,064,245,248 - 25,587,712) / 4 + 25,587,712 = 15,285,252,096 B a GPU
    # + the tower (538,631,408 parameters, 4,649,600 whole: tests/test_vision_towers.py)
    assert _per_gpu(model, 48, 4) == 15_285_252_096 + 2 * 4_649_600 + (2 * 538_631_408 - 2 * 4_649_600) // 4


def test_qwen2_5_vl_7b_flat_config_keeps_its_norms_whole():
    model = build_model(_raw("qwen2.5-vl-7b"), "qwen2.5-vl-7b")
    # a flat config (model_type qwen2_5_vl): 28 layers, hidden 3,584, 28 query / 4 KV heads of 128, mlp 18,944,
    # vocab 152,064, untied; q/k/v biases (column-parallel: split with the heads), o_proj without one
    layer = 2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512 + 3 * 3584 * 18944 + 2 * 3584
    total = 2 * 152064 * 3584 + 3584 + 28 * layer
    assert total == 7_615_616_512 and model.param_count == total
    whole = 28 * 2 * 3584 + 3584
    assert whole == 204_288 and model.weight_replicated_bytes == 2 * whole + model.weight_vision[2]  # + the tower (tests/test_vision_towers.py)
    # TP 2: (15,231,233,024 - 408,576) / 2 + 408,576 = 7,615,820,800 B a GPU
    # + the tower (676,550,144 parameters, 1,673,984 whole: tests/test_vision_towers.py)
    assert _per_gpu(model, 28, 2) == 7_615_820_800 + 2 * 1_673_984 + (2 * 676_550_144 - 2 * 1_673_984) // 2


def test_ernie_4_5_moe_keeps_norms_routers_and_score_biases_whole():
    model = build_model(_raw("ernie-4.5-21b-a3b-quoted"), "ernie-4.5-21b-a3b")
    # 28 layers, hidden 2,560, 20 query / 4 KV heads of 128 (head_dim null: 2,560 / 20), no biases; layer 0 a
    # dense mlp of 12,288; layers 1-27 (moe_layer_start_index 1, end null: the last) 64 experts of 1,536, router
    # [64, 2,560], e_score_correction_bias [1, 64], shared_experts of 2 x 1,536; vocab 103,424 tied
    attention = 2 * 2560 * 2560 + 2 * 2560 * 512
    moe = 64 * 3 * 2560 * 1536 + 64 * 2560 + 64 + 3 * 2560 * 3072
    total = 103424 * 2560 + 2560 + 28 * (attention + 2 * 2560) + 3 * 2560 * 12288 + 27 * moe
    assert total == 21_825_437_888 and model.param_count == total
    # whole: 28 x 2 norms + the final norm, 27 routers with their score biases
    whole = 28 * 2 * 2560 + 2560 + 27 * (64 * 2560 + 64)
    assert whole == 4_571_328 and model.weight_replicated_bytes == 2 * whole
    # TP 2: (43,650,875,776 - 9,142,656) / 2 + 9,142,656 = 21,830,009,216 B a GPU
    assert _per_gpu(model, 28, 2) == 21_830_009_216


def test_ernie_4_5_dense_and_mimo_keep_their_norms_whole():
    ernie = build_model(_raw("ernie-4.5-0.3b"), "ernie-4.5-0.3b")
    # 18 layers of hidden 1,024: two norms each, and the final norm (no q/k norms, no biases)
    assert ernie.weight_replicated_bytes == 2 * (18 * 2 * 1024 + 1024) == 75_776
    mimo = build_model(_raw("mimo-7b"), "mimo-7b")
    # the target model's 36 layers of hidden 4,096 (the MTP layer is the drafter's); q/k/v biases split with the
    # heads, o_proj has none
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 4096 + 2 * 1024 + 3 * 4096 * 11008 + 2 * 4096
    total = 2 * 151680 * 4096 + 4096 + 36 * layer
    assert total == 7_622_619_136 and mimo.param_count == total
    assert mimo.weight_replicated_bytes == 2 * (36 * 2 * 4096 + 4096) == 598_016
    # TP 2: (15,245,238,272 - 598,016) / 2 + 598,016 = 7,622,918,144 B a GPU
    assert _per_gpu(mimo, 36, 2) == 7_622_918_144


def test_internlm3_and_granite_keep_their_norms_whole():
    model = build_model(_raw("internlm3-8b-instruct"), "internlm3-8b")
    # 48 layers, hidden 4,096, 32 query / 2 KV heads of 128, mlp 10,240, vocab 128,512, untied, no biases
    layer = 2 * 4096 * 4096 + 2 * 4096 * 256 + 3 * 4096 * 10240 + 2 * 4096
    total = 2 * 128512 * 4096 + 4096 + 48 * layer
    assert total == 8_804_241_408 and model.param_count == total
    assert model.weight_replicated_bytes == 2 * (48 * 2 * 4096 + 4096) == 794_624
    # TP 2: (17,608,482,816 - 794,624) / 2 + 794,624 = 8,804,638,720 B a GPU
    assert _per_gpu(model, 48, 2) == 8_804_638_720
    # Granite Speech's text model (granite): 40 layers of hidden 2,048, two norms each, and the final norm; BF16
    speech = build_model(_raw("granite-speech-4.0-1b-quoted"), "granite-speech")
    assert speech.weight_replicated_bytes == 2 * (40 * 2 * 2048 + 2048) == 331_776


def test_biases_the_counters_leave_out_get_no_table():
    # ERNIE's use_bias, InternLM3's qkv_bias / bias put biases count_params does not count:
    # no table (an even split), rather than a table that agrees with a wrong count
    def modules(raw: dict) -> list:
        family, f, _, layers, dims = _read(raw, "edited")
        return table(f, layers, dims)

    for name, key in (("ernie-4.5-0.3b", "use_bias"), ("internlm3-8b-instruct", "qkv_bias"),
                      ("internlm3-8b-instruct", "bias")):
        assert modules(_raw(name)) and modules(dict(_raw(name), **{key: True})) == []
    # Granite's mlp_bias (GraniteMLP: gate/up/down_proj biased) is counted: the table holds the 40 layers' biases,
    # 2 x 4,096 (gate, up) + 2,048 (down) each
    raw = _raw("granite-speech-4.0-1b-quoted")
    plain = sum(m.weight + m.other for m in modules(raw))
    raw["text_config"] = dict(raw["text_config"], mlp_bias=True)
    assert sum(m.weight + m.other for m in modules(raw)) == plain + 40 * (2 * 4096 + 2048)


def test_qwen3_vl_moe_reads_mlp_only_layers_and_decoder_sparse_step():
    # transformers 5.25 Qwen3VLMoeTextDecoderLayer (and vLLM 0.34 qwen3_moe.py Qwen3MoeDecoderLayer): a layer in
    # mlp_only_layers, or with (i + 1) % decoder_sparse_step != 0, holds a dense mlp of intermediate_size
    raw = _raw("qwen3-vl-30b-a3b")
    raw["text_config"] = dict(raw["text_config"], mlp_only_layers=[0], decoder_sparse_step=2)
    model = build_model(raw, "qwen3-vl-30b-a3b-edited")
    # sparse layers: i = 1, 3, ..., 47 (24 of them), none in mlp_only_layers; dense: the other 24, of 6,144
    attention = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 2 * 2048
    sparse = 128 * 3 * 2048 * 768 + 128 * 2048
    dense = 3 * 2048 * 6144
    total = 2 * 151936 * 2048 + 2048 + 48 * attention + 24 * sparse + 24 * dense
    assert total == 16_936_286_208 and model.param_count == total
    # whole: norms and q/k norms of 48 layers, 24 routers, the final norm
    assert model.weight_replicated_bytes == 2 * (48 * (2 * 2048 + 2 * 128) + 24 * 128 * 2048 + 2048) \
        + model.weight_vision[2]  # + the tower (tests/test_vision_towers.py)


def test_ernie_4_5_without_tie_word_embeddings_is_tied():
    # Ernie4_5Config's tie_word_embeddings is True (transformers 5.25 configuration_ernie4_5.py): a config that
    # leaves it out shares the embedding matrix with the head
    raw = _raw("ernie-4.5-0.3b")
    del raw["tie_word_embeddings"]
    model = build_model(raw, "ernie-4.5-0.3b-untold")
    # 18 layers: q 1,024 x 2,048 (16 heads of 128), k, v 1,024 x 256, o 2,048 x 1,024, mlp 3 x 1,024 x 3,072,
    # 2 norms; the embeddings once (103,424 x 1,024) and the final norm
    layer = 1024 * 2048 + 2 * 1024 * 256 + 2048 * 1024 + 3 * 1024 * 3072 + 2 * 1024
    assert model.param_count == 103424 * 1024 + 1024 + 18 * layer == 360_748_032


def test_qwen3_vl_30b_a3b_int8_awq_splits_module_by_module():
    # the config.json of an llm-compressor AWQ W8A16 checkpoint of Qwen/Qwen3-VL-30B-A3B-Instruct, as posted in
    # vllm-project/llm-compressor issue #1939 (compressed-tensors pack-quantized, int8, symmetric, groups of 32;
    # ignore: the vision tower's linears, every layer's mlp.gate, lm_head)
    ignore = [f"model.visual.blocks.{i}.{m}" for i in range(27)
              for m in ("attn.qkv", "attn.proj", "mlp.linear_fc1", "mlp.linear_fc2")]
    ignore += ["model.visual.merger.linear_fc1", "model.visual.merger.linear_fc2"]
    ignore += [f"model.visual.deepstack_merger_list.{i}.linear_fc{j}" for i in range(3) for j in (1, 2)]
    ignore += [f"model.language_model.layers.{i}.mlp.gate" for i in range(48)] + ["lm_head"]
    weights = {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32, "num_bits": 8,
               "observer": "mse", "observer_kwargs": {}, "strategy": "group", "symmetric": True, "type": "int"}
    raw = dict(_raw("qwen3-vl-30b-a3b"), quantization_config={
        "config_groups": {"group_0": {"format": "pack-quantized", "input_activations": None,
                                      "output_activations": None, "targets": ["Linear"], "weights": weights}},
        "format": "pack-quantized", "global_compression_ratio": None, "ignore": ignore, "kv_cache_scheme": None,
        "quant_method": "compressed-tensors", "quantization_status": "compressed", "sparsity_config": {},
        "transform_config": {}, "version": "0.12.3.a20251013"})
    model = build_model(raw, "qwen3-vl-30b-a3b-awq-w8a16")
    # quantized: every layer's q/k/v/o and its 128 x 3 expert matrices
    quantized = 48 * (2 * 2048 * 4096 + 2 * 2048 * 512 + 128 * 3 * 2048 * 768)
    assert quantized == 29_896_998_912
    # BF16: embeddings and lm_head 2 x 151,936 x 2,048, norms 48 x (2 x 2,048 + 2 x 128) + 2,048, routers
    # 48 x 128 x 2,048 (GateLinear: never quantized)
    plain = 2 * 151936 * 2048 + 48 * (2 * 2048 + 2 * 128) + 2048 + 48 * 128 * 2048
    assert plain == 635_123_712 and model.param_count == quantized + plain
    # 1 B a weight (eight bits packed four to an int32) + one BF16 scale a group of 32, + each quantized tensor's
    # weight_shape (2 x int64 = 16 B): 48 x (4 + 384) = 18,624 tensors
    tensors = 48 * (4 + 128 * 3)
    # and the BF16 vision tower, 538,631,408 parameters (hand-counted in tests/test_vision_towers.py)
    assert model.weight_vision[1] == 2 * 538_631_408
    assert model.weight_bytes == (quantized + quantized // 32 * 2 + tensors * 16 + 2 * plain
                                  + 2 * 538_631_408) == 34_113_369_568
    # whole on every TP rank: the BF16 norms and routers (as in BF16), and the 16 B a tensor kvplan keeps whole
    # and the BF16 tower's whole part (4,649,600 parameters: tests/test_vision_towers.py)
    assert model.weight_replicated_bytes == (2 * (48 * (2 * 2048 + 2 * 128 + 128 * 2048) + 2048) + tensors * 16
                                             + 2 * 4_649_600)
    # TP 2: (33,036,106,752 - 25,885,696) / 2 + 25,885,696 = 16,530,996,224 B a GPU, + the tower's whole part and
    # half the rest
    assert _per_gpu(model, 48, 2) == 16_530_996_224 + 2 * 4_649_600 + (2 * 538_631_408 - 2 * 4_649_600) // 2


def test_mimo_names_and_sizes_the_modules_of_qwen2():
    # transformers 5.25 has no MiMo model; vLLM 0.34 mimo.py builds the target as Qwen2Model (qwen2.py), so the
    # table must name and size exactly the modules Qwen2ForCausalLM builds from the same numbers (the MTP layer,
    # model.mtp_layers.0, is the drafter's and in neither)
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    sizes = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 3,
             "intermediate_size": 96, "vocab_size": 128, "tie_word_embeddings": False}
    raw = {"architectures": ["MiMoForCausalLM"], "model_type": "mimo", "attention_bias": True,
           "num_nextn_predict_layers": 1, "use_sliding_window": False, **sizes}
    with torch.device("meta"):
        model = Qwen2ForCausalLM(Qwen2Config(**sizes))
    theirs: dict[str, int] = {}
    for name, tensor in model.named_parameters():
        key = name.rsplit(".", 1)[0]
        theirs[key] = theirs.get(key, 0) + tensor.numel()
    family, f, _, layers, dims = _read(raw, "mimo-tiny")
    ours: dict[str, int] = {}
    for m in table(f, layers, dims):
        name = m.name if m.top else f"model.{m.name}"
        ours[name] = ours.get(name, 0) + m.weight + m.other
    assert ours == theirs and sum(ours.values()) == family.params(f, layers, dims)[0]
