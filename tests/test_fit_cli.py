"""`kvplan fit` and `kvplan plan --fit` from the command line: JSON, the
estimate round trip, --explain, --plot, bad input."""

from __future__ import annotations

import json

import pytest

from kvplan.fit.grid import parse_gpus
from kvplan.fit.search import FitRequest, search
from kvplan.reports.fit import estimate_argv

KEYS = {"gpu", "gpus", "tp", "pp", "kv_dtype", "techniques", "max_concurrency", "kv_bytes_per_gpu",
        "weight_bytes_per_gpu", "decode_ms_per_token", "caveats"}


@pytest.mark.parametrize("r", [
    FitRequest("llama-3.1-70b", 131072, 16, tuple(parse_gpus("h200")), engine="vllm", kv_dtypes=("auto", "fp8")),
    FitRequest("deepseek-v2-lite", 32768, 40, tuple(parse_gpus("l40s,h100")), weights="32GB", objective="cost",
               allowed=("evict",)),
    FitRequest("qwen3-8b", 32768, 64, tuple(parse_gpus("l4,a100-40gb")), max_gpus=4, allowed=("kivi", "page"),
               max_kv_gib=30.0, engine="vllm@0.11"),
], ids=["70b-vllm", "mla-cost", "qwen3-budgets"])
def test_every_top_option_passes_kvplan_estimate(cli, r):
    result = search(r, verify_top=3)
    assert result.options
    for option in result.options[:3]:
        code, out, err = cli(*estimate_argv(r, option), "--format", "json")
        assert code == 0, (option.label(), err)
        data = json.loads(out)
        assert data["budgets"]["ok"] is True
        assert data["capacity"]["max_concurrency"] >= r.concurrency
        if r.engine != "ideal":
            assert data["engine"]["max_concurrency"] >= r.concurrency


def test_json_options_ranked_with_the_listed_keys(cli):
    # at utilization 0.9, where test_fit.py works out the 7 GPUs (vLLM 0.34's own default, 1.0, fits it on 6)
    code, out, err = cli("fit", "llama-3.1-70b", "-c", "128k", "-n", "16", "--gpu", "h200", "--engine", "vllm",
                         "--mem-util", "0.9", "--format", "json", "--explain")
    assert code == 0, err
    data = json.loads(out)
    options = data["options"]
    assert options and KEYS <= set(options[0])
    assert [o["rank"] for o in options] == list(range(1, len(options) + 1))
    assert options[0]["gpus"] == 7 and options[0]["caveats"] == [{"what": "kv bf16", "caveat": "none"}]
    fp8 = [o for o in options if o["kv_dtype"].startswith("fp8")]
    assert fp8 and {"what": "kv fp8_e4m3", "caveat": "quality risk"} in fp8[0]["caveats"]
    assert options[0]["price_source"].endswith("2026-03-10")
    constraints = data["explain"]["by_constraint"]
    assert {"weights do not fit", "pool too small", "heads not divisible"} <= set(constraints)
    assert data["pareto"]["budget"] == 16


def test_price_override_changes_the_cost_ranking(cli):
    args = ["fit", "deepseek-v2-lite", "-c", "32k", "-n", "40", "--gpu", "l40s,h100", "--weights", "32GB",
            "--kv-dtype", "auto", "--objective", "cost", "--format", "json"]
    code, out, _ = cli(*args)
    assert json.loads(out)["options"][0]["gpu"] == "l40s"
    code, out, _ = cli(*args, "--price", "h100=2.00")  # one H100 at $2.00 beats two L40S at $1.40
    top = json.loads(out)["options"][0]
    assert (top["gpu"], top["usd_per_hour"], top["price_source"]) == ("h100-sxm", 2.0, "--price")


def test_nothing_meets_exits_1_with_the_closest_option(cli):
    code, out, err = cli("fit", "llama-3.1-70b", "-c", "128k", "-n", "500", "--gpu", "h200", "--max-gpus", "8")
    assert code == 1 and out == ""
    # per H200: int(139.81 GiB, the driver's) x 0.9 = 135,107,859,971 B - 1/8 of 141,107,412,992 B of weights - 2 GiB
    # = 115,321,949,699 B; one 128K sequence at fp8 on one KV head of 80 layers: 2,684,354,560 B -> 42 sequences
    assert "closest: 8 x h200 (tp 8, pp 1), kv fp8_e4m3: pool too small: 42 sequences fit, 458 short of 500" in err
    assert len(err.strip().splitlines()) == 1


def test_nothing_meets_names_the_budget_it_misses(cli):
    code, _, err = cli("fit", "llama-3.1-8b", "-c", "32k", "-n", "4", "--gpu", "h100", "--max-decode-ms", "0.5")
    assert code == 1 and "decode floor" in err and "above the budget 0.50 ms" in err


def test_unknown_gpu_exits_2_with_the_catalog(cli):
    code, out, err = cli("fit", "llama-3.1-70b", "-c", "128k", "-n", "16", "--gpu", "h100,h300")
    assert code == 2 and "unknown GPU 'h300'" in err and "b200" in err and "rtx-4090" in err


def test_plot_draws_and_never_overwrites(cli, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "fit.png"
    args = ["fit", "qwen3-8b", "-c", "32k", "-n", "32", "--gpu", "l4,l40s", "--max-gpus", "4", "--plot", str(png)]
    code, out, err = cli(*args)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = cli(*args)
    assert code == 2 and "exists" in err


def test_markdown_has_the_pareto_table(cli):
    code, out, _ = cli("fit", "qwen3-8b", "-c", "32k", "-n", "32", "--gpu", "l4,l40s", "--max-gpus", "4",
                       "--allow", "kivi", "--format", "markdown")
    assert code == 0
    assert "### Pareto: GPUs against achievable concurrency by technique set (budget 32)" in out
    assert "| kv bf16 + kivi |" in out


def test_plan_scenario_fit(cli, tmp_path):
    code, out, err = cli("plan", "rag-128k", "--fit", "--format", "json")
    assert code == 0, err
    fit = json.loads(out)["fits"][0]
    top = fit["options"][0]
    assert fit["scenario"] == "rag-128k" and fit["concurrency"] == 16 and fit["context_tokens"] == 131072
    assert top["techniques"] == ["fp8", "page:16"] and top["max_concurrency"] >= 16
    assert top["decode_ms_per_token"] <= 30 and top["kv_bytes_per_gpu"] <= 85 * 1024**3
    bad = tmp_path / "huge.yaml"
    bad.write_text("model: llama-3.1-70b\ndeployment:\n  gpu: h100\nworkload:\n  prompt_tokens: 129024\n"
                   "  output_tokens: 2048\n  concurrency: 1000\n")
    code, out, err = cli("plan", str(bad), "--fit")
    assert code == 1 and "scenario huge" in err and "closest:" in err


def test_fit_imports_no_heavy_module():
    import subprocess
    import sys

    code = ("import sys; from kvplan.cli.app import app; from kvplan.cli import common; "
            "sys.argv = ['kvplan', 'fit', 'llama-3.1-70b', '-c', '128k', '-n', '16', '--gpu', 'h200', '--engine', 'vllm', "
            "'--format', 'json']; rc = common.run(app); "
            "bad = [m for m in ('torch', 'triton', 'pandas', 'huggingface_hub', 'matplotlib') if m in sys.modules]; "
            "sys.stderr.write(repr(bad)); sys.exit(rc or (1 if bad else 0))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1",
                          "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stderr.endswith("[]")


def test_vllm_refusing_every_option_says_why(cli):
    code, _, err = cli("fit", "llama-3.1-8b", "-c", "1m", "-n", "1", "--gpu", "h200", "--engine", "vllm")
    assert code == 1
    assert "meet the planner's budgets but vLLM would not start them" in err
    assert "max_position_embeddings" in err


def test_options_table_names_the_gpus_in_one_column_and_drops_a_column_of_none(cli):
    # Llama-3.1-70B, 16 x 32K on H200s: 80 layers x 8 KV heads x 128 x 2 x 2 B = 320 KiB/token, 10 GiB a
    # sequence, 160 GiB for the batch; 141 GiB H200s at 0.9 less 2 GiB and 131.4 GiB of weights: three hold it
    code, out, err = cli("fit", "llama-3.1-70b", "-c", "32k", "-n", "16", "--gpu", "h200", "--kv-dtype", "auto",
                         "--top", "2", "--format", "markdown")
    assert code == 0, err
    head = next(line for line in out.splitlines() if line.startswith("| # |"))
    assert head.startswith("| # | GPUs | tp x pp | kv |") and "quality" not in head
    assert "| 1 | 3 x h200 | 1 x 3 | bf16 |" in out and "(none with a quality caveat)" in out
    # with an fp8 option among those shown, the quality column stays, with the caveat in it
    code, out, err = cli("fit", "llama-3.1-70b", "-c", "128k", "-n", "16", "--gpu", "h200", "--top", "6",
                         "--format", "markdown")
    assert "| quality |" in out and "kv fp8_e4m3: quality risk" in out


@pytest.mark.parametrize("engine, utilization", [
    # vLLM's own gpu_memory_utilization default when the server is started without it: 0.92 from 0.20.0
    # (config/cache.py CacheConfig, 0.33.0: Field(default=0.92)); 0.34.0 leaves it unset and resolves it to 1.0
    # under the extensible KV cache (CacheConfig.resolved_gpu_memory_utilization); the ideal plan's default is 0.9
    ("vllm@0.24", 0.92), ("vllm", 1.0), ("ideal", 0.9)])
def test_fit_under_vllm_sizes_the_pool_at_the_utilization_estimate_uses(cli, engine, utilization):
    # `kvplan fit --engine vllm` planned at 0.9 while `kvplan estimate --engine vllm` of the same deployment took
    # the release's default, so fit refused 2 x H100 for Llama-3.1-70B at 32K where estimate's vLLM pool held 2
    code, out, err = cli("fit", "llama-3.1-8b", "-c", "32k", "-n", "2", "--gpu", "h100", "--max-gpus", "1",
                         "--kv-dtype", "auto", "--engine", engine, "--format", "json")
    assert code == 0, err
    fit = json.loads(out)
    assert fit["settings"]["mem_util"] == utilization
    option = fit["options"][0]
    code, out, err = cli("estimate", "llama-3.1-8b", "-c", "32k", "--gpu", "h100", "--engine", engine,
                         "--format", "json")
    assert code == 0, err
    estimate = json.loads(out)
    assert estimate["capacity"]["mem_util"] == utilization
    assert option["kv_pool_bytes_per_gpu"] == estimate["capacity"]["pool_bytes"]
    if engine != "ideal":
        assert option["engine_max_concurrency"] == pytest.approx(estimate["engine"]["max_concurrency"])


def test_a_mistyped_gpu_gets_the_same_suggestion_as_in_estimate(cli):
    # estimate said "did you mean h800 or h200?" for h1000; fit dropped the suggestion and listed the catalog only
    code, out, err = cli("fit", "llama-3.1-8b", "--gpu", "h100,h2000")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown GPU 'h2000' (did you mean h200" in err and err.rstrip().endswith(", or all)")
