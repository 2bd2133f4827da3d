"""Keye-VL-1.5 (model_type KeyeVL1_5), whose config class builds its text model from its own defaults.

The Keye team's KeyeVL1_5Config (remote code; the port quoted in the code index, id 3679558319) builds
KeyeVL1_5TextConfig from text_config when the file nests one, else from the top-level fields ("For BC use all
kwargs"), so a field the file leaves out takes KeyeVL1_5TextConfig's default either way. vLLM 0.33
keye_vl1_5.py (BaseKeyeModule in keye.py) builds Qwen3ForCausalLM on that config, whose Qwen2Model reads
hf_config.get_text_config(): that KeyeVL1_5TextConfig.
"""

from __future__ import annotations

# KeyeVL1_5TextConfig.__init__'s defaults for the fields kvplan reads (it sets no head_dim: vLLM's Qwen3Attention
# then takes hidden_size / num_attention_heads; sliding_window counts only with use_sliding_window, and its
# layer_types default to full_attention on every layer)
KEYE_VL1_5_TEXT_DEFAULTS = {
    "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 4096, "attention_bias": False,
    "head_dim": None,  # the class sets none: not Qwen3Config's 128 (vLLM's Qwen3Attention then takes hidden / heads)
}
