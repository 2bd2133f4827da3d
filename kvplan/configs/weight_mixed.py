"""The weights of a checkpoint whose quantized linear layers are in more than one format (QuantBytes.formats,
configs/quant_mixed.py), module by module over kvplan's per-module count (configs/weight_tables).

Each module of the table gets its format (quant_mixed.format_of) unless the config's exclusion list names it; each
format's modules are then counted as a single-format checkpoint of that format would count them (weight_tables.split
with every other module out, quant_stored.stored for its per-tensor and per-row bytes), and the sums give the figure:
bytes = sum over formats (quantized weights x its bytes per weight + what it stores beside them) + every other
parameter in the float dtype. A module whose format cannot be found this way is refused by name."""

from __future__ import annotations

from . import quant_bytes, quant_stored


def module_formats(f, q, layers: list, dims, total: int):
    """(the table, {name -> index into the distinct formats}, the distinct formats): every spelling of each quantized
    module's names mapped to its format; Unsized where kvplan has no table that adds up or a module is ambiguous."""
    from .quant_exclude import Matcher
    from .quant_mixed import format_of
    from .weight_tables import table

    modules = table(f, layers, dims)
    counted = sum(m.weight + m.other for m in modules)
    if not modules or counted != total:
        raise quant_bytes.Unsized(f"{q.label} stores modules in different formats, which kvplan reads module by module, "
                                  f"and it has no per-module count of model_type {f.model_type!r} that adds up to its "
                                  "parameter count")
    style, names = q.exclusions if q.exclusions is not None else ("ModelOpt", ())
    excluded = Matcher(style, names)
    lookup = format_of(q)
    distinct: list = []
    where: dict[str, int] = {}
    for m in modules:
        if not m.weight:
            continue
        experts = sorted({0, 1, m.experts // 2, m.experts - 1} & set(range(m.experts))) if m.experts else [0]
        found = set()
        for e in experts:
            spelled = m.names(e)
            if m.role == "lm_head" and q.keeps_lm_head or any(excluded(n) for n in spelled):
                found.add(None)
                continue
            fq = lookup(spelled, bool(m.experts), True)
            if fq is not None and fq not in distinct:
                distinct.append(fq)
            found.add(None if fq is None else distinct.index(fq))
            for n in spelled:
                if fq is not None:
                    where[n] = distinct.index(fq)
        if len(found) > 1:
            raise quant_bytes.Unsized(f"{q.label}: the routed experts of {m.name.split('.experts')[0]} are not all in "
                                      "one format, and kvplan's per-module count holds them as one block")
    if not distinct:
        raise quant_bytes.Unsized(f"{q.label}: none of its entries names a module of kvplan's per-module count of "
                                  f"model_type {f.model_type!r} (the checkpoint names its modules otherwise)")
    _all_entries_found(f, q, modules)
    return modules, where, distinct


def _all_entries_found(f, q, modules: list) -> None:
    """Unsized, naming the entry, where a key of q.formats (a ModelOpt quantized_layers name, a compressed-tensors
    target other than 'Linear') names no module of the table: the checkpoint then names its modules otherwise than
    kvplan's count, and the format of the modules it does name cannot be told."""
    import re

    from .quant_mixed import MODELOPT_MIXED, target_matches

    spelled = {n for m in modules if m.weight for n in m.names(0)}
    if q.formats_style == MODELOPT_MIXED:
        experts = re.compile(r"\.experts\.\d+\.")
        for key, _ in q.formats:
            if key not in spelled and experts.sub(".experts.0.", key) not in spelled:
                raise quant_bytes.Unsized(f"{q.label}: its quantized_layers entry {key!r} names no module of kvplan's "
                                          f"per-module count of model_type {f.model_type!r}, so the format of each "
                                          "module cannot be told")
        return
    for key, _ in q.formats:
        if key == "Linear":
            continue
        if not any(target_matches(n, key) for n in spelled):
            raise quant_bytes.Unsized(f"{q.label}: its target {key!r} matches no module of kvplan's per-module count "
                                      f"of model_type {f.model_type!r} (vLLM 0.34 compressed_tensors/utils.py "
                                      "find_matched_target), so the format of each module cannot be told")


def mixed_split(f, q, layers: list, dims, total: int, plain_bytes: float):
    """(stored bytes, quantized parameters, the per-format parts for the note, what is not counted, bytes each TP
    rank holds whole, the KV shares as (KV heads, bytes)) of a checkpoint in several formats (module doc)."""
    from .weight_tables import replicated_params, split

    modules, where, distinct = module_formats(f, q, layers, dims, total)
    splits = [split(modules, lambda n, i=i: where.get(n) != i, quantizes_head=True, family=f.model_type)
              for i in range(len(distinct))]
    quantized = sum(s.quantized for s in splits)
    plain = total - quantized
    stored = plain * plain_bytes
    whole = (replicated_params(modules) - sum(s.replicated_quantized for s in splits)) * plain_bytes
    parts, unsized = [], [q.unsized] if q.unsized else []
    for fq, s in zip(distinct, splits):
        beside = quant_stored.stored(fq, s)
        stored += s.quantized * fq.bytes_per_weight + beside.total_bytes
        whole += s.replicated_quantized * fq.bytes_per_weight + beside.replicated_bytes
        parts.append(f"{s.quantized:,} weights as {fq.label} at {fq.bytes_per_weight:.4g} B"
                     + (f" ({'; '.join(beside.parts)})" if beside.parts else ""))
        unsized += [u for u in beside.unsized if u not in unsized]
    # ModelOpt's k_scale / v_scale: a layer whose k_proj and v_proj are quantized in one format (per-format count)
    kv_layers = sum(s.kv_layers for s in splits)
    kv_bytes = kv_layers * q.kv_scale_bytes
    stored += kv_bytes
    whole += kv_bytes
    if kv_bytes:
        parts.append(f"float32 k_scale and v_scale in {kv_layers:,} attention layers ({kv_bytes:,} B)")
    unsure = splits[0].kv_layers + splits[0].kv_unsure_layers - kv_layers
    if q.kv_scale_bytes and unsure:
        unsized.append(f"the KV-cache scales of {unsure:,} attention layers without a k_proj and v_proj quantized in "
                       "one format (attention kept unquantized)")
    # the KV shares: in each format's count, its quantized share plus its float share (the rest) is the same whole
    kv = []
    for h, *_ in splits[0].kv:
        shares = [next(x for x in s.kv if x[0] == h) for s in splits]
        float_params = shares[0][1] + shares[0][2] - sum(x[1] for x in shares)
        kv.append((h, int(sum(x[1] * fq.bytes_per_weight + x[3] * fq.per_output_row_bytes
                              for x, fq in zip(shares, distinct)) + float_params * plain_bytes)))
    return int(round(stored)), quantized, parts, unsized, int(whole), tuple(kv)
