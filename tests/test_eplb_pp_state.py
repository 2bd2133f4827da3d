"""vLLM 0.34's EPLB state under pipeline stages: each stage's model counts num_moe_layers over its own layers
(model_executor/models/qwen3_moe.py Qwen3MoeForCausalLM.__init__ skips PPMissingLayer), and EplbState.add_model
(distributed/eplb/eplb_state.py) sizes its tables by that count; expert_buffer is one MoE layer's local experts
whatever the stage.

Qwen3-30B-A3B: 48 layers, all MoE, 128 experts of 3 x 768 x 2,048 = 4,718,592 parameters (9,437,184 B in bf16).
--tp 1 --dp 2 --ep --pp 2 --redundant-experts 0: EP 2, P = 128, 64 experts a GPU, 24 MoE layers a stage.
  expert_buffer 64 x 9,437,184 = 603,979,776 B
  tables for L = 24: window 1,000 x 24 x 128 x 4 = 12,288,000; load pass 24 x 128 x 4 = 12,288; physical_to_logical
  24 x 128 x 8 = 24,576; logical_to_physical 24 x 128 x 1 x 8 = 24,576; replica count and last load 2 x 24 x 128 x 8
  = 49,152: 12,398,592 B
  = 616,378,368 B a GPU (all 48 layers' tables, 24,797,184 B, would give 628,776,960)."""

import json

STAGE_STATE = 603_979_776 + 12_398_592


def test_state_bytes_count_the_stage_layers():
    from kvplan.capacity.eplb import vllm_state_bytes
    from kvplan.capacity.hardware import make_deployment
    from kvplan.capacity.weights import plan_weights
    from kvplan.sources import load_model

    model = load_model("qwen3-30b-a3b")
    weights = plan_weights(model, make_deployment(None, tp=1, pp=2, dp=2, ep=True, redundant_experts=0))
    assert vllm_state_bytes(model, weights, 2, 0, pp=2) == STAGE_STATE == 616_378_368
    assert vllm_state_bytes(model, weights, 2, 0) == 603_979_776 + 24_797_184


def test_vllm_profile_takes_the_stage_state(cli):
    def kv(*extra):
        code, out, err = cli("estimate", "qwen3-30b-a3b", "--tp", "1", "--dp", "2", "--ep", "--pp", "2", "--gpu",
                             "h100", "--context", "8k", "--engine", "vllm", "--format", "json", *extra)
        assert code == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    # R = 0 places the experts as without EPLB: the pool differs by the state alone
    assert kv() - kv("--redundant-experts", "0") == STAGE_STATE
