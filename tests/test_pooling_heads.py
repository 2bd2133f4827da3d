"""A pooling architecture's config-sized weights (kvplan.configs.pooling_heads, build.counted_params): no untied
lm_head, and the head transformers 5.25 builds (modeling_layers.py GenericForSequenceClassification: score
nn.Linear(hidden, num_labels, bias=False); GenericForTokenClassification: the same with a bias; a bare *Model:
none), in the estimate, the TP split, fit and vLLM's profile alike. Counts worked out by hand from the shapes below,
and checked against transformers 5.25 on the meta device where it is installed."""

from __future__ import annotations

import json
import warnings

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.sources import load_model
from kvplan.weights.estimate import estimated
from kvplan_inprocess import kvplan

# Qwen3-0.6B's shapes, untied: hidden 1,024, 28 layers, 16 heads x 128, 8 KV heads, MLP 3,072, vocabulary 151,936.
# A layer: q 1,024 x 2,048 + k, v 1,024 x 1,024 each + o 2,048 x 1,024 = 6,291,456; q_norm, k_norm 2 x 128;
# MLP 3 x 1,024 x 3,072 = 9,437,184; two norms 2,048: 15,730,944, x 28 = 440,466,432. Embeddings 151,936 x 1,024 =
# 155,582,464, final norm 1,024: the base model 596,049,920; the causal LM's untied lm_head another 155,582,464.
QWEN3 = {"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "num_attention_heads": 16,
         "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 28, "vocab_size": 151936,
         "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000,
         "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
QWEN3_BASE = 596_049_920
# Llama-3.1-8B's shapes (untied): 8,030,261,248 parameters published, of which the lm_head 128,256 x 4,096 =
# 525,336,576; the base model 7,504,924,672
LLAMA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
         "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
         "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
LLAMA_BASE = 7_504_924_672

CASES = [  # (config, architecture, extra fields, parameters worked out by hand)
    (QWEN3, "Qwen3ForSequenceClassification", {"num_labels": 1}, QWEN3_BASE + 1 * 1024),
    # id2label decides (transformers' num_labels property), whatever num_labels says
    (QWEN3, "Qwen3ForSequenceClassification", {"id2label": {"0": "no", "1": "yes"}}, QWEN3_BASE + 2 * 1024),
    # neither: PretrainedConfig's 2 labels
    (QWEN3, "Qwen3ForSequenceClassification", {}, QWEN3_BASE + 2 * 1024),
    (QWEN3, "Qwen3ForTokenClassification", {"id2label": {"0": "O", "1": "B", "2": "I"}}, QWEN3_BASE + 3 * 1024 + 3),
    (QWEN3, "Qwen3Model", {}, QWEN3_BASE),  # an embedding model: no head at all
    (LLAMA, "LlamaForSequenceClassification", {"num_labels": 1}, LLAMA_BASE + 4096),
    (LLAMA, "LlamaForSequenceClassification", {"id2label": {"0": "a", "1": "b"}}, LLAMA_BASE + 2 * 4096),
]


def _model(tmp_path, base, architecture, extra):
    path = tmp_path / architecture / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({**base, **extra, "architectures": [architecture]}))
    return load_model(str(path))


@pytest.mark.parametrize("base,architecture,extra,expected", CASES)
def test_a_pooling_architecture_counts_its_head_not_the_lm_head(tmp_path, base, architecture, extra, expected):
    model = _model(tmp_path, base, architecture, extra)
    assert model.param_count == expected
    assert model.weight_bytes == expected * 2
    assert estimated(model).total_bytes == expected * 2
    assert any(n.startswith("parameters counted for " + architecture) for n in estimated(model).notes)


def test_a_tied_config_drops_nothing_and_generation_classes_keep_their_head(tmp_path):
    # tied: the LM head is the embedding table; only the score is added (1 x 1,024)
    tied = _model(tmp_path, {**QWEN3, "tie_word_embeddings": True}, "Qwen3ForSequenceClassification",
                  {"num_labels": 1})
    assert tied.param_count == QWEN3_BASE + 1024
    # LlamaModel is a generation class vLLM registers (registry.py _EMBEDDING_MODELS -> LlamaForCausalLM, run
    # "generate" by default: vllm_pooling), which builds its lm_head: unchanged, 7,504,924,672 + 525,336,576
    assert _model(tmp_path, LLAMA, "LlamaModel", {}).param_count == 8_030_261_248
    assert _model(tmp_path, LLAMA, "LlamaForCausalLM", {}).param_count == 8_030_261_248
    # a name with a generate suffix is never looked up in vLLM's registry (pooling_heads' shortcut, which keeps the
    # engines out of a causal LM's estimate): no registered pooling class has one
    from kvplan.configs.vllm_suffixes import match
    from kvplan.engines.vllm_pooling import CLASSIFY_ARCHS, EMBED_ARCHS

    assert not [n for n in EMBED_ARCHS | CLASSIFY_ARCHS if (match(n) or ("", ("",)))[1][0] == "generate"]


def test_the_plan_holds_the_score_whole_under_tp_and_fit_agrees(tmp_path):
    model = _model(tmp_path, LLAMA, "LlamaForSequenceClassification", {"num_labels": 1})
    # 7,504,928,768 x 2 B = 15,009,857,536 B. Whole on each rank: 65 RMSNorms x 4,096 = 266,240 and the score
    # (vLLM's ReplicatedLinear) 4,096: 270,336 x 2 B = 540,672 B; TP 2: (15,009,857,536 - 540,672) / 2 + 540,672 =
    # 7,505,199,104 B a GPU (before: 8,030,527,488, the lm_head counted and split)
    assert model.weight_replicated_bytes == 540_672
    assert stage_weight_bytes(estimated(model), 32, tp=2) == [7_505_199_104]
    config = str(tmp_path / "LlamaForSequenceClassification" / "config.json")
    out = kvplan("estimate", config, "--gpu", "h100", "--tp", "2", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["model"]["weight_bytes"] == 15_009_857_536
    assert doc["capacity"]["weight_bytes_per_gpu"] == 7_505_199_104
    out = kvplan("fit", config, "--gpu", "l4", "-c", "8k", "-n", "4", "--format", "json")
    assert out.returncode == 0, out.stderr
    tp2 = [o for o in json.loads(out.stdout)["options"] if o["tp"] == 2 and o["pp"] == 1 and not o["techniques"]]
    assert tp2 and all(o["weight_bytes_per_gpu"] == 7_505_199_104 for o in tp2)


def test_vllms_profile_takes_the_plans_count_and_adds_the_float32_upcast(tmp_path):
    from kvplan.engines.vllm_profile import predict_available

    def profiled(architecture):
        model = _model(tmp_path, LLAMA, architecture, {"num_labels": 1})
        est = predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, version="0.34.0",
                                gpu="h100-sxm", max_num_seqs=256, extensible_kv_cache=False)
        return est.weight_bytes, model.weight_bytes

    classifier, causal = profiled("LlamaForSequenceClassification"), profiled("LlamaForCausalLM")
    # the plan: no lm_head (525,336,576 x 2 B less), the score 4,096 x 2 B more
    assert classifier[1] - causal[1] == -1_050_673_152 + 8_192
    # the profile (the same rotary tables and load buffers in both): the plan's count, and the score in float32
    # (adapters.py as_seq_cls_model, head_dtype): 4,096 x 2 B more, not the lm_head dropped a second time
    assert classifier[0] - causal[0] == classifier[1] - causal[1] + 8_192


def test_a_bad_id2label_is_one_clear_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**QWEN3, "architectures": ["Qwen3ForSequenceClassification"], "id2label": [1, 2]}))
    # transformers 5.25 PreTrainedConfig reads id2label as a mapping: a list is refused with the field's name
    out = kvplan("estimate", str(path), "--gpu", "h100", "--format", "json")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "'id2label' is a list, not a JSON object" in out.stderr


@pytest.mark.parametrize("base,architecture,extra,expected", CASES)
def test_the_counts_are_transformers_on_the_meta_device(tmp_path, base, architecture, extra, expected):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    fields = {k: v for k, v in {**base, **extra}.items() if k not in ("model_type", "torch_dtype")}
    config = transformers.AutoConfig.for_model(base["model_type"], **fields)
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        theirs = getattr(transformers, architecture)._from_config(config)
    assert sum(p.numel() for p in theirs.parameters()) == expected
    assert _model(tmp_path, base, architecture, extra).param_count == expected


# Qwen2.5-72B's shapes (Qwen2.5-Math-RM-72B): hidden 8,192, 80 layers, 64 heads x 128, 8 KV heads, MLP 29,568,
# vocabulary 152,064, untied. A layer: q, o 8,192 x 8,192 each + k, v 8,192 x 1,024 each + q/k/v biases 10,240 =
# 151,005,184; MLP 3 x 8,192 x 29,568 = 726,663,168; norms 16,384: 877,684,736, x 80 = 70,214,778,880; embeddings
# 152,064 x 8,192 = 1,245,708,288 and the final norm 8,192: 71,460,495,360 (72,706,203,648 with the lm_head).
QWEN2_72B = {"model_type": "qwen2", "hidden_size": 8192, "intermediate_size": 29568, "num_attention_heads": 64,
             "num_key_value_heads": 8, "num_hidden_layers": 80, "vocab_size": 152064, "max_position_embeddings": 4096,
             "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# internlm2-1_8b's shapes: hidden 2,048, 24 layers, 16 heads, 8 KV heads, MLP 8,192, vocabulary 92,544, untied. A
# layer: wqkv 2,048 x 4,096 + wo 2,048 x 2,048 + MLP 3 x 2,048 x 8,192 + norms 4,096 = 62,918,656, x 24 =
# 1,510,047,744; tok_embeddings 92,544 x 2,048 = 189,530,112, norm 2,048: 1,699,579,904 (1,889,110,016 with output)
INTERNLM2 = {"model_type": "internlm2", "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 16,
             "num_key_value_heads": 8, "num_hidden_layers": 24, "vocab_size": 92544, "max_position_embeddings": 32768,
             "rms_norm_eps": 1e-5, "rope_theta": 1000000, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def test_the_registered_reward_heads_read_from_vllm(tmp_path):
    # vLLM 0.34 qwen2_rm.py: score.0 ColumnParallelLinear(8,192, 8,192) + bias, score.2 RowParallelLinear(8,192,
    # num_labels) + bias; Qwen2ForRewardModel sets 1 label: 67,108,864 + 8,192 + 8,192 + 1 = 67,125,249;
    # Qwen2ForProcessRewardModel 2: 67,108,864 + 8,192 + 16,384 + 2 = 67,133,442
    assert _model(tmp_path, QWEN2_72B, "Qwen2ForCausalLM", {}).param_count == 72_706_203_648
    assert _model(tmp_path, QWEN2_72B, "Qwen2ForRewardModel", {}).param_count == 71_460_495_360 + 67_125_249
    assert _model(tmp_path, QWEN2_72B, "Qwen2ForProcessRewardModel", {}).param_count == 71_460_495_360 + 67_133_442
    # internlm2.py InternLM2ForRewardModel: no `output`, v_head RowParallelLinear(2,048, 1, bias=False)
    assert _model(tmp_path, INTERNLM2, "InternLM2ForCausalLM", {}).param_count == 1_889_110_016
    assert _model(tmp_path, INTERNLM2, "InternLM2ForRewardModel", {}).param_count == 1_699_579_904 + 2_048


def test_vllm_holds_a_split_reward_head_in_float32_per_rank(tmp_path):
    from kvplan.engines.vllm_profile import predict_available

    def profiled(architecture):
        model = _model(tmp_path, QWEN2_72B, architecture, {})
        est = predict_available(model, total_bytes=80 * 2**30, gpu_memory_utilization=0.9, version="0.34.0",
                                gpu="h100-sxm", tp=4, max_num_seqs=256, extensible_kv_cache=False)
        return est.weight_bytes, model

    (rm, rm_model), (lm, lm_model) = profiled("Qwen2ForRewardModel"), profiled("Qwen2ForCausalLM")
    # the plan at TP 4: score.2's bias (1) whole with the norms, the rest split; vLLM's float32 head (qwen2_rm.py
    # params_dtype=head_dtype) adds 2 B a parameter a rank: (67,108,864 + 8,192) / 4 + 8,192 / 4 + 1 = 16,781,313
    # parameters, 33,562,626 B
    assert rm_model.weight_replicated_bytes - lm_model.weight_replicated_bytes == 2
    plan = stage_weight_bytes(estimated(rm_model), 80, tp=4)[0] - stage_weight_bytes(estimated(lm_model), 80, tp=4)[0]
    assert rm - lm == plan + 33_562_626
