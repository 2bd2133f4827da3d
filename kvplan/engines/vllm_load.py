"""What vLLM's load holds beside the KV cache, as its profile counts it in "weights" ("Model loading took"): the
checkpoint's bytes (read from a bundled or local checkpoint, else the config's count), a float32 checkpoint
downcast to the serving dtype, the parameters vLLM builds in float32 (configs/param_fp32.py), the modules it builds
otherwise than the checkpoint stores them (vllm_load_delta), the rotary cos/sin tables (vllm_rope_cache), the
buffers some models allocate while they are built (vllm_load_buffers), and each GPU's share under TP and PP.
kvplan.engines.vllm_profile adds the profile's other terms (activation, non-torch, CUDA graphs) to these.
"""

from __future__ import annotations

from .vllm_release import at_least as _at_least


def module_table(model):
    """(Fields, module table) of the model's config where kvplan has a table that adds up to its count
    (configs/weight_tables checked_table), else None; read once per model (the engines' float32 and load-time
    additions each ask for it)."""
    def read():
        from ..configs.weight_tables import checked_table

        raw = raw_config(model)
        return checked_table(raw, model.source or model.name) if raw is not None else None

    return model.memo("module table", read)


def raw_config(model) -> dict | None:
    """The config.json of a bundled or local model as a dict (the ModelSpec keeps only what
    planning needs; a config.json with the hf_quant_config.json beside it, as sources read it), else None."""
    from pathlib import Path

    from ..errors import KvplanError

    source = model.source or ""
    try:
        if source.startswith("bundled:"):
            from ..sources import bundled_config, bundled_index

            raw = bundled_config(bundled_index()[source.split(":", 1)[1]])
        elif source and Path(source).is_file():
            from ..sources import read_config_file

            raw = read_config_file(Path(source))
        else:
            return None
    except (OSError, ValueError, KeyError, KvplanError):
        return None
    if not isinstance(raw, dict):
        return None
    if getattr(model, "overrides", ()):
        from ..sources import replay_overrides

        raw = replay_overrides(raw, model.overrides)
    return raw


def checkpoint_weights(model):
    """The checkpoint's exact bytes when kvplan can read them without the network (a bundled
    model's totals, safetensors beside a local config.json), else None."""
    from pathlib import Path

    from ..errors import KvplanError
    from ..weights.estimate import with_config_replicated
    from ..weights.load import from_bundled, from_index, from_safetensors
    from ..weights.mtp import with_mtp_estimate
    from ..weights.safetensors import INDEX_NAME, has_safetensors

    source = model.source or ""
    record = None
    raw = raw_config(model)  # its model_type decides some MTP names (weights.roles.MTP_SUBSTRING_FAMILIES)
    try:
        if source.startswith("bundled:"):
            record = from_bundled(source.split(":", 1)[1])
        elif source and Path(source).is_file():
            path = Path(source)
            if has_safetensors(path.parent):
                record = from_safetensors(path.parent, raw)
            elif (path.parent / INDEX_NAME).is_file():
                record = from_index(path.parent / INDEX_NAME, raw)
    except (KvplanError, OSError, ValueError):
        return None
    # a total without a tensor table holds the MTP module vLLM does not load without speculative decoding
    return with_config_replicated(with_mtp_estimate(record, model, raw), model) if record is not None else None


def config_fields(model):
    """The model's config as kvplan.configs Fields (family defaults filled), or None without a readable one."""
    from ..configs.resolve_family import resolve
    from ..errors import KvplanError

    raw = raw_config(model)
    if raw is None:
        return None
    try:
        _, fields, _ = resolve(raw, model.source or model.name)
    except KvplanError:
        return None
    return fields


def rope_bytes(model, version: str | None = None, max_model_len: int | None = None) -> int | None:
    """The rotary cos/sin tables vLLM `version` builds while loading `model` for `max_model_len`, whole
    on every rank (vllm_rope_cache); None where the family's rope is not read, or its rows depend on
    the release and none is given."""
    from .vllm_rope_cache import rope_cache_bytes

    fields = config_fields(model)
    return None if fields is None else rope_cache_bytes(fields, version=version, max_model_len=max_model_len)


def load_buffers(model, version: str | None, max_num_batched_tokens: int, tp: int = 1,
                 max_num_seqs: int = 1024, pp: int = 1, speculative: bool = False,
                 mtp: bool = False, speculative_tokens: int = 0) -> tuple[int, str, list[str]]:
    """(bytes, what, notes): the buffers vLLM `version` allocates on each GPU while building a DSA `model`
    (vllm_load_buffers): the top-k indices buffer and the sparse MLA index groups' workspaces, and with
    speculative decoding by MTP (`mtp`) the MTP layers' own top-k buffers, on the last stage's GPUs, whose figure
    the profile's is, and index groups widened to 1 + `speculative_tokens` rows a sequence; notes say what is not
    modelled. (0, "", []) for a model without them."""
    from .vllm_load_buffers import BUFFERS, index_group_bytes, mtp_topk_bytes, topk_buffer

    fields = config_fields(model)
    if fields is None:  # no config to size them from: only a family that has them goes unmodelled
        missing = model.model_type in BUFFERS
        return 0, "", ["vLLM's DSA top-k indices buffer (counted in its load) is not modelled: no config"] if missing else []
    total, what, notes = 0, [], []
    topk = topk_buffer(fields, max_num_batched_tokens, version, tp)
    if topk is None:
        notes.append("vLLM's DSA top-k indices buffer (max_num_batched_tokens rows, counted in its load) is not "
                     "modelled for this family (vllm_load_buffers)")
    elif topk.bytes:
        total += topk.bytes
        what.append(f"{topk.bytes / 2**20:,.0f} MiB top-k indices buffer ({topk.describe()})")
        drafted = mtp_topk_bytes(fields, topk.columns, max_num_batched_tokens, version) if mtp else 0
        if drafted is None:
            notes.append("the MTP layers' own top-k indices buffers (counted in vLLM's load) are not modelled: the "
                         "config does not give num_nextn_predict_layers")
        elif drafted:
            total += drafted
            what.append(f"{drafted / 2**20:,.0f} MiB of the MTP layers' own top-k indices buffers")
        layers = model.layers
        indexed = sum(1 for layer in layers if any(c.kind == "indexer" for c in layer.caches))
        groups = indexed + (1 if indexed and layers and not any(c.kind == "indexer" for c in layers[0].caches) else 0)
        width = 1 + speculative_tokens if mtp and speculative_tokens > 0 else 1
        group = index_group_bytes(fields.model_type, groups, topk.columns, max_num_batched_tokens, max_num_seqs,
                                  version, width)
        if group is None:
            notes.append("vLLM's sparse MLA index-group workspaces (index_group.py, counted in its load) are not "
                         "modelled for this family" + ("" if version else " without the vLLM release"))
        elif group:
            total += group
            what.append(f"{group / 2**20:,.0f} MiB for {groups} sparse MLA index groups "
                        f"(min({max_num_batched_tokens:,}, {max_num_seqs:,} sequences"
                        + (f" x {width}" if width > 1 else "") + ") + 1 rows each)")
            if pp > 1:
                notes.append(f"the sparse MLA index groups of all {groups} indexer layers are counted on every PP "
                             "stage; each stage builds only its own layers' (an upper bound)")
            if mtp:
                notes.append("the MTP layers' own sparse MLA index group (counted in vLLM's load) is not modelled")
            if speculative and width == 1:
                notes.append("the sparse MLA index groups are sized for one-token decodes; speculative decoding "
                             "widens them to max_num_seqs x (1 + draft tokens) rows (get_sparse_mla_index_group_"
                             "max_rows), modelled only for an MTP drafter with its draft tokens")
    return total, ", + ".join(what) + (" (vllm_load_buffers)" if what else ""), notes


def served_from_float32(model) -> bool:
    """Whether vLLM's dtype "auto" downcasts this checkpoint: a config dtype of float32 is served in
    the platform's first dtype, bf16 on CUDA (vllm/config/model.py `_resolve_auto_dtype`, "Downcast
    for float32 models"; before it `_get_and_verify_dtype` chose float16, also 2 B). The model is
    built in that dtype and each float32 tensor is copied into a 16-bit parameter as it loads."""
    return getattr(model, "float_dtype", None) in ("float32", "fp32")


def downcast_float32(record, served_as: str = "bf16 (vLLM's dtype auto)"):
    """(record as vLLM loads a float32 checkpoint: F32 tensors at 2 B, note); served_as names the 16-bit dtype
    and who chose it (SGLang: engines/sglang_report.served_16bit)."""
    from dataclasses import replace

    from ..weights.record import DtypeBytes

    f32 = sum(d.bytes for d in record.by_dtype if d.dtype.upper() in ("F32", "FLOAT32"))
    if not f32:
        return record, None
    by_dtype = tuple(DtypeBytes("BF16", d.elements * 2, d.elements, d.tensors)
                     if d.dtype.upper() in ("F32", "FLOAT32") else d for d in record.by_dtype)
    total = record.total_bytes - f32 // 2
    exact = f32 == record.total_bytes  # all float32: every role halves exactly
    parts = tuple((role, layer, n // 2 if exact else n * total // record.total_bytes)
                  for role, layer, n in record.parts)
    note = (f"float32 checkpoint served in {served_as}: its {f32 / 2**30:,.2f} GiB of F32 tensors "
            f"load as {f32 / 2 / 2**30:,.2f} GiB" + ("" if exact else ", split over the roles in proportion"))
    mtp_parts = tuple((role, layer, n // 2 if exact else n * total // record.total_bytes)
                      for role, layer, n in record.mtp_parts)
    against = tuple((role, layer, n // 2 if exact else n * total // record.total_bytes)
                    for role, layer, n in record.against_role)
    kv = record.kv_parts
    if kv is not None:
        kv = tuple((role, layer, n // 2 if exact else n * total // record.total_bytes, heads)
                   for role, layer, n, heads in kv)

    def loaded(n: int) -> int:
        return n // 2 if exact else n * total // record.total_bytes

    # what each TP rank holds whole loads at 2 B too (a counter stays one, read only under TP)
    whole = record.replicated
    replicated = (lambda: loaded(whole())) if callable(whole) else loaded(whole)
    return replace(record, total_bytes=total, by_dtype=by_dtype, parts=parts, mtp_parts=mtp_parts,
                   against_role=against, kv_split=kv, replicated=replicated,
                   vision=tuple(loaded(n) for n in record.vision),
                   vision_sglang=tuple(loaded(n) for n in record.vision_sglang), notes=record.notes + (note,)), note


def vllm_loaded(model, record, served_as: str = "bf16 (vLLM's dtype auto)"):
    """(record as vLLM's dtype auto loads it, note or None): a float32 checkpoint's F32 tensors at 2 B."""
    if record is None or not served_from_float32(model):
        return record, None
    return downcast_float32(record, served_as)


# vLLM drops every checkpoint tensor named *.g_idx at load (base_config.py QuantizationConfig.
# get_checkpoint_weight_mapper, read in 0.31.0-0.34.0; 0.29.0's auto_gptq.py still creates and loads g_idx)
G_IDX_DROPPED_FROM = (0, 31, 0)


def vllm_without_g_idx(record, version: str | None):
    """(record less its tensor table's GPTQ g_idx where vLLM `version` drops them at load, the bytes dropped)."""
    from ..weights.record import less

    part = record.g_idx
    if part is None or not _at_least(version, G_IDX_DROPPED_FROM):
        return record, 0
    return less(record, part, f"vLLM {version} drops GPTQ's g_idx at load ({part.total_bytes:,} B, "
                              f"{part.tensors:,} tensors)"), part.total_bytes


def config_weights_per_gpu(model, tp: int = 1, pp: int = 1, version: str | None = None, halve: bool = False) -> int:
    """Bytes on one GPU of a config-sized checkpoint (no tensor table) under (tp, pp): what each TP rank holds
    whole (model.weight_replicated_bytes: norms, routers, RowParallelLinear biases, per-tensor and KV scales;
    read only under TP) spread over the stages, the k/v projections' KV shares one KV head a rank where TP exceeds
    the KV heads (capacity.weights.kv_held), the rest over every GPU; a counted vision tower
    (model.weight_vision) on the first stage, the fullest: its whole part there whole, the rest over its TP ranks;
    GPTQ's g_idx left out where vLLM `version` drops it. halve: a float32 checkpoint served in bf16."""
    from ..capacity.weights import kv_held

    whole = model.weight_replicated_bytes if tp > 1 else 0
    split = model.weight_bytes - whole
    # the vision tower (configs/vision_towers.py), on the first stage only (models/interfaces.py
    # _mark_tower_model): its whole part with the stage's, the rest split over the stage's TP ranks
    vision, vision_whole = model.weight_vision[1], model.weight_vision[2] if tp > 1 else 0
    whole, split = whole - vision_whole, split - (vision - vision_whole)
    if model.weight_g_idx_bytes and _at_least(version, G_IDX_DROPPED_FROM):
        split -= model.weight_g_idx_bytes
    # the KV shares (model.weight_kv_bytes) that vLLM holds one whole KV head a rank of when TP exceeds their heads
    kv = tuple((n // 2 if halve else n, heads) for heads, n in (model.weight_kv_bytes or ())) if tp > 1 else ()
    if halve:
        whole, split, vision, vision_whole = whole // 2, split // 2, vision // 2, vision_whole // 2
    taken, held = kv_held(kv, tp, pp)
    return (split - taken) // (tp * pp) + whole // pp + held + vision_whole + (vision - vision_whole) // tp


def with_fp32(model, version, gpu, halve: bool, tp: int, pp: int, per_gpu: int, weights_from: str,
               notes: list, record=None) -> tuple[int, str]:
    """(per_gpu, weights_from) with the parameters vLLM `version` builds in float32 at 4 B (vllm_fp32.upcast);
    record: the tensor table the bytes came from, whose float32 tensors may already be these (then a note)."""
    from .vllm_fp32 import describe, stores_no_float32, upcast

    up = upcast(model, version, halve, gpu)
    if up is None:
        return per_gpu, weights_from
    if up.note:
        notes.append(up.note)
    added = up.per_gpu_bytes(tp, pp)
    if not added:
        return per_gpu, weights_from
    if record is not None and not stores_no_float32(record):
        notes.append(f"vLLM holds {up.params:,} parameters (routers, score biases, Mamba mixers' A) in float32 "
                     "(configs/param_fp32.py); "
                     f"the checkpoint's tensor table may store them in float32 already, so the {added:,} B a GPU "
                     "they would add at 2 B as stored is not counted")
        return per_gpu, weights_from
    return per_gpu + added, weights_from + describe(up, tp, pp)


def with_load_delta(model, version, halve: bool, tp: int, pp: int, per_gpu: int, weights_from: str,
                     notes: list) -> tuple[int, str]:
    """(per_gpu, weights_from) with what vLLM `version` holds beyond a config-sized checkpoint, or below it, where
    it builds modules otherwise than the checkpoint stores them (vllm_load_delta; configs/param_vllm_load.py)."""
    from .vllm_load_delta import describe, load_delta, tp_failure_note, unsized_note

    d = load_delta(model, version, halve)
    if d is None:
        return per_gpu, weights_from
    for line in (tp_failure_note(d, tp), unsized_note(d)):
        if line is not None:
            notes.append(line)
    if d.params == d.unsized and not d.rehomed:
        return per_gpu, weights_from
    return per_gpu + d.per_gpu_bytes(tp, pp), weights_from + describe(d, tp, pp)


def note_load_delta(model, version, source: str, notes: list, tp: int = 1) -> None:
    """Weights from a record (`source`: a tensor table, a total, a size given): say what vLLM holds otherwise than
    the checkpoint, which is not counted."""
    from .vllm_load_delta import load_delta, table_note, tp_failure_note

    d = load_delta(model, version)
    if d is not None:
        notes.append(table_note(d, source))
        if (line := tp_failure_note(d, tp)) is not None:
            notes.append(line)


def weights_per_gpu(model, weights, tp: int = 1, pp: int = 1, last_stage_extra: int = 0) -> int:
    """Bytes on the fullest GPU of a (tp, pp) replica for a kvplan.weights record (last_stage_extra: the
    drafter's weights, on the last stage's GPUs)."""
    from ..capacity.weights import stage_weight_bytes

    stages = stage_weight_bytes(weights, model.num_layers, max(tp, 1), max(pp, 1))
    stages[-1] += last_stage_extra
    return max(stages)


__all__ = ["module_table", "raw_config", "checkpoint_weights", "config_fields", "rope_bytes", "load_buffers",
           "served_from_float32", "downcast_float32", "vllm_loaded", "vllm_without_g_idx", "G_IDX_DROPPED_FROM",
           "config_weights_per_gpu", "with_fp32", "with_load_delta", "note_load_delta", "weights_per_gpu"]
