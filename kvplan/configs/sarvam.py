"""Sarvam-MoE (model_type sarvam_moe, SarvamMoEForCausalLM) as vLLM 0.33 builds it.

vLLM 0.33 model_executor/models/sarvam.py: `class SarvamMoEForCausalLM(BailingMoeForCausalLM)`, which only
zero-means each router's e_score_correction_bias before loading: the model is bailing_moe.py's, read and counted
by configs/bailing.py (moe_dims, moe_params): fused query_key_value, dense, per-head query / key norms with
use_qk_norm (nn.LayerNorm with a bias unless use_rmsnorm), a dense MLP below first_k_dense_replace, else
BailingMoE (router, expert_bias with moe_router_enable_expert_bias, routed experts, one shared MLP of
moe_intermediate_size x num_shared_experts), an LM head unless tie_word_embeddings.

vLLM 0.33 requires transformers < 5.21, which has no sarvam_moe (SarvamMoeConfig arrived in a later
transformers), so the config class is the checkpoint's remote SarvamMoEConfig (Sarvam's copy:
sarvamai/mlx-lm mlx_lm/models/configuration_sarvam_moe.py). Its defaults are used where the file is silent,
except num_attention_heads (16) and head_dim (256): transformers' later SarvamMoeConfig says 64 and
hidden_size / heads, so a file without them would read differently there; kvplan asks for them instead.
"""

from __future__ import annotations

from ..errors import ConfigError
from .bailing import moe_dims
from .fields import Fields

# remote SarvamMoEConfig.__init__ defaults for the fields vLLM 0.33's bailing_moe.py reads (use_rmsnorm is not
# one of its arguments: getattr(config, "use_rmsnorm", False) reads False when the file leaves it out)
DEFAULTS = {"vocab_size": 262144, "hidden_size": 4096, "intermediate_size": 8192, "num_hidden_layers": 19,
            "num_key_value_heads": 4, "use_qkv_bias": False, "use_bias": False, "tie_word_embeddings": False,
            "num_experts": 128, "num_shared_experts": 1, "num_experts_per_tok": 6, "moe_intermediate_size": 1024,
            "first_k_dense_replace": 1, "use_qk_norm": True, "moe_router_enable_expert_bias": True}

# transformers' SarvamMoeConfig.attribute_map: the names a config saved by it writes
NAMES = {"num_experts": ("n_routed_experts",), "num_shared_experts": ("n_shared_experts",)}

_DISAGREE = ("num_attention_heads", "head_dim")


def dims(f: Fields) -> tuple[int, int, int, int]:
    """BailingAttention's heads, KV heads and head_dim, once the two fields the config classes disagree on are
    written."""
    for name in _DISAGREE:
        if not f.has(name):
            raise ConfigError(f"{f.source}: config (model_type 'sarvam_moe') has no {name!r}; the checkpoint's "
                              "remote SarvamMoEConfig (which vLLM 0.33 loads) and transformers' SarvamMoeConfig "
                              "default it differently (16 / 256 against 64 / hidden_size / heads)",
                              f"add {name!r} to the config or pass --set-new {name}=N")
    return moe_dims(f)
