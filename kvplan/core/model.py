"""A model as kvplan sees it: the per-layer cache description plus a few totals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, replace
from functools import cached_property

from .._record import record
from .layers import LayerSpec


@record
class ModelSpec:
    name: str
    model_type: str
    layers: tuple[LayerSpec, ...]
    param_count: int  # every weight, all experts included
    active_param_count: int  # weights one token passes through (MoE: routed top-k)
    weight_bytes_per_param: float = 2.0  # the checkpoint's bytes / param_count (quantized: an average)
    weight_linear_bytes_per_param: float | None = None  # one decoder-layer linear weight (None: the average)
    weight_plain_params: int = 0  # of a quantized checkpoint, the parameters kept in its float dtype (embeddings ...)
    # of weight_bytes, what each tensor-parallel rank holds whole (norms, MoE routers, RowParallelLinear biases,
    # per-tensor scales, KV scales), where kvplan's per-module count of the family gives it
    # (configs/weight_tables/__init__.py), else 0: the bytes, or for an unquantized config a counter that builds the table
    # on first use (configs/weight_format.py: only a TP split needs it, and the table costs more than the rest of
    # build_model). Read it as weight_replicated_bytes.
    weight_replicated: int | Callable[[], int] = field(default=0, compare=False, repr=False)
    # of weight_bytes, the KV shares vLLM splits by KV head (k_proj / v_proj, or the keys and values of a fused
    # qkv: configs/weight_tables/__init__.py Module.kv_heads), as (KV heads, bytes) pairs, where the family's per-module
    # count gives them, else None (not known): the pairs, or for an unquantized config a counter (as
    # weight_replicated) that may answer None. Under TP above a pair's KV heads each rank holds 1 / heads of its
    # bytes (capacity.weights.kv_rank_bytes). Read it as weight_kv_bytes.
    weight_kv: tuple[tuple[int, int], ...] | Callable[[], tuple | None] | None = field(default=None, compare=False,
                                                                                       repr=False)
    weight_g_idx_bytes: int = 0  # of weight_bytes, GPTQ's g_idx (configs/quant_stored.py), which vLLM drops
    # of a quantized checkpoint whose routed experts are stored in a format of their own (FP8's store_dtype
    # "mxfp4": configs/quant_bytes.py), their parameters and bytes (in weight_bytes); 0 otherwise
    weight_expert_params: int = 0
    weight_expert_bytes: int = 0
    # the routed experts as the family's per-module count gives them (configs/weight_tables: the modules with
    # Module.experts): a counter answering (experts per MoE layer, their parameters, all layers, the dense MLP and
    # shared-expert parameters, the LM head's, the shared experts' alone: role "shared experts", the MoE layers) or None where
    # kvplan has no table that adds up to param_count; None: a model without one. Read it as weight_routed_params;
    # capacity.experts places them under data / expert parallelism
    weight_routed: Callable[[], tuple[int, ...] | None] | None = field(default=None, compare=False, repr=False)
    weight_dtype: str = "bfloat16"
    # an image-text wrapper's vision tower and projector (configs/vision_towers.py), outside param_count (the text
    # model's) but in weight_bytes, as (parameters, bytes, bytes vLLM holds whole on every TP rank); (0, 0, 0) where
    # none is counted. vLLM builds them on the first pipeline stage only (capacity.weights.stage_weight_bytes)
    weight_vision: tuple[int, int, int] = (0, 0, 0)
    # of weight_vision, (parameters, bytes) in the quantized dtype: the tower linears an engine's online quantization
    # quantizes (configs/quant_online.py quantized_tower); (0, 0) where the tower is all in the float dtype
    weight_vision_quantized: tuple[int, int] = (0, 0)
    max_context_tokens: int | None = None
    hidden_size: int = 0
    num_attention_heads: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default=())
    reading: str = "exact"  # "guessed": an unknown model_type read by transformers' generic rule
    family: str = ""  # the family record that read the config
    architecture: str | None = None  # the config's architectures[0] (what vLLM looks up in its registry)
    # every name in the config's architectures: vLLM and SGLang take the first their registry has
    architectures: tuple[str, ...] = ()
    mtp_layers: int | None = None  # num_nextn_predict_layers (Qwen3.5: mtp_num_hidden_layers), None: absent
    # the MTP depths whose attention is sliding (Inkling's mtp_config.local_layer_ids; the others are full)
    mtp_local_layers: tuple[int, ...] = ()
    # the attention layers of one MTP step where it is not one decoder layer (Nemotron-H: the full_attention
    # entries of mtp_layers_block_type); None: one a depth, or not read
    mtp_attention_layers: int | None = None
    # the KV cache a ModelOpt quantization config names ("fp8", "nvfp4"; configs.quant_bytes.modelopt_kv_cache),
    # which vLLM's --kv-cache-dtype auto follows from 0.14 (engines.vllm_rules.checkpoint_kv_dtypes); or
    # "fp8_ds_mla" for Mistral Large 4's dsa.fp8_kv_cache, which vLLM 0.34's auto keeps (engines.vllm_layer_specs.layer_specs)
    checkpoint_kv_cache: str | None = None
    # the config file's own model_type, and whether its auto_map names an AutoConfig (code the checkpoint ships,
    # which transformers runs only with trust_remote_code): engines.vllm_remote_code decides the flag from both
    config_model_type: str = ""
    config_ships_code: bool = False
    # the class its auto_map names for the first AutoModel* key ("" none; None: not read), which vLLM's
    # Transformers-backend fallback loads, with --trust-remote-code, when transformers has no class of the
    # architecture's name (engines.vllm_served)
    config_model_code: str | None = None
    # the tokenizer's own code: tokenizer_config.json's auto_map AutoTokenizer class (the fast one where it names
    # one, as transformers 5 prefers), "" where the file names none, None where no tokenizer_config.json was read
    # (kvplan.sources.tokenizer_code); engines.remote_code adds --trust-remote-code for it
    tokenizer_code: str | None = None
    tokenizer_source: str | None = None  # where that file was read (a path, a Hub repo, model_specs/index.json)
    # the --set / --set-new applied to its config (kvplan.sources.Override), which the engine models replay on
    # the config they read again (engines.vllm_load.raw_config); not part of the model's identity
    overrides: tuple = field(default=(), compare=False, repr=False)
    # the engine's --quantization VALUE that quantizes this float checkpoint as it loads (configs/quant_online.py;
    # the weights above are then what the engine holds), "" for a checkpoint served as stored
    online_quantization: str = ""
    # with it, the checkpoint's bytes in the dtype the engine loads it in before quantizing (a float32 one: 16-bit)
    online_float_bytes: int = 0

    @property
    def registry_names(self) -> tuple[str, ...]:
        """The architecture names an engine's registry is asked for, in order (architectures[0] alone for a
        ModelSpec built without the whole list)."""
        return self.architectures or ((self.architecture,) if self.architecture else ())

    @cached_property
    def groups(self) -> tuple[tuple[LayerSpec, int], ...]:
        """Distinct layer specs with their counts, in first-seen order (layers that
        reuse another layer's cache: one group per distinct cache they read, its
        first layer standing for all).

        Estimates iterate over these few groups, not over every layer.
        """
        by_id: dict[int, list] = {}
        for layer in self.layers:  # identical objects first: cheap
            entry = by_id.get(id(layer))
            if entry is None:
                by_id[id(layer)] = [layer, 1]
            else:
                entry[1] += 1
        merged: dict = {}
        for layer, count in by_id.values():  # then equal ones (a few hashes)
            # a layer that reuses another's cache stores nothing and reads what its
            # owner stores: which layer that is does not change any byte, so CLA's
            # sharers group together instead of one group per owner
            key = layer if layer.shares_cache_of is None else replace(layer, shares_cache_of=-1)
            entry = merged.get(key)
            if entry is None:
                merged[key] = [layer, count]
            else:
                entry[1] += count
        return tuple((layer, count) for layer, count in merged.values())

    def memo(self, key, make):
        """Per-instance cache for derived models (shards), keyed by `key`."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    @property
    def weight_replicated_bytes(self) -> int:
        whole = self.weight_replicated
        return whole if isinstance(whole, int) else whole()

    @property
    def weight_routed_params(self) -> tuple[int, ...] | None:
        """(routed experts a MoE layer, their parameters over every layer, the dense MLP and shared-expert
        parameters, the LM head's, the shared experts' alone, the MoE layers) from the family's per-module count."""
        return self.weight_routed() if self.weight_routed is not None else None

    @property
    def linear_weight_bytes(self) -> float:
        """Bytes of one decoder-layer linear weight: weight_linear_bytes_per_param, else the average."""
        return self.weight_linear_bytes_per_param or self.weight_bytes_per_param

    @property
    def weight_kv_bytes(self) -> tuple[tuple[int, int], ...] | None:
        kv = self.weight_kv
        return kv() if callable(kv) else kv

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def float_dtype(self) -> str:
        """The checkpoint's float dtype: weight_dtype, or of a quantized one ("int4 + float16") the tables'."""
        return self.weight_dtype.rpartition(" + ")[2] or self.weight_dtype

    @property
    def weight_bytes(self) -> int:
        return int(round(self.param_count * self.weight_bytes_per_param)) + self.weight_vision[1]

    def attention_shape(self) -> tuple[int, int] | None:
        """(kv_heads, head_dim) of the first attention cache, for listings."""
        for layer in self.layers:
            for cache in layer.caches:
                if cache.kind == "attention":
                    return cache.heads, cache.key_dim
        return None
