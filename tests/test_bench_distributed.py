"""`kvplan bench --tp T --pp P` on 2 and 4 gloo ranks (Triton interpreter, CPU
shrink, 16 tokens x 1 sequence, baseline only): every rank's measured bytes
and blocks equal the planner's per-GPU prediction, and both equal the figure
worked out by hand below from the shrunk shapes and the engine rules
(vLLM: KV heads split or replicated, MLA latent on every rank, Mamba-2 groups
padded to TP, uneven PP stages).

Shapes after the CPU shrink (kvplan.bench.shrink), written out here:
- llama-3.1-8b: 4 layers, 2 KV heads x 128, bf16, 8 query heads;
- deepseek-v2-lite: 4 latent (MLA) layers of 128 + 32 = 160 per token, bf16;
- bamba-9b: 9 layers (original 0, 4, 8, 9, 12, ..., 28; 9 is attention, the
  4th kept), attention 2 KV heads x 128 bf16, Mamba-2 n_groups 1, 8 heads x
  head_dim 16, d_state 16, conv kernel 4, bf16 conv and SSM.
At 16 tokens and 16-token blocks every sequence holds one block per layer.

Ranks are processes forked from a forkserver (torch already imported) with
torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT);
one case goes through torchrun itself (`--launch 2`, fresh interpreters). Each
process has a hard timeout, so a hang fails the test.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before any kernel module is imported

from kvplan.bench.placement import (
    Placement, check_parallel, make_placement, rank_kv_heads, rank_model, rendezvous, stage_layers,
)
from kvplan.errors import UsageError

TINY = ["--device", "cpu", "--context", "16", "--batch", "1", "--repeats", "1", "--quiet", "-t", "baseline"]
PROC_TIMEOUT_S = 240


# ---- pure: placement, engine rules, bad input (no processes) -------------------------------

def test_stage_layers_follow_vllm_get_pp_indices():
    # vLLM docs: 61 layers over PP 2 -> [31, 30]; over PP 4 -> [15, 15, 16, 15]
    assert [len(stage_layers(61, 2, s)) for s in range(2)] == [31, 30]
    assert [len(stage_layers(61, 4, s)) for s in range(4)] == [15, 15, 16, 15]
    assert stage_layers(9, 2, 0) == range(0, 5) and stage_layers(9, 2, 1) == range(5, 9)


def test_kv_heads_split_or_replicated():
    assert [rank_kv_heads(8, 2, r) for r in range(2)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # 2 KV heads on 4 ranks: ranks 0, 1 hold head 0, ranks 2, 3 head 1 (their query heads' group)
    assert [rank_kv_heads(2, 4, r) for r in range(4)] == [[0], [0], [1], [1]]


def test_placement_tp_innermost():
    p = make_placement(5, 8, 1, 4, 2, "cuda")
    assert p == Placement(rank=5, world_size=8, device="cuda:1", tp_rank=1, pp_stage=1, tp=4, pp=2, local_rank=1)


def test_rank_model_pads_mamba2_groups():
    from kvplan.bench.shrink import shrink_model
    from kvplan.sources import load_model

    model, _ = shrink_model(load_model("bamba-9b"), 16)
    mine = rank_model(model, make_placement(0, 4, 0, 4, 1, "cpu"))
    state = next(layer.state for layer in mine.layers if layer.state is not None)
    # 1 group padded to 4 (one per rank): conv 3 x (128 / 4 + 2 x 1 x 16) = 192; ssm 8 / 4 x 16 x 16 = 512
    assert (state.conv_elements, state.ssm_elements) == (192, 512)


def test_bad_input_one_line():
    with pytest.raises(UsageError, match="MASTER_ADDR, MASTER_PORT not set"):
        rendezvous({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"})
    with pytest.raises(UsageError, match="world size 4 differs from --tp 2 x --pp 1"):
        make_placement(0, 4, 0, 2, 1, "cpu")
    from kvplan.sources import load_model

    llama = load_model("llama-3.1-8b")  # 32 query heads, 8 KV heads, 32 layers
    with pytest.raises(UsageError, match="--tp 3 does not divide the 32 query heads"):
        check_parallel(llama, 3, 1)
    with pytest.raises(UsageError, match="--pp 33 exceeds the 32 layers"):
        check_parallel(llama, 1, 33)
    with pytest.raises(UsageError, match="--tp 16 does not divide the 8 Mamba-2 groups"):
        check_parallel(load_model("nemotron-h-8b"), 16, 1)  # 8 groups: vLLM pads only n_groups == 1


def _kv_model(kv_heads: int):
    from dataclasses import replace

    from kvplan.sources import load_model

    llama = load_model("llama-3.1-8b")
    layers = tuple(replace(layer, caches=tuple(replace(c, heads=kv_heads) for c in layer.caches))
                   for layer in llama.layers)
    return replace(llama, layers=layers, num_attention_heads=48)


def test_kv_heads_must_divide_or_be_divided():
    with pytest.raises(UsageError, match="--tp 4 and the 6 KV heads"):
        check_parallel(_kv_model(6), 4, 1)
    check_parallel(_kv_model(6), 3, 1)  # 6 / 3: split
    check_parallel(_kv_model(6), 12, 1)  # 12 / 6: each head on 2 ranks


def test_cli_bad_input_exit_2_before_any_rank(cli, monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    code, out, err = cli("bench", "llama-3.1-8b", "--tp", "2", *TINY)
    assert code == 2 and "no torch.distributed rendezvous" in err and "--launch" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, err = cli("bench", "llama-3.1-8b", "--tp", "2", "--launch", "3", *TINY)
    assert code == 2 and "--launch 3 differs from --tp 2 x --pp 1 = 2" in err
    code, _, err = cli("bench", "llama-3.1-8b", "--tp", "3", "--launch", "3", *TINY)
    assert code == 2 and "--tp 3 does not divide the 32 query heads" in err
    env = {"RANK": "0", "WORLD_SIZE": "4", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    code, _, err = cli("bench", "llama-3.1-8b", "--tp", "2", *TINY)
    assert code == 2 and "world size 4 differs from --tp 2 x --pp 1 = 2" in err
    import torch.distributed as dist

    assert not dist.is_initialized()  # refused before the process group (and any allocation)


# ---- ranks in processes ------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, n: int, port: int, args: list[str], log: str, fail: str | None) -> None:
    """One rank, forked from the test process (torch already imported: no start-up per rank)."""
    code = 99
    try:
        sys.stdout = sys.stderr = open(log, "w", buffering=1)
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port))
        if fail:
            import kvplan.bench.runner as runner

            def hook(spec, shapes):
                if rank == 1 and fail == "die":
                    os._exit(3)
                if rank == 1 and fail == "hang":
                    import time

                    time.sleep(PROC_TIMEOUT_S)
                if rank == 1:
                    raise MemoryError("injected on rank 1")

            runner.BEFORE_TECHNIQUE_HOOKS.append(hook)
        from kvplan.cli import common
        from kvplan.cli.app import app

        sys.argv = ["kvplan", "bench", *args]
        code = common.run(app)
    finally:
        sys.stdout.flush()
        os._exit(code)


def _spawn(n: int, args: list[str], tmp_path, fail: str | None = None) -> list[tuple[int, str]]:
    """n ranks of `kvplan bench ARGS` with torchrun's variables; (exit code, output) per rank.
    Forked from a preloaded forkserver (start-up of a fresh interpreter per rank would dominate the test time)."""
    import multiprocessing

    # forkserver: ranks fork from a fresh server process that has imported torch and kvplan but run
    # nothing (forking this test process could inherit OpenMP or gloo threads and deadlock)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "torch.distributed", "kvplan.bench.runner", "kvplan.cli.app"])
    port = _free_port()
    logs = [str(tmp_path / f"rank{r}.log") for r in range(n)]
    procs = [ctx.Process(target=_rank_main, args=(r, n, port, args, logs[r], fail)) for r in range(n)]
    for p in procs:
        p.start()
    try:
        waited = procs[:1] if fail == "hang" else procs  # "hang": rank 1 is stuck on purpose
        deadline = time.monotonic() + PROC_TIMEOUT_S  # one deadline for all ranks, not one per rank
        for p in waited:
            p.join(max(0.0, deadline - time.monotonic()))
        assert all(p.exitcode is not None for p in waited), "a rank hung"
    finally:
        for p in procs:
            if p.exitcode is None:
                p.kill()
    return [(p.exitcode, open(log).read()) for p, log in zip(procs, logs)]


def _rows(doc: dict) -> dict:
    return {(r["scope"], r["rank"]): r for r in doc["results"] if r["technique"].split(" @")[0] == "baseline"}


def _check_ranks(doc: dict, expected: list[tuple[int, int]], tp: int, pp: int) -> dict:
    """Every rank: measured = predicted = (bytes, blocks) worked out by hand."""
    rows = _rows(doc)
    assert len(expected) == tp * pp == doc["distributed"]["world_size"]
    for rank, (nbytes, blocks) in enumerate(expected):
        row = rows[("rank", rank)]
        assert (row["tp_rank"], row["pp_stage"], row["world_size"]) == (rank % tp, rank // tp, tp * pp)
        assert row["status"] == "ok", row
        assert row["predicted_bytes"] == row["measured_bytes"] == nbytes, (rank, row)
        assert row["predicted_blocks"] == row["measured_blocks"] == blocks, (rank, row)
    total = rows[("total", None)]
    assert total["status"] == "ok" and total["measured_bytes"] == sum(b for b, _ in expected)
    assert total["latency_ms_median"] == max(rows[("rank", r)]["latency_ms_median"] for r in range(tp * pp))
    return total


def test_launch_dense_gqa_tp2_divides_kv_heads(tmp_path):
    out = tmp_path / "tp2.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "kvplan", "bench", "llama-3.1-8b", "--tp", "2", "--launch", "2",
                           *TINY, "--json", str(out)], env=env, capture_output=True, text=True,
                          timeout=PROC_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    # 1 of 2 KV heads per rank: 4 layers x (K + V) x 1 x 128 x 2 B x 16 tokens = 32768 B; 4 layers x 1 block
    total = _check_ranks(doc, [(32768, 4), (32768, 4)], 2, 1)
    assert total["bytes_imbalance"] == 0
    assert doc["config"]["tp"] == 2 and doc["shapes"]["parallel"] == {"tp": 2, "pp": 1, "world_size": 2}
    assert "bytes imbalance +0%" in proc.stdout
    # the gate reads it unchanged: per rank and totals, against itself
    from kvplan.bench.gate import compare, failed, load

    findings, _ = compare(load(str(out), "current"), load(str(out), "baseline"))
    checked = {f.technique for f in findings if f.check == "prediction" and f.verdict == "pass"}
    assert checked == {"baseline", "baseline @ rank 0", "baseline @ rank 1"} and not failed(findings)


def test_tp4_replicates_two_kv_heads(tmp_path):
    out = tmp_path / "tp4.json"
    ranks = _spawn(4, ["llama-3.1-8b", "--tp", "4", *TINY, "--json", str(out)], tmp_path)
    assert all(rc == 0 for rc, _ in ranks), ranks
    # each rank keeps one whole KV head (2 heads on 4 ranks): 4 x 2 x 128 x 2 B x 16 = 32768 B,
    # so the 4 ranks hold twice the 65536 B of the unsharded cache
    _check_ranks(json.loads(out.read_text()), [(32768, 4)] * 4, 4, 1)


def test_mla_latent_replicated(tmp_path):
    out = tmp_path / "mla.json"
    ranks = _spawn(2, ["deepseek-v2-lite", "--tp", "2", *TINY, "--json", str(out)], tmp_path)
    assert all(rc == 0 for rc, _ in ranks), ranks
    # the whole latent on both ranks: 4 layers x 160 x 2 B x 16 tokens = 20480 B
    _check_ranks(json.loads(out.read_text()), [(20480, 4)] * 2, 2, 1)


def test_hybrid_mamba2_padded_groups_and_uneven_pp(tmp_path):
    out = tmp_path / "bamba.json"
    ranks = _spawn(4, ["bamba-9b", "--tp", "2", "--pp", "2", *TINY, "--json", str(out)], tmp_path)
    assert all(rc == 0 for rc, _ in ranks), ranks
    # PP 2 over 9 layers: stage 0 = layers 0-4 (4 Mamba-2 + the attention layer), stage 1 = 4 Mamba-2.
    # Mamba-2 per rank: 1 group padded to 2 -> 1 per rank; conv 3 x (128/2 + 2 x 1 x 16) = 288,
    # SSM 8/2 x 16 x 16 = 1024 elements, bf16: 2624 B a layer. Attention: 1 of 2 KV heads,
    # 2 x 128 x 2 B x 16 = 8192 B, one block.
    stage0, stage1 = 4 * 2624 + 8192, 4 * 2624
    total = _check_ranks(json.loads(out.read_text()), [(stage0, 1), (stage0, 1), (stage1, 0), (stage1, 0)], 2, 2)
    mean = (stage0 + stage1) / 2
    assert total["fullest_rank"] == 0 and total["bytes_imbalance"] == pytest.approx(stage0 / mean - 1)


@pytest.mark.parametrize("how", ["raise", "die", "hang"])
def test_failing_rank_fails_the_run_without_hanging(how, tmp_path):
    import time

    start = time.monotonic()
    ranks = _spawn(2, ["llama-3.1-8b", "--tp", "2", *TINY, "--timeout", "30" if how != "hang" else "4"],
                   tmp_path, fail=how)
    (rc0, out0), (rc1, _) = ranks
    assert rc0 == 1, out0
    if how == "raise":  # caught in its row: rank 0 reports the rank and its message
        assert "rank 1: MemoryError: injected on rank 1" in out0
    elif how == "die":  # the rank vanished: rank 0's gather fails on the lost peer instead of waiting
        assert rc1 == 3 and "gathering the results failed" in out0
    else:  # rank 1 never reaches the gather: rank 0 gives up after --timeout 4 s
        assert "gathering the results failed" in out0 and "within 4 s" in out0
        assert time.monotonic() - start < PROC_TIMEOUT_S / 2


def test_uneven_pp_follows_vllm_in_the_planner_too():
    """Ranks benched in-process (no process group needed): PP 3 over the shrunk
    llama's 4 layers. vLLM's get_pp_indices splits them 1, 2, 1; the planner's
    capacity.shard splits them the same way (it gave the first stage two layers
    before this bench found the disagreement). Stage 0 builds one layer:
    2 x 2 heads x 128 x 2 B x 16 tokens = 8192 x 2 = 16384 B; stage 1 two layers, 32768 B."""
    from kvplan.bench.distributed import _bench_rank, prepare
    from kvplan.bench.runner import BenchConfig

    cfg = BenchConfig("llama-3.1-8b", [], 16, 1, "cpu", 1, True, 16)
    for rank, expected in ((0, 16384), (1, 32768)):
        env = {"RANK": str(rank), "WORLD_SIZE": "3", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
        row = _bench_rank(prepare(cfg, 1, 3, env))["rows"][0]
        assert row["status"] == "ok", row.get("message")
        assert (row["predicted_bytes"], row["measured_bytes"]) == (expected, expected)
