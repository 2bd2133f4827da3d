"""Turn a Hugging Face config dict into a ModelSpec (the per-layer cache description).

The same steps for every family (families.py holds one record per model_type):
1. find the family, unwrapping a nested text model (`text_config`, or the
   family's own key: `llm_config`, `language_config`);
2. read the layer count and each layer's kind (`layer_types`, else the older
   markers the family writes, else its rule: markers.py);
3. turn each kind into what the layer caches (attention K/V with its window or
   chunk, an MLA latent, a recurrent state, nothing);
4. apply KV sharing between layers, and count parameters for the weights.

An unknown model_type is read with transformers' generic cache rule only when
every structural field it carries is understood; the reading is then marked
"guessed". A field that hints at a structure kvplan cannot see (a per-layer
list, a latent rank, a state size) is refused by name instead.

Where it lives: this module assembles the ModelSpec (build_model: the counts, the weight format, the vision tower,
MTP layers, notes); step 1 is resolve_family.py (unknown types: unknown_types.py), steps 2-4 layer_assembly.py
(_read); the checkpoint's float dtype and quantization config checkpoint_dtype.py, the weight bytes by format
weight_format.py, the counts over the family's per-module table (the last layer, k/v and whole modules,
counted_params) module_counts.py. The names those modules hold are re-exported here for code that imports them
from this module; new code imports them from their own modules.
"""

from __future__ import annotations

import warnings

from ..core.model import ModelSpec
from ..core.transform import intern
from ..errors import ConfigError
from . import quant_bytes, quant_mlx
from .checkpoint_dtype import (WEIGHTS_NOT_SIZED, _QUANTIZED_NAME, _float_dtype, _quantization_config,
                               float_width_bytes)
from .families import PARAMS_OFF
from .fields import Fields
from .layer_assembly import _read
from .module_counts import counted_params
from .resolve_family import _architecture, _architectures, _model_code
from .weight_format import _routed_counter, _weight_format

# re-exported (__all__): their homes since the split (session 27)
from .checkpoint_dtype import _DTYPES, _misshapen_quantization_config, checkpoint_quantization_config
from .layer_assembly import _LayerMaker, layer_count, layer_kinds, share_last_layers, window_tokens
from .module_counts import _module_table, kv_modules, last_layer_params, last_layer_whole_params, whole_modules
from .resolve_family import (_DTYPE_NAMES, _INHERITED, _WRAPPER_WINS, _text_model, nested_text, nested_text_path,
                             resolve)
from .unknown_types import _GENERIC_UNDERSTOOD, _NESTED_TEXT_KEYS, _STRUCTURAL, check_generic
from .weight_format import _mlx_format, _module_split, _replicated_counter, _whole_split

__all__ = [  # the names configs/build.py held before its split (session 27), for code that imports them from here
    "WEIGHTS_NOT_SIZED", "_DTYPES", "_DTYPE_NAMES", "_GENERIC_UNDERSTOOD", "_INHERITED", "_LayerMaker",
    "_NESTED_TEXT_KEYS", "_QUANTIZED_NAME", "_STRUCTURAL", "_WRAPPER_WINS", "_architecture", "_architectures",
    "_float_dtype", "_latent_fp8", "_misshapen_quantization_config", "_mlx_format", "_model_code", "_module_split",
    "_module_table", "_quantization_config", "_read", "_replicated_counter", "_routed_counter", "_text_model",
    "_weight_format", "_whole_split", "_with_vision_tower", "build_model", "check_generic",
    "checkpoint_quantization_config", "counted_params", "float_width_bytes", "kv_modules", "last_layer_params",
    "last_layer_whole_params", "layer_count", "layer_kinds", "nested_text", "nested_text_path", "resolve",
    "share_last_layers", "whole_modules", "window_tokens",
]


def _latent_fp8(f: Fields) -> str | None:
    """Mistral Large 4's dsa.fp8_kv_cache (configs/mistral_params.py): vLLM 0.34's --kv-cache-dtype auto keeps the
    latent as fp8_ds_mla on CUDA (model_executor/models/config.py MistralLarge4ForCausalLM.verify_and_update_config)."""
    return "fp8_ds_mla" if f.model_type == "mistral_large_4" and f.flag("fp8_kv_cache", default=False) else None



def _with_vision_tower(raw: dict, f: Fields, whole, online=None):
    """(the bytes each TP rank holds whole, ModelSpec.weight_vision, ModelSpec.weight_vision_quantized, notes) of an
    image-text wrapper whose vision tower and projector kvplan counts (configs/vision_towers.py): the tower's
    parameters and bytes at the checkpoint's float dtype (a quantized checkpoint is taken to keep its tower
    unquantized, as the note says), its linears in the engine's layout where its online quantization quantizes them
    (configs/quant_online.py quantized_tower), and its part vLLM holds whole added to `whole`; a wrapper kvplan does
    not count gets a note saying so."""
    from .quant_online import quantized_tower
    from .vision_count import NotCounted
    from .vision_towers import vision_tower

    try:
        tower = vision_tower(raw, f)  # a malformed vision_config: its ConfigError, one line
    except NotCounted as exc:
        return whole, (0, 0, 0), (0, 0), (f"vision tower not counted ({exc.message}): the weights are the text "
                                          "model's; give --weights for the checkpoint's",)
    if tower is None:
        # a vision_config, or Phi-4-multimodal's remote-code embd_layer (its image and audio encoders' settings)
        if isinstance(raw.get("vision_config"), dict) or isinstance(raw.get("embd_layer"), dict):
            return whole, (0, 0, 0), (0, 0), (
                f"vision tower not counted: kvplan has no count of model_type {raw.get('model_type')!r}'s image "
                "encoder and projector, which the checkpoint holds and an engine serving images loads; the weights "
                "are the text model's (give --weights, or the checkpoint's folder or hf://REPO)",)
        if f.model_type == "qwen" and isinstance(raw.get("visual"), dict):
            # Qwen-VL's remote-code QWenLMHeadModel: its ViT and resampler under transformer.visual, which SGLang
            # 0.5.23 qwen.py load_weights skips ("Skip visual encoder weights (e.g. Qwen-VL-Chat
            # transformer.visual.*)"): it serves the text model, which is what kvplan counts (Qwen-VL-Chat-Int4's
            # index holds 1,935,610,624 tower parameters in float16 beside it: tests/test_wild_configs_gptq.py)
            return whole, (0, 0, 0), (0, 0), (
                "vision tower not counted: Qwen-VL's `visual` encoder, which the checkpoint holds and SGLang 0.5.23 "
                "qwen.py skips at load; the weights are the text model's",)
        return whole, (0, 0, 0), (0, 0), ()
    width = float_width_bytes(f)
    tower_q = quantized_tower(raw, online)
    total, extra, q_params, q_bytes = tower.sized(width, *(tower_q or ()))
    whole = (lambda base=whole: base() + extra) if callable(whole) else whole + extra
    quantized = (q_params, f"in the engine's online {tower_q[0].dtype}") if q_params else None
    return whole, (tower.params, total, extra), (q_params, q_bytes), (tower.note(width, quantized),)


def build_model(raw: dict, name: str, source: str | None = None, online=None) -> ModelSpec:
    """The per-layer description of the model a config dict describes; online: an engine's online quantization
    layout (configs/quant_online.py OnlineLayout) that raw's quantization_config stands for."""
    source = source or name
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config is not a JSON object")
    family, f, reading, layers, dims = _read(raw, source)
    notes: tuple[str, ...] = ()
    vision, vision_quantized = (0, 0, 0), (0, 0)
    try:
        if family.params is None:
            raise ConfigError(f"kvplan has no parameter count for model_type {f.model_type!r}")
        total, active, pooled = counted_params(family, f, layers, dims)
        notes += pooled
    except ConfigError as exc:  # the cache is read; only the weights estimate lacks a field
        total = active = 0
        notes += (f"parameters not counted ({exc.message}); {exc.hint or 'give the weights with --weights'}",)
    if total and f.model_type in PARAMS_OFF:
        notes += (f"parameter count approximate: kvplan's count for model_type {f.model_type!r} misses modules "
                  f"transformers builds for some configs ({PARAMS_OFF[f.model_type]}); give --weights, or the "
                  "checkpoint's folder or hf://REPO, for exact bytes",)
    weight_dtype, bytes_per_param, linear_bytes, plain, weight_notes, (whole_bytes, g_idx_bytes, expert_params,
                                                                       expert_bytes, kv_bytes) = _weight_format(
        f, raw, total, layers, dims, online)
    dtype_note = _float_dtype(f)[1]
    if dtype_note:
        weight_notes += (dtype_note,)
    if total and not _quantization_config(raw, f) and not quant_mlx.block(raw) and _QUANTIZED_NAME.search(name):
        weight_notes += (f"the name {name!r} suggests a quantized checkpoint, but its config declares no quantization "
                         "(no quantization_config, no hf_quant_config.json beside it): the weights are sized at "
                         f"{weight_dtype}; point kvplan at the checkpoint's folder or hf://REPO, or give --weights",)
    if family.weight_format is not None:  # DeepSeek-V4: experts in their own dtype, the rest per linear weight
        # (label, bytes per parameter[, bytes each TP rank holds whole: DeepSeek-V4, module by module])
        weight_dtype, bytes_per_param, *whole = family.weight_format(f, layers, total, weight_dtype.split(" + ")[0],
                                                                     linear_bytes)
        plain, whole_bytes, kv_bytes = 0, whole[0] if whole else 0, None
        expert_params = expert_bytes = 0
        weight_notes = tuple(n for n in weight_notes if n.startswith(WEIGHTS_NOT_SIZED))
    notes += weight_notes
    if total and bytes_per_param:  # the text model's weights sized: add the tower's
        whole_bytes, vision, vision_quantized, vision_notes = _with_vision_tower(raw, f, whole_bytes, online)
        notes += vision_notes
    if family.notes is not None:
        notes += family.notes(f)
    heads = f.opt_int("num_attention_heads") or 0
    # the MTP layers as the family's own field names them (None: absent): Qwen3.5's vLLM MTP model reads
    # mtp_num_hidden_layers, every other num_nextn_predict_layers, unless the family reads its own (Family.mtp);
    # transformers 5's Ernie4_5_MoeConfig stores it as num_mtp_layers (attribute_map: num_nextn_predict_layers)
    mtp_fields = (("mtp_num_hidden_layers",) if f.model_type.startswith("qwen3_5") else
                  # vLLM 0.33 / 0.34 config/speculative.py: Qwen4-Exp's n_predict is mtp_num_hidden_layers, else
                  # num_nextn_predict_layers
                  ("mtp_num_hidden_layers", "num_nextn_predict_layers") if f.model_type.startswith("qwen4_exp") else
                  ("num_nextn_predict_layers", "num_mtp_layers") if f.model_type == "ernie4_5_moe" else
                  ("num_nextn_predict_layers",))
    mtp_layers, mtp_local, mtp_notes = family.mtp(raw) if family.mtp is not None else (
        f.opt_int(*mtp_fields, minimum=0), (), ())
    notes += mtp_notes
    mtp_attention = None
    if family.mtp_attention is not None and mtp_layers:
        mtp_attention, attention_notes = family.mtp_attention(f)
        notes += attention_notes
    if reading == "guessed":
        notes += (f"guessed: unknown model_type {f.model_type!r} read with transformers' generic rule "
                 "(layer_types, else sliding_window on every layer, else full attention); check the layer kinds",)
        warnings.warn(notes[-1], stacklevel=2)
    return ModelSpec(
        name=name,
        model_type=f.model_type,
        layers=intern(layers),
        param_count=total,
        active_param_count=active,
        weight_bytes_per_param=bytes_per_param,
        weight_linear_bytes_per_param=linear_bytes,
        weight_plain_params=plain,
        weight_replicated=whole_bytes,
        weight_kv=kv_bytes,
        weight_g_idx_bytes=g_idx_bytes,
        weight_expert_params=expert_params,
        weight_expert_bytes=expert_bytes,
        weight_routed=_routed_counter(f, layers, dims, total) if total else None,
        weight_dtype=weight_dtype,
        weight_vision=vision,
        weight_vision_quantized=vision_quantized,
        max_context_tokens=f.opt_int("max_position_embeddings"),
        hidden_size=f.opt_int("hidden_size") or 0,
        num_attention_heads=heads,
        source=source,
        notes=notes,
        reading=reading,
        family=family.name,
        architecture=_architecture(raw),
        architectures=_architectures(raw),
        mtp_layers=mtp_layers,
        mtp_local_layers=mtp_local,
        mtp_attention_layers=mtp_attention,
        checkpoint_kv_cache=quant_bytes.modelopt_kv_cache(_quantization_config(raw, f)) or _latent_fp8(f),
        config_model_type=raw["model_type"],
        config_ships_code=isinstance(raw.get("auto_map"), dict) and "AutoConfig" in raw["auto_map"],
        config_model_code=_model_code(raw),
    )
