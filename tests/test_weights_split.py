"""Weights per GPU under TP and PP, by role, and the estimate JSON that carries
them; expected values worked out by hand."""

from __future__ import annotations

import json

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.weights.load import from_bundled
from kvplan.weights.record import NO_LAYER, Weights

GIB = 1024**3
# published checkpoint totals (metadata.total_size of the Hub index)
GPT_OSS_20B = 13_761_264_768
GPT_OSS_120B = 65_248_815_744  # 60.77 GiB; the model card says 60.8 GiB


def _record(tied: bool = False) -> Weights:
    parts = [("embeddings", NO_LAYER, 1000)]
    if not tied:
        parts.append(("lm_head", NO_LAYER, 1000))
    parts.append(("norms", NO_LAYER, 10))
    for layer in range(4):
        parts += [("attention", layer, 400), ("experts", layer, 4000), ("router", layer, 30), ("norms", layer, 20)]
    return Weights(total_bytes=sum(n for _, _, n in parts), source="safetensors", parts=tuple(parts), tied_embeddings=tied)


def test_tp_splits_all_but_norms_and_routers():
    w = _record()
    # per rank: (1000 + 1000 + 4 x 4400) / 4 + norms 10 + 4 x 20 + routers 4 x 30
    assert stage_weight_bytes(w, 4, tp=4) == [(2000 + 4 * 4400) // 4 + 10 + 80 + 120]
    assert stage_weight_bytes(w, 4) == [w.total_bytes]


def test_pp_puts_layers_on_their_stage_embeddings_first_head_last():
    w = _record()
    first = 1000 + 2 * (400 + 4000 + 30 + 20)
    last = 1000 + 10 + 2 * (400 + 4000 + 30 + 20)
    assert stage_weight_bytes(w, 4, pp=2) == [first, last]
    # tp 2 x pp 2: split roles halve, norms and routers do not
    assert stage_weight_bytes(w, 4, tp=2, pp=2) == [500 + 2 * (200 + 2000 + 30 + 20), 500 + 10 + 2 * (200 + 2000 + 30 + 20)]


def test_tied_embeddings_are_held_by_the_last_stage_too():
    w = _record(tied=True)
    assert stage_weight_bytes(w, 4, pp=2) == [1000 + 2 * 4450, 1000 + 10 + 2 * 4450]
    assert stage_weight_bytes(w, 4, pp=1) == [w.total_bytes]


def test_no_tensor_table_splits_evenly():
    w = Weights(total_bytes=1001, source="index")
    assert stage_weight_bytes(w, 4, tp=2, pp=2) == [251, 251]  # one entry per stage: ceil(1001 / 4)


def test_bundled_gpt_oss_totals_are_the_published_ones():
    assert from_bundled("gpt-oss-20b").total_bytes == GPT_OSS_20B
    big = from_bundled("gpt-oss-120b")
    assert big.total_bytes == GPT_OSS_120B and big.source == "bundled"
    assert sum(big.by_role.values()) == GPT_OSS_120B


def test_gpt_oss_120b_fits_one_h100_at_128k(cli):
    code, out, err = cli("estimate", "gpt-oss-120b", "--gpu", "h100", "--context", "128k", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert abs(data["model"]["weight_bytes"] - GPT_OSS_120B) <= 0.01 * GPT_OSS_120B
    assert data["model"]["weights"]["source"] == "bundled"
    assert data["capacity"]["weight_bytes_per_gpu"] == data["model"]["weight_bytes"]
    assert data["max_concurrency"] >= 1
    # 36 layers alternate 128-token windows and full attention; 8 KV heads x 64 x (K+V) x 2 B
    # = 2048 B per layer per token: 18 x 131072 x 2048 + 18 x 128 x 2048
    assert data["kv_bytes_per_sequence"] == 18 * 131072 * 2048 + 18 * 128 * 2048
    # pool = 90% of the 79.18 GiB the H100's driver reports - weights - 2 GiB reserve
    assert data["capacity"]["pool_bytes"] == int(int(79.18 * GIB) * 0.9) - GPT_OSS_120B - 2 * GIB


def test_json_weight_bytes_agree_under_tp_pp(cli):
    code, out, err = cli("estimate", "gpt-oss-120b", "--gpu", "h100", "--tp", "2", "--pp", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    w = from_bundled("gpt-oss-120b")
    assert data["model"]["weight_bytes"] == w.total_bytes
    assert data["capacity"]["weight_bytes_per_gpu"] == max(stage_weight_bytes(w, 36, 2, 2))
    # the per-GPU figure is about a quarter of the whole (norms and routers replicated)
    assert abs(data["capacity"]["weight_bytes_per_gpu"] - w.total_bytes / 4) < 0.01 * w.total_bytes


def test_weights_size_option_still_works(cli):
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--weights", "10GiB", "--tp", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["model"]["weight_bytes"] == 10 * GIB and data["model"]["weights"]["source"] == "given"
    assert data["capacity"]["weight_bytes_per_gpu"] == 5 * GIB
    code, out, err = cli("estimate", "llama-3.1-8b", "--format", "json")
    assert json.loads(out)["model"]["weights"]["source"] == "bundled"  # model_specs/weights.json lists it
    code, out, err = cli("estimate", "gemma-2-9b", "--format", "json")  # a bundled model weights.json does not list
    assert json.loads(out)["model"]["weights"]["source"] == "estimated from config"


def test_roles_from_tensor_names():
    from kvplan.weights.roles import layer_of, role_of

    expected = {
        "model.embed_tokens.weight": "embeddings",
        "lm_head.weight": "lm_head",
        "model.norm.weight": "norms",
        "model.layers.0.self_attn.q_norm.weight": "norms",
        "model.layers.0.self_attn.sinks": "attention",
        "model.layers.3.mlp.gate.weight": "router",
        "model.layers.3.mlp.gate.e_score_correction_bias": "router",
        "model.layers.0.block_sparse_moe.experts.7.w1.weight": "experts",
        "model.layers.0.mlp.experts.gate_up_proj_blocks": "experts",
        "model.layers.0.mlp.shared_experts.gate_proj.weight": "mlp",
        "model.layers.0.mlp.shared_expert.gate_proj.weight": "mlp",
        "model.layers.0.mlp.shared_expert_gate.weight": "router",  # hidden -> 1, a ReplicatedLinear in vLLM
        "backbone.layers.1.mixer.in_proj.weight": "mixer",
        # Nemotron-H's MoE layer: the router is the mixer's GateLinear (replicated in vLLM), the experts its own
        "backbone.layers.3.mixer.gate.weight": "router",
        "backbone.layers.3.mixer.gate.e_score_correction_bias": "router",
        "backbone.layers.3.mixer.experts.5.up_proj.weight": "experts",
        "transformer.wte.weight": "embeddings",
        "transformer.ln_f.weight": "norms",
        "transformer.h.0.attn.c_attn.weight": "attention",
        "vision_tower.encoder.layers.0.mlp.fc1.weight": "vision",
        "token_embd.weight": "embeddings",
        "output.weight": "lm_head",
        "output_norm.weight": "norms",
        "blk.0.ffn_gate_inp.weight": "router",
        "blk.2.ffn_down_exps.weight": "experts",
        "blk.2.attn_k.weight": "attention",
    }
    assert {n: role_of(n) for n in expected} == expected
    assert layer_of("model.layers.12.mlp.up_proj.weight") == 12 and layer_of("blk.7.attn_q.weight") == 7
    assert layer_of("lm_head.weight") == NO_LAYER


def test_stage_pools_follow_their_own_weights():
    """PP 2 on H100s: stage 0 holds the embeddings, stage 1 the head and final norm,
    18 layers each; each stage's pool is 72 GiB - its weights - 2 GiB, and the
    vectorised sweep agrees with capacity()."""
    from dataclasses import replace

    import numpy as np

    from kvplan.capacity.hardware import make_deployment
    from kvplan.capacity.pool import capacity, pool_bytes_per_stage
    from kvplan.sources import load_model
    from kvplan.techniques.base import Plan
    from kvplan.workload import vector

    w = from_bundled("gpt-oss-120b")
    per_layer = 53100288 + 1694269440 + 737536 + 11520  # attention, experts, router, norms (weights.json)
    first, last = 1158266880 + 18 * per_layer, 1158266880 + 5760 + 18 * per_layer
    assert stage_weight_bytes(w, 36, pp=2) == [first, last]
    deployment = replace(make_deployment("h100", pp=2), weights=w)
    plan = Plan(load_model("gpt-oss-120b"))
    budget = int(int(79.18 * GIB) * 0.9)  # the driver's total for an H100
    assert pool_bytes_per_stage(plan, deployment) == ([budget - first - 2 * GIB, budget - last - 2 * GIB], [first, last])
    n = np.array([1, 4096, 131072], dtype=np.int64)
    fit, pool, _ = vector.max_concurrency(plan, deployment, n)
    assert pool == budget - last - 2 * GIB
    assert [int(x) for x in fit] == [capacity(plan, deployment, int(t)).max_concurrency for t in n]
