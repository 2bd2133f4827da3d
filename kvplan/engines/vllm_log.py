"""Read a vLLM start-up log: the deployment it describes and the figures it printed.

Formats read (the wording of each release, from its source):
- v0 engine (<= 0.7): "Loading model weights took 14.9888 GB" (GiB values),
  "Memory profiling results: total_gpu_memory=... kv_cache_size=3.81GiB
  gpu_memory_utilization=0.90", or the 0.7 sentence "... the rest of the memory
  reserved for KV Cache is 54.90GiB", "# GPU blocks: 1952, # CPU blocks: 2048",
  "Maximum concurrency for 20000 tokens per request: 1.56x".
- v1 engine 0.7-0.8: "# GPU blocks: N" then the concurrency line.
- v1 0.8-0.27: "Model loading took X GiB", "Available KV cache memory: X GiB"
  (%.2f until 0.13, round(x, 2) from 0.14: "5.9"), "GPU KV cache size: N tokens",
  "Maximum concurrency for L tokens per request: Cx" (two lines).
- 0.28-0.34: "GPU KV cache size: N tokens, Maximum concurrency for L tokens per
  request: Cx" (one line; from 0.30 the first word is the device, "GPU" on CUDA,
  "XPU" ..., 0.33 may add " + host"; 0.34's is the same format string,
  kv_cache_utils.py update_kv_cache_capacity).
- 0.34's extensible KV cache (the CUDA default; v1/worker/extensible_kv_cache.py
  measure_kv_cache_blocks, one line per worker after warmup): "Memory after warmup: A GiB free,
  B GiB committed to the KV cache, C GiB kept for transient activations (D GiB allocated at
  peak, E GiB of torch reservation growth); N KV cache blocks (X GiB) fit within the requested
  Y GiB. Torch may reserve up to Z GiB." (GiB as format_gib prints them); the smallest N over
  the workers, at most the capacity reserved from "Available KV cache memory", is the pool
  (kv_cache_planning.py finalize_extensible_kv_cache); extend_kv_cache then prints "Extended KV
  cache to N blocks (X.XX GiB)." and the size line follows with those blocks.
- the profile breakdown (v1/worker/gpu_worker.py compile_or_warm_up_model, printed after the
  CUDA-graph capture; INFO in 0.10.2 and from 0.26.0, DEBUG in 0.11-0.25): "Free memory on
  device (A/B GiB) on startup. Desired GPU memory utilization is (U, C GiB). Actual usage is W
  GiB for weight, P GiB for peak activation, N GiB for non-torch memory, and G GiB for CUDAGraph
  memory. ... Current kv cache memory in use is K GiB." (0.10.2-0.26; 0.10.2/0.11 end "... is
  N bytes."); from 0.27.0 "Actual usage is X GiB for consumed memory (weights + non-torch), P
  GiB for peak activation, and G GiB for CUDAGraph memory." Figures are round(x, 2), so "78.6".
  The start-up refusal "Free memory on device cuda:0 (A/B GiB) on startup is less than desired
  GPU memory utilization (U, C GiB)" gives the same first four figures.
- the CUDA-graph estimate (v1/worker/gpu_model_runner.py profile_cudagraph_memory, 0.18+):
  "Profiling CUDA graph memory: PIECEWISE=N (largest=M), FULL=K (largest=L)" (ENCODER=E too),
  "Estimated CUDA graph memory: X GiB total", and whether the profile subtracted it: "CUDA
  graph memory profiling is enabled (default since v0.21.0)" / "... is disabled". After the
  capture: "CUDA graph pool memory: X GiB (actual), Y GiB (estimated)" (0.20+) and "Graph
  capturing finished in S secs, took X GiB".
- the settings: "Initializing a V1 LLM engine (v0.10.1) with config: model='...',
  dtype=torch.bfloat16, max_seq_len=8192, ... tensor_parallel_size=1, ...
  kv_cache_dtype=auto", "non-default args: {...}", a `vllm serve` command line,
  and the refusal "To serve at least one request with the model's max seq len
  (L) ... the estimated maximum model length is N" / v0's "The model's max seq
  len (L) is larger than the maximum number of tokens that can be stored in KV
  cache (N)".

Every figure is kept as printed (text) and as a number; None when absent.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..errors import UsageError
from ..units import GIB


class _NotANumber(ValueError):
    """A figure vLLM prints as a number that does not read as one ('1.2.3 GiB'): the log was edited or cut."""


def _num(text: str) -> float:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        raise _NotANumber(text) from None
    if not math.isfinite(value):  # hundreds of digits read as infinity: no figure vLLM prints
        raise _NotANumber(text)
    return value


def _int(text: str) -> int:
    """A count as printed ("1952", "1,952"); one of hundreds of digits is refused before int() reads it."""
    return int(_num(text))


@dataclass
class VllmLog:
    path: str = ""
    head_only_bytes: int | None = None  # a log larger than LOG_HEAD_BYTES: only its first bytes were read
    version: str | None = None
    model: str | None = None
    dtype: str | None = None
    max_model_len: int | None = None
    tp: int | None = None
    pp: int | None = None
    # the placement settings beyond TP / PP (the config line's data_parallel_size, the non-default args, the command
    # line): kvplan.request.DeploymentRequest's dp, ep, a2a, redundant_experts, mm_encoder_tp_mode
    dp: int | None = None
    ep: bool | None = None  # --enable-expert-parallel ('enable_expert_parallel': True, "Expert parallelism is enabled")
    all2all_backend: str | None = None
    enable_eplb: bool | None = None
    num_redundant_experts: int | None = None  # eplb_config's num_redundant_experts (--num-redundant-experts before)
    mm_encoder_tp_mode: str | None = None
    quantization: str | None = None  # the config line's quantization=... (or the args' 'quantization'), when not None
    other_dp_lines: int = 0  # lines of DP ranks other than 0, left out (each DP rank is its own engine core)
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_batched_tokens: int | None = None
    enable_prefix_caching: bool | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    pcie_only: bool | None = None  # True: vLLM's custom all-reduce says the GPUs lack NVLink / P2P
    # which top-k/top-p sampler the v1 runner picked (topk_topp_sampler.py's start-up line): True FlashInfer's,
    # False the PyTorch-native sort; None: not printed
    flashinfer_sampler: bool | None = None
    gpu_name: str | None = None
    total_gpu_memory_gib: float | None = None
    weights_gib: float | None = None
    available_kv_gib: float | None = None  # as printed: 2 decimals
    available_kv_text: str | None = None
    # TP/PP workers that each print their own figure: worker tag ("TP0", "PP1_TP0", "rank=2") -> GiB
    available_kv_by_worker: dict[str, float] = field(default_factory=dict)
    available_kv_all: tuple[float, ...] = ()  # every "Available KV cache memory" line, tagged or not (Ray's are not)
    num_gpu_blocks: int | None = None
    # 0.34's extensible KV cache: the smallest "N KV cache blocks (X GiB)" of the workers' "Memory after warmup"
    # lines, as printed, and "Extended KV cache to N blocks" (the pool every worker committed)
    warmup_kv_blocks: int | None = None
    warmup_kv_gib: float | None = None
    warmup_kv_text: str | None = None
    extended_kv_blocks: int | None = None
    gpu_kv_cache_tokens: int | None = None
    concurrency: float | None = None  # as printed: 2 decimals
    concurrency_len: int | None = None
    refused: bool = False
    refused_estimate: int | None = None  # v1: estimated maximum model length; v0: tokens the cache holds
    # the breakdown line (see the module doc); GiB as printed (2 decimals)
    device_free_gib: float | None = None  # "Free memory on device (A/B GiB)": A, the free memory at start
    device_total_gib: float | None = None  # B: what the driver reports (torch.cuda.mem_get_info)
    requested_gib: float | None = None  # "Desired GPU memory utilization is (U, C GiB)": C
    breakdown: str | None = None  # "weight" (0.10.2-0.26 wording) | "consumed" (0.27+)
    breakdown_weights_gib: float | None = None
    breakdown_consumed_gib: float | None = None  # weights + non-torch (0.27+)
    breakdown_activation_gib: float | None = None
    breakdown_non_torch_gib: float | None = None
    breakdown_cuda_graph_gib: float | None = None  # the capture's pool, after the KV cache was allocated
    kv_in_use_gib: float | None = None  # "Current kv cache memory in use is ..."
    # the CUDA-graph estimate (0.18+)
    cuda_graph_estimate_gib: float | None = None
    cuda_graph_modes: dict[str, tuple[int, int]] = field(default_factory=dict)  # mode: (graphs, largest size)
    cuda_graph_estimate_applied: bool | None = None  # "profiling is enabled" / "is disabled"; None: not printed
    cuda_graph_actual_gib: float | None = None  # "CUDA graph pool memory: X GiB (actual)" / "Graph capturing ... took"
    # 0.34+'s extensible KV cache: "... T GiB kept for transient activations" of the warmup line read into
    # warmup_kv_blocks (the pool, where "Available KV cache memory" is only the reserved capacity), and whether it
    # was on (True: a warmup line; False: "Disabling the extensible KV cache"; None: neither printed)
    transient_kept_gib: float | None = None
    extensible_kv_cache: bool | None = None
    total_memory_from: str | None = None  # which line gave total_gpu_memory_gib
    era: str = "v1"  # v0 (# GPU blocks, V0 engine or early V1) | v1
    one_line: bool = False  # 0.28+'s "GPU KV cache size: N tokens, Maximum concurrency ..."
    flags: tuple[str, ...] = ()  # speculative | connector | quantized
    speculative_method: str | None = None  # SpeculativeConfig(method='mtp', ...) / --speculative-config's "method"
    speculative_tokens: int | None = None  # SpeculativeConfig(num_spec_tokens=N) / "num_speculative_tokens": N
    speculative_model: str | None = None  # the draft checkpoint of eagle / eagle3 / draft_model (its 'model')
    draft_tp: int | None = None  # the speculative config's draft_tensor_parallel_size, when printed
    engine_starts: int = 0  # "Initializing a V1 LLM engine" / "Initializing an LLM engine" lines: more than one start-up
    found: list[str] = field(default_factory=list)  # which figures were read

    @property
    def read_nothing(self) -> bool:
        """No setting and no figure was read: not a vLLM log (or a log cut before its first line)."""
        from dataclasses import MISSING, fields

        for f in fields(self):
            if f.name in ("path", "head_only_bytes", "era", "found"):
                continue
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            if getattr(self, f.name) != default:
                return False
        return True

    @property
    def available_kv_bytes_range(self) -> tuple[int, int] | None:
        """Bytes consistent with the printed GiB figure (rounded to 0.01 GiB)."""
        return printed_range(self.available_kv_gib)

    @property
    def available_kv_min_gib(self) -> float | None:
        """The smallest figure any worker printed: every worker's block count is cut to it."""
        values = list(self.available_kv_by_worker.values()) + list(self.available_kv_all)
        return min(values) if values else self.available_kv_gib


def printed_range(gib: float | None) -> tuple[int, int] | None:
    if gib is None:
        return None
    return max(int((gib - 0.005) * GIB), 0), int((gib + 0.005) * GIB)


# the worker prefixes vLLM prints: "(Worker_TP3_EP3 pid=...)", "(Worker_DP0_TP3_EP3 pid=...)" (0.34
# v1/executor/multiproc_executor.py WorkerProc: Worker[_DPd][_PPp][_PCPc][_TPt][_DCPd][_EPe]),
# "(Worker_PP1_TP0 pid=...)", "(VllmWorker TP2 pid=...)",
# "(VllmWorker rank=1 pid=...)"
_WORKER_TAG = re.compile(r"\((?:Worker_(?:DP\d+_)?|VllmWorker[ _])((?:PP\d+_)?TP\d+|rank=\d+)")

# a line of DP rank d > 0: its engine core "(EngineCore_DPd pid=...)" (v1/engine/core.py run_engine_core), its workers
# "(Worker_DPd_... pid=...)", a Ray actor "DPEngineCoreActor_DPd"; each DP rank profiles its own GPUs and sizes its own
# pool (EngineCore._initialize_kv_caches), so the figures read are DP rank 0's
_OTHER_DP_RANK = re.compile(r"^.*?\((?:EngineCore|Worker|DPEngineCoreActor)_DP[1-9]\d*[_ ].*(?:\n|$)", re.M)


_SETTINGS = {
    # key: (regex on the config line / non-default args / command line, converter)
    # not "--max-model-len 32K" (the concurrency line's length is read then)
    "max_model_len": [r"max_seq_len=(\d+)", r"'max_model_len': (\d+)", r"--max[-_]model[-_]len[ =](\d+)(?![\dkKmM.])",
                      r"max_model_len=(\d+)"],
    "tp": [r"tensor_parallel_size=(\d+)", r"'tensor_parallel_size': (\d+)",
           r"(?:--tensor[-_]parallel[-_]size|\s-tp)[ =](\d+)"],
    "pp": [r"pipeline_parallel_size=(\d+)", r"'pipeline_parallel_size': (\d+)",
           r"(?:--pipeline[-_]parallel[-_]size|\s-pp)[ =](\d+)"],
    "kv_cache_dtype": [r"kv_cache_dtype=([A-Za-z0-9_]+)", r"'kv_cache_dtype': '([A-Za-z0-9_]+)'",
                       r"--kv[-_]cache[-_]dtype[ =]([A-Za-z0-9_]+)", r"\bkv-cache-dtype ([A-Za-z0-9_]+)"],
    "block_size": [r"'block_size': (\d+)", r"--block[-_]size[ =](\d+)"],
    "gpu_memory_utilization": [r"'gpu_memory_utilization': ([0-9.]+)", r"--gpu[-_]memory[-_]utilization[ =]([0-9.]+)",
                               r"gpu_memory_utilization=([0-9.]+)", r"gpu_memory_utilization \(([0-9.]+)\)"],
    "max_num_batched_tokens": [r"'max_num_batched_tokens': (\d+)", r"--max[-_]num[-_]batched[-_]tokens[ =](\d+)",
                               r"max_num_batched_tokens=(\d+)"],
    "dtype": [r"dtype=torch\.(\w+)", r"'dtype': '(\w+)'", r"--dtype[ =](\w+)"],
    "max_num_seqs": [r"'max_num_seqs': (\d+)", r"--max[-_]num[-_]seqs[ =](\d+)", r"max_num_seqs=(\d+)"],
    # config/vllm.py VllmConfig.__str__ prints data_parallel_size (not EP, EPLB or the encoder mode: those are read
    # from the non-default args dict or the command line)
    "dp": [r"data_parallel_size=(\d+)", r"'data_parallel_size': (\d+)",
           r"(?:--data[-_]parallel[-_]size|\s-dp)[ =](\d+)"],
    "all2all_backend": [r"'all2all_backend': '(\w+)'", r"--all2all[-_]backend[ =](\w+)"],
    "num_redundant_experts": [r"'num_redundant_experts': (\d+)", r"--num[-_]redundant[-_]experts[ =](\d+)",
                              r'"num_redundant_experts": ?(\d+)', r"num_redundant_experts=(\d+)"],
    "mm_encoder_tp_mode": [r"'mm_encoder_tp_mode': '(\w+)'", r"--mm[-_]encoder[-_]tp[-_]mode[ =](\w+)"],
}

_INT_KEYS = {"max_model_len", "tp", "pp", "block_size", "max_num_batched_tokens", "max_num_seqs", "dp",
             "num_redundant_experts"}

_MODEL = [
    r"with config: model='([^']+)'",
    r"Namespace\(.*?\bmodel='([^']+)'",
    r"'model': '([^']+)'",
    r"'model_tag': '([^']+)'",
    r"vllm serve\s+(?:\\\n\s*)?([^\s\\]+)",
    r"--model[ =]([^\s\\]+)",
    r"█\s+model\s+(\S+)",
]
_VERSION = [
    r"LLM engine \(v([0-9][0-9A-Za-z.+\-]*)\)",
    r"vLLM API server version ([0-9][0-9A-Za-z.+\-]*)",
    r"█\s+version\s+([0-9][0-9A-Za-z.+\-]*)",
    r"vLLM Version\s*:\s*([0-9][0-9A-Za-z.+\-]*)",
    r"\bvllm[=-]v?(0\.\d+\.\d+[0-9A-Za-z.+\-]*)",
    r"vllm/vllm-openai:v?(0\.\d+\.\d+(?:\.post\d+|rc\d+)?)",  # the Docker image's tag on a `docker run` line
]


def _first(patterns, text):
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            return match.group(1)
    return None


def parse_log(text: str, path: str = "") -> VllmLog:
    log = VllmLog(path=path)
    log.other_dp_lines = len(_OTHER_DP_RANK.findall(text))
    if log.other_dp_lines:
        text = _OTHER_DP_RANK.sub("", text)
    for key, patterns in _SETTINGS.items():
        value = _first(patterns, text)
        if value is None:
            continue
        setattr(log, key, int(_num(value)) if key in _INT_KEYS else (_num(value) if key == "gpu_memory_utilization" else value))
    if re.search(r"'enforce_eager': True|--enforce-eager\b|enforce_eager=True", text):
        log.enforce_eager = True
    # --enable-expert-parallel / -ep (the short flag only on a `vllm serve` command line, not anywhere in the text),
    # or what an EP start prints: FusedMoE's "[EP Rank r/n] Expert parallelism is enabled"
    # (model_executor/layers/fused_moe/layer.py) and the workers' "_EPe" tag
    if re.search(r"'enable_expert_parallel': True|--enable[-_]expert[-_]parallel\b|enable_expert_parallel=True|"
                 r"vllm serve [^\n]*\s-ep\b|Expert parallelism is enabled|\(Worker_[A-Z0-9_]*EP\d+ pid=", text):
        log.ep = True
    if re.search(r"'enable_eplb': True|--enable[-_]eplb\b|enable_eplb=True", text):
        log.enable_eplb = True
    # one per start-up (every TP worker shares the engine core's line)
    log.engine_starts = len(re.findall(r"Initializing an? (?:V1 )?LLM engine \(v", text))
    # custom_all_reduce.py's warnings when the TP group has no NVLink
    if re.search(r"not supported on more than two PCIe-only GPUs|lacks GPU P2P capability", text):
        log.pcie_only = True
    # custom_all_reduce.py's "process group spans across nodes": custom all-reduce off and the group's traffic over
    # the network. At TP 2 (PP 1) the group's two GPUs are then on two nodes, with no NVLink between them: the
    # PCIe-only case. A wider group spanning nodes may hold NVLink pairs inside a node, which the line does not tell.
    if (re.search(r"process group spans across nodes", text) and log.tp == 2 and (log.pp or 1) == 1
            and log.pcie_only is None):
        log.pcie_only = True
    if re.search(r"Using FlashInfer for top-p & top-k sampling", text):
        log.flashinfer_sampler = True
    elif re.search(r"FlashInfer is not available\. Falling back|FlashInfer is available, but it is not enabled|"
                   r"top-k sampling disabled via VLLM_USE_FLASHINFER_SAMPLER=0", text):
        log.flashinfer_sampler = False
    if re.search(r"'enable_prefix_caching': False|--no-enable-prefix-caching|enable_prefix_caching=False", text):
        log.enable_prefix_caching = False
    elif re.search(r"'enable_prefix_caching': True|--enable-prefix-caching|enable_prefix_caching=True", text):
        log.enable_prefix_caching = True
    model = _first(_MODEL, text)
    # a command line quoted in prose or markdown: `--model org/name`, "org/name",
    # (org/name); no Hub id or path ends in these
    log.model = model.strip("'\"`,;:()[]") or None if model else None
    version = _first(_VERSION, text)
    if version:
        log.version = version.rstrip(".")
    # the name: up to its first digit without digits, so a long run of digits is read once (a lazy run, \d+ and a
    # lazy run took minutes on a name of 5,000 digits that no terminator follows)
    gpu = re.search(r"(NVIDIA [A-Z][A-Za-z \-]*\d[A-Za-z0-9 \-]*?)(?:\s{2,}|,|\||\n|$)", text)
    if gpu:
        log.gpu_name = gpu.group(1).strip()
    total = _first([r"total_gpu_memory[=\s(]+([0-9.]+)\s*GiB", r"total memory:?\s*([0-9.]+)\s*GiB"], text)
    if total:
        log.total_gpu_memory_gib = _num(total)
        log.total_memory_from = "v0 memory profiling line"
    _read_breakdown(log, text)
    _read_cuda_graphs(log, text)
    weights = _first([r"Model loading took ([0-9.]+) ?GiB", r"Loading model weights took ([0-9.]+) ?GB",
                      r"model weights take ([0-9.]+) ?GiB"], text)
    if weights:
        log.weights_gib = _num(weights)
        log.found.append("weights")
    available = re.search(r"Available KV cache memory: (-?[0-9.]+) GiB", text) or \
        re.search(r"kv_cache_size=(-?[0-9.]+)GiB", text) or \
        re.search(r"the rest of the memory reserved for KV Cache is (-?[0-9.]+) ?GiB", text) or \
        re.search(r"larger than the available KV cache memory \((-?[0-9.]+) GiB\)", text)
    if available:
        log.available_kv_text = available.group(1)
        log.available_kv_gib = _num(available.group(1))
        log.found.append("available KV memory")
        every = list(re.finditer(r"^.*Available KV cache memory: (-?[0-9.]+) GiB.*$", text, re.M))
        log.available_kv_all = tuple(_num(line.group(1)) for line in every)
        for line in every:
            tag = _WORKER_TAG.search(line.group(0))
            if tag:
                log.available_kv_by_worker.setdefault(tag.group(1).replace("PP0_", ""), _num(line.group(1)))
        # the figure the engine's first worker printed (what its own logs and the pre-0.12 token line use)
        for first in ("TP0", "rank=0"):
            if first in log.available_kv_by_worker:
                log.available_kv_text = f"{log.available_kv_by_worker[first]:.2f}"
                log.available_kv_gib = log.available_kv_by_worker[first]
    _read_warmup(log, text)
    # not "Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512" (kv_cache_utils.py): 0.18+ prints it for the
    # minimal KV cache its CUDA-graph memory profile allocates (gpu_model_runner.py profile_cudagraph_memory)
    blocks = re.search(r"#? ?GPU blocks: ([0-9,]+)", text) or \
        re.search(r"(?<!Overriding )num_gpu_blocks(?: is)?[=:] ?([0-9,]+)", text)
    if blocks:
        log.num_gpu_blocks = int(_num(blocks.group(1)))
        log.era = "v0"
        log.found.append("GPU blocks")
    tokens = re.search(r"KV cache size: ([0-9,]+) tokens(, Maximum concurrency)?", text)
    if tokens:
        log.one_line = tokens.group(2) is not None
        log.gpu_kv_cache_tokens = int(_num(tokens.group(1)))
        log.era = "v1"
        log.found.append("KV cache size")
    conc = re.search(r"Maximum concurrency for ([0-9,]+) tokens per request: ([0-9.]+)x", text)
    if conc:
        log.concurrency_len = int(_num(conc.group(1)))
        log.concurrency = _num(conc.group(2))
        log.found.append("maximum concurrency")
        if log.max_model_len is None:
            log.max_model_len = log.concurrency_len
    refusal = re.search(r"estimated maximum model length is (\d+)", text)
    if refusal:
        log.refused, log.refused_estimate = True, _int(refusal.group(1))
    old = re.search(r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV "
                    r"cache \((\d+)\)", text)
    if old:
        log.refused, log.refused_estimate = True, _int(old.group(2))
        log.max_model_len = log.max_model_len or _int(old.group(1))
    # 0.8-0.10 print "the models's max seq len", later releases "the model's"
    if re.search(r"To serve at least one request with the models?'?s max seq len \((\d+)\)", text):
        log.refused = True
        log.max_model_len = log.max_model_len or _int(
            re.search(r"max seq len \((\d+)\)", text).group(1))
    flags = []
    if re.search(r"speculative_config=SpeculativeConfig|'speculative_config': \{|--speculative[-_]config", text):
        flags.append("speculative")
        method = re.search(r"""SpeculativeConfig\(method=['"](\w+)|['"]method['"]: ?['"](\w+)""", text)
        log.speculative_method = (method.group(1) or method.group(2)) if method else None
        count = re.search(r"""SpeculativeConfig\([^)]*num_spec_tokens=(\d+)|['"]num_speculative_tokens['"]: ?(\d+)""",
                          text)
        log.speculative_tokens = _int(count.group(1) or count.group(2)) if count else None
        draft = re.search(r"""SpeculativeConfig\([^)]*?\bmodel=['"]([^'"]+)|['"]speculative_config['"]: \{[^}]*?"""
                          r"""['"]model['"]: ?['"]([^'"]+)|--speculative[-_]config[= ]'?\{[^}]*?"model": ?"([^"]+)""",
                          text)
        log.speculative_model = next((g.strip() for g in draft.groups() if g), None) if draft else None
        draft_tp = re.search(r"""['"]?draft_tensor_parallel_size['"]?[:=] ?(\d+)""", text)
        log.draft_tp = _int(draft_tp.group(1)) if draft_tp else None
    if re.search(r"kv_transfer_config|KVConnector|LMCacheConnector|OffloadingConnector", text):
        flags.append("connector")
    quantized = re.search(r"quantization=(?!None)([\w-]+)|'quantization': '([^']*)'", text)
    if quantized:
        flags.append("quantized")
        log.quantization = quantized.group(1) or quantized.group(2)
    log.flags = tuple(flags)
    return log


_G = r"(-?[0-9]+(?:\.[0-9]+)?)"  # a GiB figure as round(x, 2) prints it: "78.6", "-3.58", "0.0"


def _read_breakdown(log: VllmLog, text: str) -> None:
    """The first worker's profile breakdown (every TP rank prints its own; the first one logged is read)."""
    start = re.search(r"Free memory on device(?: \S+)? \(" + _G + "/" + _G + r" GiB\) on startup"
                      r"(?:\.| is less than)(?: desired GPU memory utilization| Desired GPU memory utilization is)"
                      r"\s*\(([0-9.]+), " + _G + r" GiB\)", text, re.I)
    if not start:
        return
    log.device_free_gib, log.device_total_gib = _num(start.group(1)), _num(start.group(2))
    log.requested_gib = _num(start.group(4))
    if log.gpu_memory_utilization is None:
        log.gpu_memory_utilization = _num(start.group(3))
    # the driver's total is the best source of the GPU's memory (the v0 line printed the same figure)
    log.total_gpu_memory_gib = log.device_total_gib
    log.total_memory_from = "driver total ('Free memory on device (A/B GiB)')"
    rest = text[start.end():start.end() + 2000]
    old = re.match(r"\s*\.?\s*Actual usage is " + _G + r" GiB for weight,\s*" + _G + r" GiB for peak activation,\s*"
                   + _G + r" GiB for non-torch memory,\s*and " + _G + r" GiB for CUDAGraph memory", rest)
    new = re.match(r"\s*\.?\s*Actual usage is " + _G + r" GiB for consumed memory \(weights \+ non-torch\),\s*"
                   + _G + r" GiB for peak activation,\s*and " + _G + r" GiB for CUDAGraph memory", rest)
    if old:
        log.breakdown = "weight"
        (log.breakdown_weights_gib, log.breakdown_activation_gib, log.breakdown_non_torch_gib,
         log.breakdown_cuda_graph_gib) = (_num(g) for g in old.groups())
    elif new:
        log.breakdown = "consumed"
        log.breakdown_consumed_gib, log.breakdown_activation_gib, log.breakdown_cuda_graph_gib = (
            _num(g) for g in new.groups())
    if log.breakdown:
        log.found.append("profile breakdown")
        in_use = re.search(r"Current kv cache memory in use is " + _G + r" GiB", rest) or \
            re.search(r"Current kv cache memory in use is (\d+) bytes", rest)
        if in_use:
            value = _num(in_use.group(1))
            log.kv_in_use_gib = value if "GiB" in in_use.group(0) else value / GIB
    if log.weights_gib is None and log.breakdown_weights_gib is not None:
        log.weights_gib = log.breakdown_weights_gib


def _read_warmup(log: VllmLog, text: str) -> None:
    """0.34's extensible KV cache: the block count every worker measured after warmup (the smallest is the
    pool) and the count the workers committed."""
    # "Memory after warmup: F GiB free, C GiB committed to the KV cache, T GiB kept for transient activations
    # (...); N KV cache blocks (X GiB) fit within the requested R GiB." (measure_kv_cache_blocks, 0.34.0)
    measured = re.findall(r"Memory after warmup: ([^;\n]*); ([0-9]+) KV cache blocks \(" + _G + r" GiB\) fit within",
                          text)
    if measured:
        head, blocks, gib = min(measured, key=lambda m: _int(m[1]))
        log.warmup_kv_blocks, log.warmup_kv_text, log.warmup_kv_gib = _int(blocks), gib, _num(gib)
        kept = re.search(_G + r" GiB kept for transient activations", head)
        log.transient_kept_gib = _num(kept.group(1)) if kept else None
        log.extensible_kv_cache = True
        log.found.append("KV cache blocks after warmup")
    elif re.search(r"Disabling the extensible KV cache", text):
        log.extensible_kv_cache = False
    extended = re.search(r"Extended KV cache to ([0-9]+) blocks", text)
    if extended:
        log.extended_kv_blocks = _int(extended.group(1))
        log.extensible_kv_cache = True


def _read_cuda_graphs(log: VllmLog, text: str) -> None:
    modes = re.search(r"Profiling CUDA graph memory: ((?:[A-Z_]+=\d+ \(largest=\d+\)(?:, )?)+)", text)
    if modes:
        log.cuda_graph_modes = {m: (_int(n), _int(largest)) for m, n, largest in
                                re.findall(r"([A-Z_]+)=(\d+) \(largest=(\d+)\)", modes.group(1))}
    estimate = re.search(r"Estimated CUDA graph memory: " + _G + r" GiB total", text)
    if estimate:
        log.cuda_graph_estimate_gib = _num(estimate.group(1))
        log.found.append("CUDA graph estimate")
    if re.search(r"CUDA graph memory profiling is enabled", text):
        log.cuda_graph_estimate_applied = True
    elif re.search(r"CUDA graph memory profiling is disabled", text):
        log.cuda_graph_estimate_applied = False
    actual = re.search(r"CUDA graph pool memory:? " + _G + r" GiB \(actual\)", text) or \
        re.search(r"Graph capturing finished in [0-9.]+ secs, took " + _G + r" GiB", text)
    if actual:
        log.cuda_graph_actual_gib = _num(actual.group(1))


# how much of a log is read: vLLM prints its start-up lines in the first
# megabytes; a server's log of days is not read whole
LOG_HEAD_BYTES = 64 * 1024**2

# every figure kvplan reads is printed before the server says it is ready (uvicorn's line, which both vLLM's
# and SGLang's API servers print, and SGLang's own); no line either server prints at start-up is near 64 KiB
READY_LINES = ("Application startup complete", "The server is fired up and ready to roll")
LONGEST_LINE_CHARS = 64 * 1024


def startup_text(text: str) -> str:
    """The start-up part of a log's head: up to the end of the last 'ready' line when there is one (a log given
    whole, hours of request lines after start-up, is not searched through), without lines longer than any
    server prints (a line of junk). The 60-odd searches of parse_log over a 64 MiB head took half a minute."""
    end = max(text.rfind(marker) for marker in READY_LINES)
    if end >= 0:
        newline = text.find("\n", end)
        text = text if newline < 0 else text[:newline + 1]
    if len(text) > LONGEST_LINE_CHARS:
        lines = text.split("\n")
        if any(len(line) > LONGEST_LINE_CHARS for line in lines):
            text = "\n".join(line for line in lines if len(line) <= LONGEST_LINE_CHARS)
    return text


def read_startup(path: str) -> tuple[str, int]:
    """(the start-up part of the log's head, the file's size)."""
    from ..files import read_head

    text, size = read_head(path, "a log file", LOG_HEAD_BYTES)
    return startup_text(text), size


# no GPU (or TP group's worker) holds 100,000 GiB, and kvplan counts tokens to 2^40: a log past
# either was edited, and reproducing it would only print noise
MOST_GIB = 100_000.0
MOST_COUNT = 2**40


def _implausible(log: VllmLog) -> str | None:
    from dataclasses import fields

    for name in (f.name for f in fields(log) if f.name.endswith("_gib")):
        value = getattr(log, name)
        if isinstance(value, float) and abs(value) > MOST_GIB:
            return f"{value:,.2f} GiB ({name.removesuffix('_gib').replace('_', ' ')}) is more than any GPU holds"
    for name in ("num_gpu_blocks", "gpu_kv_cache_tokens", "concurrency_len", "max_model_len", "max_num_batched_tokens",
                 "max_num_seqs", "block_size", "tp", "pp", "dp", "num_redundant_experts", "refused_estimate",
                 "speculative_tokens", "draft_tp",
                 "warmup_kv_blocks", "extended_kv_blocks", "concurrency"):
        value = getattr(log, name)
        if value is not None and value > MOST_COUNT:
            return f"{value:,} ({name.replace('_', ' ')}) is above the limit of 2^40"
    if log.version and re.search(r"\d{7,}", log.version.split("+")[0]):  # no release number has 7 digits
        return f"the version it prints, {_shown(log.version)!r}, is not a vLLM release"
    for mode, counts in log.cuda_graph_modes.items():
        if max(counts) > MOST_COUNT:
            return f"{max(counts):,} (CUDA graphs of {mode}) is above the limit of 2^40"
    return None


def _shown(text: str) -> str:
    """A figure as a message quotes it: a few characters of one with thousands."""
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"


def read_log(path: str) -> VllmLog:
    text, size = read_startup(path)
    try:
        log = parse_log(text, path)
    except _NotANumber as exc:
        at = text.find(str(exc))
        start = text.rfind("\n", 0, at) + 1
        before = text[start:at].strip()
        before = before if len(before) <= 40 else before[-40:].split(" ", 1)[-1]  # the words before the figure
        where = f"line {text.count(chr(10), 0, at) + 1}, after {before!r}: " if at >= 0 else ""
        raise UsageError(f"{path}: {where}a figure vLLM prints as a number reads {_shown(str(exc))!r} here",
                         "the log was edited or cut mid-line: give the server's log as it printed it") from None
    wrong = _implausible(log)
    if wrong:
        raise UsageError(f"{path}: {wrong}", "the log was edited: give the server's log as it printed it")
    if size > LOG_HEAD_BYTES:
        log.head_only_bytes = LOG_HEAD_BYTES
    return log


__all__ = ["VllmLog", "parse_log", "read_log"]
