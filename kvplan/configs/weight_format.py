"""The weight format of the checkpoint a config describes (_weight_format): its float dtype, or its quantization
(kvplan.configs.quant_bytes, quant_mlx) read module by module where kvplan has a per-module count of the family
(configs/weight_tables), the bytes each TP rank holds whole, the KV shares, and the routed experts' counter."""

from __future__ import annotations

import functools

from ..errors import ConfigError
from . import quant_bytes, quant_mlx, quant_stored
from .checkpoint_dtype import WEIGHTS_NOT_SIZED, _float_dtype, _misshapen_quantization_config, _quantization_config
from .fields import Fields
from .module_counts import table_adding_up
from .param_embeddings import embedding_params
from .params_generic import gpt_oss_expert_weights


# how to give the weights kvplan cannot size from the config
_GIVE_WEIGHTS = ("give them with --weights, or point --weights at the checkpoint's folder or hf://REPO to read its "
                 "tensors")


def _unsized(dtype: str, why: str) -> tuple:
    """_weight_format's answer where the config does not size the weights: 0 B and why (GPU plans then refuse)."""
    return dtype, 0.0, 0.0, 0, (f"{WEIGHTS_NOT_SIZED}: {why}",), (0, 0, 0, 0, None)


def _weight_format(f: Fields, raw: dict, total: int, layers: list, dims, online=None) -> tuple:
    """(weight dtype, average bytes per parameter, bytes of one decoder-layer linear weight, parameters kept in
    the float dtype, notes, (bytes each TP rank holds whole, or for an unquantized config a counter of them that
    runs on first use, bytes of GPTQ g_idx, the routed experts' parameters and bytes where the format stores them
    in a format of their own: FP8's store_dtype)) of the
    checkpoint the config describes: its float dtype, or its quantization (kvplan.configs.quant_bytes) read
    module by module where kvplan has a per-module count of the family (configs/weight_tables/__init__.py: the embeddings,
    norms, routers, biases, a kept LM head and whatever a list of unquantized modules names in the float dtype,
    plus what the format stores once per quantized tensor); else with the embeddings, a kept LM head and, for
    gpt-oss, everything but the experts in the float dtype, norms, biases and routers at the quantized width (a
    list that keeps more then gives no figure). A quantization whose bytes kvplan cannot work out gives 0 B and
    says why (GPU plans then refuse)."""
    dtype = _float_dtype(f)[0]
    plain_bytes = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}.get(dtype, 2.0)
    misshapen = _misshapen_quantization_config(raw, f)
    if misshapen is not None and total:
        return _unsized(dtype, f"its quantization_config is a {misshapen}, not a JSON object; give them with "
                               "--weights, or point --weights at the checkpoint's folder")
    low_bit = raw.get("bigdl_transformers_low_bit")
    if low_bit and total:  # ipex-llm's save_low_bit writes its qtype here and its own low-bit tensors beside it
        return _unsized(dtype, f"a BigDL / ipex-llm low-bit checkpoint (bigdl_transformers_low_bit {low_bit!r}): its "
                               "tensors are in ipex-llm's own low-bit layout, which the config does not size and vLLM "
                               "0.34 has no method for; give them with --weights")
    mlx = quant_mlx.block(raw) if total else None
    if mlx is not None:  # mlx-lm's "quantization" (and its copy as quantization_config): no quant_method
        return _mlx_format(f, mlx, total, layers, dims, dtype, plain_bytes)
    quant = _quantization_config(raw, f)
    problem = quant_bytes.refusal(quant) if quant else None
    if problem:
        raise ConfigError(f"{f.source}: quantization_config: {problem}", "neither engine would load the checkpoint so")
    if not quant or not total:
        # an unquantized config counts what each TP rank holds whole on first use, not here (docs/weights.md)
        whole, kv = _replicated_counter(f, layers, dims, total, plain_bytes) if total else (0, None)
        return dtype, plain_bytes, plain_bytes, 0, (), (whole, 0, 0, 0, kv)
    try:
        q = quant_bytes.read(quant, f.model_type)
        if online is not None:  # an engine's online layout: what it holds beyond that format (quant_online.OnlineLayout)
            q = online.applied(q)
        if dtype == "float32" and q.float32_stored_as is not None:  # e.g. AWQ: 16-bit whatever the config says
            dtype, plain_bytes = q.float32_stored_as, 2.0
        if q.formats:  # more than one format, module by module (configs/weight_mixed.py)
            return _mixed_format(f, q, layers, dims, total, dtype, plain_bytes)
        split = (_module_split(f, q, layers, dims, total) if q.exclusions is not None
                 else None if q.experts_only else _whole_split(f, q, layers, dims, total))
        if split is None and q.experts_bytes_per_weight is not None:
            raise quant_bytes.Unsized(f"its store_dtype {q.experts_dtype!r} stores the routed experts in their own "
                                      f"format, and kvplan has no per-module count of model_type {f.model_type!r} "
                                      "that adds up to its parameter count to find them")
    except quant_bytes.Unsized as exc:
        return _unsized(dtype, f"{exc}; {_GIVE_WEIGHTS}")
    head_note = ""
    if q.keeps_lm_head and not q.experts_only and not f.has("tie_word_embeddings"):
        head = embedding_params(f)[1]
        head_note = f"; the config has no tie_word_embeddings, so the head is taken as {'separate' if head else 'tied'}"
    if split is not None:
        plain = total - split.quantized
        beside = quant_stored.stored(q, split)
        # routed experts in a format of their own (FP8's store_dtype): their params and bytes
        experts = split.experts if q.experts_bytes_per_weight is not None else 0
        experts_bytes = experts * q.experts_bytes_per_weight if experts else 0
        stored = ((split.quantized - experts) * q.bytes_per_weight + experts_bytes + plain * plain_bytes
                  + beside.total_bytes)
        kept = "; ".join(f"{role} {n:,}" for role, n in split.kept.items())
        if q.exclusions is not None:
            keeps = ("torchao leaves unquantized (linear layers only: not the routed experts; its "
                     "modules_to_not_convert)" if q.exclusions[0] == "torchao" else
                     "outside the routed experts" if q.exclusions[0] == "routed experts only" else
                     "its list of unquantized modules keeps")
            what = (f"the linear weights {keeps} ({kept or 'no linear weights'}), read "
                    "module by module, and the embeddings, norms, routers and biases")
        else:  # the head, when kept, is the only linear weight in the float dtype
            routers = ("norms and biases (the routers quantized, as the engine builds them)"
                       if f.model_type in q.quantized_router_families else "norms, routers and biases")
            what = f"read module by module: {'the LM head, ' if kept else ''}the embeddings, {routers}"
        note = (f"weights estimated as {q.label}: {q.bytes_per_weight:.4g} B per quantized weight with its scales, "
                f"{plain:,} parameters at {plain_bytes:g} B: {what}")
        if experts:
            note += (f"; the routed experts' {experts:,} weights as {q.experts_dtype.upper()} (store_dtype), "
                     f"{q.experts_bytes_per_weight:.4g} B each: packed 4-bit values and one uint8 E8M0 scale per 32 "
                     "(vLLM's Mxfp4MoEMethod layout)")
        if beside.parts:
            note += "; " + "; ".join(beside.parts)
        if beside.unsized:
            note += ("; estimated: not counted, as the config does not size them, " + " and ".join(beside.unsized))
        note += head_note if q.exclusions is None else ""
        # what each TP rank holds whole: float parameters, the weights of whole modules the format quantizes (at
        # its per-weight rate with scales), per-tensor and KV scales
        whole = int(split.replicated * plain_bytes + split.replicated_quantized * q.bytes_per_weight) \
            + beside.replicated_bytes
        # the KV shares vLLM splits by KV head: quantized weights at the format's rate with their scales and zero
        # points (which follow the same output rows: per group in bytes_per_weight, per row in per_output_row_bytes,
        # as a QKVParallelLinear loads a ChannelQuantScaleParameter by KV head like its weight: vLLM 0.34 parameter.py
        # _ColumnvLLMParameter.load_qkv_weight, tp_rank // num_kv_head_replicas), biases and kept
        # weights in the float dtype
        kv = tuple((heads, int(quantized * q.bytes_per_weight + rows * q.per_output_row_bytes + kept * plain_bytes))
                   for heads, quantized, kept, rows in split.kv)
        label = f"{q.experts_dtype} experts + {q.dtype} + {dtype}" if experts else f"{q.dtype} + {dtype}"
        return (label, stored / total, q.bytes_per_weight, plain, (note,),
                (whole, beside.g_idx_bytes, experts, round(experts_bytes), kv))
    embed, head = embedding_params(f)
    plain = embed + (head if q.keeps_lm_head else 0)
    whole, kv = 0, None
    if q.experts_only:
        plain = total - gpt_oss_expert_weights(f, len(layers))
        # all but the experts stays in the float dtype, so what each TP rank holds whole (norms, routers, o_proj
        # biases) and the KV shares are the unquantized checkpoint's, from the per-module count where it adds up
        counter, kv_counter = _replicated_counter(f, layers, dims, total, plain_bytes)
        whole = counter() if callable(counter) else 0
        kv = kv_counter() if callable(kv_counter) else None
    stored = (total - plain) * q.bytes_per_weight + plain * plain_bytes
    kept = "all but the routed experts' weights" if q.experts_only else (
        "embeddings and LM head" if q.keeps_lm_head and head else "embeddings")
    note = (f"weights estimated as {q.label}: {q.bytes_per_weight:.4g} B per quantized weight with its scales, "
            f"{plain:,} parameters ({kept}) at {plain_bytes:g} B")
    if not q.experts_only:
        note += (f"; norms, biases and routers counted at the quantized width and per-tensor scales left out (kvplan "
                 f"has no per-module count of model_type {f.model_type!r} that adds up to its parameter count)")
    notes = (note + head_note,)
    return (f"{q.dtype} + {dtype}" if plain else q.dtype, stored / total, q.bytes_per_weight, plain, notes,
            (whole, 0, 0, 0, kv))


def _mixed_format(f: Fields, q, layers: list, dims, total: int, dtype: str, plain_bytes: float) -> tuple:
    """_weight_format's answer for a checkpoint in several formats (QuantBytes.formats), module by module
    (configs/weight_mixed.py); Unsized (no figure, with the reason) propagates to the caller."""
    from .weight_mixed import mixed_split

    stored, quantized, parts, unsized, whole, kv = mixed_split(f, q, layers, dims, total, plain_bytes)
    plain = total - quantized
    note = (f"weights estimated as {q.label}, module by module: " + "; ".join(parts)
            + f"; {plain:,} parameters at {plain_bytes:g} B (the modules no entry quantizes or its list of unquantized "
              "modules keeps, the embeddings, norms, routers and biases)")
    if unsized:
        note += "; estimated: not counted, as the config does not size them, " + " and ".join(unsized)
    return (f"{q.dtype} + {dtype}", stored / total, stored / total, plain, (note,), (whole, 0, 0, 0, kv))


def _mlx_format(f: Fields, mlx: dict, total: int, layers: list, dims, dtype: str, plain_bytes: float) -> tuple:
    """_weight_format's answer for an MLX checkpoint (configs/quant_mlx.py), module by module from kvplan's table
    of the family where mlx-lm's module layout was read; else no figure, with the reason."""
    try:
        q = quant_mlx.read(mlx)
        if f.model_type not in quant_mlx.FAMILIES:
            raise quant_bytes.Unsized(f"an MLX checkpoint ({q.default.label}) of model_type {f.model_type!r}, whose "
                                      "mlx-lm module layout kvplan has not read (it has: "
                                      f"{', '.join(quant_mlx.FAMILIES)})")
        modules = table_adding_up(f, layers, dims, total)
        if not modules:
            raise quant_bytes.Unsized(f"an MLX checkpoint ({q.default.label}), and kvplan's per-module count of "
                                      f"model_type {f.model_type!r} does not add up to its parameter count")
        sized = quant_mlx.size(q, modules, f.int("hidden_size"), int(plain_bytes),
                               quant_mlx.PATH_PREFIX.get(f.model_type, ""))
    except quant_bytes.Unsized as exc:
        return _unsized(dtype, f"{exc}; {_GIVE_WEIGHTS}")
    d = q.default
    rate = d.bytes_per_weight(int(plain_bytes))
    plain = total - sized.quantized
    scales = (f"a {dtype} scale and bias per {d.group_size} weights" if d.mode == "affine"
              else f"a uint8 scale per {d.group_size} weights")
    note = (f"weights estimated as MLX {d.label} (mlx-lm): {rate:.4g} B per quantized weight with {scales}, "
            f"{sized.quantized:,} parameters quantized (the linear weights, the embeddings and any router, as MLX "
            f"quantizes nn.Linear and nn.Embedding), {plain:,} parameters at {plain_bytes:g} B (norms, biases)")
    others = {label: n for label, n in sized.rates.items() if label != d.label}
    if others:
        note += "; by the config's per-module entries " + ", ".join(f"{n:,} at {label}" for label, n in others.items())
    if sized.kept:
        note += (f"; {sized.kept:,} of them left unquantized: inputs not a multiple of group {d.group_size} "
                 "(mlx_lm quantize_model)")
    note += "; vLLM and SGLang cannot serve an MLX checkpoint"
    qdtype = f"mlx-int{d.bits}" if d.mode == "affine" else f"mlx-{d.mode}"
    return (f"{qdtype} + {dtype}", sized.stored_bytes / total, rate, plain, (note,),
            (int(sized.whole_bytes), 0, 0, 0, None))


def _replicated_counter(f: Fields, layers: list, dims, total: int, plain_bytes: float):
    """(the bytes each TP rank holds whole of an unquantized checkpoint (norms, routers, RowParallelLinear biases:
    weight_tables.replicated_params), the KV shares vLLM splits by KV head as (KV heads, bytes) pairs
    (weight_tables.kv_params)), as two counters that build the family's per-module table when first called and
    keep the answer: building it costs 0.4 to 3 ms, more than the rest of build_model for most configs, and only a
    TP split reads it. 0 and None where kvplan has no such table, or one that does not add up to the count."""
    from . import weight_tables

    if f.model_type not in weight_tables.TABLES:
        return 0, None

    @functools.cache
    def modules() -> list:
        return table_adding_up(f, layers, dims, total)

    def count() -> int:
        return int(weight_tables.replicated_params(modules()) * plain_bytes)

    def kv() -> tuple[tuple[int, int], ...] | None:
        found = modules()
        return tuple((heads, int(n * plain_bytes)) for heads, n in sorted(weight_tables.kv_params(found).items())) \
            if found else None

    return functools.cache(count), functools.cache(kv)


def _routed_counter(f: Fields, layers: list, dims, total: int):
    """A counter of the routed experts (experts per MoE layer, their parameters over every layer; then the dense MLP
    and shared-expert parameters, the LM head's, the shared experts' alone, the MoE layers) from the family's
    per-module table (weight_tables: the modules with Module.experts), built on first call (only a data / expert
    parallel plan reads it: capacity.experts); it answers None where kvplan has no table that adds up to the count
    (a dense model: 0 experts and 0 parameters, the MLPs and head counted for SGLang's attention DP)."""
    from . import weight_tables

    if f.model_type not in weight_tables.TABLES:
        return None

    @functools.cache
    def count() -> tuple[int, int] | None:
        found = table_adding_up(f, layers, dims, total)
        if not found:
            return None
        routed = [m for m in found if m.experts]
        # and the parameters SGLang's attention DP splits over the whole TP group (capacity.experts.full_tp_bytes): the
        # dense MLPs and shared experts (weight), the untied LM head; and the shared experts alone (vLLM's
        # sequence-parallel MoE holds them whole: capacity.experts.shared_bytes)
        ffn = sum(m.weight for m in found if m.role in ("mlp", "shared experts") and not m.top)
        head = sum(m.weight + m.other for m in found if m.role == "lm_head")
        shared = sum(m.weight for m in found if m.role == "shared experts")
        # and the MoE layers: the decoder layers ("layers.N.") with routed experts (EPLB's per-layer state:
        # capacity/eplb.py)
        moe_layers = len({m.name.split(".")[1] for m in routed if m.name.startswith("layers.") and not m.top})
        return (max((m.experts for m in routed), default=0), sum(m.weight for m in routed), ffn, head, shared,
                moe_layers)

    return count


def _whole_split(f: Fields, q, layers: list, dims, total: int):
    """The parameters q's format quantizes when it keeps no linear layer but perhaps the head: every linear
    weight of the family's per-module count (configs/weight_tables/__init__.py); None where kvplan has no such count, or
    one that does not add up to the parameter count."""
    from .weight_tables import split

    modules = table_adding_up(f, layers, dims, total)
    if not modules:
        return None
    if f.model_type in q.quantized_router_families:  # the engine quantizes the router too (configs/quant_online.py)
        from .weight_tables import quantized_routers

        modules = quantized_routers(modules, f.int("hidden_size"))
    return split(modules, lambda name: False, quantizes_head=not q.keeps_lm_head, family=f.model_type)


def _module_split(f: Fields, q, layers: list, dims, total: int):
    """The parameters q's format quantizes under its list of unquantized modules, module by module
    (configs/weight_tables/__init__.py, matched as configs/quant_exclude.py reads the format's list)."""
    from .weight_tables import split, table
    from .quant_exclude import Matcher

    from .quant_exclude import ROUTED_EXPERTS_ONLY

    style, names = q.exclusions
    modules = table(f, layers, dims)
    if not modules and style == "torchao":
        raise quant_bytes.Unsized("torchao quantizes linear layers only, not the routed experts, which kvplan reads "
                                  f"module by module, and it has no per-module count of model_type {f.model_type!r}")
    if not modules and style == ROUTED_EXPERTS_ONLY:
        raise quant_bytes.Unsized("only the routed experts are quantized, which kvplan finds module by module, and it "
                                  f"has no per-module count of model_type {f.model_type!r}")
    if not modules:
        try:
            quant_bytes._kept(list(names), style)
        except quant_bytes.Unsized as exc:
            raise quant_bytes.Unsized(f"{exc} (kvplan reads such lists module by module, and has no per-module "
                                      f"count of model_type {f.model_type!r})") from None
    counted = sum(m.weight + m.other for m in modules)
    if counted != total:
        raise quant_bytes.Unsized(f"{style} keeps modules unquantized, and kvplan's per-module count of model_type "
                                  f"{f.model_type!r} ({counted:,} parameters) differs from its parameter count "
                                  f"({total:,}) for this config")
    if style == ROUTED_EXPERTS_ONLY:
        return split(modules, lambda name: False, quantizes_head=False, family=f.model_type, routed_experts_only=True)
    return split(modules, Matcher(style, names), quantizes_head=not q.keeps_lm_head, family=f.model_type)

