"""DomynEdge (DomynEdgeForCausalLM) as vLLM 0.33 serves it (vllm/model_executor/models/domyn_edge.py).

Every layer is one DomynEdgeAttention over num_key_value_heads heads; layer i's
- head_dim is config.per_layer_config[i].head_dim (transformers' heterogeneous per-layer config): read from the
  file's per_layer_config ({"3": {"head_dim": 64}}) when it has one, a layer it does not list taking the global
  head_dim; a file without per_layer_config gives the sizes in head_sizes, the per-layer field of DomynEdgeConfig
  (the config class published with igeniusai/vllm-domyn-edge, whose vLLM model reads head_sizes[i]);
- window is window_sizes[i][0]: a pair (w, 0) with w > 0 attends to w + 1 keys, and vLLM passes
  per_layer_sliding_window = w + 1; w <= 0 (-1) is full attention;
- position_layers[i] ("rope" / "nope") changes no cache.
Defaults are DomynEdgeConfig's: 36 layers, hidden 2,560, 32 heads, 8 KV heads, intermediate 9,728, vocab 115,269,
tied embeddings; position_layers nope x 2, (rope x 3, nope) x 8, nope x 2; window_sizes (-1, 0) x 2, ((1024, 0) x 3,
(-1, 0)) x 8, (-1, 0) x 2; head_sizes 256 x 2, (64 x 3, 256) x 8, 256 x 2.

Parameters (DomynEdgeAttention, Qwen2MLP, DomynEdgeDecoderLayer, Qwen2Model): per layer qkv_proj (hidden -> (heads +
2 x kv heads) x head_dim, no bias), o_proj (heads x head_dim -> hidden, no bias), k_norm (head_dim; q_norm has no
weight), four RMSNorms of hidden (pre/post attention, pre/post feed-forward), gate_up_proj and down_proj (3 x hidden x
intermediate, no bias); the final norm, embed_tokens and lm_head (tied with tie_word_embeddings).
"""

from __future__ import annotations

from ..errors import ConfigError
from . import kinds as K
from .fields import Fields
from .markers import per_layer_config_dims
from .param_parts import embeddings

_PATTERN = 8  # DomynEdgeConfig's default layout: two ends of 2 layers around 8 repeats of 4
DEFAULTS = {
    "vocab_size": 115269, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192, "tie_word_embeddings": True,
    "position_layers": ["nope", "nope"] + ["rope", "rope", "rope", "nope"] * _PATTERN + ["nope", "nope"],
    "window_sizes": [[-1, 0], [-1, 0]] + [[1024, 0], [1024, 0], [1024, 0], [-1, 0]] * _PATTERN + [[-1, 0], [-1, 0]],
    "head_sizes": [256, 256] + [64, 64, 64, 256] * _PATTERN + [256, 256],
}


def _per_layer(f: Fields, name: str, n: int) -> list:
    """A per-layer list; null is refused (an absent one is DomynEdgeConfig's default, a null one is not read by
    any code kvplan has seen)."""
    values = f.list(name, length=n)
    if values is None:
        raise ConfigError(f"{f.source}: {name} is null; DomynEdge reads one entry a layer (model_type "
                          f"{f.model_type!r})", f"give the list, or remove {name} for DomynEdgeConfig's default")
    return values


def _windows(f: Fields, n: int) -> list[int]:
    """window_sizes[i][0] per layer (one (w, 0) pair a layer, as DomynEdgeConfig checks)."""
    pairs = _per_layer(f, "window_sizes", n)
    out = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ConfigError(f"{f.source}: window_sizes[{i}] must be a pair [w, 0], got {pair!r} "
                              f"(model_type {f.model_type!r})", "fix the config")
        out.append(f.check_int(f"window_sizes[{i}][0]", pair[0], minimum=-(2**31)))
    positions = _per_layer(f, "position_layers", n)
    for i, kind in enumerate(positions):
        if kind not in ("rope", "nope"):
            raise ConfigError(f"{f.source}: position_layers[{i}] is {kind!r}; vLLM 0.33's DomynEdgeDecoderLayer "
                              f"takes 'rope' or 'nope' (model_type {f.model_type!r})", "fix the config")
    return out


def kinds(f: Fields, n: int) -> list[str]:
    return [K.SLIDING if w > 0 else K.FULL for w in _windows(f, n)]


def window(f: Fields) -> int | None:
    """w + 1 tokens (vLLM's per_layer_sliding_window); kvplan sizes one window a model."""
    sizes = {w + 1 for w in _windows(f, f.int("num_hidden_layers")) if w > 0}
    if len(sizes) > 1:
        raise ConfigError(f"{f.source}: window_sizes gives {len(sizes)} different windows, which kvplan cannot size "
                          f"yet (model_type {f.model_type!r})", "this layout is not supported yet")
    return sizes.pop() if sizes else None


def head_dim(f: Fields, index: int) -> int:
    if "per_layer_config" in f.raw:
        return per_layer_config_dims(f, index, K.FULL).get("head_dim") or _global_head_dim(f)
    sizes = f.int_list("head_sizes", length=f.int("num_hidden_layers"), minimum=1)
    return sizes[index]


def _global_head_dim(f: Fields) -> int:
    """The whole-model head_dim: the file's, else DomynEdgeConfig's max(head_sizes)."""
    if f.has("head_dim"):
        return f.int("head_dim")
    return max(f.int_list("head_sizes", length=f.int("num_hidden_layers"), minimum=1))


def per_layer(f: Fields, index: int, kind: str) -> dict:
    return {"head_dim": head_dim(f, index)}


def params(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv = dims[0], dims[1]
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size")
    total = embeddings(f, hidden, tied_default=True, vocab_default=DEFAULTS["vocab_size"]) + hidden
    for i in range(len(layers)):
        d = head_dim(f, i)
        total += hidden * (heads + 2 * kv) * d + heads * d * hidden + d + 4 * hidden + 3 * hidden * inter
    return total, total
