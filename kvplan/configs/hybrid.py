"""Hybrid and recurrent models: which layers keep a growing cache, which a fixed state.

State sizes follow the shapes serving engines allocate per sequence:
- Mamba (v1): conv (d_conv - 1) x d_inner, SSM d_inner x d_state.
- Mamba-2: conv (d_conv - 1) x (d_inner + 2 x n_groups x d_state),
  SSM n_heads x head_dim x d_state.
- Gated DeltaNet (Qwen3-Next): conv (kernel - 1) x (2 x key_dim + value_dim),
  SSM v_heads x key_head_dim x value_head_dim.
The conv state uses the model dtype; the SSM state may have its own
(`mamba_ssm_cache_dtype`, float32 for Nemotron-H).
"""

from __future__ import annotations

from ..core.layers import LayerSpec, RecurrentState
from ..core.storage import float_storage
from ..errors import ConfigError
from .attention import FULL, attention_layer, head_dims, layer_types, window_of
from .fields import Fields


def _dtypes(f: Fields):
    model = float_storage(f.get("torch_dtype", "dtype", default="bfloat16"))
    ssm_name = f.get("mamba_ssm_cache_dtype")
    if ssm_name is None and f.model_type == "nemotron_h":
        ssm_name = "float32"  # vLLM forces a float32 SSM cache for Nemotron-H
    ssm = model if ssm_name in (None, "auto") else float_storage(ssm_name)
    return model, ssm


def mamba1_state(f: Fields) -> RecurrentState:
    hidden = f.int("hidden_size", "d_model")
    expand = f.get("mamba_expand", "expand", default=2)
    d_inner = f.int("intermediate_size", "d_inner", default=int(expand * hidden))
    if f.model_type == "jamba":
        d_inner = int(expand * hidden)
    d_state = f.int("mamba_d_state", "state_size", "d_state", default=16)
    d_conv = f.int("mamba_d_conv", "conv_kernel", "d_conv", default=4)
    conv, ssm = _dtypes(f)
    return RecurrentState("mamba", (d_conv - 1) * d_inner, d_inner * d_state, conv, ssm)


def mamba2_state(f: Fields, prefix: str = "mamba_") -> RecurrentState:
    hidden = f.int("hidden_size")
    n_heads = f.int(f"{prefix}n_heads", f"{prefix}num_heads", "num_heads")
    head_dim = f.int(f"{prefix}d_head", f"{prefix}head_dim", "head_dim")
    d_inner = f.int(f"{prefix}d_ssm", default=n_heads * head_dim)
    n_groups = f.int(f"{prefix}n_groups", "n_groups", default=1)
    d_state = f.int(f"{prefix}d_state", "ssm_state_size", "state_size", default=128)
    d_conv = f.int(f"{prefix}d_conv", "conv_kernel", default=4)
    del hidden
    conv, ssm = _dtypes(f)
    conv_dim = d_inner + 2 * n_groups * d_state
    return RecurrentState("mamba2", (d_conv - 1) * conv_dim, n_heads * head_dim * d_state, conv, ssm,
                          n_groups=n_groups, d_state=d_state, d_inner=d_inner, heads=n_heads, head_dim=head_dim,
                          conv_kernel=d_conv)


def gated_deltanet_state(f: Fields) -> RecurrentState:
    k_heads = f.int("linear_num_key_heads")
    v_heads = f.int("linear_num_value_heads")
    k_dim = f.int("linear_key_head_dim")
    v_dim = f.int("linear_value_head_dim")
    kernel = f.int("linear_conv_kernel_dim", default=4)
    conv, ssm = _dtypes(f)
    conv_elements = (kernel - 1) * (2 * k_heads * k_dim + v_heads * v_dim)
    return RecurrentState("gated_deltanet", conv_elements, v_heads * k_dim * v_dim, conv, ssm)


def qwen3_next_layers(f: Fields) -> list[LayerSpec]:
    num_layers = f.int("num_hidden_layers")
    _, kv_heads, head_dim = head_dims(f)
    types = layer_types(f, num_layers)
    if types is None:
        interval = f.int("full_attention_interval", default=4)
        types = [FULL if (i + 1) % interval == 0 else "linear_attention" for i in range(num_layers)]
    state = gated_deltanet_state(f)
    return [attention_layer(kv_heads, head_dim, None) if t == FULL else LayerSpec(state=state) for t in types]


def jamba_layers(f: Fields) -> list[LayerSpec]:
    num_layers = f.int("num_hidden_layers")
    _, kv_heads, head_dim = head_dims(f)
    period = f.int("attn_layer_period", default=8)
    offset = f.int("attn_layer_offset", default=4, minimum=0)
    state = mamba1_state(f)
    window = window_of(f)
    return [
        attention_layer(kv_heads, head_dim, window) if i % period == offset else LayerSpec(state=state)
        for i in range(num_layers)
    ]


def falcon_h1_layers(f: Fields) -> list[LayerSpec]:
    """Every Falcon-H1 layer runs attention AND Mamba-2 side by side: both caches."""
    num_layers = f.int("num_hidden_layers")
    _, kv_heads, head_dim = head_dims(f)
    state = mamba2_state(f, "mamba_")
    layer = attention_layer(kv_heads, head_dim, None)
    return [LayerSpec(caches=layer.caches, state=state) for _ in range(num_layers)]


def nemotron_h_layers(f: Fields) -> list[LayerSpec]:
    """hybrid_override_pattern: M = Mamba-2, * = attention, - = MLP, E = MoE."""
    pattern = f.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(
            f"{f.source}: config (model_type {f.model_type!r}) has no 'hybrid_override_pattern'",
            "add the pattern string (M = Mamba-2, * = attention, - = MLP, E = MoE)",
        )
    bad = sorted(set(pattern) - set("M*-E"))
    if bad:
        raise ConfigError(f"{f.source}: 'hybrid_override_pattern' has unknown symbols {bad}; expected M, *, - or E")
    _, kv_heads, head_dim = head_dims(f)
    state = mamba2_state(f, "mamba_")
    out = []
    for symbol in pattern:
        if symbol == "*":
            out.append(attention_layer(kv_heads, head_dim, None))
        elif symbol == "M":
            out.append(LayerSpec(state=state))
        else:
            out.append(LayerSpec())
    return out


def mamba_layers(f: Fields) -> list[LayerSpec]:
    num_layers = f.int("num_hidden_layers", "n_layer")
    state = mamba1_state(f) if f.model_type == "mamba" else mamba2_state(f, "")
    return [LayerSpec(state=state) for _ in range(num_layers)]
