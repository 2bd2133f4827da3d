"""vLLM's "Available KV cache memory", predicted from the GPU before any log exists.

vLLM (vllm/v1/worker/gpu_worker.py: Worker.determine_available_memory; the v0
worker.py before it) measures, after loading the weights, one profiling
forward pass of max_num_batched_tokens dummy tokens and sets

    available = total_gpu_memory x gpu_memory_utilization
                - (weights + peak activation of the profiling run + non-torch memory)
                [- the CUDA-graph estimate, from 0.21]

This module models each term; only the first two are known exactly:
- total: the driver's figure (pass --gpu-memory with nvidia-smi's value; the
  catalog's datasheet GiB is about 1% above what the driver reports);
- weights: the checkpoint's bytes per TP rank (kvplan's parameter count x
  dtype unless --weights or the log gives them: quantized checkpoints differ);
- peak activation: PROFILE_BYTES_PER_TOKEN_PER_HIDDEN x hidden_size x the
  profiled tokens. The constant (26 B, i.e. about 13 bf16 hidden-size tensors
  alive per token) comes from the two Llama-3.1-8B runs of vLLM issue #10517,
  whose peak grew by 0.92 GiB for 9,000 more profiled tokens; it is a heuristic
  for dense models, blind to MoE workspaces, vision encoders and the sampler;
- non-torch memory: NON_TORCH_BYTES (0.35 GiB, the same runs' figure).
The profiled tokens: max_num_batched_tokens for the v1 engine; the v0 engine
without chunked prefill profiled max(max_model_len, max_num_batched_tokens).
docs/engines.md lists the error per collected log.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import GIB

PROFILE_BYTES_PER_TOKEN_PER_HIDDEN = 26
NON_TORCH_BYTES = int(0.35 * GIB)
CUDA_GRAPH_BYTES = 0  # 0.21+ subtracts its own estimate; not modelled (see docs/engines.md)


@dataclass(frozen=True)
class ProfileEstimate:
    total_bytes: int
    gpu_memory_utilization: float
    weight_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int
    profiled_tokens: int

    @property
    def requested_bytes(self) -> int:
        return int(self.total_bytes * self.gpu_memory_utilization)

    @property
    def available_bytes(self) -> int:
        return (self.requested_bytes - self.weight_bytes - self.activation_bytes - self.non_torch_bytes
                - self.cuda_graph_bytes)

    def lines(self) -> list[str]:
        g = GIB
        return [f"requested {self.total_bytes / g:.2f} GiB x {self.gpu_memory_utilization:g} = {self.requested_bytes / g:.2f} GiB; "
                f"weights {self.weight_bytes / g:.2f} GiB; peak activation {self.activation_bytes / g:.2f} GiB "
                f"({self.profiled_tokens:,} profiled tokens, heuristic); non-torch {self.non_torch_bytes / g:.2f} GiB; "
                f"available {self.available_bytes / g:.2f} GiB"]


def predict_available(model, *, total_bytes: int, gpu_memory_utilization: float, tp: int = 1, pp: int = 1,
                      max_num_batched_tokens: int = 8192, max_model_len: int | None = None,
                      weight_bytes: int | None = None, v0_engine: bool = False) -> ProfileEstimate:
    """vLLM's available KV memory per GPU for `model` under these settings (see the module doc)."""
    ranks = max(tp, 1) * max(pp, 1)
    weights = weight_bytes if weight_bytes is not None else model.weight_bytes // ranks
    tokens = max_num_batched_tokens
    if v0_engine and max_model_len:
        tokens = max(max_model_len, max_num_batched_tokens)
    activation = tokens * (model.hidden_size or 0) * PROFILE_BYTES_PER_TOKEN_PER_HIDDEN
    return ProfileEstimate(total_bytes, gpu_memory_utilization, weights, activation, NON_TORCH_BYTES,
                           CUDA_GRAPH_BYTES, tokens)


__all__ = ["predict_available", "ProfileEstimate", "PROFILE_BYTES_PER_TOKEN_PER_HIDDEN", "NON_TORCH_BYTES"]
