"""Step-3.5's MTP layers as vLLM 0.33+ builds them: how many, and which have sliding-window attention.

vLLM 0.33.0 / 0.34.0 read a step3p5 config with transformers' Step3p7TextConfig (transformers_utils/config.py:
`step3p5="Step3p7TextConfig"`), and config/speculative.py drafts from its text config (the step3p7 wrapper's
text_config). step3p5_mtp.py Step3p5AMultiTokenPredictor builds num_nextn_predict_layers Step3p5DecoderLayers
numbered num_hidden_layers + k; each takes its kind from step3p5.py `_get_layer_type`:
`[*layer_types, *mtp_layer_types][index]`. transformers 5.25's Step3p7TextConfig.__post_init__ fills
mtp_layer_types: a legacy layer_types of num_hidden_layers + num_nextn_predict_layers entries is split (the
trailing ones become mtp_layer_types); no layer_types at all makes every layer, MTP ones too, full attention;
otherwise mtp_layer_types is what the file writes. A layer is sliding when its type is "sliding_attention" and
the config has a sliding_window (Step3p5DecoderLayer passes it only then), with num_attention_groups K/V heads of
head_dim either way.
"""

from __future__ import annotations

# the start of the note that says why the MTP layers are not read (engines.vllm_speculative refuses --mtp with it)
UNREAD = "Step-3.5's MTP layers are not read"
_TYPES = ("full_attention", "sliding_attention")


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def step3p5_mtp(raw: dict) -> tuple[int | None, tuple[int, ...], tuple[str, ...]]:
    """(MTP layers, the sliding ones' depths, notes) of a step3p5 config or a step3p7 wrapper's text_config;
    the count is None, with a note starting UNREAD, where vLLM's draft would fail or kvplan cannot say."""
    text = raw.get("text_config") if raw.get("model_type") == "step3p7" else raw
    if not isinstance(text, dict):
        return None, (), ()
    name = next((key for key in ("num_nextn_predict_layers", "num_mtp_layers") if key in text), None)
    if name is None:
        return None, (), ()
    depths, layers = _count(text[name]), _count(text.get("num_hidden_layers"))
    if depths is None or layers is None:
        return None, (), (f"{UNREAD}: {name} and num_hidden_layers must be counts",)
    if not depths:
        return 0, (), ()
    listed, extra = text.get("layer_types"), text.get("mtp_layer_types")
    if listed is None:
        types = ["full_attention"] * depths
    elif isinstance(listed, list) and len(listed) == layers + depths:
        types = listed[layers:]
    elif isinstance(extra, list) and len(extra) >= depths:
        types = extra[:depths]
    else:
        return None, (), (f"{UNREAD}: layer_types lists {len(listed) if isinstance(listed, list) else 'no'} "
                          f"entries for {layers} layers and {depths} MTP layers, and mtp_layer_types does not "
                          "name the MTP layers' attention, so vLLM's Step3p5DecoderLayer would index past the list "
                          "(step3p5.py _get_layer_type)",)
    if any(kind not in _TYPES for kind in types):
        return None, (), (f"{UNREAD}: their layer types {types!r} are not full_attention / sliding_attention",)
    table = text.get("per_layer_config")
    if isinstance(table, dict) and any(isinstance(entry, dict) and {"num_key_value_heads", "head_dim"} & set(entry)
                                       for entry in table.values()):
        return None, (), (f"{UNREAD}: per_layer_config changes a layer's K/V heads or head_dim, which vLLM 0.34's "
                          "Step3p5Attention never reads (num_attention_groups x head_dim on every layer), so kvplan "
                          "has no target layer to copy for the draft",)
    if text.get("sliding_window") is None:  # Step3p5Attention gets per_layer_sliding_window None: full attention
        return depths, (), ()
    return depths, tuple(k for k, kind in enumerate(types) if kind == "sliding_attention"), ()


def mlp_kinds(text: dict, depths: int) -> list[str]:
    """Each MTP layer's MLP, "sparse" (MoE) or "dense", as vLLM 0.34 step3p5.py _is_moe_layer reads
    [*mlp_layer_types, *mtp_mlp_layer_types] of transformers' Step3p7TextConfig: a legacy mlp_layer_types of
    num_hidden_layers + depths entries is split; no mlp_layer_types derives them over that range from
    moe_layers_enum (absent: layers 3 to num_hidden_layers - 1, so the MTP layers are dense); an index past the
    lists is dense. "unread" where the fields are not lists or strings kvplan can read."""
    layers = _count(text.get("num_hidden_layers")) or 0
    listed, extra = text.get("mlp_layer_types"), text.get("mtp_mlp_layer_types")
    if isinstance(listed, list) and len(listed) == layers + depths:
        kinds = listed[layers:]
    elif listed is None:
        enum = text.get("moe_layers_enum")
        items = enum.split(",") if isinstance(enum, str) else enum if isinstance(enum, list) else []
        try:
            moe = {int(i) for i in items if str(i).strip()}
        except ValueError:
            return ["unread"] * depths
        kinds = ["sparse" if layers + k in moe else "dense" for k in range(depths)]
    elif isinstance(listed, list):
        kinds = list(extra) if isinstance(extra, list) else []
    else:
        return ["unread"] * depths
    kinds = kinds + ["dense"] * (depths - len(kinds))
    return ["dense" if kind == "dense" else "sparse" if kind == "sparse" else "unread" for kind in kinds[:depths]]
