"""Fuzzing the whole estimate path with mutated copies of every bundled config.

Shared by tests/test_fuzz_configs.py (a few hundred examples in the suite) and
benchmarks/fuzz_configs.py (10,000 by default, crashes per thousand).

A mutation picks a place in a bundled config.json (any key or list item, nested
ones included) and drops it or replaces it with a value of another JSON type:
null, a boolean, a huge, negative or zero integer, NaN, Infinity, a float, a
string, a list, nested junk. The mutated config is written to a file and run
through `kvplan estimate` in-process (kvplan.cli.common.run, as the console
script runs it), with and without a GPU and vLLM's accounting. Allowed outcomes:
exit 0 with output, or kvplan's own error, exit 1 or 2, in one line. Anything
else (an internal error, a traceback, more than TIME_LIMIT_S) is a crash, kept
with the innermost kvplan frame of its traceback.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "model_specs"
CONFIG_NAMES = sorted(p.stem for p in SPECS.glob("*.json") if p.name != "index.json")
TIME_LIMIT_S = 2.0
VARIANTS = (
    (),
    ("--gpu", "h100", "--engine", "vllm"),
    ("--gpu", "h100", "--engine", "vllm", "--weights", "1GiB", "-t", "fp8", "-t", "page:16"),
)


def bundled(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text(encoding="utf-8"))


# test configs of the readers added in Dec 2026 (tests/data/configs/: wrappers under llm_config / text_config,
# remote-code decoders, Ling / Ring, Nemotron-NAS, the per-module weight tables of Llama 4, Gemma 4, Laguna)
DATA = ROOT / "tests" / "data" / "configs"
DATA_NAMES = ("edge0-8b-a1b-preview", "gemma-4-26b-a4b-nvfp4", "internvl3-1b-pretrained", "kimi-vl-a3b-instruct",
              "laguna-xs.2-fp8", "ling-lite-1.5", "ling-mini-2.0-trimmed", "llama-3.3-nemotron-super-49b-v1",
              "llama-4-scout-fp8-dynamic", "mimo-7b", "phi-3-vision-128k-instruct")


def data_config(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def paths(config, prefix=()):
    """Every place in the config: key paths into objects and index paths into lists."""
    out = []
    if isinstance(config, dict):
        for key, value in config.items():
            out.append(prefix + (key,))
            out.extend(paths(value, prefix + (key,)))
    elif isinstance(config, list):
        for i, value in enumerate(config[:8]):
            out.append(prefix + (i,))
            out.extend(paths(value, prefix + (i,)))
    return out


JUNK_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, -(2**31), 1, 2, 3, 7, 2**31, 2**53 + 1, 10**8, 10**12, 10**30, 10**400]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -0.5, 1e-300, 1e308, 1.0, 64.0, 4096.0, 1e8]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "0", "4096", "nan", "Infinity", "bfloat16", "float8", "llama", "full_attention", "x" * 300]),
    st.text(max_size=12),
)
JUNK = st.recursive(
    JUNK_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=8,
)


@dataclass(frozen=True)
class Mutation:
    path: tuple
    op: str  # "drop" | "set"
    value: object = None

    def describe(self) -> str:
        where = ".".join(str(p) for p in self.path)
        if self.op == "drop":
            return f"drop {where}"
        text = json.dumps(self.value)
        return f"{where}={text if len(text) <= 60 else text[:57] + '...'}"


@st.composite
def mutated_configs(draw, names=CONFIG_NAMES, load=bundled):
    """(config name, mutations, mutated config); load reads a name (bundled, or data_config)."""
    name = draw(st.sampled_from(names))
    config, mutations = _mutate(draw, load(name))
    return name, mutations, config


def _mutate(draw, value, where=lambda path: True, junk=lambda path, new: new):
    """value after one to three mutations at places `where` keeps (a place dropped, or set to JUNK passed
    through `junk`), and the mutations."""
    mutations = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        places = [p for p in paths(value) if where(p)]
        if not places:
            break
        path = draw(st.sampled_from(places))
        if draw(st.booleans()) and draw(st.booleans()):
            mutation = Mutation(path, "drop")
        else:
            mutation = Mutation(path, "set", junk(path, draw(JUNK)))
        value = apply(value, mutation)
        mutations.append(mutation)
    return value, tuple(mutations)


def apply(config, mutation: Mutation):
    """A copy of config with the mutation applied."""
    config = json.loads(json.dumps(config))  # deep copy (NaN survives the round trip)
    node = config
    for step in mutation.path[:-1]:
        node = node[step]
    last = mutation.path[-1]
    if mutation.op == "drop":
        del node[last]
    else:
        node[last] = mutation.value
    return config


@dataclass(frozen=True)
class Outcome:
    code: int
    seconds: float
    stdout: str
    stderr: str
    crash: str | None  # None when the outcome is allowed; else what went wrong
    site: str | None  # innermost kvplan frame of the traceback, "file:line in function"


class _TooSlow(BaseException):  # not an Exception: kvplan's error map must not swallow it
    pass


def _alarm(signum, frame):
    raise _TooSlow()


_COMMAND = []  # the app's click command, built once (typer rebuilds all 12 commands on every call of the app)


def _command():
    if not _COMMAND:
        import typer

        from kvplan.cli.app import app

        _COMMAND.append(typer.main.get_command(app))
    return _COMMAND[0]


def _invoke(argv: list[str], debug: bool) -> tuple[int, str, str, BaseException | None]:
    from kvplan.cli import common

    app = _command()
    out, err = io.StringIO(), io.StringIO()
    old = sys.argv, sys.stdout, sys.stderr, os.environ.get("KVPLAN_DEBUG")
    sys.argv, sys.stdout, sys.stderr = ["kvplan", *argv], out, err
    if debug:
        os.environ["KVPLAN_DEBUG"] = "1"
    raised = None
    try:
        code = common.run(app)
    except _TooSlow:
        raise
    except BaseException as exc:  # only with debug: the exception itself, for its site
        code, raised = -1, exc
    finally:
        sys.argv, sys.stdout, sys.stderr = old[:3]
        if old[3] is None:
            os.environ.pop("KVPLAN_DEBUG", None)
        else:
            os.environ["KVPLAN_DEBUG"] = old[3]
    return code, out.getvalue(), err.getvalue(), raised


# the installed package's folder: a frame is kvplan's when its file lies below it (matching "/kvplan/" in the
# path also took the tests of a checkout that is itself named kvplan)
_PACKAGE = Path(__import__("kvplan").__file__).resolve().parent


def _ours(filename: str) -> str | None:
    """'kvplan/x/y.py' for a file of the package, else None."""
    try:
        return "kvplan/" + Path(filename).resolve().relative_to(_PACKAGE).as_posix()
    except ValueError:
        return None


def _site(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if _ours(f.filename) and not f.filename.replace("\\", "/").endswith("/cli/common.py")]
    frame = (ours or frames)[-1]
    short = _ours(frame.filename) or frame.filename.replace("\\", "/")
    return f"{short}:{frame.lineno} in {frame.name}: {type(exc).__name__}"


def run_estimate(config: dict, variant: tuple, folder: Path) -> Outcome:
    """`kvplan estimate CONFIG --context 4096 --format json VARIANT`, classified."""
    path = folder / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return run_argv(["estimate", str(path), "--context", "4096", "--format", "json", *variant])


def run_argv(argv: list[str]) -> Outcome:
    """`kvplan ARGV` in-process, classified: a result (exit 0 with output) or one kvplan error line (exit 1/2)
    is allowed; anything else, or more than TIME_LIMIT_S, is a crash with its site."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    start = time.perf_counter()
    try:
        code, out, err, _ = _invoke(argv, debug=False)
    except _TooSlow as slow:
        return Outcome(-1, time.perf_counter() - start, "", "", f"no answer within {TIME_LIMIT_S:g} s",
                       "timeout at " + _site(slow))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("kvplan: error:")]
    if seconds >= TIME_LIMIT_S:  # the alarm went off where Python swallows it (a __del__ prints it): still too slow
        return Outcome(code, seconds, out, err, f"answered after {seconds:.1f} s", "slow (the alarm was swallowed)")
    if code == 0 and out.strip():
        crash = None
    elif code in (1, 2) and len(errors) == 1 and "internal error" not in errors[0] and "Traceback" not in err:
        crash = None
    else:
        crash = f"exit {code}: {errors[0] if errors else (lines[-1] if lines else 'no output')}"
    site = None
    if crash is not None:
        _, _, _, raised = _invoke(argv, debug=True)
        site = _site(raised) if raised is not None else "?"
    return Outcome(code, seconds, out, err, crash, site)


def check_case(case, folder: Path) -> None:
    """Every VARIANT of one mutated config ends cleanly: no crash, within the time limit, and a whole JSON
    document when it answers."""
    import json

    name, mutations, config = case
    for variant in VARIANTS:
        outcome = run_estimate(config, variant, folder)
        assert outcome.crash is None, (
            f"{name} with {'; '.join(m.describe() for m in mutations)} {' '.join(variant)}: "
            f"{outcome.crash} at {outcome.site}")
        assert outcome.seconds < TIME_LIMIT_S
        if outcome.code == 0:
            json.loads(outcome.stdout)  # a result is a whole JSON document


# ---- every reader and engine path (benchmarks/fuzz_configs.py; the suite keeps to the sources above) ----

ALL_DATA_NAMES = tuple(sorted(p.stem for p in DATA.glob("*.json")))
QUANT = ROOT / "tests" / "data" / "hf_quant_config"
PUBLISHED = ROOT / "tests" / "data" / "modelopt_published"
MIXED = ROOT / "tests" / "data" / "mixed_formats"
# the options of the engines and plans added since the three VARIANTS: SGLang's pool, the oldest and a late vLLM
# release, vLLM's flags, MTP drafts, tensor and pipeline parallel, a KV pool given directly
WIDE_VARIANTS = VARIANTS + (
    ("--gpu", "h100", "--engine", "sglang"),
    ("--gpu", "h100", "--engine", "vllm@0.11"),
    ("--gpu", "h100", "--engine", "vllm@0.33"),
    ("--gpu", "h100", "--engine", "vllm", "--emit", "vllm"),
    ("--gpu", "h100", "--engine", "vllm", "--mtp"),
    ("--gpu", "h100", "--engine", "vllm", "--tp", "4"),
    ("--gpu", "h100", "--engine", "vllm", "--pp", "2"),
    ("--engine", "vllm", "--kv-memory", "10GiB"),
    ("--gpu", "h100", "--engine", "sglang", "--tp", "4", "--mtp"),
    # the per-card NVFP4 expert rules: SM 12.0's CUTLASS backends (vLLM) and flashinfer_cutlass (SGLang), SM 10.0
    ("--gpu", "rtx-pro-6000", "--engine", "vllm", "--tp", "8"),
    ("--gpu", "rtx-pro-6000", "--engine", "sglang", "--tp", "8"),
    ("--gpu", "b200", "--engine", "sglang", "--tp", "4"),
)


def _from_test(module: str, name: str):
    """A config a test module writes by hand (the tests folder is on sys.path wherever this module is)."""
    import importlib

    return json.loads(json.dumps(getattr(importlib.import_module(module), name)))


def _gguf(arch: str) -> dict:
    return {"general.architecture": arch, **_from_test("test_gguf_bad_metadata", "BASE")[arch]}


# name: () -> {file name: content}; the first file is the one given to kvplan (a folder when it is config.json
# with a file beside it). A .gguf's content is its metadata, written by test_gguf_bad_metadata.gguf_bytes.
def _sources() -> dict:
    out = {f"spec:{n}": (lambda n=n: {"config.json": bundled(n)}) for n in CONFIG_NAMES}
    out.update({f"data:{n}": (lambda n=n: {"config.json": data_config(n)}) for n in ALL_DATA_NAMES})
    out["zaya-megatron"] = lambda: {"config.json": _from_test("test_zaya_layout", "BASE")}
    out["zaya-megatron-40"] = lambda: {"config.json": _from_test("test_sglang_zaya", "ZAYA_40")}
    out["mistral-large-4-params"] = lambda: {"params.json": _from_test("test_families_vllm034", "LARGE4_PARAMS")}
    for stem, spec in (("qwen3-30b-a3b-nvfp4", "qwen3-30b-a3b"), ("qwen3-32b-nvfp4", "qwen3-8b")):
        out[f"hf_quant_config:{stem}"] = lambda stem=stem, spec=spec: {
            "config.json": bundled(spec),
            "hf_quant_config.json": json.loads((QUANT / f"{stem}.json").read_text(encoding="utf-8"))}
    # published ModelOpt checkpoints' config.json with their hf_quant_config.json (a MIXED_PRECISION table among them),
    # and compressed-tensors configs whose groups differ in format
    for config in sorted(PUBLISHED.glob("*.config.json")):
        stem = config.name[:-len(".config.json")]
        side = next((p for p in (PUBLISHED / f"{stem}.hf_quant_config.json",
                                 PUBLISHED / f"{stem}.hf_quant_config.json.gz") if p.exists()), None)
        if side is not None:
            out[f"modelopt:{stem}"] = lambda config=config, side=side: {
                "config.json": json.loads(config.read_text(encoding="utf-8")),
                "hf_quant_config.json": json.loads(gzip.open(side).read() if side.suffix == ".gz"
                                                   else side.read_text(encoding="utf-8"))}
    for config in sorted(MIXED.glob("*.json")):
        out[f"mixed:{config.stem}"] = lambda config=config: {"config.json": json.loads(config.read_text(encoding="utf-8"))}
    for arch in ("llama", "qwen2", "qwen3moe", "gemma2", "gemma3"):
        out[f"gguf:{arch}"] = lambda arch=arch: {"m.gguf": _gguf(arch)}
    return out


SOURCES = _sources()
SOURCE_NAMES = tuple(SOURCES)


def _gguf_value(value):
    """A junk JSON value as GGUF can hold it: None and objects become text, integers past 64 bits are clipped,
    a list takes its first element's type (GGUF arrays hold one type)."""
    if isinstance(value, bool) or isinstance(value, float) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return max(-(2**63), min(value, 2**64 - 1))
    if isinstance(value, list):
        items = [_gguf_value(v) for v in value if v is not None and not isinstance(v, dict)]
        first = type(items[0]) if items else int
        return [v for v in items if type(v) is first and not isinstance(v, list)]
    return json.dumps(value)


@st.composite
def mutated_inputs(draw, names=SOURCE_NAMES):
    """(source name, mutations, {file name: mutated content}): any reader's input, mutated as mutated_configs
    mutates a config.json; the mutation's path starts with the file it changes."""
    name = draw(st.sampled_from(names))
    files, mutations = _mutate(draw, SOURCES[name](), where=lambda path: len(path) > 1,
                               junk=lambda path, new: _gguf_value(new) if path[0].endswith(".gguf") else new)
    return name, mutations, files


def write_inputs(files: dict, folder: Path) -> Path:
    """Write the files into a fresh subfolder; the path to give kvplan."""
    import shutil

    where = folder / "model"  # the name kvplan shows for a folder or a config.json in it
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for file, content in files.items():
        if file.endswith(".gguf"):
            from test_gguf_bad_metadata import gguf_bytes

            (where / file).write_bytes(gguf_bytes(content))
        else:
            (where / file).write_text(json.dumps(content), encoding="utf-8")
    first = next(iter(files))
    return where if len(files) > 1 else where / first


def run_inputs(files: dict, variant: tuple, folder: Path, overrides: tuple = ()) -> Outcome:
    """`kvplan estimate INPUT --context 4096 --format json VARIANT [--set k=v ...]`, classified."""
    path = write_inputs(files, folder)
    return run_argv(["estimate", str(path), "--context", "4096", "--format", "json", *variant, *overrides])


OVERRIDE_TEXTS = ("NaN", "Infinity", "-Infinity", "1e999", "-1", "0", "0.5", "null", "true", "[]", "{}", "\"\"",
                  "[1, 2]", "{\"a\": 1}", "9" * 400, "9" * 5000, "x", "", "[", "{\"a\":", "1e-320", "4096.0")


@st.composite
def overrides(draw, files: dict):
    """A few `--set key=value` of top-level keys of the input's JSON with junk text (a GGUF takes none)."""
    first = next(iter(files))
    content = files[first]
    if first.endswith(".gguf") or not isinstance(content, dict) or not content:
        return ()
    out = []
    for key in draw(st.lists(st.sampled_from(sorted(content)), max_size=2, unique=True)):
        text = draw(st.one_of(st.sampled_from(OVERRIDE_TEXTS), JUNK.map(lambda v: json.dumps(v))))
        out += ["--set", f"{key}={text}"]
    return tuple(out)
