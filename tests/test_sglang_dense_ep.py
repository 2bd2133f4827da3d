"""--ep for a model without routed experts under SGLang: worded from SGLang 0.5.23's own source, not vLLM's rule.

SGLang 0.5.23 refuses no --ep-size for a dense model: the arg_groups checks that read ep_size name a MoE runner
(moe_hook.py: flashinfer_cutlass / cutedsl), an a2a backend or an architecture (model_hook.py Intern-S2-Mobius,
cp_tp_group_sharing_hook.py); runtime_context.py derive_parallel_widths sets moe_ep_size = ep_size and moe_tp_size =
tp_size // ep_size // moe_dp_size, and distributed/parallel_state.py initialize_model_parallel builds the MoE groups
from them, which only FusedMoE layers use. So --ep places nothing of Llama-3.1-8B (LlamaForCausalLM, no experts):
kvplan says SGLang takes it and that the plan is --tp's. vLLM 0.34 refuses it (config/model.py
_verify_with_expert_parallelism), and that line stays vLLM's."""

import pytest


@pytest.mark.parametrize("engine", [["--engine", "sglang"], ["--emit", "sglang"]])
@pytest.mark.parametrize("layout, ep_size", [(["--tp", "2"], "2"), (["--tp", "4", "--dp", "2"], "4")])
def test_sglang_dense_ep_is_worded_from_sglang(cli, engine, layout, ep_size):
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", *layout, "--ep", *engine)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    # kvplan's --ep is SGLang's --ep-size = its --tp (the dp x tp GPUs under --enable-dp-attention)
    assert f"SGLang 0.5.23 takes --ep-size {ep_size} for it" in err and "initialize_model_parallel" in err, err
    assert "vLLM" not in err and "_verify_with_expert_parallelism" not in err, err


def test_vllm_keeps_its_own_rule(cli):
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100", "--tp", "2", "--ep", "--engine", "vllm")
    assert code == 2 and "_verify_with_expert_parallelism" in err, err


def test_fit_dp_ep_under_sglang(cli):
    # Qwen3ForCausalLM is one of SGLang's attention-DP families (engines/sglang_dp.py) but has no experts
    code, out, err = cli("fit", "qwen3-8b", "-c", "8k", "-n", "1", "--gpu", "h100", "--max-gpus", "2", "--dp-ep",
                         "--engine", "sglang")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("--dp-ep:"))
    assert "SGLang 0.5.23 takes --ep-size" in line and "vLLM" not in line, line
