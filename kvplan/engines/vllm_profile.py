"""vLLM's "Available KV cache memory", predicted from the GPU before any log exists.

vLLM (vllm/v1/worker/gpu_worker.py: Worker.determine_available_memory; the v0
worker.py before it) measures, after loading the weights, one profiling
forward pass of max_num_batched_tokens dummy tokens and sets

    available = total_gpu_memory x gpu_memory_utilization
                - (weights + peak activation of the profiling run + non-torch memory)
                [- the CUDA-graph estimate, from 0.21]

This module models each term; only the first two are known exactly:
- total: the driver's figure (pass --gpu-memory with nvidia-smi's value; the
  catalog's datasheet GiB is about 1% above what the driver reports:
  DRIVER_TOTAL_BYTES holds the figures public logs print);
- weights: the checkpoint's bytes per TP rank (kvplan's parameter count x
  dtype unless --weights or the log gives them: quantized checkpoints differ);
- peak activation, the larger of two heuristics:
  forward: PROFILE_BYTES_PER_TOKEN_PER_HIDDEN x hidden_size x the profiled
  tokens (26 B, about 13 bf16 hidden-size tensors per token, from the two
  Llama-3.1-8B runs of vLLM issue #10517, whose peak grew by 0.92 GiB for 9,000
  more profiled tokens);
  sampler (v1 engine): SAMPLER_LOGIT_COPIES x max_num_seqs x vocab x 4 B. The
  v1 profile ends with a dummy sampler run over max_num_seqs fp32 logit rows;
  on the H100 logs of llm-d-benchmark (config_explorer/empirical-vllm-memory-
  results.md) the peak is 9.6-9.7 times those logits for gpt-oss-20b,
  Llama-3.1-8B and Qwen3-0.6B alike, so 9.6 is used;
  blind to MoE workspaces and vision encoders;
- non-torch memory: 0.13 GiB on the v1 engine at TP 1 (the same llm-d logs),
  0.35 GiB on v0 (#10517).
The profiled tokens: max_num_batched_tokens for the v1 engine; the v0 engine
without chunked prefill profiled max(max_model_len, max_num_batched_tokens).
docs/engines.md lists the error per collected log.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import GIB

PROFILE_BYTES_PER_TOKEN_PER_HIDDEN = 26
SAMPLER_LOGIT_COPIES = 9.6
NON_TORCH_BYTES = int(0.35 * GIB)  # v0 engine
NON_TORCH_BYTES_V1 = int(0.13 * GIB)
CUDA_GRAPH_BYTES = 0  # 0.21+ subtracts its own estimate; not modelled (see docs/engines.md)
# what the driver reports (torch.cuda.mem_get_info total), as printed in public logs
DRIVER_TOTAL_BYTES = {
    "h100-sxm": int(79.18 * GIB),  # llm-d-benchmark H100 logs: "Free memory on device (78.57/79.18 GiB)"
    "a100-40gb": int(39.50 * GIB),  # vLLM issue #12330: "total_gpu_memory (39.50GiB)"
}


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


def vocab_size(model) -> int | None:
    """The vocabulary of a bundled or local model's config (the ModelSpec does not keep it)."""
    import json
    from pathlib import Path

    source = model.source or ""
    try:
        if source.startswith("bundled:"):
            from ..sources import bundled_config, bundled_index

            raw = bundled_config(bundled_index()[source.split(":", 1)[1]])
        elif source and Path(source).is_file():
            raw = json.loads(Path(source).read_text(encoding="utf-8"))
        else:
            return None
    except (OSError, ValueError, KeyError):
        return None
    nested = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {}
    value = raw.get("vocab_size") or nested.get("vocab_size")
    # the reader checked the fields it uses, not this one: only a plain, sane integer counts
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000_000:
        return value
    return None


def predict_available(model, *, total_bytes: int, gpu_memory_utilization: float, tp: int = 1, pp: int = 1,
                      max_num_batched_tokens: int = 8192, max_model_len: int | None = None,
                      weight_bytes: int | None = None, v0_engine: bool = False,
                      max_num_seqs: int = 1024) -> ProfileEstimate:
    """vLLM's available KV memory per GPU for `model` under these settings (see the module doc)."""
    ranks = max(tp, 1) * max(pp, 1)
    weights = weight_bytes if weight_bytes is not None else model.weight_bytes // ranks
    tokens = max_num_batched_tokens
    if v0_engine and max_model_len:
        tokens = max(max_model_len, max_num_batched_tokens)
    activation = tokens * (model.hidden_size or 0) * PROFILE_BYTES_PER_TOKEN_PER_HIDDEN
    if not v0_engine:
        vocab = vocab_size(model)
        if vocab:
            activation = max(activation, int(SAMPLER_LOGIT_COPIES * max_num_seqs * vocab * 4))
    non_torch = NON_TORCH_BYTES if v0_engine else NON_TORCH_BYTES_V1
    return ProfileEstimate(total_bytes, gpu_memory_utilization, weights, activation, non_torch,
                           CUDA_GRAPH_BYTES, tokens)


__all__ = ["predict_available", "ProfileEstimate", "PROFILE_BYTES_PER_TOKEN_PER_HIDDEN", "NON_TORCH_BYTES",
           "SAMPLER_LOGIT_COPIES", "DRIVER_TOTAL_BYTES", "vocab_size"]
