"""Attention dimensions and caches: heads, KV heads, head widths, windows and chunks.

Every family reads these with transformers' canonical names; the family's aliases
map them to what its configs really write. The few families whose KV head count
is not simply `num_key_value_heads` name a rule here (Falcon, GPT-BigCode, ChatGLM).
"""

from __future__ import annotations

from ..core.layers import LayerSpec, TokenCache, TokenPolicy
from ..errors import ConfigError
from .fields import Fields


def head_dims(f: Fields, kv_rule=None) -> tuple[int, int, int, int]:
    """(query heads, KV heads, key head width, value head width)."""
    heads = f.int("num_attention_heads")
    kv_heads = kv_rule(f, heads) if kv_rule else f.int("num_key_value_heads", default=heads)
    head_dim = f.opt_int("head_dim")
    if head_dim is None:
        hidden = f.int("hidden_size", default=0, minimum=0)
        if not hidden:
            raise ConfigError(
                f"{f.source}: config (model_type {f.model_type!r}) has neither 'head_dim' nor 'hidden_size'",
                "add one of them or pass --set head_dim=VALUE",
            )
        if hidden % heads:
            raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads}")
        head_dim = hidden // heads
    value_dim = f.opt_int("value_head_dim") or head_dim
    if heads % kv_heads:
        raise ConfigError(
            f"{f.source}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads} "
            f"(model_type {f.model_type!r})"
        )
    return heads, kv_heads, head_dim, value_dim


def attention_cache(kv_heads: int, key_dim: int, value_dim: int, window: int | None = None,
                    chunk: int | None = None) -> TokenCache:
    return TokenCache(kind="attention", heads=kv_heads, key_dim=key_dim, value_dim=value_dim,
                      policy=TokenPolicy(window_tokens=window, chunk_tokens=chunk))


def topk_pages_with_keys(kv_heads: int, head_dim: int, page: int, topk: int, key_dim: int, key_storage,
                         unit: str, keys_label: str) -> tuple[TokenCache, TokenCache]:
    """A sparse layer that stores every token's K/V and reads only the `topk` pages of `page` tokens a compressed
    key per page picks, plus the open page (Qwen4-Exp's QSA, Step-5's CSA): the K/V cache and the key cache."""
    main = TokenCache(kind="attention", heads=kv_heads, key_dim=head_dim, value_dim=head_dim,
                      policy=TokenPolicy(read_page_tokens=page, read_topk_pages=topk, read_page_meta=False,
                                         read_open_page_apart=True),
                      label=f"K/V, top {topk} {unit}s of {page} + the open one")
    keys = TokenCache(kind="indexer", heads=1, key_dim=key_dim, storage=key_storage,
                      policy=TokenPolicy(compress_ratio=page, compress_selector_keys=False), label=keys_label)
    return main, keys


def attention_layer(kv_heads: int, head_dim: int, window: int | None, value_dim: int | None = None) -> LayerSpec:
    return LayerSpec(caches=(attention_cache(kv_heads, head_dim, head_dim if value_dim is None else value_dim, window),))


# -- dimension rules of families that do not read head_dim / num_key_value_heads plainly

def mha_from_hidden(f: Fields) -> tuple[int, int, int, int]:
    """GPT-2, GPT-J, OPT, BLOOM, GPT-NeoX...: one KV head per query head, width hidden / heads;
    the attention never reads a num_key_value_heads or head_dim key."""
    heads = f.int("num_attention_heads")
    width = _hidden_over_heads(f, heads)
    return heads, heads, width, width


def gqa_from_hidden(f: Fields) -> tuple[int, int, int, int]:
    """StableLM, Qwen2.5-VL, Mllama: num_key_value_heads, but the width is always hidden / heads
    (a head_dim key is not read by the attention)."""
    heads = f.int("num_attention_heads")
    kv = f.int("num_key_value_heads", default=heads)
    width = _hidden_over_heads(f, heads)
    if heads % kv:
        raise ConfigError(f"{f.source}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv} "
                          f"(model_type {f.model_type!r})")
    return heads, kv, width, width


def _hidden_over_heads(f: Fields, heads: int) -> int:
    hidden = f.int("hidden_size")
    if hidden % heads:
        raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads} "
                          f"(model_type {f.model_type!r})")
    return hidden // heads


def explicit_head_dim(f: Fields) -> tuple[int, int, int, int]:
    """HunYuan-VL's text model: its attention reads config.head_dim with no fallback (transformers'
    default, None, cannot run), so the config must give it; KV heads default to the query heads."""
    if f.opt_int("head_dim") is None:
        raise ConfigError(f"{f.source}: config (model_type {f.model_type!r}) has no 'head_dim', which its attention "
                          "needs (transformers has no fallback for it)", "add 'head_dim' or pass --set head_dim=VALUE")
    return head_dims(f)


def mpt_dims(f: Fields) -> tuple[int, int, int, int]:
    """MPT: vLLM caches attn_config.kv_n_heads when the key exists (transformers' own MPT
    always uses n_heads); width d_model / n_heads."""
    heads = f.int("num_attention_heads")
    kv = f.int("attn_config.kv_n_heads", default=heads)
    width = _hidden_over_heads(f, heads)
    return heads, kv, width, width


def jetmoe_dims(f: Fields) -> tuple[int, int, int, int]:
    """JetMoE: num_key_value_heads K/V heads of kv_channels; query heads are derived
    (num_key_value_heads x num_experts_per_tok), never read."""
    kv = f.int("num_key_value_heads")
    width = f.int("head_dim")
    heads = kv * f.int("num_experts_per_tok", default=2)
    return heads, kv, width, width


def decompressed_latent_dims(f: Fields) -> tuple[int, int, int, int]:
    """MiniCPM3 as vLLM serves it: latent attention decompressed before the cache, so every
    query head caches K of qk_nope + qk_rope and V zero-padded to the same width."""
    heads = f.int("num_attention_heads")
    width = f.int("qk_nope_head_dim") + f.int("qk_rope_head_dim")
    return heads, heads, width, width


def zamba_dims(f: Fields) -> tuple[int, int, int, int]:
    """Zamba / Zamba2: the shared attention block works on 2 x hidden_size; its heads are
    attention_head_dim (default 2 x hidden_size / heads) wide."""
    heads = f.int("num_attention_heads")
    kv = f.int("num_key_value_heads", default=heads)
    width = f.int("head_dim", default=2 * f.int("hidden_size") // heads)
    return heads, kv, width, width


def mimo_v2_flash_window(f: Fields) -> int | None:
    """MiMo-V2-Flash: hub files give sliding_window_size, the tokens attended before the query;
    MiMoV2FlashConfig then sets sliding_window = sliding_window_size + 1 (129 by default)."""
    size = f.opt_int("sliding_window_size")
    return size + 1 if size is not None else f.opt_int("sliding_window")


def window_plus_one(f: Fields) -> int | None:
    """Cohere 2 (dense and MoE): a sliding layer attends to [pos - sliding_window, pos], sliding_window + 1
    tokens, and vLLM 0.33 passes per_layer_sliding_window = sliding_window + 1 (commandr.py CohereAttention,
    cohere2_moe.py Cohere2MoeAttention)."""
    size = f.opt_int("sliding_window")
    return size + 1 if size is not None else None


# -- KV-head rules of families that do not use num_key_value_heads plainly ----

def falcon_kv_heads(f: Fields, heads: int) -> int:
    """transformers' rule: num_kv_heads counts only with the new decoder architecture
    or without multi_query; otherwise multi-query means ONE KV head."""
    if f.flag("new_decoder_architecture"):
        return f.int("num_kv_heads", "n_head_kv", default=heads)
    if f.flag("multi_query", default=True):
        return 1
    return heads


def step3_kv_heads(f: Fields, heads: int) -> int:
    """Step-3's multi-matrix factorization attention: vLLM 0.33's Step3TextDecoderLayer builds every layer with
    one K/V head (num_kv_heads=1), which num_attention_groups (1 in Step3TextConfig) must agree with."""
    groups = f.int("num_attention_groups", default=1)
    if groups != 1:
        raise ConfigError(f"{f.source}: num_attention_groups is {groups}, but vLLM's Step-3 attention keeps one K/V "
                          f"head (model_type {f.model_type!r})", "fix the config (num_attention_groups 1)")
    return 1


def multi_query_kv_heads(f: Fields, heads: int) -> int:
    """GPT-BigCode: multi_query (the default) means one KV head."""
    return 1 if f.flag("multi_query", default=True) else heads


def chatglm_kv_heads(f: Fields, heads: int) -> int:
    """ChatGLM / GLM-4 (original code): multi_query_group_num KV heads when
    multi_query_attention is on, else one per query head."""
    if f.flag("multi_query_attention"):
        return f.int("multi_query_group_num")
    return heads
