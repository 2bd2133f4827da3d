"""Output that teams can use: terminal tables that follow $COLUMNS and never cut a
cell, one tidy CSV / NDJSON table per command with raw numbers, --explain in the
JSON, and `kvplan models` provenance in words."""

from __future__ import annotations

import io
import json

import pytest

from kvplan.sources import bundled_index

BOX = set("┏┓┗┛┃━┳┻╋┡┩╇│─┼├┤┬┴└┘┌┐")


def _table_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip() and line.strip()[0] in BOX]


@pytest.mark.parametrize("args", [
    ["techniques"],
    ["estimate", "llama-3.1-8b", "-c", "128k", "-t", "cla:2", "-t", "fp8", "-t", "evict:0.5", "--gpu", "h100"],
    ["models"],
])
def test_tables_fit_sixty_columns_without_broken_boxes(cli, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = cli(*args)
    assert code == 0
    lines = _table_lines(out)
    assert lines
    for line in lines:
        assert len(line) <= 60, line
        # every row of a table starts and ends on a vertical border: no row broke mid-box
        assert line[0] in "┏┃┡│└" and line[-1] in "┓┃┩│┘", line
    assert "…" not in out  # folded, never cut with an ellipsis


def test_nothing_is_cut_at_two_hundred_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = cli("models")
    assert code == 0 and "…" not in out
    for entry in bundled_index().values():
        assert entry.hf_id in out  # whole, on one line
    code, out, _ = cli("techniques")
    from kvplan.techniques.registry import CATALOG

    for name, (syntax, *_rest) in CATALOG.items():
        assert syntax in out, syntax
    assert max(len(line) for line in out.splitlines()) <= 200


def test_narrow_terminal_folds_the_cell_onto_more_lines(cli, monkeypatch):
    # at 60 columns the technique syntax column is narrower than its longest spec:
    # the spec is still all there, in order, once the cell's lines are read back
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = cli("techniques")
    assert code == 0
    col = "".join(line.split("│")[2].strip() for line in out.splitlines() if line.startswith("│"))
    assert "fp8[:e4m3|e5m2][,scales=tensor|head][,skip=sliding]" in col


@pytest.mark.parametrize("columns", ["60", "80"])
def test_narrow_terminal_breaks_cells_between_words_not_inside_them(cli, monkeypatch, columns):
    # the README's command: its "by layer kind" table is wider than 80 columns;
    # rich alone folded "attention" into "attentio" / "n" and could split a number
    # ("131,0" / "72"). Every word of a cell must appear whole on one line.
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = cli("estimate", "llama-3.1-70b", "--context", "128k")
    assert code == 0
    cells = [cell.strip() for line in out.splitlines() if line.startswith("│") for cell in line.split("│")[1:-1]]
    assert "attention" in " ".join(cells).split()  # whole on some line of the kind column
    assert "131,072" in cells  # 128K tokens kept: 131,072, never folded
    assert "4,096" in cells  # 8 KV heads x 128 x 2 (K, V) x 2 B = 4,096 B per token per layer
    for line in _table_lines(out):
        assert len(line) <= int(columns), line


def test_estimate_csv_is_one_tidy_table_with_numeric_columns(cli):
    pd = pytest.importorskip("pandas")
    code, out, _ = cli("estimate", "llama-3.1-8b", "-c", "4096", "-b", "2", "-t", "fp8", "--gpu", "h100", "--format", "csv")
    assert code == 0
    df = pd.read_csv(io.StringIO(out))
    assert len(df) == 1 and "" not in out.splitlines()  # one header, one row, no second table
    row = df.iloc[0]
    # Llama 3.1 8B: 32 layers x 8 KV heads x (128 + 128) x 1 B (fp8) = 65,536 B per token
    assert row["bytes_per_token"] == 32 * 8 * 256
    assert row["kv_bytes_per_sequence"] == 32 * 8 * 256 * 4096
    assert row["context_tokens"] == 4096 and row["batch"] == 2
    assert row["reading"] == "exact" and row["techniques"] == "fp8" and row["gpu"] == "h100-sxm"
    for col in ("bytes_per_token", "kv_bytes_per_sequence", "total_bytes", "read_bytes_per_step", "kv_bytes_per_gpu",
                "pool_bytes", "pool_tokens", "max_concurrency", "step_ms", "weight_bytes", "context_tokens"):
        assert pd.api.types.is_numeric_dtype(df[col]), (col, df[col].dtype)
    assert "," not in out.splitlines()[1].split(",")[0] and "GiB" not in out


def test_a_guessed_reading_shows_in_the_csv(cli, tmp_path):
    pd = pytest.importorskip("pandas")
    cfg = {"model_type": "someone-new", "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
           "num_key_value_heads": 2, "vocab_size": 1000, "intermediate_size": 512}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out, err = cli("estimate", str(path), "--format", "csv")
    if code != 0:
        pytest.skip(f"unknown model_type refused here: {err.strip()}")
    assert pd.read_csv(io.StringIO(out)).iloc[0]["reading"] == "guessed"


def test_ndjson_rows_are_the_csv_rows(cli):
    code, csv_out, _ = cli("compare", "llama-3.1-8b", "qwen3-8b", "-c", "8k", "--format", "csv")
    assert code == 0
    code, nd_out, _ = cli("compare", "llama-3.1-8b", "qwen3-8b", "-c", "8k", "--format", "ndjson")
    assert code == 0
    rows = [json.loads(line) for line in nd_out.splitlines()]
    header = csv_out.splitlines()[0].split(",")
    assert len(rows) == 2 and list(rows[0]) == header
    assert rows[0]["model"] == "llama-3.1-8b" and rows[1]["model"] == "qwen3-8b"
    # Qwen3 8B: 36 layers x 8 KV heads x (128 + 128) x 2 B = 147,456 B per token
    assert rows[1]["bytes_per_token"] == 36 * 8 * 256 * 2


@pytest.mark.parametrize("args", [
    ["models"], ["models", "--family"], ["techniques"], ["gpus"], ["plan", "--list"], ["plan", "chat-shared-prompt"],
    ["weights", "llama-3.1-8b"], ["estimate", "qwen3-8b", "--engine", "vllm", "--gpu", "h100"],
    ["fit", "qwen3-8b", "-c", "32k", "-n", "64", "--gpu", "h100,h200", "--explain", "--top", "3"],
    ["plan", "rag-128k", "--fit"],
])
def test_every_command_prints_one_csv_table(cli, args):
    import csv

    code, out, _ = cli(*args, "--format", "csv")
    assert code in (0, 1)
    rows = list(csv.reader(io.StringIO(out)))
    assert rows and all(rows) and len({len(r) for r in rows}) == 1  # one header, same width, no blank separator
    assert all(c and c == c.lower() and " " not in c for c in rows[0])  # snake_case names


def test_explain_is_in_the_json(cli):
    code, out, _ = cli("estimate", "llama-3.1-8b", "-c", "8k", "--explain", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["explain"] and "32 x [attention]" in " ".join(data["explain"])
    code, out, _ = cli("estimate", "llama-3.1-8b", "-c", "8k", "--format", "json")
    assert json.loads(out)["explain"] == []


def test_models_provenance_in_words():
    raw = json.loads((__import__("pathlib").Path(__file__).parents[1] / "model_specs" / "index.json").read_text())
    entries = bundled_index()
    rebuilt = {a for a, m in raw.items() if m["source"].startswith("reconstructed:")}
    assert rebuilt and len(rebuilt) < len(raw)
    for alias, entry in entries.items():
        assert entry.provenance == ("rebuilt from published values" if alias in rebuilt else "published config.json (copy)")


def test_models_json_carries_provenance(cli):
    code, out, _ = cli("models", "--format", "json")
    models = {m["alias"]: m for m in json.loads(out)["models"]}
    assert models["bloom"]["provenance"] == "rebuilt from published values"
    assert models["bamba-9b"]["provenance"] == "published config.json (copy)"
    assert models["bamba-9b"]["hf_id"] == "ibm-ai-platform/Bamba-9B"


def test_sweep_ndjson_and_csv_are_the_same_rows(cli):
    pd = pytest.importorskip("pandas")
    code, out, _ = cli("sweep", "qwen3-8b", "-c", "4k..16k", "-n", "3", "-t", "fp8", "--format", "ndjson")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    code, csv_out, _ = cli("sweep", "qwen3-8b", "-c", "4k..16k", "-n", "3", "-t", "fp8", "--format", "csv")
    df = pd.read_csv(io.StringIO(csv_out))
    assert len(rows) == len(df) == 6 and list(rows[0]) == list(df.columns)
    # Qwen3-8B at 8K, fp8: 36 x 8 x 256 x 1 B x 8192 tokens
    fp8 = next(r for r in rows if r["series"] == "fp8" and r["context_tokens"] == 8192)
    assert fp8["kv_bytes_per_sequence"] == 36 * 8 * 256 * 8192 and isinstance(fp8["stored_bytes"], int)


def test_cells_print_as_written_not_as_markup(tmp_path, monkeypatch):
    from kvplan.render import Report, Table, render

    monkeypatch.setenv("COLUMNS", "100")
    buf = io.StringIO()
    render(Report({}, [Table("[bold]t[/bold]", ["spec"], [["fp8[e4m3] [red]x[/red]"]])]), "table", buf)
    assert "fp8[e4m3] [red]x[/red]" in buf.getvalue() and "[bold]t[/bold]" in buf.getvalue()


def test_wide_tables_show_binary_units_only(cli):
    # the summary keeps "40.00 GiB (42.95 GB)"; the eight-column layer table shows 40.00 GiB (80 layers x
    # 4,096 B x 131,072 tokens = 40 GiB), so at 80 columns its cell is one line
    code, out, _ = cli("estimate", "llama-3.1-70b", "--context", "128k", "--format", "markdown")
    assert code == 0
    assert "| KV per sequence at 128K | 42,949,672,960 | 40.00 GiB (42.95 GB) |" in out
    assert "| full attention | 80 | 80 | 4,096 | - | 131,072 | 40.00 GiB | 0 B |" in out
