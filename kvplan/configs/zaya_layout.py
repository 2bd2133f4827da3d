"""ZAYA1's two config layouts, read once for kvplan's own reading and for SGLang's (kvplan.engines.sglang_zaya).

- transformers' layout (transformers 5.25 models/zaya/configuration_zaya.py, the one vLLM 0.34 builds from):
  num_hidden_layers layers, each CCA attention plus MoE; num_attention_heads, num_key_value_heads, head_dim.
- Zyphra's Megatron-style layout (ZAYA1-base and its siblings), which SGLang 0.5.23's own ZayaConfig reads
  (configs/zaya.py): attention and MoE are separate half-layers listed in zaya_layers ("a" an attention
  half-layer, an integer the expert count of a MoE one), num_hidden_layers counts the half-layers, and the
  per-half-layer lists cca_num_q_heads and num_query_groups_list hold the heads (0 on MoE entries). SGLang's
  ZayaConfig takes the list as the layer count whenever it is non-empty, full_attention_layer_ids = the "a"
  indices, num_attention_heads = the first non-zero cca_num_q_heads, num_query_groups = the first non-zero
  num_query_groups_list entry (each falling back to the scalar field), and head_dim = head_dim (default 128), or
  kv_channels where head_dim is null. It stores swa_layers but no module reads it (models/zaya.py builds every
  RadixAttention without a window), so no release kvplan has read fixes what its entries mean.

transformers 5.25 refuses the Megatron layout (its strict ZayaConfig rejects `rope_scaling: false`, and it has
no weight conversion for it); vLLM 0.34 builds transformers' ZayaConfig and loads transformers' weight names only.
"""

from __future__ import annotations

from ..errors import ConfigError
from .attention import head_dims
from .fields import Fields

MEGATRON = "zaya_layers"
# the note every reading of a Megatron-style config carries; engines find the layout by it (the ModelSpec keeps
# no raw config)
MEGATRON_NOTE = "Megatron-style ZAYA config (zaya_layers)"
_LISTS = ("cca_num_q_heads", "num_query_groups_list")


def is_megatron(raw: dict) -> bool:
    """Whether a config dict is in the Megatron-style layout: SGLang's ZayaConfig reads zaya_layers when it is
    a non-empty list."""
    layers = raw.get(MEGATRON)
    return isinstance(layers, list) and bool(layers)


def first_nonzero(raw: dict, key: str):
    """ZayaConfig: the first non-zero entry of a per-layer list, or None without one."""
    values = raw.get(key)
    return next((v for v in values if v), None) if isinstance(values, list) and values else None


def attention_ids(raw: dict) -> list[int]:
    """SGLang's ZayaConfig.full_attention_layer_ids of a Megatron-style config: the "a" indices of zaya_layers."""
    return [i for i, kind in enumerate(raw[MEGATRON]) if kind == "a"]


def megatron_dims(f: Fields) -> tuple[int, int, int]:
    """(heads, KV heads, head_dim) of a Megatron-style config's attention half-layers, as SGLang's ZayaConfig reads
    them, checked; head_dim is kv_channels where head_dim is not written (Megatron's name for the head width)."""
    kinds = f.list(MEGATRON)
    bad = next((i for i, k in enumerate(kinds) if k != "a" and (isinstance(k, bool) or not isinstance(k, int))),
               None)
    if bad is not None:
        raise ConfigError(f"{f.source}: {MEGATRON}[{bad}] is {kinds[bad]!r}; ZAYA's entries are 'a' (attention) "
                          "or an expert count (MoE)", "fix the config")
    if f.has("layer_types"):
        raise ConfigError(f"{f.source}: the config has both {MEGATRON} (Megatron-style half-layers) and layer_types "
                          "(transformers' layout); kvplan cannot tell which one the checkpoint follows",
                          "remove the one the checkpoint does not follow (--set layer_types=null)")
    if f.get("swa_layers"):
        raise ConfigError(f"{f.source}: swa_layers is set, and no ZAYA code kvplan has read says what its entries "
                          "mean (SGLang 0.5.23 stores it unused and pools every attention layer as full)",
                          "pass --set swa_layers=null to plan every layer full, as SGLang 0.5.23 does")
    for key in _LISTS:
        values = f.list(key)
        bad = next((i for i, v in enumerate(values or ()) if isinstance(v, bool) or not isinstance(v, int)), None)
        if bad is not None:
            raise ConfigError(f"{f.source}: {key}[{bad}] is {values[bad]!r}; ZAYA's per-half-layer head counts are "
                              "integers (0 on MoE half-layers)", "fix the config")
        if values is not None and len({v for v in values if v}) > 1:
            raise ConfigError(f"{f.source}: {key} differs between attention layers; SGLang 0.5.23 builds every "
                              "attention layer with its first non-zero entry and kvplan reads ZAYA the same way",
                              "fix the config")
    heads = f.check_int("cca_num_q_heads", first_nonzero(f.raw, "cca_num_q_heads") or f.get("num_attention_heads",
                                                                                           default=8))
    kv = f.check_int("num_query_groups_list", first_nonzero(f.raw, "num_query_groups_list")
                     or f.get("num_query_groups", default=2))
    head_dim = f.raw.get("head_dim")
    head_dim = f.check_int("head_dim" if head_dim is not None else "kv_channels",
                           head_dim if head_dim is not None else f.raw.get("kv_channels", 128))
    if heads % kv:
        raise ConfigError(f"{f.source}: cca_num_q_heads {heads} is not a multiple of num_query_groups {kv} "
                          "(ZAYA's CCA groups the query heads by KV head)", "fix the config")
    return heads, kv, head_dim


def zaya_dims(f: Fields) -> tuple[int, int, int]:
    """(heads, KV heads, head_dim) of either layout."""
    if is_megatron(f.raw):
        return megatron_dims(f)
    return f.int("num_attention_heads"), f.int("num_key_value_heads"), f.int("head_dim")


def zaya_layers(f: Fields) -> int:
    """The layers that cache: the "a" half-layers of a Megatron-style config (MoE half-layers keep nothing), else
    num_hidden_layers."""
    if is_megatron(f.raw):
        megatron_dims(f)  # checked before anything is built
        return len(attention_ids(f.raw))
    _refuse_half_megatron(f)
    return f.int("num_hidden_layers")


def _refuse_half_megatron(f: Fields) -> None:
    """A config that is not Megatron-style (no non-empty zaya_layers list) but carries that layout's fields: its
    num_hidden_layers may count half-layers, so transformers' reading (one cache per layer) could be twice too many."""
    if f.raw.get(MEGATRON) is not None:  # null (--set zaya_layers=null) is absent
        raise ConfigError(f"{f.source}: {MEGATRON} is {f.raw[MEGATRON]!r}, not a non-empty list of 'a' (attention) "
                          "and expert counts (MoE), so kvplan cannot tell which half-layers cache",
                          f"fix {MEGATRON}, or remove it (--set {MEGATRON}=null) if the config follows transformers' layout")
    megatron = [key for key in (*_LISTS, "ffn_hidden_size_list", "cca") if f.raw.get(key) is not None]
    if megatron:
        raise ConfigError(f"{f.source}: Megatron-style ZAYA fields ({', '.join(megatron)}) without a {MEGATRON} "
                          "list: num_hidden_layers may count attention and MoE half-layers, so kvplan cannot tell "
                          "which layers cache", f"add the checkpoint's {MEGATRON} list to the config")


def zaya_head_dims(f: Fields) -> tuple[int, int, int, int]:
    """(heads, KV heads, key width, value width) for the builder: transformers' layout by the common rule."""
    if not is_megatron(f.raw):
        return head_dims(f)
    heads, kv, head_dim = megatron_dims(f)
    return heads, kv, head_dim, head_dim


def zaya_notes(f: Fields) -> tuple[str, ...]:
    if not is_megatron(f.raw):
        return ()
    heads, kv, head_dim = megatron_dims(f)
    n = len(f.raw[MEGATRON])
    return (f"{MEGATRON_NOTE}: {len(attention_ids(f.raw))} attention half-layers of {n} ('a' entries; the "
            f"MoE half-layers cache nothing), {heads} heads, {kv} KV heads x {head_dim} (cca_num_q_heads, "
            "num_query_groups_list, kv_channels), read as SGLang 0.5.23's ZayaConfig reads them; transformers "
            "5.25 and vLLM 0.34 cannot load this layout",)


__all__ = ["MEGATRON", "MEGATRON_NOTE", "first_nonzero", "is_megatron", "megatron_dims", "attention_ids",
           "zaya_dims", "zaya_head_dims", "zaya_layers", "zaya_notes"]
