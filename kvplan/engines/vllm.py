"""vLLM v1's own KV pool accounting, reproduced without torch or vllm, per release.

Given the KV memory one GPU may fill (vLLM's "Available KV cache memory") and
max_model_len, this computes the number of blocks vLLM allocates and what it
logs at start-up. The rules that differ between releases live in
kvplan.engines.vllm_rules (one frozen object per release, each field citing
vLLM's file and function); this module applies them:

- Page = bytes of one block of one layer. Full or sliding attention:
  block x kv_heads x per-head bytes of the KV dtype (auto: the serving dtype;
  fp8: 1 B; *_per_token_head: + one fp32 scale for K and for V; nvfp4: packed
  fp4 + fp8 scale per 16). MLA: ONE tensor of block x (kv_lora_rank + rope) x
  dtype bytes; fp8_ds_mla (DeepSeek-V3.2) 656 B/token. V3.2 indexer keys:
  block x (index_head_dim + index_head_dim / 128 x 4) bytes. Mamba / Gated
  DeltaNet: the whole conv + SSM state of one sequence, in the serving dtype
  (a float32 checkpoint is served in bf16), Nemotron-H's (0.13+) and
  Qwen3.5's (0.17+) SSM in the config's dtype (float32).
- KV heads per rank = max(1, kv_heads // tp); MLA latent and indexer are
  replicated; Mamba-2 groups are padded to TP (kvplan.capacity.shard).
- Worst case per request and layer: full cdiv(max_len, block) pages; sliding
  window cdiv(min(W - 1 + in-flight tokens, max_len), block) + 1 pages;
  Mamba one page, or with prefix caching ("align" mode: --enable-prefix-caching
  from 0.15, the hybrid default from 0.26) 2 (Mamba-2 from 0.32, Gated DeltaNet
  from 0.33: 3, a prefill checkpoint). The block: the release's default (16;
  64 from 0.34) unless --block-size or a backend says otherwise.
- Groups: one when every layer has the same spec; one with summed pages when
  all layers need the same token slots (V3.2: MLA + indexer); otherwise page
  sizes are unified and layers split into groups of equal size (the smallest
  count per spec; 0.12+ the largest when the counts are within 1.25x, 0.18+ 1.5x).
- Hybrid attention + Mamba: the attention block grows until a page holds the
  Mamba state (aligned to 16; 0.20+ to max(16, block); 0.33 GDN to 64); the
  Mamba page is padded to it. MLA + KDA (Kimi-Linear): the MLA block is aligned
  (64 until 0.19; the MLA backend's kernel block from 0.20; >= 128 from 0.27),
  KDA's recurrent state is float32.
- Inkling (vllm_inkling.py): each layer's short-conv state is a sliding window of
  the conv kernel's tokens (a SlidingWindowSpec, bf16), grouped as sliding layers
  are; the model is not a hybrid, so no Mamba alignment or pages. Its MTP depths
  (0.33+) are decoder layers of the same kinds, and with two or more depths every
  sliding spec keeps num_speculative_tokens - 1 more tokens (multi_module_retained,
  as for any family with windows under a multi-module MTP draft, 0.28+).
- num_blocks = available // (page x layers per group), the minimum over PP
  stages. Concurrency = num_blocks / (sum over groups of the pages one
  max_model_len request needs). Tokens: num_blocks // groups x block until
  0.20.0; int(concurrency x max_model_len) from 0.20.1.
- Speculative decoding (vllm_speculative.py): an MTP draft's layers, or a separate
  draft checkpoint's (EAGLE head, draft model), join the pool after the target's
  (last PP stage); the draft tokens widen Gated DeltaNet conv states and, from
  0.15, add a state page each to a request.
- Start check: every layer's worst case must fit (0.11-0.13); 0.14-0.18 the
  first group's blocks x bytes per block; 0.19+ the blocks of all groups x
  bytes per block; 0.29+ in memory less one block (the null block).

Not modelled: token eviction, compressed sparse attention and Quest (vLLM
allocates every token), speculative decoding's draft and lookahead slots (a
scheduling reserve vLLM's planner leaves out too; vllm_decode counts them), DFlash /
DSpark drafts and a draft at its own TP size (vllm_speculative.py), DCP/PCP, 0.29+'s
block-outermost packing of groups with mixed page sizes, non-Hopper backends
(Blackwell MLA uses other block sizes; only 0.34's sparse MLA fp8 on Blackwell, a
plain fp8 latent, is modelled), FA4's 64-token kernel page for fp8 KV at
head size 512 on Hopper (0.31+, Gemma 4: a note), FlashKDA's prefill checkpoint
(a KDA config with gate_lower_bound).
"""

from __future__ import annotations

import math
from dataclasses import field, replace

from .._record import record
from ..capacity.shard import shard, stage_bounds
from ..core.layers import TokenCache
from ..configs.nemotron_nas import linear_replacement
from ..configs.zaya_layout import MEGATRON_NOTE
from ..core.model import ModelSpec
from ..core.storage import BF16, FP16, FP32, Storage
from ..core.transform import map_layers
from ..errors import PlanError, UsageError
from ..units import GIB, cdiv
from .vllm_inkling import (check_inkling, conv_state_geometry, conv_state_token_bytes, is_inkling,
                           with_inkling_draft)
from .vllm_rules import LATEST, TP_REPLICATED, WINDOW_ONE_LESS, VllmRules

DEFAULT_BLOCK_TOKENS = 16  # CacheConfig.DEFAULT_BLOCK_SIZE until 0.33 (0.34: 64; VllmRules.default_block_tokens)
KERNEL_BLOCK_ALIGN_TOKENS = 16  # FlashAttention / FlashInfer kernel block: a multiple of 16
FP8_DS_MLA_BYTES_PER_TOKEN = 656  # V3.2: 512 fp8 latent + 4 x 4 B fp32 scales + 64 bf16 rope
PER_TOKEN_HEAD_SCALE_BYTES = 4  # one fp32 scale per token, head and side (K, V)
MAMBA = "mamba"
SHORT_CONV = "short_conv"  # a MambaSpec every TP rank holds whole (Qwen4-Exp's PLE conv): never grouped with MAMBA
FULL_LIKE = ("full", "mla", "indexer")
VERSION_MODELLED = LATEST.version

# kept for callers of the 0.11-era API
MAX_NUM_BATCHED_TOKENS_LARGE_GPU = 8192
MAX_NUM_BATCHED_TOKENS_SMALL_GPU = 2048


# Only Qwen's Gated DeltaNet layers export prefill checkpoints (0.33 and 0.34 qwen_gdn_linear_attn.py:
# QwenGatedDeltaNetAttention.get_prefill_checkpoint_alignment / get_kv_cache_spec adds
# num_prefill_checkpoint_blocks=1); OLMo-Hybrid's (olmo_gdn_linear_attn.py) inherits
# MambaBase.get_prefill_checkpoint_alignment -> None: 2 pages, no checkpoint alignment.
GDN_CHECKPOINT_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")

# vLLM's KV cache spec dict follows the order the model's Attention / Mamba modules are built in
# (they register in the static forward context in __init__), and its groups follow that dict, so
# the first group, the only one 0.14-0.18's start check sizes (_max_memory_usage_bytes_from_groups:
# kv_cache_groups[0]), is the first module built. Zamba2Model.__init__ (zamba2.py, every modelled
# release) builds its shared Zamba2AttentionDecoderLayer blocks, one Attention per hybrid layer,
# before the loop over layers_block_type that builds the Mamba layers: attention comes first.
ATTENTION_REGISTERED_FIRST = ("zamba2",)


# MiniMax-M3's sparse attention and indexer backends: get_supported_kernel_block_sizes -> [128]
# (one sparse block per KV page; models/minimax_m3/common/*.py, read in 0.24.0, 0.26.0, 0.33.0 and 0.34.0)
MINIMAX_M3_BLOCK = 128


def default_max_num_batched_tokens(gpu=None, rules: VllmRules = LATEST) -> int:
    """vLLM's `vllm serve` default; without a GPU, that of an 80 GiB H100-class one."""
    if gpu is None or not gpu.memory_bytes:
        return rules.max_num_batched_tokens(None)
    return rules.max_num_batched_tokens(gpu.memory_bytes, gpu.name)


def serving_storage(model: ModelSpec) -> Storage:
    """vLLM's dtype "auto": the checkpoint's, a float32 checkpoint downcast to bf16
    (vllm/config/model.py: _resolve_auto_dtype; bf16 is CUDA's first supported dtype)."""
    return FP16 if model.float_dtype in ("float16", "fp16", "half") else BF16


# ---------------------------------------------------------------- KV dtypes

def vllm_kv_dtype_for(cache: TokenCache, rules: VllmRules) -> tuple[str, str | None]:
    """(vLLM --kv-cache-dtype, note) that stores a cache as kvplan's storage says."""
    s = cache.storage
    if s.granularity == "none":
        return "auto", None
    if s.name.startswith("fp8"):
        return ("fp8_e5m2" if s.name == "fp8_e5m2" else "fp8"), None
    if s.granularity == "group" and s.bits in (8, 4):
        name = f"int{s.bits}_per_token_head"
        if name in rules.kv_cache_dtypes:
            return name, (f"--kv-dtype {s.name}: vLLM {rules.version} stores it as {name} "
                          "(one fp32 scale per token and head for K and for V), not kvplan's group layout")
    return "", (f"{s.name}{' (KIVI)' if s.granularity == 'kivi' else ''} is not a vLLM {rules.version} KV dtype: "
                "pages use kvplan's layout with scales")


def attention_token_bytes(heads: int, head_k: int, head_v: int, kv_dtype: str, serving: Storage,
                          rules: VllmRules) -> int:
    """One token of one attention layer (all its KV heads on this rank) in vLLM's page."""
    if kv_dtype not in rules.kv_cache_dtypes and kv_dtype not in ("float32",):
        raise UsageError(f"--kv-cache-dtype {kv_dtype!r} is not a vLLM {rules.version} KV dtype",
                         f"vLLM {rules.version} offers {', '.join(rules.kv_cache_dtypes)}")
    if kv_dtype in ("auto",):
        return heads * (head_k + head_v) * serving.bits // 8
    if kv_dtype in ("bfloat16", "float16"):
        return heads * (head_k + head_v) * 2
    if kv_dtype.startswith("fp8") and kv_dtype != "fp8_per_token_head" and kv_dtype != "fp8_ds_mla":
        return heads * (head_k + head_v)  # per-tensor scales live outside the page
    if kv_dtype in ("int8_per_token_head", "fp8_per_token_head"):  # TritonAttentionBackend.customize_spec
        return heads * (head_k + head_v + 2 * PER_TOKEN_HEAD_SCALE_BYTES)
    if kv_dtype == "int4_per_token_head":
        return heads * (head_k // 2 + head_v // 2 + 2 * PER_TOKEN_HEAD_SCALE_BYTES)
    if kv_dtype == "nvfp4":  # FlashInferBackend.customize_spec: 2 slots of head/2 + head/16 bytes
        return 2 * heads * (head_k // 2 + head_k // 16)
    raise UsageError(f"--kv-cache-dtype {kv_dtype}: kvplan does not model this vLLM KV dtype's page for attention")


def latent_token_bytes(cache: TokenCache, kv_dtype: str, serving: Storage, sparse: bool, rules: VllmRules,
                       blackwell: bool = False) -> int:
    """One token of an MLA latent. sparse: DSA (V3.2-style indexer) layers; blackwell: an SM 10 GPU, where
    0.34's FlashInfer sparse MLA keeps --kv-cache-dtype fp8 as a plain fp8 latent (sparse_mla_sm100_plain_fp8)."""
    if sparse and blackwell and rules.sparse_mla_sm100_plain_fp8 and kv_dtype in ("fp8", "fp8_e4m3"):
        return cache.heads * cache.key_dim
    if sparse and kv_dtype in ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla"):
        kv_dtype = {"auto": rules.v32_auto_kv_dtype}.get(kv_dtype, rules.v32_fp8_kv_dtype)
    if kv_dtype == "fp8_ds_mla":
        return FP8_DS_MLA_BYTES_PER_TOKEN
    width = cache.heads * cache.key_dim
    if kv_dtype == "auto":
        return width * serving.bits // 8
    if kv_dtype in ("bfloat16", "float16"):
        return width * 2
    if kv_dtype in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        return width
    raise UsageError(f"--kv-cache-dtype {kv_dtype}: not an MLA KV dtype kvplan models (auto, fp8, fp8_ds_mla)")


# ---------------------------------------------------------------- specs

@record
class PageSpec:
    """One layer's cache as vLLM's KV cache manager sees it (its KVCacheSpec)."""

    kind: str  # full | sliding | chunked | mla | indexer | mamba | short_conv | state (DeepSeek-V4 compressor
    # state) | ring (CircularBufferSpec, one page per request: DeepSeek-V4.1's compressor, GLM-5-Next's indexer tail)
    block_tokens: int
    token_bytes: int = 0  # one token of this layer (token caches)
    state_bytes: int = 0  # mamba: conv + SSM state of one sequence
    window_tokens: int | None = None  # sliding: W; chunked: the chunk C
    padded_page_bytes: int | None = None
    state_pages: int = 1  # mamba: pages one request holds (align mode: 2 or 3; + the draft tokens, 0.15+)
    speculative_pages: int = 0  # mamba: of those, the draft tokens' (MambaSpec.num_speculative_blocks)
    # Inkling's conv state (vllm_inkling.py): (KV heads on this rank, packed head width). vLLM's SlidingWindowSpec
    # compares them, so two conv states of equal pages but other shapes are two specs (two buckets of groups)
    conv_shape: tuple[int, int] | None = None
    # sliding: SlidingWindowSpec.extra_retained_tokens, the tokens kept below the window (multi-module MTP:
    # num_speculative_tokens - 1, vllm_speculative.multi_module_retained)
    retained_tokens: int = 0

    @property
    def page_bytes(self) -> int:
        if self.padded_page_bytes is not None:
            return self.padded_page_bytes
        if self.kind in (MAMBA, SHORT_CONV):
            return self.state_bytes
        return self.block_tokens * self.token_bytes

    @property
    def label(self) -> str:
        kept = f" + {self.retained_tokens} retained" if self.retained_tokens else ""
        if self.kind == "sliding" and self.conv_shape is not None:
            return f"Inkling conv state, window {self.window_tokens}{kept}"
        if self.kind == "sliding":
            return f"sliding window {self.window_tokens}{kept}"
        if self.kind == "chunked":
            return f"chunked attention {self.window_tokens}"
        if self.kind == "state":
            return f"compressor state, window {self.window_tokens}"
        if self.kind == "ring":
            return f"ring, {self.block_tokens} rows (a page a request)"
        return {"full": "full attention", "mla": "latent (MLA)", "indexer": "indexer keys", MAMBA: "mamba state",
                SHORT_CONV: "short conv state (whole on every rank)"}[self.kind]

    def with_block(self, block_tokens: int) -> "PageSpec":
        """A larger block; an attention page padded before scales with it."""
        padded = self.padded_page_bytes
        if padded is not None and self.kind not in (MAMBA, SHORT_CONV):
            padded = padded * block_tokens // self.block_tokens
        return replace(self, block_tokens=block_tokens, padded_page_bytes=padded)

    def max_memory_bytes(self, max_len: int, in_flight_tokens: int) -> int:
        """Bytes one request of max_len tokens may hold in this layer, at worst.

        in_flight_tokens: tokens scheduled but not yet freed (until 0.25:
        max_num_batched_tokens; 0.26+: x2 under async scheduling)."""
        if self.kind in (MAMBA, SHORT_CONV):
            return self.page_bytes * self.state_pages
        if self.kind == "ring":  # CircularBufferSpec.max_memory_usage_bytes: one page for the request's lifetime
            return self.page_bytes
        if self.kind in ("sliding", "state"):  # state: DeepSeek-V4's compressor state, a window of tokens
            tokens = min(self.window_tokens - 1 + self.retained_tokens + in_flight_tokens, max_len)
            return (cdiv(tokens, self.block_tokens) + 1) * self.page_bytes
        if self.kind == "chunked":  # ChunkedLocalAttentionSpec: one chunk plus the tokens in flight
            return cdiv(min(self.window_tokens + in_flight_tokens, max_len), self.block_tokens) * self.page_bytes
        return cdiv(max_len, self.block_tokens) * self.page_bytes


@record
class CacheGroup:
    """Layers sharing one block table (vLLM's KVCacheGroupSpec)."""

    spec: PageSpec
    layers: tuple[int, ...]  # indices into the list of vLLM cache layers
    padding_layers: int = 0


@record
class VllmPool:
    kv_memory_bytes: int
    max_model_len: int
    max_num_batched_tokens: int
    groups: tuple[CacheGroup, ...]
    uniform_type: bool  # one group whose page is the sum of its layers' pages
    page_bytes: int  # one block of one group (summed over layers when uniform_type)
    num_blocks: int
    blocks_per_request: int
    gpu_kv_cache_tokens: int
    max_concurrency: float
    fits: bool
    estimated_max_model_len: int | None
    notes: tuple[str, ...] = field(default=())
    layer_specs: tuple[PageSpec, ...] = field(default=())  # one per vLLM cache layer, after unification
    version: str = LATEST.version
    one_log_line: bool = True
    kv_cache_dtype: str = "auto"
    bytes_per_block: int = 0  # page x layers per group: what one block costs the pool
    in_flight_tokens: int = 0  # tokens a sliding window may hold beyond W - 1
    gib_text_rounded: bool = True  # 0.14+: "Available KV cache memory" as round(x, 2), not %.2f
    tokens_from_concurrency: bool = True  # 0.20.1+: tokens = int(concurrency x max_model_len)
    max_num_seqs: int = 0  # the --max-num-seqs the start check assumed
    refusal: str | None = None  # why vLLM would refuse to start (fits is False), in one sentence
    # 0.34+'s extensible KV cache, where the pool was predicted from the GPU: the reserved capacity the
    # "Available KV cache memory" line prints (kv_memory_bytes is then the pool measured after warmup)
    reserved_bytes: int | None = None

    @property
    def block_size(self) -> int:
        return min(g.spec.block_tokens for g in self.groups)

    @property
    def concurrency_text(self) -> str:
        return f"{self.max_concurrency:.2f}x"

    def log_lines(self) -> list[str]:
        """The lines vLLM prints, formatted as this release formats them."""
        size = f"GPU KV cache size: {self.gpu_kv_cache_tokens:,} tokens"
        conc = f"Maximum concurrency for {self.max_model_len:,} tokens per request: {self.concurrency_text}"
        gib = (self.reserved_bytes if self.reserved_bytes is not None else self.kv_memory_bytes) / GIB
        head = f"Available KV cache memory: {round(gib, 2) if self.gib_text_rounded else f'{gib:.2f}'} GiB"
        if self.one_log_line:
            return [head, f"{size}, {conc}"]
        return [head, size, conc]


def is_deepseek_v4(model: ModelSpec) -> bool:
    """DeepSeek-V4's layers (a compressor state): vLLM pools them by their own rules (vllm_dsv4.py)."""
    return any(layer.state is not None and layer.state.kind == "compressor" for layer in model.layers)


KIMI_K3 = "KimiK3ForConditionalGeneration"


def kimi_k3_checkpoints(model: ModelSpec, rules: VllmRules, gpu: str | None, notes: list[str]) -> bool:
    """Whether Kimi K3's KDA layers keep a prefill-checkpoint state page (0.33 and 0.34 models/kimi_k3/nvidia/kda.py:
    get_kv_cache_spec sets num_prefill_checkpoint_blocks when resolve_kda_prefill_backend picks FlashKDA, which
    it does by default on SM 9, 10 and 12 for a bf16 model with a bounded gate). False for other models."""
    if model.architecture != KIMI_K3:
        return False
    from .vllm_dsv4 import require_read

    require_read("Kimi K3", rules, "kvplan read Kimi K3's KDA pages in vLLM 0.33 and 0.34 only")
    from ..capacity.gpus import CUDA_CAPABILITY

    capability = CUDA_CAPABILITY.get(gpu or "")
    if capability is None:
        notes.append("Kimi K3: no known GPU given; vLLM's FlashKDA prefill (SM 9, 10, 12) is assumed, with its "
                     "prefill-checkpoint state page")
        return True
    if capability[0] not in (9, 10, 12):
        notes.append(f"Kimi K3: FlashKDA does not run on SM {capability[0]}.{capability[1]}; vLLM's Triton KDA "
                     "prefill keeps no checkpoint page")
        return False
    return True


# Families whose vLLM pool is a packed slab kvplan models in a module of its own, by GPU: family -> (label,
# module, pool function)
PACKED_POOLS = {
    "deepseek_v41_text": ("DeepSeek-V4.1", "vllm_dsv41", "simulate_dsv41"),
    "glm5_next_text": ("GLM-5-Next", "vllm_glm5next", "simulate_glm5next"),
    "qwen4_exp_text": ("Qwen4-Exp", "vllm_qwen4exp", "simulate_qwen4exp"),
    "qwen3_8_flash_next_text": ("Qwen4-Exp", "vllm_qwen4exp", "simulate_qwen4exp"),
    "step5": ("Step-5", "vllm_step5", "simulate_step5"),
}


def check_modelled(model: ModelSpec) -> None:
    """Refuse what kvplan knows vLLM sizes by rules it has not modelled: `vllm serve` flags for DeepSeek-V4."""
    if is_deepseek_v4(model):
        raise UsageError(
            f"--emit vllm: the flags for {model.name} are not modelled (vLLM's DeepSeek-V4 pool is: use --engine vllm)",
            "drop --emit vllm")


def engine_model(model: ModelSpec, rules: VllmRules) -> tuple[ModelSpec, list[str]]:
    """The model with the engine's own state dtypes: conv and SSM state in the
    serving dtype (MambaStateDtypeCalculator with mamba_cache_dtype 'auto'),
    Nemotron-H's SSM state in the config's mamba_ssm_cache_dtype, else float16
    (0.13-0.19) or float32 (0.20 on); Qwen3.5's (0.17 on) in the config's
    mamba_ssm_dtype (float32 in the published checkpoints).

    A function of (model, rules) alone, kept on the model (ModelSpec.memo, one entry per release asked): a sweep
    or the release grid plans one model at many sizes, and rebuilding a hybrid's layers each time was a third of
    simulate's time in tests/test_vllm_grid.py; the same object back also lets shard's memo on it answer."""
    fixed, notes = model.memo(("vllm engine_model", rules), lambda: _engine_model(model, rules))
    return fixed, list(notes)


def _engine_model(model: ModelSpec, rules: VllmRules) -> tuple[ModelSpec, tuple[str, ...]]:
    serving = serving_storage(model)
    checkpoint = FP32 if model.float_dtype in ("float32", "fp32") else serving
    notes: list[str] = []
    nemotron_default = {"float32": FP32, "float16": FP16}.get(rules.nemotron_h_ssm_dtype or "")
    nemotron = model.model_type == "nemotron_h" and nemotron_default is not None
    qwen35 = model.model_type.startswith("qwen3_5") and rules.qwen35_config_ssm_dtype
    changed = set()

    def fix(_i, layer):
        state = layer.state
        if state is None:
            return layer
        ssm = serving
        if state.kind == "kda":  # MambaStateDtypeCalculator.kda_state_dtype: the recurrent state is float32
            ssm = FP32           # in every release (0.32+: mamba_ssm_cache_dtype 'auto' -> float32)
        elif nemotron:
            named = state.ssm_storage if state.ssm_storage not in (checkpoint, serving) else None
            ssm = named or nemotron_default
        elif qwen35:  # Qwen3_5ForConditionalGenerationConfig: mamba_ssm_cache_dtype = hf_text_config.mamba_ssm_dtype
            ssm = state.ssm_storage if state.ssm_storage not in (checkpoint, serving) else serving
        new = replace(state, conv_storage=serving, ssm_storage=ssm)
        if new != state:
            changed.add((state.conv_storage.name, state.ssm_storage.name, serving.name, ssm.name))
        return replace(layer, state=new)

    out = map_layers(model, fix) if any(layer.state is not None for layer in model.layers) else model
    for old_conv, old_ssm, conv, ssm in sorted(changed):
        notes.append(f"state dtype: vLLM {rules.version} keeps the conv state in {conv} and the SSM state in {ssm} "
                     f"(the config reads {old_conv}/{old_ssm})")
    if nemotron:
        notes.append(f"Nemotron-H: vLLM {rules.version} keeps the SSM state in {rules.nemotron_h_ssm_dtype} unless "
                     "the config's mamba_ssm_cache_dtype says otherwise (--mamba-ssm-cache-dtype overrides)")
        if rules.nemotron_h_ssm_dtype == "float16":
            # 0.13-0.19 read getattr(hf_config, "mamba_ssm_cache_dtype", "float16"): which config class loaded
            # the checkpoint decides it when config.json does not name the field, and kvplan cannot tell
            notes.append("uncertain: when config.json does not name mamba_ssm_cache_dtype, vLLM "
                         f"{rules.version} gets float16 from the checkpoint's remote-code config class and float32 "
                         "from transformers' NemotronHConfig (kvplan reads the latter's default, float32): "
                         "pass --set mamba_ssm_cache_dtype=float16 for the former")
    if qwen35:
        notes.append(f"Qwen3.5: vLLM {rules.version} keeps the SSM state in the config's mamba_ssm_dtype "
                     "(--mamba-ssm-cache-dtype overrides)")
    return out, tuple(notes)


LAYER_SPECS_KEPT = 64  # argument sets of layer_specs kept a model


def layer_specs(model: ModelSpec, block_tokens: int | None, max_model_len: int, hybrid_manager: bool = True,
                rules: VllmRules = LATEST, kv_cache_dtype: str | None = None, prefix_caching: bool | None = None,
                *, local_as_full: bool = True, num_speculative_tokens: int = 0, kda_checkpoints: bool = False,
                capability: tuple[int, int] | None = None) -> tuple[list[tuple[int, PageSpec]], list[str], str]:
    """_layer_specs (below) of these arguments, kept on the model: a function of them alone, and a plan at several
    memory sizes (a sweep, the release grid) asks for the same specs each time. At most LAYER_SPECS_KEPT
    argument sets a model; past that the cache starts over."""
    args = (block_tokens, max_model_len, hybrid_manager, rules, kv_cache_dtype, prefix_caching, local_as_full,
            num_speculative_tokens, kda_checkpoints, capability)
    kept = model.memo("vllm layer_specs", dict)
    if args not in kept:
        if len(kept) >= LAYER_SPECS_KEPT:
            kept.clear()
        specs, notes, dtype = _layer_specs(model, *args)
        kept[args] = tuple(specs), tuple(notes), dtype
    specs, notes, dtype = kept[args]
    return list(specs), list(notes), dtype


def _layer_specs(model: ModelSpec, block_tokens: int | None, max_model_len: int, hybrid_manager: bool,
                 rules: VllmRules, kv_cache_dtype: str | None, prefix_caching: bool | None, local_as_full: bool,
                 num_speculative_tokens: int, kda_checkpoints: bool,
                 capability: tuple[int, int] | None) -> tuple[list[tuple[int, PageSpec]], list[str], str]:
    """(model layer index, spec) for every cache vLLM allocates, notes, and the KV dtype used.

    `model` is one TP rank's (already sharded, engine dtypes applied). A model
    layer may give several specs (V3.2: latent and indexer; Falcon-H1:
    attention and Mamba). Layers that reuse another layer's cache give none.
    prefix_caching: vLLM's --enable-prefix-caching (None: the release's default).
    local_as_full=False keeps sliding and chunked layers as the model runner
    makes them even when the hybrid KV cache manager is off (what the start
    check of releases before 0.14 sees, before get_kv_cache_groups unifies them).
    num_speculative_tokens: speculative decoding's draft tokens (a state page each from 0.15).
    capability: the GPU's CUDA compute capability (None: Hopper assumed), where it picks the sparse MLA backend.
    """
    notes: list[str] = []
    serving = serving_storage(model)
    caches = [c for layer in model.layers if layer.shares_cache_of is None for c in layer.caches]
    has_latent = any(c.kind == "latent" for c in caches)
    sparse = has_latent and any(c.kind == "indexer" for c in caches)
    if kv_cache_dtype is None:  # from kvplan's storage of the first K/V or latent cache
        kv_cache_dtype = "auto"
        for c in caches:
            if c.kind in ("attention", "latent"):
                kv_cache_dtype, note = vllm_kv_dtype_for(c, rules)
                if note:
                    notes.append(note)
                break
        if kv_cache_dtype == "auto" and sparse and model.checkpoint_kv_cache == "fp8_ds_mla":
            # Mistral Large 4's dsa.fp8_kv_cache: MistralLarge4ForCausalLM.verify_and_update_config (0.34
            # model_executor/models/config.py) turns auto into fp8_ds_mla on CUDA
            kv_cache_dtype = "fp8_ds_mla"
            notes.append(f"the checkpoint sets dsa.fp8_kv_cache: vLLM {rules.version}'s --kv-cache-dtype auto keeps "
                         "the latent as fp8_ds_mla (656 B a token), as planned here; serve with --kv-cache-dtype "
                         "bfloat16 for a bf16 latent")
    elif kv_cache_dtype not in rules.kv_cache_dtypes:
        raise UsageError(f"--kv-cache-dtype {kv_cache_dtype!r} is not a vLLM {rules.version} KV dtype",
                         f"vLLM {rules.version} offers {', '.join(rules.kv_cache_dtypes)}")
    if rules.block_sizes is not None and block_tokens is not None and block_tokens not in rules.block_sizes:
        raise UsageError(f"--block-size {block_tokens} is not accepted by vLLM {rules.version}",
                         f"use one of {', '.join(map(str, rules.block_sizes))}")
    block = block_tokens or rules.default_block_tokens
    blackwell = capability is not None and capability[0] == 10
    gpu_name = "Blackwell" if blackwell and rules.sparse_mla_sm100_plain_fp8 else "Hopper"
    if has_latent:
        quantized = kv_cache_dtype not in ("auto", "bfloat16", "float16")
        wanted = rules.mla_block_sparse if sparse else (rules.mla_block_fp8 if quantized else rules.mla_block_bf16)
        backend = "FlashMLA sparse" if sparse else ("FlashMLA" if quantized else "FlashAttention MLA")
        if sparse and blackwell and rules.sparse_mla_sm100_plain_fp8:  # every SM 10 sparse backend takes 64
            backend = "FlashInfer sparse MLA" if kv_cache_dtype in ("fp8", "fp8_e4m3") else "sparse MLA"
        forced = rules.mla_block_forced
        if forced == "exact" or (forced == "multiple" and sparse):  # check_and_update_config: any other size -> 64
            if block != wanted:
                notes.append(f"MLA: block size {block} -> {wanted} (vLLM {rules.version} forces it for {backend} "
                             f"on {gpu_name})")
                block = wanted
        elif forced == "multiple":  # 0.11.1-0.17: a multiple of 64 is kept, anything else -> 64
            if block % wanted:
                notes.append(f"MLA: block size {block} -> {wanted} (vLLM {rules.version} forces a multiple of "
                             f"{wanted} for {backend} on {gpu_name})")
                block = wanted
        elif block_tokens is None and block != wanted:
            notes.append(f"MLA: block size {block} -> {wanted} ({backend}'s preferred size on {gpu_name})")
            block = wanted
        elif block_tokens is None:
            notes.append(f"MLA: block size {block} ({backend} on {gpu_name})")
    block_sparse = [c for c in caches if c.policy.read_page_tokens and not c.policy.read_page_meta]
    if block_sparse and block != MINIMAX_M3_BLOCK:  # MiniMax-M3: update_block_size_for_backend
        notes.append(f"MiniMax-M3: block size {block} -> {MINIMAX_M3_BLOCK} (its sparse attention and indexer "
                     f"backends support only {MINIMAX_M3_BLOCK}: models/minimax_m3/common, 0.24-0.34)")
        block = MINIMAX_M3_BLOCK
    if any(c.policy.read_page_tokens != MINIMAX_M3_BLOCK for c in block_sparse):
        notes.append(f"MiniMax-M3: vLLM's kernels select {MINIMAX_M3_BLOCK}-token blocks; a config's other "
                     "sparse block size is not served as written")
    if any(c.policy.budget_fraction or c.policy.budget_tokens or c.policy.compress_ratio
           or (c.policy.read_page_tokens and c.policy.read_page_meta) for c in caches):
        notes.append("eviction, compressed sparse attention and Quest are not vLLM features: every token is allocated")
    if any(c.kind == "latent" and (c.policy.window_tokens or c.policy.chunk_tokens) and not c.policy.compress_ratio
           for c in caches):  # vLLM's MLA specs have no window (MLAAttentionSpec): the latent is kept in full
        notes.append("a sliding window or chunk on MLA layers has no vLLM form: the latent cache is sized in full")
    specs: list[tuple[int, PageSpec]] = []
    inkling = is_inkling(model)
    for i, layer in enumerate(model.layers):
        if layer.shares_cache_of is not None:
            continue
        if inkling and layer.state is not None:  # InklingConvState, built (and registered) before the attention
            heads, packed, kernel = conv_state_geometry(layer)
            specs.append((i, PageSpec("sliding", kernel, token_bytes=conv_state_token_bytes(layer),
                                      window_tokens=kernel, conv_shape=(heads, packed))))
        for cache in layer.caches:
            spec = _token_cache_spec(cache, block, kv_cache_dtype, serving, sparse, rules, blackwell)
            if spec.kind == "sliding" and model.model_type in WINDOW_ONE_LESS:
                spec = replace(spec, window_tokens=spec.window_tokens - 1)
            specs.append((i, spec))
        if layer.state is not None and not inkling:
            specs.append((i, PageSpec(MAMBA, max_model_len, state_bytes=layer.state.bytes)))
    if inkling:
        notes.append("Inkling: each layer's four short-conv states are one sliding-window page of the conv kernel's "
                     "tokens (vLLM's InklingConvState, models/inkling/nvidia/sconv_swa_attn.py), grouped with the "
                     "K/V layers by page size; not a Mamba state")
    if model.model_type in WINDOW_ONE_LESS and any(s.kind == "sliding" for _, s in specs):
        notes.append(WINDOW_ONE_LESS[model.model_type])
    if model.model_type in ATTENTION_REGISTERED_FIRST:  # a stable sort: attention specs first, in layer order
        specs.sort(key=lambda pair: pair[1].kind == MAMBA)
    kinds = {s.kind for _, s in specs}
    attention = [s for _, s in specs if s.kind in ("full", "sliding", "chunked")]
    if not attention:  # Kimi-Linear: MLA + KDA states; vLLM aligns the MLA block to the state (use_mla)
        attention = [s for _, s in specs if s.kind == "mla"]
    if MAMBA in kinds and attention:
        state_kind = next(layer.state.kind for layer in model.layers if layer.state is not None)
        prefix = rules.mamba_align_mode if prefix_caching is None else prefix_caching
        align_mode = prefix and rules.mamba_cache_modes
        # only Qwen's Gated DeltaNet exports prefill checkpoints (OLMo-Hybrid's does not); KDA only Kimi K3's
        # under FlashKDA (kda_checkpoints)
        checkpoints = ((state_kind != "gated_deltanet" or model.model_type in GDN_CHECKPOINT_TYPES)
                       if state_kind != "kda" else kda_checkpoints)
        specs, note = _align_attention_to_mamba(specs, block, block_tokens, attention[0].token_bytes, rules, state_kind,
                                                align_mode, checkpoints, num_speculative_tokens)
        notes.extend(note)
        if prefix and model.model_type in rules.mamba_all_mode_types:
            notes.append(f"not modelled: with prefix caching vLLM {rules.version} uses Mamba cache mode 'all' for "
                         f"{model.model_type} (a state page per block of tokens, the block aligned to the Mamba "
                         f"chunk size); kvplan sizes {'2 pages (align)' if align_mode else 'one page'}")
        elif prefix and not rules.mamba_cache_modes:
            notes.append(f"prefix caching: vLLM {rules.version} turns it off for this hybrid "
                         "(MambaModelConfig: no SupportsMambaPrefixCaching): one state page per request")
    if "chunked" in kinds and not rules.chunked_hybrid_manager:
        hybrid_manager = False
        notes.append(f"vLLM {rules.version} turns the hybrid KV cache manager off for chunked local attention "
                     "(VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0 by default)")
    local = {"sliding", "chunked"} & kinds
    if local_as_full and not hybrid_manager and local and kinds & set(FULL_LIKE):
        specs = [(i, replace(s, kind="full", window_tokens=None) if s.kind in local else s) for i, s in specs]
        notes.append(f"hybrid KV cache manager off: {' and '.join(sorted(local))} layers are sized as full attention")
    if (rules.fp8_head512_kernel_block and kv_cache_dtype.startswith("fp8") and block % rules.fp8_head512_kernel_block
            and any(c.kind == "attention" and c.key_dim == 512 for c in caches)):
        notes.append(f"not modelled: vLLM {rules.version} on Hopper serves fp8 KV at head size 512 with FA4's "
                     f"{rules.fp8_head512_kernel_block}-token kernel page (flash_attn.py "
                     "_get_sm90_fa4_fp8_kv_block_size); kvplan keeps the block manager's sizes")
    if sparse:
        used = {"auto": rules.v32_auto_kv_dtype}.get(kv_cache_dtype, rules.v32_fp8_kv_dtype
                                                     if kv_cache_dtype.startswith("fp8") else kv_cache_dtype)
        if blackwell and rules.sparse_mla_sm100_plain_fp8 and kv_cache_dtype in ("fp8", "fp8_e4m3"):
            used = "plain fp8 (FlashInfer sparse MLA on Blackwell)"
        label = "Mistral Large 4" if model.model_type == "mistral_large_4" else "DeepSeek-V3.2"
        notes.append(f"{label}: --kv-cache-dtype {kv_cache_dtype} is stored as "
                     f"{'bf16' if used == 'auto' else used} in vLLM {rules.version}")
    return specs, notes, kv_cache_dtype


def _token_cache_spec(cache: TokenCache, block: int, kv_dtype: str, serving: Storage, sparse: bool,
                      rules: VllmRules, blackwell: bool = False) -> PageSpec:
    if cache.kind == "indexer":  # fp8 keys + fp32 scale per 128 channels, as stored
        return PageSpec("indexer", block, token_bytes=cache.entry_bytes(1))
    if cache.kind == "latent":
        return PageSpec("mla", block, token_bytes=latent_token_bytes(cache, kv_dtype, serving, sparse, rules,
                                                                     blackwell))
    if kv_dtype == "":  # not a vLLM dtype: kvplan's own layout
        per_token = -(-cache.bytes_per_token().numerator // cache.bytes_per_token().denominator)
    elif kv_dtype == "auto" and cache.storage.granularity == "none":
        per_token = cache.storage.payload_bytes(cache.heads * (cache.key_dim + cache.value_dim))
    else:
        per_token = attention_token_bytes(cache.heads, cache.key_dim, cache.value_dim, kv_dtype, serving, rules)
    window = cache.policy.window_tokens
    if window is not None:
        return PageSpec("sliding", block, token_bytes=per_token, window_tokens=window)
    if cache.policy.chunk_tokens is not None:
        return PageSpec("chunked", block, token_bytes=per_token, window_tokens=cache.policy.chunk_tokens)
    return PageSpec("full", block, token_bytes=per_token)


def _align_attention_to_mamba(specs, block: int, user_block: int | None, attn_token_bytes: int, rules: VllmRules,
                              state_kind: str, align_mode: bool | None = None, checkpoints: bool = True,
                              speculative_tokens: int = 0):
    """Attention page >= Mamba page, the Mamba page padded to it.

    checkpoints: the state layers export prefill checkpoints where the release
    gives their kind some (rules.mamba_align_pages, gdn_checkpoint_align); False:
    MambaSpec's own 2 pages in 'align' mode and no extra alignment.

    0.11-0.19 HybridAttentionMambaModelConfig: block = 16 x cdiv(mamba, 16 x token page).
    0.20+ Platform._align_hybrid_block_size: the alignment is max(16, block size).
    With prefix caching (hybrids from 0.26: 'align' mode) the Mamba block equals
    the attention block and one request holds 2 (Mamba-2 from 0.32: 3) state pages."""
    mamba_page = max(s.page_bytes for _, s in specs if s.kind == MAMBA)
    align_mode = rules.mamba_align_mode if align_mode is None else align_mode
    if rules.hybrid_align_to_block:
        align = max(KERNEL_BLOCK_ALIGN_TOKENS, block)
    else:
        align = KERNEL_BLOCK_ALIGN_TOKENS
    mla = any(s.kind == "mla" for _, s in specs)
    if mla and rules.mla_hybrid_align:
        # until 0.19 HybridAttentionMambaModelConfig: 64 for MLA (not max'd with the block: FlashMLA's 64 or
        # FLASH_ATTN_MLA's 16 are both below); 0.27+ _align_hybrid_block_size: max(alignment, 128)
        align = rules.mla_hybrid_align if not rules.hybrid_align_to_block else max(align, rules.mla_hybrid_align)
    if align_mode and checkpoints and state_kind == "gated_deltanet" and rules.gdn_checkpoint_align:
        align = math.lcm(align, rules.gdn_checkpoint_align)  # 0.33: checkpoints land on block boundaries
    needed = align * cdiv(mamba_page, align * attn_token_bytes)
    needed = KERNEL_BLOCK_ALIGN_TOKENS * cdiv(needed, KERNEL_BLOCK_ALIGN_TOKENS)
    new_block = max(block, needed)
    attn_page = new_block * attn_token_bytes
    pages = (rules.mamba_pages(state_kind) if checkpoints else 2) if align_mode else 1
    drafts = speculative_tokens if rules.mamba_speculative_blocks else 0  # MambaSpec.num_speculative_blocks
    pages += drafts
    out = []
    for i, s in specs:
        if s.kind == MAMBA:
            out.append((i, replace(s, padded_page_bytes=attn_page, state_pages=pages, speculative_pages=drafts,
                                   block_tokens=new_block if align_mode else s.block_tokens)))
        elif s.kind != "indexer":
            out.append((i, s.with_block(new_block)))
        else:
            out.append((i, s))
    pad_pct = 100 * (attn_page - mamba_page) / mamba_page if mamba_page else 0.0  # an empty state: nothing to pad
    notes = [f"hybrid Mamba: attention block {block} -> {new_block} tokens so a page ({attn_page:,} B) holds the "
             f"Mamba state ({mamba_page:,} B); Mamba page padded by {pad_pct:.2f}%"]
    if align_mode:
        why = f"vLLM {rules.version} default for hybrids" if rules.mamba_align_mode else "--enable-prefix-caching"
        notes.append(f"prefix caching on ({why}): Mamba cache mode 'align', {pages} state pages per request"
                     + (f" ({speculative_tokens} for the draft tokens)" if speculative_tokens and
                        rules.mamba_speculative_blocks else ""))
    elif speculative_tokens and rules.mamba_speculative_blocks:
        notes.append(f"speculative decoding: {pages} state pages per request (1 + {speculative_tokens} draft tokens)")
    return out, notes


def _uniform_type(specs: list[PageSpec]) -> bool:
    """UniformTypeKVCacheSpecs.is_uniform_type: one block size and one kind of allocation."""
    first = specs[0]
    if len({s.block_tokens for s in specs}) > 1:
        return False
    if first.kind in FULL_LIKE:
        return all(s.kind in FULL_LIKE for s in specs)
    if first.kind in ("sliding", "chunked"):
        return all(s.kind == first.kind and s.window_tokens == first.window_tokens for s in specs)
    return all(s.kind == MAMBA and s.state_pages == first.state_pages for s in specs)


def _unify_page_sizes(specs: list[PageSpec]) -> list[PageSpec]:
    largest = max(s.page_bytes for s in specs)
    out = []
    for s in specs:
        if s.page_bytes == largest:
            out.append(s)
            continue
        if s.kind == MAMBA:
            out.append(replace(s, padded_page_bytes=largest))
            continue
        if largest % s.page_bytes:
            raise PlanError(
                f"vLLM cannot unify page sizes: {s.label} page {s.page_bytes:,} B does not divide {largest:,} B",
                "vLLM raises NotImplementedError for this layer mix",
            )
        out.append(s.with_block(s.block_tokens * (largest // s.page_bytes)))
    return out


def kv_cache_groups(specs: list[PageSpec], rules: VllmRules = LATEST) -> tuple[tuple[CacheGroup, ...], bool]:
    """(groups, uniform_type) as vLLM's get_kv_cache_groups forms them.

    rules.group_close_ratio: layers per group is the largest count of one spec
    when it is below close_ratio x the smallest (0.18+: 1.5; 0.12-0.17: 1.25),
    else the smallest (0.11: always the smallest, close_ratio 0).
    rules.unify_page_sizes: pages that differ are unified (0.12+) or refused."""
    everyone = tuple(range(len(specs)))
    if all(s == specs[0] for s in specs):
        return (CacheGroup(specs[0], everyone),), False
    if _uniform_type(specs):
        return (CacheGroup(specs[0], everyone),), True
    if not rules.unify_page_sizes and len({s.page_bytes for s in specs}) > 1:
        raise PlanError(f"vLLM {rules.version} cannot group layers whose pages differ "
                        f"({', '.join(sorted({f'{s.kind} {s.page_bytes:,} B' for s in specs}))})",
                        "its get_kv_cache_groups raises NotImplementedError; page sizes are unified from 0.12")
    specs = _unify_page_sizes(specs)
    by_spec: dict[PageSpec, list[int]] = {}
    for index, spec in enumerate(specs):
        by_spec.setdefault(spec, []).append(index)
    counts = [len(v) for v in by_spec.values()]
    # the "1" of an n:1 pattern, unless the counts are close (12 sliding + 13 full -> 13 from 0.12)
    group_size = max(counts) if max(counts) < min(counts) * rules.group_close_ratio else min(counts)
    split = []
    for spec, layers in by_spec.items():
        n_groups = cdiv(len(layers), group_size)
        split.extend((spec, tuple(layers[g::n_groups])) for g in range(n_groups))  # [g::n] balances PP stages
    width = max(len(layers) for _, layers in split)  # layers per group; shorter groups are padded
    return tuple(CacheGroup(spec, layers, width - len(layers)) for spec, layers in split), False


def _stage_block_bytes(groups, uniform_type: bool, specs, stage_layers: set[int]) -> int:
    """Bytes one block costs a stage's pool (0: the stage holds no cache)."""
    if uniform_type:
        return sum(specs[i].page_bytes for i in groups[0].layers if i in stage_layers)
    per_group = max(sum(1 for i in g.layers if i in stage_layers) for g in groups)
    return groups[0].spec.page_bytes * per_group


def _blocks_per_request(groups, uniform_type: bool, specs, max_len: int, in_flight: int) -> int:
    if uniform_type:
        return max(cdiv(specs[i].max_memory_bytes(max_len, in_flight), specs[i].page_bytes) for i in groups[0].layers)
    return sum(cdiv(g.spec.max_memory_bytes(max_len, in_flight), g.spec.page_bytes) for g in groups)


def in_flight_tokens(rules: VllmRules, mnbt: int, pp: int) -> int:
    """Tokens scheduled but not yet freed (0.26+ VllmConfig.max_in_flight_tokens): max_concurrent_batches
    (2 under async scheduling; with PP the PP size until 0.33, where the V1 model runner turns async
    scheduling off, and PP + 1 from 0.34, where it stays on) x max_num_batched_tokens."""
    if rules.sliding_in_flight_batches == 1:
        return mnbt
    if pp == 1:
        return mnbt * rules.sliding_in_flight_batches
    return mnbt * (pp + 1 if rules.async_scheduling_with_pp else pp)


def longest_fitting(fits, max_model_len: int) -> int:
    """The longest max_model_len below max_model_len that passes `fits` (0: none), vLLM's estimate_max_model_len."""
    lo, hi, best = 1, max_model_len, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def memory_refusal(max_model_len: int, estimate: int) -> str:
    return (f"one {max_model_len:,}-token request needs more than the KV memory; the estimated maximum "
            f"model length is {estimate:,}")


def simulate(model: ModelSpec, *, kv_memory_bytes: int, max_model_len: int, block_tokens: int | None = None,
             tp: int = 1, pp: int = 1, max_num_batched_tokens: int | None = None,
             hybrid_manager: bool = True, rules: VllmRules = LATEST, kv_cache_dtype: str | None = None,
             allow_long_max_model_len: bool = False, prefix_caching: bool | None = None,
             max_num_seqs: int | None = None, enforce_eager: bool = False, draft_layers: int = 0,
             num_speculative_tokens: int = 0, draft_model: ModelSpec | None = None,
             gpu: str | None = None, release: str | None = None) -> VllmPool:
    """vLLM's KV cache config for `model` on one (tp, pp) replica under `rules`.

    kv_memory_bytes: memory for the KV cache per GPU. max_num_batched_tokens:
    the scheduler's token budget per step (default: `vllm serve` on an
    H100-class GPU). kv_cache_dtype: vLLM's --kv-cache-dtype (default: from
    the model's cache storage). max_num_seqs: vLLM's --max-num-seqs (default:
    the release's, for an H100-class GPU); enforce_eager: no CUDA graphs.
    draft_layers: speculative decoding's MTP draft layers in the pool (kvplan.engines.vllm_speculative).
    num_speculative_tokens: its draft tokens per step (any method): they widen Gated DeltaNet conv
    states and, from 0.15, add as many state pages to each request. draft_model: a separate draft
    checkpoint (EAGLE head, small LLM) whose layers join the pool (not with draft_layers). gpu: the
    catalog name of the GPU, where its backends decide the layout (DeepSeek-V4.1, GLM-5-Next, Kimi K3).
    release: the vLLM release asked for (default rules.version): its registry says whether pp > 1 is refused
    (kvplan.engines.vllm_pp).
    """
    from ..configs.quant_mlx import refusal

    if mlx := refusal(model, "vLLM"):
        raise UsageError(mlx, "plan the original (non-MLX) checkpoint, or use --engine ideal")
    if kv_memory_bytes <= 0:
        raise PlanError("vLLM: no memory left for the KV cache", "raise --mem-util or give --kv-memory")
    if max_model_len <= 0:
        raise UsageError("--max-model-len must be positive")
    mnbt = max_num_batched_tokens or rules.max_num_batched_tokens(None)
    notes: list[str] = []
    if gpu is not None:  # Turing / Volta: float16 serving, Triton attention, the refusals (vllm_sm7.py)
        from ..capacity.gpus import CUDA_CAPABILITY
        from .vllm_sm7 import check_pre_ampere

        kv_caches = [c for layer in model.layers for c in layer.caches if c.kind in ("attention", "latent")]
        check_pre_ampere(model, CUDA_CAPABILITY.get(gpu), release or rules.version,
                         kv_cache_dtype or (vllm_kv_dtype_for(kv_caches[0], rules)[0] if kv_caches else None),
                         any(c.kind == "latent" for c in kv_caches), notes)
    if pp > 1:  # vLLM refuses PP for a class without SupportsPP (config/model.py verify_with_parallel_config)
        from .vllm_pp import check_pp

        check_pp(model.registry_names, release or rules.version, pp, tp, notes)
    limit = model.max_context_tokens
    if limit and max_model_len > limit:
        if not allow_long_max_model_len:
            raise UsageError(
                f"vLLM refuses --max-model-len {max_model_len:,}: above {model.name}'s maximum of {limit:,} tokens "
                "(max_position_embeddings) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                "lower --max-model-len, or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in kvplan's environment as in vLLM's")
        notes.append(f"max_model_len {max_model_len:,} exceeds the model's {limit:,}: "
                     "vLLM starts only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    if model.family == "kolibri1_1":
        raise UsageError(f"vLLM {rules.version} cannot serve Kolibri 1.1: no release has its model, and the Transformers backend "
                         "it falls back to fails on the indexed layers (they need a 4D mask the backend never passes)",
                         "plan it with --engine ideal")
    if replaced := linear_replacement(model):  # DeciLMDecoderLayer (nemotron_nas.py) has no replace_with_linear branch
        raise UsageError(f"vLLM cannot serve {model.name}: {replaced}", "plan it with --engine ideal")
    if model.model_type == "cohere" and tp > 1 and (refusal := cohere_qk_norm_refusal(model, tp)):
        raise UsageError(refusal, "use a --tp no larger than its KV heads (with --pp for more GPUs)")
    if model.family == "dory" and tp > 1:
        raise UsageError("vLLM serves Dory at TP 1 only (model_executor/models/dory.py)", "use --tp 1")
    if draft_model is not None and (draft_layers or is_deepseek_v4(model)):
        raise UsageError("vLLM: a separate draft model is modelled without MTP layers, and not for DeepSeek-V4",
                         "give either --mtp or --draft-model")
    if model.family in PACKED_POOLS:
        import importlib

        from ..capacity.gpus import CUDA_CAPABILITY

        label, module, function = PACKED_POOLS[model.family]
        pool_of = getattr(importlib.import_module(f".{module}", __package__), function)
        if draft_model is not None:
            raise UsageError(f"vLLM: a separate draft model is not modelled for {label}", "drop the draft")
        if gpu is not None and gpu not in CUDA_CAPABILITY:
            raise UsageError(f"--engine vllm: {gpu} is not a CUDA card, and kvplan has read vLLM's {label} layout for "
                             "CUDA compute capabilities only", "give an NVIDIA --gpu (h100, h200, b200, ...)")
        seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
        return pool_of(model, kv_memory_bytes=kv_memory_bytes, max_model_len=max_model_len, block_tokens=block_tokens,
                       tp=tp, pp=pp, mnbt=mnbt, rules=rules, kv_cache_dtype=kv_cache_dtype, max_num_seqs=seqs,
                       notes=notes, capability=CUDA_CAPABILITY.get(gpu or ""), prefix_caching=prefix_caching,
                       draft_layers=draft_layers, num_speculative_tokens=num_speculative_tokens)
    retained = 0
    if draft_layers:  # vLLM refuses draft tokens n_predict does not divide; multi-module MTP keeps more tokens
        from .vllm_speculative import check_draft_tokens, multi_module_retained

        check_draft_tokens(model, num_speculative_tokens)
        retained = multi_module_retained(model, num_speculative_tokens, rules)
    if is_deepseek_v4(model):
        from .vllm_dsv4 import simulate_dsv4

        seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
        return simulate_dsv4(model, kv_memory_bytes=kv_memory_bytes, max_model_len=max_model_len,
                             block_tokens=block_tokens, pp=pp, mnbt=mnbt, rules=rules,
                             kv_cache_dtype=kv_cache_dtype, max_num_seqs=seqs, notes=notes,
                             draft_layers=draft_layers, retained_tokens=retained)
    inkling = is_inkling(model)
    if inkling:
        check_inkling(model, tp, rules, draft_layers, draft_model is not None, num_speculative_tokens)
    if model.model_type == "zaya" and any(n.startswith(MEGATRON_NOTE) for n in model.notes):
        raise UsageError(f"vLLM 0.34 cannot load {model.name}: its config is Megatron-style (zaya_layers), and vLLM "
                         "builds transformers' ZayaConfig, which reads no zaya_layers (and refuses rope_scaling false), and "
                         "loads transformers' weight names only (zaya.py load_weights: no self_attn.qkv.*, zaya_block.*)",
                         "use --engine sglang (0.5.23 reads this layout) or plan without --engine")
    if model.model_type == "zaya" and (draft_layers or draft_model is not None or num_speculative_tokens):
        raise UsageError(f"vLLM cannot serve {model.name} with speculative decoding: ZayaForCausalLM raises "
                         "NotImplementedError for any num_speculative_tokens (vLLM 0.34 zaya.py)",
                         "drop the draft (--mtp, --draft-model, --num-speculative-tokens)")
    target_layers = model.num_layers
    if inkling and draft_layers:  # its MTP depths are Inkling decoder layers, with conv states
        model, spec_notes = with_inkling_draft(model, draft_layers, num_speculative_tokens)
        notes += spec_notes
    elif draft_layers or draft_model is not None or num_speculative_tokens:
        from .vllm_speculative import with_speculation  # the draft's layers, its tokens' rows

        model, spec_notes = with_speculation(model, rules, draft_layers, draft_model, num_speculative_tokens)
        notes += spec_notes
    fixed, state_notes = engine_model(model, rules)
    if model.model_type in TP_REPLICATED and tp > 1:
        notes.append(TP_REPLICATED[model.model_type])
    ranked = shard(fixed, 1 if model.model_type in TP_REPLICATED else tp, 1)[0]  # one TP rank's, all layers
    kda_checkpoints = kimi_k3_checkpoints(model, rules, gpu, notes)
    from ..capacity.gpus import CUDA_CAPABILITY

    capability = CUDA_CAPABILITY.get(gpu or "")
    pairs, spec_notes, kv_dtype = layer_specs(ranked, block_tokens, max_model_len, hybrid_manager, rules,
                                              kv_cache_dtype, prefix_caching,
                                              num_speculative_tokens=num_speculative_tokens,
                                              kda_checkpoints=kda_checkpoints, capability=capability)
    notes += state_notes + spec_notes
    if retained and any(s.kind == "sliding" for _, s in pairs):  # tagged before grouping (multi_module_retained)
        from .vllm_speculative import retained_note

        pairs = [(i, replace(s, retained_tokens=retained) if s.kind == "sliding" else s) for i, s in pairs]
        notes.append(retained_note(model, retained, rules))
    if not pairs:
        raise PlanError(f"{model.name} has no KV cache: vLLM allocates one null block")
    owners = [i for i, _ in pairs]
    specs = [s for _, s in pairs]
    groups, uniform_type = kv_cache_groups(specs, rules)
    if draft_layers:  # the scheduler block: the LCM of the groups' block sizes (kv_cache_utils.py)
        from .vllm_speculative import check_lookahead_block

        check_lookahead_block(model, retained, rules, math.lcm(*(g.spec.block_tokens for g in groups)), prefix_caching)
    grouped_specs = list(specs)  # after page unification
    if not uniform_type:
        for g in groups:
            for i in g.layers:
                grouped_specs[i] = g.spec
    bounds = stage_bounds(target_layers, pp)
    bounds[-1] = (bounds[-1][0], model.num_layers)  # the drafter lives on the last stage
    stages = [{k for k, owner in enumerate(owners) if start <= owner < end} for start, end in bounds]
    # 0.26+ VllmConfig.max_in_flight_tokens: max_concurrent_batches (2 under async
    # scheduling; the PP size with PP and the V1 model runner) x max_num_batched_tokens
    in_flight = in_flight_tokens(rules, mnbt, pp)
    stage_bytes = [b for st in stages if (b := _stage_block_bytes(groups, uniform_type, grouped_specs, st))]
    num_blocks = min(kv_memory_bytes // b for b in stage_bytes)
    page = sum(s.page_bytes for s in specs) if uniform_type else groups[0].spec.page_bytes
    per_request = _blocks_per_request(groups, uniform_type, grouped_specs, max_model_len, in_flight)
    concurrency = num_blocks / per_request
    if rules.tokens_from_concurrency:
        tokens = int(concurrency * max_model_len)
    else:
        tokens = num_blocks // len(groups) * min(g.spec.block_tokens for g in groups)

    if rules.start_check == "groups" or (rules.start_check == "first_group" and not uniform_type):
        held_back = 1 if rules.null_block_in_check else 0
        first_only = rules.start_check == "first_group"

        def fits(length: int) -> bool:  # bytes_per_block x blocks a request needs <= available (- the null block)
            if first_only:  # 0.14-0.18 _max_memory_usage_bytes_from_groups: the first group's blocks only
                spec = groups[0].spec
                need = cdiv(spec.max_memory_bytes(length, in_flight), spec.page_bytes)
            else:
                need = _blocks_per_request(groups, uniform_type, grouped_specs, length, in_flight)
            return all(b * need <= kv_memory_bytes - held_back * b for b in stage_bytes)
    else:
        # get_kv_cache_configs runs check_enough_kv_cache_memory on each worker's specs as the model
        # runner made them, BEFORE get_kv_cache_groups -> unify_hybrid_kv_cache_specs turns chunked /
        # sliding layers into full ones (it edits the merged dict, not the worker's): with the hybrid
        # manager off (Llama-4 before 0.14) local layers are checked at their local worst case
        checked = grouped_specs
        if any("sized as full attention" in n for n in spec_notes):
            checked = [s for _, s in layer_specs(ranked, block_tokens, max_model_len, hybrid_manager, rules,
                                                 kv_cache_dtype, prefix_caching, local_as_full=False,
                                                 kda_checkpoints=kda_checkpoints, capability=capability)[0]]

        def fits(length: int) -> bool:  # check_enough_kv_cache_memory: every layer's worst case, summed
            return all(sum(checked[i].max_memory_bytes(length, in_flight) for i in st) <= kv_memory_bytes
                       for st in stages if st)

    ok = fits(max_model_len)
    estimate = None if ok else longest_fitting(fits, max_model_len)
    seqs = max_num_seqs if max_num_seqs is not None else rules.max_num_seqs(None)
    refusal = None
    if not ok:
        refusal = memory_refusal(max_model_len, estimate)
    elif (rules.mamba_seqs_within_blocks and not enforce_eager and any(s.kind == MAMBA for s in specs)
          and seqs > num_blocks):
        ok = False
        refusal = (f"max_num_seqs ({seqs:,}) exceeds the {num_blocks:,} blocks, and with FULL decode CUDA graphs "
                   f"each decode sequence of a model with Mamba layers needs one (CompilationConfig."
                   f"resolve_cudagraph_mode_and_sizes, 0.20+): lower --max-num-seqs to at most {num_blocks:,}, "
                   "give the cache more memory, or pass --enforce-eager")
    return VllmPool(kv_memory_bytes, max_model_len, mnbt, groups, uniform_type, page, num_blocks,
                    per_request, tokens, concurrency, ok, estimate, tuple(notes), tuple(grouped_specs),
                    rules.version, rules.one_log_line, kv_dtype, max(stage_bytes), in_flight,
                    gib_text_rounded=rules.gib_text_rounded, tokens_from_concurrency=rules.tokens_from_concurrency,
                    max_num_seqs=seqs, refusal=refusal)


def add_to_report(*args, **kwargs):
    """kvplan.engines.vllm_report.add_to_report (kept here for callers of the old API)."""
    from .vllm_report import add_to_report as add

    return add(*args, **kwargs)


__all__ = ["PageSpec", "CacheGroup", "VllmPool", "simulate", "layer_specs", "kv_cache_groups", "engine_model",
           "default_max_num_batched_tokens", "serving_storage", "VERSION_MODELLED", "add_to_report"]


def cohere_qk_norm_refusal(model, tp: int) -> str | None:
    """Why vLLM cannot load a Command R config with use_qk_norm at a TP above its KV heads, else None (or where the
    config cannot be read again). vLLM 0.34 commandr.py CohereAttention builds k_norm of [max(1, KV heads / TP),
    head_dim] and loads it with row_parallel_weight_loader (model_loader/weight_utils.py), which narrows the
    checkpoint's [KV heads, head_dim] at tp_rank x rows: a rank at or past the KV heads narrows outside the tensor."""
    from .vllm_load import raw_config

    raw = raw_config(model) or {}
    kv = raw.get("num_key_value_heads") or raw.get("num_attention_heads")
    if not raw.get("use_qk_norm") or not isinstance(kv, int) or kv <= 0 or tp <= kv:
        return None
    return (f"vLLM cannot load {model.name} at --tp {tp}: with use_qk_norm its k_norm holds {kv} KV heads' rows, and "
            f"vLLM 0.34 commandr.py loads them with row_parallel_weight_loader, one row a rank at rank x 1, so ranks "
            f"{kv} to {tp - 1} read past the tensor")

