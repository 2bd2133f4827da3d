"""Token embeddings and the LM head: which model types tie the head by default, and the tables a quantized
checkpoint keeps in its float dtype (embedding_params). Moved out of configs/params.py; the tied defaults follow
transformers 5.25's configuration_*.py classes (checked for every type kvplan knows by tests/test_tied_defaults.py).
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import embeddings


# the model types whose config class ties the LM head to the embeddings when a config is silent (transformers 5.25
# configuration_*.py: `tie_word_embeddings: bool = True`, e.g. Ernie4_5Config, Cohere2Config, Starcoder2Config,
# Qwen3VLMoeTextConfig; checked for every type kvplan knows by tests/test_tied_defaults.py); save_pretrained leaves
# a value equal to the class default out of config.json, so a silent config means the class default (Mamba2Config's
# is False: Mamba-Codestral states it)
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gpt_bigcode", "mamba",
                    "falcon", "ernie4_5", "gemma4", "gemma4_text",
                    "aya_vision", "biogpt", "bloom", "cohere", "cohere2", "cohere2_moe", "cohere2_vision",
                    "cohere_compass", "cohere_compass_text", "ctrl", "ernie4_5_moe", "ernie4_5_vl_moe",
                    "ernie4_5_vl_moe_text", "falcon_mamba", "gemma4_unified", "gemma4_unified_text", "gpt-sw3", "gpt2",
                    "gpt_neo", "gpt_neox_japanese", "granite_docling", "granite_docling_text", "granite_swa",
                    "hunyuan_vl", "hunyuan_vl_text", "jetmoe", "lfm2", "lfm2_moe", "lfm2_vl", "lfm3", "lfm3_vl",
                    "minicpm3", "modernbert-decoder", "mpt", "opt", "paddleocr_vl", "paddleocr_vl_text", "paligemma",
                    "param2moe", "qwen2_5_omni", "qwen2_5_omni_text", "qwen2_5_omni_thinker", "qwen3_asr",
                    "qwen3_vl_moe", "qwen3_vl_moe_text", "recurrent_gemma", "shieldgemma2", "smollm3", "starcoder2",
                    "vaultgemma", "xglm", "youtu", "zamba", "zamba2", "zaya",
                    # wrappers whose text config ties by default (BLIP-2 and InstructBLIP: OPT; GOT-OCR2, PP-Chart2Table: Qwen2)
                    "blip-2", "fun_asr_nano", "got_ocr2", "instructblip", "instructblipvideo", "kosmos-2", "kosmos-2.5",
                    "kosmos_2_5_text_model", "kosmos_2_text_model", "lara_mini", "pp_chart2table"}


def _vocab_embed(f: Fields, hidden: int) -> int:
    return embeddings(f, hidden, f.model_type in _TIED_BY_DEFAULT, 0)


def embedding_params(f: Fields) -> tuple[int, int]:
    """(token embeddings, an LM head of its own: 0 when tied): the tables a quantized checkpoint keeps in its
    float dtype. Gemma 3n's per-layer input embeddings count with the token embeddings."""
    hidden = f.int("hidden_size", "n_embd")
    vocab = f.int("vocab_size", default=0, minimum=0)
    tied = f.flag("tie_word_embeddings", default=f.model_type in _TIED_BY_DEFAULT)
    embed = vocab * hidden
    if f.has("vocab_size_per_layer_input"):
        embed += (f.int("vocab_size_per_layer_input") * f.int("num_hidden_layers")
                  * f.int("hidden_size_per_layer_input", default=256))
    return embed, 0 if tied else vocab * hidden
