"""SGLang 0.5.23's --moe-a2a-backend deepep holds DeepSeek-V3's shared experts whole on every GPU
(models/deepseek_v2.py DeepseekV2MoE: parallel_group "replicated" under _shared_expert_use_tp1's backends, fusion off
under DeepEP): kvplan's own plan (capacity.pool, Deployment.replicated_shared) and SGLang's report
(engines/sglang_report.py) count the same bytes a GPU, and vLLM's backend of a like name does not turn it on."""

import json

import pytest

BASE = ["estimate", "deepseek-v3", "--gpu", "h200", "--context", "32k", "--format", "json"]

# DeepSeek-V3's config: hidden_size 7168, moe_intermediate_size 2048, n_shared_experts 1, num_hidden_layers 61,
# first_k_dense_replace 3 -> 58 MoE layers; FP8 block quantization (weight_block_size [128, 128], 1 B a weight) with
# a float32 weight_scale_inv a 128 x 128 block. One shared expert: gate_proj and up_proj [2048, 7168], down_proj
# [7168, 2048]: 3 x 2048 x 7168 = 44,040,192 B of weights + 3 x (16 x 56 = 896) x 4 B = 10,752 B of scales =
# 44,050,944 B a layer; 58 layers: 2,554,954,752 B whole. kvplan splits them over 8 GPUs without the backend
# (--tp 8: ceil(2,554,954,752 / 8) = 319,369,344 B; under attention DP over all dp x tp = 8 GPUs, the same), so
# whole on every GPU is 2,554,954,752 - 319,369,344 = 2,235,585,408 B (2.08 GiB) more a GPU.
SHARED_WHOLE_EXTRA = 2_235_585_408


def _weights(cli, *args):
    code, out, err = cli(*BASE, *args)
    assert code == 0, err
    data = json.loads(out)
    return data["capacity"]["weight_bytes_per_gpu"], data["engine"]["weight_bytes_per_gpu"]


@pytest.mark.parametrize("dp", [[], ["--dp", "8"]])
def test_plan_and_sglang_report_count_the_shared_experts_whole(cli, dp):
    layout = ["--engine", "sglang", "--tp", "8", *dp, "--ep"]
    plan_none, engine_none = _weights(cli, *layout)
    plan_deepep, engine_deepep = _weights(cli, *layout, "--moe-a2a-backend", "deepep")
    assert engine_deepep - engine_none == SHARED_WHOLE_EXTRA
    assert plan_deepep - plan_none == SHARED_WHOLE_EXTRA
    assert plan_deepep == engine_deepep  # kvplan's own table and SGLang's agree on what a GPU holds


def test_vllm_deepep_v2_is_not_sglangs():
    # vLLM's --all2all-backend deepep_v2 (engines/vllm_a2a.py) is a name SGLang's --moe-a2a-backend also takes; only
    # SGLang's flag marks the shared experts whole (vLLM's sequence-parallel rule is capacity.experts.shared_whole)
    from kvplan.request import EstimateRequest

    vllm = EstimateRequest.from_options(model="deepseek-v3", engine="vllm", tp=8, dp=2, ep=True,
                                        all2all_backend="deepep_v2")
    sglang = EstimateRequest.from_options(model="deepseek-v3", engine="sglang", tp=8, ep=True,
                                          moe_a2a_backend="deepep_v2")
    assert (vllm.deployment.a2a, vllm.deployment.replicated_shared) == ("deepep_v2", False)
    assert (sglang.deployment.a2a, sglang.deployment.replicated_shared) == ("deepep_v2", True)
