"""Per-module tables of the older dense families (configs/weight_tables/classic.py) and the counters they
mirror: every bundled config of InternLM2, Falcon, Baichuan, ChatGLM, StableLM, GPTBigCode, GPT-NeoX, MPT,
BLOOM, OPT, GPT-J, GPT-2, Persimmon and XGLM adds up to its family count; what vLLM 0.34.0 holds whole on every TP
rank and the per-GPU bytes, worked out by hand from the bundled configs (model_specs/*.json); configs of other
shapes against the modules transformers 5.25 builds (the counters of StableLM, ChatGLM, OPT, Persimmon and
GPT-NeoX missed modules: configs/params_classic.py); one public FP8 checkpoint's config, read module by module.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model, weight_tables
from kvplan.configs.build import _read
from kvplan.weights.estimate import estimated

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
CLASSIC = ("internlm2", "falcon", "baichuan", "chatglm", "stablelm", "gpt_bigcode", "gpt_neox", "mpt", "bloom", "opt",
           "gptj", "gpt2", "persimmon", "xglm")
BUNDLED = ["internlm2.5-7b-chat", "falcon-7b", "falcon-40b", "baichuan2-7b-chat", "chatglm3-6b", "glm-4-9b-chat",
           "stablelm-2-1.6b", "starcoder", "pythia-1b", "mpt-7b-instruct", "bloom", "opt-6.7b", "gpt-j-6b", "gpt2",
           "persimmon-8b-base", "xglm-1.7b"]


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def test_every_bundled_config_of_these_families_is_listed():
    # tests/data/configs holds none of these families
    found = sorted(p.stem for p in SPECS.glob("*.json") if json.loads(p.read_text()).get("model_type") in CLASSIC)
    assert found == sorted(BUNDLED)


@pytest.mark.parametrize("name", BUNDLED)
def test_the_table_adds_up_to_the_family_count(name):
    family, f, _, layers, dims = _read(_raw(name), name)
    modules = weight_tables.table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


# (bundled config, TP size, parameters, bytes each rank holds whole, bytes per GPU), by hand from the config; per GPU
# = (total bytes - whole) / TP + whole. Before these tables every one of them split evenly (whole 0).
HAND = [
    # InternLM2.5-7B: hidden 4,096, 32 layers, 32 heads and 8 KV heads of 128, intermediate 14,336, vocab 92,544,
    # untied. A layer: wqkv 4,096 x 6,144 = 25,165,824 + wo 16,777,216 + w1/w3/w2 3 x 4,096 x 14,336 = 176,160,768
    # + 2 RMSNorms 8,192 = 218,112,000; 32 x that + 2 x 92,544 x 4,096 + 4,096 = 7,737,708,544. Whole: the RMSNorms,
    # 32 x 8,192 + 4,096 = 266,240 x 2 B = 532,480; TP 2: (15,475,417,088 - 532,480) / 2 + 532,480
    ("internlm2.5-7b-chat", 2, 7_737_708_544, 532_480, 7_737_974_784),
    # Falcon-40B: hidden 8,192, 60 layers, 128 heads of 64 and 8 KV heads (new_decoder_architecture), no biases,
    # ffn 32,768, vocab 65,024, head tied. A layer: query_key_value 8,192 x 9,216 = 75,497,472 + dense 67,108,864
    # + MLP 2 x 8,192 x 32,768 = 536,870,912 + ln_attn and ln_mlp 2 x 16,384 = 679,510,016; 60 x that + 65,024 x
    # 8,192 + ln_f 16,384 = 41,303,293,952. Whole: (60 x 32,768 + 16,384) x 2 B = 3,964,928;
    # TP 4: (82,606,587,904 - 3,964,928) / 4 + 3,964,928
    ("falcon-40b", 4, 41_303_293_952, 3_964_928, 20_654_620_672),
    # Falcon-7B (71 heads: TP 1 only): one input_layernorm a layer (parallel_attn, old architecture): whole
    # (32 x 9,088 + 9,088) x 2 B = 599,808
    ("falcon-7b", 1, 6_921_720_704, 599_808, 13_843_441_408),
    # Baichuan2-7B: hidden 4,096, 32 layers, MHA, intermediate 11,008, vocab 125,696, untied. A layer: W_pack
    # 4,096 x 12,288 = 50,331,648 + o_proj 16,777,216 + MLP 3 x 4,096 x 11,008 = 135,266,304 + 2 norms 8,192 =
    # 202,383,360; 32 x that + 2 x 125,696 x 4,096 + 4,096 = 7,505,973,248. Whole (32 x 8,192 + 4,096) x 2 B =
    # 532,480; TP 2: (15,011,946,496 - 532,480) / 2 + 532,480
    ("baichuan2-7b-chat", 2, 7_505_973_248, 532_480, 7_506_239_488),
    # ChatGLM3-6B: hidden 4,096, 28 layers, 32 heads and 2 groups of 128, ffn 13,696, vocab 65,024, untied,
    # add_qkv_bias. A layer: query_key_value 4,096 x 4,608 + its bias 4,608 = 18,878,976 + dense 16,777,216 +
    # dense_h_to_4h 4,096 x 27,392 = 112,197,632 + dense_4h_to_h 56,098,816 + 2 RMSNorms 8,192 = 203,960,832;
    # 28 x that + 2 x 65,024 x 4,096 + 4,096 = 6,243,584,000 (before: 6,243,454,976, no qkv bias). Whole: (28 x
    # 8,192 + 4,096) x 2 B = 466,944; TP 2: (12,487,168,000 - 466,944) / 2 + 466,944
    ("chatglm3-6b", 2, 6_243_584_000, 466_944, 6_243_817_472),
    # StableLM-2-1.6B: hidden 2,048, 24 layers, 32 heads of 64, intermediate 5,632, vocab 100,352, untied,
    # use_qkv_bias. A layer: q/k/v 3 x 2,048 x 2,048 + biases 6,144 + o_proj 4,194,304 + MLP 3 x 2,048 x 5,632 =
    # 34,603,008 + 2 LayerNorms (weight and bias) 8,192 = 51,394,560; 24 x that + 2 x 100,352 x 2,048 + final
    # LayerNorm 4,096 = 1,644,515,328 (before: 1,644,267,520, no biases). Whole: (24 x 8,192 + 4,096) x 2 B =
    # 401,408; TP 2: (3,289,030,656 - 401,408) / 2 + 401,408
    ("stablelm-2-1.6b", 2, 1_644_515_328, 401_408, 1_644_716_032),
    # Pythia-1B: hidden 2,048, 16 layers, intermediate 8,192, vocab 50,304, untied. A layer: query_key_value
    # 2,048 x 6,144 + 6,144, dense 4,194,304 + 2,048, MLP 2 x 16,777,216 + 8,192 + 2,048, 2 LayerNorms 8,192 =
    # 50,358,272; 16 x that + 2 x 103,022,592 + 4,096 = 1,011,781,632. Whole: a layer's LayerNorms 8,192 + dense
    # and dense_4h_to_h biases 4,096 = 12,288; (16 x 12,288 + 4,096) x 2 B = 401,408; TP 2
    ("pythia-1b", 2, 1_011_781_632, 401_408, 1_011_982_336),
    # MPT-7B: d_model 4,096, 32 blocks, expansion 4, vocab 50,432, tied, no biases, weight-only LayerNorms. A block:
    # Wqkv 50,331,648 + out_proj 16,777,216 + up/down 2 x 67,108,864 + norm_1 and norm_2 8,192 = 201,334,784;
    # 32 x that + 50,432 x 4,096 + 4,096 = 6,649,286,656. Whole (32 x 8,192 + 4,096) x 2 B = 532,480; TP 2
    ("mpt-7b-instruct", 2, 6_649_286_656, 532_480, 6_649_552_896),
    # BLOOM-176B: hidden 14,336, 70 blocks, vocab 250,880, tied. A block: query_key_value 14,336 x 43,008 +
    # 43,008, dense 205,520,896 + 14,336, MLP 2 x 14,336 x 57,344 + 57,344 + 14,336, 2 LayerNorms 57,344 =
    # 2,466,437,120; 70 x that + 3,596,615,680 + word_embeddings_layernorm and ln_f 57,344 = 176,247,271,424.
    # Whole: a block's LayerNorms 57,344 + two row-parallel biases 28,672 = 86,016; (70 x 86,016 + 57,344) x 2 B
    # = 12,156,928; TP 8: (352,494,542,848 - 12,156,928) / 8 + 12,156,928
    ("bloom", 8, 176_247_271_424, 12_156_928, 44_072_455_168),
    # OPT-6.7B: hidden 4,096, 32 layers, ffn 16,384, vocab 50,272, tied, 2,048 + 2 positions. A layer: q/k/v/out
    # 4 x (16,777,216 + 4,096), fc1 67,108,864 + 16,384, fc2 67,108,864 + 4,096, 2 LayerNorms 16,384 =
    # 201,379,840; 32 x that + 205,914,112 + embed_positions 8,396,800 + final LayerNorm 8,192 = 6,658,473,984.
    # Whole: a layer's LayerNorms 16,384 + out_proj and fc2 biases 8,192 = 24,576; 32 x that + embed_positions
    # (a plain nn.Embedding in vLLM) + final LayerNorm = 9,191,424 x 2 B = 18,382,848; TP 2
    ("opt-6.7b", 2, 6_658_473_984, 18_382_848, 6_667_665_408),
    # GPT-J-6B (float16): n_embd 4,096, 28 layers, inner 16,384, vocab 50,400, untied head with a bias. A layer:
    # q/k/v/out 4 x 16,777,216, fc_in 67,108,864 + 16,384, fc_out 67,108,864 + 4,096, ln_1 8,192 = 201,355,264;
    # 28 x that + 2 x 206,438,400 + head bias 50,400 + ln_f 8,192 = 6,050,882,784. Whole: ln_1 and fc_out's bias
    # (28 x 12,288 + 8,192) x 2 B = 704,512; TP 2
    ("gpt-j-6b", 2, 6_050_882_784, 704_512, 6_051_235_040),
    # GPT-2: n_embd 768, 12 layers, 1,024 positions, vocab 50,257, tied. Whole: a layer's 2 LayerNorms 3,072 + two
    # c_proj biases 1,536 = 4,608; 12 x that + wpe 786,432 + ln_f 1,536 = 843,264 x 2 B = 1,686,528; TP 2:
    # (248,879,616 - 1,686,528) / 2 + 1,686,528
    ("gpt2", 2, 124_439_808, 1_686_528, 125_283_072),
    # Persimmon-8B: hidden 4,096, 36 layers, 64 heads of 64, intermediate 16,384, vocab 262,144, untied. Whole: a
    # layer's 2 LayerNorms 16,384 + q/k_layernorm 256 + two row-parallel biases 8,192 = 24,832; (36 x 24,832 +
    # 8,192) x 2 B = 1,804,288; TP 2: (18,794,350,592 - 1,804,288) / 2 + 1,804,288
    ("persimmon-8b-base", 2, 9_397_175_296, 1_804_288, 9_398_077_440),
    # XGLM-1.7B: d_model 2,048, 24 layers, ffn 8,192, vocab 256,008, tied. Whole: a layer's 2 LayerNorms 8,192 +
    # out_proj and fc2 biases 4,096; (24 x 12,288 + 4,096) x 2 B = 598,016; TP 2
    ("xglm-1.7b", 2, 1_732_907_008, 598_016, 1_733_206_016),
]


def test_starcoder_keeps_its_one_kv_head_on_every_rank_and_vllm_025_its_mlp():
    # StarCoder (float32): n_embd 6,144, 40 layers, 48 heads of 128 and one KV head, n_inner 24,576, 8,192
    # positions, vocab 49,152, tied. A layer: c_attn 6,144 x 6,400 + 6,400 = 39,328,000, attn.c_proj 37,748,736 +
    # 6,144, mlp.c_fc 150,994,944 + 24,576, mlp.c_proj 150,994,944 + 6,144, ln_1 and ln_2 24,576: 379,128,064;
    # 40 x that + wte 301,989,888 + wpe 50,331,648 + ln_f 12,288 = 15,517,456,384.
    # The checkpoint's layout (SGLang 0.5.23 gpt_bigcode.py, vLLM's own gpt_bigcode.py before 0.25: c_fc column-,
    # c_proj row-parallel) holds whole a layer's LayerNorms 24,576 + the two c_proj biases 12,288 = 36,864;
    # 40 x that + wpe + ln_f = 51,818,496 x 4 B = 207,273,984 B; and the key and value rows of c_attn (one KV
    # head: QKVParallelLinear) 40 x (6,144 x 256 + 256) = 62,924,800 x 4 B = 251,699,200 B.
    # TP 4: (62,069,825,536 - 207,273,984 - 251,699,200) / 4 + 207,273,984 + 251,699,200 = 15,861,686,272
    model = build_model(_raw("starcoder"), "starcoder")
    assert model.param_count == 15_517_456_384 and model.weight_bytes == 62_069_825_536
    assert model.weight_replicated_bytes == 207_273_984
    assert stage_weight_bytes(estimated(model), 40, tp=4) == [15_402_713_088 + 458_973_184] == [15_861_686_272]
    # vLLM serves it in bf16 (half of each); from 0.25 on its Transformers backend, which has no tensor-parallel
    # plan for GPTBigCode and matches no fuser to c_fc -> c_proj: the MLP's c_fc (weight and bias) and c_proj
    # weight, 40 x 302,014,464 = 12,080,578,560 parameters, sit whole on every rank: + 12,080,578,560 x 2 B x 3 / 4
    # = 18,120,867,840 B at TP 4 over 15,861,686,272 / 2 = 7,930,843,136
    from kvplan.engines.vllm_profile import predict_available
    from kvplan.sources import load_model

    bundled = load_model("starcoder")  # vLLM's profile reads the config again for what it builds otherwise

    def weights(version):
        est = predict_available(bundled, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, tp=4, version=version)
        return est.weight_bytes

    assert weights("0.34.0") == 7_930_843_136 + 18_120_867_840 == 26_051_710_976
    assert weights("0.24.0") == 7_930_843_136
    # a float32 record as vLLM loads it (vllm_load.downcast_float32): what each rank holds whole halves with the
    # rest (it stayed at 4 B, and a GPU's share came out above the whole bf16 model once the MLP was whole)
    from kvplan.engines.vllm_load import downcast_float32

    loaded, _ = downcast_float32(estimated(model))
    assert loaded.total_bytes == 31_034_912_768 and loaded.replicated_bytes == 207_273_984 // 2
    assert stage_weight_bytes(loaded, 40, tp=4) == [15_861_686_272 // 2]


@pytest.mark.parametrize("name, tp, params, whole, per_gpu", HAND)
def test_whole_bytes_and_per_gpu_bytes_by_hand(name, tp, params, whole, per_gpu):
    model = build_model(_raw(name), name)
    assert model.param_count == params
    assert model.weight_replicated_bytes == whole
    total = model.weight_bytes
    assert (total - whole) % tp == 0 and (total - whole) // tp + whole == per_gpu
    assert stage_weight_bytes(estimated(model), len(model.layers), tp=tp) == [per_gpu]


def test_glm_4_9b_chat_counts_its_qkv_bias():
    # GLM-4-9B-chat (remote ChatGLM code): 40 layers of hidden 4,096, 32 heads and 2 groups of 128, ffn 13,696,
    # vocab 151,552, untied, add_qkv_bias. A layer: 4,096 x 4,608 + 4,608 + 16,777,216 + 4,096 x 27,392 +
    # 56,098,816 + 8,192 = 203,960,832; 40 x that + 2 x 151,552 x 4,096 + 4,096 = 9,399,951,360 (published 9.4B;
    # before: 9,399,767,040, which left out 40 x 4,608 bias parameters)
    assert build_model(_raw("glm-4-9b-chat"), "glm4").param_count == 9_399_951_360


# -- other shapes, against the modules transformers 5.25 builds on the meta device -----------------------------------

def _theirs(model_type: str, fields: dict) -> tuple[dict, dict]:
    """transformers' parameters module by module (a module's weight and bias under its name) and the saved config."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **fields)
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_config(config)
    sizes: dict[str, int] = {}
    for name, tensor in model.named_parameters():
        key = name.rsplit(".", 1)[0]
        sizes[key] = sizes.get(key, 0) + tensor.numel()
    return sizes, json.loads(config.to_json_string(use_diff=False))


def _ours(raw: dict, renames=()) -> tuple[dict, int]:
    family, f, _, layers, dims = _read(raw, "shape")
    ours: dict[str, int] = {}
    for m in weight_tables.table(f, layers, dims):
        name = m.name if m.top else "model." + m.name
        for old, new in renames:
            name = name.replace(old, new)
        ours[name] = ours.get(name, 0) + m.weight + m.other
    return ours, family.params(f, layers, dims)[0]


SMALL = {"vocab_size": 96, "num_hidden_layers": 2, "max_position_embeddings": 64}
SHAPES = [
    # OPT-350m's layout: embeddings of word_embed_proj_dim, project_in / project_out, no final LayerNorm
    ("opt", {**SMALL, "hidden_size": 64, "ffn_dim": 128, "num_attention_heads": 4, "word_embed_proj_dim": 32,
             "do_layer_norm_before": False}, ()),
    ("opt", {**SMALL, "hidden_size": 64, "ffn_dim": 128, "num_attention_heads": 4, "enable_bias": False,
             "layer_norm_elementwise_affine": False, "tie_word_embeddings": False}, ()),
    # StableLM-2-12B's layout: per-head q/k LayerNorms, parallel residual (no post_attention_layernorm), GQA
    ("stablelm", {**SMALL, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "qk_layernorm": True, "use_parallel_residual": True}, ()),
    ("persimmon", {**SMALL, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
                   "qk_layernorm": False}, ()),
    ("gpt_neox", {**SMALL, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
                  "attention_bias": False}, (("embed_out", "lm_head"),)),
    ("gpt_bigcode", {**SMALL, "n_embd": 64, "n_head": 4, "multi_query": False, "tie_word_embeddings": False}, ()),
    ("falcon", {**SMALL, "hidden_size": 64, "num_attention_heads": 4, "parallel_attn": False, "bias": True,
                "multi_query": False}, ()),
    ("falcon", {**SMALL, "hidden_size": 64, "num_attention_heads": 8, "num_kv_heads": 2,
                "new_decoder_architecture": True, "tie_word_embeddings": False}, ()),
]


@pytest.mark.parametrize("model_type, fields, renames", SHAPES)
def test_other_shapes_match_the_modules_transformers_builds(model_type, fields, renames):
    theirs, raw = _theirs(model_type, fields)
    ours, count = _ours(raw, renames)
    assert ours == theirs
    assert count == sum(theirs.values())


def test_opt_350m_shape_by_hand():
    # hidden 64, proj 32, ffn 128, 2 layers, vocab 96, 64 + 2 positions, tied, no final LayerNorm: embed_tokens 96 x
    # 32 = 3,072, positions 66 x 64 = 4,224, project_in and project_out 2 x 32 x 64 = 4,096; a layer: 4 x (4,096 +
    # 64) + fc1 8,192 + 128 + fc2 8,192 + 64 + 2 LayerNorms 256 = 33,472. 3,072 + 4,224 + 4,096 + 2 x 33,472 =
    # 78,336 (before: 77,440, embeddings 96 x 64 = 6,144 and a final LayerNorm 128, no projections)
    raw = {"model_type": "opt", **SMALL, "hidden_size": 64, "ffn_dim": 128, "num_attention_heads": 4,
           "word_embed_proj_dim": 32, "do_layer_norm_before": False, "torch_dtype": "bfloat16"}
    model = build_model(raw, "opt-350m-shape")
    assert model.param_count == 78_336
    # whole: positions 4,224 + the projections (vLLM ReplicatedLinear) 4,096 + a layer's LayerNorms 256 and
    # out_proj / fc2 biases 128: 8,320 + 2 x 384 = 9,088 x 2 B = 18,176
    assert model.weight_replicated_bytes == 18_176


# -- a public quantized checkpoint, module by module ----------------------------------------------------------------

# nm-testing/granite-20b-code-base-FP8, config.json (Hugging Face): GPTBigCodeForCausalLM, static FP8 with
# "ignored_layers": ["lm_head"], no tie_word_embeddings (GPTBigCodeConfig ties by default)
GRANITE_FP8 = {
    "_name_or_path": "ibm-granite/granite-20b-code-base", "activation_function": "gelu_pytorch_tanh",
    "architectures": ["GPTBigCodeForCausalLM"], "attention_softmax_in_fp32": True, "attn_pdrop": 0.1,
    "bos_token_id": 0, "embd_pdrop": 0.1, "eos_token_id": 0, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
    "model_type": "gpt_bigcode", "multi_query": True, "n_embd": 6144, "n_head": 48, "n_inner": 24576, "n_layer": 52,
    "n_positions": 8192, "pad_token_id": 0,
    "quantization_config": {"activation_scheme": "static", "ignored_layers": ["lm_head"], "quant_method": "fp8"},
    "resid_pdrop": 0.1, "scale_attention_softmax_in_fp32": True, "scale_attn_weights": True,
    "torch_dtype": "bfloat16", "transformers_version": "4.41.2", "use_cache": True, "vocab_size": 49152}


def test_granite_20b_code_fp8_is_read_module_by_module():
    model = build_model(GRANITE_FP8, "granite-fp8")
    # a layer's linear weights: c_attn 6,144 x 6,400 = 39,321,600, attn.c_proj 37,748,736, mlp.c_fc and mlp.c_proj
    # 2 x 150,994,944: 379,060,224; 52 x that = 19,711,131,648 at 1 B. In bfloat16: a layer's biases 6,400 + 6,144
    # + 24,576 + 6,144 and LayerNorms 24,576 = 67,840, x 52 = 3,527,680, + wte 301,989,888 + wpe 50,331,648 + ln_f
    # 12,288 = 355,861,504 at 2 B; per-tensor weight and input scales 208 x 8 B = 1,664
    quantized, plain = 52 * 379_060_224, 52 * 67_840 + 301_989_888 + 50_331_648 + 12_288
    assert model.param_count == quantized + plain == 20_066_993_152
    assert model.weight_bytes == quantized + 2 * plain + 1_664 == 20_422_856_320
    # before: no per-module count, the norms and biases at the quantized width: 19,765,003,264 + 2 x 301,989,888
    # whole on each rank in the checkpoint's layout (the MLP split: c_fc column-, c_proj row-parallel): a layer's
    # bfloat16 LayerNorms 24,576 and the two c_proj biases 12,288 = 36,864, x 52, + wpe + ln_f, at 2 B, and every
    # per-tensor scale (1,664 B). vLLM 0.25+ holds the MLP whole too (its Transformers backend), which for this FP8
    # checkpoint its profile names and does not size (configs/param_vllm_load.py)
    whole = 2 * (52 * 36_864 + 50_331_648 + 12_288) + 1_664
    assert model.weight_replicated_bytes == whole == 104_523_392
    # the key and value rows of c_attn (one KV head, whole on every rank: vLLM QKVParallelLinear): 52 x (6,144 x 256
    # FP8 weights at 1 B + a 256 bias at 2 B) = 81,815,552 B. TP 4: (20,422,856,320 - 104,523,392 - 81,815,552)
    # / 4 + 104,523,392 + 81,815,552
    assert stage_weight_bytes(estimated(model), 52, tp=4) == [5_059_129_344 + whole + 81_815_552] \
        == [5_245_468_288]


def test_gpt_sw3_takes_the_gpt2_table():
    # a GPT-SW3-shaped config written here (not a published file): n_embd 2,048, 24 layers, 2,048 positions, vocab
    # 64,000, tied. Whole: a layer's 2 LayerNorms 8,192 + attn.c_proj and mlp.c_proj biases 4,096 = 12,288; 24 x
    # that + wpe 2,048 x 2,048 + ln_f 4,096 = 4,493,312 x 2 B = 8,986,624
    raw = {"model_type": "gpt-sw3", "vocab_size": 64000, "n_embd": 2048, "n_layer": 24, "n_head": 16,
           "n_positions": 2048, "torch_dtype": "bfloat16"}
    assert build_model(raw, "gpt-sw3-shape").weight_replicated_bytes == 8_986_624


def test_sglang_serves_float32_starcoder_in_16_bits_with_its_mlp_split(cli):
    # SGLang's dtype "auto" serves a float32 config in float16 (0.5.23 configs/model_config.py
    # _get_and_verify_dtype: "we use float16 for float32 models"; Gemma in bfloat16), and its gpt_bigcode.py splits
    # c_fc / c_proj (ColumnParallelLinear, RowParallelLinear). At TP 2 the checkpoint's layout holds on a GPU
    # (62,069,825,536 - 207,273,984 - 251,699,200) / 2 + 207,273,984 + 251,699,200 = 31,264,399,360 B as stored
    # (float32), 15,632,199,680 B in 16 bits, which kvplan's own plan under --engine sglang counts too (as under
    # --engine vllm). Pool: int(T0 x mem_fraction_static) - the weights (kvplan took the float32 bytes, 51.62 GiB
    # a GPU with a whole MLP, before)
    from kvplan.capacity.gpus import lookup
    from kvplan.engines.sglang_report import PRELOAD_BYTES, PRELOAD_TP_BYTES
    from kvplan.engines.vllm_profile import driver_total_bytes

    rc, out, err = cli("estimate", "starcoder", "--engine", "sglang", "--gpu", "h100", "--tp", "2", "--context",
                       "4k", "--mem-util", "0.85", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["capacity"]["weight_bytes_per_gpu"] == 15_632_199_680  # the plan: as SGLang serves it
    t0 = driver_total_bytes(lookup("h100")) - PRELOAD_BYTES - PRELOAD_TP_BYTES
    assert data["engine"]["kv_memory_bytes"] == int(t0 * 0.85) - 15_632_199_680
