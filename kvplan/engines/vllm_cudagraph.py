"""vLLM's CUDA-graph memory estimate, the term its profile subtracts before the KV cache from 0.20.0.

vLLM v1 (v1/worker/gpu_worker.py Worker.determine_available_memory) calls
model_runner.profile_cudagraph_memory() after the profiling run whenever
cudagraph_mode is not NONE, and from 0.20.0 (envs.py: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
defaults to "1"; "0" in 0.18-0.19) takes the result off the KV memory. What that function
measures depends on the runner:

- the v1 runner (v1/worker/gpu_model_runner.py GPUModelRunner.profile_cudagraph_memory, the
  same arithmetic in every release 0.18.0-0.33.0; 0.23 adds opt-in encoder graphs, 0.26-0.30 a
  ROCm stream): for each mode (PIECEWISE, then FULL) it captures the two largest sizes into a
  throwaway pool, reading the driver's free memory around each, and returns
      max over modes (first capture) + sum over modes max(second capture, 1 MiB) x (graphs - 1)
- Model Runner V2 (v1/worker/gpu/model_runner.py): returns 0 up to 0.28.0 ("TBD whether we keep
  this API", confirmed by vLLM issue #49224); from 0.29.0 v1/worker/gpu/cudagraph_utils.py
  profile_cudagraph_memory captures every PIECEWISE graph and the two largest FULL graphs and
  extrapolates FULL as first + (graphs - 1) x second; 0.34.0 returns 0 again under its extensible KV cache
  (on by default), which measures the captured graphs after warmup instead (vllm_extensible: the modelled
  figure then stands for the captured pool, and vllm_profile subtracts nothing).

Which runner serves a model is a per-release rule (config/vllm.py VllmConfig.use_v2_model_runner,
uses_model_runner_v2 below). The number of graphs per mode and the largest size follow from the
config (graph_plan below, every rule cited where it is applied). The bytes per graph come only
from the driver, so they are an empirical model fitted on public logs (graph_bytes, the data in
GRAPH_FIGURES).

Pure: no torch, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..capacity.gpus import CUDA_CAPABILITY
from ..units import GIB, MIB
from .vllm_release import at_least as _at_least, release_key as _key

# --- the modes --------------------------------------------------------------------------------------
# config/vllm.py OPTIMIZATION_LEVEL_02/_03 "cudagraph_mode": FULL_AND_PIECEWISE; VllmConfig.optimization_level
# defaults to O2 (0.18.0-0.33.0). config/compilation.py CUDAGraphMode: FULL_AND_PIECEWISE = (FULL decode,
# PIECEWISE mixed), separate_routine() true; FULL_DECODE_ONLY = (FULL decode, NONE mixed).
FULL_AND_PIECEWISE = "FULL_AND_PIECEWISE"
PIECEWISE = "PIECEWISE"
FULL_DECODE_ONLY = "FULL_DECODE_ONLY"
NONE = "NONE"

CUDA_GRAPH_ESTIMATE_FROM = (0, 20, 0)  # envs.py: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1"
# config/vllm.py _set_cudagraph_sizes: max_num_batched_tokens appended when off-stride (absent in 0.20.0)
APPEND_MAX_TOKENS_FROM = (0, 20, 1)
# _set_cudagraph_sizes: default_max_graph_size 1024 on is_device_capability_family(100) from 0.28.0, else 512
BLACKWELL_1024_FROM = (0, 28, 0)
SM100_FAMILY = frozenset(name for name, cap in CUDA_CAPABILITY.items() if cap[0] == 10)  # 10.x (RTX 50xx is 12.x)
# _set_cudagraph_sizes: uniform_decode_sizes = [max_num_seqs] when it fits the ceiling (0.31.0 and later)
APPEND_MAX_SEQS_FROM = (0, 31, 0)
# v1/worker/gpu/model_runner.py profile_cudagraph_memory: "return 0" up to 0.28.0
RUNNER_V2_PROFILES_FROM = (0, 29, 0)
# config/vllm.py use_v2_model_runner: no architecture list left, every model runs V2 by default
MODEL_RUNNER_V2_DEFAULT_FROM = (0, 29, 0)
# 0.34.0 removed the v1 runner (v1/worker/gpu_model_runner.py) and VLLM_USE_V2_MODEL_RUNNER: Model Runner V2 only
V1_RUNNER_REMOVED_FROM = (0, 34, 0)
# config/vllm.py (0.34.0) resolves prefill (token) and decode (request) capture sizes apart; on SM100 with no
# sizes given ("wide defaults") prefill takes config/compilation.py prefill_cudagraph_capture_grid up to
# min(8192, max_num_batched_tokens) and decode decode_cudagraph_capture_grid up to max_num_seqs, within a decode
# token budget of 8192; elsewhere both come from the shared sizes as before
SM100_WIDE_GRIDS_FROM = (0, 34, 0)
SM100_PREFILL_MAX_TOKENS = 8192  # max_prefill_cudagraph_capture_tokens default on SM100
SM100_DECODE_MAX_TOKENS = 8192  # max_decode_cudagraph_capture_tokens default on SM100


# --- which runner ------------------------------------------------------------------------------------
# config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES, per release
_V2_ARCHS = {
    (0, 22, 0): frozenset({"Qwen3ForCausalLM"}),
    (0, 23, 0): frozenset({"Qwen3ForCausalLM", "LlamaForCausalLM", "MistralForCausalLM"}),
    (0, 24, 0): frozenset({"Qwen3ForCausalLM", "LlamaForCausalLM", "MistralForCausalLM", "DeepseekV2ForCausalLM",
                           "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}),
    (0, 25, 0): frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}),
    (0, 26, 0): frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM",
                           "InklingForCausalLM", "InklingForConditionalGeneration", "LongcatFlashNgramForCausalLM"}),
    (0, 27, 0): frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM",
                           "InklingForCausalLM", "InklingForConditionalGeneration", "LongcatFlashNgramForCausalLM",
                           "KimiK3ForConditionalGeneration"}),
    (0, 28, 0): frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM",
                           "InklingForCausalLM", "InklingForConditionalGeneration", "LongcatFlashNgramForCausalLM",
                           "KimiK3ForConditionalGeneration", "DeepseekV4ForCausalLM"}),
}


def uses_model_runner_v2(version, architecture: str | None, *, is_moe: bool = False, is_hybrid: bool = False,
                         is_quantized: bool = False) -> bool | None:
    """Whether vLLM's default (no VLLM_USE_V2_MODEL_RUNNER, CUDA with Triton, a generate model, none of the
    features V2 lacks) runs this model in Model Runner V2. None for an unreadable release.

    config/vllm.py VllmConfig.use_v2_model_runner / _is_default_v2_model_runner_model:
      before 0.22: never;
      0.22-0.23: architecture in the list, and neither MoE nor quantized;
      0.24: architecture in the list;
      0.25-0.26: not hybrid, and (architecture in the list or not MoE);
      0.27-0.28: (architecture in the list or not MoE), hybrid models only when in the list;
      0.29 and later: every model (no architecture test left; only unsupported features fall back).
    """
    key = _key(version)
    if key is None:
        return None
    if key < (0, 22, 0):
        return False
    if key >= MODEL_RUNNER_V2_DEFAULT_FROM:
        return True
    listed = max(k for k in _V2_ARCHS if k <= key)
    in_list = architecture in _V2_ARCHS[listed]
    if key < (0, 24, 0):
        return in_list and not is_moe and not is_quantized
    if key < (0, 25, 0):
        return in_list
    if key < (0, 27, 0):
        return not is_hybrid and (in_list or not is_moe)
    if is_hybrid and not in_list:
        return False
    return in_list or not is_moe


# --- the sizes and the modes -------------------------------------------------------------------------
def capture_sizes(version, *, max_num_seqs: int, max_num_batched_tokens: int, gpu: str | None = None,
                  enforce_eager: bool = False) -> list[int]:
    """cudagraph_capture_sizes as vLLM sets them by default (config/vllm.py VllmConfig._set_cudagraph_sizes,
    no speculative decoding, performance_mode "balanced", no sizes given).

    max = min(max_num_seqs x 2, 512 (1024 on SM100 from 0.28)), then min(max_num_batched_tokens, max);
    sizes 1, 2, 4, multiples of 8 below 256, multiples of 16 from 256 up to max; from 0.20.1
    max_num_batched_tokens itself when it fits but is off the stride; from 0.31 max_num_seqs itself
    when within the ceiling and max_num_batched_tokens. enforce_eager: none (the same function).
    Sequence parallelism would drop sizes not divisible by TP (update_sizes_for_sequence_parallelism,
    to 0.31), but its pass is off by default (pass_config enable_sp: IS_DENSE = False), so it is ignored.
    """
    if enforce_eager:
        return []
    default_max = 1024 if (_at_least(version, BLACKWELL_1024_FROM) and (gpu or "") in SM100_FAMILY) else 512
    ceiling = min(max_num_seqs * 2, default_max)
    largest = min(max_num_batched_tokens, ceiling)
    if largest < 1:
        return []
    sizes = [n for n in (1, 2, 4) if n <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    if _at_least(version, APPEND_MAX_TOKENS_FROM) and max_num_batched_tokens <= largest:
        sizes.append(max_num_batched_tokens)
    if _at_least(version, APPEND_MAX_SEQS_FROM) and max_num_seqs <= ceiling and max_num_seqs <= max_num_batched_tokens:
        sizes.append(max_num_seqs)
    return sorted(set(sizes))


def _walk_grid(limit: int, step) -> list[int]:
    """config/compilation.py _walk_grid (0.34.0): 1, then each next multiple of the largest power of two not
    above step(size), up to `limit`, and `limit` itself."""
    grid, size = [], 1
    while size < limit:
        grid.append(size)
        stride = 1 << max(0, math.floor(math.log2(max(1.0, step(size)))))
        size = (size // stride + 1) * stride
    return [*grid, limit] if limit else []


def prefill_grid(max_tokens: int) -> list[int]:
    """prefill_cudagraph_capture_grid (0.34.0, performance_mode "balanced"): step min(t, max(8, t / 4),
    0.07 x max(t, 4096)); vLLM's docstring: 54 sizes at 8192."""
    return _walk_grid(max_tokens, lambda t: min(t, max(8, t / 4), 0.07 * max(t, 4096)))


def decode_grid(max_requests: int) -> list[int]:
    """decode_cudagraph_capture_grid (0.34.0): step 0.65 x n^(2/3); vLLM's docstring: 64 sizes at 1024."""
    return _walk_grid(max_requests, lambda n: 0.65 * n ** (2 / 3))


def sm100_wide_grids(version, gpu: str | None) -> bool:
    """Whether this release's default capture sizes on this GPU are 0.34's separate SM100 grids."""
    return _at_least(version, SM100_WIDE_GRIDS_FROM) and (gpu or "") in SM100_FAMILY


def resolve_mode(*, enforce_eager: bool = False, attention_cg_never: bool = False, pooling: bool = False,
                 encoder_decoder: bool = False) -> str:
    """The cudagraph_mode a default start resolves to.

    - enforce_eager: NONE (config/vllm.py VllmConfig.__post_init__ "Cudagraph is disabled under eager mode").
    - pooling models: PIECEWISE ("Pooling models do not support full cudagraphs"); encoder-decoder:
      FULL_DECODE_ONLY (same place).
    - an attention backend whose builder reports AttentionCGSupport.NEVER: PIECEWISE
      (config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes: decode FULL with NEVER and
      attention in the splitting ops). On CUDA the common builders report at least UNIFORM_SINGLE_TOKEN_DECODE
      (FlashAttention, FlashInfer, Triton, FlashMLA, CUTLASS MLA, Mamba, GDN, linear attention:
      v1/attention/backends/*), which keeps FULL_AND_PIECEWISE; NEVER comes from chunked local attention
      (model_executor/layers/attention/chunked_local_attention.py, Llama 4's attention_chunk_size).
    MLA and Mamba/hybrid models keep FULL_AND_PIECEWISE (their builders are UNIFORM_BATCH or better).
    """
    if enforce_eager:
        return NONE
    if pooling:
        return PIECEWISE
    if encoder_decoder:
        return FULL_DECODE_ONLY
    if attention_cg_never:
        return PIECEWISE
    return FULL_AND_PIECEWISE


@dataclass(frozen=True)
class GraphPlan:
    mode: str
    piecewise_graphs: int
    piecewise_largest: int
    full_graphs: int
    full_largest: int
    model_runner_v2: bool = False

    @property
    def graphs(self) -> int:
        return self.piecewise_graphs + self.full_graphs

    @property
    def modes(self) -> int:
        return (self.piecewise_graphs > 0) + (self.full_graphs > 0)

    def log_line(self) -> str:
        """What the v1 runner logs: "Profiling CUDA graph memory: PIECEWISE=N (largest=M), FULL=K (largest=L)"."""
        parts = [f"{name}={n} (largest={largest})" for name, n, largest in
                 (("PIECEWISE", self.piecewise_graphs, self.piecewise_largest),
                  ("FULL", self.full_graphs, self.full_largest)) if n]
        return "Profiling CUDA graph memory: " + ", ".join(parts)


def graph_plan(version, *, max_num_seqs: int, max_num_batched_tokens: int, gpu: str | None = None,
               enforce_eager: bool = False, attention_cg_never: bool = False, pooling: bool = False,
               encoder_decoder: bool = False, model_runner_v2: bool = False) -> GraphPlan:
    """The graphs per mode vLLM captures (and profiles) by default.

    v1/cudagraph_dispatcher.py CudagraphDispatcher.initialize_cudagraph_keys: a PIECEWISE key per capture
    size when the mixed mode is PIECEWISE; FULL keys (uniform decode, separate routine) for the sizes
    <= max_num_seqs x uniform_decode_query_len (1 without speculative decoding). Model Runner V2
    (v1/worker/gpu/cudagraph_utils.py CudaGraphManager._init_candidates) builds the same two sets:
    decode descriptors up to max_num_seqs, mixed ones for every size.
    """
    mode = resolve_mode(enforce_eager=enforce_eager, attention_cg_never=attention_cg_never, pooling=pooling,
                        encoder_decoder=encoder_decoder)
    if mode != NONE and sm100_wide_grids(version, gpu):
        # config/vllm.py _resolve_split_cudagraph_capture_sizes (0.34.0); FULL decode graphs:
        # compilation.py decode_cudagraph_capture_shapes with one query length, n up to
        # min(max_num_seqs, the decode token budget)
        prefill = prefill_grid(min(SM100_PREFILL_MAX_TOKENS, max_num_batched_tokens))
        limit = min(max_num_seqs, SM100_DECODE_MAX_TOKENS, max_num_batched_tokens)
        decode = sorted({min(n, limit) for n in decode_grid(max_num_seqs)})
        piecewise = prefill if mode in (FULL_AND_PIECEWISE, PIECEWISE) else []
        full = decode if mode in (FULL_AND_PIECEWISE, FULL_DECODE_ONLY) else []
        return GraphPlan(mode, len(piecewise), max(piecewise, default=0), len(full), max(full, default=0),
                         model_runner_v2)
    sizes = [] if mode == NONE else capture_sizes(version, max_num_seqs=max_num_seqs,
                                                  max_num_batched_tokens=max_num_batched_tokens, gpu=gpu)
    piecewise = sizes if mode in (FULL_AND_PIECEWISE, PIECEWISE) else []
    full = [s for s in sizes if s <= max_num_seqs] if mode in (FULL_AND_PIECEWISE, FULL_DECODE_ONLY) else []
    return GraphPlan(mode, len(piecewise), max(piecewise, default=0), len(full), max(full, default=0),
                     model_runner_v2)


# --- the bytes -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GraphFigure:
    """A public "Estimated CUDA graph memory" with the graphs its own "Profiling CUDA graph memory" line
    counted (the counts are the log's, not kvplan's)."""

    source: str
    model: str
    layers: int  # the model's decoder layers (its config's num_hidden_layers)
    gpu: str
    release: str
    piecewise_graphs: int
    full_graphs: int
    estimate_gib: float  # as printed, 2 decimals
    kind: str = "dense"  # dense | moe | hybrid (Gated DeltaNet + attention) | other
    fitted: bool = False  # the dense TP 1 v1-runner figures fit the model; the rest test it

    @property
    def extra_graphs(self) -> int:
        """Graphs beyond the first of each mode: what vLLM multiplies by the per-graph increase."""
        return max(self.piecewise_graphs - 1, 0) + max(self.full_graphs - 1, 0)

    @property
    def layer_graphs(self) -> int:
        return self.layers * self.extra_graphs


# Public figures found (a vLLM-adjacent issue, logs committed to public repositories: "file N" is the id of
# the file in the public-code search index it was read from; searched for "Estimated CUDA graph memory" and
# "Profiling CUDA graph memory"). All TP 1, the v1 runner (0.19-0.26 runs these architectures there; the 31B
# run forces it), FULL_AND_PIECEWISE unless said. Before 0.20 the estimate is logged but not subtracted; the
# arithmetic is the same (0.18+). Layers: the bundled configs (Qwen3-8B, Qwen2.5-7B/-VL-7B, gemma-4-31B,
# Qwen3.6-27B, Qwen3.6-35B-A3B), transformers' Gemma4TextConfig (30), the model cards (Qwen3-0.6B 28,
# Qwen3.5-9B/-4B 32, -2B 24; not checked here, test figures only). Not kept: TP > 1, speculative decoding
# (it rounds the sizes), and where the model is not named (0.36 GiB gpustack/runner PR #251, 0.44 GiB vLLM
# PR #48214's pooling model, 1.62 GiB vLLM PR #39559's Qwen3.5 GGUF of unprinted size). No public debug
# line ("Estimated PIECEWISE CUDA graph memory: A MiB first-capture + ...") was found, so the first capture
# and the per-graph increase are fitted on totals.
GRAPH_FIGURES = (
    # dense, fitted
    GraphFigure("LMCache issue #3430 (RTX A5000, vllm 0.21.0)",
                "Qwen/Qwen3-8B", 36, "rtx-a5000", "0.21.0", 51, 35, 0.52, "dense", True),
    GraphFigure("lm-eval run log, Qwen_Qwen3-0.6B-W4A16 (vllm 0.19.1; actual pool 0.46 GiB; file 54187866445)",
                "Qwen3-0.6B (W4A16)", 28, "unknown", "0.19.1", 51, 35, 0.55, "dense", True),
    GraphFigure("docker log, Qwen2.5-VL-7B-Instruct (vllm 0.23.0; file 55021192520)",
                "Qwen/Qwen2.5-VL-7B-Instruct", 28, "unknown", "0.23.0", 51, 35, 0.53, "dense", True),
    GraphFigure("AsyncLLMEngine abort test (vllm 0.22.0, 128 seqs, 2,048 tokens; actual 0.31 GiB; file 67144197265)",
                "Qwen/Qwen2.5-7B-Instruct", 28, "unknown", "0.22.0", 35, 19, 0.37, "dense", True),
    GraphFigure("B300 notes, VLLM_USE_V2_MODEL_RUNNER=0 (vllm 0.26.0, 1,024 seqs; file 63390294774)",
                "google/gemma-4-31B-it", 60, "b300", "0.26.0", 51, 51, 0.76, "dense", True),
    GraphFigure("lm-eval run log, INC int4 (vllm 0.21.0; actual 0.46 GiB; file 54702752420); its thinker's 28 "
                "layers", "Intel/Qwen2.5-Omni-7B-int4-AutoRound", 28, "unknown", "0.21.0", 51, 35, 0.62, "dense",
                True),
    # dense, a test: the counts are not printed, 0.24's defaults on a 24 GB card give 256 sequences -> 51 + 35
    GraphFigure("daily log, RTX 4090 (vllm 0.24.0, counts inferred; file 54570340937)",
                "Qwen/Qwen2.5-7B-Instruct", 28, "rtx-4090", "0.24.0", 51, 35, 0.53, "dense"),
    # MoE with attention only: tests
    GraphFigure("vLLM write-up, L40S (vllm 0.25.1; actual 0.65 GiB; file 60491628666)",
                "google/gemma-4-26B-A4B (FP8)", 30, "l40s", "0.25.1", 51, 35, 0.66, "moe"),
    GraphFigure("docker log, WSL (vllm 0.19.2rc1, 2,048 tokens; file 52072816508)",
                "RedHatAI/gemma-4-26B-A4B-it-NVFP4", 30, "unknown", "0.19.2", 51, 35, 0.83, "moe"),
    # hybrid Gated DeltaNet: tests
    GraphFigure("notebook log, L40S (vllm 0.19.0; actual 0.65 GiB; file 51781852921)",
                "Qwen/Qwen3.5-9B", 32, "l40s", "0.19.0", 51, 35, 0.78, "hybrid"),
    GraphFigure("FastAPI log (vllm 0.22.0; actual 0.55 GiB; file 55770092662)",
                "Qwen3.5-4B", 32, "unknown", "0.22.0", 51, 35, 0.64, "hybrid"),
    GraphFigure("FastAPI streaming log (vllm 0.22.0, 128 seqs, 2,048 tokens; actual 0.35 GiB; file 56036894944)",
                "Qwen3.5-4B", 32, "unknown", "0.22.0", 35, 19, 0.40, "hybrid"),
    GraphFigure("lm-eval run log, 80 GB card (vllm 0.19.1, 16,384 tokens; actual 0.34 GiB; file 54064687355)",
                "kaitchup/Qwen3.5-2B-autoround-W4A16", 24, "unknown", "0.19.1", 51, 51, 0.33, "hybrid"),
    GraphFigure("DGX Spark log (GB10, 0.23.1 dev, 8 seqs, 65,536 tokens; file 61544841280)",
                "nvidia/Qwen3.6-27B-NVFP4", 64, "gb10", "0.23.1", 5, 4, 0.61, "hybrid"),
    GraphFigure("docker log (vllm 0.20.0, 1 seq, --max-cudagraph-capture-size 1; file 52377383460)",
                "RedHatAI/Qwen3.6-35B-A3B-NVFP4", 40, "unknown", "0.20.0", 1, 1, 0.36, "hybrid"),
    GraphFigure("docker log (vllm 0.19.2rc1, 32 seqs; file 52221836498)",
                "RedHatAI/Qwen3.6-35B-A3B-NVFP4", 40, "unknown", "0.19.2", 11, 7, 1.21, "hybrid"),
)


def _fit() -> tuple[int, int]:
    """Least squares of the estimate on layers x further graphs over the fitted figures:
    (first-capture bytes, bytes per layer per further graph)."""
    points = [(f.layer_graphs, f.estimate_gib) for f in GRAPH_FIGURES if f.fitted]
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return int((my - slope * mx) * GIB), int(slope * GIB)


# The model, vLLM's own arithmetic with two constants:
#     estimate = GRAPH_FIRST_BYTES + GRAPH_PER_LAYER_GRAPH_BYTES x layers x (graphs - modes)
# The per-graph increase is driver memory for the captured kernels (graph nodes), which grow with the layers
# (every layer adds its kernels to every graph); the first capture is the pool's first segments (activations of
# the largest batch, workspaces), about flat over these models. Fitted on the six dense figures above:
# about 0.355 GiB + 0.0714 MiB per layer per graph (Qwen3-8B at 84 graphs: 0.355 + 36 x 84 x 0.0714 MiB =
# 0.565 GiB against 0.52 logged). Out of sample it is only a little better than a flat 0.54 GiB (leave-one-out
# mean error 0.086 against 0.095 GiB), but it follows the graph count (max_num_seqs, enforce_eager, SM100).
GRAPH_FIRST_BYTES, GRAPH_PER_LAYER_GRAPH_BYTES = _fit()
MIN_PER_GRAPH_BYTES = MIB  # gpu_model_runner.py: max(second capture, 1 MiB)


def graph_bytes(plan: GraphPlan, layers: int) -> int:
    """The modelled estimate for a plan on a model of `layers` decoder layers (0 without graphs)."""
    if plan.graphs == 0:
        return 0
    per_graph = max(GRAPH_PER_LAYER_GRAPH_BYTES * max(layers, 1), MIN_PER_GRAPH_BYTES)
    return GRAPH_FIRST_BYTES + per_graph * (plan.graphs - plan.modes)


@dataclass(frozen=True)
class GraphEstimate:
    bytes: int
    plan: GraphPlan | None
    note: str


def estimate(version, *, max_num_seqs: int, max_num_batched_tokens: int, layers: int, gpu: str | None = None,
             enforce_eager: bool = False, architecture: str | None = None, is_moe: bool = False,
             is_hybrid: bool = False, is_quantized: bool = False, attention_cg_never: bool = False,
             pooling: bool = False) -> GraphEstimate:
    """What vLLM `version` subtracts for CUDA graphs by default, with the line that explains it (pooling: a
    model the pooling runner serves, PIECEWISE graphs only; kvplan.engines.vllm_pooling)."""
    if not _at_least(version, CUDA_GRAPH_ESTIMATE_FROM):
        return GraphEstimate(0, None, "")
    if enforce_eager:
        return GraphEstimate(0, None, f"vLLM {version} with --enforce-eager captures no CUDA graphs: no estimate")
    v2 = bool(uses_model_runner_v2(version, architecture, is_moe=is_moe, is_hybrid=is_hybrid,
                                   is_quantized=is_quantized))
    plan = graph_plan(version, max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens, gpu=gpu,
                      attention_cg_never=attention_cg_never, pooling=pooling, model_runner_v2=v2)
    if v2 and not _at_least(version, RUNNER_V2_PROFILES_FROM):
        return GraphEstimate(0, plan, f"vLLM {version} runs {architecture or 'this model'} in Model Runner V2, whose "
                                      "profile_cudagraph_memory returns 0 before 0.29: no CUDA-graph estimate")
    total = graph_bytes(plan, layers)
    counts = ", ".join(f"{n} {name}" for name, n in (("PIECEWISE", plan.piecewise_graphs),
                                                     ("FULL", plan.full_graphs)) if n)
    note = (f"CUDA-graph estimate {total / GIB:.2f} GiB modelled (empirical: {GRAPH_FIRST_BYTES / GIB:.2f} GiB + "
            f"{GRAPH_PER_LAYER_GRAPH_BYTES / MIB:.3f} MiB x {layers} layers x {plan.graphs - plan.modes} further "
            f"graphs; {counts} graphs from the config, largest {max(plan.piecewise_largest, plan.full_largest)}; "
            "fitted on dense public logs, within 0.11 GiB of them")
    if is_hybrid:
        note += "; hybrid Gated DeltaNet models logged 0.19 GiB less to 0.81 GiB more (vLLM #50780)"
    elif is_moe:
        note += "; MoE models logged 0.13-0.30 GiB more"
    if v2:
        note += "; Model Runner V2 measures every PIECEWISE graph, the model is fitted on the v1 runner's figures"
    if sm100_wide_grids(version, gpu):
        note += (f"; 0.34's SM100 grids capture prefill graphs up to {plan.piecewise_largest:,} tokens, the "
                 "first capture was fitted on graphs of 512 at most")
    return GraphEstimate(total, plan, note + ")")


__all__ = ["capture_sizes", "resolve_mode", "graph_plan", "GraphPlan", "uses_model_runner_v2", "graph_bytes",
           "estimate", "GraphEstimate", "GraphFigure", "GRAPH_FIGURES", "GRAPH_FIRST_BYTES",
           "GRAPH_PER_LAYER_GRAPH_BYTES",
           "CUDA_GRAPH_ESTIMATE_FROM", "RUNNER_V2_PROFILES_FROM", "MODEL_RUNNER_V2_DEFAULT_FROM", "FULL_AND_PIECEWISE", "PIECEWISE",
           "FULL_DECODE_ONLY", "NONE", "SM100_FAMILY", "SM100_WIDE_GRIDS_FROM", "V1_RUNNER_REMOVED_FROM",
           "prefill_grid", "decode_grid", "sm100_wide_grids"]
