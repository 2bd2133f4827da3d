"""SGLang's KV pool: how many tokens it allocates and how many requests it runs (releases 0.5.9 and 0.5.23).

Every rule is read in the sglang 0.5.9 sdist and the 0.5.23 wheel (python/sglang/srt/...); the file and function
are named beside each, 0.5.9's first. `Rules` holds what changed between the two; `--engine sglang` models the
newest (0.5.23, October 2026), `--engine sglang@0.5.9` the older. SGLang keeps one token pool: a token's "cell"
holds its K/V (or MLA latent) in every layer.

What changed in 0.5.23, the release tables and the memory defaults: kvplan.engines.sglang_rules.

0.5.9's rules (where 0.5.23 keeps them, it keeps them):
- Cell bytes per token (model_executor/model_runner_kv_cache_mixin.py get_cell_size_per_token):
  - MLA (use_mla_backend): (kv_lora_rank + qk_rope_head_dim) x layers x kv bytes;
  - otherwise num_kv_heads / attention TP (at least 1: model_config.get_num_kv_heads) x (head_dim +
    v_head_dim) x layers x kv bytes, one head count and width for every layer;
  - hybrid sliding-window models, only the architectures of model_config.is_hybrid_swa_model (Llama 4,
    GPT-OSS, MiMo-V2-Flash, Step-3.5): full and sliding layers each with their own heads and widths.
    Every other model is pooled as if each layer were full attention: Gemma 2/3's or Mistral's windows
    save SGLang nothing.
- The pool (profile_max_num_token): rest = A - T0 x (1 - mem_fraction_static) GiB, where T0 is the free
  GPU memory after the distributed init (model_runner.init_torch_distributed: min_per_gpu_memory, the
  minimum over ranks) and A the free memory after the weights load (get_available_gpu_memory, GiB =
  2**30 B); max_total_num_tokens = int(rest x 2**30) // cell. Since A = T0 - weights - what the load
  adds, the pool is about T0 x mem_fraction_static - weights.
- Then (init_memory_pool): --max-total-tokens caps it; it is rounded down to a whole page; a hybrid
  sliding-window pool splits it (set_num_tokens_hybrid_swa): full tokens = int(tokens x (F n_f + S n_s)
  / (F n_f + r S n_s)), sliding tokens = int(full x r), r = swa_full_tokens_ratio (0.8), each rounded
  down to a page, and max_total_num_tokens becomes the full layers' count.
- max_running_requests, unless given: min(max(int(tokens / context_len x 512), 2048), 4096), at most tokens // 2
  (model_runner.py).
- The log (mem_cache/memory_pool.py _finalize_allocation_log): "KV Cache is allocated. #tokens: N, K
  size: X GB, V size: Y GB" (MLA: "KV size"), the buffers holding N + page_size tokens, GB = 2**30 B.
- KV dtype (model_runner.configure_kv_cache_dtype): auto = the model's dtype (fp8_e4m3 where the
  checkpoint's quant_config names an FP8 KV cache), fp8_e4m3, fp8_e5m2, bf16.

- Hybrid recurrent models (Qwen3-Next and Qwen3.5's Gated DeltaNet, Nemotron-H, Falcon-H1 and Granite 4.0-H's
  Mamba-2, Nemotron Nano VL V2's (its llm_config, 0.5.23 configs/hybrid_arch.py mamba2_config), LFM2's short conv,
  Kimi Linear's KDA, Ling / Ring 2.5's lightning attention (BailingMoeV2_5ForCausalLM: hybrid_lightning_config) and,
  0.5.23 only, Ling 3.0's (BailingMoeV3ForCausalLM, pooled as Kimi Linear by kimi_linear_config; where SGLang reads
  either Bailing hybrid's layers or state otherwise than kvplan, refused: kvplan.engines.sglang_bailing), and,
  0.5.23 only, ZAYA1's CCA conv state (its own layer split and shape: kvplan.engines.sglang_zaya):
  model_runner.mambaish_config): the cell counts the
  full-attention layers only, and a state pool comes first (handle_max_mamba_cache): max_mamba_cache_size =
  int(rest x r / (1 + r) x 2**30 // per-request state), r = mamba_full_memory_ratio (0.9), the rest less those
  states sizes the tokens, and max_running_requests is at most max_mamba_cache_size // 3
  (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, radix cache on, no extra buffer; 0.5.9 runs Kimi Linear and Ling 2.5 with
  the radix cache off, server_args._handle_mamba_radix_cache(support_mamba_cache=False), and, under speculative
  decoding, the other state models whose branch calls it (its no_buffer path: Rules.spec_radix_off_state_archs);
  0.5.23 on: at most max_mamba_cache_size, and a given max_running_requests is the pool's size). A request's state
  (configs/mamba_utils.py Mamba2StateShape): conv (conv_kernel - 1) x (d_inner + 2 x groups x d_state) / TP in
  bf16 (SGLANG_MAMBA_CONV_DTYPE), groups padded to TP; temporal heads / TP x head_dim x d_state in float32 unless
  the config's mamba_ssm_dtype says otherwise (mamba2_state_dtype), per state layer. Gated DeltaNet: d_inner =
  value heads x value width, groups = key heads, d_state = key width. Lightning (Ling 2.5): d_inner = groups = 0,
  conv_kernel 1, d_state = head_dim: no conv, temporal heads / TP x head_dim x head_dim in float32. Logged: "Mamba Cache is allocated.
  max_mamba_cache_size: N, conv_state size: X GB, ssm_state size: Y GB" (the buffers hold N + 1 states).

- Speculative decoding (server_args._handle_speculative_decoding): max_running_requests defaults to 48
  (SPEC_MAX_RUNNING_REQUESTS), the default fraction reserves 2 GiB more (STANDALONE 6: SPEC_RESERVED_MIB), and
  a hybrid recurrent model first reserves state x 48 x the draft tokens (handle_max_mamba_cache), then, its radix
  cache off (above), holds max_running_requests states, one a request.
- DeepSeek's sparse attention (is_deepseek_nsa: DeepSeek-V3.2, GLM-5, Mistral Large 3 with index_topk): the
  cell adds the indexer keys (index_head_dim + index_head_dim / 128 x 4 B, uint8); page_size 64 on CUDA; KV
  dtype auto = fp8_e4m3 on SM >= 10, bfloat16 below; at fp8 a layer stores 656 B of latent
  (calculate_mla_kv_cache_dim) where the profile counts 576, and the indexer whole pages of n + page + 1.

- Pure state-space models, 0.5.23 only (Mamba, Falcon-Mamba, Mamba-2: sglang_rules.PURE_SSM_ARCHS): no attention
  layer, a zero cell, so the token pool is --max-total-tokens, else context_len (pool_configurator
  DefaultPoolConfigurator._zero_kv_max_tokens), and the state pool as above (3 slots a request); Mamba-1's state
  Mamba2StateShape.create_full_rank: conv intermediate_size / TP x (kernel - 1), temporal intermediate_size / TP x
  state_size (head_dim 1). Gemma 3n (0.5.9 and 0.5.23): its KV-sharing layers are pooled like the others (cell).

Not modelled (refused or said): other recurrent states (MiniMax's lightning attention, Jamba, Bamba, Zamba: SGLang
registers none, and the refusal leads with that, kvplan.engines.sglang_served.registry_verdict), DeepSeek-V4 outside 0.5.23's CUDA defaults
(kvplan.engines.sglang_dsv4: no speculation, fp8_e4m3, V4.1 below SM100 only), FP4 and MXFP8 KV,
pipeline parallelism with states, speculation or a 0.5.9 sliding-window pool
(kvplan.engines.sglang_report.stage_pool), DP attention, 0.5.9's speculative draft pool (said beside, not
subtracted: it comes out of what mem_fraction_static leaves; kvplan.engines.sglang_report), an EAGLE head's weights
under 0.5.23 (said, not subtracted), MTP (MiMo-V2's and Step-3.5's excepted: kvplan.engines.sglang_mtp) or a
sliding-window draft on a 0.5.23 sliding-window pool, NGRAM
speculation, vision models' mem_fraction_static adjustment where config.json leaves the tower's size to its config
class (said), and models whose layers differ in heads or width outside the hybrid architectures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..configs.nemotron_nas import linear_replacement
from ..core.model import ModelSpec
from ..errors import PlanError, UsageError
from .sglang_bailing import LING3, LING25, check_ling3, check_ling25
from .sglang_mtp import DRAFTS as MTP_DRAFTS
from .sglang_served import registry_verdict
from .sglang_zaya import ZAYA, zaya_shape
from .sglang_rules import (DSV4_ARCHS, GIB, KV_DTYPES, KV_SHARED_POOLED_ARCHS, LATEST,
                           MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, MAMBA_EXTRA_BUFFER_SLOTS, MAMBA_FULL_MEMORY_RATIO,
                           NSA_ARCHS, NSA_PAGE_SIZE, NSA_QUANT_BLOCK, PURE_SSM_ARCHS, RULES, SPEC_MAX_RUNNING_REQUESTS,
                           STATE_ARCHS, SWA_FULL_TOKENS_RATIO, WINDOW_FIELD_ONE_LESS, Rules, radix_off_reason)

if TYPE_CHECKING:
    from .sglang_dsv4 import Dsv4Pool

@dataclass(frozen=True)
class Speculation:
    """SGLang's speculative decoding as a plan asks for it (--speculative-algorithm and its steps)."""

    algorithm: str  # EAGLE (MTP layers: NEXTN, which SGLang runs as EAGLE, or an EAGLE head), EAGLE3, STANDALONE
    num_steps: int
    draft_tokens: int  # speculative_num_draft_tokens
    draft_layers: int  # the layers of the draft's own KV pool
    draft_name: str | None = None  # a separate draft checkpoint
    draft_architecture: str | None = None  # its architecture (a sliding-window draft splits its layers)
    draft_source: str | None = None  # what --draft-model named (a bundled name, a config.json, a Hub id): reloaded from
    # an MTP draft on a sliding-window pool (kvplan.engines.sglang_mtp, MiMo-V2): whether kvplan read how it splits,
    # and how many of its layers mtp_local_layer_ids lists (None: the config lists none)
    sliding_draft: bool = False
    local_draft_layers: int | None = None


@dataclass(frozen=True)
class Cell:
    """One token's bytes on one GPU, and how SGLang splits them."""

    bytes: int
    kind: str  # "mla" | "mha" | "hybrid_swa"
    kv_bytes: int  # bytes per element
    full_layers: int
    full_per_token: int = 0  # hybrid: one full layer's bytes per token (kv bytes included)
    swa_layers: int = 0
    swa_per_token: int = 0
    k_per_token: int = 0  # mha / hybrid: K bytes of all layers per token (V: bytes - k)
    notes: tuple[str, ...] = ()
    state: "StateCell | None" = None  # a hybrid recurrent model's per-request state
    mla_stored: int = 0  # mla: one layer's stored bytes per token (DSA at fp8: 656, more than the profile's 576)
    index_bytes: int = 0  # mla with DSA: one layer's indexer key bytes per token (index_head_dim + its scales)
    full_k_per_token: int = 0  # hybrid: one full layer's K bytes per token (its V: full_per_token - this)
    swa_k_per_token: int = 0

    def mla_buffer_bytes(self, tokens: int, page: int) -> int:
        """An MLA pool's buffers for `tokens` (the KV size it logs): the latent of tokens + page per layer,
        the DSA indexer's whole pages of tokens + page + 1 (MLATokenToKVPool, NSATokenToKVPool)."""
        return self.full_layers * ((tokens + page) * self.mla_stored
                                   + (tokens + page + 1) // page * page * self.index_bytes)


@dataclass(frozen=True)
class StateCell:
    """One request's recurrent state on one GPU, as SGLang's state pool holds it."""

    conv_bytes: int
    ssm_bytes: int
    layers: int

    @property
    def bytes(self) -> int:
        return self.conv_bytes + self.ssm_bytes


def kv_dtype_bytes(model: ModelSpec, kv_cache_dtype: str | None) -> tuple[str, int]:
    """(SGLang's --kv-cache-dtype, bytes per element) for kvplan's storage of the model's caches, or the
    dtype asked for."""
    caches = [c for layer in model.layers for c in layer.caches if c.kind in ("attention", "latent")]
    if kv_cache_dtype is not None:
        if kv_cache_dtype not in KV_DTYPES:
            raise UsageError(f"--kv-cache-dtype {kv_cache_dtype!r} is not an SGLang KV dtype kvplan models",
                             "use auto, fp8_e4m3, fp8_e5m2 or bf16")
        return kv_cache_dtype, KV_DTYPES[kv_cache_dtype] or 2
    storage = caches[0].storage if caches else None
    if storage is None or storage.granularity == "none":
        return "auto", 2  # bf16 / fp16 (a float32 checkpoint is served in 16 bits)
    if storage.name.startswith("fp8") and storage.bits == 8:
        return ("fp8_e5m2" if storage.name == "fp8_e5m2" else "fp8_e4m3"), 1
    raise UsageError(f"SGLang has no KV dtype for kvplan's {storage.name} cache",
                     "SGLang stores K/V in bf16, fp8_e4m3 or fp8_e5m2: use --kv-dtype fp8 or auto")


def cell(model: ModelSpec, tp: int = 1, kv_bytes: int = 2, ssm_bytes: int = 4, rules: Rules | None = None,
         sm10: bool = False) -> Cell:
    """SGLang's cell size per token on one GPU (get_cell_size_per_token), from kvplan's per-layer caches;
    a hybrid recurrent model's per-request state beside it (ssm_bytes: its temporal state's width). sm10: the GPU
    is SM >= 10, whose DSA backend (trtllm) stores an fp8 latent without scales (0.5.23)."""
    rules = rules or RULES[LATEST]
    tp = max(tp, 1)
    if model.config_model_type in ("qwen2_5_omni", "qwen2_5_omni_thinker"):
        # srt/models/ of 0.5.9 and 0.5.23 has qwen3_omni_moe.py but no Qwen2.5-Omni class (no EntryClass names one;
        # keyed on model_type: trimmed configs name no architecture for sglang_served to look up)
        raise UsageError(f"SGLang {rules.release} has no Qwen2.5-Omni model (model_type {model.config_model_type!r}): "
                         "it registers no Qwen2_5Omni* class", "use --engine vllm, which serves its thinker")
    if replaced := linear_replacement(model):  # DeciLMDecoderLayer (srt/models/nemotron_nas.py) has no replace_with_linear branch
        raise UsageError(f"SGLang cannot serve {model.name}: {replaced}", "plan it with --engine ideal")
    shared = sum(1 for layer in model.layers if layer.shares_cache_of is not None)
    if shared and (model.architecture or "") not in KV_SHARED_POOLED_ARCHS:
        raise UsageError(f"SGLang: {model.name} reuses earlier layers' KV (num_kv_shared_layers), which kvplan has "
                         "not read in SGLang's pool", "use --engine vllm or ideal for this model")
    if any(layer.borrows for layer in model.layers):
        raise UsageError(f"SGLang: {model.name}'s layers read compressed caches other layers store (DeepSeek-V4.1), "
                         "which kvplan has not read in SGLang's pool", "use --engine vllm or ideal for this model")
    if model.architecture == LING3 and LING3 not in rules.mamba_extra_buffer_archs:
        # 0.5.9 model_runner.hybrid_lightning_config takes any BailingHybridConfig: a lightning pool, not KDA
        raise UsageError(f"SGLang {rules.release} registers no {LING3} and pools any bailing_hybrid config as "
                         "lightning attention (hybrid_lightning_config), not the KDA state of this model",
                         "use --engine sglang (0.5.23), vllm or ideal for this model")
    if model.architecture == ZAYA:  # its own layer split and CCA state (kvplan.engines.sglang_zaya)
        layers, kv_heads, head_dim, state_bytes, notes = zaya_shape(model, tp, rules.release)
        per_token = kv_heads * head_dim * layers * kv_bytes
        return Cell(2 * per_token, "mha", kv_bytes, layers, k_per_token=per_token, notes=notes,
                    state=StateCell(state_bytes, 0, layers))
    # Gemma 3n (0.5.9 and 0.5.23 models/gemma3n_causal.py Gemma3nAttention): its last num_kv_shared_layers layers
    # attend with the RadixAttention layer_id of an earlier layer and save_kv_cache=False, but the pool is built for
    # num_effective_layers = max(num_hidden_layers, num_attention_layers) (0.5.9 model_runner; 0.5.23
    # layer_setup._compute_model_num_layers), so every layer holds a (never written) row of the source's shape
    owners = [layer if layer.shares_cache_of is None else model.layers[layer.shares_cache_of]
              for layer in model.layers]
    state = state_cell(model, tp, ssm_bytes, rules) if any(layer.state is not None for layer in model.layers) \
        else None
    caches = [c for layer in owners for c in layer.caches]
    kinds = {c.kind for c in caches}
    nsa = kinds == {"latent", "indexer"} and (model.architecture or "") in NSA_ARCHS
    if not kinds <= {"attention", "latent"} and not nsa:
        raise UsageError(f"SGLang: {model.name}'s cache ({', '.join(sorted(kinds))}) is not modelled for SGLang "
                         "(DeepSeek-V4's compressed caches, an indexer outside SGLang's DSA architectures)",
                         "use --engine vllm or ideal for this model")
    if "latent" in kinds:
        layers = sum(1 for layer in owners if any(c.kind == "latent" for c in layer.caches))
        width = next(c.key_dim for c in caches if c.kind == "latent")
        stored, index = width * kv_bytes, 0
        profiled, index_layers = width * kv_bytes, layers
        if nsa:  # calculate_mla_kv_cache_dim; NSATokenToKVPool's index_k_with_scale_buffer (uint8)
            rope = next(c.rope_dim for c in caches if c.kind == "latent")
            # fp8 latent + a float32 scale per 128 + the rope part in bf16, except in 0.5.23 on SM >= 10, where the
            # default DSA backend (trtllm, overrides._dsa_split_backend_resolution) keeps the raw 576 B
            if kv_bytes == 1 and not (rules.dsa_stored_counted and sm10):
                stored = (width - rope) + (width - rope) // NSA_QUANT_BLOCK * 4 + rope * 2
            head = next(c.key_dim for c in caches if c.kind == "indexer")
            index = head + head // NSA_QUANT_BLOCK * 4
            if rules.dsa_stored_counted:  # 0.5.23: the pool is sized at what is stored, index keys on the layers
                # that compute their own top-k (dsa_layer_skips_topk; kvplan's indexer caches)
                profiled = stored
                index_layers = sum(1 for layer in owners if any(c.kind == "indexer" for c in layer.caches))
        return Cell(profiled * layers + index * index_layers, "mla", kv_bytes, layers, mla_stored=stored,
                    index_bytes=index, state=state)
    attn = [(layer, next(c for c in layer.caches if c.kind == "attention")) for layer in owners if layer.caches]
    if (model.architecture or "") in rules.hybrid_swa_archs:
        local = [_local(c) for _, c in attn]  # Llama 4's chunked layers are its "swa" layers
        full = [c for (_, c), is_local in zip(attn, local) if not is_local]
        swa = [c for (_, c), is_local in zip(attn, local) if is_local]
        if full and swa:
            own_shapes = (model.architecture or "") in rules.swa_own_shapes_archs
            if any(c.key_dim != c.value_dim for c in full + swa) and not own_shapes:
                raise UsageError(f"SGLang {rules.release}: {model.name}'s K and V widths differ in its sliding-window "
                                 "pool, which kvplan does not model for SGLang there",
                                 "use --engine vllm or ideal for this model")
            f, s = _uniform(model, full, tp), _uniform(model, swa, tp)
            if rules.swa_split_on_cell and f != s and not own_shapes:
                raise UsageError(f"SGLang {rules.release}: {model.name}'s full and sliding layers differ in KV heads or "
                                 "width; SGLang sizes its sliding sub-pool with the sliding layers' shape but allocates "
                                 "it with the full layers' (only is_hybrid_swa_compress models get their own)",
                                 "use --engine vllm or ideal for this model")
            return Cell((f[0] * len(full) + s[0] * len(swa)) * kv_bytes, "hybrid_swa", kv_bytes, len(full),
                        f[0] * kv_bytes, len(swa), s[0] * kv_bytes,
                        (f[1] * len(full) + s[1] * len(swa)) * kv_bytes,
                        full_k_per_token=f[1] * kv_bytes, swa_k_per_token=s[1] * kv_bytes)
    if state is not None and not attn and (model.architecture or "") in PURE_SSM_ARCHS:
        # configs/model_config.py _derive_model_shapes: head_dim 0, no KV heads; pool_configurator
        # DefaultPoolConfigurator counts mambaish_config.full_attention_layer_ids (none): a zero cell (0.5.23)
        return Cell(0, "mha", kv_bytes, 0, state=state, notes=(
            f"SGLang {rules.release} keeps no KV for {model.name} (no attention layer): its token pool's size is "
            "--max-total-tokens, else the context length (pool_configurator.DefaultPoolConfigurator, a zero cell), "
            "and it bounds the running requests' tokens together; a larger --max-total-tokens costs no pool memory",))
    if state is not None and not attn:
        raise UsageError(f"SGLang: {model.name} has no attention layer for its token pool", "use --engine vllm")
    per_token, k = _uniform(model, [c for _, c in attn], tp)
    notes = ((f"SGLang {rules.release} allocates KV for all {len(attn)} layers of {model.name}, though its last "
              f"{shared} reuse earlier layers' KV and write none (Gemma3nAttention save_kv_cache=False): the pool "
              "is sized as if each layer stored its own",) if shared else ())
    if any(_local(c) for _, c in attn):
        notes += (f"SGLang {rules.release} pools every layer of {model.name} as full attention: its sliding windows "
                 "(or chunks) save nothing there (only the architectures of is_hybrid_swa_model get a sliding-window "
                 "pool)",)
    return Cell(per_token * len(attn) * kv_bytes, "mha", kv_bytes, len(attn), k_per_token=k * len(attn) * kv_bytes,
                notes=notes, state=state)


def state_cell(model: ModelSpec, tp: int, ssm_bytes: int = 4, rules: Rules | None = None) -> StateCell:
    """One request's state on one GPU, conv in bf16 (SGLANG_MAMBA_CONV_DTYPE), the temporal state in ssm_bytes;
    refused for the state kinds and architectures SGLang's pool is not read for. Shapes (configs/mamba_utils.py):
    Mamba-2 and Gated DeltaNet Mamba2StateShape.create (groups padded to TP); LFM2's short conv the same with
    hidden_size channels and no temporal state (configs/lfm2.py); Kimi Delta Attention KimiLinearStateShape
    (conv over q, k and v, heads x head_dim each; temporal heads x head_dim x head_dim); Ling 2.5's lightning
    attention Mamba2StateShape.create(intermediate_size=0, n_groups=0, conv_kernel=1): no conv, temporal heads x
    head_dim x head_dim (configs/bailing_hybrid.py mamba2_cache_params; kvplan.engines.sglang_bailing)."""
    rules = rules or RULES[LATEST]
    states = [layer.state for layer in model.layers if layer.state is not None]
    kinds = {s.kind for s in states}
    lightning = model.architecture == LING25 and kinds == {"lightning"}
    arch = model.architecture or ""
    pure = arch in PURE_SSM_ARCHS  # Mamba-1 ("mamba") only there: configs/mamba.py _mamba1_cache_params
    unread = arch not in STATE_ARCHS or not (
        kinds <= {"gated_deltanet", "mamba2", "short_conv", "kda", *(("mamba",) if pure else ())} or lightning)
    if unread or pure:  # an architecture SGLang does not register leads with that (kvplan.engines.sglang_served)
        verdict = registry_verdict(model.registry_names, rules.release, model.config_model_type or model.model_type)
        if verdict:
            raise UsageError(f"{verdict}, and its Transformers fallback keeps no recurrent state between steps "
                             "(models/transformers.py runs the layers with use_cache=False): kvplan does not plan "
                             f"{model.name}'s {', '.join(sorted(kinds))} state for SGLang {rules.release}",
                             "use --engine vllm or ideal for this model")
    if unread:
        raise UsageError(f"SGLang: the {', '.join(sorted(kinds))} state of {model.name} ({model.architecture}) is not "
                         "modelled for SGLang: kvplan reads SGLang's state pool only for "
                         f"{', '.join(sorted(STATE_ARCHS))}", "use --engine vllm or ideal for this model")
    if model.architecture == LING3:
        check_ling3(model)
    if lightning:  # conv (0, 0); temporal (heads / TP, head_dim, head_dim) a linear layer
        heads, head_dim = check_ling25(model, tp, kda_by_conv=rules.bailing_kda_by_conv)
        return StateCell(0, len(states) * heads // tp * head_dim * head_dim * ssm_bytes, len(states))
    conv = ssm = 0
    for s in states:
        if s.kind == "mamba":  # Mamba2StateShape.create_full_rank: conv over intermediate_size only, temporal
            # (intermediate_size / TP, 1, state_size); it asserts intermediate_size % TP == 0. intermediate_size:
            # config.json's where written (transformers 5.19's PreTrainedConfig.__post_init__ sets the leftover
            # kwargs after MambaConfig's expand x hidden_size), as kvplan's d_inner reads it
            if None in (s.d_inner, s.d_state, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            if s.d_inner % tp:
                raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s intermediate_size {s.d_inner} "
                                 "(Mamba2StateShape.create_full_rank asserts it)", "use a TP that divides it")
            channels, temporal = s.d_inner, s.d_inner * s.d_state
        elif s.kind == "short_conv":
            if None in (s.conv_channels, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            channels, temporal = s.conv_channels, 0
        elif s.kind == "kda":
            if None in (s.heads, s.head_dim, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            channels, temporal = 3 * s.heads * s.head_dim, s.heads * s.head_dim * s.head_dim
            if s.heads % tp:
                raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {s.heads} KDA heads",
                                 "use a TP that divides them")
        else:
            if None in (s.n_groups, s.d_state, s.heads, s.head_dim, s.conv_kernel):
                raise UsageError(f"SGLang: {model.name}'s state shape is not known to kvplan", "use --engine vllm")
            d_inner = s.d_inner if s.kind == "mamba2" else s.heads * s.head_dim
            groups = s.n_groups + (0 if s.n_groups % tp == 0 else tp - s.n_groups)  # extra_groups_for_head_shards
            channels = d_inner + 2 * groups * s.d_state
            if s.heads % tp:
                raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {s.heads} state heads",
                                 "use a TP that divides them")
            temporal = s.heads * s.head_dim * s.d_state
        if channels % tp:
            raise UsageError(f"SGLang: --tp {tp} does not divide {model.name}'s {channels} conv channels",
                             "use a TP that divides them")
        conv += channels // tp * (s.conv_kernel - 1) * 2
        ssm += temporal // tp * ssm_bytes
    return StateCell(conv, ssm, len(states))


def config_window(model: ModelSpec) -> int | None:
    """The sliding window SGLang 0.5.23's pool configurator reads (ModelConfig.sliding_window_size: the config's
    sliding_window_size, else sliding_window), from the sliding layers kvplan read: their window, one less for
    WINDOW_FIELD_ONE_LESS (MiMo-V2: 128, where kvplan's plan keeps 129). None without sliding layers."""
    windows = [c.policy.window_tokens for layer in model.layers for c in layer.caches
               if c.policy.window_tokens is not None]
    if not windows:
        return None
    return max(windows) - (1 if model.model_type in WINDOW_FIELD_ONE_LESS else 0)


def _local(cache) -> bool:
    return cache.policy.window_tokens is not None or cache.policy.chunk_tokens is not None


def _uniform(model: ModelSpec, caches, tp: int) -> tuple[int, int]:
    """(K + V elements, K elements) per token of one layer: SGLang sizes these layers with one head count
    and width, so they must agree."""
    shapes = {(c.heads, c.key_dim, c.value_dim) for c in caches}
    if len(shapes) != 1:
        raise UsageError(f"SGLang: {model.name}'s layers differ in KV heads or width ({len(shapes)} shapes), "
                         "which SGLang's one-shape pool does not size as kvplan reads them",
                         "use --engine vllm or ideal for this model")
    heads, k, v = shapes.pop()
    heads = max(1, heads // tp)
    return heads * (k + v), heads * k


@dataclass(frozen=True)
class SglangPool:
    cell: Cell
    kv_cache_dtype: str
    rest_bytes: int  # the memory the pool is sized from
    max_total_num_tokens: int  # the full layers' tokens for a hybrid pool
    swa_tokens: int | None
    mamba_cache_size: int | None  # a hybrid recurrent model's states (max_mamba_cache_size)
    page_size: int
    context_len: int
    max_running_requests: int
    mem_fraction_static: float | None
    notes: tuple[str, ...] = field(default=())
    release: str = LATEST
    torch_dtype: str = "torch.bfloat16"  # the KV dtype as 0.5.23's pool logs it
    draft_bytes: int = 0  # 0.5.23: the draft's KV bytes per token, priced in the target's cell
    state_slots_per_request: int = 0  # a state model's states a request holds (init_memory_pool's ratio: 1, 3, 5)
    states_from_requests: bool = False  # 0.5.9 radix cache off: max_running_requests sized the state pool
    spec_draft_tokens: int = 0  # speculative_num_draft_tokens (0: no speculation)
    dsv4: "Dsv4Pool | None" = None  # 0.5.23 DSV4PoolConfigurator's figures (kvplan.engines.sglang_dsv4)

    @property
    def max_concurrency(self) -> float:
        """Requests of context_len tokens SGLang runs at once: the pool's tokens over context_len, at most
        max_running_requests (a hybrid recurrent model's state pool caps that)."""
        return min(self.max_total_num_tokens / self.context_len, self.max_running_requests)

    @property
    def concurrent_requests(self) -> int:
        return min(self.max_total_num_tokens // self.context_len, self.max_running_requests)

    def log_lines(self) -> list[str]:
        """The lines SGLang logs for this pool (each buffer holds one page more than its tokens)."""
        c, n, page = self.cell, self.max_total_num_tokens, self.page_size
        labelled = RULES[self.release].log_dtype

        def allocated(label: str, tokens: int, sizes: str) -> str:
            if labelled:  # 0.5.23 memory_pool.py _finalize_allocation_log
                return f"{label}KV Cache is allocated. dtype: {self.torch_dtype}, #tokens: {tokens}, {sizes}"
            return f"KV Cache is allocated. #tokens: {tokens}, {sizes}"

        if self.dsv4 is not None:  # its pool's "KV Cache is allocated" lines are not read: left out
            lines = self.dsv4.log_lines()
        elif c.kind == "mla":
            lines = [] if (c.index_bytes and labelled) else [
                allocated("", n, f"KV size: {c.mla_buffer_bytes(n, page) / GIB:.2f} GB")]
        elif c.kind == "mha" and not c.full_layers:  # a pure state-space model: its KV pool's line is not read
            lines = []
        elif c.kind == "mha":
            k = (n + page) * c.k_per_token
            v = (n + page) * c.bytes - k
            lines = [allocated("", n, f"K size: {k / GIB:.2f} GB, V size: {v / GIB:.2f} GB")]
        else:  # SWAKVPool: 0.5.9 builds the sliding pool first
            swa_k = (self.swa_tokens + page) * c.swa_k_per_token * c.swa_layers
            swa_v = (self.swa_tokens + page) * (c.swa_per_token - c.swa_k_per_token) * c.swa_layers
            full_k = (n + page) * c.full_k_per_token * c.full_layers
            full_v = (n + page) * (c.full_per_token - c.full_k_per_token) * c.full_layers
            swa = allocated("SWA ", self.swa_tokens, f"K size: {swa_k / GIB:.2f} GB, V size: {swa_v / GIB:.2f} GB")
            full = allocated("Full ", n, f"K size: {full_k / GIB:.2f} GB, V size: {full_v / GIB:.2f} GB")
            lines = [f"Use sliding window memory pool. full_layer_tokens={n}, swa_layer_tokens={self.swa_tokens}",
                     *((full, swa) if labelled else (swa, full)),
                     f"SWAKVPool mem usage: {(swa_k + swa_v + full_k + full_v) / GIB:.2f} GB, swa size: "
                     f"{self.swa_tokens}, full size: {n}"]
        if self.mamba_cache_size is not None:
            held = self.mamba_cache_size + 1
            line = (f"Mamba Cache is allocated. max_mamba_cache_size: {self.mamba_cache_size}, conv_state size: "
                    f"{held * c.state.conv_bytes / GIB:.2f}GB, ssm_state size: {held * c.state.ssm_bytes / GIB:.2f}GB")
            if self.spec_draft_tokens and RULES[self.release].logs_intermediate_states:
                # MambaPool: [layers, max_running_requests + 1, draft tokens, ...] of each state
                drafts = (self.max_running_requests + 1) * self.spec_draft_tokens
                line += (f" intermediate_ssm_state_cache size: {drafts * c.state.ssm_bytes / GIB:.2f}GB "
                         f"intermediate_conv_window_cache size: {drafts * c.state.conv_bytes / GIB:.2f}GB")
            lines.insert(0, line)
        lines.append(f"max_total_num_tokens={n}, max_running_requests={self.max_running_requests}, "
                     f"context_len={self.context_len}")
        return lines


def _served_dtype(model) -> str:
    """The model dtype SGLang 0.5.23 serves in (sglang_sm7.served_dtype): the KV cache's under kv_cache_dtype auto
    (mem_cache/kv_cache_dtype.py configure_kv_cache_dtype: auto takes the model dtype)."""
    from .sglang_sm7 import served_dtype

    return served_dtype(model)


TORCH_DTYPES = {"fp8_e4m3": "torch.float8_e4m3fn", "fp8_e5m2": "torch.float8_e5m2", "bf16": "torch.bfloat16",
                "bfloat16": "torch.bfloat16"}


def pool(model: ModelSpec, *, rest_bytes: int, context_len: int, tp: int = 1, kv_cache_dtype: str | None = None,
         page_size: int = 1, max_total_tokens: int | None = None, max_running_requests: int | None = None,
         mem_fraction_static: float | None = None, ssm_bytes: int = 4, nsa_fp8: bool = False,
         speculation: Speculation | None = None,
         swa_full_tokens_ratio: float = SWA_FULL_TOKENS_RATIO, rules: Rules | None = None,
         chunked_prefill_size: int | None = None) -> SglangPool:
    """SGLang's pool from the memory it sizes it from (profile_max_num_token's rest, in bytes). ssm_bytes:
    a hybrid recurrent model's temporal state width (ssm_state_bytes). nsa_fp8: the GPU is SM >= 10, where
    SGLang's KV dtype auto is fp8_e4m3 for DeepSeek's sparse attention. rules: the release (default the newest).
    chunked_prefill_size: the card's default (memory_defaults), which DeepSeek-V4.1's SWA pool is sized from."""
    from ..configs.quant_mlx import refusal

    if mlx := refusal(model, "SGLang"):
        raise UsageError(mlx, "plan the original (non-MLX) checkpoint, or use --engine ideal")
    rules = rules or RULES[LATEST]
    if page_size < 1:
        raise UsageError(f"--block-size {page_size}: SGLang's page_size must be 1 or more")
    if (model.architecture or "") in DSV4_ARCHS:
        return _dsv4_pool(model, rest_bytes, context_len, kv_cache_dtype, page_size, max_total_tokens,
                          max_running_requests, mem_fraction_static, speculation, rules, chunked_prefill_size,
                          nsa_fp8)
    dtype, kv_bytes = kv_dtype_bytes(model, kv_cache_dtype)
    if nsa_fp8 and dtype == "auto" and is_nsa(model):
        dtype, kv_bytes = "fp8_e4m3", 1
    if rules.dsa_stored_counted and dtype == "fp8_e5m2" and is_nsa(model):
        raise UsageError(f"SGLang {rules.release} serves DeepSeek's sparse attention with a bfloat16 or fp8_e4m3 "
                         "cache only (_dsa_kv_cache_dtype_default)", "use -t fp8 (e4m3) or the default")
    c = cell(model, tp, kv_bytes, ssm_bytes, rules, sm10=nsa_fp8)
    if (speculation is not None and speculation.draft_name is None and model.model_type in MTP_DRAFTS
            and model.architecture not in rules.mtp_targets):
        raise UsageError(f"SGLang {rules.release}: the MTP draft of {model.name} ({model.architecture}) is not "
                         f"modelled: kvplan read SGLang 0.5.23's {MTP_DRAFTS[model.model_type][0]} "
                         "(kvplan.engines.sglang_mtp), not this release's", "use --engine sglang (0.5.23)")
    if speculation is not None and (model.architecture or "") in PURE_SSM_ARCHS:
        raise UsageError(f"SGLang {rules.release}: speculative decoding on a pure state-space model ({model.name}) is "
                         "not modelled (its draft's pool and the intermediate states were not read for it)",
                         "plan it without a draft")
    if speculation is not None and model.architecture == ZAYA:
        raise UsageError(f"SGLang {rules.release} does not refuse speculative decoding on {model.name} ({ZAYA}), but "
                         "kvplan has not read how it keeps the CCA state's draft-token conv windows "
                         "(ShortConvAttnBackend) or a ZAYA draft's own state pool", "plan it without a draft")
    notes = list(c.notes)
    if c.index_bytes:
        if page_size != NSA_PAGE_SIZE:
            notes.append(f"SGLang sets page_size {NSA_PAGE_SIZE} for DeepSeek's sparse attention on CUDA")
        page_size = NSA_PAGE_SIZE
        if dtype == "fp8_e4m3" and kv_cache_dtype is None:
            notes.append("SGLang stores DeepSeek's sparse-attention cache in fp8_e4m3 by default on SM >= 10 GPUs")
        profiled = c.bytes // c.full_layers - c.index_bytes
        if rules.dsa_stored_counted:
            notes.append(f"SGLang {rules.release}'s DSA pool logs its KV size from buffers kvplan has not read "
                         "(IndexKeyCache): that line is left out"
                         + ("" if kv_bytes == 2 or nsa_fp8 else "; fp8 stored as on Hopper (flashmla_kv: 656 B a "
                            "layer with scales), Blackwell's trtllm keeps 576 (give --gpu)"))
        elif c.mla_stored > profiled:
            notes.append(f"SGLang sizes this pool at {profiled} B of latent a layer and token but stores "
                         f"{c.mla_stored} (fp8 with a scale per 128 and the rope part in bf16: "
                         "calculate_mla_kv_cache_dim), so its buffers outgrow the memory they were sized from by "
                         f"{(c.mla_stored - profiled) / (profiled + c.index_bytes):.1%}")
    if speculation is not None and max_running_requests is None:
        max_running_requests = SPEC_MAX_RUNNING_REQUESTS  # _handle_speculative_decoding's default
    draft = d_swa = 0  # d_swa: draft layers priced in the sliding cell (x swa_full_tokens_ratio)
    if rules.draft_kv_in_cell and speculation is not None:  # DefaultPoolConfigurator: the target's per-layer size
        if c.kind == "hybrid_swa":  # HybridSWAPoolConfigurator: a draft without sliding layers prices them as full
            d = speculation.draft_layers
            if speculation.sliding_draft:  # kvplan.engines.sglang_mtp: the draft's layers by mtp_local_layer_ids,
                local = speculation.local_draft_layers  # else min(its layers, the target's sliding layers) sliding
                d_swa, d_local = (min(d, c.swa_layers), 0) if local is None else (0, local)
                d_full = d - d_swa - d_local
            elif speculation.draft_name is None or (speculation.draft_architecture or "") in rules.hybrid_swa_archs:
                raise UsageError(f"SGLang {rules.release}: a sliding-window draft on a sliding-window pool is not "
                                 "modelled (its layers split between the full and sliding sub-pools by "
                                 "mtp_local_layer_ids / eagle_draft_swa_num_layers)",
                                 "plan without --mtp / --draft-model, or use --engine sglang@0.5.9")
            else:
                d_full, d_local = d, 0
            draft = c.full_per_token * d_full + c.swa_per_token * d_local
        else:
            draft = int(c.bytes * speculation.draft_layers / c.full_layers)
    rest_bytes, states, ratio, given = _states(c, rest_bytes, rules, model, speculation, max_running_requests, notes)
    if c.kind == "hybrid_swa" and rules.swa_split_on_cell and rest_bytes <= 0:
        # 0.5.23 kv_cache_configurator.py _profile_available_bytes raises ("Loaded weights leave no GPU memory for
        # the KV cache") before any pool configurator runs, so the sliding-window check below never sees a negative
        # budget (it would report a pool of negative tokens)
        raise PlanError(f"SGLang would have no KV cache tokens on this GPU ({rest_bytes / GIB:.2f} GiB for the pool)",
                        "raise --mem-util (SGLang's --mem-fraction-static), add GPUs (--tp), or use a smaller model")
    if c.kind == "hybrid_swa" and rules.swa_split_on_cell:  # 0.5.23 HybridSWAPoolConfigurator
        per_full = (c.full_per_token * c.full_layers + draft
                    + swa_full_tokens_ratio * c.swa_per_token * (c.swa_layers + d_swa))
        full = int(rest_bytes // per_full)
        if max_total_tokens is not None:
            full = min(full, max_total_tokens)
        tokens = raw = full // page_size * page_size
        swa = int(tokens * swa_full_tokens_ratio) // page_size * page_size
        window = config_window(model)
        if window is not None and window + page_size >= swa:  # pool_configurator.py validate_swa_pool_size
            raise PlanError(f"SGLang {rules.release} would not start: its sliding-window pool holds {swa} tokens, "
                            f"not more than the sliding window ({window}) + page_size ({page_size}) a prefill "
                            "takes, so no request could ever be admitted",
                            "raise --mem-util (SGLang's --mem-fraction-static) or add GPUs (--tp)")
    else:
        # a pure state-space model's zero cell (DefaultPoolConfigurator.calculate_pool_sizes): --max-total-tokens,
        # else model_config.context_len (_zero_kv_max_tokens), page-aligned
        tokens = raw = rest_bytes // (c.bytes + draft) if c.bytes else (max_total_tokens or context_len)
        if max_total_tokens is not None:
            tokens = min(tokens, max_total_tokens)
        tokens = tokens // page_size * page_size
        swa = None
        if c.kind == "hybrid_swa":  # 0.5.9 set_num_tokens_hybrid_swa
            total = tokens * (c.full_per_token * c.full_layers + c.swa_per_token * c.swa_layers)
            full = int(total / (c.full_per_token * c.full_layers
                                + swa_full_tokens_ratio * c.swa_per_token * (c.swa_layers + d_swa)))
            swa = int(full * swa_full_tokens_ratio) // page_size * page_size
            tokens = full // page_size * page_size
    if tokens <= 0:
        raise PlanError(f"SGLang would have no KV cache tokens on this GPU ({rest_bytes / GIB:.2f} GiB for the pool)",
                         "raise --mem-util (SGLang's --mem-fraction-static), add GPUs (--tp), or use a smaller model")
    # max_running_requests (0.5.9 model_runner.init_memory_pool; 0.5.23 kv_cache_configurator.resolve_max_num_reqs):
    # the estimate from the profiled tokens (0.5.23: the final ones), at most half the pool's tokens
    estimate = min(max(int((tokens if rules.requests_on_final_tokens else raw) / context_len * 512), 2048), 4096)
    if max_running_requests is None:
        requests = min(estimate, tokens // 2)
    else:
        requests = min(max_running_requests, tokens // 2) if rules.requests_on_final_tokens else max_running_requests
    if states is not None:
        requests = min(requests, states // ratio)
        if requests <= 0:  # 0.5.23 resolve_max_num_reqs raises ("state cache is too small to serve any requests")
            raise PlanError(f"SGLang {rules.release} would not serve: its state pool holds {states} states of "
                             f"{c.state.bytes / 2**20:,.1f} MiB, {ratio} a request, so no request can run"
                             + (" (it refuses to start)" if rules.requests_on_final_tokens else ""),
                             "raise --mem-util (SGLang's --mem-fraction-static) or add GPUs (--tp)")
    return SglangPool(c, dtype, rest_bytes, tokens, swa, states, page_size, context_len, requests,
                      mem_fraction_static, tuple(notes), rules.release,
                      TORCH_DTYPES.get(dtype, f"torch.{_served_dtype(model)}"),
                      draft + int(swa_full_tokens_ratio * c.swa_per_token * d_swa), ratio if states is not None else 0,
                      given,
                      speculation.draft_tokens if speculation is not None else 0)


def _dsv4_pool(model: ModelSpec, rest_bytes: int, context_len: int, kv_cache_dtype: str | None, page_size: int,
               max_total_tokens: int | None, max_running_requests: int | None, mem_fraction_static: float | None,
               speculation: Speculation | None, rules: Rules, chunked_prefill_size: int | None = None,
               sm10: bool = False) -> SglangPool:
    """DeepSeek-V4's pool in the releases that serve it (kvplan.engines.sglang_dsv4: 0.5.23's DSV4PoolConfigurator
    at its defaults); what it was not read for is refused."""
    from .sglang_dsv4 import DSV4_MAX_RUNNING_REQUESTS, DSV4_PAGE_SIZE, sizes

    arch = model.architecture
    if arch not in rules.dsv4_pool_archs:
        raise UsageError(f"SGLang {rules.release} registers no {arch}: kvplan models its DeepSeek-V4 pool for 0.5.23",
                         "use --engine sglang (0.5.23), vllm or ideal for this model")
    if kv_cache_dtype not in (None, "auto", "fp8_e4m3"):
        raise UsageError(f"SGLang {rules.release}: a {kv_cache_dtype} DeepSeek-V4 cache is not modelled (kvplan read "
                         "the fp8_e4m3 default, _deepseek_v4_kv_cache_dtype)", "use --kv-cache-dtype auto or fp8_e4m3")
    if speculation is not None:
        raise UsageError(f"SGLang {rules.release}: DeepSeek-V4 with speculative decoding is not modelled (its compress "
                         "state rings grow to 16 / 256 rows and DSV4PoolConfigurator inflates the cell by "
                         "(layers + 1) / layers: not read into kvplan)", "plan it without a draft")
    if sm10 and model.config_model_type == "deepseek_v41":
        raise UsageError(f"SGLang {rules.release}: DeepSeek-V4.1 on an SM >= 10 card is not modelled (flashmla_mega's "
                         "V4.1 layouts, index pages of 128 with Blackwell's DeepGEMM: select_dsv4_kv_layout, "
                         "dsv41_index_page_size); kvplan read it below SM100", "plan it on an H100 / H200")
    notes = [f"SGLang {rules.release} sizes DeepSeek-V4's pool with DSV4PoolConfigurator (pool_configurator.py): "
             "fp8_e4m3 latents in KVLayout.V4 pages (584 B a token, pages padded to 576 B), page_size 256, "
             + ("" if model.config_model_type == "deepseek_v41" else "swa_full_tokens_ratio 0.1, ")
             + "max_running_requests 256 unless given (model_overrides/deepseek_v4.py, "
             "deepseek_v4_hook.py); read for CUDA's flashmla backend (ROCm's DeepSeek-V4 hooks not read)",
             "DeepSeekV4TokenToKVPool's own allocation lines are not read: left out"]
    if page_size not in (1, DSV4_PAGE_SIZE):
        notes.append(f"SGLang sets page_size {DSV4_PAGE_SIZE} for DeepSeek-V4 on CUDA (model_overrides/deepseek_v4.py)")
    p = sizes(model, rest_bytes, max_running_requests, max_total_tokens, chunked_prefill_size=chunked_prefill_size)
    if p.swa_cap_tokens is not None:
        notes.append(f"DeepSeek-V4.1: the model override leaves swa_full_tokens_ratio unset, so the SWA pool is the "
                     f"request cap plus {p.prefix_tails} radix prefix tails ({p.swa_cap_tokens:,} tokens, "
                     f"{p.swa_fixed_bytes / GIB:.2f} GiB) taken first (_resolve_swa_cap_tokens, chunked prefill "
                     f"{chunked_prefill_size:,}); read with the radix cache and overlap schedule on")
    if model.config_model_type == "deepseek_v41":
        from .vllm_load import raw_config

        vision = (raw_config(model) or {}).get("vision_config")
        if isinstance(vision, dict) and vision.get("num_hidden_layers"):
            notes.append("SGLang 0.5.23 serves a DeepSeek-V4.1 with vision layers as multimodal (model_config.py "
                         "has_dsv41_vision): its default fraction's vision adjustment (adjust_mem_fraction_for_vlm) "
                         "and multimodal cache are not taken from the pool memory here, so it may be high")
    requests = min(DSV4_MAX_RUNNING_REQUESTS if max_running_requests is None else max_running_requests,
                   p.full_tokens // 2)  # kv_cache_configurator.resolve_max_num_reqs
    c = Cell(round(p.bytes_per_full_token), "dsv4", 1, len(model.layers))
    return SglangPool(c, "fp8_e4m3", rest_bytes, p.full_tokens, p.swa_tokens, None, DSV4_PAGE_SIZE, context_len,
                      requests, mem_fraction_static, tuple(notes), rules.release, TORCH_DTYPES["fp8_e4m3"], dsv4=p)


def _states(c: Cell, rest_bytes: int, rules: Rules, model: ModelSpec, speculation: Speculation | None,
            max_running_requests: int | None, notes: list) -> tuple[int, int | None, int, bool]:
    """A hybrid recurrent model's state pool, sized first in proportion to the KV (handle_max_mamba_cache):
    (the bytes left for tokens, max_mamba_cache_size, the state slots a request holds, whether
    max_running_requests sized the states rather than mamba_full_memory_ratio)."""
    if c.state is None:
        return rest_bytes, None, MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, False
    per = c.state.bytes
    extra = MAMBA_EXTRA_BUFFER_SLOTS if (model.architecture or "") in rules.mamba_extra_buffer_archs else 0
    ratio = MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO + extra
    radix_off = radix_off_reason(rules, model.architecture, speculation is not None)
    if radix_off:  # 0.5.9 init_memory_pool: ratio 1 with the radix cache off
        ratio = 1
        notes.append(f"{radix_off}: one state slot a request"
                     + (f", and max_running_requests {max_running_requests} sizes the state pool "
                        "(handle_max_mamba_cache)" if max_running_requests is not None else ""))
    if extra:
        notes.append(f"SGLang {rules.release} keeps {extra} extra state slots a request for {model.architecture} "
                     "(mamba_radix_cache_strategy auto = extra_buffer under the overlap schedule): max_running_requests "
                     f"at most the states / {ratio}")
    if not rules.mamba_padding_slot:  # 0.5.9: the draft steps' intermediate states reserved first, then the states
        if speculation is not None:
            reserve = per * max_running_requests * speculation.draft_tokens
            rest_bytes -= reserve
            notes.append(f"speculative decoding: {reserve / GIB:,.2f} GiB reserved for {max_running_requests} "
                         f"requests' intermediate states over {speculation.draft_tokens} draft tokens")
        given = bool(radix_off) and max_running_requests is not None
        if given:  # handle_max_mamba_cache: max_running_requests states
            states = max_running_requests
        else:
            states = int(rest_bytes * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) // per)
        rest_bytes -= states * per
    else:  # 0.5.23: one padding slot charged; with speculation a joint solve with the intermediate states
        given = False
        budget = rest_bytes * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO)
        if speculation is not None:
            d = speculation.draft_tokens
            states = int((budget - per * (1 + d)) // (per * (1 + d / ratio)))
            reserve = per * (min(max_running_requests, max(states, 0) // ratio) + 1) * d
            rest_bytes -= reserve
            notes.append(f"speculative decoding: {reserve / GIB:,.2f} GiB of intermediate states over {d} draft "
                         "tokens (handle_max_mamba_cache's joint solve); the intermediate-cache sizes SGLang adds to "
                         "its state line (conv windows deduplicated on CUDA) are not printed here")
        else:
            states = int((budget - per) // per)
        rest_bytes -= (states + 1) * per
    if states <= 0:
        raise UsageError(f"SGLang would have no room for {model.name}'s recurrent states "
                         f"({per / 2**20:,.1f} MiB a request)", "raise --mem-util or add GPUs (--tp)")
    return int(rest_bytes), states, ratio, given


def is_nsa(model: ModelSpec) -> bool:
    """DeepSeek's sparse attention as SGLang sees it: an indexer cache on one of its DSA architectures."""
    return (model.architecture or "") in NSA_ARCHS and any(
        c.kind == "indexer" for layer in model.layers for c in layer.caches)


__all__ = ["Speculation", "Cell", "StateCell", "SglangPool", "kv_dtype_bytes", "cell", "state_cell", "pool", "is_nsa"]
