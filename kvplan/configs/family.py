"""One record per model family: everything kvplan needs to read its configs.

A family says which fields hold its layers, heads and widths (as aliases of
transformers' canonical names), the defaults transformers fills in, which layer
kinds it can have, which per-layer markers it writes, how kinds are derived when
the config lists none, what a recurrent layer keeps, and whether the text model
is nested. The builder (build.py) is the same for every family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import kinds as K


@dataclass(frozen=True)
class Family:
    types: tuple[str, ...]  # model_type values this record reads
    kinds: frozenset[str] = frozenset({K.FULL})  # layer kinds the family can have
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # canonical -> names written
    defaults: Mapping[str, Any] = field(default_factory=dict)  # transformers' defaults (a wrapper's: its text class's)
    nested_defaults: Mapping[str, Any] = field(default_factory=dict)  # its class defaults, for a sparse text_config
    markers: tuple[str, ...] = ()  # older per-layer markers honoured, in order (after layer_types)
    derive: Callable | None = None  # (fields, n) -> kinds, when the config carries no marker
    rest: str = K.LINEAR  # the kind of a layer an index-list marker does not list
    attention: str = "kv"  # kv | latent | compressed (DeepSeek-V4): what an attention layer caches
    kv_rule: Callable | None = None  # (fields, heads) -> KV heads, when not num_key_value_heads
    dims: Callable | None = None  # fields -> (heads, kv heads, key width, value width), a whole rule
    layers_rule: Callable | None = None  # fields -> layer count, when not num_hidden_layers
    trailing: str | None = None  # a field counting extra trailing layer_types entries (MTP layers) to drop
    refine: Callable | None = None  # (fields, kinds) -> kinds, a last family-specific pass
    refuse: tuple[tuple[str, str], ...] = ()  # (flag field, why): configs that set it are refused
    window_gate: str | None = None  # a flag that must be true for the window to count (use_sliding_window)
    window_gate_default: bool = False  # the flag's value when the config leaves it out
    window: Callable | None = None  # fields -> sliding window tokens (or None), when not plainly sliding_window
    per_layer: Callable | None = None  # (fields, index, kind) -> {"num_key_value_heads": .., "head_dim": ..} overrides
    state: Callable | None = None  # fields -> RecurrentState of a linear_attention layer
    conv: Callable | None = None  # fields -> RecurrentState of a conv layer
    kind_state: Callable | None = None  # (fields, kind) -> RecurrentState, when it differs by layer kind
    text: str | None = None  # model_type of the nested text model (text_config), when there is one
    # the key holding the nested text model, when it is not text_config (InternVL's llm_config, DeepSeek-VL2's
    # language_config); a wrapper with a key but no `text` has no default text model: the nested config must
    # name its model_type
    text_key: str | None = None
    # a key the config class reads the text model from before the nested key, when the config has it (not null):
    # the checkpoints' export layouts of Lfm3AudioConfig (lfm) and vLLM's Nemotron3_5TranscribeConfig (llm_config)
    text_key_first: str | None = None
    # (raw config) -> model_type of the text model, when the wrapper picks it from its own fields (MiniCPM-V's
    # version) rather than from the nested config's model_type
    text_rule: Callable | None = None
    # the wrapper's own defaults for its text model, when its config class builds the text config with them
    # (GlmAsrConfig._default_text_config_kwargs, MiDashengLM's Qwen2_5OmniTextConfig): they beat the text
    # family's, and a config without the nested key runs them alone rather than the top-level fields
    text_defaults: Mapping[str, Any] = field(default_factory=dict)
    # (raw config) -> (MTP depths or None, the sliding depths' ids, notes), for a family whose MTP draft is not
    # described by num_nextn_predict_layers (Inkling's top-level mtp_config)
    mtp: Callable | None = None
    # (fields) -> (the MTP module's attention layers, notes), for a family whose MTP step is not one decoder layer
    # (Nemotron-H: mtp_layers_block_type's full_attention entries); None: one a depth
    mtp_attention: Callable | None = None
    params: Callable | None = None  # (fields, layers, dims) -> (total, active) parameters
    # (fields, n, kinds) -> the n LayerSpecs, for a family whose layers depend on one another or on fields the
    # per-kind builder does not read (DeepSeek-V4.1's shared compressed caches, GLM-5-Next's pooled indexer)
    layers: Callable | None = None
    # (fields, layers) -> layers, after the layers are built: loops whose later passes keep their own caches
    # and states (Inkling2-Loop)
    repeat: Callable | None = None
    # (fields, layers, parameters, dtype, bytes per parameter) -> (label, average bytes per parameter), where
    # parts of the weights are stored in other dtypes (DeepSeek-V4's FP4 experts)
    weight_format: Callable | None = None
    notes: Callable | None = None  # fields -> notes every reading of the config carries
    rules: tuple[str, ...] = ()  # how it caches, in words, for `kvplan models --family`

    @property
    def name(self) -> str:
        return self.types[0]

    @property
    def wraps(self) -> bool:
        """Whether the family is a wrapper whose text model is read by another family."""
        return self.text is not None or self.text_key is not None or self.text_rule is not None

    @property
    def nested_key(self) -> str:
        """The key of the nested text model."""
        return self.text_key or "text_config"

    def key_in(self, raw: dict) -> str:
        """The key this config keeps its text model under: text_key_first when the config has it, else
        nested_key."""
        if self.text_key_first is not None and raw.get(self.text_key_first) is not None:
            return self.text_key_first
        return self.nested_key
