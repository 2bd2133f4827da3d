"""An unknown model_type: read with transformers' generic cache rule only when every structural field it carries is
understood (the reading is then marked "guessed"); a field that hints at a structure kvplan cannot see (a per-layer
list, a latent rank, a state size, a nested text model) is refused by name instead (check_generic)."""

from __future__ import annotations

import re

from ..errors import ConfigError

# Fields an unknown decoder may carry that the generic reading understands.
_GENERIC_UNDERSTOOD = {
    "layer_types", "sliding_window", "attention_chunk_size", "use_sliding_window", "max_window_layers",
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
    "max_position_embeddings", "intermediate_size", "vocab_size", "tie_word_embeddings",
    "mlp_layer_types", "layer_norm_eps", "rms_norm_eps",
    # every transformers config carries these (PreTrainedConfig); none says anything about the cache
    "_name_or_path", "architectures", "chunk_size_feed_forward", "dtype", "torch_dtype", "id2label", "label2id",
    "model_type", "output_attentions", "output_hidden_states", "problem_type", "return_dict",
    "transformers_version", "is_encoder_decoder",
}
# Keys that nest a text model (transformers' text_config; remote-code wrappers' llm_config, language_config):
# an unknown type carrying one is refused rather than read flat.
_NESTED_TEXT_KEYS = ("text_config", "llm_config", "language_config")
# Names that say a layer keeps something the generic reading cannot see.
_STRUCTURAL = re.compile(
    r"lora_rank|rope_head_dim|state_size|ssm|conv|mamba|linear_|cross_attention|block_type|kv_shared|"
    r"shared_layer|chunk|window_pattern|rope_layers|index_|indexer|attn_layer|attention_layer|full_attn|"
    r"attn_type|hybrid|recurrent|rnn|lru|compress|global_head|global_key_value|kv_lora|v_head_dim|"
    r"kv_channels|query_group|kv_n_heads|n_head_kv|num_kv_heads|multi_query|layers_block|window_size|"
    r"sliding_window_|attention_window|kv_heads|_idxs|layer_period|layer_offset|attention_groups|share_q_dim|"
    r"sink|v_channels|qk_nope_dim|qk_rope_dim|"  # openPangu's sink attention (K and V of different widths)
    r"cla_share|use_cla"  # cross-layer attention (Hunyuan-Large's remote HunYuanConfig: layers share K/V in groups)
)


def check_generic(raw: dict, source: str, model_type: str) -> None:
    for key, value in raw.items():
        if key in _GENERIC_UNDERSTOOD:
            continue
        if key in _NESTED_TEXT_KEYS or _STRUCTURAL.search(key):
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} carries {key!r}, which kvplan cannot read "
                "without knowing the family",
                "this family is not supported yet: run 'kvplan models --family' for the ones that are",
            )
        layers = raw.get("num_hidden_layers")
        if isinstance(value, list) and isinstance(layers, int) and layers > 1 and len(value) == layers:
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} carries a per-layer list {key!r}, which kvplan "
                "cannot read without knowing the family",
                "this family is not supported yet: run 'kvplan models --family' for the ones that are",
            )
    for need in ("num_hidden_layers", "num_attention_heads"):
        if raw.get(need) is None:
            raise ConfigError(
                f"{source}: unknown model_type {model_type!r} and the config lacks {need!r}",
                "kvplan reads unknown types only when they have the standard decoder fields",
            )
