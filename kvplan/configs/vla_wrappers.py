"""Vision-language(-action) wrappers vLLM 0.33 serves through its own config classes, where the text model sits
where the generic wrapper reading does not look (configs/vl_wrappers.py holds the nested-key and flat ones;
OpenVLA and Alpamayo 2 Super are plain rows in families.py; Pixtral's Mistral-format params.json is adapted in
configs/mistral_params.py):

- Moondream 3 (model_type moondream3, HfMoondream / Moondream3ForCausalLM): vLLM 0.33 transformers_utils/configs/
  moondream3.py Moondream3Config builds Moondream3TextConfig from config["config"]["text"], with Moondream's own
  names (dim, n_layers, n_heads, n_kv_heads, ff_dim, max_context) and defaults; moondream3.py Moondream3Attention
  caches n_kv_heads x dim / n_heads on every layer.
"""

from __future__ import annotations

from ..errors import ConfigError
from .attention import gqa_from_hidden
from .fields import Fields

# vLLM 0.33 configs/moondream3.py Moondream3TextConfig: Moondream's names, as kvplan's canonical ones
MOONDREAM3_NAMES = {"num_hidden_layers": ("config.text.n_layers",), "hidden_size": ("config.text.dim",),
                    "num_attention_heads": ("config.text.n_heads",),
                    "num_key_value_heads": ("config.text.n_kv_heads",),
                    "intermediate_size": ("config.text.ff_dim",), "vocab_size": ("config.text.vocab_size",),
                    "max_position_embeddings": ("config.text.max_context",)}
# Moondream3TextConfig.__init__'s defaults (dim 2048, ff_dim 8192, n_layers 24, vocab_size 51200, max_context 4096,
# n_heads 32, n_kv_heads 32), which a config without config.text runs
MOONDREAM3_DEFAULTS = {"num_hidden_layers": 24, "hidden_size": 2048, "num_attention_heads": 32,
                       "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 51200,
                       "max_position_embeddings": 4096}


def moondream3_dims(f: Fields) -> tuple[int, int, int, int]:
    """Moondream3Attention: num_kv_heads = n_kv_heads, head_dim = dim // n_heads (no head_dim key is read)."""
    for key in ("config", "config.text", "config.text.moe"):  # Moondream3TextConfig calls moe.get(...)
        node = f.raw
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            raise ConfigError(f"{f.source}: {key!r} must be a JSON object, got {type(node).__name__} "
                              f"(model_type {f.model_type!r})", "Moondream3Config reads its text model from config.text")
    return gqa_from_hidden(f)
