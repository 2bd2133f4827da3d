"""What a serving engineer meets on a first run (session 26's walk-through): the flags --emit must add for the
plan to hold, warnings the planner owes, and output that reads on one line."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def emit_argv(cli):
    def emit(*args, release="vllm"):
        code, out, err = cli("estimate", *args, "--emit", release, "--format", "json")
        assert code == 0, err
        return json.loads(out)["emit"]
    return emit


def test_text_only_plan_emits_language_model_only(emit_argv):
    # docs/weights.md: a text-only start is planned with --set vision_config=null; vLLM builds the tower unless
    # --language-model-only (vllm/engine/arg_utils.py, present in 0.17.0, absent in 0.16.0)
    text_only = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100", "--set", "vision_config=null")
    assert "--language-model-only" in text_only["argv"]
    with_tower = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100")
    assert "--language-model-only" not in with_tower["argv"]


def test_text_only_plan_on_a_release_without_the_flag_says_so(emit_argv):
    out = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100", "--set", "vision_config=null",
                    release="vllm@0.16")
    assert "--language-model-only" not in out["argv"]
    assert any(n.startswith("--language-model-only is not a vLLM") for n in out["notes"])


def test_a_batch_larger_than_the_pool_is_a_warning(cli):
    # Llama-3.1-8B at 128K: 32 layers x 8 KV heads x (128 + 128) x 2 B x 131,072 tokens = 16 GiB a sequence; one
    # H100 (79.18 GiB reported) x 0.9 = 71.26 GiB, less the 14.96 GiB bf16 checkpoint (16.06 GB) and the 2 GiB
    # reserve: 54.3 GiB, so 3 sequences fit and a batch of 8 does not
    code, out, err = cli("estimate", "llama-3.1-8b", "--context", "128k", "--gpu", "h100", "--batch", "8")
    assert code == 0, err
    assert "warning: --batch 8 does not fit: kvplan's KV pool holds 3 sequences of 128K" in out
    code, out, err = cli("estimate", "llama-3.1-8b", "--context", "128k", "--gpu", "h100", "--batch", "3")
    assert code == 0, err
    assert "does not fit" not in out


def test_fit_warns_above_the_models_maximum_context(cli):
    # Qwen3-30B-A3B's config.json: max_position_embeddings 40,960; 64K = 65,536 is above it
    code, out, err = cli("fit", "qwen3-30b-a3b", "--context", "64k", "--concurrency", "1", "--gpu", "h200", "--top", "1")
    assert code == 0, err
    assert "kvplan: warning: --context 65,536 tokens is above the maximum context of Qwen/Qwen3-30B-A3B, 40,960" in err
    code, out, err = cli("fit", "qwen3-30b-a3b", "--context", "32k", "--concurrency", "1", "--gpu", "h200", "--top", "1")
    assert code == 0 and "maximum context" not in err


def test_weights_that_do_not_fit_point_at_online_quantization(cli):
    # Llama-3.1-70B's bf16 checkpoint (141.11 GB) exceeds one H100: vLLM's --quantization fp8 is the flag that
    # serves it on one card (README)
    code, out, err = cli("estimate", "llama-3.1-70b", "--context", "8k", "--gpu", "h100")
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvplan: error: ") and "--quantization fp8" in lines[0]


def test_a_table_title_wider_than_its_table_stays_on_one_line(monkeypatch):
    # fit's Pareto title is longer than its seven narrow columns; on a 140-column terminal it must not wrap at the
    # table's width ("(budget" / "16)")
    import io

    from kvplan.render import Report, Table, render

    monkeypatch.setenv("COLUMNS", "140")
    title = "Pareto: GPUs against achievable concurrency by technique set (budget 16)"
    buf = io.StringIO()
    render(Report({}, [Table(title, ["set", "gpus"], [["kv bf16", 2]], {1})]), "table", buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == title
    assert lines[1].startswith("┏") and len(lines[1]) < len(title)


def test_the_weights_row_names_the_vision_tower_it_counts(cli):
    # Qwen2.5-VL-7B's vision_config (transformers 5.25 modeling_qwen2_5_vl.py): Conv3d patch embed 3 x 2 x 14 x 14
    # x 1,280; 32 blocks of two RMSNorms, qkv 1,280 -> 3,840 and proj 1,280 -> 1,280 (biased), a gated MLP
    # 1,280 -> 3,420 -> 1,280 (biased); the merger's RMSNorm and MLP 5,120 -> 5,120 -> 3,584 (biased):
    # 676,550,144 parameters x 2 B (bf16) = 1,353,100,288 B = 1.26 GiB (1.35 GB)
    code, out, err = cli("estimate", "qwen2.5-vl-7b", "--gpu", "h100", "--format", "markdown")
    assert code == 0, err
    assert "of it, 1.26 GiB (1.35 GB) is the vision tower, which --set vision_config=null leaves out" in out
    code, out, err = cli("estimate", "qwen2.5-vl-7b", "--gpu", "h100", "--format", "markdown",
                         "--set", "vision_config=null")
    assert code == 0 and "vision tower" not in out


def test_fit_pareto_says_its_concurrency_is_capped_by_the_engine(cli):
    # under --engine vllm the options table shows the planner's conc and vLLM's apart; the Pareto view's conc is
    # the lower of the two (fit.records.achievable), which its title must say
    args = ("fit", "llama-3.1-8b", "--context", "32k", "--concurrency", "8", "--gpu", "l40s", "--max-gpus", "2",
            "--format", "markdown")
    code, out, err = cli(*args, "--engine", "vllm")
    assert code == 0, err
    assert "(budget 8; conc: the planner's, at most vLLM 0.34's)" in out
    code, out, err = cli(*args)
    assert code == 0, err
    assert "(budget 8)" in out and "at most" not in out


def test_engine_and_emit_notes_neither_stack_warning_nor_repeat(cli):
    # a warning among the notes prints as "warning: ...", not "note: warning: ..."; under --engine vllm the log
    # section already says vLLM 0.34 sizes the pool after warmup, so --emit's note keeps only the flags
    code, out, err = cli("estimate", "llama-3.1-8b", "--context", "128k", "--gpu", "h100", "--engine", "vllm",
                         "--emit", "vllm")
    assert code == 0, err
    lines = out.splitlines()
    assert not any("note: warning:" in line for line in lines)
    assert any(line.startswith("  warning: --max-num-seqs ") for line in lines)
    assert sum("sizes the pool after warmup" in line or "sizes the KV cache from the memory free after warmup" in line
               for line in lines) == 1
    assert any("--no-enable-extensible-kv-cache" in line for line in lines)


def test_compare_engine_is_one_line_pointing_at_estimate(cli):
    # compare has no engine accounting; click's own answer to --engine was "Possible options: --technique"
    code, out, err = cli("compare", "deepseek-v3", "qwen3-8b", "--gpu", "h200", "--tp", "8", "--engine", "sglang")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvplan: error: compare has no --engine")
    assert "kvplan estimate MODEL --engine sglang" in lines[0]


def test_b300_memory_is_said_to_be_nvidia_smis_not_the_datasheets(cli):
    # the catalog's B300 total is nvidia-smi's memory.total, 275,040 MiB = 268.59 GiB (capacity/gpus.py), not the
    # 288 GB of its datasheet; the H800's is its datasheet's 80 GiB
    code, out, err = cli("estimate", "qwen3-8b", "--gpu", "b300", "--format", "json")
    assert code == 0, err
    cap = json.loads(out)["capacity"]
    assert cap["gpu_memory_bytes"] == 275_040 * 2**20 and cap["gpu_memory_from"] == "nvidia-smi"
    code, out, err = cli("estimate", "qwen3-8b", "--gpu", "b300", "--format", "markdown")
    assert "| memory per GPU | 268.59 GiB (288.40 GB) x 0.9 (nvidia-smi's total;" in out


def test_fit_names_the_engine_column_and_the_flag_that_prints_the_command(cli):
    # the engine's column is its "Maximum concurrency" beside the planner's conc; fit has no --emit, so its check
    # line says which flag of estimate prints the serving command
    code, out, err = cli("fit", "llama-3.1-8b", "--context", "32k", "--concurrency", "8", "--gpu", "l40s",
                         "--max-gpus", "2", "--engine", "vllm", "--format", "markdown")
    assert code == 0, err
    assert "| # | GPUs | tp x pp | kv | conc | vLLM 0.34 conc |" in out
    assert "--engine vllm (add --emit vllm for the serving command)" in out


def test_a_batch_that_fits_kvplan_but_not_the_engine_is_a_warning_too(cli):
    # Llama-3.1-70B, --quantization fp8 (FP8 linears, ~70.55e9 x 1 B, plus bf16 embeddings and head, 2 x 128,256
    # x 8,192 x 2 B: ~72.7 GB = 67.7 GiB), TP 2 on H100s at vLLM 0.34's utilization 1.0: 79.18 - 33.8 - 2 GiB =
    # 43.3 GiB a GPU; an fp8 sequence of 32K is 80 x 4 KV heads x 256 x 1 B x 32,768 = 2.5 GiB a GPU: 17 fit
    # kvplan's pool, and vLLM's own pool (its profile terms, block rounding) holds fewer than 16
    code, out, err = cli("estimate", "llama-3.1-70b", "--context", "32k", "--batch", "16", "--gpu", "h100", "--tp",
                         "2", "--engine", "vllm", "--quantization", "fp8", "--kv-dtype", "fp8")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("warning: --batch 16 does not fit"))
    assert "kvplan's KV pool holds 17 sequences of 32K, vLLM's 15." in line
