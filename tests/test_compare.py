"""`kvplan compare`: models side by side on one workload, values by hand.

Hand arithmetic (bf16 K and V):
  Llama-3.1-8B: 32 x 8 x 128 x 2 x 2 = 131,072 B/token; 8,030,261,248 params x 2 B.
  Qwen3-8B:     36 x 8 x 128 x 2 x 2 = 147,456 B/token; 8,190,735,360 params x 2 B
                (36 layers x 192,946,432 + 2 x 151,936 x 4,096 embeddings + 4,096).
  H100 80 GiB: usable floor(0.9 x 80 GiB) = 77,309,411,328 B, 2 GiB reserve.
"""

from __future__ import annotations

import json

import pytest

GIB = 1024**3
USABLE = int(0.9 * int(79.18 * GIB)) - 2 * GIB  # the H100 as its driver reports it (llm-d's logs), less the reserve
LLAMA = {"per_token": 32 * 8 * 128 * 2 * 2, "weights": 8_030_261_248 * 2}
QWEN = {"per_token": 36 * 8 * 128 * 2 * 2, "weights": 8_190_735_360 * 2}
CTX = 32 * 1024


def test_hand_figures():
    assert LLAMA["per_token"] == 131_072 and QWEN["per_token"] == 147_456
    assert 36 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 12288 + 2 * 128 + 2 * 4096) + 2 * 151_936 * 4096 + 4096 == 8_190_735_360


def test_two_models_side_by_side(cli):
    code, out, err = cli("compare", "llama-3.1-8b", "qwen3-8b", "--context", "32k", "--gpu", "h100", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["context_tokens"] == CTX and doc["gpu"] == "h100-sxm"
    llama, qwen = doc["models"]
    for got, want in ((llama, LLAMA), (qwen, QWEN)):
        pool = USABLE - want["weights"]
        seq = want["per_token"] * CTX
        assert got["bytes_per_token"] == want["per_token"]
        assert got["kv_bytes_per_sequence"] == seq
        assert got["pool_bytes"] == pool
        assert got["pool_tokens"] == pool // want["per_token"]
        assert got["max_concurrency"] == pool // seq
        assert got["fits"] is True
    assert (llama["pool_tokens"], llama["max_concurrency"]) == (444_862, 13)
    assert (qwen["pool_tokens"], qwen["max_concurrency"]) == (393_256, 12)


def test_table_through_clirunner():
    from typer.testing import CliRunner

    from kvplan.cli.app import app

    result = CliRunner().invoke(app, ["compare", "llama-3.1-8b", "qwen3-8b", "mistral-7b-v0.3", "-c", "32k"])
    assert result.exit_code == 0, result.output
    assert "llama-3.1-8b" in result.output and "qwen3-8b" in result.output and "mistral-7b-v0.3" in result.output
    assert "131,072" in result.output and "147,456" in result.output
    assert "x1.125" in result.output  # 147,456 / 131,072 per sequence vs the first model


def test_same_techniques_apply_to_every_model(cli):
    code, out, _ = cli("compare", "llama-3.1-8b", "qwen3-8b", "-c", "32k", "-t", "fp8", "--format", "json")
    assert code == 0
    llama, qwen = json.loads(out)["models"]
    assert llama["bytes_per_token"] == 65_536 and qwen["bytes_per_token"] == 73_728
    assert json.loads(out)["techniques"] == ["fp8"]


def test_fixed_state_model_against_attention(cli):
    # Mamba-2.8B stores no per-token cache: 0 B/token and a state that does not grow
    code, out, _ = cli("compare", "mamba-2.8b", "llama-3.1-8b", "-c", "1m", "--format", "json")
    assert code == 0
    mamba, llama = json.loads(out)["models"]
    assert mamba["bytes_per_token"] == 0 and mamba["kv_bytes_per_sequence"] == 0
    assert mamba["state_bytes_per_sequence"] > 0 and mamba["pool_tokens"] is None
    assert llama["kv_bytes_per_sequence"] == 131_072 * 1024**2


def test_a_model_that_does_not_fit_keeps_its_bytes(cli):
    code, out, err = cli("compare", "llama-3.1-8b", "llama-3.1-405b", "-c", "8k", "--format", "json")
    assert code == 0, err
    small, big = json.loads(out)["models"]
    assert small["fits"] and not big["fits"]
    # Llama-3.1-405B: 126 x 8 x 128 x 2 x 2 = 516,096 B/token
    assert big["bytes_per_token"] == 516_096 and big["kv_bytes_per_sequence"] == 516_096 * 8192
    assert big["max_concurrency"] is None and "does not fit on 1 x h100-sxm" in big["note"]
    code, out, _ = cli("compare", "llama-3.1-8b", "llama-3.1-405b", "-c", "8k")
    assert "llama-3.1-405b: does not fit" in out


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["llama-3.1-8b"], 2, "compare needs at least two models, got 1"),
        (["llama-3.1-8b", "llama-9"], 1, "unknown model 'llama-9'"),
        (["llama-3.1-8b", "qwen3-8b", "-c", "-5"], 2, "--context: cannot read '-5' as a token count"),
        (["llama-3.1-8b", "qwen3-8b", "-c", "0"], 2, "--context: must be a positive number of tokens"),
        (["llama-3.1-8b", "qwen3-8b", "--gpu", "h1000"], 2, "unknown GPU 'h1000'"),
        (["llama-3.1-8b", "qwen3-8b", "-t", "fp9"], 2, "unknown technique 'fp9'"),
        (["llama-3.1-8b", "mamba-2.8b", "-t", "fp8"], 2, "cannot apply to"),
        (["llama-3.1-8b", "qwen3-8b", "-b", "0"], 2, "--batch: must be a positive integer"),
    ],
)
def test_bad_input(cli, args, code, message):
    got, out, err = cli("compare", *args)
    assert got == code, err
    assert out == "" and len(err.strip().splitlines()) == 1
    assert message in err


def test_no_models_is_a_usage_error(cli):
    code, _, err = cli("compare")
    assert code == 2 and "Missing argument" in err


def test_more_than_four_models_are_a_row_each(cli):
    # 95 models made 95 columns of width 0; past four the table turns: a row per model. Figures by
    # hand: Llama-3.1-8B 32 layers x 8 KV heads x 128 x (K + V) x 2 B = 131,072 B/token, x 32K = 4.00 GiB;
    # Qwen3-8B 36 layers, the same heads: 147,456 B/token, 4.50 GiB
    names = ["llama-3.1-8b", "qwen3-8b", "gemma-3-4b", "mistral-7b-v0.3", "gpt-oss-20b"]
    code, out, err = cli("compare", *names, "--format", "markdown")
    assert code == 0, err
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| ") and not line.startswith("| model")]
    assert [r[0].lstrip("| ") for r in rows] == names
    assert rows[0][1:3] == ["131,072", "4.00 GiB"] and rows[1][1:3] == ["147,456", "4.50 GiB"]
    assert "KV dtype" not in out  # the same for all five: not a column
    code, out, _ = cli("compare", *names[:4], "--format", "markdown")
    assert "| quantity |" in out  # four or fewer stay side by side
