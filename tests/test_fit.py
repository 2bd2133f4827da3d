"""kvplan fit: options worked out by hand, the screen against the planner, the grid.

Hand figures use the catalog's datasheet memory (GiB), mem_util 0.9 and the
2 GiB reserve: usable = int(memory x 0.9), pool = usable - reserve - weights
per GPU, sequences = floor(pool / one sequence's bytes on the fullest GPU).
A weights size given with --weights splits evenly: ceil(total / (tp x pp)).
"""

from __future__ import annotations

import pytest

from kvplan.capacity.gpus import CATALOG
from kvplan.errors import UsageError
from kvplan.fit.grid import parse_gpus, split_allow, split_reason, technique_sets
from kvplan.fit.search import FitRequest, search

GIB = 1024**3
RESERVE = 2 * GIB


def usable(gpu: str) -> int:
    # what the driver reports of the card (an H100: 79.18 GiB, llm-d's logs) x the 0.9 utilization
    return int(CATALOG[gpu].usable_bytes * 0.9)


def req(model, context, n, gpus, **kw):
    kw.setdefault("kv_dtypes", ("auto",))
    return FitRequest(model, context, n, tuple(parse_gpus(gpus)), **kw)


def find(result, gpu, tp, pp, dtype_prefix="bf16"):
    return next(c for c in result.candidates
                if c.gpu.name == gpu and c.tp == tp and c.pp == pp and c.kv_dtype.startswith(dtype_prefix))


# --- dense GQA: Llama-3.1-8B with 2 KV heads (--set), 16 GB of weights given ------------------

def _gqa2(gpus, n=50):
    return search(req("llama-3.1-8b", 131072, n, gpus, weights="16GB", overrides=("num_key_value_heads=2",)))


def test_smaller_tp_wins_when_kv_heads_would_be_replicated():
    # one KV head-layer-token: 128 x (K+V) x 2 B = 512 B; 128K tokens: 64 MiB
    head_layer = 512 * 131072
    pool4 = usable("h100-sxm") - RESERVE - 4_000_000_000  # 4 GPUs: 16 GB / 4 each
    # tp 4: 2 KV heads cannot split 4 ways, each rank keeps one head of all 32 layers
    tp4 = pool4 // (1 * 32 * head_layer)
    # tp 2 x pp 2: one head of 16 layers per GPU
    tp2pp2 = pool4 // (1 * 16 * head_layer)
    # int(79.18 GiB x 0.9) = 76,516,989,861 - 2 GiB - 4 GB = 70,369,506,213 B: 32 x 2 GiB, 65 x 1 GiB
    assert usable("h100-sxm") == 76_516_989_861
    assert (tp4, tp2pp2) == (32, 65)
    # fewer GPUs: 1 GPU (2 heads x 32 layers), 2 GPUs (tp 2 or pp 2: 32 head-layers), 3 GPUs (pp 3: 11 layers first)
    one = (usable("h100-sxm") - RESERVE - 16_000_000_000) // (2 * 32 * head_layer)
    two = (usable("h100-sxm") - RESERVE - 8_000_000_000) // (32 * head_layer)
    three = (usable("h100-sxm") - RESERVE - 5_333_333_334) // (2 * 11 * head_layer)
    assert max(one, two, three) < 50

    result = _gqa2("h100")
    best = result.options[0]
    assert (best.gpu.name, best.gpus, best.tp, best.pp) == ("h100-sxm", 4, 2, 2)
    assert best.max_concurrency == tp2pp2
    assert best.kv_bytes_per_gpu == 50 * 16 * head_layer
    assert best.weight_bytes_per_gpu == 4_000_000_000
    loser = find(result, "h100-sxm", 4, 1)
    assert not loser.ok and loser.constraint == "pool" and loser.max_concurrency == tp4
    assert find(result, "h100-sxm", 1, 1).max_concurrency == one
    assert find(result, "h100-sxm", 1, 3).max_concurrency == three


def test_second_gpu_kind_changes_the_winner():
    # H200: 2 GPUs hold 32 head-layers per sequence (tp 2: one head each; pp 2: 16 layers each)
    head_layer = 512 * 131072
    two = (usable("h200") - RESERVE - 8_000_000_000) // (32 * head_layer)
    one = (usable("h200") - RESERVE - 16_000_000_000) // (64 * head_layer)
    assert (one, two) == (27, 58)
    result = _gqa2("h100,h200")
    best = result.options[0]
    assert (best.gpu.name, best.gpus, best.max_concurrency) == ("h200", 2, two)
    # cost: 2 x 6.35 against 4 H100s at 4.76: the H200s again
    by_cost = search(req("llama-3.1-8b", 131072, 50, "h100,h200", weights="16GB",
                         overrides=("num_key_value_heads=2",), objective="cost"))
    assert (by_cost.options[0].gpu.name, by_cost.options[0].gpus) == ("h200", 2)
    assert by_cost.options[0].cost_per_hour == pytest.approx(2 * 6.35)


# --- MLA: DeepSeek-V2-Lite, 27 latent layers of 512 + 64 elements, 32 GB of weights given -------

def _mla(objective):
    return search(req("deepseek-v2-lite", 32768, 40, "l40s,h100", weights="32GB", objective=objective))


def test_mla_latent_is_replicated_so_pp_beats_tp():
    layer_seq = 576 * 2 * 32768  # one latent layer, one 32K sequence, bf16
    l40 = usable("l40s") - RESERVE
    one = (l40 - 32_000_000_000) // (27 * layer_seq)
    tp2 = (l40 - 16_000_000_000) // (27 * layer_seq)  # the latent is whole on both ranks
    pp2 = (l40 - 16_000_000_000) // (14 * layer_seq)  # first stage: 14 of 27 layers
    h100_one = (usable("h100-sxm") - RESERVE - 32_000_000_000) // (27 * layer_seq)
    # an L40S gives int(44.42 GiB x 0.9) = 42,926,050,639 B, less the 2 GiB reserve 40,778,566,991; 27 latent
    # layers of a 32K sequence take 1,019,215,872 B, 14 layers 528,482,304 B; an H100 42,369,506,213 B after 32 GB
    assert l40 == 40_778_566_991
    assert (one, tp2, pp2, h100_one) == (8, 24, 46, 41)

    by_gpus = _mla("gpus")
    best = by_gpus.options[0]
    assert (best.gpu.name, best.gpus, best.max_concurrency) == ("h100-sxm", 1, h100_one)

    by_cost = _mla("cost")
    best = by_cost.options[0]
    assert (best.gpu.name, best.tp, best.pp, best.max_concurrency) == ("l40s", 1, 2, pp2)
    assert best.cost_per_hour == pytest.approx(2 * 1.40)
    tp = find(by_cost, "l40s", 2, 1)
    assert tp.constraint == "pool" and tp.max_concurrency == tp2


# --- Llama-3.1-70B at 128K x 16 on H200 -------------------------------------------------------

SEQ_70B = 80 * 8 * 128 * 2 * 2 * 131072  # layers x KV heads x head x (K+V) x bf16 x tokens


def test_seq_bytes_70b_is_40_gib():
    assert SEQ_70B == 40 * GIB


def test_must_hold_fewest_h200s_then_the_fp8_option_with_its_caveat():
    from kvplan.sources import load_model_and_weights

    weights = load_model_and_weights("llama-3.1-70b")[1].total_bytes
    assert weights == pytest.approx(2 * 70.55e9, rel=0.01)  # bf16 checkpoint, 70.6 B parameters
    per_gpu = usable("h200") - RESERVE
    # no split of 6 GPUs can hold the weights plus 16 x 40 GiB: the pools together are too small
    assert 6 * per_gpu < weights + 16 * SEQ_70B <= 7 * per_gpu
    result = search(req("llama-3.1-70b", 131072, 16, "h200", engine="vllm", kv_dtypes=("auto", "fp8")))
    best = result.options[0]
    assert best.gpus == 7 and best.kv_dtype == "bf16" and best.caveat_text == "none"
    assert best.max_concurrency >= 16 and best.engine_concurrency >= 16
    fp8 = [c for c in result.options if c.kv_dtype.startswith("fp8")]
    assert fp8 and fp8[0].caveat_text == "kv fp8_e4m3: quality risk"
    assert fp8[0].gpus < best.gpus
    assert result.dropped == []


def test_fp8_kv_beats_adding_gpus():
    pool4 = usable("h200") - RESERVE - 35_000_000_000  # 140 GB over 4 GPUs
    fp8_tp4 = pool4 // (SEQ_70B // 2 // 4)  # 1 byte per element, a quarter of the heads
    bf16_tp4 = pool4 // (SEQ_70B // 4)
    assert (fp8_tp4, bf16_tp4) == (18, 9)
    result = search(req("llama-3.1-70b", 131072, 16, "h200", weights="140GB", kv_dtypes=("auto", "fp8"),
                        quality_first=False))
    best = result.options[0]
    assert best.kv_dtype.startswith("fp8") and (best.gpus, best.tp, best.pp) == (4, 4, 1)
    assert best.max_concurrency == fp8_tp4
    bf16 = [c for c in result.options if c.kv_dtype == "bf16"]
    assert min(c.gpus for c in bf16) == 7
    assert find(result, "h200", 4, 1).max_concurrency == bf16_tp4


# --- the screen is the planner ------------------------------------------------------------------

@pytest.mark.parametrize("model,context,allowed,kv_dtypes", [
    ("llama-3.1-70b", 131072, ("page:16", "prefix:tokens=4096,requests=8"), ("auto", "fp8")),
    ("deepseek-v2-lite", 32768, ("evict:0.5",), ("auto",)),
    ("jamba-v0.1", 65536, ("kivi", "cla:2"), ("auto",)),
    ("gemma-3-27b", 65536, ("offload:cpu=64GiB,active=8",), ("auto",)),
])
def test_screen_matches_planner_evaluate(model, context, allowed, kv_dtypes):
    from kvplan.fit.search import deployment_for
    from kvplan.planner import evaluate
    from kvplan.sources import load_model_and_weights
    from kvplan.techniques.registry import build_all
    from kvplan.workflows import apply_kv_dtype

    r = FitRequest(model, context, 8, tuple(parse_gpus("h100,l40s,mi300x")), max_gpus=8, allowed=allowed,
                   kv_dtypes=kv_dtypes)
    result = search(r, verify_top=0)
    base, record = load_model_and_weights(model)
    checked = 0
    for c in result.candidates[::3]:
        if c.max_concurrency is None:
            continue
        spec, _ = apply_kv_dtype(base, c.kv_dtype)
        got = evaluate(spec, build_all(list(c.techniques)), context, 8, deployment_for(r, c, record), weights=record)
        assert got.capacity.max_concurrency == c.max_concurrency, c.label()
        assert got.kv_bytes_per_gpu == c.kv_bytes_per_gpu, c.label()
        assert got.capacity.weight_bytes_per_gpu == c.weight_bytes_per_gpu, c.label()
        assert got.capacity.pool_bytes == c.pool_bytes_per_gpu, c.label()
        assert got.decode.step_ms == pytest.approx(c.decode_ms_per_token, rel=1e-9), c.label()
        checked += 1
    assert checked > 10


# --- the grid -----------------------------------------------------------------------------------

def test_split_validity_counts_replication():
    from kvplan.sources import load_model_and_weights

    model = load_model_and_weights("llama-3.1-70b")[0]  # 64 query heads, 8 KV heads, 80 layers
    assert split_reason(model, 8, 1) is None
    assert split_reason(model, 16, 1) is None  # each KV head on 2 ranks
    assert "heads not divisible" in split_reason(model, 3, 1)
    assert "heads not divisible" in split_reason(model, 6, 1)
    assert split_reason(model, 1, 81) is not None


def test_allow_splits_on_technique_names_and_sets_take_one_per_term():
    assert split_allow(["fp8,kivi:bits=2,group=32", "evict:0.5,recent=64", "offload"]) == [
        "fp8", "kivi:bits=2,group=32", "evict:0.5,recent=64", "offload:cpu=512GiB"]
    sets = technique_sets(["kivi", "evict", "pyramid"])
    assert len(sets) == 6  # (none | kivi) x (none | evict | pyramid)
    assert () in sets and ("kivi", "evict:0.5") in sets
    assert not any("evict:0.5" in s and "pyramid:0.5" in s for s in sets)


def test_unknown_gpu_names_the_catalog():
    with pytest.raises(UsageError) as err:
        parse_gpus("h100,h900")
    assert err.value.exit_code == 2 and "h200" in err.value.hint and "mi300x" in err.value.hint


def test_headroom_ranks_the_most_sequences_first():
    # DeepSeek-V2-Lite at 32K on L40S, 32 GB of weights: PP divides the latent layers, TP does not
    layer_seq = 576 * 2 * 32768
    l40 = usable("l40s") - RESERVE
    pp4 = (l40 - 8_000_000_000) // (7 * layer_seq)  # 27 layers over 4 stages: 7, 7, 7, 6
    result = search(req("deepseek-v2-lite", 32768, 40, "l40s", weights="32GB", max_gpus=4, objective="headroom"))
    best = result.options[0]
    assert (best.tp, best.pp, best.max_concurrency) == (1, 4, pp4)
    assert [c.max_concurrency for c in result.options] == sorted((c.max_concurrency for c in result.options), reverse=True)


def test_fewer_caveated_techniques_rank_first_at_equal_gpus():
    result = search(req("llama-3.1-8b", 131072, 64, "h100", allowed=("kivi", "evict"), engine="vllm"))
    first = result.options[0]
    assert first.techniques == ("kivi",)
    # eviction is not in vLLM's accounting: kivi + evict holds no more sequences there
    both = next(c for c in result.options if c.techniques == ("kivi", "evict:0.5") and c.gpus == first.gpus
                and (c.tp, c.pp) == (first.tp, first.pp))
    assert both.engine_concurrency == pytest.approx(first.engine_concurrency)
    assert both.max_concurrency > first.max_concurrency


def test_default_context_is_capped_at_a_short_models_maximum(cli):
    # as in `kvplan estimate`: gpt2 is trained for 1,024 tokens, so fit without --context plans 1,024 (vLLM refuses a
    # max_model_len of 4,096 for it); an explicit --context 4096 keeps the user's length, and vLLM's refusal
    import json

    code, out, err = cli("fit", "gpt2", "--engine", "vllm", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["context_tokens"] == 1024 and data["passing"] > 0
    code, out, err = cli("fit", "gpt2", "--engine", "vllm", "--context", "4096")
    assert code == 1 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in err


def test_vllm_holds_a_float32_checkpoint_in_bf16_so_one_gpu_fits_it():
    # StarCoder's checkpoint is float32: 15.5B parameters x 4 B = 57.8 GiB, more than an L40S's 48 GB, so
    # the planner (the checkpoint as stored) needs two GPUs. vLLM's dtype auto loads it in bf16 (2 B a
    # parameter, 28.9 GiB), and fit under --engine vllm found the 2-GPU plan where one L40S serves it.
    req = FitRequest(model="starcoder", context_tokens=8192, concurrency=4, gpus=(CATALOG["l40s"],))
    ideal = search(req).options[0]
    served = search(FitRequest(model="starcoder", context_tokens=8192, concurrency=4, gpus=(CATALOG["l40s"],),
                               engine="vllm")).options[0]
    params = ideal.weight_bytes_per_gpu * ideal.pp // 4  # the stored bytes over two stages, 4 B each
    assert abs(params / 15.5e9 - 1) < 0.01
    assert (ideal.gpus, served.gpus) == (2, 1)
    assert served.weight_bytes_per_gpu == params * 2


def test_a_vllm_start_refusal_that_is_not_memory_screens_out_as_the_planner_refuses():
    # Nemotron-H-8B on one L4 under vLLM 0.34: the pool holds a 4K request (about 7 of them), but a model with Mamba
    # layers needs a block per decode sequence with FULL decode CUDA graphs (0.20+ CompilationConfig.
    # resolve_cudagraph_mode_and_sizes), and vLLM's default max_num_seqs on a card under 70 GiB is 256
    # (arg_utils.py get_batch_defaults), more than a 24 GB card's pool has blocks. The screen passed it on memory
    # alone and the planner then refused it: fit printed "dropped (the screen and the planner disagree)".
    result = search(FitRequest(model="nemotron-h-8b", context_tokens=4096, concurrency=1, gpus=(CATALOG["l4"],),
                               engine="vllm"))
    assert result.dropped == []
    one = [c for c in result.candidates if c.gpus == 1 and c.kv_dtype == "bf16"]
    assert one and all(c not in result.options for c in one)
    assert one[0].reason.startswith("vLLM would not start: max_num_seqs (256) exceeds the")
    assert all(c.gpus >= 2 for c in result.options)


def test_sglang_screen_sizes_each_gpu_kinds_pool_apart():
    # SGLang's pool is what mem_fraction_static of the GPU leaves after the weights, so an L40S (48 GB) holds far
    # more 4K requests of Mistral-7B (14.5 GB of bf16 weights) than an L4 (24 GB). The screen cached one pool per
    # (plan, tp, pp) whatever the GPU, so every GPU kind after the first got the first one's figure and the planner
    # dropped it ("the screen and the planner disagree"), or crashed where the first GPU's pool was empty.
    result = search(FitRequest(model="mistral-7b-v0.1", context_tokens=4096, concurrency=1,
                               gpus=(CATALOG["l4"], CATALOG["l40s"]), engine="sglang"))
    assert result.dropped == []
    one = {c.gpu.name: c.engine_concurrency for c in result.candidates
           if c.gpus == 1 and c.kv_dtype == "bf16" and c.engine_concurrency is not None}
    assert set(one) == {"l4", "l40s"}
    # a request is 32 layers x 8 KV heads x 128 x 2 x 2 B = 128 KiB a token x 4,096 = 0.5 GiB. SGLang's default
    # mem_fraction_static is about 0.85 on a 48 GB card and 0.68 on a 24 GB one (server_args.py, by GPU memory), so
    # the pools are about 44 x 0.85 - 13.5 = 24 GiB and 21.7 x 0.68 - 13.5 = 1.3 GiB: some 45 requests apart
    assert one["l40s"] - one["l4"] > 40


def test_a_stage_that_holds_a_borrowed_cache_is_screened_as_the_planner_shards_it():
    # DeepSeek-V4.1-Flash's later layers read the compressed cache of layer 20 (borrows) and keep only their
    # 128-token window themselves. At PP 3 (layers 0-12, 13-26, 27-39) the third stage's first layer must hold
    # that cache itself (capacity.shard hold_borrowed): 4,096 more latent entries of 1,024 B there. The screen
    # measured each layer alone, so it missed those 4 MiB and promised more sequences than the planner found
    # (every PP 3, 5 and 7 option was dropped as "the screen and the planner disagree").
    result = search(FitRequest(model="deepseek-v4.1-flash", context_tokens=4096, concurrency=1,
                               gpus=(CATALOG["h200"],), kv_dtypes=("auto",)))
    assert result.dropped == []
    assert any(c.pp == 3 for c in result.options)


def test_sglang_screen_refuses_a_context_above_the_models_as_sglang_does():
    # GPT-Neo-125M's max_position_embeddings is 2,048: SGLang refuses --context-length 4,096 unless
    # SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (model_config.py _derive_context_length). The screen passed every
    # deployment and the planner then refused each one.
    result = search(FitRequest(model="gpt-neo-125m", context_tokens=4096, concurrency=1,
                               gpus=(CATALOG["l4"],), engine="sglang"))
    assert result.dropped == [] and result.options == []
    startable = [c for c in result.candidates if not c.reason.startswith("heads not divisible")]  # 12 heads
    assert startable and all("SGLang refuses --context-length 4,096: above" in c.reason and "2,048 tokens" in c.reason
                             for c in startable)


def test_fit_screens_sglang_speculation_by_sglangs_rules_not_vllms(tmp_path):
    # Nemotron-H-8B with num_nextn_predict_layers 2: vLLM's nemotron_h_mtp.py NemotronHMultiTokenPredictor asserts
    # one step, so vLLM refuses the draft; SGLang 0.5.23 prices both layers into its cell (sglang_mtp.draft_layers:
    # eagle_draft_num_layers = num_nextn_predict_layers). The screen ran vLLM's check first whatever --engine said.
    import json
    from pathlib import Path

    from kvplan.request import Speculation

    raw = json.loads((Path(__file__).parent / "data" / "configs" / "nemotron-h-8b-tf5.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**raw, "num_nextn_predict_layers": 2}))
    request = dict(model=str(path), context_tokens=4096, concurrency=1, gpus=(CATALOG["h100-sxm"],), max_gpus=1,
                   kv_dtypes=("auto",), speculation=Speculation.parse(mtp=True))
    result = search(FitRequest(engine="sglang", **request))
    assert result.options and result.dropped == []
    with pytest.raises(UsageError, match="NemotronHMultiTokenPredictor asserts 1"):
        search(FitRequest(engine="vllm", **request))
