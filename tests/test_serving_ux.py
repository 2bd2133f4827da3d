"""What a serving engineer meets on a first run (session 26's walk-through): the flags --emit must add for the
plan to hold, warnings the planner owes, and output that reads on one line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.cli.app import app


def run(*args):
    r = CliRunner().invoke(app, list(args))
    return r


def emit_argv(*args, release="vllm"):
    r = run("estimate", *args, "--emit", release, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["emit"]


def test_text_only_plan_emits_language_model_only():
    # docs/weights.md: a text-only start is planned with --set vision_config=null; vLLM builds the tower unless
    # --language-model-only (vllm/engine/arg_utils.py, present in 0.17.0, absent in 0.16.0)
    text_only = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100", "--set", "vision_config=null")
    assert "--language-model-only" in text_only["argv"]
    with_tower = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100")
    assert "--language-model-only" not in with_tower["argv"]


def test_text_only_plan_on_a_release_without_the_flag_says_so():
    out = emit_argv("qwen2.5-vl-7b", "--context", "8192", "--gpu", "h100", "--set", "vision_config=null",
                    release="vllm@0.16")
    assert "--language-model-only" not in out["argv"]
    assert any(n.startswith("--language-model-only is not a vLLM") for n in out["notes"])
