"""K2-Horizon (model_type k2_horizon) and AliceAI (model_type alice_ai) as vLLM 0.33 serves them: their cache
rules, read exactly; their parameters are not counted (give --weights).

- K2HorizonForCausalLM (vllm/model_executor/models/k2_horizon.py): every layer is K2HorizonAttention or, on a
  sparse layer with mova_num_experts > 0, K2HorizonMoVAAttention; both cache one vLLM Attention of
  num_key_value_heads heads of head_dim (None: hidden_size / num_attention_heads) and pass no per-layer window.
  The MoVA value experts choose how V is computed, not how much is cached.
- AliceAIForCausalLM (vllm/model_executor/models/alice_ai.py): config.layer_types says each layer's mixer:
  "full_attention" is Qwen3NextAttention (K/V of num_key_value_heads x head_dim, gated output), "linear_attention"
  is Kimi Delta Attention (KimiGatedDeltaNetAttention; its state from MambaStateShapeCalculator.kda_state_shape
  with linear_num_key_heads heads of linear_key_head_dim and linear_conv_kernel_dim, which _make_kimi_kda_config
  requires to equal the value heads and width).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields

# kda_state reads Kimi-Linear's names; AliceAI writes its own flat ones
ALICE_NAMES = {"linear_num_heads": ("linear_num_key_heads",), "linear_head_dim": ("linear_key_head_dim",)}


def alice_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """_make_kimi_kda_config refuses KDA whose key and value heads or widths differ; so does kvplan."""
    heads, value_heads = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    width, value_width = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    if heads != value_heads or width != value_width:
        raise ConfigError(f"{f.source}: linear_num_key_heads / linear_key_head_dim ({heads} x {width}) differ from "
                          f"the value heads ({value_heads} x {value_width}): vLLM 0.33's AliceAI KDA requires them "
                          f"equal (model_type {f.model_type!r})", "fix the config")
    return kinds


def not_counted(f: Fields, layers: list, dims) -> tuple[int, int]:
    """The parameter count kvplan does not have for these families."""
    what = {"k2_horizon": "K2-Horizon's MoVA value experts, grouped norms and attention gates",
            "alice_ai": "AliceAI's attention-residual blocks, KDA projections and MoE"}.get(f.model_type, "its modules")
    raise ConfigError(f"kvplan does not count {what} yet", "give the weights with --weights (or the checkpoint's "
                      "folder or hf://REPO)")
