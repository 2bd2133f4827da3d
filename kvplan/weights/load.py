"""Choose and run the reader that gives a model's exact weight bytes.

Order for `--weights auto`: a .gguf model file -> its tensor table; a local
folder or config.json beside safetensors -> their headers (or the index total
when only the index is there); a bundled name -> model_specs/weights.json when
it lists the model; a Hub repo -> the shard headers over HTTP range requests
(offline: the cached index or file). Otherwise the config estimate, and the
record says so (source 'estimated from config').
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..configs.checkpoint_dtype import checkpoint_quantization_config
from ..configs.module_counts import kv_modules, whole_modules
from ..configs.resolve_family import nested_text
from ..core.model import ModelSpec
from ..errors import UsageError, WeightsError
from ..files import check_path_name
from ..units import parse_size
from .dtypes import GGUF_FILE_TYPES
from .estimate import estimated, given, with_config_replicated
from .quant import identify
from .record import NO_LAYER, DtypeBytes, Weights
from .roles import TensorEntry, fold
from .safetensors import INDEX_NAME, has_safetensors, index_total, local_files, read_file, read_index, shard_names


def _family(raw: dict | None) -> str:
    """The config's model_type, which decides some MTP names (roles.MTP_SUBSTRING_FAMILIES)."""
    family = raw.get("model_type") if isinstance(raw, dict) else None
    return family if isinstance(family, str) else ""


def _quant_config(raw: dict | None) -> dict | None:
    if not isinstance(raw, dict):
        return None
    from ..configs.quant_mlx import block

    mlx = block(raw)  # mlx-lm's "quantization" (configs/quant_mlx.py)
    if mlx is not None:
        return mlx
    return checkpoint_quantization_config(raw)


def from_safetensors(path: Path, raw: dict | None = None) -> Weights:
    """Every shard's header of a local .safetensors file, folder or index."""
    if path.is_file() and path.name.endswith(".json"):
        return from_index(path, raw)
    if path.is_dir() and (path / INDEX_NAME).is_file():
        return from_index(path / INDEX_NAME, raw)
    files, _ = local_files(path)
    if not files:
        raise WeightsError(f"{path}: no .safetensors files here")
    return _headers(files, str(path), raw)


def _headers(files: list[Path], origin: str, raw: dict | None, declared: int | None = None, index_name: str = "") -> Weights:
    entries: list[TensorEntry] = []
    for f in files:
        try:
            tensors, _ = read_file(f)
        except WeightsError as exc:
            raise WeightsError(exc.message, exc.hint or "fix or remove the file, or pass --weights SIZE") from None
        entries.extend(tensors)
    if not entries:  # 0 B of weights would plan as if the model were free
        raise WeightsError(f"{origin}: no tensors in {'its' if len(files) == 1 else 'any'} safetensors header",
                           "give the checkpoint's weight files, or pass --weights SIZE")
    w = fold(entries, source="safetensors", origin=origin, quantization=identify(_quant_config(raw), entries), files=len(files),
             family=_family(raw), kv_modules=kv_modules(raw),
             whole_modules=whole_modules(raw))
    if isinstance(declared, int) and declared != w.total_bytes:
        w = _note(w, f"{index_name} declares total_size {declared:,}; the shard headers sum to {w.total_bytes:,} (used)")
    return w


def from_index(path: Path, raw: dict | None = None) -> Weights:
    """A model.safetensors.index.json: its shards' headers when they all lie beside
    it, its metadata.total_size when none does; a partial set is an error."""
    data = read_index(path)
    names = shard_names(data, str(path)) if data.get("weight_map") else []
    present = [n for n in names if (path.parent / n).is_file()]
    if names and len(present) == len(names):
        declared = (data.get("metadata") or {}).get("total_size") if isinstance(data.get("metadata"), dict) else None
        return _headers([path.parent / n for n in names], str(path.parent), raw, declared, path.name)
    if present:
        missing = next(n for n in names if n not in present)
        raise WeightsError(f"{path.parent / missing}: shard listed in {path.name} is missing",
                           "download every shard, or keep only the index to use its total_size")
    return Weights(total_bytes=index_total(data, str(path)), source="index", origin=str(path),
                   quantization=identify(_quant_config(raw)), notes=("metadata.total_size of the index; no shard headers read",))


def _gguf_int(g, key: str, maximum: int) -> int | None:
    """A GGUF metadata integer in [0, maximum] (None when absent), checked before anything is sized by it."""
    value = g.metadata.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)[:60]
        raise WeightsError(f"{g.path}: GGUF metadata {key} must be an integer from 0 to {maximum:,}, got {shown}",
                           "the file is damaged or was not written by llama.cpp: download or convert it again")
    return value


def from_gguf(path: Path) -> Weights:
    """A GGUF file's tensor table; a split model (llama.cpp's gguf-split,
    NAME-00001-of-0000N.gguf with split.count in the metadata) is read whole."""
    from . import gguf  # only when a GGUF is read

    g = gguf.read(path)
    count = _gguf_int(g, "split.count", 99_999) or 1  # gguf-split numbers the parts with five digits
    file_type = _gguf_int(g, "general.file_type", 2**32 - 1)  # llama_ftype, a u32
    files = [path]
    m = re.fullmatch(r"(.*)-(\d{5})-of-(\d{5})\.gguf", path.name)
    if count > 1 and m:
        files = [path.with_name(f"{m.group(1)}-{i:05d}-of-{m.group(3)}.gguf") for i in range(1, count + 1)]
        for f in files:
            if not f.is_file():
                raise WeightsError(f"{f}: split GGUF part missing ({path.name} says split.count {count})")
    entries = [t for f in files for t in (g if f == path else gguf.read(f)).tensors]
    if not entries:  # 0 B of weights would plan as if the model were free
        raise WeightsError(f"{path}: no tensors in the GGUF tensor table",
                           "give the model's .gguf with its weights, or pass --weights SIZE")
    w = fold(entries, source="gguf", origin=str(path), quantization="", files=len(files))
    types = ", ".join(d.dtype for d in w.by_dtype)
    recipe = GGUF_FILE_TYPES.get(file_type)
    label = f"GGUF {recipe} ({types})" if recipe else f"GGUF ({types})"
    return replace(w, quantization=label)


@lru_cache(maxsize=1)
def bundled_table() -> dict:
    text = (resources.files("kvplan.model_specs") / "weights.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def from_bundled(alias: str) -> Weights | None:
    entry = bundled_table().get(alias)
    if entry is None:
        return None
    parts = []
    for layer in range(int(entry.get("layers", 0))):
        parts.extend((role, layer, n) for role, n in entry.get("per_layer", {}).items())
    parts.extend((role, NO_LAYER, n) for role, n in entry.get("outside_layers", {}).items())
    total = int(entry["total_bytes"])
    if parts and sum(n for _, _, n in parts) != total:
        raise WeightsError(f"model_specs/weights.json: {alias}: the role split does not sum to total_bytes")
    by_dtype = tuple(DtypeBytes(k, int(v), 0, 0) for k, v in entry.get("by_dtype", {}).items())
    return Weights(total_bytes=total, source="bundled", origin=f"bundled:{alias}", quantization=entry.get("quantization", "none"),
                   by_dtype=by_dtype, parts=tuple(parts), notes=(entry.get("source", ""),))


def from_hub(repo_id: str, revision: str | None, raw: dict | None) -> Weights | None:
    from ..sources import offline
    from .hub import read_hub, read_hub_cached

    where = f"hf://{repo_id}" + (f"@{revision}" if revision else "")
    if offline():
        cached = read_hub_cached(repo_id, revision)
        if cached is None:
            return None
        kind, value = cached
        if kind == "index":
            return Weights(total_bytes=value, source="index", origin=f"{where}/{INDEX_NAME} (cache)",
                           quantization=identify(_quant_config(raw)), notes=("offline: the cached index's metadata.total_size",))
        return from_safetensors(value, raw)
    from ..hub import BUDGET_ENV, _within, budget_s
    from .hub import HubUnavailable

    budget = budget_s()  # the same bound as the config lookup: a stuck Hub cannot hold the command
    found, timed_out = _within(budget, lambda: read_hub(repo_id, revision))
    if timed_out:
        raise HubUnavailable(f"{where}: no answer from the Hub within {budget:g} s ({BUDGET_ENV}) "
                             "while reading the safetensors headers")
    if found is None:
        return None
    entries, files, meta = found
    w = fold(entries, source="safetensors", origin=where, quantization=identify(_quant_config(raw), entries), files=files,
             notes=("shard headers read over HTTP range requests",), family=_family(raw), kv_modules=kv_modules(raw),
             whole_modules=whole_modules(raw))
    declared = (meta or {}).get("total_size")
    if isinstance(declared, int) and declared != w.total_bytes:
        w = _note(w, f"{INDEX_NAME} declares total_size {declared:,}; the shard headers sum to {w.total_bytes:,} (used)")
    return w


def resolve(option: str | None, *, model: ModelSpec, raw: dict | None, source: str, revision: str | None = None,
            checkpoint_param_count: int | None = None) -> Weights:
    """The Weights for `--weights OPTION` (auto, a size, or a path) of a loaded model.

    source: where the config came from (sources.load_config's third value). checkpoint_param_count: the
    parameters of the checkpoint's own config where --set changed it: a checkpoint found by `auto` whose
    config had another count does not hold this model's weights, which are then estimated from the config.
    """
    w = _resolve(option, model=model, raw=raw, source=source, revision=revision)
    if (option in (None, "auto") and checkpoint_param_count is not None and w.source != "estimated from config"
            and checkpoint_param_count != model.param_count):
        return estimated(model, identify(_quant_config(raw)),
                         f"--set changes the parameter count ({checkpoint_param_count:,} in the checkpoint's config, "
                         f"{model.param_count:,} with it), so the checkpoint's {w.total_bytes:,} B ({w.source}) "
                         "are not this model's weights")
    return _mtp_note(w, raw, model)


def _mtp_note(w: Weights, raw: dict | None, model: ModelSpec) -> Weights:
    """A total without a tensor table includes the MTP module the config declares: leave out its estimate
    (kvplan.weights.mtp), or say that it cannot be left out."""
    if w.parts or w.source in ("given", "estimated from config") or not isinstance(raw, dict):
        return w
    from .mtp import with_mtp_estimate

    w = with_config_replicated(with_mtp_estimate(w, model, raw), model)
    if w.mtp_estimated_bytes:
        return w
    nested = nested_text(raw)
    mtp = raw.get("num_nextn_predict_layers") or nested.get("num_nextn_predict_layers")
    if isinstance(mtp, int) and not isinstance(mtp, bool) and mtp > 0:
        return _note(w, f"the config declares {mtp} multi-token-prediction layer(s) (num_nextn_predict_layers); "
                        "a checkpoint total includes them, and without a tensor table kvplan cannot leave them out, "
                        "so the served weights are overstated by their size (read the safetensors headers, e.g. "
                        "--weights hf://REPO, to split them out)")
    return w


def _resolve(option: str | None, *, model: ModelSpec, raw: dict | None, source: str, revision: str | None = None) -> Weights:
    if option is not None and not option.strip():
        raise UsageError("--weights is an empty string", "give auto, a size (16GB), a checkpoint or leave it out")
    if option not in (None, "auto"):
        path = Path(option).expanduser()
        check_path_name(path, "--weights")
        if path.suffix == ".gguf":
            return from_gguf(path)
        if path.exists():
            if path.suffix == ".json":
                return from_index(path, raw)
            if has_safetensors(path):
                return from_safetensors(path, raw)
            if path.suffix == ".safetensors" and not path.is_dir():  # a pipe or a device: say that, not "not a file"
                from ..files import regular_file_size

                regular_file_size(path, "a safetensors file", WeightsError)
            raise WeightsError(f"--weights {option}: not a safetensors file or folder, an index.json or a .gguf")
        if path.is_symlink():  # exists() is False for a link to nothing or a loop of links: not "no such file"
            raise WeightsError(f"--weights {option}: a symlink that leads to no file (dangling, or a loop of links)",
                               "fix the link, or give the checkpoint's real path")
        if path.suffix in (".json", ".safetensors") or "/" in option:
            raise WeightsError(f"--weights {option}: no such file or folder")
        return given(parse_size(option, "--weights"), f"--weights {option}")
    quant = identify(_quant_config(raw))
    if source.startswith("bundled:"):
        w = from_bundled(source.split(":", 1)[1])
        return w or estimated(model, quant)
    if source.startswith("hf://"):
        from .hub import HubUnavailable

        repo = source[len("hf://"):].split("@", 1)[0]
        try:
            w = from_hub(repo, revision, raw)
        except HubUnavailable as exc:  # the config came (perhaps from the cache): plan with the estimate, say so
            import warnings

            from ..errors import KvplanWarning

            warnings.warn(f"{exc.message}; the weights are estimated from the config", KvplanWarning, stacklevel=2)
            return estimated(model, quant, f"the Hub failed while reading the weights ({exc.message})")
        return w or estimated(model, quant, "no safetensors weights found on the Hub (or offline with none cached)")
    path = Path(source)
    if path.suffix == ".gguf":
        return from_gguf(path)
    folder = path.parent if path.is_file() else path
    if has_safetensors(folder):
        return from_safetensors(folder, raw)
    if (folder / INDEX_NAME).is_file():
        return from_index(folder / INDEX_NAME, raw)
    return estimated(model, quant)


def _note(w: Weights, note: str) -> Weights:
    return replace(w, notes=w.notes + (note,))
