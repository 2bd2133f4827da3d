"""Session 27's user-experience pass: notes that name the flag a user gives (not kvplan's module paths), agree
with the emitted command, and refusals that stay one short line. Expectations are the wording rules themselves
(what a serving engineer types), not kvplan's output copied."""

from __future__ import annotations

import json

from kvplan_inprocess import kvplan, refused_line

LOG = "tests/data/vllm_logs/v01011_qwen2_7b_tp2_a100_40gb_diff_nodes_sort.log"
# Qwen2-7B-Instruct's config.json (as tests/test_vllm_logs_s27.py holds it)
QWEN2_7B = {"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
            "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen2",
            "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 152064}


def _lines(out) -> list[str]:
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_vllm_dp_notes_name_flags_not_module_paths():
    # DeepSeek-V3 at dp 8 x tp 8 with EP: the placement line and the --data-parallel-size note point a user at
    # --all2all-backend, never at engines/*.py or capacity/*.py
    lines = _lines(kvplan("estimate", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "8", "--ep",
                          "--redundant-experts", "auto", "--engine", "vllm"))
    placement = next(line for line in lines if line.startswith("note: routed experts"))
    dp = next(line for line in lines if "--data-parallel-size 8:" in line)
    assert "--all2all-backend" in placement
    for line in (placement, dp):
        assert ".py (" not in line and "engines/" not in line and "capacity/" not in line, line
    # the fused-MoE workspace has its own note (not modelled on this path): the DP note no longer claims it is
    assert "Modelled:" not in dp and any("fused-MoE workspace not modelled" in line for line in lines)


def test_sglang_dp_note_spells_dp_as_the_emitted_command():
    # SGLang 0.5.23 deprecates --dp N --enable-dp-attention for --attn-dp-size N (server_args.py), which --emit
    # sglang prints: the placement note spells it the same way, and names no kvplan module
    lines = _lines(kvplan("estimate", "qwen3-30b-a3b", "--engine", "sglang", "--gpu", "h100", "--tp", "8", "--dp",
                          "8", "--ep", "--moe-a2a-backend", "deepep", "--emit", "sglang"))
    note = next(line for line in lines if "attention groups" in line)
    command = next(line for line in lines if "sglang.launch_server" in line)
    assert note.startswith("note: SGLang --tp 8 --attn-dp-size 8:") and "--attn-dp-size 8" in command
    assert "enable-dp-attention" not in note and "engines/" not in note


def test_sglang_dp_refusals_name_the_flag_the_emitted_command_gives():
    # --emit sglang prints --attn-dp-size N (the spelling 0.5.23 keeps); the refusals of --dp name it too, beside the
    # deprecated one a user may know
    line = refused_line("deepseek-v3", "--gpu", "h200", "--dp", "8", "--engine", "sglang")
    assert "--attn-dp-size 8" in line and "8 does not divide 1" in line
    line = refused_line("deepseek-v3", "--gpu", "h200", "--tp", "8", "--dp", "8", "--engine", "vllm", "--emit",
                        "sglang")
    assert "--attn-dp-size 8" in line and "plan and emit one engine" in line


def test_sglang_dp_refusal_does_not_list_every_architecture():
    # Llama under SGLang attention DP: one line saying why (llama.py splits heads over the whole --tp) and what to
    # do, without the 15 class names of the families read
    line = refused_line("llama-3.1-8b", "--engine", "sglang", "--gpu", "h100", "--tp", "8", "--dp", "8")
    assert "LlamaForCausalLM: models/llama.py" in line and "plan SGLang with --tp" in line
    assert "DeepseekV2ForCausalLM" not in line and len(line) < 400


def test_calibrate_two_node_log_says_why_pcie_only(tmp_path):
    # the log's "process group spans across nodes" at TP 2 is read as PCIe-only on an NVLink card (A100 40GB):
    # the non-torch note says the log, not the catalog, made it so
    config = tmp_path / "qwen2-7b.json"
    config.write_text(json.dumps(QWEN2_7B), encoding="utf-8")
    lines = _lines(kvplan("calibrate", LOG, "--model", str(config), "--gpu", "a100-40gb"))
    note = next(line for line in lines if "over PCIe only" in line)
    assert "the log's custom all-reduce warning" in note and "two nodes" in note
    # a PCIe-only catalog card (L40S) needs no such reason
    lines = _lines(kvplan("estimate", "qwen3-30b-a3b", "--engine", "vllm", "--gpu", "l40s", "--tp", "2"))
    assert any("over PCIe only: +" in line for line in lines)


def test_calibrate_unknown_log_model_said_once():
    out = kvplan("calibrate", LOG)
    assert out.returncode != 0
    line = out.stderr.strip()
    assert len(line.splitlines()) == 1 and line.count("Qwen2-7B-Instruct") == 1 and "give --model" in line


def test_mla_block_note_names_the_backend_of_the_card():
    # vLLM 0.34 platforms/cuda.py _get_backend_priorities with each backend's supports_compute_capability:
    # FLASH_ATTN_MLA needs SM 9, FLASHMLA SM 9 / 10, FLASHINFER_MLA SM 10, so an A100 (8.0), a V100 (7.0) and an
    # RTX 5090 (12.0, TRITON_MLA listed first) run TRITON_MLA, whose MultipleOf(16) blocks keep 0.34's default 64;
    # an H100 keeps FlashAttention MLA's 64
    for gpu, said in (("a100-80gb", "(Triton MLA on SM 8.0)"), ("v100-32gb", "(Triton MLA on SM 7.0)"),
                      ("rtx-5090", "(Triton MLA on SM 12.0)"), ("h100", "(FlashAttention MLA on Hopper)")):
        lines = _lines(kvplan("estimate", "deepseek-v2-lite", "--gpu", gpu, "--gpu-memory", "200GiB",
                              "--engine", "vllm"))
        assert f"  note: MLA: block size 64 {said}" in lines, gpu


def test_fit_says_why_a_refused_card_is_absent():
    # gpt-oss-20b is served with GptOssMxfp4Config, whose get_min_capability is 80 (vLLM 0.34
    # layers/quantization/mxfp4.py); a T4 is SM 7.5: every T4 option is refused, so the report says so once
    # instead of asking for the T4's price. The winner is one L4: no option uses fewer GPUs, so --explain says
    # that in a line rather than printing an empty table
    out = kvplan("fit", "gpt-oss-20b", "-c", "8k", "-n", "4", "--gpu", "t4,l4", "--engine", "vllm", "--explain")
    lines = _lines(out)
    assert any(line.startswith("t4 left out: vLLM 0.34 refuses the gpt_oss_mxfp4 quantization on an SM 7.5 card")
               for line in lines)
    assert not any(line.startswith("no list price for t4") for line in lines)
    assert "explain: no searched option would use fewer GPUs than the winner" in lines
    assert "Why the 0 options" not in out.stdout
    # a card refused only for one KV dtype (fp8 on the T4) stays searched: no 'left out' line
    lines = _lines(kvplan("fit", "llama-3.1-8b", "-c", "8k", "-n", "4", "--gpu", "t4", "--engine", "vllm"))
    assert not any("left out" in line for line in lines)


def test_calibrate_a_log_naming_no_model_with_a_model_that_fails_to_load(tmp_path):
    # a log naming no model, --model a bundled name whose --set makes it unreadable: the load error in one line
    # (fuzz seed 37 found an internal error: the name was read from the log's missing model)
    log = tmp_path / "no_model.log"
    log.write_text("INFO 01-01 00:00:00 [gpu_worker.py:298] Available KV cache memory: 5.00 GiB\n"
                   "INFO 01-01 00:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 40,960 tokens\n")
    out = kvplan("calibrate", str(log), "--model", "llama-3.1-8b", "--set", "num_key_value_heads=" + "9" * 30)
    assert out.returncode != 0 and "internal error" not in out.stderr
    assert "'num_key_value_heads' must be <= 100,000" in out.stderr
