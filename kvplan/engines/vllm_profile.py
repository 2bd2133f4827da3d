"""vLLM's "Available KV cache memory", predicted from the GPU before any log exists.

Every vLLM release measures, after loading the weights, one profiling run of
dummy inputs and sets (v0: vllm/worker/worker.py determine_num_available_blocks
with utils.memory_profiling; v1: vllm/v1/worker/gpu_worker.py
Worker.determine_available_memory)

    available = total_gpu_memory x gpu_memory_utilization
                - (weights + peak activation of the profiling run + non-torch memory)
                - the CUDA-graph estimate (from 0.20.0, see below)

The terms, and where each comes from:
- total: what the driver reports (torch.cuda.mem_get_info); the catalog's
  datasheet GiB is above it (1% on HBM, 7.5% on GDDR6 with ECC), and the
  catalog's `driver_bytes` holds the figures public logs print.
- weights: what the profile subtracts is the memory the load took
  ("Loading model weights took" / "Model loading took" in the log); when the
  log gives it, it is used as is. Otherwise the checkpoint's exact bytes per
  GPU (kvplan.weights: bundled totals, safetensors headers; split by role over
  the TP/PP ranks by capacity.weights.stage_weight_bytes), else parameter count
  x dtype. MXFP4 MoE experts are re-laid by vLLM's kernel when loading: with
  the release and the GPU (`gpu`), kvplan.weights.vllm_mxfp4 gives the bytes
  (Marlin pads I to 128 and H to 256; Triton on Hopper adds padded swizzled
  scales, keeps the originals until 0.24, FP32 biases): gpt-oss-120b on an H100
  with 0.10.1 (Marlin) 65.90 GiB against the logged 65.97. Other quantized
  kernels may re-lay too; kvplan keeps their checkpoint bytes. The load also
  builds the rotary cos/sin tables, whole on every rank (vllm_rope_cache:
  32 MiB for Llama-3.1-8B, whose 0.6.4 load logs 14.9888 GiB for 14.9575 GiB
  of parameters; 0.56 GiB for Gemma 3 4B's two ropes; rows that changed between
  releases follow `version`, MiniMax's follow `max_model_len`); so does a DSA
  model's top-k indices buffer, max_num_batched_tokens x index_topk int32, and
  from 0.30 its sparse MLA index groups (vllm_load_buffers); they are added
  to a checkpoint's or parameter count's bytes, not to a logged load.
- peak activation: the larger of the forward pass and the sampler run, since
  the sampler runs after the forward's activations are freed:
  forward: PROFILE_BYTES_PER_TOKEN_PER_HIDDEN (26 B) x hidden_size x the
  profiled tokens, fitted on the two Llama-3.1-8B RTX 3090 logs of vLLM issue
  #10517 (peak 2.07 GiB at 20,000 tokens, 2.99 GiB at 29,000: 0.92 GiB for
  9,000 tokens). Profiled tokens: max_num_batched_tokens (v1); the v0 engine
  without chunked prefill profiled max(max_model_len, max_num_batched_tokens).
  sampler: both engines sample one logit row per dummy sequence, max_num_seqs
  of them, over the whole vocabulary, with top-k = vocab - 1 and top-p set so
  that the full sort runs (v0 0.6.6 model_runner.profile_run: max_num_seqs
  dummy prompts, LogitsProcessor._prune_hidden_states keeps each one's last
  token, Sampler._apply_top_k_top_p; v1 gpu_model_runner._dummy_sampler_run).
  Reading that code, the rows live at once at its peak are: the bf16 logits
  (0.5 fp32 copy), their fp32 copy (1), the sorted values (1) and int64 indices
  (2), two bool masks (0.5), the softmax and its cumsum (2) and the scattered
  result (1): 8 fp32 copies, plus the sort's scratch. SAMPLER_LOGIT_COPIES =
  9.6 fp32 copies of max_num_seqs x vocab is fitted on the H100 logs of
  llm-d-benchmark (config_explorer/empirical-vllm-memory-results.md: 9.6-9.7
  for gpt-oss-20b, Llama-3.1-8B, Qwen3-0.6B, all v1) and tested on a v0 run
  it was not fitted on: vLLM PR #10511's H100 start of Meta-Llama-3-8B at the
  v0 defaults (256 sequences) logged 1.26 GiB, and 9.6 x 256 x 128,256 x 4 B
  = 1.17 GiB (-7%; the forward, 0.81 GiB, is smaller).
  Under TP the sampler still sees the whole vocabulary: v1 all-gathers the
  logits to every rank (platforms/interface.py use_all_gather), v0 gathers them
  to rank 0, and vLLM keeps the smallest figure over the workers; the
  forward term is not divided by TP either (the residual stream is replicated).
  MoE models add the fused-MoE workspace of the profiling run
  (kvplan.engines.vllm_moe_workspace, read in source per release, GPU and
  quantization): where the layers run through the modular kernel (TritonExperts
  for unquantized MoE from 0.14 and block FP8 on SM120 from 0.14 / Hopper from
  0.17, MarlinExperts for MXFP4 below Hopper from 0.17), the workspace is
  persistent (v1/worker/workspace.py: grown to the largest request, never
  freed), so it is live while the sampler runs: peak = workspace + max(forward,
  sampler); from 0.27.0 (CONSUMED_FROM) it is still allocated after the run and
  vLLM counts it inside "consumed", so it joins the kept buffers instead. The
  older per-call caches (fused_experts, fused_marlin_moe, triton_kernels) are
  freed after each layer and count only where larger than the forward and the
  sampler. Where the path is not read (the GPU unknown, SM100, Hopper FP8 before
  0.17, other quantizations) the line says so. gpt-oss-20b on an A100 with 0.19
  (Marlin, 2,048 tokens): 0.14 GiB; Qwen3-235B-A22B-FP8 at TP 4 on SM120 with
  0.27 (8,192 tokens): 1.00 GiB.
  Blind to vision encoders and attention backends that keep per-token buffers, and to a cold torch.compile
  (Inductor benchmarks combo subkernels on fresh full-size arguments inside the profile: config/compilation.py,
  torch _inductor scheduler.speedup_by_combo_kernel; not sized, see docs/engines.md). Model Runner V2 (the default for every model from 0.29.0,
  MODEL_RUNNER_V2_DEFAULT_FROM, and for some architectures from 0.22:
  vllm_cudagraph.uses_model_runner_v2) samples with another pipeline, read in
  source (v1/worker/gpu/model_runner.py _dummy_sampler_run, sample/sampler.py,
  sample/penalties.py) and not checked against any log:
  * 0.22-0.32: one pass with the dummy batch's default sampling states (the
    code's own note: it "may skip top_k, top_p, and logprobs"): no fp32 copy,
    no top-k/top-p; the peak is the model-dtype logits, rows x vocab x 2 B,
    so the forward usually decides the activation term;
  * 0.33: a second pass with SamplingParams.for_sampler_warmup (top-k 50,
    top-p 0.9, penalties, logprobs): the fp32 copy of the logits
    (apply_sampling_params), then FlashInfer's top_k_top_p_sampling_from_logits
    (topk_topp_sampler.flashinfer_sample), which keeps a masked fp32 copy and
    its fp32 softmax alive together: 2 + 3 x 4 = 14 B per logit
    (V2_WARMUP_BYTES_PER_LOGIT);
  * and persistent buffers allocated with the sampler, PenaltiesState.output_bin_counts
    (int32, rows x vocab) and two int32 bitmasks of rows x cdiv(vocab, 32)
    (PenaltiesState.prompt_bin_mask, StructuredOutputsWorker.grammar_bitmask;
    V2_BITMASKS): vLLM counts them from 0.27.0, when the
    profile measures everything consumed since its first snapshot
    (utils/mem_utils.py memory_profiling: total_consumed).
- pipeline parallelism (v1 engine): the figure is the last stage's, the one
  with the sampler, and the smallest, which vLLM sizes every stage's pool to;
  it adds the buffer every stage but the first keeps for received
  activations, 2 x max_num_batched_tokens x hidden x 2 B (PP_STAGE_BUFFER_TENSORS,
  read in source: the v1 runner in the profile, Model Runner V2 from 0.27).
  The first stage's own figure (no sampler, no buffer) is not predicted.
- non-torch memory (CUDA context growth, NCCL and custom all-reduce buffers):
  0.35 GiB on v0, 0.13 GiB on v1 at TP 1, plus a TP term that depends on where
  vLLM takes its first snapshot and on the interconnect: kvplan.engines.
  vllm_non_torch, whose module doc names each source.
- CUDA graphs: from 0.20.0 (CUDA_GRAPH_ESTIMATE_FROM; the env
  VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "1" in envs.py from
  0.20.0, "0" in 0.18-0.19, absent before) v1 also subtracts an estimate it
  measures by capturing two graphs per mode (gpu_model_runner.
  profile_cudagraph_memory: the first capture + the second's increase x the
  remaining capture sizes). kvplan.engines.vllm_cudagraph works out from
  source which runner serves the model (Model Runner V2 returns 0 before
  0.29), the mode (FULL_AND_PIECEWISE unless --enforce-eager, pooling or an
  attention backend without graph support) and the graphs per mode from
  max_num_seqs and max_num_batched_tokens; the bytes are an empirical
  first capture + a per-layer-per-graph figure fitted on six dense public
  "Estimated CUDA graph memory" lines (0.355 GiB + 0.071 MiB x layers x
  further graphs, within 0.1 GiB of them; MoE and hybrid GDN models logged
  up to 0.81 GiB more). cuda_graph_bytes (a logged figure) replaces it.
- vLLM 0.34's extensible KV cache (on by default on CUDA; kvplan.engines.vllm_extensible): the profile
  above only sizes the reserved capacity the log's "Available KV cache memory" prints, at the resolved
  utilization (1.0 by default with it); the pool is measured after warmup and the real graph capture:
  min(requested - resident, total - pre-snapshot - resident - margin) - peak activation, resident = weights +
  non-torch + kept buffers + the graphs captured (the modelled estimate stands for them), margin = max(1 GiB,
  0.75 x that peak). No graph estimate is subtracted with it (V2's profile_cudagraph_memory returns 0 under the
  extensible cache). ProfileEstimate.pool_bytes is the pool either way.
- pooling models (embedding, classification, reward; kvplan.engines.vllm_pooling, read in 0.29-0.34): no sampler
  is built, so the profile runs the pooler's dummy run (below the forward) and keeps no bin counts; PIECEWISE
  graphs only; a generation class vLLM converts loads no lm_head (config-sized weights follow).
docs/engines.md lists the error per collected log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..configs.resolve_family import nested_text
from ..units import GIB, cdiv
from .vllm_cudagraph import CUDA_GRAPH_ESTIMATE_FROM, MODEL_RUNNER_V2_DEFAULT_FROM
from .vllm_extensible import ExtensiblePool, extensible_by_default, extensible_pool
from .vllm_inkling import INKLING_ARCHS
from .vllm_load import (
    G_IDX_DROPPED_FROM, checkpoint_weights, config_weights_per_gpu, load_buffers, note_load_delta, raw_config,
    rope_bytes, served_from_float32, vllm_loaded, vllm_without_g_idx, weights_per_gpu, with_fp32, with_load_delta,
)
from .vllm_non_torch import (
    NON_TORCH_BYTES, NON_TORCH_BYTES_V1, NON_TORCH_TP_BYTES, NON_TORCH_TP_BYTES_EARLY, NON_TORCH_TP_BYTES_PCIE,
    NVLS_CHANNELS, PCIE_ONLY_GPUS, SNAPSHOT_AFTER_DIST_INIT_FROM, is_pcie_only, nvls_bytes,
    snapshot_before_dist_init, tp_non_torch_bytes,
)
from .vllm_release import at_least as _at_least, release_key as version_key
from .vllm_rules import TP_REPLICATED

PROFILE_BYTES_PER_TOKEN_PER_HIDDEN = 26  # fitted on vLLM #10517's two RTX 3090 logs (see the module doc)
SAMPLER_LOGIT_COPIES = 9.6  # fitted on llm-d-benchmark's H100 logs; tested on PR #10511 (v0)
V0_MAX_NUM_SEQS = 256  # vllm 0.6.6 engine/arg_utils.py: max_num_seqs = 256 unless VLLM_USE_V1
# Which models run Model Runner V2 (every model from MODEL_RUNNER_V2_DEFAULT_FROM, a list before) is
# vllm_cudagraph.uses_model_runner_v2's rule per release.
# Model Runner V2's dummy sampler run, read in source (see the module doc); no log checks these
V2_DEFAULT_PASS_BYTES_PER_LOGIT = 2  # 0.22-0.32: the model-dtype (bf16) logits only
V2_WARMUP_PASS_FROM = (0, 33, 0)  # model_runner._dummy_sampler_run: SamplingParams.for_sampler_warmup pass
V2_WARMUP_BYTES_PER_LOGIT = 2 + 3 * 4  # bf16 logits + fp32 copy + FlashInfer's masked fp32 logits + fp32 probs
# utils/mem_utils.py memory_profiling from 0.27.0: total_consumed (free memory at the first snapshot less free
# memory after the profile) replaces weights + torch peak increase, so buffers kept from before the profile
# count; the log's breakdown says "consumed memory (weights + non-torch)" from then on
CONSUMED_FROM = (0, 27, 0)
V2_BIN_COUNT_BYTES = 4  # PenaltiesState.output_bin_counts: int32, max_num_reqs x vocab
# Beside the bin counts Model Runner V2 keeps two int32 bitmasks of max_num_reqs rows x cdiv(vocab, 32) words, both
# built in load_model on the last stage only (`if self.is_last_pp_rank and not self.is_pooling_model`), after the
# weights are measured and before the profile but after the first snapshot (gpu_worker.py init_device, read in 0.27.0
# and 0.34.0), so counted inside "consumed" from CONSUMED_FROM as the bin counts are. Read in 0.26.0, 0.27.0, 0.28.0,
# 0.29.0, 0.30.0, 0.31.0, 0.32.0, 0.33.0 and 0.34.0, the same shapes in each:
# * v1/worker/gpu/sample/penalties.py PenaltiesState.__init__: prompt_bin_mask (max_num_reqs, cdiv(vocab, 32));
# * v1/worker/gpu/structured_outputs.py StructuredOutputsWorker.__init__: grammar_bitmask (max_num_logits,
#   cdiv(vocab, 32)), max_num_logits = max_num_reqs x decode_query_len (model_runner.py load_model:
#   num_speculative_tokens + model_state.num_new_sampled_tokens_per_step, 1 for every model state but a diffusion
#   model's; read in 0.27.0, 0.33.0 and 0.34.0), one row per sequence without speculative decoding, 1 +
#   num_speculative_tokens with it (predict_available's speculative_tokens; kvplan takes 1 + k for every drafter).
V2_BITMASKS = 2
V2_BITMASK_TOKENS_PER_WORD = 32
V2_BITMASK_WORD_BYTES = 4
# Pipeline parallelism: every stage but the first keeps a buffer for the activations it receives,
# IntermediateTensors of max_num_batched_tokens x hidden_size per key in the model dtype (model_executor/models/
# utils.py make_empty_intermediate_tensors_factory; Llama, Qwen2 and Qwen3 build two keys, "hidden_states" and
# "residual"; other families are taken to do the same, an inference). The v1 runner (v1/worker/gpu_model_runner.py
# _dummy_run, read in 0.22.0, 0.24.0, 0.26.0, 0.27.1 and 0.29.0; the same lazy allocation in older v1 runners)
# allocates it in the profile's own dummy run and keeps it, so the profile counts it (the torch peak before 0.27,
# "consumed" after); Model Runner V2 (v1/worker/gpu/model_runner.py load_model, `if not self.is_first_pp_rank`,
# read in 0.22.0, 0.24.0, 0.26.0, 0.27.1, 0.28.0, 0.29.0, 0.31.0, 0.32.0 and 0.34.0) allocates it after the
# weights are measured and before the profile, so it counts only from CONSUMED_FROM. Only the last stage builds the sampler (load_model: `if self.is_last_pp_rank`) and runs the
# dummy sampler (profile_run), so the last stage holds the most and vLLM sizes every stage's pool to its blocks
# (v1/core/kv_cache_utils.py get_kv_cache_configs: the smallest num_blocks over the workers): kvplan's figure is
# the last stage's.
PP_STAGE_BUFFER_TENSORS = 2
PP_STAGE_BUFFER_DTYPE_BYTES = 2  # bf16/fp16; vLLM's dtype auto serves a float32 checkpoint in bf16
# the v1 runner's sampler from 0.17.0: top-k/top-p masked in place by a Triton kernel (v1/sample/ops/
# topk_topp_sampler.py apply_top_k_top_p, batches of 8 or more; FlashInfer's sampler from 0.23 where
# supported holds as much), no sort: the bf16 logits, their fp32 copy, the fp32 softmax and random_sample's
# exponential draws alive together. Read in source; one public log (0.19.0, A100) leaves room for 5.7 copies.
V1_TRITON_SAMPLER_FROM = (0, 17, 0)
V1_TRITON_BYTES_PER_LOGIT = 2 + 3 * 4
# the v1 runner before 0.17 with FlashInfer installed and VLLM_USE_FLASHINFER_SAMPLER unset (its log says "Using
# FlashInfer for top-p & top-k sampling"; read in 0.10.1.1 and 0.10.2 v1/sample/ops/topk_topp_sampler.py): the
# dummy run sets top-k and top-p, so flashinfer_sample calls FlashInfer's top_k_top_p_sampling_from_logits, whose
# "top_k_first" order keeps a masked fp32 copy (top_k_mask_logits) and its fp32 softmax; with the bf16 logits the
# runner holds and the sampler's fp32 copy (temperature is divided in place): 2 + 3 x 4 B per logit, no sort.
# Three public 0.10.1.1 starts that print the line (A100 80 GB, Qwen2-7B) land within 2% with it, 4-19% low with
# the sort's 9.6 copies.
V1_FLASHINFER_BYTES_PER_LOGIT = 2 + 3 * 4
# how the note on the CUDA graphs under 0.34's extensible cache begins (vllm_profile_view's table row says the same)
EXTENSIBLE_GRAPHS_NOTE = "no CUDA-graph estimate is subtracted"


def driver_total_bytes(gpu) -> int:
    """The memory the driver reports for a deployment's GPU (torch's total): the catalog's sourced figure
    (kvplan.capacity.gpus, `driver_bytes`) for a card given as is, else its memory (the datasheet's, or
    --gpu-memory)."""
    return gpu.usable_bytes


def subtracts_cuda_graphs(version: str | None) -> bool:
    """Whether this vLLM release subtracts its CUDA-graph estimate before the KV cache (default env)."""
    return _at_least(version, CUDA_GRAPH_ESTIMATE_FROM)


def forward_bytes(tokens: int, hidden_size: int) -> int:
    return tokens * hidden_size * PROFILE_BYTES_PER_TOKEN_PER_HIDDEN


def sampler_bytes(rows: int, vocab: int) -> int:
    return int(SAMPLER_LOGIT_COPIES * rows * vocab * 4)


def v1_sampler_bytes(rows: int, vocab: int, version: str | None,
                     flashinfer: bool | None = None) -> tuple[int, str]:
    """The v1 runner's dummy sampler peak: the sort pipeline's fitted copies before 0.17, the Triton
    in-place masking's read from source after (see V1_TRITON_SAMPLER_FROM). Before 0.17 a start that printed
    "Using FlashInfer for top-p & top-k sampling" (`flashinfer`) sorts nothing: see V1_FLASHINFER_BYTES_PER_LOGIT."""
    if _at_least(version, V1_TRITON_SAMPLER_FROM):
        return rows * vocab * V1_TRITON_BYTES_PER_LOGIT, "sampler (Triton top-k/top-p, read from source)"
    if flashinfer:
        return rows * vocab * V1_FLASHINFER_BYTES_PER_LOGIT, "sampler (FlashInfer top-k/top-p, read from source)"
    return sampler_bytes(rows, vocab), "sampler"


def v2_kept_sampler_bytes(rows: int, vocab: int, decode_query_len: int = 1) -> int:
    """What Model Runner V2's last stage keeps of its sampler after the profile (counted from CONSUMED_FROM): the
    int32 penalty bin counts and the two int32 bitmasks (V2_BITMASKS), the grammar bitmask `decode_query_len` rows
    a sequence (1 + num_speculative_tokens)."""
    words = cdiv(vocab, V2_BITMASK_TOKENS_PER_WORD)
    prompt_mask, grammar = rows * words, rows * max(decode_query_len, 1) * words
    return rows * vocab * V2_BIN_COUNT_BYTES + (prompt_mask + grammar) * V2_BITMASK_WORD_BYTES


def v2_sampler_bytes(rows: int, vocab: int, version: str | None) -> tuple[int, str]:
    """Model Runner V2's dummy sampler peak (see the module doc) and what it is."""
    if _at_least(version, V2_WARMUP_PASS_FROM):
        return rows * vocab * V2_WARMUP_BYTES_PER_LOGIT, "V2 sampler warm-up pass"
    return rows * vocab * V2_DEFAULT_PASS_BYTES_PER_LOGIT, "V2 sampler default pass"


@dataclass(frozen=True)
class ProfileEstimate:
    total_bytes: int
    gpu_memory_utilization: float
    weight_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int
    profiled_tokens: int
    weights_from: str = "parameter count x dtype"
    activation_from: str = "forward"
    notes: tuple[str, ...] = field(default=())
    cuda_graph_from: str = ""  # "given" (a logged estimate) or "modelled, empirical" (vllm_cudagraph)
    # buffers that stay allocated after the profile run, which vLLM counts from 0.27 (inside "consumed"):
    # Model Runner V2's penalty bin counts and bitmasks, the fused-MoE workspace (vllm_moe_workspace)
    buffer_bytes: int = 0
    buffers_from: str = ""
    # vLLM 0.34+'s extensible KV cache (vllm_extensible): the pool measured after warmup and graph capture;
    # None where the pool is the available figure itself
    extensible: "ExtensiblePool | None" = None

    @property
    def requested_bytes(self) -> int:
        return int(self.total_bytes * self.gpu_memory_utilization)

    @property
    def available_bytes(self) -> int:
        """What the log's "Available KV cache memory" line says (with the extensible cache of 0.34+, the
        reserved capacity, not the pool)."""
        return (self.requested_bytes - self.weight_bytes - self.activation_bytes - self.non_torch_bytes
                - self.cuda_graph_bytes - self.buffer_bytes)

    @property
    def pool_bytes(self) -> int:
        """The KV pool per GPU: the available figure, or with the extensible cache the measured one."""
        if self.extensible is None:
            return self.available_bytes
        # kv_cache_planning.py finalize_extensible_kv_cache: never above the reserved capacity
        return min(self.extensible.pool_bytes, self.available_bytes)

    def lines(self) -> list[str]:
        g = GIB
        source = f" ({self.cuda_graph_from})" if self.cuda_graph_from else ""
        graphs = f"; CUDA graphs {self.cuda_graph_bytes / g:.2f} GiB{source}" if self.cuda_graph_bytes else ""
        if self.buffer_bytes:
            graphs = f"; kept after the profile ({self.buffers_from}) {self.buffer_bytes / g:.2f} GiB" + graphs
        return [f"requested {self.total_bytes / g:.2f} GiB x {self.gpu_memory_utilization:g} = {self.requested_bytes / g:.2f} GiB; "
                f"weights {self.weight_bytes / g:.2f} GiB ({self.weights_from}); peak activation "
                f"{self.activation_bytes / g:.2f} GiB ({self.activation_from}, {self.profiled_tokens:,} profiled tokens, "
                f"heuristic); non-torch {self.non_torch_bytes / g:.2f} GiB{graphs}; "
                f"available {self.available_bytes / g:.2f} GiB"
                + (f" (the reserved capacity); {self.extensible.line()}" if self.extensible is not None else "")
                + "".join(f"; {n}" for n in self.notes)]


# the vocabulary transformers gives a config that leaves vocab_size out (its configuration_<family>.py
# default, transformers 5.23): Gemma 3's published configs nest a text_config without one
VOCAB_DEFAULTS = {
    "gemma3_text": 262_208,  # models/gemma3/configuration_gemma3.py Gemma3TextConfig
    "glm4": 151_552,  # models/glm4/configuration_glm4.py Glm4Config
}


def vocab_size(model) -> int | None:
    """The vocabulary of a bundled or local model's config (the ModelSpec does not keep it): the
    config's vocab_size (top level or text_config), ChatGLM's padded_vocab_size (the rows of its output
    layer), else transformers' default for the model type, else None."""
    raw = raw_config(model)
    if raw is None:
        return None
    nested = nested_text(raw)
    text_type = nested.get("model_type") or raw.get("model_type")
    if raw.get("model_type") == "gemma3" and not nested.get("model_type"):
        text_type = "gemma3_text"
    value = (raw.get("vocab_size") or nested.get("vocab_size") or raw.get("padded_vocab_size")
             or VOCAB_DEFAULTS.get(text_type) or _family_vocab(raw))
    # the reader checked the fields it uses, not this one: only a plain, sane integer counts
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000_000:
        return value
    return None


def _family_vocab(raw: dict):
    """vocab_size as the config's family reads it: its own field names and its config class's defaults
    (Moondream 3's config.text.vocab_size, else Moondream3TextConfig's 51,200)."""
    import warnings

    from ..configs.resolve_family import resolve
    from ..errors import KvplanError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return resolve(raw, "config")[1].opt_int("vocab_size")
        except (KvplanError, AttributeError):
            return None


def model_kind(model) -> dict:
    """What vLLM's runner and CUDA-graph rules read of a model (kvplan.engines.vllm_cudagraph.estimate):
    its architecture, MoE (experts: fewer active than total parameters), hybrid (attention and a recurrent
    state), quantized (a quantization_config, or a weight dtype other than 16/32-bit floats), and chunked
    local attention (Llama 4's attention_chunk_size, whose builder has no CUDA-graph support)."""
    raw = raw_config(model) or {}
    nested = nested_text(raw)
    layers = getattr(model, "layers", ()) or ()
    has_state = any(getattr(layer, "state", None) is not None for layer in layers)
    has_cache = any(getattr(layer, "caches", ()) for layer in layers)
    dtype = (getattr(model, "weight_dtype", "") or "").lower()
    return {
        "architecture": getattr(model, "architecture", None),
        "is_moe": bool(model.param_count and model.active_param_count and model.active_param_count < model.param_count),
        # vLLM's model_config.is_hybrid is the class's IsHybrid: Inkling's short-conv layers are not (vllm_inkling.py)
        "is_hybrid": has_state and has_cache and getattr(model, "architecture", None) not in INKLING_ARCHS,
        "is_quantized": bool(raw.get("quantization_config") or nested.get("quantization_config"))
        or dtype not in ("", "bfloat16", "float16", "float32", "bf16", "fp16", "fp32"),
        "attention_cg_never": bool(raw.get("attention_chunk_size") or nested.get("attention_chunk_size")),
    }


def runs_model_runner_v2(version: str | None, kind: dict) -> bool:
    """Whether this release runs the model in Model Runner V2 by default (vllm_cudagraph.uses_model_runner_v2)."""
    from .vllm_cudagraph import uses_model_runner_v2

    return bool(uses_model_runner_v2(version, kind["architecture"], is_moe=kind["is_moe"],
                                     is_hybrid=kind["is_hybrid"], is_quantized=kind["is_quantized"]))


def predict_available(model, *, total_bytes: int, gpu_memory_utilization: float, tp: int = 1, pp: int = 1,
                      max_num_batched_tokens: int = 8192, max_model_len: int | None = None,
                      weight_bytes: int | None = None, weights=None, v0_engine: bool = False,
                      max_num_seqs: int | None = None, version: str | None = None,
                      cuda_graph_bytes: int | None = None, gpu: str | None = None,
                      enforce_eager: bool = False, pcie_only: bool | None = None,
                      drafter=None, flashinfer_sampler: bool | None = None,
                      extensible_kv_cache: bool | None = None, speculative_tokens: int = 0,
                      experts_elsewhere: int = 0, all2all=None, eplb_bytes: int = 0, dp: int = 1,
                      ep: bool = False, tower_whole_bytes: int = 0) -> ProfileEstimate:
    """vLLM's available KV memory per GPU for `model` under these settings (see the module doc).

    weight_bytes: the bytes one GPU holds (a log's "Model loading took", or --weights split
    over the ranks); else `weights` (a kvplan.weights record of the whole checkpoint); else the
    checkpoint kvplan can read offline; else parameter count x dtype.
    max_num_seqs: the dummy sequences the sampler runs over (None: 256 on v0, 1024 on v1).
    version: the vLLM release, for the CUDA-graph term (from CUDA_GRAPH_ESTIMATE_FROM) and the
    MXFP4 load layout. gpu: the catalog name (h100-sxm, a100-80gb, ...), for the MXFP4 kernel
    vLLM picks by compute capability (kvplan.weights.vllm_mxfp4).
    cuda_graph_bytes: vLLM's logged "Estimated CUDA graph memory"; else, from CUDA_GRAPH_ESTIMATE_FROM on
    the v1 engine, the modelled estimate (kvplan.engines.vllm_cudagraph; enforce_eager: none). With the
    extensible KV cache it stands for the graphs captured (resident in the pool), and nothing is subtracted.
    pcie_only: whether the TP group has no NVLink (a log's custom all-reduce warning says so); None: the
    catalog GPU's usual form (PCIE_ONLY_GPUS).
    drafter: speculative decoding's drafter weights (vllm_draft_weights.DrafterWeights), loaded on the
    last stage's GPUs beside the model; a given weight_bytes (a log's load) already holds them.
    speculative_tokens: num_speculative_tokens, which widens an MTP drafter's sparse MLA index groups (load_buffers).
    experts_elsewhere: under data / expert parallelism, the routed experts' bytes the (tp, pp) split gives a GPU
    that sit on the other DP ranks' GPUs (capacity.experts.placement_saving), taken from the weights term.
    all2all: the MoE all-to-all backend's buffers under EP (vllm_a2a.A2ATerm), kept after the profile.
    tower_whole_bytes: what the fullest GPU holds more under --mm-encoder-tp-mode data, the vision tower whole
    (engines/vllm_encoder_dp.py stage_delta), added to the weights term.
    eplb_bytes: EPLB's state, allocated at load before the profile (capacity.eplb.vllm_state_bytes), added to the
    weights term.
    dp, ep: --data-parallel-size and --enable-expert-parallel, for the fused-MoE workspace (vllm_moe_workspace: the
    tokens the DP ranks gather, the experts whole under EP; the backend from all2all, else the default).
    flashinfer_sampler: whether the v1 runner samples with FlashInfer (a log's "Using FlashInfer for top-p &
    top-k sampling"); None or False: the sort pipeline before 0.17 (V1_FLASHINFER_BYTES_PER_LOGIT).
    extensible_kv_cache: whether vLLM sizes the pool after warmup (vllm_extensible; None: the release's default,
    on from 0.34.0); the estimate's pool_bytes is then that measured pool and available_bytes the reserved
    capacity the log's "Available KV cache memory" prints (gpu_memory_utilization: the resolved one, 1.0 by
    default with it)."""
    weight_tp = 1 if model.model_type in TP_REPLICATED else max(tp, 1)  # every rank loads the whole model
    ranks = weight_tp * max(pp, 1)
    notes = []
    pooling = None if v0_engine else _pooling_runner(model, version, notes)
    extra = 0
    if drafter is not None and weight_bytes is None:
        if drafter.bytes_per_gpu is None:
            notes.append(f"speculative decoding: {drafter.how}; the drafter's weights are not in the weights "
                         "term, so the prediction is high by about their size")
        else:
            extra = drafter.bytes_per_gpu
    if weight_bytes is not None:
        per_gpu, weights_from = weight_bytes, "given"
    else:
        record = weights if weights is not None else checkpoint_weights(model)
        if record is not None and record.source != "estimated from config":
            weights_from = f"checkpoint, {record.source}"
            record, dropped = vllm_without_g_idx(record, version)
            if dropped:
                weights_from += f", less GPTQ's g_idx ({dropped:,} B; vLLM drops it at load)"
            raw = raw_config(model) if record.source != "given" else None
            if raw is not None:
                from ..weights.vllm_mxfp4 import loaded_by_vllm

                record, load_note = loaded_by_vllm(record, raw, tp=tp, version=version_key(version), gpu=gpu)
                if load_note is not None:
                    notes.append(load_note)
            record, cast_note = vllm_loaded(model, record)
            if cast_note is not None:
                notes.append(cast_note)
            per_gpu = weights_per_gpu(model, record, weight_tp, pp, extra)
            per_gpu, weights_from = with_fp32(model, version, gpu, served_from_float32(model), weight_tp, pp,
                                               per_gpu, weights_from, notes, record)
            note_load_delta(model, version, record.source, notes, weight_tp)
        elif served_from_float32(model):  # 4 B per parameter as stored, 2 B as vLLM loads it
            per_gpu = config_weights_per_gpu(model, weight_tp, pp, version, halve=True) + extra
            weights_from = "parameter count x 2 B: a float32 checkpoint, served in bf16 (vLLM's dtype auto)"
            per_gpu, weights_from = with_fp32(model, version, gpu, True, weight_tp, pp, per_gpu, weights_from, notes)
            per_gpu, weights_from = with_load_delta(model, version, True, weight_tp, pp, per_gpu, weights_from, notes)
            per_gpu, weights_from = _with_pooling_heads(model, pooling, True, weight_tp, pp, per_gpu, weights_from,
                                                        notes)
        else:
            per_gpu = config_weights_per_gpu(model, weight_tp, pp, version) + extra
            weights_from = "parameter count x dtype"
            if model.weight_g_idx_bytes and _at_least(version, G_IDX_DROPPED_FROM):
                weights_from += f", less GPTQ's g_idx ({model.weight_g_idx_bytes:,} B; vLLM drops it at load)"
            per_gpu, weights_from = with_fp32(model, version, gpu, False, weight_tp, pp, per_gpu, weights_from, notes)
            per_gpu, weights_from = with_load_delta(model, version, False, weight_tp, pp, per_gpu, weights_from,
                                                     notes)
            per_gpu, weights_from = _with_pooling_heads(model, pooling, False, weight_tp, pp, per_gpu, weights_from,
                                                        notes)
        if experts_elsewhere:
            per_gpu -= experts_elsewhere
            weights_from += (f", less {experts_elsewhere / GIB:,.2f} GiB of routed experts on the other DP ranks' "
                             "GPUs (capacity.experts)")
        if tower_whole_bytes:
            per_gpu += tower_whole_bytes
            weights_from += (f", + {tower_whole_bytes / GIB:,.2f} GiB: the vision tower whole on every GPU "
                             "(--mm-encoder-tp-mode data)")
        if eplb_bytes:
            per_gpu += eplb_bytes
            weights_from += (f", + {eplb_bytes / GIB:,.2f} GiB of EPLB state allocated at load (eplb_state.py "
                             "EplbState.add_model: one MoE layer's local experts, the load window, the maps)")
        if extra:
            weights_from += (f", + {extra / GIB:,.2f} GiB of drafter weights on the last stage's GPUs "
                             f"({drafter.how})")
        if getattr(model, "weight_expert_params", 0):  # FP8 store_dtype mxfp4 (configs/quant_bytes.py)
            notes.append("the routed experts' MXFP4 weights (FP8 store_dtype) are taken as stored: vLLM's re-layout "
                         "of them for its MXFP4 kernel (fused_moe/oracle/mxfp4.py select_deepseek_v4_mxfp4_moe_backend,"
                         " by GPU: padding, swizzled scales) is not modelled")
        from ..capacity.weights import kv_note
        from ..weights.estimate import estimated

        line = kv_note(record if record is not None and record.source != "estimated from config"
                       else estimated(model), model, weight_tp)
        if line is not None:
            notes.append(line)
        if model.family == "deepseek_v41_text":
            notes.append("DeepSeek-V4.1's load is the text model at its checkpoint dtypes; not modelled: the vision "
                         "tower vLLM loads unless --language-model-only (485M parameters, 0.97 GB at TP 1), wo_a "
                         "dequantized to bf16 on Hopper (+1.30 GB at TP 1), FP8 scales expanded to one per 32 "
                         "(+0.21 GB at TP 1), the Engram staging buffers; the Engram tables are in host memory")
        rope = rope_bytes(model, version, max_model_len)
        if rope is None:
            notes.append("vLLM's rotary cos/sin tables (counted in its load) are not modelled for this family"
                         + ("" if version else ", or depend on the vLLM release, which was not given"))
        elif rope:
            per_gpu += rope
            weights_from += f", + {rope / 2**20:,.0f} MiB of rotary cos/sin tables (vllm_rope_cache)"
        seqs = max_num_seqs if max_num_seqs is not None else (V0_MAX_NUM_SEQS if v0_engine else 1024)
        built, built_what, built_notes = load_buffers(model, version, max_num_batched_tokens, tp, seqs, pp,
                                                      drafter is not None, getattr(drafter, "mtp", False),
                                                      speculative_tokens)
        per_gpu += built
        weights_from += f", + {built_what}" if built_what else ""
        notes.extend(built_notes)
    tokens = max_num_batched_tokens
    if v0_engine and max_model_len:
        tokens = max(max_model_len, max_num_batched_tokens)
    forward = forward_bytes(tokens, model.hidden_size or 0)
    activation, activation_from = forward, "forward"
    rows = max_num_seqs if max_num_seqs is not None else (V0_MAX_NUM_SEQS if v0_engine else 1024)
    vocab = vocab_size(model)
    buffers, buffers_from = 0, []
    kind = model_kind(model)
    v2 = not v0_engine and runs_model_runner_v2(version, kind)
    if pooling is not None:  # no sampler: the pooler's dummy run and no penalty bin counts (vllm_pooling)
        activation, activation_from = _with_pooler(pooling, model, tokens, rows, forward, notes)
    elif vocab:
        if v2:
            sampler, sampler_from = v2_sampler_bytes(rows, vocab, version)
        elif v0_engine:
            sampler, sampler_from = sampler_bytes(rows, vocab), "sampler"
        else:
            sampler, sampler_from = v1_sampler_bytes(rows, vocab, version, flashinfer_sampler)
        if sampler > forward:
            activation, activation_from = sampler, f"{sampler_from} over {rows:,} x {vocab:,} logits"
        if v2 and _at_least(version, CONSUMED_FROM):
            width = 1 + speculative_tokens if drafter is not None and speculative_tokens > 0 else 1
            buffers = v2_kept_sampler_bytes(rows, vocab, width)
            buffers_from.append("V2's penalty bin counts, prompt bin mask and grammar bitmask"
                                + (f" ({width} rows a sequence: 1 + num_speculative_tokens)" if width > 1 else ""))
            if drafter is not None and width == 1:
                notes.append("speculative decoding: V2's grammar bitmask holds 1 + num_speculative_tokens rows per "
                             "sequence; kvplan counts one, the draft tokens not given (structured_outputs.py "
                             "StructuredOutputsWorker)")
    else:
        notes.append("the sampler's peak is not modelled: the model's vocabulary is unknown (no config file)")
    if kind["is_moe"]:
        activation, activation_from, buffers = _with_moe_workspace(
            model, version, gpu, tp, tokens, activation, activation_from, buffers, buffers_from, notes,
            dp=dp, ep=ep, a2a=all2all.backend if all2all is not None else None)
    if all2all is not None:  # allocated after the first snapshot, outside torch: consumed (engines/vllm_a2a.py)
        buffers += all2all.bytes
        buffers_from += [all2all.what] if all2all.bytes else []
        notes.extend(all2all.notes)
    if max(pp, 1) > 1 and not v0_engine:
        activation, activation_from, buffers = _with_pp_stage_buffer(
            model, version, pp, v2, tokens, activation, activation_from, buffers, buffers_from, notes)
    non_torch = ((NON_TORCH_BYTES if v0_engine else NON_TORCH_BYTES_V1)
                 + tp_non_torch_bytes(tp, gpu, version, v0_engine, pcie_only))
    graphs, graphs_from = 0, ""
    if cuda_graph_bytes is not None:
        graphs, graphs_from = cuda_graph_bytes, "given"
    elif not v0_engine and subtracts_cuda_graphs(version):
        from .vllm_cudagraph import estimate as graph_estimate

        modelled = graph_estimate(version, max_num_seqs=rows, max_num_batched_tokens=max_num_batched_tokens,
                                  layers=model.num_layers, gpu=gpu, enforce_eager=enforce_eager,
                                  pooling=pooling is not None, **kind)
        graphs, graphs_from = modelled.bytes, "modelled, empirical"
        if modelled.note:
            notes.append(modelled.note + (f"; fitted at TP 1, not checked at TP {tp}" if graphs and tp > 1 else ""))
    if v2 and vocab and pooling is None:
        notes.append(f"vLLM {version} runs Model Runner V2: its sampler profile is read from source, "
                     "not checked against a log")
    if max(tp, 1) > 1 and is_pcie_only(gpu, pcie_only):
        why = "" if is_pcie_only(gpu) else (" (as the log's custom all-reduce warning says: no NVLink in the TP "
                                            "group, or its GPUs on two nodes)")
        notes.append(f"non-torch memory at TP {tp} over PCIe only{why}: + {NON_TORCH_TP_BYTES_PCIE / GIB:.2f} GiB "
                     "(empirical, one 8 x L40S log; NVLink systems add 0.4-1.3 GiB)")
    elif max(tp, 1) > 1:
        nvls = nvls_bytes(tp, gpu)
        early = snapshot_before_dist_init(version, v0_engine)
        fitted = NON_TORCH_TP_BYTES_EARLY if early else NON_TORCH_TP_BYTES
        notes.append(f"non-torch memory at TP {tp}: + {fitted / GIB:.2f} GiB for NCCL and all-reduce buffers "
                     f"(empirical, one TP 2 log; {'the profile counts the distributed init' if early else 'from 0.11 the distributed init is outside the profile'};"
                     " public TP > 1 logs add 0.4-1.8 GiB)"
                     + (f" + {nvls / GIB:.3f} GiB NCCL NVLS buffers" if nvls else ""))
    if max(pp, 1) > 1 and (v0_engine or snapshot_before_dist_init(version, v0_engine)):
        notes.append(f"non-torch memory at PP {pp}: pipeline NCCL buffers not modelled")
    elif max(pp, 1) > 1:
        notes.append(f"non-torch memory at PP {pp}: none added; the pipeline's NCCL communicator is set up before "
                     "vLLM's first snapshot (from 0.11), its point-to-point ones at the first send, after the profile")
    extensible = None
    if not v0_engine and (extensible_kv_cache if extensible_kv_cache is not None else extensible_by_default(version)):
        # v1/worker/gpu/model_runner.py profile_cudagraph_memory (0.34.0) returns 0 with the extensible KV cache:
        # no estimate is subtracted; the graphs (the modelled estimate stands for the captured pool) are resident
        # when the pool is measured after capture (vllm_extensible)
        extensible = extensible_pool(total_bytes=total_bytes, utilization=gpu_memory_utilization, tp=ranks,
                                     pcie_only=is_pcie_only(gpu, pcie_only), weight_bytes=per_gpu,
                                     non_torch_bytes=non_torch, buffer_bytes=buffers, activation_bytes=activation,
                                     captured_graph_bytes=graphs)
        if graphs:
            notes.append(f"{EXTENSIBLE_GRAPHS_NOTE}: vLLM {version} with the extensible KV cache skips it "
                         "(profile_cudagraph_memory returns 0) and measures the captured graphs after warmup; the "
                         f"{graphs / GIB:.2f} GiB above stand for the captured pool in the measured pool only")
        graphs, graphs_from = 0, ""
    return ProfileEstimate(total_bytes, gpu_memory_utilization, per_gpu, activation, non_torch, graphs, tokens,
                           weights_from, activation_from, tuple(notes), graphs_from, buffers,
                           " + ".join(buffers_from), extensible)


def _pooling_runner(model, version, notes: list):
    """The pooling runner vLLM `version` gives the model (kvplan.engines.vllm_pooling), None for a generate model
    or a release whose pooling profile is not read (then a note: the sampler is kept)."""
    from .vllm_pooling import pooling_of, profiles_pooler

    raw = raw_config(model) or {}
    names = raw.get("architectures") or nested_text(raw).get("architectures") or [getattr(model, "architecture", None)]
    pooling = pooling_of(names, version)
    if pooling is None or profiles_pooler(version):
        return pooling
    notes.append(f"{pooling.architecture} runs vLLM's pooling runner ({pooling.how}), whose profile runs the pooler "
                 f"instead of the sampler; that path is read from 0.29.0, so for vLLM {version} the sampler is "
                 "counted as for a generate model")
    return None


def _with_pooling_heads(model, pooling, halve: bool, tp: int, pp: int, per_gpu: int, weights_from: str,
                        notes: list) -> tuple[int, str]:
    """(per_gpu, weights_from) of config-sized weights for a classification model on vLLM's pooling runner: the
    plan's count already has no lm_head and the head at the checkpoint's width (configs/pooling_heads.py,
    vllm_pooling); vLLM builds the head in float32 (config/model.py _get_head_dtype; adapters.py as_seq_cls_model
    params_dtype=head_dtype, the registered classes' likewise), so + (4 - width) B a parameter on each rank, whole
    or split as it holds the head (HeadPart.split). Unchanged for any other model."""
    if pooling is None or pooling.kind != "classify":
        return per_gpu, weights_from
    from ..configs.checkpoint_dtype import float_width_bytes
    from ..configs.pooling_heads import config_pooling_head

    head, f = config_pooling_head(raw_config(model), model.source or model.name)
    if head is None or not head.params:
        return per_gpu, weights_from
    extra = head.per_rank(tp) * (4 - (2 if halve else float_width_bytes(f)))
    if not extra:
        return per_gpu, weights_from
    return per_gpu + extra, weights_from + f", + {extra:,} B for the pooling head vLLM holds in float32 (head_dtype)"


def _with_pooler(pooling, model, tokens: int, rows: int, forward: int, notes: list) -> tuple[int, str]:
    """(activation, what) of a pooling model's profile: the larger of the forward and the pooler's dummy run."""
    from .vllm_pooling import pooler_peak_bytes

    pooler = pooler_peak_bytes(pooling.kind, tokens, model.hidden_size or 0, rows)
    tasks = "token_embed + embed" if pooling.kind == "embed" else "token_classify + classify"
    notes.append(f"pooling runner ({pooling.how}): the profile runs the pooler's dummy run ({tasks}, "
                 f"{pooler / GIB:.2f} GiB at its peak, the hidden states included) instead of the sampler, and "
                 "builds no sampler, so no sampler warm-up and no penalty bin counts (v1/worker/gpu/model_runner.py "
                 "profile_run and load_model, read in 0.29-0.34; kvplan.engines.vllm_pooling); CUDA graphs "
                 "PIECEWISE only")
    if pooler > forward:
        return pooler, f"pooler dummy run ({tasks})"
    return forward, "forward"


def pp_stage_buffer_bytes(tokens: int, hidden_size: int) -> int:
    """The buffer a later pipeline stage keeps for received activations (see PP_STAGE_BUFFER_TENSORS)."""
    return PP_STAGE_BUFFER_TENSORS * tokens * hidden_size * PP_STAGE_BUFFER_DTYPE_BYTES


def _with_pp_stage_buffer(model, version, pp, v2, tokens, activation, activation_from, buffers, buffers_from,
                          notes):
    """The activation and kept buffers with the last stage's received-activation buffer (v1 engine, pp > 1)."""
    head = (f"PP {pp}: the figure is the last stage's, the one that runs the sampler; the first stage holds no "
            "sampler state and no received-activation buffer, and its own figure is not predicted")
    if not model.hidden_size:
        notes.append(head + "; the received-activation buffer is not modelled (no hidden size)")
        return activation, activation_from, buffers
    stage = pp_stage_buffer_bytes(tokens, model.hidden_size)
    what = (f"received-activation buffer {PP_STAGE_BUFFER_TENSORS} x {tokens:,} x {model.hidden_size:,} x "
            f"{PP_STAGE_BUFFER_DTYPE_BYTES} B (hidden_states and residual as Llama and Qwen build them; inferred for "
            "other families)")
    if v2 and not _at_least(version, CONSUMED_FROM):
        notes.append(head + f"; its {what} is allocated before the profile, which Model Runner V2 does not count "
                     "before 0.27")
        return activation, activation_from, buffers
    notes.append(head + f"; + {stage / GIB:.2f} GiB, the {what}")
    if v2 or _at_least(version, CONSUMED_FROM):
        buffers_from.append("the last stage's received-activation buffer")
        return activation, activation_from, buffers + stage
    return activation + stage, f"{activation_from} + the last stage's received-activation buffer", buffers


def _with_moe_workspace(model, version, gpu, tp, tokens, activation, activation_from, buffers, buffers_from,
                        notes, *, dp: int = 1, ep: bool = False, a2a: str | None = None):
    """The activation and kept buffers with the fused-MoE workspace of the profiling run (vllm_moe_workspace):
    a persistent one is live beside the sampler (before 0.27) or stays allocated into "consumed" (0.27+);
    a transient one only counts where it is larger than the forward and the sampler."""
    from .vllm_moe_workspace import workspace

    raw = raw_config(model)
    online = None
    if raw is not None and getattr(model, "online_quantization", ""):
        # the experts as --quantization makes them (configs/quant_online.py): the kernels of that layout
        from ..configs.quant_online import scheme

        online = scheme(model.online_quantization, "vllm")
        raw = {**raw, "quantization_config": online.config}
    ws = workspace(version, gpu, raw, tp=tp, tokens=tokens, dp=dp, ep=ep, a2a=a2a) if raw is not None else None
    if ws is None:
        return activation, activation_from, buffers
    if ws.bytes is None:
        # the online layout's kernels are the engine's own (online/fp8.py select_fp8_moe_backend, online/int8.py
        # Int8OnlineMoEMethod), not those of the checkpoint format that stands for its bytes
        why = (ws.path if online is None else f"the MoE kernels of vLLM 0.34's online {online.name} are not read "
               "(online/fp8.py select_fp8_moe_backend, online/int8.py)")
        notes.append(f"fused-MoE workspace not modelled: {why}")
        return activation, activation_from, buffers
    gib = ws.bytes / GIB
    if ws.persistent and _at_least(version, CONSUMED_FROM):
        buffers_from.append(f"fused-MoE workspace, {ws.path}")
        return activation, activation_from, buffers + ws.bytes
    if ws.persistent:
        return (activation + ws.bytes,
                f"{activation_from} + the fused-MoE workspace {gib:.2f} GiB ({ws.path})", buffers)
    if ws.bytes > activation:
        return ws.bytes, f"fused-MoE caches {gib:.2f} GiB ({ws.path})", buffers
    return activation, activation_from, buffers


__all__ = ["predict_available", "ProfileEstimate", "PROFILE_BYTES_PER_TOKEN_PER_HIDDEN", "NON_TORCH_BYTES",
           "NON_TORCH_TP_BYTES", "NON_TORCH_TP_BYTES_EARLY", "NON_TORCH_TP_BYTES_PCIE", "PCIE_ONLY_GPUS", "is_pcie_only", "SNAPSHOT_AFTER_DIST_INIT_FROM", "NVLS_CHANNELS",
           "nvls_bytes", "tp_non_torch_bytes", "snapshot_before_dist_init",
           "NON_TORCH_BYTES_V1", "SAMPLER_LOGIT_COPIES", "driver_total_bytes", "V0_MAX_NUM_SEQS",
           "CUDA_GRAPH_ESTIMATE_FROM", "MODEL_RUNNER_V2_DEFAULT_FROM", "model_kind", "runs_model_runner_v2", "vocab_size", "forward_bytes",
           "pp_stage_buffer_bytes", "PP_STAGE_BUFFER_TENSORS", "sampler_bytes", "v1_sampler_bytes", "v2_sampler_bytes",
           "v2_kept_sampler_bytes", "subtracts_cuda_graphs", "version_key"]
