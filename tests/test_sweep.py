"""`kvplan sweep`: log-spaced contexts, one series per technique combination,
values worked out by hand, the vectorised formulas equal to the scalar core,
output files, plots, and every bad input.

Hand arithmetic (Llama-3.1-70B, bf16): 80 layers x 8 KV heads x 128 x 2 x 2 B
= 327,680 B/token. fp8 halves it to 163,840 B/token and adds one fp32 scale per
K and V tensor per layer: 80 x 2 x 4 = 640 B once. On 4 x H200 (141 GiB):
usable = floor(0.9 x int(139.81 GiB)) = 135,107,859,971 B; weights 70,553,706,496 x 2 B, of which
each GPU holds the norms whole (80 x 2 x 8,192 + 8,192 = 1,318,912 x 2 B = 2,637,824 B) and a quarter of the
rest: 141,104,775,168 / 4 + 2,637,824 = 35,278,831,616 B per GPU; pool = 135,107,859,971 - 35,278,831,616
- 2 GiB = 97,681,544,707 B; each GPU keeps 2 of the 8 KV heads: 81,920 B/token.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from kvplan.errors import KvplanError, UsageError
from kvplan.workload import sweep, vector

GIB = 1024**3
PER_TOKEN = 80 * 8 * 128 * 2 * 2
NORMS = (80 * 2 * 8192 + 8192) * 2  # whole on every TP rank
POOL = int(0.9 * int(139.81 * GIB)) - ((70_553_706_496 * 2 - NORMS) // 4 + NORMS) - 2 * GIB  # H200 as its driver reports
POWERS = [2**k for k in range(10, 21)]  # 1K .. 1M


def test_hand_figures():
    assert PER_TOKEN == 327_680
    assert NORMS == 2_637_824 and POOL == 97_681_544_707  # (before the norms were kept whole: 97,683,523,075)


def llama_frame(**kw):
    args = dict(low=1024, high=1024 * 1024, points=11, series=["fp8", "fp8+evict:0.5"], gpu="h200", tp=4)
    args.update(kw)
    return sweep.sweep_frame("llama-3.1-70b", **args)


def test_series_and_values_by_hand():
    df = llama_frame()
    assert list(df.columns) == sweep.COLUMNS
    assert list(df["series"].unique()) == ["baseline", "fp8", "fp8+evict:0.5"]
    by = {s: g.reset_index(drop=True) for s, g in df.groupby("series")}
    # 11 log-spaced points from 1K to 1M are exactly the powers of two
    assert by["baseline"]["context_tokens"].tolist() == POWERS
    assert by["baseline"]["stored_bytes"].tolist() == [PER_TOKEN * n for n in POWERS]
    assert by["baseline"]["read_bytes"].tolist() == [PER_TOKEN * n for n in POWERS]
    assert by["fp8"]["stored_bytes"].tolist() == [163_840 * n + 640 for n in POWERS]
    assert by["fp8"]["kv_bytes_per_sequence"].tolist() == [163_840 * n for n in POWERS]
    # evict:0.5 keeps ceil(n / 2) tokens
    assert by["fp8+evict:0.5"]["stored_bytes"].tolist() == [163_840 * math.ceil(n / 2) + 640 for n in POWERS]
    # pool tokens: 97,681,544,707 // 81,920 per GPU (bf16), // 40,960 (fp8; 160 B of scales per GPU first)
    assert set(by["baseline"]["pool_tokens"]) == {POOL // 81_920} == {1_192_401}
    assert set(by["fp8"]["pool_tokens"]) == {(POOL - 160) // 40_960}
    # concurrency: the pool over one sequence's share per GPU
    assert by["baseline"]["max_concurrency"].tolist() == [POOL // (81_920 * n) for n in POWERS]
    assert by["baseline"]["max_concurrency"].tolist()[-1] == 1
    assert by["fp8+evict:0.5"]["max_concurrency"].tolist() == [(POOL - 160) // (40_960 * math.ceil(n / 2)) for n in POWERS]
    assert (df["model"] == "meta-llama/Llama-3.1-70B").all() and (df["gpu"] == "h200").all() and (df["tp"] == 4).all()


def test_batch_multiplies_stored_and_read_bytes():
    df = llama_frame(series=[], batch=3, points=2)
    assert df["stored_bytes"].tolist() == [3 * PER_TOKEN * 1024, 3 * PER_TOKEN * 2**20]
    assert df["read_bytes"].tolist() == [3 * PER_TOKEN * 1024, 3 * PER_TOKEN * 2**20]


def test_fixed_state_does_not_grow():
    # Mamba-2.8B: no growing cache at all; the pool holds no tokens
    df = sweep.sweep_frame("mamba-2.8b", low=1000, high=100_000, points=5)
    assert df["stored_bytes"].nunique() == 1 and df["stored_bytes"].iloc[0] > 0
    assert df["read_bytes"].tolist() == [0] * 5
    assert df["pool_tokens"].isna().all()


def test_points_are_log_spaced_distinct_integers():
    points = sweep.context_points(1000, 1_000_000, 7)
    assert points.tolist() == [1000, 3162, 10000, 31623, 100000, 316228, 1000000]
    # more points than integers in the range: duplicates removed, both ends kept
    few = sweep.context_points(10, 12, 50)
    assert few.tolist() == [10, 11, 12]
    ten_thousand = sweep.context_points(1000, 10**8, 10_000)
    assert len(ten_thousand) == 10_000 and ten_thousand[0] == 1000 and ten_thousand[-1] == 10**8
    ratios = ten_thousand[5000:5010] / ten_thousand[4999:5009]
    assert all(abs(r - 10 ** (5 / 9999)) < 1e-4 for r in ratios)


# --- the fast path equals the core --------------------------------------------------------------

COMBOS = [
    [], ["fp8"], ["page:16"], ["int4"], ["kivi"], ["kivi:bits=4,group=32,residual=100", "page:32"],
    ["evict:0.3,recent=64", "page:16"], ["evict:2048,recent=64"], ["pyramid:0.12"],
    ["csa:m=4,k=512,window=128", "page:64"], ["quest:page=16,topk=64"], ["window:4096,pattern=5:1", "page:16"],
    ["cla:2"], ["mla"], ["hybrid:3:1"], ["prefix:tokens=2000,requests=32"],
    ["page:16", "prefix:tokens=3000,requests=8", "window:1024"], ["gqa:2"],
    ["int2:group=32,skip=sliding", "prefix:tokens=700,requests=4"],
]


def _bundled():
    from kvplan.sources import bundled_index

    return list(bundled_index())


@pytest.mark.parametrize("alias", _bundled())
def test_vector_formulas_equal_the_scalar_core(alias):
    import numpy as np

    from kvplan.capacity.hardware import make_deployment
    from kvplan.capacity.pool import batch_bytes, capacity
    from kvplan.core.estimate import estimate
    from kvplan.planner import compose
    from kvplan.sources import load_model
    from kvplan.techniques.registry import build_all

    rng = random.Random(alias)
    model = load_model(alias)
    checked = 0
    for combo in COMBOS:
        try:
            plan = compose(model, build_all(combo))[-1]
        except KvplanError:
            continue  # the technique does not apply to this model
        n = np.array(sorted({1, 2, 15, 16, 17, 1024, *(rng.randint(1, 2_000_000) for _ in range(8))}), dtype=np.int64)
        for tp, pp, batch in ((1, 1, 1), (2, 2, 7), (8, 1, 40)):
            deployment = make_deployment("b200", tp=tp, pp=pp, weight_bytes=1)
            b = vector.batch_bytes(plan, n, batch)
            read = vector.read_bytes_per_step(plan.model, n)
            fit, _, pool_tokens = vector.max_concurrency(plan, deployment, n)
            for i, tokens in enumerate(n.tolist()):
                s = batch_bytes(plan, tokens, batch)
                cap = capacity(plan, deployment, tokens)
                assert int(b["total"][i]) == s.total_bytes, (combo, tokens)
                assert int(b["kv"][i]) == s.kv_bytes_per_sequence, (combo, tokens)
                assert int(read[i]) == estimate(plan.model, tokens, batch).read_bytes_per_step, (combo, tokens)
                assert int(fit[i]) == cap.max_concurrency, (combo, tokens, tp, pp)
                assert pool_tokens == cap.pool_tokens
                checked += 1
    assert checked > 0


# --- the command ------------------------------------------------------------------------------------


def test_sweep_prints_a_table_through_clirunner():
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    result = CliRunner().invoke(app, ["sweep", "llama-3.1-8b", "--context", "1k..32k", "--points", "6", "-t", "fp8"])
    assert result.exit_code == 0, result.output
    assert "baseline" in result.output and "fp8" in result.output
    assert "32,768" in result.output


def test_sweep_json_to_stdout(cli):
    code, out, err = cli("sweep", "llama-3.1-8b", "-c", "1k..2k", "-n", "2", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    # Llama-3.1-8B: 32 x 8 x 128 x 2 x 2 = 131,072 B/token
    assert [(r["context_tokens"], r["stored_bytes"]) for r in rows] == [(1024, 131_072 * 1024), (2048, 131_072 * 2048)]


def test_out_csv_and_force(tmp_path, cli):
    import pandas as pd

    out = tmp_path / "s.csv"
    code, stdout, err = cli("sweep", "llama-3.1-70b", "-c", "1k..1m", "-n", "11", "-t", "fp8", "--gpu", "h200", "--tp", "4", "--out", str(out))
    assert code == 0, err
    assert stdout == "" and "wrote 22 rows (2 series x 11 contexts)" in err
    df = pd.read_csv(out)
    assert df[df.series == "baseline"]["stored_bytes"].tolist() == [PER_TOKEN * n for n in POWERS]
    code, _, err = cli("sweep", "llama-3.1-70b", "--gpu", "h200", "--tp", "4", "--out", str(out))
    assert code == 2 and "the file exists" in err and "--force" in err
    code, _, err = cli("sweep", "llama-3.1-70b", "--gpu", "h200", "--tp", "4", "-n", "3", "--out", str(out), "--force")
    assert code == 0, err
    assert len(pd.read_csv(out)) == 3


def test_out_json(tmp_path, cli):
    out = tmp_path / "s.json"
    code, _, err = cli("sweep", "qwen3-8b", "-c", "4k..8k", "-n", "2", "--out", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text())
    rows = doc["rows"]  # the same document --format json prints
    assert doc["schema_version"] == 1 and list(rows[0]) == doc["columns"]
    # Qwen3-8B: 36 x 8 x 128 x 2 x 2 = 147,456 B/token
    assert [r["stored_bytes"] for r in rows] == [147_456 * 4096, 147_456 * 8192]


def test_out_parquet_or_a_clear_message(tmp_path, cli):
    out = tmp_path / "s.parquet"
    code, _, err = cli("sweep", "qwen3-8b", "-n", "2", "--out", str(out))
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        assert code == 1 and "writing parquet needs pyarrow" in err
    else:
        assert code == 0 and out.exists()


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_files(tmp_path, cli, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"p{suffix}"
    code, _, err = cli("sweep", "llama-3.1-8b", "-c", "1k..128k", "-n", "8", "-t", "fp8", "-t", "int4", "--plot", str(out))
    assert code == 0, err
    head = out.read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in out.read_bytes()[:2000] or b"<?xml" in head


def test_plot_without_matplotlib_says_how_to_install(tmp_path, cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    code, out, err = cli("sweep", "llama-3.1-8b", "--plot", str(tmp_path / "p.png"))
    assert code == 1 and out == ""
    assert "--plot needs matplotlib" in err and "pip install 'kvplan[plot]'" in err
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["-c", "1m..1k"], "the range is reversed (1,048,576 > 1,024 tokens)"),
        (["-c", "4k..4k"], "the range is empty"),
        (["-c", "4k"], "expected a range LOW..HIGH"),
        (["-c", "..4k"], "expected a range LOW..HIGH"),
        (["-c", "0..4k"], "must be a positive number of tokens"),
        (["-c", "1k..lots"], "cannot read 'lots' as a token count"),
        (["-n", "1"], "--points must be at least 2"),
        (["--out", "x.xlsx"], "unsupported file type '.xlsx'"),
        (["--out", "no/such/folder/x.csv"], "the folder no/such/folder does not exist"),
        (["--plot", "x.pdf"], "unsupported file type '.pdf'"),
        (["--plot", "no/such/folder/x.png"], "does not exist"),
        (["-t", "fp9"], "unknown technique 'fp9'"),
        (["-t", "fp8+"], "empty technique around '+'"),
        (["-t", "fp8", "-t", "fp8"], "the series is given twice"),
        (["--gpu", "h1000"], "unknown GPU 'h1000'"),
        (["--kv-dtype", "fp7"], "--kv-dtype 'fp7' is not one of"),
        (["-b", "0"], "--batch: must be a positive integer"),
    ],
)
def test_bad_input_is_one_clear_line(cli, args, message):
    code, out, err = cli("sweep", "llama-3.1-8b", *args)
    assert code == 2, (code, err)
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_unknown_model_and_weights_that_do_not_fit(cli):
    code, _, err = cli("sweep", "llama-9")
    assert code == 1 and "unknown model 'llama-9'" in err
    code, _, err = cli("sweep", "llama-3.1-405b", "--gpu", "l4")
    assert code == 1 and "does not fit on 1 x l4" in err and "--tp" in err


def test_parse_range_api():
    assert sweep.parse_range("1k..1m") == (1024, 1024**2)
    with pytest.raises(UsageError):
        sweep.parse_range("1m..1k")


def test_estimate_does_not_import_pandas():
    code = (
        "import sys\n"
        "from kvplan.cli import common\n"
        "from kvplan.cli.app import app\n"
        "sys.argv = ['kvplan', 'estimate', 'llama-3.1-8b', '--gpu', 'h100', '-t', 'fp8']\n"
        "rc = common.run(app)\n"
        "heavy = [m for m in ('pandas', 'numpy', 'matplotlib', 'torch', 'triton') if m in sys.modules]\n"
        "sys.stderr.write(f'rc={rc} heavy={heavy}\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "rc=0 heavy=[]" in proc.stderr, proc.stderr


def test_csv_to_stdout_has_every_column(cli):
    code, out, _ = cli("sweep", "qwen3-8b", "-c", "1k..2k", "-n", "2", "--format", "csv")
    assert code == 0
    header, first, second = out.strip().splitlines()
    assert header.split(",") == sweep.COLUMNS
    # Qwen3-8B: 147,456 B/token x 1,024 tokens
    assert first.split(",")[sweep.COLUMNS.index("stored_bytes")] == str(147_456 * 1024)


def test_context_points_properties():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.integers(1, 10**7), st.integers(1, 10**7), st.integers(2, 500))
    def check(a, b, points):
        if a == b:
            return
        low, high = min(a, b), max(a, b)
        got = sweep.context_points(low, high, points).tolist()
        assert got[0] == low and got[-1] == high
        assert got == sorted(set(got))
        assert 2 <= len(got) <= min(points, high - low + 1)

    check()


# --- writing: columnar, in chunks, no pandas -------------------------------------------------------


def test_written_csv_and_json_equal_pandas_own_writers(tmp_path, monkeypatch):
    """The chunked writers against pandas' to_csv / to_json on the same rows, with
    chunks smaller than a series so that every boundary is crossed."""
    import io

    import pandas as pd

    monkeypatch.setattr(sweep, "CHUNK_ROWS", 4)
    result = sweep.sweep_columns("qwen3-next-80b-a3b", low=1000, high=300_000, points=11, gpu="h200", tp=4,
                                 series=["fp8", "prefix:tokens=2000,requests=32", "fp8+page:16"])
    frame = sweep.to_frame(result)
    buf = io.StringIO()
    sweep.write_csv(result, buf)
    assert buf.getvalue() == frame.to_csv(index=False)
    buf = io.StringIO()
    sweep.write_json_rows(result, buf)
    assert json.loads(buf.getvalue()) == json.loads(frame.to_json(orient="records"))
    buf = io.StringIO()
    sweep.write_json_document(result, buf)
    doc = json.loads(buf.getvalue())
    assert doc["columns"] == sweep.COLUMNS and len(doc["rows"]) == 44


def test_csv_out_imports_no_pandas(tmp_path):
    out = tmp_path / "s.csv"
    code = (
        "import sys\n"
        f"sys.argv = ['kvplan', 'sweep', 'llama-3.1-8b', '-n', '50', '-t', 'fp8', '--out', {str(out)!r}]\n"
        "from kvplan.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    rc = e.code\n"
        "sys.stderr.write(f'rc={rc} pandas={\"pandas\" in sys.modules}\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "rc=0 pandas=False" in proc.stderr, proc.stderr
    assert len(out.read_text().splitlines()) == 1 + 100


def test_terminal_table_is_a_summary_that_says_how_to_get_every_row(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that no cell folds: one line per row
    code, out, err = cli("sweep", "llama-3.1-8b", "-c", "1k..1m", "-n", "1000", "-t", "fp8")
    assert code == 0, err
    body = [line for line in out.splitlines() if line.startswith("│")]
    assert len(body) == 2 * sweep.SUMMARY_CONTEXTS  # 9 contexts x 2 series, not 2,000 rows
    assert "1,024 " in out and "1,048,576" in out  # both ends shown
    assert "showing 9 of 1,000 contexts per series (2,000 rows in all)" in out and "--format csv" in out
    code, out, _ = cli("sweep", "llama-3.1-8b", "-c", "1k..1m", "-n", "5")
    assert len([line for line in out.splitlines() if line.startswith("│")]) == 5 and "showing" not in out
