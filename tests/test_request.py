"""The typed requests (kvplan/request.py): options parsed before anything loads,
and one way the checkpoint's weights enter a deployment."""

import pytest

from kvplan.errors import UsageError
from kvplan.request import DeploymentRequest, EngineRequest, EstimateRequest
from kvplan.units import GIB
from kvplan.weights.record import Weights


def test_nothing_about_hardware_means_no_deployment():
    assert DeploymentRequest().build() is None
    dep = DeploymentRequest(tp=2).build()
    assert dep.gpu is None and (dep.tp, dep.pp) == (2, 1)


def test_checkpoint_weights_enter_the_deployment_unless_a_size_is_given():
    ckpt = Weights(total_bytes=65_248_815_744, source="bundled")
    dep = DeploymentRequest(gpu="h100").build(ckpt)
    assert dep.weights is ckpt and dep.weight_bytes == 65_248_815_744
    given = DeploymentRequest(gpu="h100", weight_bytes=10 * GIB).build(ckpt)
    assert given.weights is None and given.weight_bytes == 10 * GIB


def test_options_are_parsed_and_checked_before_any_model_loads():
    r = EstimateRequest.from_options(model="no/such-model-anywhere", context="128k", batch="4", gpu="h100",
                                     reserve="0", kv_memory="10GiB", engine="vllm@0.11", max_model_len="64k")
    assert (r.context_tokens, r.batch, r.deployment.reserve_bytes, r.deployment.kv_memory_bytes) == (
        131_072, 4, 0, 10 * GIB)
    assert (r.engine.name, r.engine.rules.version, r.engine_tokens) == ("vllm", "0.11", 65_536)
    with pytest.raises(UsageError, match="--mem-util"):
        EstimateRequest.from_options(model="no/such-model-anywhere", mem_util=1.5)


def test_emit_follows_a_pinned_engine_release():
    assert EngineRequest.parse("vllm@0.11", "vllm").emit_rules.version == "0.11"
    assert EngineRequest.parse("ideal", None).rules is None
    assert EngineRequest.parse("ideal", "sglang").emit == "sglang"  # SGLang's launch_server (engines.sglang_flags)
    with pytest.raises(UsageError, match="--emit"):
        EngineRequest.parse("ideal", "tgi")
    with pytest.raises(UsageError, match="SGLang 0.4.0 is not a release kvplan models"):
        EngineRequest.parse("ideal", "sglang@0.4.0")
    # --emit sglang follows a pinned --engine sglang@0.5.9, and is the newest release on its own
    assert EngineRequest.parse("sglang@0.5.9", "sglang").emit_release == "0.5.9"
    assert EngineRequest.parse("ideal", "sglang").emit_release == "0.5.23"


@pytest.mark.parametrize("engine, given, expected", [
    ("ideal", None, 0.9),  # kvplan's default
    ("vllm", None, 1.0),  # 0.34: resolved_gpu_memory_utilization under the extensible KV cache (CUDA's default)
    ("vllm@0.33", None, 0.92),  # vLLM's CacheConfig.gpu_memory_utilization from 0.20.0
    ("vllm@0.19", None, 0.9),
    ("vllm@0.11", None, 0.9),
    ("vllm", 0.8, 0.8),  # --mem-util wins
])
def test_mem_util_defaults_to_the_engines_own(engine, given, expected):
    r = EstimateRequest.from_options(model="llama-3.1-8b", gpu="h100", engine=engine, mem_util=given)
    assert r.deployment.mem_util == expected
