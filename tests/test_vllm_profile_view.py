"""vLLM's profile predicted from the GPU shown as a table (text/Markdown) and as engine.profile (JSON)
(kvplan/engines/vllm_profile_view.py): the same terms as the one-line note engine.notes keeps, in bytes.

The figures are worked out by hand as in tests/test_vllm_profile.py test_estimate_takes_max_num_seqs_and_enforce_eager:
`kvplan estimate llama-3.1-8b --gpu h100 --engine vllm@0.33 --max-model-len 8192 --mem-util 0.9 --max-num-seqs 256`:
  requested  int(85,018,877,624 B, the H100's driver total (79.18 GiB) x 0.9) = 76,516,989,861 B (71.26 GiB)
  weights    16,060,522,496 B bundled + the rotary table 131,072 rows x 128 x 2 B = 33,554,432 B
             = 16,094,076,928 B (14.99 GiB)
  activation the forward 8,192 x 4,096 x 26 B = 872,415,232 B (0.81 GiB; the V2 warm-up sampler pass,
             256 x 128,256 x 14 B = 459,669,504 B, is smaller)
  non-torch  NON_TORCH_BYTES_V1 (0.13 GiB at TP 1)
  kept       V2's penalty bin counts 256 x 128,256 x 4 B = 131,334,144 B and its two int32 bitmasks (prompt bin
             mask, grammar bitmask) 2 x 256 x cdiv(128,256, 32) x 4 B = 2 x 256 x 4,008 x 4 = 8,208,384 B:
             139,542,528 B (0.13 GiB)
  graphs     GRAPH_FIRST_BYTES + 32 layers x 84 further graphs x GRAPH_PER_LAYER_GRAPH_BYTES (51 PIECEWISE + 35 FULL)
  available  76,516,989,861 - 16,094,076,928 - 872,415,232 - 139,586,437 - 139,542,528 = 59,271,368,736 B less
             the graphs
"""

import json

from kvplan.engines.vllm_cudagraph import GRAPH_FIRST_BYTES, GRAPH_PER_LAYER_GRAPH_BYTES
from kvplan.engines.vllm_non_torch import NON_TORCH_BYTES_V1

GIB = 2**30
BASE = ("estimate", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--mem-util", "0.9",
        "--max-num-seqs", "256")
REQUESTED = 76_516_989_861
WEIGHTS = 16_060_522_496 + 131_072 * 128 * 2
FORWARD = 8_192 * 4_096 * 26
BIN_COUNTS = 256 * 128_256 * 4
BITMASKS = 2 * 256 * (128_256 // 32) * 4  # 128,256 = 32 x 4,008 words a row
KEPT = BIN_COUNTS + BITMASKS  # 139,542,528 B
GRAPHS = GRAPH_FIRST_BYTES + 32 * 84 * GRAPH_PER_LAYER_GRAPH_BYTES
BEFORE_GRAPHS = 59_271_368_736
KEPT_FROM = "V2's penalty bin counts, prompt bin mask and grammar bitmask"


def _engine(cli, *args):
    code, out, err = cli(*BASE, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)["engine"]


def _markdown(cli, *args):
    code, out, err = cli(*BASE, *args, "--format", "markdown")
    assert code == 0, err
    return out


def test_engine_profile_holds_the_terms_in_bytes(cli):
    assert NON_TORCH_BYTES_V1 == 139_586_437 and REQUESTED - WEIGHTS - FORWARD - NON_TORCH_BYTES_V1 - KEPT \
        == BEFORE_GRAPHS and KEPT == 139_542_528
    engine = _engine(cli, "--engine", "vllm@0.33")
    p = engine["profile"]
    assert (p["requested_bytes"], p["weight_bytes"], p["activation_bytes"], p["non_torch_bytes"], p["kept_bytes"],
            p["cuda_graph_bytes"]) == (REQUESTED, WEIGHTS, FORWARD, 139_586_437, KEPT, GRAPHS)
    assert p["available_bytes"] == p["pool_bytes"] == engine["kv_memory_bytes"] == BEFORE_GRAPHS - GRAPHS
    assert (p["activation_from"], p["profiled_tokens"], p["kept_from"]) == ("forward", 8_192, KEPT_FROM)
    assert "32 MiB of rotary cos/sin tables" in p["weights_from"] and p["cuda_graph_from"] == "modelled, empirical"
    assert p["extensible"] is None
    # the one-line form stays in engine.notes
    assert any(n.startswith("available KV memory predicted from the GPU: requested 79.18 GiB x 0.9 = 71.26 GiB")
               for n in engine["notes"])
    eager = _engine(cli, "--engine", "vllm@0.33", "--enforce-eager")["profile"]
    assert eager["cuda_graph_bytes"] == 0 and eager["available_bytes"] == BEFORE_GRAPHS
    assert _engine(cli, "--engine", "vllm@0.33", "--kv-memory", "10GiB")["profile"] is None


def test_engine_profile_under_the_extensible_cache(cli):
    # vLLM 0.34: the same terms, no graph estimate subtracted (profile_cudagraph_memory returns 0), so
    # 'available' (the reserved capacity) is 59,271,368,736 B; the pool after warmup (vllm_extensible
    # measured_pool_bytes) = ceil(85,018,877,624 x 0.9) = 76,516,989,862 - resident - peak 872,415,232, resident =
    # weights + non-torch + bin counts and bitmasks + the captured graphs (the same 51 + 35 graphs); the other
    # bound, total - pre-snapshot - resident - margin max(1 GiB, 0.75 x peak), is larger
    engine = _engine(cli, "--engine", "vllm@0.34")
    p = engine["profile"]
    assert p["cuda_graph_bytes"] == 0 and p["extensible"]["captured_graph_bytes"] == GRAPHS
    assert p["available_bytes"] == BEFORE_GRAPHS == engine["reserved_kv_memory_bytes"]
    resident = WEIGHTS + 139_586_437 + KEPT + GRAPHS
    assert p["extensible"]["resident_bytes"] == resident and p["extensible"]["margin_bytes"] == GIB
    assert p["pool_bytes"] == 76_516_989_862 - resident - FORWARD == engine["kv_memory_bytes"]


def test_text_shows_the_profile_as_a_table_and_short_notes(cli):
    out = _markdown(cli, "--engine", "vllm@0.33")
    for row in ("| requested (total x utilization) | 71.26 | total 79.18 GiB x 0.9 |",
                "| weights | 14.99 | checkpoint, bundled, + 32 MiB of rotary cos/sin tables (vllm_rope_cache) |",
                "| peak activation | 0.81 | forward; 8,192 profiled tokens; heuristic |",
                "| non-torch | 0.13 |",
                f"| kept after the profile | 0.13 | {KEPT_FROM} |",
                "| CUDA graphs (subtracted) | 0.54 | estimate vLLM subtracts (modelled, empirical) |",
                f"| available | {(BEFORE_GRAPHS - GRAPHS) / GIB:.2f} |"):
        assert row in out, row
    assert f"{(BEFORE_GRAPHS - GRAPHS) / GIB:.2f}" == "54.66"
    # the breakdown is not repeated as one long note; the caveats stay, one a line
    assert "requested 79.18 GiB x 0.9" not in out and "peak activation 0.81 GiB" not in out
    notes = [line for line in out.splitlines() if "note:" in line]
    assert any("fitted heuristics" in n for n in notes)
    assert any("not checked against a log" in n for n in notes)
    assert max(len(n) for n in notes) < 400
    eager = _markdown(cli, "--engine", "vllm@0.33", "--enforce-eager")
    assert "| CUDA graphs | 0.00 | none subtracted by this release or mode |" in eager
    assert "| available | 55.20 |" in eager  # 59,271,368,736 B
    given = _markdown(cli, "--engine", "vllm@0.33", "--kv-memory", "10GiB")
    assert "memory profile predicted from the GPU" not in given


def test_text_table_under_the_extensible_cache(cli):
    out = _markdown(cli, "--engine", "vllm@0.34")
    assert "| CUDA graphs (not subtracted) | 0.54 |" in out
    assert "| available | 55.20 | requested - the terms above: 'Available KV cache memory'; the capacity" in out
    # 76,516,989,862 - (16,094,076,928 + 139,586,437 + 139,542,528 + graphs) - 872,415,232
    pool = 76_516_989_862 - (WEIGHTS + 139_586_437 + KEPT + GRAPHS) - FORWARD
    assert f"| KV pool after warmup | {pool / GIB:.2f} |" in out and f"{pool / GIB:.2f}" == "54.66"
    assert "no 0.34 log checks it" in out
    # the graph note is the row's: not repeated as a note
    assert "note: no CUDA-graph estimate is subtracted" not in out


def test_calibrate_shows_the_breakdown_once(cli):
    # v031_llama31_8b_a100_80gb_notes.log: 79.25 GiB x 0.92 = 72.91 GiB requested; the model's weights
    # 16,060,522,496 + 33,554,432 B = 14.99 GiB, the log's 15.00; forward 8,192 x 4,096 x 26 B = 0.81 GiB;
    # bin counts 1,024 x 128,256 x 4 B = 525,336,576 B + the bitmasks 2 x 1,024 x 4,008 x 4 B = 32,833,536 B
    # = 558,170,112 B = 0.52 GiB
    log = "tests/data/vllm_logs/v031_llama31_8b_a100_80gb_notes.log"
    code, out, err = cli("calibrate", log, "--format", "markdown")
    assert code == 0, err
    assert "| term | model's weights | logged weights | what it is / source |" in out
    assert "| requested (total x utilization) | 72.91 | 72.91 |" in out
    assert "| weights | 14.99 | 15.00 | model's weights: checkpoint, bundled" in out
    assert "| peak activation | 0.81 | 0.81 | forward; 8,192 profiled tokens; heuristic |" in out
    assert f"| kept after the profile | 0.52 | 0.52 | {KEPT_FROM} |" in out
    assert out.count("requested 79.25 GiB x 0.92") == 0
    figures = [line for line in out.splitlines() if line.startswith("| Available KV cache memory")]
    assert len(figures) == 2 and all(line.endswith("| profile table below, 'available' |") for line in figures)
    code, out, err = cli("calibrate", log, "--format", "json")
    data = json.loads(out)
    predicted = [f for f in data["figures"] if f["kind"] == "prediction"]
    assert all("requested 79.25 GiB x 0.92 = 72.91 GiB" in f["explanation"] for f in predicted)
    assert all("brief" not in f for f in data["figures"])


def test_the_refusal_names_each_term_in_one_short_line(cli):
    # Llama-3.1-8B on an L4 at --mem-util 0.7 (vllm@0.33, the L4's defaults: 256 sequences, 2,048 tokens):
    # requested 22.03 GiB x 0.7 = 15.42; weights 16,094,076,928 B = 14.99; the V2 warm-up sampler pass
    # 256 x 128,256 x 14 B = 459,669,504 B = 0.43 (the forward 2,048 x 4,096 x 26 B = 218,103,808 B is
    # smaller); non-torch 0.13; bin counts 131,334,144 B + bitmasks 8,208,384 B = 139,542,528 B = 0.13; graphs
    # 51 PIECEWISE + 35 FULL as above, 0.54: 15.42 - 14.99 - 0.43 - 0.13 - 0.13 - 0.54 = -0.80 GiB (in bytes:
    # int(int(22.03 GiB) x 0.7) = 16,558,172,667 - 16,094,076,928 - 459,669,504 - 139,586,437 - 139,542,528
    # - 581,945,244 = -856,647,974 B = -0.798 GiB)
    assert (f"{459_669_504 / GIB:.2f}", f"{GRAPHS / GIB:.2f}") == ("0.43", "0.54")
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "l4", "--mem-util", "0.7", "--reserve", "0",
                         "--engine", "vllm@0.33")
    assert code == 2
    line = err.strip()
    assert ("requested 15.42 GiB (total 22.03 GiB x 0.7) - weights 14.99 - peak activation 0.43 - non-torch 0.13 "
            "- kept after the profile 0.13 - CUDA graphs (subtracted) 0.54 = available -0.80 GiB") in line
    assert "\n" not in line and len(line) < 400
