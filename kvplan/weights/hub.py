"""Safetensors headers of a Hub repository, read through huggingface_hub's
metadata call: the index (cached like any Hub file) and one HTTP range request
per shard for its header; no tensor data is downloaded. Revision, token
(HF_TOKEN or the saved login), endpoint and cache follow huggingface_hub's own
settings. Offline (HF_HUB_OFFLINE=1), the cached index or single file answers.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SourceError, WeightsError
from .roles import TensorEntry
from .safetensors import INDEX_NAME, SINGLE_NAME, index_total, read_file, read_index, tensor_entry


class HubUnavailable(WeightsError):
    """The Hub failed or did not answer in time (5xx, 429, a timeout, no connection): the
    config estimate may stand in, with a warning. A missing shard or a bad header is not this."""


def read_hub(repo_id: str, revision: str | None) -> tuple[list[TensorEntry], int, dict | None] | None:
    """(tensors, shard count, index metadata) of the repo's safetensors, or None
    when the repo has no safetensors weights."""
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError
    except ImportError:  # pragma: no cover - a runtime dependency
        raise SourceError("huggingface_hub is not installed", "pip install huggingface-hub") from None
    try:
        from huggingface_hub.errors import NotASafetensorsRepoError, SafetensorsParsingError
    except ImportError:  # older huggingface_hub keeps them in utils
        from huggingface_hub.utils import NotASafetensorsRepoError, SafetensorsParsingError
    where = f"hf://{repo_id}" + (f"@{revision}" if revision else "")
    try:  # the data goes to stdout; a progress bar on stderr would break the one-line contract
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:  # pragma: no cover
        pass
    try:
        meta = HfApi().get_safetensors_metadata(repo_id, revision=revision)
    except NotASafetensorsRepoError:
        return None
    except SafetensorsParsingError as exc:
        raise WeightsError(f"{where}: {exc}") from None
    except EntryNotFoundError as exc:
        url = str(getattr(getattr(exc, "response", None), "url", "") or "")
        shard = url.split("?")[0].rsplit("/", 1)[-1] if url else "a shard"
        raise WeightsError(f"{where}: shard {shard} listed in {INDEX_NAME} is missing on the Hub",
                           "the checkpoint is incomplete; pass --weights SIZE") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        kind = HubUnavailable if status is None or status == 429 or status >= 500 else WeightsError
        raise kind(f"{where}: the Hub answered an error while reading the safetensors headers ({status or exc})") from None
    except OSError as exc:
        raise HubUnavailable(f"{where}: cannot read the safetensors headers ({exc})") from None
    entries = []
    for filename, fmeta in meta.files_metadata.items():
        for name, info in fmeta.tensors.items():
            raw = {"dtype": info.dtype, "shape": list(info.shape), "data_offsets": list(info.data_offsets)}
            entries.append(tensor_entry(name, raw, f"{where}/{filename}"))
    return entries, len(meta.files_metadata), meta.metadata


def read_hub_cached(repo_id: str, revision: str | None) -> tuple[str, object] | None:
    """Offline: ('index', total bytes) from a cached index, or ('file', path) of a
    cached single-file checkpoint, or None."""
    from huggingface_hub import try_to_load_from_cache

    for filename in (INDEX_NAME, SINGLE_NAME):
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
        if isinstance(found, str):
            path = Path(found)
            if filename == INDEX_NAME:
                return "index", index_total(read_index(path), str(path))
            read_file(path)  # validates
            return "file", path
    return None
