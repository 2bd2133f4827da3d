"""vLLM's pooling runner in the profile (kvplan.engines.vllm_pooling): which architectures get it and what their
profile holds, read in the 0.29.0-0.32.0 wheels and the 0.33.0 / 0.34.0 sdists. Expected figures are worked out
by hand from the source's shapes in the comments; GiB = 2**30 B."""

from __future__ import annotations

import json

from kvplan.engines.vllm_non_torch import NON_TORCH_BYTES_V1
from kvplan.engines.vllm_pooling import pooler_peak_bytes, pooling_of
from kvplan.engines.vllm_profile import predict_available
from kvplan.sources import load_model

GIB = 2**30

# a Qwen3 reranker converted to sequence classification (the shape of Qwen3-0.6B: hidden 1,024, 28 layers,
# vocabulary 151,936), as published *ForSequenceClassification checkpoints name it
SEQ_CLS = {"architectures": ["Qwen3ForSequenceClassification"], "model_type": "qwen3", "hidden_size": 1024,
           "intermediate_size": 3072, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
           "num_hidden_layers": 28, "vocab_size": 151936, "max_position_embeddings": 40960,
           "rms_norm_eps": 1e-6, "rope_theta": 1000000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
           "num_labels": 1}


def _seq_cls(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(SEQ_CLS))
    return load_model(str(path))


def test_which_architectures_run_the_pooling_runner():
    # config/model.py _get_default_runner_type (0.29-0.34): an unregistered name takes its suffix's runner
    # (_SUFFIX_TO_DEFAULTS: ForSequenceClassification -> pooling / classify)
    seq = pooling_of(["Qwen3ForSequenceClassification"], "0.34.0")
    assert seq is not None and seq.kind == "classify" and "suffix" in seq.how
    # registered pooling classes (registry.py _REWARD_MODELS, _EMBEDDING_MODELS)
    assert pooling_of(["Qwen2ForRewardModel"], "0.33.0").kind == "classify"
    assert pooling_of(["Gemma3TextModel"], "0.34.0").kind == "embed"
    # registered generation classes stay "generate", also those listed in _EMBEDDING_MODELS for conversion
    # (LlamaModel -> LlamaForCausalLM, Qwen2ForCausalLM) and the bare-"Model" ChatGLM generation class
    for name in ("LlamaForCausalLM", "LlamaModel", "Qwen2ForCausalLM", "ChatGLMModel"):
        assert pooling_of([name], "0.34.0") is None, name
    assert pooling_of(["Qwen3ForSequenceClassification"], None) is None  # no release: not decided


def test_pooler_peaks_by_hand():
    # token_embed (0.34 TokenEmbeddingPoolerHead.forward_batched): bf16 hidden states + their fp32 copy + the fp32
    # normalized result: 8,192 tokens x 1,024 x (2 + 4 + 4) B = 83,886,080 B
    assert pooler_peak_bytes("embed", 8192, 1024, 1024) == 83_886_080
    # token_classify: 8,192 x 1,024 x 2 B of hidden states + one request's fp32 rows: min(8,192, 1,024) = 1,024
    # dummy requests of 8 tokens (pooling_runner.py _dummy_pooler_run_task), 8 x 1,024 x 4 B = 32,768 B
    assert pooler_peak_bytes("classify", 8192, 1024, 1024) == 16_777_216 + 32_768
    # 256 sequences: 32 rows a request, 32 x 1,024 x 4 = 131,072 B
    assert pooler_peak_bytes("classify", 8192, 1024, 256) == 16_777_216 + 131_072


def test_a_pooling_model_profiles_the_pooler_not_the_sampler(tmp_path):
    model = _seq_cls(tmp_path)
    # vLLM 0.33 (no extensible cache), 80 GiB, utilization 0.9, 8,192 tokens, 1,024 sequences, weights 1 GiB and a
    # graph estimate of 0.5 GiB given
    est = predict_available(model, total_bytes=80 * GIB, gpu_memory_utilization=0.9, max_num_batched_tokens=8192,
                            max_num_seqs=1024, weight_bytes=GIB, version="0.33.0", gpu="h100-sxm",
                            cuda_graph_bytes=GIB // 2)
    # the forward, 26 B x 1,024 x 8,192 = 218,103,808 B, is above the pooler's 16,809,984 B; a generate model
    # would have profiled the V2 warm-up sampler, 1,024 x 151,936 x 14 B = 2,178,154,496 B, and kept the penalty
    # bin counts, 1,024 x 151,936 x 4 B; the pooling runner builds no sampler (model_runner.py load_model)
    assert est.activation_bytes == 218_103_808
    assert est.buffer_bytes == 0
    # requested 0.9 x 85,899,345,920 = 77,309,411,328 B
    assert est.available_bytes == 77_309_411_328 - GIB - 218_103_808 - NON_TORCH_BYTES_V1 - GIB // 2
    assert any("pooling runner" in n for n in est.notes)


def test_a_pooling_model_captures_piecewise_graphs_only(tmp_path):
    from kvplan.engines.vllm_cudagraph import GRAPH_FIRST_BYTES, GRAPH_PER_LAYER_GRAPH_BYTES

    model = _seq_cls(tmp_path)
    est = predict_available(model, total_bytes=80 * GIB, gpu_memory_utilization=0.9, max_num_batched_tokens=8192,
                            max_num_seqs=1024, weight_bytes=GIB, version="0.33.0", gpu="h100-sxm")
    # config/vllm.py "Pooling models do not support full cudagraphs": PIECEWISE for the 51 capture sizes (1, 2, 4,
    # 8..248 by 8, 256..512 by 16), no FULL graphs; the estimate model: first capture + per layer per further graph
    # x 28 layers x (51 - 1); a generate model's 51 + 51 graphs would give 100 further graphs
    assert est.cuda_graph_bytes == GRAPH_FIRST_BYTES + GRAPH_PER_LAYER_GRAPH_BYTES * 28 * 50


def test_releases_before_0_29_keep_the_sampler_and_say_so(tmp_path):
    model = _seq_cls(tmp_path)
    est = predict_available(model, total_bytes=80 * GIB, gpu_memory_utilization=0.9, max_num_batched_tokens=8192,
                            max_num_seqs=1024, weight_bytes=GIB, version="0.28.0", gpu="h100-sxm",
                            cuda_graph_bytes=0)
    # 0.28 runs a dense model in Model Runner V2 with one default sampler pass: 1,024 x 151,936 x 2 B =
    # 311,164,928 B, above the forward; the pooling path of 0.28 is not read, so it is kept, with a note
    assert est.activation_bytes == 311_164_928
    assert any("read from 0.29.0" in n for n in est.notes)


def test_a_converted_model_loads_no_lm_head_and_a_float32_score(tmp_path):
    # models/adapters.py _create_pooling_model_cls builds the converted class with no_init_weights over ParallelLMHead
    # and LogitsProcessor (no lm_head), and as_seq_cls_model adds score = ReplicatedLinear(hidden, num_labels,
    # params_dtype=head_dtype float32). The same shapes untied, served as generation and as classification, from
    # the config (no checkpoint): lm_head 151,936 x 1,024 x 2 B = 311,164,928 B less, score 1 x 1,024 x 4 B = 4,096 B
    # more
    def weights(architecture):
        path = tmp_path / architecture / "config.json"
        path.parent.mkdir()
        path.write_text(json.dumps({**SEQ_CLS, "architectures": [architecture], "tie_word_embeddings": False}))
        return predict_available(load_model(str(path)), total_bytes=80 * GIB, gpu_memory_utilization=0.9,
                                 version="0.34.0", gpu="h100-sxm", max_num_seqs=1024,
                                 extensible_kv_cache=False).weight_bytes

    assert weights("Qwen3ForSequenceClassification") - weights("Qwen3ForCausalLM") == -311_164_928 + 4_096


def test_a_config_whose_architectures_is_not_a_list_is_not_a_pooling_model():
    # a fuzzed config (architectures=true) crashed pooling_of with "'bool' object is not iterable"
    from kvplan.engines.vllm_pooling import pooling_of

    assert pooling_of(True, "0.34.0") is None
    assert pooling_of({"a": 1}, "0.34.0") is None
    assert pooling_of([None, 3, "LlamaForCausalLM"], "0.34.0") is None
