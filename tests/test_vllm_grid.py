"""Issue 14's grid: every bundled family vLLM serves, against a transcription of vLLM's code, per release.

For every bundled family vLLM serves (dense and MLA; one window; layer kinds that form several KV
cache groups: sliding + full, chunked + full, attention + Mamba / Mamba-2 / Gated DeltaNet /
short-conv / lightning states, pure Mamba, DeepSeek-V3.2's latent + indexer) x TP {1, 2, 4, 8} x
KV dtype {auto, fp8} x {10, 40} GiB x max length {8K, 128K} x every modelled release (the 21
VllmRules objects, 0.11 ... 0.34; the whole product, about 22 s on this 2-core machine): kvplan's
blocks, "GPU KV cache size" tokens, concurrency and start check equal a transcription of vLLM's own
code applied to the RAW config.json numbers (not kvplan's reader, not kvplan's engine). The
release's behaviour is transcribed here (`release`, keyed by the version string; nothing but the
version is read from the rule object under test), from /tmp/vsrc/s<version>/vllm (0.34.0: its sdist).
Skipped, each with its reason: combinations vLLM refuses (heads that do not divide the TP size, page
sizes 0.11 cannot group), releases whose registry lacks the family (the generated registry table), and what kvplan says it
does not model (`not_modelled`: 0.26/0.27's Mamba cache mode 'all' for Jamba, Nemotron-H, Falcon-H1,
Zamba2, Granite-4.0-H, where kvplan's "not modelled" note is asserted instead; Nemotron-H-8B's SSM
dtype in 0.13-0.19, which depends on the config class, not on config.json).

What is transcribed (file: function, per release):
- the block: vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE (16; 64 from 0.34), kept by FLASH_ATTN
  and FLASH_ATTN_MLA (MultipleOf(16)) in vllm/platforms/interface.py update_block_size_for_backend.
- page sizes: vllm/v1/kv_cache_interface.py AttentionSpec.page_size_bytes (2 x block x kv heads
  per rank x head size x dtype bytes), MLAAttentionSpec (one latent; fp8_ds_mla 656 B/token),
  MambaSpec.page_size_bytes (sum of the state tensors, padded to the attention page);
  state shapes: vllm/model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator
  (mamba1 / mamba2 (groups padded to TP) / gated_delta_net / short_conv), fed with the fields
  each model's get_mamba_state_shape_from_config reads.
- worst case per request: FullAttentionSpec cdiv(len, block); SlidingWindowSpec
  cdiv(min(W - 1 + in-flight, len), block) + 1; ChunkedLocalAttentionSpec cdiv(min(C + in-flight,
  len), block) (in-flight: max_num_batched_tokens, x 2 from 0.26); MambaSpec 1 page, in 'align'
  mode 2 + prefill-checkpoint blocks (prefix caching on by default for hybrids from 0.26).
- hybrid Mamba block: until 0.19 vllm/model_executor/models/config.py
  HybridAttentionMambaModelConfig.verify_and_update_config (16 x cdiv(mamba page, 16 x attention
  page of one token)); from 0.20 vllm/platforms/interface.py Platform._align_hybrid_block_size (the
  alignment max(16, block), in 0.33 lcm'd with the Qwen GDN prefill-checkpoint alignment 64).
- groups: vllm/v1/core/kv_cache_utils.py (0.33: kv_cache_planning.py) get_kv_cache_groups
  (unify_kv_cache_spec_page_size from 0.12; _get_kv_cache_groups_uniform_page_size's group size:
  the smallest count, the largest within 1.25x from 0.12, 1.5x from 0.18). Groups follow the KV
  cache spec dict, i.e. the order the model builds its attention / Mamba modules in.
- blocks, concurrency, tokens, start check: memory // bytes per block; concurrency = blocks / the
  blocks one max-length request needs; tokens blocks // groups x block, int(concurrency x len) from
  0.20.1; start check: every layer's worst case (until 0.13), the first group's (0.14-0.18), every
  group's (0.19 on), in memory less one block from 0.29.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, replace
from functools import lru_cache
from math import lcm
from pathlib import Path

import pytest

from kvplan.engines.vllm import simulate
from kvplan.engines.vllm_registry_data import REGISTRY
from kvplan.engines.vllm_rules import (RULES, V0_11, V0_13, V0_14, V0_19, V0_20, V0_25, V0_26, V0_28, V0_32, V0_33,
                                      VllmRules)
from kvplan.sources import load_model
from kvplan.workflows import apply_kv_dtype

GIB = 1024**3
SPECS = Path(__file__).resolve().parents[1] / "model_specs"
MNBT = 8192  # max_num_batched_tokens of `vllm serve` on an H100-class GPU (the engine's default without a GPU)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ------------------------------------------------------------------ the release's rules
@dataclass(frozen=True)
class Release:
    """What the transcription needs to know of one release, read from that release's own sources
    (/tmp/vsrc/s<version>/vllm when this was written; file and function beside each line of `release`).
    Only the version string is taken from the VllmRules object under test: every behaviour is keyed by it here."""

    version: str
    in_flight_batches: int  # SlidingWindowSpec / ChunkedLocalAttentionSpec in-flight tokens = this x MNBT
    default_block: int  # CacheConfig.DEFAULT_BLOCK_SIZE
    tokens_from_concurrency: bool
    start_check: str  # layers | first_group | groups
    # 0.20.0 config/compilation.py resolve_cudagraph_mode_and_sizes: a model with Mamba layers and FULL decode
    # CUDA graphs (the default) needs num_blocks >= max_num_seqs (1,024: the H100-class default) or vLLM raises
    mamba_blocks_cover_seqs: bool
    null_block_in_check: bool
    prefix_caching_hybrid: bool  # `vllm serve`'s default for a hybrid model (attention + states)
    all_mode_types: tuple  # model types whose Mamba state is kept per block of tokens when prefix caching is on
    prefix_caching_for_hybrids: bool  # --enable-prefix-caching stays on for a hybrid outside all_mode_types
    chunked_hybrid_manager: bool
    mla_block_bf16: int
    mla_block_fp8: int
    mla_block_sparse: int
    v32_auto: str
    v32_fp8: str
    nemotron_ssm_default: str  # "" (serving dtype) | float16 | float32: when the config names no mamba_ssm_cache_dtype
    align_pages: dict  # state kind -> pages one request holds in 'align' mode (MambaSpec.max_memory_usage_bytes)
    group_close_ratio: float  # _get_kv_cache_groups_uniform_page_size: largest count when < ratio x smallest
    unify_page_sizes: bool  # unify_kv_cache_spec_page_size; before it get_kv_cache_groups raises NotImplementedError
    qwen35_ssm_from_config: bool  # Qwen3_5ForConditionalGenerationConfig: SSM state in the config's mamba_ssm_dtype
    hybrid_align_to_block: bool  # Platform._align_hybrid_block_size: alignment max(16, block), not 16
    qwen_gdn_checkpoint: bool  # Qwen's GDN exports a prefill checkpoint (alignment 64, one more page)

    @property
    def align_mode(self) -> bool:
        return self.prefix_caching_hybrid


def _v(version: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in version.split("."))
    return parts + (0,) * (3 - len(parts))


# the hybrids with SupportsMambaPrefixCaching from 0.11.1 (none in 0.11.0) to 0.27.1: bamba.py (until the
# architecture's removal), falcon_h1.py, granitemoehybrid.py, jamba.py, nemotron_h.py, zamba2.py (mamba.py and
# mamba2.py too, but they are attention-free: no prefix caching by default, and not in this check)
ALL_MODE_TYPES = ("bamba", "jamba", "nemotron_h", "falcon_h1", "zamba2", "granitemoehybrid")


def release(rules: VllmRules | str) -> Release:
    """The release's behaviour, transcribed from its source, for the release the rule object names."""
    version = rules if isinstance(rules, str) else rules.version
    v = _v(version)
    return Release(
        version=version,
        # 0.25.1 kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes: + max_num_batched_tokens;
        # 0.26.0 + VllmConfig.max_in_flight_tokens = max_concurrent_batches (2: async scheduling, PP 1) x it
        in_flight_batches=2 if v >= (0, 26, 0) else 1,
        # config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE: 16 until 0.33.0, 64 in 0.34.0 (FLASH_ATTN, first on
        # Hopper, get_supported_kernel_block_sizes [MultipleOf(16)] keeps it: update_block_size_for_backend)
        default_block=64 if v >= (0, 34, 0) else 16,
        # 0.20.0 _report_kv_cache_config: num_blocks // len(groups) * min block size;
        # 0.20.1: int(max_concurrency * max_model_len)
        tokens_from_concurrency=v >= (0, 20, 1),
        # 0.13.0 check_enough_kv_cache_memory: max_memory_usage_bytes over every layer's spec;
        # 0.14.0-0.18.x get_kv_cache_configs -> _max_memory_usage_bytes_from_groups: group_size x page x
        # cdiv(kv_cache_groups[0]'s max_memory_usage_bytes, page) (one UniformTypeKVCacheSpecs group: the
        # layers' sum); 0.19.0: the cdiv summed over every group
        start_check="layers" if v < (0, 14, 0) else ("first_group" if v < (0, 19, 0) else "groups"),
        # 0.29.0 get_kv_cache_configs: check_memory = avail_mem - _pool_bytes_per_block(groups)
        null_block_in_check=v >= (0, 29, 0),
        mamba_blocks_cover_seqs=v >= (0, 20, 0),
        # config/model.py is_prefix_caching_supported: attn_type "hybrid" False until 0.25.1, True from 0.26.0
        prefix_caching_hybrid=v >= (0, 26, 0),
        # models/config.py MambaModelConfig.verify_and_update_config: 0.15.0-0.27.1 mamba_cache_mode "all" if
        # supports_mamba_prefix_caching else "align"; 0.28.0 "align" for every model
        # 0.11.1-0.14.1: supports_mamba_prefix_caching -> mamba_block_size = block_size (MambaSpec keeps
        # cdiv(max_model_len, block) pages), else prefix caching is turned off; 0.11.0 turns it off for every
        # hybrid ("not yet supported")
        all_mode_types=ALL_MODE_TYPES if (0, 11, 1) <= v < (0, 28, 0) else (),
        prefix_caching_for_hybrids=v >= (0, 15, 0),
        # envs.py VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE: default "0" in 0.13.0, "1" in 0.14.0
        chunked_hybrid_manager=v >= (0, 14, 0),
        # platforms/cuda.py check_and_update_config on Hopper: FlashMLA (dense supported) forces 64 for any block
        # != 64 (0.11.0) / % 64 != 0 (0.11.1-0.17.1); 0.18.0 _get_backend_priorities puts FLASH_ATTN_MLA first
        # (get_supported_kernel_block_sizes [MultipleOf(16)]: the default 16 stays; its supported_kv_cache_dtypes
        # are auto / float16 / bfloat16, so fp8 falls to FLASHMLA: 64); FlashMLASparse 64 in every release;
        # 0.34.0: FLASH_ATTN_MLA keeps the new default block 64 (get_preferred_block_size(DEFAULT_BLOCK_SIZE))
        mla_block_bf16=64 if v < (0, 18, 0) or v >= (0, 34, 0) else 16,
        mla_block_fp8=64,
        mla_block_sparse=64,
        # models/config.py DeepseekV32ForCausalLM.verify_and_update_config: 0.11.0 "auto" -> fp8_ds_mla;
        # 0.11.1 on "auto" stays the model dtype; fp8 -> fp8_ds_mla
        v32_auto="fp8_ds_mla" if v < (0, 11, 1) else "auto",
        v32_fp8="fp8_ds_mla",
        # models/config.py NemotronHForCausalLMConfig: absent in 0.12.0; 0.13.0 getattr(hf_config,
        # "mamba_ssm_cache_dtype", "float16"); 0.20.0 update_mamba_ssm_cache_dtype, DEFAULT float32
        nemotron_ssm_default="" if v < (0, 13, 0) else ("float16" if v < (0, 20, 0) else "float32"),
        # MambaSpec.max_memory_usage_bytes in 'align' mode: page x (2 + num_prefill_checkpoint_blocks);
        # 0.32.0 mamba_mixer2.py get_kv_cache_spec sets num_prefill_checkpoint_blocks=1 (Mamba-2: 3 pages);
        # 0.33 qwen_gdn_linear_attn.py get_kv_cache_spec the same for Qwen's GDN (FlashInfer prefill on SM90);
        # OLMo-Hybrid's GDN, Mamba-1, short conv and lightning states declare none (2 pages)
        align_pages={"mamba1": 2, "mamba2": 3 if v >= (0, 32, 0) else 2, "gdn": 3 if v >= (0, 33, 0) else 2,
                     "gdn_olmo": 2, "short_conv": 2, "linear": 2, "kda": 2},
        # _get_kv_cache_groups_uniform_page_size: 0.11.x the smallest count; 0.12.0 "max < min * 1.25";
        # 0.18.0 "max < min * 1.5"
        group_close_ratio=0.0 if v < (0, 12, 0) else (1.25 if v < (0, 18, 0) else 1.5),
        # kv_cache_utils.py unify_kv_cache_spec_page_size: first in 0.12.0
        unify_page_sizes=v >= (0, 12, 0),
        # models/config.py Qwen3_5ForConditionalGenerationConfig: first in 0.17.0 (with Qwen3.5)
        qwen35_ssm_from_config=v >= (0, 17, 0),
        # 0.19.x HybridAttentionMambaModelConfig: kernel_block_alignment_size = 16 (non-MLA);
        # 0.20.0 Platform._align_hybrid_block_size: max(backend's smallest kernel block 16, block_size)
        hybrid_align_to_block=v >= (0, 20, 0),
        qwen_gdn_checkpoint=v >= (0, 33, 0),
    )


# ------------------------------------------------------------------ layers, from the raw config
class Refused(Exception):
    """vLLM refuses this combination (the reason is the message)."""


@dataclass(frozen=True)
class Layer:
    kind: str  # full | sliding | chunked | mla | indexer | mamba
    token_bytes: int = 0  # attention kinds: one token's K and V on this rank
    window: int = 0  # sliding W / chunk C
    state_bytes: int = 0  # mamba: the state tensors of one sequence on this rank
    state_kind: str = ""  # mamba1 | mamba2 | gdn | short_conv


def div(a: int, b: int, what: str) -> int:
    """vllm.distributed.utils.divide: asserts the TP size divides."""
    if a % b:
        raise Refused(f"{what} {a} is not divisible by TP {b}")
    return a // b


def kv_heads_on_rank(kv: int, heads: int, tp: int) -> int:
    """ModelConfig.verify_with_parallel_config (heads % tp) and QKVParallelLinear (kv heads divide
    TP or are replicated: ModelConfig.get_num_kv_heads = max(1, kv // tp))."""
    div(heads, tp, "num_attention_heads")
    if kv >= tp:
        div(kv, tp, "num_key_value_heads")
    elif tp % kv:
        raise Refused(f"TP {tp} is not a multiple of num_key_value_heads {kv}")
    return max(1, kv // tp)


def attention_token(kv: int, heads: int, head_dim: int, tp: int, elem: int) -> int:
    return 2 * kv_heads_on_rank(kv, heads, tp) * head_dim * elem


def mamba1_state(tp, intermediate, d_state, d_conv, elem):
    inner = div(intermediate, tp, "mamba intermediate size")
    return (inner * (d_conv - 1) + inner * d_state) * elem  # conv (K-1, I/tp) + ssm (I/tp, N)


def mamba2_state(tp, intermediate, groups, heads, head_dim, d_state, d_conv, conv_elem, ssm_elem):
    groups = groups if groups % tp == 0 else groups + (tp - groups)  # extra_groups_for_head_shards
    conv_dim = div(intermediate + 2 * groups * d_state, tp, "mamba2 conv dim")
    return (d_conv - 1) * conv_dim * conv_elem + div(heads, tp, "mamba2 heads") * head_dim * d_state * ssm_elem


def gdn_state(tp, k_heads, v_heads, k_dim, v_dim, d_conv, conv_elem, ssm_elem):
    conv_dim = div(k_dim * k_heads * 2 + v_dim * v_heads, tp, "GDN conv dim")
    return (d_conv - 1) * conv_dim * conv_elem + div(v_heads, tp, "GDN value heads") * v_dim * k_dim * ssm_elem


DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


@lru_cache(maxsize=None)
def raw(name: str) -> tuple[dict, dict]:  # read-only: the callers never change the dicts
    cfg = json.loads((SPECS / f"{name}.json").read_text(encoding="utf-8"))
    return cfg, cfg.get("text_config", cfg)


def sliding_full(types: list[str], window: int, token: int) -> list[Layer]:
    return [Layer("sliding", token, window) if t == "sliding" else Layer("full", token) for t in types]


def family_layers(name: str, tp: int, fp8: bool, rel: Release) -> list[Layer]:
    """vLLM's cache layers of one TP rank, from the raw config (transformers' defaults where the
    file omits a field, named in the comment)."""
    cfg, t = raw(name)
    elem = 2  # every family here is served in bf16 (bf16 checkpoints; mamba-2.8b's float32 -> bf16)
    kv_elem = 1 if fp8 else elem
    mt = cfg["model_type"]
    n = t.get("num_hidden_layers", 0)

    def attn():  # no num_key_value_heads: multi-head attention (get_total_num_kv_heads' default)
        heads = t["num_attention_heads"]
        hd = t.get("head_dim") or t["hidden_size"] // heads
        return attention_token(t.get("num_key_value_heads", heads), heads, hd, tp, kv_elem)

    if mt == "gemma2":  # layer_types default: even layers slide
        return sliding_full(["sliding" if (i + 1) % 2 else "full" for i in range(n)], t["sliding_window"], attn())
    if mt in ("gemma3", "gemma3_text"):
        # Gemma3TextConfig defaults: 8 heads, 4 KV heads, head_dim 256, pattern 6 (layer i full when (i+1) % 6 == 0)
        pattern = t.get("sliding_window_pattern", 6)
        types = ["sliding" if (i + 1) % pattern else "full" for i in range(n)]
        return sliding_full(types, t["sliding_window"], attention_token(
            t.get("num_key_value_heads", 4), t.get("num_attention_heads", 8), t.get("head_dim", 256), tp, kv_elem))
    if mt == "gemma3n":
        # gemma3n.py: layers from num_hidden_layers - num_kv_shared_layers on reuse an earlier layer's cache
        # (kv_sharing_target_layer_name: no spec of their own); the rest slide or not by layer_types
        own = n - t["num_kv_shared_layers"]
        types = ["sliding" if x == "sliding_attention" else "full" for x in t["layer_types"][:own]]
        return sliding_full(types, t["sliding_window"], attn())
    if mt == "cohere2":  # commandr.py CohereAttention: per_layer_sliding_window = sliding_window + 1
        types = ["sliding" if (i + 1) % t["sliding_window_pattern"] else "full" for i in range(n)]
        return sliding_full(types, t["sliding_window"] + 1, attn())
    if mt == "exaone4":  # "LLLG": L = local (sliding), G = global
        p = t["sliding_window_pattern"]
        return sliding_full(["sliding" if p[i % len(p)] == "L" else "full" for i in range(n)],
                            t["sliding_window"], attn())
    if mt in ("olmo3", "gpt_oss"):
        types = ["sliding" if x == "sliding_attention" else "full" for x in t["layer_types"]]
        return sliding_full(types, t["sliding_window"], attn())
    if mt == "llama4":  # no_rope_layers empty -> every 4th layer (i+1) % 4 == 0 is global, the rest chunked
        token = attn()
        return [Layer("full", token) if (i + 1) % 4 == 0 else Layer("chunked", token, t["attention_chunk_size"])
                for i in range(n)]
    if mt == "deepseek_v32":
        dtype = rel.v32_fp8 if fp8 else rel.v32_auto
        latent = 656 if dtype == "fp8_ds_mla" else (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * 2
        index = t["index_head_dim"] + t["index_head_dim"] // 128 * 4  # fp8 keys + one fp32 scale per 128
        return [Layer("mla", latent), Layer("indexer", index)] * n
    if mt in ("mamba", "falcon_mamba"):
        state = mamba1_state(tp, t["intermediate_size"], t["state_size"], t["conv_kernel"], elem)
        return [Layer("mamba", state_bytes=state, state_kind="mamba1")] * n
    if mt == "mamba2":
        state = mamba2_state(tp, t["expand"] * t["hidden_size"], t["n_groups"], t["num_heads"],
                             t["head_dim"], t["state_size"], t["conv_kernel"], elem, elem)
        return [Layer("mamba", state_bytes=state, state_kind="mamba2")] * n
    if mt == "jamba":
        state = mamba1_state(tp, t["mamba_expand"] * t["hidden_size"], t["mamba_d_state"], t["mamba_d_conv"], elem)
        token = attn()
        return [Layer("full", token) if i % t["attn_layer_period"] == t["attn_layer_offset"]
                else Layer("mamba", state_bytes=state, state_kind="mamba1") for i in range(n)]
    if mt in ("bamba", "granitemoehybrid"):
        state = mamba2_state(tp, t["mamba_expand"] * t["hidden_size"], t["mamba_n_groups"], t["mamba_n_heads"],
                             t["mamba_d_head"], t["mamba_d_state"], t["mamba_d_conv"], elem, elem)
        token = attn()
        is_attn = ([i in t["attn_layer_indices"] for i in range(n)] if mt == "bamba"
                   else [x == "attention" for x in t["layer_types"]])
        return [Layer("full", token) if a else Layer("mamba", state_bytes=state, state_kind="mamba2") for a in is_attn]
    if mt == "nemotron_h":
        ssm_elem = elem
        if rel.nemotron_ssm_default:  # the config's mamba_ssm_cache_dtype, else the release's default
            ssm_elem = DTYPE_BYTES[t.get("mamba_ssm_cache_dtype", rel.nemotron_ssm_default)]
        state = mamba2_state(tp, t["mamba_num_heads"] * t["mamba_head_dim"], t["n_groups"], t["mamba_num_heads"],
                             t["mamba_head_dim"], t["ssm_state_size"], t["conv_kernel"], elem, ssm_elem)
        token = attn()
        out = []
        for c in t["hybrid_override_pattern"]:  # M: Mamba-2, *: attention, - and E: MLP / MoE (no cache)
            if c == "M":
                out.append(Layer("mamba", state_bytes=state, state_kind="mamba2"))
            elif c == "*":
                out.append(Layer("full", token))
        return out
    if mt == "falcon_h1":  # every layer: attention and Mamba-2 side by side
        inner = t.get("mamba_d_ssm") or int(t["mamba_expand"] * t["hidden_size"])
        state = mamba2_state(tp, inner, t["mamba_n_groups"], t["mamba_n_heads"], t["mamba_d_head"],
                             t["mamba_d_state"], t["mamba_d_conv"], elem, elem)
        token = attn()
        return [Layer("full", token), Layer("mamba", state_bytes=state, state_kind="mamba2")] * n
    if mt == "zamba2":  # 'hybrid' layers: the shared attention block (own KV cache) + Mamba-2
        state = mamba2_state(tp, t["mamba_expand"] * t["hidden_size"], t["mamba_ngroups"], t["n_mamba_heads"],
                             t["mamba_headdim"], t["mamba_d_state"], t["mamba_d_conv"], elem, elem)
        token = attention_token(t["num_key_value_heads"], t["num_attention_heads"], t["attention_head_dim"], tp,
                                kv_elem)  # get_head_size: attention_head_dim
        # Zamba2Model.__init__ builds the shared Zamba2AttentionDecoderLayer blocks (their Attention modules, one
        # per hybrid layer) before the loop over layers_block_type: the attention layers come first in the static
        # forward context, so in the KV cache spec dict (the first group of 0.14-0.18's start check)
        hybrid = sum(1 for kind in t["layers_block_type"] if kind == "hybrid")
        return [Layer("full", token)] * hybrid + [Layer("mamba", state_bytes=state, state_kind="mamba2")] * len(
            t["layers_block_type"])
    if mt in ("qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid"):
        ssm_elem = elem
        if mt != "qwen3_next" and rel.qwen35_ssm_from_config and t.get("mamba_ssm_dtype"):
            ssm_elem = DTYPE_BYTES[t["mamba_ssm_dtype"]]
        state = gdn_state(tp, t["linear_num_key_heads"], t["linear_num_value_heads"], t["linear_key_head_dim"],
                          t["linear_value_head_dim"], t["linear_conv_kernel_dim"], elem, ssm_elem)
        types = t.get("layer_types") or ["full_attention" if (i + 1) % t["full_attention_interval"] == 0
                                         else "linear_attention" for i in range(n)]
        token = attn()
        # OLMo-Hybrid's GDN (olmo_gdn_linear_attn.py) is not Qwen's: no prefill-checkpoint alignment (2 pages)
        kind = "gdn_olmo" if mt == "olmo_hybrid" else "gdn"
        return [Layer("full", token) if x == "full_attention" else Layer("mamba", state_bytes=state, state_kind=kind)
                for x in types]
    if mt == "kimi_linear":
        # kimi_linear.py (0.11.1-0.26) / vllm/models/kimi_k3 (0.27+): layer i is KDA when i + 1 is in
        # linear_attn_config["kda_layers"] (KimiLinearConfig.is_kda_layer), else MLA (one latent of kv_lora_rank +
        # qk_rope_head_dim, replicated). KDA state (mamba_utils.py kda_state_shape / kda_state_dtype): conv
        # (K - 1) x (H x D + 2 x H x D) / tp in the serving dtype, recurrent (H / tp, D, D) in float32
        la = t["linear_attn_config"]
        heads, hd = la["num_heads"], la["head_dim"]
        div(t["num_attention_heads"], tp, "num_attention_heads")
        state = ((la["short_conv_kernel_size"] - 1) * div(3 * heads * hd, tp, "KDA conv dim") * elem
                 + div(heads, tp, "KDA heads") * hd * hd * 4)
        latent = (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * kv_elem
        return [Layer("mamba", state_bytes=state, state_kind="kda") if i + 1 in la["kda_layers"] else Layer("mla", latent)
                for i in range(n)]
    if mt == "gemma4":
        # gemma4.py Gemma4DecoderLayer: full layers use global_head_dim and, under attention_k_eq_v,
        # num_global_key_value_heads (K and V both cached: a plain Attention); sliding layers head_dim and
        # num_key_value_heads
        def gemma4(kind):
            if kind == "full_attention":
                kv = t["num_global_key_value_heads"] if t.get("attention_k_eq_v") else t["num_key_value_heads"]
                return Layer("full", attention_token(kv, t["num_attention_heads"], t["global_head_dim"], tp, kv_elem))
            return Layer("sliding", attention_token(t["num_key_value_heads"], t["num_attention_heads"], t["head_dim"],
                                                    tp, kv_elem), t["sliding_window"])
        return [gemma4(x) for x in t["layer_types"][:n - t.get("num_kv_shared_layers", 0)]]
    if mt in ("minimax", "minimax_m1", "minimax_text_01"):
        # minimax_text_01.py: attn_type_list (1 full, 0 linear) or HF layer_types; the lightning state is
        # linear_attention_state_shape (heads // tp, head_dim, head_dim) in the serving dtype
        kinds = t.get("attn_type_list") or [1 if x == "full_attention" else 0 for x in t["layer_types"]]
        state = t["num_attention_heads"] // tp * t["head_dim"] * t["head_dim"] * elem
        token = attn()
        return [Layer("full", token) if a == 1 else Layer("mamba", state_bytes=state, state_kind="linear")
                for a in kinds]
    if mt in ("lfm2", "lfm2_moe"):
        conv = t["conv_dim"] if mt == "lfm2" else t["hidden_size"]  # short_conv_state_shape(intermediate_size=...)
        state = (t["conv_L_cache"] - 1) * div(conv, tp, "short conv dim") * elem
        is_attn = ([i in t["full_attn_idxs"] for i in range(n)] if mt == "lfm2"
                   else [x == "full_attention" for x in t["layer_types"]])
        token = attn()
        return [Layer("full", token) if a else Layer("mamba", state_bytes=state, state_kind="short_conv")
                for a in is_attn]
    # families whose configs name their fields otherwise; KV heads as each vLLM model file sets them
    if mt in ("bloom", "gpt2", "gptj", "mpt", "dbrx", "chatglm", "falcon", "gpt_bigcode"):
        layers = t.get("n_layer") or t.get("n_layers") or t.get("num_layers") or t["num_hidden_layers"]
        heads = t.get("n_head") or t.get("n_heads") or t["num_attention_heads"]
        hidden = t.get("n_embd") or t.get("d_model") or t["hidden_size"]
        kv = heads  # bloom.py, gpt2.py, gpt_j.py: multi-head
        if mt in ("mpt", "dbrx"):  # mpt.py / dbrx.py: attn_config.kv_n_heads when present
            kv = t["attn_config"].get("kv_n_heads", heads)
        elif mt == "chatglm":  # chatglm.py: multi_query_group_num under multi_query_attention
            kv = t["multi_query_group_num"] if t.get("multi_query_attention") else heads
        elif mt == "falcon":  # falcon.py: num_kv_heads (new decoder), 1 (multi-query), else heads
            kv = t["num_kv_heads"] if t.get("new_decoder_architecture") else (1 if t.get("multi_query") else heads)
        elif mt == "gpt_bigcode":  # 0.11 gpt_bigcode.py: one KV head under multi_query, replicated
            kv = 1 if t.get("multi_query") else heads
        return [Layer("full", attention_token(kv, heads, hidden // heads, tp, kv_elem))] * layers
    if mt == "llava" and "num_hidden_layers" not in t:  # text_config: LlamaConfig's defaults
        return [Layer("full", attention_token(32, 32, 4096 // 32, tp, kv_elem))] * 32
    if mt == "minicpm3":  # minicpm3.py: Attention(heads, qk_nope + qk_rope, num_kv_heads = heads), V padded to it
        width = t["qk_nope_head_dim"] + t["qk_rope_head_dim"]
        return [Layer("full", 2 * div(t["num_attention_heads"], tp, "num_attention_heads") * width * kv_elem)] * n
    if mt == "longcat_flash":  # longcat_flash.py: two MLA attentions (self_attn[0], [1]) in each of num_layers
        div(t["num_attention_heads"], tp, "num_attention_heads")
        return [Layer("mla", (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * kv_elem)] * (2 * t["num_layers"])
    if t.get("kv_lora_rank"):  # MLAAttentionSpec: one latent (kv_lora_rank + rope) per token, on every rank
        div(t["num_attention_heads"], tp, "num_attention_heads")
        return [Layer("mla", (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * kv_elem)] * n
    window = t.get("sliding_window") if t.get("use_sliding_window", True) is not False else None
    if window:  # every layer the same window: one group
        return [Layer("sliding", attn(), window)] * n
    return [Layer("full", attn())] * n


# ------------------------------------------------------------------ vLLM's accounting, transcribed
@dataclass(frozen=True)
class Spec:
    kind: str
    block: int
    page: int
    window: int = 0
    pages_per_request: int = 1  # mamba

    def worst_pages(self, max_len: int, in_flight: int) -> int:
        """cdiv(max_memory_usage_bytes, page_size_bytes)."""
        if self.kind == "mamba":
            return self.pages_per_request
        if self.kind == "sliding":
            return cdiv(min(self.window - 1 + in_flight, max_len), self.block) + 1
        if self.kind == "chunked":
            return cdiv(min(self.window + in_flight, max_len), self.block)
        return cdiv(max_len, self.block)


def specs_of(layers: list[Layer], rel: Release, fp8: bool, max_len: int, user_block: int | None = None) -> list[Spec]:
    """user_block: --block-size (None: CacheConfig.DEFAULT_BLOCK_SIZE, 16; 64 from 0.34)."""
    kinds = {x.kind for x in layers}
    block = user_block or rel.default_block
    if "mla" in kinds:
        sparse = "indexer" in kinds
        wanted = rel.mla_block_sparse if sparse else (rel.mla_block_fp8 if fp8 else rel.mla_block_bf16)
        v = _v(rel.version)
        if user_block is None or v < (0, 11, 1):  # 0.11.0 cuda.py: FlashMLA(Sparse) turns any block != 64 into 64
            block = wanted
        elif v < (0, 18, 0):  # 0.11.1-0.17.1: FlashMLA keeps a multiple of 64; FlashMLASparse exactly 64
            block = 64 if (sparse and block != 64) or block % 64 else block
        else:  # 0.18.0 update_block_size_for_backend: user_specified_block_size -> kept
            assert not sparse, "a user's block for FlashMLASparse from 0.18 is not transcribed"
    # Kimi-Linear: no K/V attention, the MLA layers are the attention the state is aligned to (use_mla)
    attention = [x for x in layers if x.kind in ("full", "sliding", "chunked")] or [x for x in layers if x.kind == "mla"]
    states = [x for x in layers if x.kind == "mamba"]
    mamba_block, mamba_page, pages = max_len, None, 1
    if states and attention:
        state_page = max(x.state_bytes for x in states)
        token = attention[0].token_bytes
        kind = states[0].state_kind
        gdn_checkpoint = kind == "gdn" and rel.align_mode and rel.qwen_gdn_checkpoint
        # 0.11-0.19 HybridAttentionMambaModelConfig / 0.20+ Platform._align_hybrid_block_size (mamba_cache_mode
        # none or align): attn_block_size = align x cdiv(mamba page, align x one token's attention page), the
        # block raised to it when smaller; align 16, from 0.20 max(16, block_size), in 0.33 with Qwen's GDN
        # checkpoint lcm(that, 64)
        align = max(16, block) if rel.hybrid_align_to_block else 16
        if attention[0].kind == "mla":
            v = _v(rel.version)
            if v < (0, 20, 0):  # HybridAttentionMambaModelConfig, use_mla: 64 (128 only under CUTLASS_MLA)
                align = 64
            else:  # _align_hybrid_block_size: max(MLA backend's smallest kernel block (FLASH_ATTN_MLA 16,
                # FLASHMLA 64 = the block chosen above), block size); 0.27.0 adds max(that, 128) for use_mla
                align = max(128, block) if v >= (0, 27, 0) else block
            # KDA's prefill checkpoint (0.32+ get_kv_cache_spec): FlashKDA only, which needs gate_lower_bound in
            # linear_attn_config (resolve_kda_prefill_backend); without it Triton: no checkpoint, 2 pages
        if gdn_checkpoint:
            align = lcm(align, 64)
        block = max(block, align * cdiv(state_page, align * token))
        mamba_page = block * token
        if rel.align_mode:  # mamba_block_size = block_size; 2 (+ prefill checkpoint) pages per request
            mamba_block, pages = block, rel.align_pages[kind]
    out = []
    for x in layers:
        if x.kind == "mamba":
            out.append(Spec("mamba", mamba_block, mamba_page or x.state_bytes, pages_per_request=pages))
        else:
            out.append(Spec(x.kind, block, block * x.token_bytes, x.window))
    return out


FULL_LIKE = ("full", "mla", "indexer")


def uniform_type(specs: list[Spec]) -> bool:
    """UniformTypeKVCacheSpecs.is_uniform_type."""
    if len({s.block for s in specs}) > 1:
        return False
    first = specs[0]
    if first.kind in FULL_LIKE:
        return all(s.kind in FULL_LIKE for s in specs)
    if first.kind == "mamba":
        return all(s.kind == "mamba" and s.page == first.page for s in specs)
    return all(s.kind == first.kind and s.window == first.window for s in specs)


def reference(layers: list[Layer], rel: Release, fp8: bool, mem: int, max_len: int, block: int | None = None,
              max_num_seqs: int = 1024):
    """(num_blocks, tokens, concurrency text, fits) as the release computes them (max_num_seqs: the
    `vllm serve` default on an H100-class GPU unless given)."""
    in_flight = rel.in_flight_batches * MNBT
    specs = specs_of(layers, rel, fp8, max_len, block)
    check_specs = list(specs)  # 0.11 checks the specs before the hybrid manager's unification
    kinds = {s.kind for s in specs}
    if "chunked" in kinds and "full" in kinds and not rel.chunked_hybrid_manager:
        # hybrid KV cache manager off: unify_hybrid_kv_cache_specs turns chunked layers into full ones
        specs = [Spec("full", s.block, s.page) if s.kind == "chunked" else s for s in specs]
    if all(s == specs[0] for s in specs):
        groups = [(specs[0], len(specs))]
        bytes_per_block = specs[0].page * len(specs)
        per_request = specs[0].worst_pages(max_len, in_flight)
    elif uniform_type(specs):
        groups = [(specs[0], len(specs))]
        bytes_per_block = sum(s.page for s in specs)
        per_request = max(s.worst_pages(max_len, in_flight) for s in specs)
    else:
        largest = max(s.page for s in specs)
        if any(s.page != largest for s in specs):
            if not rel.unify_page_sizes:
                raise Refused(f"vLLM {rel.version}: page sizes differ, get_kv_cache_groups raises NotImplementedError")
            unified = []
            for s in specs:  # unify_kv_cache_spec_page_size: larger block, or a padded Mamba page
                if s.page == largest or s.kind == "mamba":
                    unified.append(Spec(s.kind, s.block, largest, s.window, s.pages_per_request))
                else:
                    assert largest % s.page == 0, "vLLM pads such a page (not met in this grid)"
                    unified.append(Spec(s.kind, s.block * (largest // s.page), largest, s.window))
            specs = unified
        counts: dict[Spec, int] = {}
        for s in specs:
            counts[s] = counts.get(s, 0) + 1
        size = min(counts.values())
        if max(counts.values()) < size * rel.group_close_ratio:
            size = max(counts.values())
        groups = []
        for spec, count in counts.items():
            groups += [(spec, size)] * cdiv(count, size)
        bytes_per_block = largest * size
        per_request = sum(spec.worst_pages(max_len, in_flight) for spec, _ in groups)
    blocks = mem // bytes_per_block
    concurrency = blocks / per_request
    if rel.tokens_from_concurrency:
        tokens = int(concurrency * max_len)
    else:
        tokens = blocks // len(groups) * min(spec.block for spec, _ in groups)
    if rel.start_check == "layers":  # every layer's max_memory_usage_bytes, before grouping
        fits = sum(s.worst_pages(max_len, in_flight) * s.page for s in check_specs) <= mem
    else:
        if rel.start_check == "first_group" and len(groups) > 1:  # kv_cache_groups[0]'s worst case only
            need = bytes_per_block * groups[0][0].worst_pages(max_len, in_flight)
        else:  # one group: its layers' sum; several: the sum over groups, x bytes per block
            need = bytes_per_block * per_request
        fits = need <= mem - (bytes_per_block if rel.null_block_in_check else 0)
    if fits and rel.mamba_blocks_cover_seqs and "mamba" in kinds and blocks < max_num_seqs:
        fits = False  # "max_num_seqs (1024) exceeds available Mamba cache blocks"
    return blocks, tokens, f"{concurrency:.2f}x", fits


# ------------------------------------------------------------------ the families
# one kind of layer (one group): anchors by hand in tests/test_engine_vllm.py (Llama-3.1-8B 5,120 blocks,
# DeepSeek-V3 2,387 / 9,549 / 4,774 blocks)
DENSE = ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-8b", "qwen2.5-7b", "mistral-7b-v0.3",
         "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-llm-67b", "llama-2-7b", "gemma-7b", "qwen2-57b-a14b"]
MLA = ["deepseek-v3", "kimi-k2", "deepseek-v2-lite", "longcat-flash-chat"]
MORE_DENSE = ["deepseek-v2", "glm-4-9b-0414", "glm-4-9b-chat-hf", "glm-4.5-air", "glm-4.7-flash", "glm-4.7",
              "internlm2.5-7b-chat", "internlm3-8b-instruct", "minimax-m2", "mistral-small-3.1-24b", "phi-4",
              "qwen2.5-vl-7b", "qwen3-vl-30b-a3b", "qwen3-vl-4b", "qwen3-vl-8b", "stablelm-2-1.6b", "opt-6.7b",
              "pythia-1b", "baichuan2-7b-chat", "persimmon-8b-base", "bloom", "gpt2", "gpt-j-6b", "mpt-7b-instruct",
              "dbrx-instruct", "chatglm3-6b", "glm-4-9b-chat", "falcon-7b", "falcon-40b", "starcoder", "llava-1.5-7b",
              "minicpm3-4b"]
SLIDING = ["mistral-7b-v0.1", "phi-3-mini-4k"]
SLIDING_HYBRID = ["gemma-2-9b", "gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "gemma-3n-e4b",
                  "command-r7b", "exaone-4.0-32b", "olmo-3-7b", "gpt-oss-20b", "gpt-oss-120b"]
CHUNKED = ["llama-4-scout", "llama-4-maverick"]
MAMBA_HYBRID = ["jamba-v0.1", "bamba-9b", "granite-4.0-h-tiny", "granite-4.0-h-small", "nemotron-h-8b",
                "nemotron-3-nano-30b-a3b", "falcon-h1-7b", "zamba2-2.7b"]
PURE_MAMBA = ["mamba-2.8b", "mamba-codestral-7b", "falcon-mamba-7b"]
GDN = ["qwen3-next-80b-a3b", "qwen3.5-35b-a3b", "qwen3.6-27b", "olmo-hybrid-7b"]
SHORT_CONV = ["lfm2-1.2b", "lfm2-8b-a1b"]
SPARSE_MLA = ["deepseek-v3.2-exp"]
# Gemma 4 (0.19+): 256-wide sliding + 512-wide global layers. models/config.py Gemma4Config forces TRITON_ATTN
# (0.19-0.25) or FA4 for every layer (0.26+, Triton without FA4); both take any multiple of 16, so the default
# block 16 stays and the global layers' block doubles when pages unify. 0.31+ fp8 on SM90: see not_modelled.
# Kimi-Linear (0.11.1+): MLA + KDA, see family_layers and specs_of.
MIXED = ["gemma-4-31b", "kimi-linear-48b-a3b"]
LIGHTNING = ["minimax-text-01", "minimax-m1", "minimax-m1-hf"]
# Which release serves which family: kvplan/engines/vllm_registry_data.py, generated from
# vllm/model_executor/models/registry.py of every release 0.11.0 ... 0.33.0 by benchmarks/vllm_registry_table.py
# (data read from vLLM, not from kvplan's accounting; test_vllm_registry.py checks entries against the registry
# text). A family is in the grid at a release whose registry maps its config's architectures[0] to a vLLM model
# file ('native'); the Transformers backend (e.g. GPTBigCodeForCausalLM from 0.25.0) is not transcribed.
# E.g. Kimi-Linear from 0.11.1, Qwen3.5 from 0.17.0, OLMo-Hybrid from 0.18.0, Gemma 4 from 0.19.0; Bamba and
# MiniMax-Text-01 / M1 gone from 0.24.0, Baichuan and StarCoder from 0.25.0, Persimmon 0.26.0, MPT 0.29.0.
def not_served(name: str, rel: Release) -> str | None:
    """Why vLLM `rel` does not serve the family natively (None: it does)."""
    arch = raw(name)[0]["architectures"][0]
    native, _backend = REGISTRY[arch]  # KeyError: a grid family's architecture missing from the generated table
    v = _v(rel.version)
    if any(_v(first) <= v and (end is None or v < _v(end)) for first, end in native):
        return None
    return f"vLLM {rel.version}'s registry does not map {arch} to a vLLM model file (native: {native})"


def test_grid_families_are_in_the_registry_table():
    # every family the grid checks is native in some release (else the grid would skip it everywhere)
    for name in FAMILIES:
        assert REGISTRY[raw(name)[0]["architectures"][0]][0], name


# Not in this grid:
# - gpt-neo-125m, xglm-1.7b, recurrentgemma-*, rwkv-*, zamba-7b-v1: no vLLM architecture (GPTNeoForCausalLM,
#   XGLMForCausalLM, RecurrentGemmaForCausalLM, RwkvForCausalLM, ZambaForCausalLM are in neither registry);
#   llama-3.2-11b-vision: MllamaForConditionalGeneration was removed in 0.10.2 (0.33's removed-models table).
NOT_IN_GRID = {
    "gpt-neo-125m": "no vLLM architecture", "xglm-1.7b": "no vLLM architecture",
    "recurrentgemma-2b-it": "no vLLM architecture", "recurrentgemma-9b": "no vLLM architecture",
    "rwkv-4-430m-pile": "no vLLM architecture", "rwkv-4-7b-pile": "no vLLM architecture",
    "rwkv-4-world-169m": "no vLLM architecture", "zamba-7b-v1": "no vLLM architecture",
    "llama-3.2-11b-vision": "Mllama removed in 0.10.2",
    "deepseek-v4-flash": "its own pool (vllm_dsv4.py, 0.30+), checked against vLLM's planner in test_deepseek_v4.py",
    "deepseek-v4-pro": "its own pool (vllm_dsv4.py, 0.30+), checked against vLLM's planner in test_deepseek_v4.py",
    "deepseek-v4.1-flash": "its own pool (vllm_dsv41.py, 0.33), checked against vLLM's planner in test_deepseek_v41.py",
}
FAMILIES = (DENSE + MLA + MORE_DENSE + SLIDING + SLIDING_HYBRID + CHUNKED + MAMBA_HYBRID + PURE_MAMBA + GDN
            + SHORT_CONV + SPARSE_MLA + LIGHTNING + MIXED)


FULL_AXES = ((1, 2, 4, 8), ("auto", "fp8"), (10, 40), (8192, 131072))


def grid_cases(name: str):
    """The issue's whole product for 0.11 and 0.33; for the releases between, the same axes (the grid is
    cheap enough to run whole: see the module docstring for the time)."""
    for rules in RULES:
        for tp, dtype, gib, max_len in itertools.product(*FULL_AXES):
            yield tp, dtype, gib, max_len, rules


@lru_cache(maxsize=None)
def hybrid_of(name: str) -> bool:
    kinds = {x.kind for x in family_layers(name, 1, False, release(V0_33))}
    return "mamba" in kinds and bool(kinds & {"full", "sliding", "chunked", "mla"})


def not_modelled(name: str, rel: Release, fp8: bool = False) -> str | None:
    """Why kvplan does not model this family at this release (None: it does)."""
    cfg, t = raw(name)
    model_type = cfg["model_type"]
    if model_type == "gemma4" and fp8 and (0, 31, 0) <= _v(rel.version) and rel.default_block % 64:
        # 0.31.0 flash_attn.py _get_sm90_fa4_fp8_kv_block_size: SM90 + fp8 KV + head 512 under FA4 -> a 64-token
        # kernel page for the global layers (Gemma4Config: per-layer FA3/FA4 on SM90 with fp8); how the block
        # manager meets it (the global layers' block is 32 after unification) was not read to the end. 0.34's
        # default block 64 (128 for the global layers after unification) is a multiple of that page: modelled
        return f"vLLM {rel.version}: fp8 KV at head size 512 on Hopper uses FA4's 64-token kernel page"
    if model_type == "nemotron_h" and "mamba_ssm_cache_dtype" not in t and rel.nemotron_ssm_default == "float16":
        # 0.13.0-0.19.x: getattr(hf_config, "mamba_ssm_cache_dtype", "float16"). The attribute's presence depends on
        # the config class that loads the checkpoint, not on config.json: the Hub's remote-code NemotronHConfig
        # (and vLLM's adapted transformers_utils/configs/nemotron_h.py) define none -> float16; transformers' own
        # NemotronHConfig (added 2026-03, transformers 5.x) defaults it to float32, which kvplan's reader applies
        return (f"vLLM {rel.version}: Nemotron-H's SSM dtype depends on the config class (float16 under the Hub's "
                "remote code, float32 under transformers 5.x's NemotronHConfig); config.json names none")
    if rel.prefix_caching_hybrid and model_type in rel.all_mode_types and hybrid_of(name):
        return (f"vLLM {rel.version} turns prefix caching on for hybrids and gives {model_type} Mamba cache mode "
                "'all' (a state page per block): kvplan says 'not modelled'")
    return None


def test_every_bundled_family_is_in_the_grid_or_says_why_not():
    bundled = {p.stem for p in SPECS.glob("*.json")} - {"index", "weights"}
    assert bundled == set(FAMILIES) | set(NOT_IN_GRID), sorted(bundled ^ (set(FAMILIES) | set(NOT_IN_GRID)))
    assert len(FAMILIES) == len(set(FAMILIES))


@pytest.mark.parametrize("name", FAMILIES)
def test_grid_matches_vllms_formulas(name):
    base = load_model(name)
    models = {dtype: apply_kv_dtype(base, dtype)[0] for dtype in FULL_AXES[1]}
    layers = {}  # family_layers by (TP, dtype, release): the same at every memory size and length
    checked, releases, wrong = 0, set(), []
    for tp, dtype, gib, max_len, rules in grid_cases(name):
        rel = release(rules)
        if not_served(name, rel):
            continue
        why = not_modelled(name, rel, dtype == "fp8")
        if why and "kernel page" in why:  # kvplan says so in a note
            p = simulate(models[dtype], kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                         allow_long_max_model_len=True)
            assert any(n.startswith("not modelled: vLLM") and "head size 512" in n for n in p.notes), rel.version
            continue
        if why and "Mamba cache mode 'all'" not in why:
            continue
        if why:
            p = simulate(models[dtype], kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                         allow_long_max_model_len=True)
            assert any(n.startswith("not modelled: with prefix caching") for n in p.notes), (name, rel.version)
            continue
        try:
            if (tp, dtype, rel.version) not in layers:
                layers[tp, dtype, rel.version] = family_layers(name, tp, dtype == "fp8", rel)
            expected = reference(layers[tp, dtype, rel.version], rel, dtype == "fp8", gib * GIB, max_len)
        except Refused:
            continue
        p = simulate(models[dtype], kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                     allow_long_max_model_len=True)
        got = (p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text, p.fits)
        if any(n.startswith("not modelled") for n in p.notes):
            got += ("kvplan says not modelled",)
        if got != expected:
            wrong.append((rules.version, tp, dtype, gib, max_len, got, expected))
        checked += 1
        releases.add(rel.version)
    assert not wrong, (name, len(wrong), wrong[:6])
    assert checked >= 16, (name, checked)  # at least TP 1 and 2 in both dtypes, sizes and lengths (one release)


# ------------------------------------------------------------------ anchors worked by hand
# Each line: (family, release, GiB, max_model_len) -> (num_blocks, tokens, concurrency, starts), TP 1, KV auto,
# 8,192 batched tokens. The arithmetic, from the raw config.json numbers:
#
# gemma-3-12b, 0.33, 40 GiB, 131,072: token = 2 x 8 KV heads x 256 (Gemma3TextConfig default head_dim) x 2 B
#   = 8,192 B; page = 16 x 8,192 = 131,072 B. 48 layers, pattern 6: 40 sliding (W 1,024) + 8 full -> group
#   size 8 -> 5 sliding groups + 1 full. A block costs 8 x 131,072 = 1 MiB -> 40 GiB / 1 MiB = 40,960 blocks.
#   A request: sliding cdiv(min(1,023 + 2 x 8,192, 131,072), 16) + 1 = cdiv(17,407, 16) + 1 = 1,089, x 5 =
#   5,445; full 131,072 / 16 = 8,192 -> 13,637. 40,960 / 13,637 = 3.0036 -> "3.00x"; tokens
#   int(40,960 x 131,072 / 13,637) = int(393,686.96) = 393,686; 13,637 x 1 MiB <= 40 GiB - 1 MiB: starts.
# gpt-oss-20b, 0.11, 10 GiB, 131,072: token = 2 x 8 x 64 x 2 = 2,048 B, page 32,768 B; 12 sliding (W 128) +
#   12 full -> 2 groups of 12; a block 12 x 32,768 = 393,216 B -> 10,737,418,240 // 393,216 = 27,306.
#   A request: cdiv(min(127 + 8,192, 131,072), 16) + 1 = 520 + 1 = 521, plus 8,192 -> 8,713;
#   27,306 / 8,713 = 3.134 -> "3.13x"; tokens 27,306 // 2 groups x 16 = 218,448; every layer's worst case
#   12 x 8,713 x 32,768 = 3,426,025,472 B <= 10 GiB: starts.
# jamba-v0.1, 0.11, 10 GiB, 8,192: Mamba-1 state, I = 2 x 4,096 = 8,192: conv (3, 8,192) + SSM (8,192, 16) =
#   155,648 elements x 2 B = 311,296 B; attention token 2 x 8 x 128 x 2 = 4,096 B -> block 16 x cdiv(311,296,
#   16 x 4,096) = 16 x 5 = 80, page 80 x 4,096 = 327,680 B (the state padded to it). Layers i % 8 == 4 attend:
#   4 attention + 28 Mamba -> group size 4: 1 + 7 groups; a block 4 x 327,680 = 1,310,720 B -> 8,192 blocks.
#   A request: cdiv(8,192, 80) = 103 + 7 x 1 = 110 -> 74.47x; tokens 8,192 // 8 x min(80, 8,192) = 81,920.
# qwen3-next-80b-a3b, 0.33, 10 GiB, 131,072: GDN conv dim 128 x 16 x 2 + 128 x 32 = 8,192 -> conv 3 x 8,192
#   = 24,576 + SSM 32 x 128 x 128 = 524,288 elements x 2 B = 1,097,728 B; attention token 2 x 2 x 256 x 2 =
#   2,048 B; FlashInfer's checkpoint alignment: lcm(16, 64) = 64 -> block 64 x cdiv(1,097,728, 64 x 2,048) =
#   64 x 9 = 576, page 1,179,648 B. 12 full + 36 GDN -> 1 + 3 groups of 12; a block 12 x 1,179,648 =
#   14,155,776 B -> 758 blocks. A request: cdiv(131,072, 576) = 228 + 3 groups x 3 pages = 237 -> 3.20x;
#   tokens int(758 x 131,072 / 237) = int(419,209.3) = 419,209.
# nemotron-h-8b, 0.33, 10 GiB, 8,192: Mamba-2, I = 128 x 64 = 8,192, 8 groups: conv dim 8,192 + 2 x 8 x 128
#   = 10,240 -> conv 3 x 10,240 x 2 B = 61,440 B; SSM 128 x 64 x 128 x 4 B (float32 from 0.33) = 4,194,304 B;
#   state 4,255,744 B. Token 2 x 8 x 128 x 2 = 4,096 -> block 16 x cdiv(4,255,744, 65,536) = 16 x 65 = 1,040,
#   page 4,259,840 B. 24 'M' + 4 '*' -> 6 + 1 groups of 4; a block 17,039,360 B -> 630 blocks. A request:
#   cdiv(8,192, 1,040) = 8 + 6 x 3 = 26 -> 24.23x; tokens int(630 x 8,192 / 26) = 198,498.
# granite-4.0-h-tiny, 0.33, 10 GiB, 131,072: Mamba-2, I = 2 x 1,536 = 3,072, 1 group: conv dim 3,072 + 2 x
#   128 = 3,328 -> 3 x 3,328 = 9,984 + SSM 48 x 64 x 128 = 393,216 elements x 2 B = 806,400 B; token 2 x 4 x
#   128 x 2 = 2,048 -> block 16 x cdiv(806,400, 32,768) = 400, page 819,200 B; 4 attention + 36 Mamba ->
#   1 + 9 groups of 4, a block 3,276,800 B -> 3,276 blocks; a request cdiv(131,072, 400) = 328 + 9 x 3 = 355
#   -> 9.23x; tokens int(3,276 x 131,072 / 355) = int(1,209,554.6) = 1,209,554.
# llama-4-scout, 0.11, 10 GiB, 131,072: hybrid manager off (chunked attention), 48 layers x 65,536 B per
#   block = 3,145,728 B -> 3,413 blocks; a request 8,192 blocks -> 0.42x; tokens 3,413 x 16 = 54,608. vLLM
#   still starts: check_enough_kv_cache_memory runs before the unification, on 36 chunked layers x
#   cdiv(min(8,192 + 8,192, 131,072), 16) = 1,024 pages + 12 full x 8,192 pages, x 65,536 B = 8,858,370,048 B
#   <= 10,737,418,240 B.
# kimi-linear-48b-a3b, 0.33, 10 GiB, 131,072: KDA state: conv 3 x (4,096 + 2 x 4,096) = 36,864 x 2 B = 73,728 B
#   + recurrent 32 x 128 x 128 x 4 B (float32) = 2,097,152 B -> 2,170,880 B. MLA token (512 + 64) x 2 = 1,152 B.
#   Alignment: FLASH_ATTN_MLA's 16, max(16, 128) = 128 (use_mla); 'align' mode, no KDA checkpoint (no
#   gate_lower_bound: Triton prefill) -> block 128 x cdiv(2,170,880, 128 x 1,152 = 147,456) = 128 x 15 = 1,920,
#   page 2,211,840 B. 7 MLA + 20 KDA -> 1 + 3 groups of 7; a block 7 x 2,211,840 = 15,482,880 B ->
#   10,737,418,240 // 15,482,880 = 693 blocks. A request cdiv(131,072, 1,920) = 69 + 3 x 2 = 75 -> 9.24x;
#   tokens int(693 x 131,072 / 75) = int(1,211,105.3) = 1,211,105; 75 blocks fit.
# gemma-4-31b, 0.33, 40 GiB, 131,072: sliding token 2 x 16 x 256 x 2 = 16,384 B (page 262,144 B), global
#   token 2 x 4 x 512 x 2 = 8,192 B (page 131,072 B -> block 32, page 262,144 B). 50 sliding + 10 full ->
#   5 + 1 groups of 10, a block 2,621,440 B -> 42,949,672,960 // 2,621,440 = 16,384 blocks. A request: sliding
#   cdiv(min(1,023 + 16,384, 131,072), 16) + 1 = 1,089 x 5 = 5,445, full 131,072 / 32 = 4,096 -> 9,541;
#   16,384 / 9,541 = 1.717 -> "1.72x"; tokens int(2,147,483,648 / 9,541) = 225,079; starts.
ANCHORS = [
    ("kimi-linear-48b-a3b", V0_33, 10, 131_072, (693, 1_211_105, "9.24x", True)),
    ("gemma-4-31b", V0_33, 40, 131_072, (16_384, 225_079, "1.72x", True)),
    ("gemma-3-12b", V0_33, 40, 131_072, (40_960, 393_686, "3.00x", True)),
    ("gpt-oss-20b", V0_11, 10, 131_072, (27_306, 218_448, "3.13x", True)),
    ("jamba-v0.1", V0_11, 10, 8_192, (8_192, 81_920, "74.47x", True)),
    ("qwen3-next-80b-a3b", V0_33, 10, 131_072, (758, 419_209, "3.20x", True)),
    ("nemotron-h-8b", V0_33, 10, 8_192, (630, 198_498, "24.23x", True)),
    ("granite-4.0-h-tiny", V0_33, 10, 131_072, (3_276, 1_209_554, "9.23x", True)),
    ("llama-4-scout", V0_11, 10, 131_072, (3_413, 54_608, "0.42x", True)),
]


@pytest.mark.parametrize("name, rules, gib, max_len, expected", ANCHORS, ids=[a[0] for a in ANCHORS])
def test_hand_worked_anchors(name, rules, gib, max_len, expected):
    # --max-num-seqs 256: the anchors are about memory; the 0.20+ Mamba rule (blocks >= max_num_seqs) has its own
    rel = release(rules)
    assert reference(family_layers(name, 1, False, rel), rel, False, gib * GIB, max_len, max_num_seqs=256) == expected
    p = simulate(load_model(name), kv_memory_bytes=gib * GIB, max_model_len=max_len, rules=rules,
                 allow_long_max_model_len=True, max_num_seqs=256)
    assert (p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text, p.fits) == expected


# ------------------------------------------------------------------ anchors at the boundaries between releases
# TP 1, KV auto, 8,192 batched tokens; (family, rule object, GiB, max_model_len, --block-size or None) -> (num_blocks,
# tokens, concurrency, starts). Worked by hand from the raw config.json numbers:
#
# gpt-oss-20b, 2 GiB, 131,072 (start check: 0.13 'layers', 0.14 'first_group', 0.19 'groups'): token 2 x 8 KV
#   heads x 64 x 2 B = 2,048 B, page 32,768 B; 12 sliding (W 128) + 12 full, layer 0 sliding -> 2 groups of 12,
#   the sliding one first; a block costs 12 x 32,768 = 393,216 B -> 2,147,483,648 // 393,216 = 5,461 blocks.
#   A request: sliding cdiv(min(127 + 8,192, 131,072), 16) + 1 = 520 + 1 = 521, full 131,072 / 16 = 8,192 ->
#   8,713; 5,461 / 8,713 = 0.6268 -> "0.63x"; tokens 5,461 // 2 x 16 = 43,680 (all three before 0.20.1).
#   0.13: every layer's worst case 12 x 521 x 32,768 + 12 x 8,192 x 32,768 = 204,865,536 + 3,221,225,472 =
#   3,426,091,008 B > 2 GiB: refuses. 0.14: only the first (sliding) group, 393,216 x 521 = 204,865,536 B:
#   starts. 0.19: every group, 393,216 x 8,713 = 3,426,091,008 B: refuses again.
# qwen3-next-80b-a3b, 10 GiB, 131,072, --block-size 64 (hybrid block alignment: 16 until 0.19, max(16, block)
#   from 0.20): GDN state 1,097,728 B (see the 0.33 anchor above), attention token 2 x 2 x 256 x 2 = 2,048 B.
#   0.19: 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 = 544 > 64 -> block 544, page 1,114,112 B; 12 full + 36
#   GDN -> 1 + 3 groups of 12, a block 13,369,344 B -> 803 blocks; a request cdiv(131,072, 544) = 241 + 3 x 1
#   (prefix caching off) = 244 -> 803 / 244 = 3.291 -> "3.29x"; tokens 803 // 4 x 544 = 200 x 544 = 108,800;
#   13,369,344 x 244 = 3,262,119,936 B <= 10 GiB: starts.
#   0.20: 64 x cdiv(1,097,728, 64 x 2,048) = 64 x 9 = 576 -> page 1,179,648 B, a block 14,155,776 B -> 758
#   blocks; a request cdiv(131,072, 576) = 228 + 3 = 231 -> 3.2814 -> "3.28x"; tokens 758 // 4 x 576 = 189 x
#   576 = 108,864; 14,155,776 x 231 = 3,269,984,256 B: starts.
# qwen3-next-80b-a3b, 10 GiB, 131,072, block 16 (prefix caching: off for hybrids until 0.25, on from 0.26 ->
#   Mamba cache mode 'align', 2 state pages): block 544, 803 blocks as above. 0.25: a request 241 + 3 x 1 = 244
#   -> "3.29x", tokens int(803 x 131,072 / 244) = int(431,355.8) = 431,355. 0.26: 241 + 3 x 2 = 247 -> 803 / 247
#   = 3.2510 -> "3.25x", tokens int(105,250,816 / 247) = int(426,116.7) = 426,116. Both start (3.3 GB).
# granite-4.0-h-tiny, 10 GiB, 131,072 (Mamba-2 in 'align' mode: 2 pages from 0.28, where every model gets
#   'align'; 3 from 0.32, a prefill checkpoint): block 400, page 819,200 B, 1 + 9 groups of 4, 3,276 blocks (the
#   0.33 anchor above). 0.25 (prefix caching off): a request cdiv(131,072, 400) = 328 + 9 = 337 -> 3,276 / 337 =
#   9.721 -> "9.72x", tokens int(429,391,872 / 337) = int(1,274,159.9) = 1,274,159. 0.28: 328 + 9 x 2 = 346 ->
#   9.468 -> "9.47x", tokens int(429,391,872 / 346) = int(1,241,016.97) = 1,241,016. 0.32: 328 + 27 = 355 ->
#   "9.23x", 1,209,554 (as 0.33). All start.
# kimi-linear-48b-a3b, 10 GiB, 131,072 (MLA hybrid alignment: 64 until 0.19, the backend's 16 from 0.20, 128
#   from 0.27): 0.19: 64 x cdiv(2,170,880, 64 x 1,152 = 73,728) = 64 x 30 = 1,920 -> 693 blocks (as above); a
#   request 69 + 3 x 1 (prefix caching off) = 72 -> 693 / 72 = 9.625 -> "9.62x"; tokens 693 // 4 x 1,920 =
#   173 x 1,920 = 332,160. 0.20: 16 x cdiv(2,170,880, 18,432) = 16 x 118 = 1,888, page 2,174,976 B, a block
#   15,224,832 B -> 705 blocks; a request cdiv(131,072, 1,888) = 70 + 3 = 73 -> 9.658 -> "9.66x"; tokens
#   705 // 4 x 1,888 = 176 x 1,888 = 332,288.
BOUNDARY_ANCHORS = [
    ("kimi-linear-48b-a3b", V0_19, 10, 131_072, None, (693, 332_160, "9.62x", True)),
    ("kimi-linear-48b-a3b", V0_20, 10, 131_072, None, (705, 332_288, "9.66x", True)),
    ("gpt-oss-20b", V0_13, 2, 131_072, None, (5_461, 43_680, "0.63x", False)),
    ("gpt-oss-20b", V0_14, 2, 131_072, None, (5_461, 43_680, "0.63x", True)),
    ("gpt-oss-20b", V0_19, 2, 131_072, None, (5_461, 43_680, "0.63x", False)),
    ("qwen3-next-80b-a3b", V0_19, 10, 131_072, 64, (803, 108_800, "3.29x", True)),
    ("qwen3-next-80b-a3b", V0_20, 10, 131_072, 64, (758, 108_864, "3.28x", True)),
    ("qwen3-next-80b-a3b", V0_25, 10, 131_072, None, (803, 431_355, "3.29x", True)),
    ("qwen3-next-80b-a3b", V0_26, 10, 131_072, None, (803, 426_116, "3.25x", True)),
    ("granite-4.0-h-tiny", V0_25, 10, 131_072, None, (3_276, 1_274_159, "9.72x", True)),
    ("granite-4.0-h-tiny", V0_28, 10, 131_072, None, (3_276, 1_241_016, "9.47x", True)),
    ("granite-4.0-h-tiny", V0_32, 10, 131_072, None, (3_276, 1_209_554, "9.23x", True)),
]


@pytest.mark.parametrize("name, rules, gib, max_len, block, expected", BOUNDARY_ANCHORS,
                         ids=[f"{a[0]}@{a[1].version}" for a in BOUNDARY_ANCHORS])
def test_boundary_anchors(name, rules, gib, max_len, block, expected):
    rel = release(rules)  # --max-num-seqs 256, as above
    assert reference(family_layers(name, 1, False, rel), rel, False, gib * GIB, max_len, block, 256) == expected
    p = simulate(load_model(name), kv_memory_bytes=gib * GIB, max_model_len=max_len, rules=rules,
                 block_tokens=block, allow_long_max_model_len=True, max_num_seqs=256)
    assert (p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text, p.fits) == expected


def test_close_layer_counts_group_by_release():
    # 12 sliding + 13 full layers (gpt-oss-20b + an EAGLE draft layer, vLLM's own example):
    # 0.11 takes the smallest count as the group size: 12 -> sliding 1 group, full cdiv(13, 12) = 2 groups
    # (7 + 6 layers, padded to 12); 0.18 on: 13 < 1.5 x 12, so 13 -> 2 groups, the sliding one padded by 1
    from kvplan.engines.vllm import PageSpec, kv_cache_groups

    sliding = PageSpec("sliding", 16, token_bytes=2_048, window_tokens=128)
    specs = [sliding] * 12 + [PageSpec("full", 16, token_bytes=2_048)] * 13
    old, _ = kv_cache_groups(specs, V0_11)
    new, _ = kv_cache_groups(specs, V0_33)
    assert [(g.spec.kind, len(g.layers), g.padding_layers) for g in old] == [("sliding", 12, 0), ("full", 7, 5),
                                                                           ("full", 6, 6)]
    assert [(g.spec.kind, len(g.layers), g.padding_layers) for g in new] == [("sliding", 12, 1), ("full", 13, 0)]


def test_0_11_refuses_pages_it_cannot_group():
    # Gemma 4 31B: sliding layers 2 x 16 KV heads x 256 x 2 B x 16 = 262,144 B, global layers 2 x 4 x 512 x 2 x 16
    # = 131,072 B. 0.11's get_kv_cache_groups has no unify_kv_cache_spec_page_size (0.12 on): NotImplementedError.
    # 0.33 doubles the global layers' block to 32 (131,072 x 2 = 262,144) and groups them (Gemma4Config: FA4 or
    # Triton for every layer, both any multiple of 16). (0.11's registry has no Gemma 4: this is the rule alone.)
    from kvplan.errors import PlanError

    with pytest.raises(PlanError, match="vLLM 0.11 cannot group layers whose pages differ"):
        simulate(load_model("gemma-4-31b"), kv_memory_bytes=10 * GIB, max_model_len=8192, rules=V0_11)
    p = simulate(load_model("gemma-4-31b"), kv_memory_bytes=10 * GIB, max_model_len=8192, rules=V0_33)
    assert {(g.spec.kind, g.spec.block_tokens, g.spec.page_bytes) for g in p.groups} == {
        ("sliding", 16, 262_144), ("full", 32, 262_144)}


@pytest.mark.parametrize("rules", RULES, ids=[r.version for r in RULES])
def test_close_layer_counts_in_every_release(rules):
    # _get_kv_cache_groups_uniform_page_size, per release: 0.11.x the smallest count; 0.12-0.17 the largest when
    # it is < 1.25 x the smallest; 0.18 on < 1.5 x. 12 sliding + 13 full (1.08x) and 12 sliding + 16 full (1.33x):
    from kvplan.engines.vllm import PageSpec, kv_cache_groups

    ratio = release(rules).group_close_ratio
    sliding = PageSpec("sliding", 16, token_bytes=2_048, window_tokens=128)
    full = PageSpec("full", 16, token_bytes=2_048)
    close, _ = kv_cache_groups([sliding] * 12 + [full] * 13, rules)
    closer, _ = kv_cache_groups([sliding] * 12 + [full] * 16, rules)
    shape = lambda groups: [(g.spec.kind, len(g.layers), g.padding_layers) for g in groups]  # noqa: E731
    if ratio == 0.0:  # size 12: full cdiv(13, 12) = 2 groups of 7 + 6 layers, padded to 12
        assert shape(close) == [("sliding", 12, 0), ("full", 7, 5), ("full", 6, 6)]
    else:  # 13 < 1.25 x 12 = 15: size 13, the sliding group padded by 1
        assert shape(close) == [("sliding", 12, 1), ("full", 13, 0)]
    if ratio < 1.5:  # 16 >= 15: size 12, full cdiv(16, 12) = 2 groups of 8, padded to 12
        assert shape(closer) == [("sliding", 12, 0), ("full", 8, 4), ("full", 8, 4)]
    else:  # 16 < 18: size 16
        assert shape(closer) == [("sliding", 12, 4), ("full", 16, 0)]


HYBRIDS = [name for name in FAMILIES if hybrid_of(name)]


@pytest.mark.parametrize("name", HYBRIDS)
def test_enable_prefix_caching_on_hybrids(name):
    # --enable-prefix-caching where it is not the default (0.11 - 0.25): 0.11.0 turns it off for every hybrid
    # (one state page); 0.11.1-0.14.1 keeps it only for SupportsMambaPrefixCaching models (state per block of
    # tokens: kvplan says "not modelled") and turns it off for the rest; 0.15.0 on: mode 'all' for those models
    # (not modelled), 'align' (2 state pages per request, the Mamba block = the attention block) for the rest
    base = load_model(name)
    model_type = raw(name)[0]["model_type"]
    checked = 0
    for rules in RULES:
        rel = release(rules)
        if rel.prefix_caching_hybrid or not_served(name, rel):
            continue
        for tp, dtype, gib, max_len in itertools.product((1, 2), ("auto", "fp8"), (10,), (8192, 131072)):
            model, _ = apply_kv_dtype(base, dtype)
            p = simulate(model, kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp, rules=rules,
                         allow_long_max_model_len=True, prefix_caching=True)
            if model_type in rel.all_mode_types:
                assert any(n.startswith("not modelled: with prefix caching") for n in p.notes), (name, rel.version)
                continue
            if not_modelled(name, rel):
                continue
            explicit = replace(rel, prefix_caching_hybrid=rel.prefix_caching_for_hybrids)
            try:
                expected = reference(family_layers(name, tp, dtype == "fp8", explicit), explicit, dtype == "fp8",
                                     gib * GIB, max_len)
            except Refused:
                continue
            got = (p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text, p.fits)
            assert got == expected, (name, rel.version, tp, dtype, max_len)
            assert not any(n.startswith("not modelled") for n in p.notes), (name, rel.version)
            checked += 1
    assert checked or model_type in ALL_MODE_TYPES, name


MLA_USER_BLOCK_RELEASES = ("0.11", "0.11.1", "0.17", "0.18", "0.33", "0.34")


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v2-lite"])
@pytest.mark.parametrize("block", [32, 128])
def test_mla_user_block_size_by_release(name, block):
    # --block-size on an MLA model (Hopper): 0.11.0 forces 64 for any other size; 0.11.1-0.17 keeps a multiple
    # of 64 (128) and turns anything else (32) into 64; 0.18 keeps the user's size for every backend
    base = load_model(name)
    for rules in RULES:
        if rules.version not in MLA_USER_BLOCK_RELEASES:
            continue
        rel = release(rules)
        for dtype, max_len in itertools.product(("auto", "fp8"), (8192, 131072)):
            expected = reference(family_layers(name, 1, dtype == "fp8", rel), rel, dtype == "fp8", 10 * GIB, max_len,
                                 block)
            p = simulate(apply_kv_dtype(base, dtype)[0], kv_memory_bytes=10 * GIB, max_model_len=max_len,
                         rules=rules, block_tokens=block, allow_long_max_model_len=True)
            assert (p.num_blocks, p.gpu_kv_cache_tokens, p.concurrency_text, p.fits) == expected, (rules.version, dtype)
            kept = _v(rel.version) >= (0, 18, 0) or (_v(rel.version) >= (0, 11, 1) and block % 64 == 0)
            assert p.block_size == (block if kept else 64), (rules.version, dtype)


def test_mamba_models_need_a_block_per_sequence_from_0_20():
    # nemotron-h-8b at 10 GiB, 8,192 tokens: 630 blocks (the hand-worked anchor above). From 0.20.0,
    # CompilationConfig.resolve_cudagraph_mode_and_sizes raises "max_num_seqs (N) exceeds available Mamba cache
    # blocks (630)" when N > 630 under FULL decode CUDA graphs; 0.19 capped the capture sizes and started.
    from kvplan.engines.vllm_rules import resolve

    model = load_model("nemotron-h-8b")

    def start(version, **kw):
        p = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, rules=resolve(version)[0], **kw)
        assert p.num_blocks == 630
        return p

    assert not start("0.20").fits and "max_num_seqs (1,024) exceeds the 630 blocks" in start("0.20").refusal
    assert start("0.20", max_num_seqs=630).fits and not start("0.20", max_num_seqs=631).fits
    assert start("0.20", enforce_eager=True).fits
    assert start("0.19").fits and start("0.33", max_num_seqs=256).fits
    # a model without Mamba layers is not concerned: llama-3.1-8b under 0.34, a block 32 layers x 64 x 4,096 B =
    # 8 MiB, 1.5 GiB -> 192 blocks < 1,024 max_num_seqs, and a request's 128 blocks + the null block fit
    p = simulate(load_model("llama-3.1-8b"), kv_memory_bytes=3 * GIB // 2, max_model_len=8192)
    assert p.version == "0.34" and p.num_blocks == 192 and p.fits
