"""Moondream 3's text model, counted as vLLM 0.33 builds it (model_executor/models/moondream3.py).

Moondream3Config (transformers_utils/configs/moondream3.py) reads the text model from config.text, and its MoE
from config.text.moe: start_layer (4), n_experts (64), n_experts_per_tok (8) and expert_inner_dim (1024), each
Moondream3TextConfig's default when the dict leaves it out. Per layer (Moondream3DecoderLayer), all biased:

- ln: one LayerNorm (weight and bias) of dim, feeding attention and MLP in parallel;
- Moondream3Attention: qkv_proj (dim -> (n_heads + 2 x n_kv_heads) x head_dim, head_dim = dim / n_heads),
  out_proj (dim -> dim), and the tau parameters: tau_alpha (n_heads), tau_wq and tau_wv (n_heads x 3 x dim
  each: qkv_dim = hidden_size x 3, whatever n_kv_heads is);
- below start_layer Moondream3TextMLP: fc1 (dim -> ff_dim), fc2 (ff_dim -> dim);
- from start_layer Moondream3TextMoE: the router (GateLinear dim -> n_experts, with bias), fc1_weight
  (n_experts x 2 x expert_inner_dim x dim, gate and up fused) and fc2_weight (n_experts x dim x
  expert_inner_dim), no expert biases (the +1 of the GeGLU is a buffer, not a parameter).

Outside the layers: wte (vocab_size x dim), post_ln (LayerNorm), and lm_head (vocab_size x dim) with its bias,
never tied (Moondream3ForCausalLM builds its own ParallelLMHead). The vision encoder and its projection are
not counted, as for every other wrapper.
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_parts import moe_stack

# Moondream3TextConfig.__init__: moe = moe or {}; these keys, with these defaults
MOE_DEFAULTS = {"start_layer": 4, "n_experts": 64, "n_experts_per_tok": 8, "expert_inner_dim": 1024}


def _moe(f: Fields) -> dict[str, int]:
    node = f.get("config.text.moe")
    if node is not None and not isinstance(node, dict):
        raise ConfigError(f"{f.source}: 'config.text.moe' must be a JSON object, got {type(node).__name__} "
                          f"(model_type {f.model_type!r})", "Moondream3TextConfig reads moe.n_experts etc. from it")
    out = {key: f.int(f"config.text.moe.{key}", default=default, minimum=0 if key == "start_layer" else 1)
           for key, default in MOE_DEFAULTS.items()}
    if out["n_experts_per_tok"] > out["n_experts"]:
        raise ConfigError(f"{f.source}: 'config.text.moe.n_experts_per_tok' {out['n_experts_per_tok']} is more than "
                          f"n_experts {out['n_experts']} (model_type {f.model_type!r})", "fix the config's moe")
    return out


def moondream3_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """(total, active) of Moondream3TextModel plus lm_head (module docstring)."""
    heads, kv, head_dim, _ = dims
    dim = f.int("hidden_size")
    ff = f.int("intermediate_size")
    vocab = f.int("vocab_size")
    moe = _moe(f)
    qkv = (heads + 2 * kv) * head_dim
    attention = dim * qkv + qkv + dim * dim + dim  # qkv_proj, out_proj, biased
    attention += heads + 2 * heads * 3 * dim  # tau_alpha, tau_wq, tau_wv
    base = attention + 2 * dim  # ln: LayerNorm weight and bias
    dense = dim * ff + ff + ff * dim + dim  # fc1, fc2, biased
    experts, top_k, inner = moe["n_experts"], moe["n_experts_per_tok"], moe["expert_inner_dim"]
    per_expert = 2 * inner * dim + dim * inner  # fc1 (gate and up) and fc2
    router = dim * experts + experts
    kinds = ["dense" if i < moe["start_layer"] else "sparse" for i in range(len(layers))]
    outside = vocab * dim + 2 * dim + vocab * dim + vocab  # wte, post_ln, lm_head with its bias
    return moe_stack(outside, base, kinds, experts * per_expert + router, dense, (experts - top_k) * per_expert)
