"""Turn a Hugging Face config dict into a ModelSpec (the per-layer cache description).

One entry per model_type family; `layer_types` wins wherever a family allows it.
An unknown model_type with the standard fields is read as a llama-like decoder,
with a warning that names the assumption.
"""

from __future__ import annotations

import warnings
from typing import Callable

from ..core.layers import LayerSpec
from ..core.model import ModelSpec
from ..core.transform import intern
from ..errors import ConfigError
from . import attention, hybrid, latent, params
from .fields import Fields

# Gemma 3's text model defaults (transformers' Gemma3TextConfig), for the sparse
# text_config of multimodal checkpoints.
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
    "tie_word_embeddings": True,
}

STANDARD = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3",
    "gemma", "gemma2", "gemma3_text", "gemma3n_text", "gpt_oss", "cohere2", "granite",
    "olmo2", "starcoder2", "internlm2", "exaone", "phi", "stablelm",
}
LATENT = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2"}
NESTED_TEXT = {"gemma3": ("gemma3_text", GEMMA3_TEXT_DEFAULTS), "gemma3n": ("gemma3n_text", {}),
               "llava": ("llama", {}), "mistral3": ("mistral", {}), "qwen2_5_vl": ("qwen2", {})}


def _weight_format(f: Fields) -> tuple[str, float]:
    dtype = str(f.get("torch_dtype", "dtype", default="bfloat16"))
    bytes_per_param = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}.get(dtype, 2.0)
    quant = f.get("quantization_config")
    if isinstance(quant, dict):
        method = str(quant.get("quant_method", "")).lower()
        if method == "fp8":
            return "fp8", 1.0
        if method in ("awq", "gptq") and quant.get("bits"):
            return f"int{quant['bits']}", quant["bits"] / 8
    return dtype, bytes_per_param


def _hybrid_params(f: Fields, layers: list[LayerSpec], heads: int, kv: int, head_dim: int) -> tuple[int, int]:
    mt = f.model_type
    hidden = f.int("hidden_size", "d_model")
    total = active = params._vocab_embed(f, hidden) + hidden
    inter = f.int("intermediate_size", default=0, minimum=0)
    for i, layer in enumerate(layers):
        block = 0
        if layer.caches:
            block += params._attention(f, hidden, heads, kv, head_dim)
            if mt == "qwen3_next":
                block += hidden * heads * head_dim  # output gate doubles q_proj
        if layer.state is not None:
            if mt in ("mamba", "jamba"):
                d_inner = f.int("intermediate_size") if mt == "mamba" else int(f.get("mamba_expand", default=2) * hidden)
                d_state = f.int("state_size", "mamba_d_state", default=16)
                d_conv = f.int("conv_kernel", "mamba_d_conv", default=4)
                dt_rank = f.get("time_step_rank", "mamba_dt_rank", default="auto")
                dt_rank = -(-hidden // 16) if dt_rank == "auto" else int(dt_rank)
                block += params.mamba1_block(hidden, d_inner, d_state, d_conv, dt_rank, mt == "jamba")
            elif mt == "qwen3_next":
                kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
                kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
                kernel = f.int("linear_conv_kernel_dim", default=4)
                key_dim, value_dim = kh * kd, vh * vd
                block += hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * vh
                block += (2 * key_dim + value_dim) * kernel + 2 * vh + vd + value_dim * hidden
            else:
                p = "" if mt == "mamba2" else "mamba_"
                nh = f.int(f"{p}n_heads", f"{p}num_heads", "num_heads")
                hd = f.int(f"{p}d_head", f"{p}head_dim", "head_dim")
                block += params.mamba2_block(
                    hidden, nh, hd, f.int(f"{p}n_groups", "n_groups", default=1),
                    f.int(f"{p}d_state", "ssm_state_size", "state_size", default=128),
                    f.int(f"{p}d_conv", "conv_kernel", default=4), f.get(f"{p}d_ssm"),
                )
        norms = hidden if mt in ("mamba", "mamba2", "nemotron_h") else 2 * hidden
        moe_t, moe_a = (params._moe(f, hidden) if mt in ("jamba", "qwen3_next") and params._is_moe_layer(f, i) else (0, 0))
        if moe_t:
            total += block + norms + moe_t
            active += block + norms + moe_a
            continue
        mlp = 0
        if mt in ("jamba", "falcon_h1") and inter:
            mlp = params._gated_mlp(hidden, inter)
        elif mt == "nemotron_h" and not layer.caches and layer.state is None:
            mlp = 2 * hidden * inter  # squared-ReLU MLP: up and down
            norms = hidden
        if mt == "nemotron_h" and not layer.caches and layer.state is None and not inter:
            norms = hidden
        total += block + norms + mlp
        active += block + norms + mlp
    return total, active


def _read_layers(f: Fields) -> tuple[list[LayerSpec], tuple[int, int]]:
    mt = f.model_type
    if mt in LATENT:
        layers = latent.latent_layers(f)
        return layers, params.count_latent_params(f, len(layers))
    if mt == "falcon":
        layers = attention.falcon_layers(f)
        heads = f.int("num_attention_heads", "n_head")
        return layers, _falcon_params(f, len(layers), heads, attention.falcon_kv_heads(f, heads))
    if mt == "gpt_bigcode":
        layers = attention.bigcode_layers(f)
        return layers, _bigcode_params(f, len(layers))
    hybrid_readers: dict[str, Callable[[Fields], list[LayerSpec]]] = {
        "qwen3_next": hybrid.qwen3_next_layers,
        "jamba": hybrid.jamba_layers,
        "falcon_h1": hybrid.falcon_h1_layers,
        "nemotron_h": hybrid.nemotron_h_layers,
        "mamba": hybrid.mamba_layers,
        "mamba2": hybrid.mamba_layers,
    }
    if mt in hybrid_readers:
        layers = hybrid_readers[mt](f)
        heads, kv, hd = attention.head_dims(f) if mt not in ("mamba", "mamba2") else (0, 0, 0)
        return layers, _hybrid_params(f, layers, heads, kv, hd)
    if mt not in STANDARD:
        missing = [n for n in ("num_hidden_layers", "num_attention_heads", "hidden_size") if f.get(n) is None]
        if missing:
            raise ConfigError(
                f"{f.source}: unknown model_type {mt!r} and the config lacks {missing[0]!r}",
                "kvplan reads unknown types only when they have the standard llama fields",
            )
        warnings.warn(
            f"unknown model_type {mt!r}: read as a llama-like decoder (num_key_value_heads, head_dim, "
            "sliding_window on every layer); check the layer kinds",
            stacklevel=2,
        )
    layers = attention.standard_layers(f)
    heads, kv, hd = attention.head_dims(f)
    return layers, params.count_params(f, len(layers), heads, kv, hd)


def _falcon_params(f: Fields, num_layers: int, heads: int, kv: int) -> tuple[int, int]:
    hidden = f.int("hidden_size")
    hd = hidden // heads
    ln = 2 * hidden
    per_layer = hidden * (heads + 2 * kv) * hd + hidden * hidden + 8 * hidden * hidden
    per_layer += (2 if f.flag("new_decoder_architecture") else 1) * ln
    if f.flag("bias"):
        per_layer += (heads + 2 * kv) * hd + hidden + 4 * hidden + hidden
    n = params._vocab_embed(f, hidden) + ln + num_layers * per_layer
    return n, n


def _bigcode_params(f: Fields, num_layers: int) -> tuple[int, int]:
    hidden = f.int("n_embd", "hidden_size")
    heads = f.int("n_head", "num_attention_heads")
    inner = f.int("n_inner", default=4 * hidden)
    kv_width = (hidden // heads) * (1 if f.flag("multi_query", default=True) else heads)
    per_layer = hidden * (hidden + 2 * kv_width) + hidden + 2 * kv_width  # c_attn
    per_layer += hidden * hidden + hidden  # c_proj
    per_layer += hidden * inner + inner + inner * hidden + hidden  # mlp
    per_layer += 4 * hidden  # ln_1, ln_2
    n = params._vocab_embed(f, hidden) + f.int("n_positions", default=0, minimum=0) * hidden + 2 * hidden
    n += num_layers * per_layer
    return n, n


def unwrap(raw: dict, source: str) -> Fields:
    """Multimodal checkpoints nest the text model under text_config (sparsely)."""
    f = Fields(raw, source)
    if f.model_type in NESTED_TEXT and isinstance(raw.get("text_config"), dict):
        text_type, defaults = NESTED_TEXT[f.model_type]
        nested = dict(raw["text_config"])
        nested.setdefault("model_type", text_type)
        for key in ("torch_dtype", "dtype", "quantization_config"):
            if key in raw and key not in nested:
                nested[key] = raw[key]
        return Fields(nested, source, defaults)
    if f.model_type == "gemma3_text":
        return Fields(raw, source, GEMMA3_TEXT_DEFAULTS)
    return f


def build_model(raw: dict, name: str, source: str | None = None) -> ModelSpec:
    """The per-layer description of the model a config dict describes."""
    source = source or name
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config is not a JSON object")
    if "model_type" not in raw:
        raise ConfigError(f"{source}: config has no 'model_type'", "is this a Hugging Face config.json?")
    f = unwrap(raw, source)
    layers, (total, active) = _read_layers(f)
    if not layers:
        raise ConfigError(f"{source}: config describes no layers")
    weight_dtype, bytes_per_param = _weight_format(f)
    heads = f.get("num_attention_heads", "n_head", default=0) or 0
    return ModelSpec(
        name=name,
        model_type=f.model_type,
        layers=intern(layers),
        param_count=total,
        active_param_count=active,
        weight_bytes_per_param=bytes_per_param,
        weight_dtype=weight_dtype,
        max_context_tokens=f.get("max_position_embeddings", "n_positions", "max_seq_len"),
        hidden_size=f.get("hidden_size", "n_embd", "d_model", default=0) or 0,
        num_attention_heads=int(heads),
        source=source,
    )
