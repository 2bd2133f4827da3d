"""Where kvplan deliberately follows serving engines rather than transformers.

Each rule names one difference and says, for one cache component of one kvplan
layer, how many elements transformers holds instead. The parity test applies a
rule only where its `applies` says so, and then requires the per-layer totals to
agree exactly; any delta that no rule explains fails. A rule is never widened to
make a model pass: a model that needs something else is a kvplan bug or a new,
named rule with its source.

A component is ("tokens", TokenCache) or ("state", RecurrentState).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# The conv kernel width, by the names transformers' configs give it.
_CONV_FIELDS = ("conv_kernel", "mamba_d_conv", "linear_conv_kernel_dim", "conv_L_cache", "short_conv_kernel_size",
                "conv1d_width", "d_conv", "conv_kernel_size")


def token_elements(cache, tokens: int) -> int:
    """kvplan's elements for a token cache: K and V of every head, or one latent / indexer key."""
    kept = cache.policy.stored_entries(tokens)
    if cache.kind == "attention":
        return cache.heads * (cache.key_dim + cache.value_dim) * kept
    return cache.key_dim * kept


def per_token(cache) -> int:
    return token_elements(cache, 1)


def conv_width(text: dict) -> int | None:
    for name in _CONV_FIELDS:
        value = text.get(name)
        if isinstance(value, int) and value > 1:
            return value
    nested = text.get("linear_attn_config")
    if isinstance(nested, dict):
        return conv_width(nested)
    return None


@dataclass(frozen=True)
class Rule:
    name: str
    why: str  # the difference and its source
    applies: Callable[[str, tuple, dict], bool]  # (model_type, component, text config dict)
    transformers: Callable[[tuple, int, dict], int]  # elements transformers keeps after `tokens`


def _window(component) -> int | None:
    kind, obj = component
    return obj.policy.window_tokens if kind == "tokens" and obj.policy.chunk_tokens is None else None


def _chunk(component) -> int | None:
    kind, obj = component
    return obj.policy.chunk_tokens if kind == "tokens" else None


WINDOW_W_MINUS_1 = Rule(
    "window W vs W-1",
    "kvplan keeps a sliding window of W tokens (vLLM: the W-1 past tokens plus the token being computed); "
    "transformers' DynamicSlidingWindowLayer stores the last W-1 between steps (cache_utils.py, "
    "'Only cache the last sliding_window - 1 tokens')",
    lambda mt, c, text: _window(c) is not None,
    lambda c, n, text: per_token(c[1]) * min(n, _window(c) - 1),
)

def _text_type(model_type: str) -> str:
    """The text model's type of a wrapper (aya_vision, cohere2_vision -> cohere2), else the type itself."""
    from kvplan.configs.families import FAMILIES

    family = FAMILIES.get(model_type)
    return family.text if family is not None and family.text else model_type


COHERE2_WINDOW_PLUS_1 = Rule(
    "cohere2: window sliding_window + 1 vs sliding_window - 1",
    "vLLM 0.33's commandr.py / cohere2_moe.py pass per_layer_sliding_window = sliding_window + 1 (a Cohere 2 "
    "sliding layer sees [pos - sliding_window, pos]), which kvplan keeps; transformers' DynamicSlidingWindowLayer "
    "stores the last sliding_window - 1 tokens between steps",
    lambda mt, c, text: _text_type(mt) in ("cohere2", "cohere2_moe") and _window(c) is not None,
    lambda c, n, text: per_token(c[1]) * min(n, _window(c) - 2),
)

CHUNK_C_MINUS_1 = Rule(
    "chunk (n-1)%C+1 vs min(n, C-1)",
    "kvplan keeps the current chunk of a chunked-attention layer, (n-1) % C + 1 tokens (vLLM "
    "ChunkedLocalAttentionManager); transformers caches chunked layers in a DynamicSlidingWindowLayer(C): "
    "min(n, C-1) tokens",
    lambda mt, c, text: _chunk(c) is not None,
    lambda c, n, text: per_token(c[1]) * min(n, _chunk(c) - 1),
)

# Types whose transformers code keeps d_conv - 1 columns itself (no LinearAttentionLayer): recurrent_gemma
# holds conv1d_state (batch, lru_width, conv1d_width - 1) on its modules (research/families/recurrent_gemma.md).
_CONV_ALREADY_D_MINUS_1 = frozenset({"recurrent_gemma"})

CONV_D_MINUS_1 = Rule(
    "conv state d_conv-1 vs d_conv columns",
    "kvplan sizes a causal-conv state as vLLM does, (d_conv - 1) columns per channel; transformers' "
    "LinearAttentionLayer keeps the last conv_kernel_size = d_conv columns",
    lambda mt, c, text: mt not in _CONV_ALREADY_D_MINUS_1 and c[0] == "state" and c[1].conv_elements > 0
    and conv_width(text) is not None
    and c[1].conv_elements % (conv_width(text) - 1) == 0,
    lambda c, n, text: c[1].conv_elements // (conv_width(text) - 1) * conv_width(text) + c[1].ssm_elements,
)

GPT_NEO_LOCAL_FULL = Rule(
    "gpt_neo local layers keep every token",
    "GPT-Neo's local layers attend to window_size tokens; kvplan keeps that window, while transformers' "
    "GPTNeoConfig has no sliding_window, so DynamicCache makes every layer a DynamicLayer and the window is "
    "only a mask (research/families/gpt_neo.md)",
    lambda mt, c, text: mt == "gpt_neo" and _window(c) is not None,
    lambda c, n, text: per_token(c[1]) * n,
)

MINICPM3_LATENT = Rule(
    "minicpm3: vLLM decompressed K/V vs transformers' latent",
    "vLLM's minicpm3.py decompresses K/V before attention (num_attention_heads x qk_head_dim each, V padded), "
    "which kvplan follows; transformers caches the latent (kv_lora_rank) and the rope key (qk_rope_head_dim) "
    "(research/families/minicpm3.md)",
    lambda mt, c, text: mt == "minicpm3" and c[0] == "tokens" and c[1].kind == "attention",
    lambda c, n, text: (text["kv_lora_rank"] + text["qk_rope_head_dim"]) * n,
)

def _installed_transformers() -> tuple[int, ...] | None:
    """The installed transformers release as (major, minor, patch), from its metadata (no import); None without it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("transformers")
    except PackageNotFoundError:
        return None
    return tuple(int(part) for part in release.split(".")[:3] if part.isdigit())


# The release the rules compare with; a rule that holds only for some releases reads it when it is applied.
TRANSFORMERS_RELEASE = _installed_transformers()

# The first transformers release whose FalconAttention caches num_kv_heads K/V heads (modeling_falcon.py 5.25:
# forward views the fused QKV as num_kv_heads groups of queries + one key + one value and updates the cache with
# those; repeat_kv widens them only inside eager_attention_forward). Up to 5.24 _split_heads broadcast them.
_FALCON_CACHES_KV_HEADS = (5, 25)

FALCON_BROADCAST_KV = Rule(
    "falcon new_decoder_architecture: broadcast K/V (transformers < 5.25)",
    "Falcon's new decoder (Falcon-40B/180B) has num_kv_heads K/V heads, which serving engines cache as such and "
    "kvplan counts; transformers up to 5.24 (modeling_falcon.py FalconAttention._split_heads, read in 5.20 and "
    "5.24) broadcasts K and V to all num_attention_heads (torch.broadcast_to(key, query.shape)) before the cache "
    "update, so its cache holds num_attention_heads heads; 5.25 caches the num_kv_heads heads, as kvplan does",
    lambda mt, c, text: mt == "falcon" and bool(text.get("new_decoder_architecture")) and c[0] == "tokens"
    and c[1].kind == "attention"
    and TRANSFORMERS_RELEASE is not None and TRANSFORMERS_RELEASE < _FALCON_CACHES_KV_HEADS,
    lambda c, n, text: (text["num_attention_heads"] * (c[1].key_dim + c[1].value_dim)
                        * c[1].policy.retained_tokens(n)),
)

def _deepseek_v4(c, n: int, text: dict) -> int:
    """What transformers' DeepSeek-V4 cache holds for one kvplan component after n tokens
    (modeling_deepseek_v4.py: DynamicSlidingWindowLayer, DeepseekV4HCACache, DeepseekV4CSACache)."""
    kind, obj = c
    head, index = text["head_dim"], text["index_head_dim"]
    if kind == "tokens":
        policy = obj.policy
        if obj.kind == "indexer":  # compressed indexer keys, floor(n / m) of them
            return index * (n // policy.compress_ratio)
        if policy.compress_ratio is None:  # sliding-only layer: K and V stored as two copies, W-1 tokens
            return 2 * head * min(n, policy.window_tokens - 1)
        return head * (min(n, policy.compress_window - 1) + n // policy.compress_ratio)  # shared K=V window
    rates = text["compress_rates"]
    m, big = rates["compressed_sparse_attention"], rates["heavily_compressed_attention"]
    if obj.ssm_elements == 8 * m * (head + index):  # CSA: kv + gate buffers of 2 x width, the overlap pair
        return 2 * (n % m) * 2 * (head + index) + (2 * m * (head + index) if n >= m else 0)
    assert obj.ssm_elements == 2 * big * head, "not a DeepSeek-V4 compressor state"
    return 2 * (n % big) * head  # HCA: kv + gate buffers of the unfinished group


DEEPSEEK_V4_BUFFERS = Rule(
    "deepseek_v4: vLLM's shared K/V window and fixed compressor state vs transformers' buffers",
    "kvplan keeps one K=V vector per token for the W-token window of every layer and sizes the compressor "
    "state as vLLM's CompressorStateCache does, a fixed coff x m tokens of kv and score; transformers 5.23-5.25 "
    "stores the window's W-1 tokens (as two copies, K and V, on sliding-only layers) and buffers only the "
    "unfinished group's projected kv and gate (plus CSA's overlap kv and gate of the previous group)",
    lambda mt, c, text: mt == "deepseek_v4",
    _deepseek_v4,
)

def _glm5_next(c, n: int, text: dict) -> int:
    """What transformers' GLM-5-Next cache holds for one kvplan component of a DSA layer after n tokens
    (modeling_glm5_next.py Glm5NextIndexer: the latent, and per token the packed indexer state: the key, the
    pool gate scores (index_head_dim each) and the valid channel)."""
    kind, obj = c
    if kind == "state":  # vLLM's tail ring: transformers pools every step from its per-token states
        return 0
    if obj.kind == "indexer":
        return (2 * text["index_head_dim"] + 1) * n
    return token_elements(obj, n)


GLM5_NEXT_POOLED_INDEXER = Rule(
    "glm5_next: vLLM's pooled fp8 index keys and tail ring vs transformers' per-token indexer state",
    "kvplan sizes GLM-5-Next's indexer as vLLM 0.33 keeps it: one key per index_kpool tokens and a ring of the "
    "unfinished pool; transformers 5.23-5.25 keeps, for every token, the key, the pool gate scores and a valid "
    "channel (2 x index_head_dim + 1) and pools them on every step",
    lambda mt, c, text: mt == "glm5_next" and (c[0] == "tokens" or c[1].kind == "ring"),
    _glm5_next,
)

# Model-specific rules first: the first rule that applies to a component decides it.
RULES: tuple[Rule, ...] = (DEEPSEEK_V4_BUFFERS, GLM5_NEXT_POOLED_INDEXER, GPT_NEO_LOCAL_FULL, MINICPM3_LATENT, FALCON_BROADCAST_KV, CHUNK_C_MINUS_1,
                           COHERE2_WINDOW_PLUS_1, WINDOW_W_MINUS_1, CONV_D_MINUS_1)


def components(layer) -> list[tuple]:
    if layer.shares_cache_of is not None:
        return []
    out = [("tokens", cache) for cache in layer.caches]
    if layer.state is not None:
        out.append(("state", layer.state))
    return out


def kvplan_elements(component, tokens: int) -> int:
    kind, obj = component
    if kind == "tokens":
        return token_elements(obj, tokens)
    return obj.conv_elements + obj.ssm_elements


def explain(model_type: str, layer, tokens: int, text: dict) -> tuple[int, int, list[str]]:
    """(kvplan's elements, the elements transformers should hold by the rules, the rules that changed it)."""
    ours = expected = 0
    used = []
    for component in components(layer):
        mine = kvplan_elements(component, tokens)
        ours += mine
        rule = next((r for r in RULES if r.applies(model_type, component, text)), None)
        if rule is None:
            expected += mine
            continue
        theirs = rule.transformers(component, tokens, text)
        expected += theirs
        if theirs != mine:
            used.append(rule.name)
    return ours, expected, used
