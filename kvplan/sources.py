"""Where configs come from: bundled copies, local files or folders, GGUF files, the Hugging Face Hub.

I/O lives here and nowhere else in the planning path. huggingface_hub is
imported only when a Hub lookup is needed, to keep `kvplan estimate` fast.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

from ._record import record
from .configs import build_model
from .core.model import ModelSpec
from .errors import ConfigError, SourceError, UsageError


@record
class BundledEntry:
    alias: str
    hf_id: str
    notes: str = ""
    source: str = ""  # where the bundled config.json came from (model_specs/index.json)
    # its tokenizer_config.json's auto_map AutoTokenizer class ("" none; None: not recorded) and where that was read
    tokenizer_code: str | None = None
    tokenizer_source: str | None = None  # the provenance of tokenizer_code (model_specs/index.json)
    # why the class name is not a reading of the checkpoint's own tokenizer_config.json ("" it is)
    tokenizer_inferred: str = ""

    @property
    def provenance(self) -> str:
        """In words: a copy of the published config.json, or rebuilt from published values."""
        return "rebuilt from published values" if self.source.startswith("reconstructed:") else "published config.json (copy)"


def _specs_dir():
    """The bundled configs' folder (importlib.resources only for an unusual install:
    importing it costs the cold start a few milliseconds)."""
    from . import model_specs

    if getattr(model_specs, "__file__", None):
        return Path(model_specs.__file__).parent
    from importlib import resources

    return resources.files("kvplan.model_specs")


@lru_cache(maxsize=1)
def bundled_index() -> dict[str, BundledEntry]:
    """alias -> entry, from model_specs/index.json."""
    raw = json.loads((_specs_dir() / "index.json").read_text(encoding="utf-8"))
    return {alias: BundledEntry(alias, meta.get("hf_id", alias), meta.get("notes", ""), meta.get("source", ""),
                                meta.get("tokenizer_auto_map"), meta.get("tokenizer_source"),
                                meta.get("tokenizer_inferred", ""))
            for alias, meta in raw.items()}


def resolve_bundled(name: str) -> BundledEntry | None:
    key = name.strip().lower()
    index = bundled_index()
    if key in index:
        return index[key]
    for entry in index.values():
        if entry.hf_id.lower() == key:
            return entry
    return None


def bundled_config(entry: BundledEntry) -> dict:
    return json.loads((_specs_dir() / f"{entry.alias}.json").read_text(encoding="utf-8"))


def suggest(name: str) -> list[str]:
    names = list(bundled_index()) + [e.hf_id for e in bundled_index().values()]
    lowered = {n.lower(): n for n in names}
    return [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)]


# the largest JSON a user gives kvplan: a config, a safetensors index or a bench
# document is kilobytes to a few MiB
JSON_LIMIT_BYTES = 64 * 1024**2


def read_json_file(path: Path) -> dict:
    from .files import read_bounded

    data = read_bounded(path, "a JSON file", JSON_LIMIT_BYTES, SourceError)
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark, as some editors save, is not an error
    except UnicodeDecodeError:
        from .files import not_utf8_hint

        raise ConfigError(f"{path}: not UTF-8 text", not_utf8_hint(data)) from None
    return parse_json_text(text, str(path))


def parse_json_text(text: str, where: str) -> dict:
    if not text.strip():  # "malformed JSON at line 1, column 1: Expecting value" for a file with nothing in it
        raise ConfigError(f"{where}: empty (no JSON in it)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # an integer longer than Python reads (sys.int_max_str_digits)
        raise ConfigError(f"{where}: a number in it has more than {sys.get_int_max_str_digits():,} digits") from None
    if not isinstance(data, dict):
        found = {list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(type(data), "a number")
        raise ConfigError(f"{where}: expected a JSON object ({{...}}), found {found}")
    if _SURROGATE_ESCAPE.search(text):  # only a \uD800-\uDFFF escape can make a string that is not text
        bad = _lone_surrogate(data)
        if bad is not None:
            raise ConfigError(f"{where}: {bad} holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its "
                              "pair), which is not text", "fix the escape in the file")
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value, at: str = "the top level"):
    """Where in parsed JSON a key or string holds a lone surrogate (it cannot be printed or written as
    UTF-8: a CSV or table of the plan would fail on it), or None."""
    def bad(text: str) -> bool:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    if isinstance(value, str):
        return at if bad(value) else None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{at}[{i}]" if at != "the top level" else f"[{i}]")
            if found:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            here = key if at == "the top level" else f"{at}.{key}"
            if bad(key):
                return f"the key {here!r}"
            found = _lone_surrogate(item, here)
            if found:
                return found
    return None


# ModelOpt up to 0.29 writes the quantization beside config.json, not in it; vLLM reads it when config.json has
# no quantization_config (vllm/transformers_utils/config.py get_config, 0.11-0.33: config.quantization_config =
# the whole file), so kvplan does too, for a model folder, a config.json path and a Hub repo
HF_QUANT_CONFIG = "hf_quant_config.json"


def with_hf_quant_config(raw: dict, quant: dict | None) -> dict:
    """raw with quant as its quantization_config when config.json has none (None or absent, as vLLM tests it)."""
    if quant is None or raw.get("quantization_config") is not None:
        return raw
    return {**raw, "quantization_config": quant}


# AutoGPTQ writes its settings to quantize_config.json (auto_gptq/quantization/config.py QUANT_CONFIG_FILENAME,
# BaseQuantizeConfig.save_pretrained: bits, group_size, desc_act, sym, ...; no quant_method before 0.7) and AutoAWQ
# before its transformers integration to quant_config.json (awq/models/base.py save_quantized: its quant_config
# dict, w_bit, q_group_size, zero_point, version) beside a config.json without a quantization_config (TheBloke's
# checkpoints of 2023). vLLM 0.34 reads such a file only where config.json, its text_config and its
# compression_config hold no quantization (model_loader/weight_utils.py get_quant_config: then it globs the
# checkpoint's *.json for a name ending in one of quant_cls.get_config_filenames(): auto_gptq.py AutoGPTQConfig
# ["quantize_config.json"], auto_awq.py AutoAWQConfig ["quantize_config.json", "quant_config.json"]; two matches
# are refused, "Found multiple config files"); SGLang 0.5.23 names the same files (gptq/gptq.py, awq/awq.py
# get_config_filenames). vLLM picks the class from --quantization; kvplan, without the flag, from the file's
# layout, and reads the two exact names (for a Hub repo one GET each, no listing of the repository)
GPTQ_QUANTIZE_CONFIG = "quantize_config.json"
AWQ_QUANT_CONFIG = "quant_config.json"
SIDE_QUANT_CONFIGS = (GPTQ_QUANTIZE_CONFIG, AWQ_QUANT_CONFIG)


def side_quant_layout(quant, filename: str) -> dict | None:
    """A side file's quantization with its quant_method (None: a layout kvplan does not read): its own quant_method;
    else GPTQ where it has bits and desc_act (AutoGPTQConfig.from_config's keys; quantize_config.json only), AWQ where
    it has w_bit or q_group_size and zero_point (AutoAWQConfig.from_config's)."""
    if not isinstance(quant, dict):
        return None
    if quant.get("quant_method") is not None:
        return quant
    if filename == GPTQ_QUANTIZE_CONFIG and "bits" in quant and "desc_act" in quant:
        return {**quant, "quant_method": "gptq"}
    if ("w_bit" in quant or "q_group_size" in quant) and "zero_point" in quant:
        return {**quant, "quant_method": "awq"}
    return None


def with_side_quant_config(raw: dict, read, where: str) -> dict:
    """raw with the first side file (SIDE_QUANT_CONFIGS, in order) whose layout kvplan reads as its
    quantization_config, where raw holds none (configs/checkpoint_dtype.py checkpoint_quantization_config: the
    config's, its compression_config, its text model's). read(filename): the file's dict, or None where there is
    none (only the files needed are read). A file vLLM and SGLang both refuse is one ConfigError naming it."""
    from .configs.checkpoint_dtype import checkpoint_quantization_config
    from .configs.quant_bytes import refusal
    from .errors import ConfigError

    if checkpoint_quantization_config(raw) is not None:
        return raw
    for filename in SIDE_QUANT_CONFIGS:
        quant = side_quant_layout(read(filename), filename)
        if quant is not None:
            problem = refusal(quant)
            if problem:
                raise ConfigError(f"{where}/{filename}: {problem}", "neither engine would load the checkpoint so")
            return {**raw, "quantization_config": quant}
    return raw


def with_compression_config(raw: dict) -> dict:
    """raw with its "compression_config" as the quantization_config when it has none (nor its text_config):
    compressed-tensors' checkpoints of 2024 wrote it under that key, and vLLM reads it there when the config has no
    quantization_config (vLLM 0.34 model_loader/weight_utils.py get_quant_config, after the config's and its
    text_config's quantization_config; transformers_utils/model_arch_config_convertor.py
    _normalize_quantization_config)."""
    compression = raw.get("compression_config")
    text = raw.get("text_config")
    if (not isinstance(compression, dict) or raw.get("quantization_config") is not None
            or isinstance(text, dict) and text.get("quantization_config") is not None):
        return raw
    return {**raw, "quantization_config": compression}


def read_config_file(path: Path) -> dict:
    """A config file; a config.json gets the hf_quant_config.json (or AutoGPTQ's quantize_config.json, AutoAWQ's
    quant_config.json: with_side_quant_config) beside it when it has no quantization_config."""
    raw = read_json_file(path)
    from .configs import mistral_params

    if mistral_params.is_params_json(raw):  # a Mistral-format params.json, adapted as vLLM 0.33 adapts it
        return mistral_params.to_config(raw, str(path))
    if path.name == "config.json" and raw.get("quantization_config") is None:
        beside = path.parent / HF_QUANT_CONFIG
        if beside.is_file():
            raw = with_hf_quant_config(raw, read_json_file(beside))
        def beside_file(name):
            return read_json_file(path.parent / name) if (path.parent / name).is_file() else None

        return with_side_quant_config(with_compression_config(raw), beside_file, str(path.parent))
    return with_compression_config(raw)


TOKENIZER_CONFIG = "tokenizer_config.json"


@record
class Loaded:
    """A config as read, with the tokenizer's own code where a tokenizer_config.json was read beside it."""

    raw: dict
    display: str
    source: str
    tokenizer_code: str | None = None  # ModelSpec.tokenizer_code: "" none, None not read
    tokenizer_source: str | None = None


def tokenizer_code(tokenizer_config: dict) -> str:
    """The class tokenizer_config.json's auto_map names for AutoTokenizer ("" where none). transformers 5
    (models/auto/tokenization_auto.py, AutoTokenizer.from_pretrained) takes the pair [slow, fast] from
    auto_map["AutoTokenizer"], or auto_map itself where it is a list (the legacy form), and loads the fast
    class where the pair names one, else the slow."""
    auto_map = tokenizer_config.get("auto_map")
    pair = auto_map if isinstance(auto_map, list) else (
        auto_map.get("AutoTokenizer") if isinstance(auto_map, dict) else None)
    if isinstance(pair, str):
        return pair
    if isinstance(pair, list):
        named = [ref for ref in pair[1:2] + pair[:1] if isinstance(ref, str) and ref]
        return named[0] if named else ""
    return ""


def _tokenizer_unread(exc) -> None:
    """A tokenizer_config.json kvplan cannot read is one warning: the config still plans."""
    import warnings

    from .errors import KvplanWarning

    warnings.warn(f"{exc}: whether the tokenizer ships its own code is not checked", KvplanWarning, stacklevel=3)


def _tokenizer_text(text: str | None, where: str) -> str | None:
    """tokenizer_code of a tokenizer_config.json's text (None: no file, or one that is not a JSON object)."""
    from .errors import KvplanError

    if text is None:
        return None
    try:
        return tokenizer_code(parse_json_text(text, where))
    except KvplanError as exc:
        _tokenizer_unread(exc)
        return None


def _tokenizer_beside(config: Path) -> tuple[str | None, str | None]:
    """(tokenizer_code, path) of the tokenizer_config.json beside a checkpoint's config.json / params.json."""
    from .errors import KvplanError

    path = config.parent / TOKENIZER_CONFIG
    if config.name not in ("config.json", "params.json") or not path.is_file():
        return None, None
    try:
        return tokenizer_code(read_json_file(path)), str(path)
    except KvplanError as exc:
        _tokenizer_unread(exc)
        return None, None


def _bundled_base(repo_id: str):
    """The bundled entry whose HF id the repo id extends by a '-' suffix (meta-llama/Llama-3.1-70B for
    meta-llama/Llama-3.1-70B-Instruct, deepseek-ai/DeepSeek-V3 for ...-V3-0324), the longest; else None."""
    lowered = repo_id.lower()
    bases = [e for e in bundled_index().values() if lowered.startswith(e.hf_id.lower() + "-")]
    return max(bases, key=lambda e: len(e.hf_id), default=None)


def _hub_config(repo_id: str, revision: str | None) -> Loaded:
    """A Hub repo's config.json (one bounded request, or the local HF cache: kvplan/hub.py), with its
    hf_quant_config.json when config.json has no quantization_config (else its quantize_config.json or
    quant_config.json: with_side_quant_config, as for a folder), and its tokenizer_config.json."""
    from .hub import config_lookup, offline, side_file_text

    try:
        text, source, answered = config_lookup(repo_id, revision)
    except SourceError as exc:
        base = _bundled_base(repo_id) if offline() else None
        if base is None:
            raise
        raise SourceError(exc.message, f"{exc.hint}; or the bundled {base.alias} ({base.hf_id}), whose name "
                                       "this one extends: check the variant has the same architecture") from None
    raw = parse_json_text(text, source)
    if raw.get("quantization_config") is None:
        quant = side_file_text(repo_id, revision, HF_QUANT_CONFIG, answered)
        if quant is not None:
            raw = with_hf_quant_config(raw, parse_json_text(quant, f"{source}/{HF_QUANT_CONFIG}"))
    raw = with_compression_config(raw)

    def hub_file(name):
        text = side_file_text(repo_id, revision, name, answered)
        return None if text is None else parse_json_text(text, f"{source}/{name}")

    raw = with_side_quant_config(raw, hub_file, source)
    where = f"{source}/{TOKENIZER_CONFIG}"
    code = _tokenizer_text(side_file_text(repo_id, revision, TOKENIZER_CONFIG, answered), where)
    return Loaded(raw, repo_id, source, code, where if code is not None else None)


def _check_repo_id(name: str) -> None:
    """Refuse, before any request, a name no Hub repository can have (huggingface_hub.utils.validate_repo_id: ASCII
    letters, digits, '-', '_', '.'; at most 96 per part; no '--' or '..'; not ending in .git): 'a/b c' or 'ÄÖ/ü'
    went to the network and came back as "cannot reach the Hub" or HTTP 404."""
    try:
        from huggingface_hub.utils import HFValidationError, validate_repo_id
    except ImportError:  # pragma: no cover - a runtime dependency
        return
    try:
        validate_repo_id(name)
    except HFValidationError:
        from .files import clipped

        raise SourceError(f"{clipped(repr(name))}: no such file here, and not a Hub repo id (a Hub id is owner/name "
                          "of ASCII letters, digits, '-', '_' and '.', at most 96 each, without '--' or '..')",
                          "check the path, or the Hub id") from None


def load_config(name: str, revision: str | None = None) -> tuple[dict, str, str]:
    """(raw config, display name, source) for a bundled name, a path, or a Hub repo id."""
    loaded = load_source(name, revision)
    return loaded.raw, loaded.display, loaded.source


def load_source(name: str, revision: str | None = None) -> Loaded:
    """The config of a bundled name, a path, or a Hub repo id, with what its tokenizer_config.json says."""
    if not name.strip():  # Path('') is '.': "folder has no config.json" named no folder the user gave
        raise UsageError("the model is an empty string",
                         "give a bundled name (see 'kvplan models'), a config.json, a model folder or a Hub repo id")
    from .files import check_path_name

    path = Path(name).expanduser()
    check_path_name(path, "the model")
    if path.suffix == ".gguf":
        from .weights import gguf
        from .weights.gguf_config import to_config

        return Loaded(to_config(gguf.read(path)), path.stem, str(path))
    if path.is_dir():
        config = path / "config.json"
        if not config.is_file() and (path / "params.json").is_file():  # Mistral format only (vLLM: config_format mistral)
            config = path / "params.json"
        if not config.exists() and not config.is_symlink():
            raise SourceError(f"{path}: folder has no config.json")  # one that is a folder, a pipe or a bad link: said when read
        return Loaded(read_config_file(config), path.name, str(config), *_tokenizer_beside(config))
    if path.suffix == ".json" or path.exists():
        # a config.json is named by its folder ('config.json' alone: the folder it is in, not '')
        return Loaded(read_config_file(path), path.stem if path.name != "config.json" else path.absolute().parent.name,
                      str(path), *_tokenizer_beside(path))
    entry = resolve_bundled(name)
    if entry is not None and revision is None:
        where = f"{entry.hf_id}'s tokenizer_config.json, as model_specs/index.json records it"
        if entry.tokenizer_inferred:  # the flag is sourced, the class name is not the file's
            where = f"{entry.hf_id}'s tokenizer, as model_specs/index.json records it; the class name is inferred: " \
                    f"{entry.tokenizer_inferred}"
        return Loaded(bundled_config(entry), entry.hf_id, f"bundled:{entry.alias}", entry.tokenizer_code,
                      where if entry.tokenizer_code is not None else None)
    if entry is None and path.is_symlink():  # exists() is False for a link to nothing or a loop of links
        raise SourceError(f"{path}: a symlink that leads to no file (dangling, or a loop of links)",
                          "fix the link, or give the config's real path")
    if "/" in name and not name.startswith((".", "/")) and name.count("/") == 1:
        _check_repo_id(name)
        return _hub_config(name, revision)
    if entry is not None:  # a bundled name has no revisions: "unknown model" and itself as the suggestion said nothing
        raise UsageError(f"--revision {revision}: {name!r} is a bundled model, not a Hub repo",
                         f"drop --revision, or give the Hub id {entry.hf_id} to read that revision")
    close = suggest(name)
    hint = f"did you mean {', '.join(close)}?" if close else "run 'kvplan models' to list the bundled models"
    raise SourceError(f"unknown model {name!r}: not a bundled name, a file, or a Hub repo id (owner/name)", hint)


def parse_override(item: str, flag: str = "--set") -> tuple[str, object]:
    if "=" not in item:
        raise UsageError(f"{flag} {item!r}: expected key=value", "for example --set num_key_value_heads=64")
    key, text = item.split("=", 1)
    key = key.strip()
    if not key:
        raise UsageError(f"{flag} {item!r}: empty key")
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = text
    except ValueError:  # an integer past Python's digit limit for str -> int (4,300 digits)
        raise UsageError(f"{flag} {key}: the value is not a number kvplan can read ({len(text.strip()):,} "
                         "characters)", "give a number of sensible size") from None
    return key, value


@record
class Override:
    """One --set / --set-new, as applied: recorded in every report."""

    key: str
    value: object
    section: str  # "" (top level) or the nested text model's key (text_config, llm_config, language_config)
    new: bool

    def describe(self) -> str:
        where = f"{self.section}." if self.section else ""
        return f"{where}{self.key}={json.dumps(self.value)}"

    def as_dict(self) -> dict:
        return {"key": self.key, "value": self.value, "section": self.section or None, "new": self.new}


def apply_overrides(raw: dict, overrides=(), new=()) -> tuple[dict, list[Override]]:
    """--set key=value (the key must exist, at the top level or under text_config, where
    multimodal configs keep the language model's fields; llm_config or language_config for the
    wrappers that keep it there) and --set-new key=value (a key the config lacks, added where the
    model's fields live). A key set twice is refused."""
    from .configs.resolve_family import nested_text, nested_text_path

    out = dict(raw)
    path = nested_text_path(raw)
    text_key = ".".join(path)  # thinker_config.text_config for Qwen-Omni
    nested = nested_text(raw) or None
    applied: list[Override] = []
    seen: dict[str, str] = {}
    for flag, items in (("--set", overrides), ("--set-new", new)):
        for item in items:
            key, value = parse_override(item, flag)
            if key in seen:
                raise UsageError(f"{flag} {key}: the key is given twice ({seen[key]} and {item})", "give each key once")
            seen[key] = item
            if flag == "--set":
                if key in out:
                    section = ""
                elif nested is not None and key in nested:
                    section = text_key
                else:
                    known = list(out) + list(nested or {})
                    close = difflib.get_close_matches(key, known, n=2, cutoff=0.6)
                    hint = (f"did you mean {' or '.join(close)}? " if close else "") + \
                        (f"to add a field the config lacks, use --set-new {key}=... (kvplan estimate) or add it to a "
                         "copy of the config.json")
                    raise UsageError(f"--set {key}: the config has no field {key!r}", hint)
            else:
                if key in out or (nested is not None and key in nested):
                    raise UsageError(f"--set-new {key}: the config already has {key!r}", f"use --set {key}=... to change it")
                section = text_key if nested is not None else ""
            if section:
                nested = {**nested, key: value}
                out = _set_at(out, path, nested)
            else:
                out[key] = value
            applied.append(Override(key, value, section, flag == "--set-new"))
    return out, applied


def _set_at(raw: dict, path: tuple[str, ...], value: dict) -> dict:
    """A copy of raw with the dict at path (one or two keys) replaced by value."""
    if len(path) == 1:
        return {**raw, path[0]: value}
    return {**raw, path[0]: _set_at(raw[path[0]], path[1:], value)}


def load_model(name: str, *, revision: str | None = None, overrides=(), new=()) -> ModelSpec:
    return load_model_with_overrides(name, revision=revision, overrides=overrides, new=new)[0]


def load_model_with_overrides(name: str, *, revision: str | None = None, overrides=(), new=()) -> tuple[ModelSpec, list[Override]]:
    """The model and the overrides applied to its config (for the report)."""
    _, _, spec, applied = _load_built(name, revision, overrides, new)
    return spec, applied


def load_model_and_weights(name: str, *, revision: str | None = None, overrides=(), new=(),
                           weights: str | None = "auto", quantization: tuple[str, str] | None = None):
    """(ModelSpec, Weights): the cache description and the checkpoint's exact
    bytes (kvplan.weights chooses the reader: GGUF, safetensors, index, bundled,
    Hub headers, else the config estimate)."""
    spec, record_, _ = load_everything(name, revision=revision, overrides=overrides, new=new, weights=weights,
                                       quantization=quantization)
    return spec, record_


def load_everything(name: str, *, revision: str | None = None, overrides=(), new=(), weights: str | None = "auto",
                    quantization: tuple[str, str] | None = None):
    """(ModelSpec, Weights, overrides applied): what an estimate reports. quantization: (the engine's --quantization
    value, "vllm" or "sglang"), which quantizes a float checkpoint as it loads (configs/quant_online.py)."""
    from .weights.load import resolve

    loaded, raw, spec, applied = _load_built(name, revision, overrides, new)
    if quantization is not None:
        online = _online(loaded, raw, spec, quantization, weights)
        if online is not None:
            return online + (applied,)
    base = _checkpoint_params(loaded) if applied else None
    record = resolve(weights, model=spec, raw=raw, source=loaded.source, revision=revision,
                     checkpoint_param_count=base)
    if quantization is not None:  # a checkpoint quantized as the flag asks already: served as stored
        from dataclasses import replace

        from .configs.quant_online import apply

        record = replace(record, notes=record.notes + (apply(raw, *quantization)[2],))
    return spec, record, applied


def _online(loaded: Loaded, raw: dict, spec: ModelSpec, quantization: tuple[str, str], weights: str | None):
    """(ModelSpec, Weights) as the engine holds a float checkpoint it quantizes while loading: the config with the
    quantization_config of the engine's layout, sized module by module (configs/quant_online.py); None where the
    checkpoint is quantized that way already. UsageError where the engine refuses the flag."""
    from dataclasses import replace

    from .configs.quant_online import ENGINES, apply, load_note, served_float32_as
    from .weights.estimate import estimated

    value, engine = quantization
    if weights not in (None, "auto"):
        raise UsageError(f"--quantization {value} with --weights {weights}: kvplan sizes the weights {ENGINES[engine]} "
                         "quantizes from the config", "leave --weights out")
    raw_q, scheme, _ = apply(raw, value, engine)
    if raw_q is None:
        return None
    served, held_bytes = spec.float_dtype, spec.weight_bytes
    if served == "float32":  # the engine's dtype auto serves it in 16 bits, then quantizes (configs/quant_online.py)
        served = served_float32_as(engine, raw)
        raw_q = _dtype_set(raw_q, served)
        held_bytes = build_model(_dtype_set(raw, served), loaded.display, loaded.source).weight_bytes
    built = build_model(raw_q, loaded.display, loaded.source, online=scheme.layout)
    # the config estimate names the checkpoint format that stands for the engine's layout: say which layout it is
    head = "weights estimated as "
    notes = tuple(f"{head}{scheme.label}, online (sized as the checkpoint format {n[len(head):]}".replace(": ", "): ", 1)
                  if n.startswith(head) else n for n in built.notes)
    online = replace(built, notes=notes, online_quantization=value, online_float_bytes=held_bytes,
                     tokenizer_code=spec.tokenizer_code, tokenizer_source=spec.tokenizer_source,
                     overrides=spec.overrides)
    how = f"{scheme.label}, online ({ENGINES[engine]} --quantization {value}" + (
        f" = {scheme.name})" if scheme.name != value else ")")
    note = (f"{ENGINES[engine]} quantizes this {spec.weight_dtype} checkpoint ({spec.weight_bytes:,} B) as it loads "
            f"(--quantization {value}): weights sized as it holds them; " + load_note(engine, held_bytes, served))
    return online, estimated(online, how, note)


def _dtype_set(raw: dict, dtype: str) -> dict:
    """A copy of raw whose torch_dtype / dtype say `dtype`, at the top and in the text model's section."""
    from .configs.resolve_family import nested_text_path

    out = {**raw, **{k: dtype for k in ("torch_dtype", "dtype") if k in raw}}
    path = nested_text_path(raw)
    nested = raw.get(path[0]) if len(path) == 1 else None
    if isinstance(nested, dict):
        out[path[0]] = {**nested, **{k: dtype for k in ("torch_dtype", "dtype") if k in nested}}
    return out


def _checkpoint_params(loaded: Loaded) -> int | None:
    """The parameter count of the config as read, before --set (None where it does not build on its own: the
    overrides may be what makes it readable)."""
    import warnings

    from .errors import KvplanError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said once already, for the model with its overrides
        try:
            return build_model(loaded.raw, loaded.display, loaded.source).param_count
        except KvplanError:
            return None


def _load_built(name: str, revision: str | None, overrides, new) -> tuple[Loaded, dict, ModelSpec, list[Override]]:
    """(the config as read, the config with --set / --set-new applied, its model, the overrides applied); the model
    carries what the tokenizer_config.json read beside the config says."""
    from dataclasses import replace

    loaded = load_source(name, revision)
    raw, applied = apply_overrides(loaded.raw, overrides, new) if overrides or new else (loaded.raw, [])
    spec = build_model(raw, loaded.display, loaded.source)
    if loaded.tokenizer_code is not None:
        spec = replace(spec, tokenizer_code=loaded.tokenizer_code, tokenizer_source=loaded.tokenizer_source)
    return loaded, raw, _with_overrides(spec, applied), applied


def _with_overrides(spec: ModelSpec, applied: list[Override]) -> ModelSpec:
    from dataclasses import replace

    return replace(spec, overrides=tuple(applied)) if applied else spec


def replay_overrides(raw: dict, applied) -> dict:
    """A config read again with the --set / --set-new a model was built with applied once more."""
    out = dict(raw)
    for o in applied:
        if o.section:
            out[o.section] = {**(out.get(o.section) if isinstance(out.get(o.section), dict) else {}), o.key: o.value}
        else:
            out[o.key] = o.value
    return out


def offline() -> bool:
    from .hub import offline as hub_offline

    return hub_offline()
