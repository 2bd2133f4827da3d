"""Spec text -> Technique. One builder per technique name; `CATALOG` documents them.

The technique modules load only when a spec names one of theirs, so a run
without -t imports none of them."""

from __future__ import annotations

from fractions import Fraction

from ..core.storage import kv_storage
from ..errors import TechniqueError
from .base import ENGINE_SUPPORT, NEEDS_TRAINING, NONE, QUALITY_RISK, Technique
from .spec import Spec, parse_spec

# name -> (syntax, term it reduces, caveat, one line)
CATALOG = {
    "gqa": ("gqa:N", "heads", NEEDS_TRAINING, "regroup K/V into N KV heads per layer (uptraining)"),
    "mqa": ("mqa", "heads", NEEDS_TRAINING, "one KV head per layer (uptraining)"),
    "cla": ("cla:F", "layers", NEEDS_TRAINING, "F adjacent layers share one cache (cross-layer attention)"),
    "window": ("window:W[,pattern=L:G]", "tokens", NEEDS_TRAINING, "sliding window of W tokens on all layers or L local : G global"),
    "mla": ("mla[:rank=512,rope=64]", "width", NEEDS_TRAINING, "one latent of rank+rope elements replaces K and V"),
    "hybrid": ("hybrid[:R:A][,state=SIZE]", "state", NEEDS_TRAINING, "R of every R+A attention layers become a fixed recurrent state"),
    "csa": ("csa:m=4,k=512,window=128", "tokens", NEEDS_TRAINING, "store floor(n/m) compressed entries + a raw window; read k + window"),
    "quest": ("quest:page=16,topk=64", "reads", ENGINE_SUPPORT, "read only the top-k pages; per-page min/max keys stored"),
    "fp8": ("fp8[:e4m3|e5m2][,scales=tensor|head][,skip=sliding]", "bytes", QUALITY_RISK, "8-bit float K/V with fp32 scales"),
    "int8": ("int8[:group=64][,skip=sliding]", "bytes", QUALITY_RISK, "8-bit integer K/V, fp16 scale+zero per group"),
    "int4": ("int4[:group=64][,skip=sliding]", "bytes", QUALITY_RISK, "4-bit integer K/V, fp16 scale+zero per group"),
    "int2": ("int2[:group=32][,skip=sliding]", "bytes", QUALITY_RISK, "2-bit integer K/V, fp16 scale+zero per group"),
    "kivi": ("kivi[:BITS | bits=2,group=32,residual=128]", "bytes", QUALITY_RISK, "KIVI: keys per channel, values per token, recent tokens in fp16"),
    "evict": ("evict:FRACTION | evict:TOKENS[,recent=R]", "tokens", QUALITY_RISK, "H2O/SnapKV token budget, newest R tokens always kept"),
    "pyramid": ("pyramid:FRACTION", "tokens", QUALITY_RISK, "PyramidKV: budgets 1.5x..0.5x the average from lower to higher layers"),
    "page": ("page:BLOCK", "waste", NONE, "paged allocation in blocks of BLOCK tokens"),
    "prefix": ("prefix:tokens=P,requests=R", "duplicates", NONE, "R requests share the full blocks of a P-token prefix"),
    "offload": ("offload:cpu=SIZE[,active=N,link=GB/s,mfu=0.5]", "residency", ENGINE_SUPPORT, "idle sequences move to a CPU tier"),
}
ALIASES = {"h2o": "evict", "snapkv": "evict", "pyramidkv": "pyramid", "paging": "page", "sliding": "window",
           "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "prefix_cache": "prefix"}


def _meta(name: str, spec: Spec, label: str) -> dict:
    _, term, caveat, _ = CATALOG[name]
    return dict(spec=spec.text, label=label, term=term, caveat=caveat)


def _skip(spec: Spec) -> bool:
    value = spec.options.get("skip")
    if value is None:
        return False
    if value.lower() not in ("sliding", "sliding_window", "window"):
        raise spec.fail(f"skip must be 'sliding', got {value!r}")
    return True


def _quant(name: str, spec: Spec) -> Technique:
    if name == "fp8":
        spec.known("scales", "skip", "format")
        variant = (spec.options.get("format") or spec.arg or "e4m3").lower()
        if variant not in ("e4m3", "e5m2"):
            raise spec.fail(f"fp8 format must be e4m3 or e5m2, got {variant!r}")
        scales = spec.options.get("scales", "tensor")
        if scales not in ("tensor", "head"):
            raise spec.fail(f"scales must be 'tensor' or 'head', got {scales!r}")
        storage = kv_storage(f"fp8_{variant}", scales=scales)
        label = f"fp8 {variant}, per-{scales} scales"
    elif name == "kivi":
        spec.known("bits", "group", "residual", "skip")
        bits = spec.int("bits", default=2, positional=True)  # kivi:4 is kivi:bits=4
        if bits not in (2, 4, 8):
            raise spec.fail(f"bits must be 2, 4 or 8, got {bits}")
        group = spec.int("group", default=32)
        residual = spec.int("residual", default=128, minimum=0)
        storage = kv_storage(f"int{bits}", group_size=group, kivi=True, residual_tokens=residual)
        label = f"KIVI int{bits}, group {group}, {residual} recent tokens in fp16"
    else:
        spec.known("group", "skip")
        group = spec.int("group", default=32 if name == "int2" else 64, positional=True)
        storage = kv_storage(name, group_size=group)
        label = f"{name}, group {group}"
    skip = _skip(spec)
    if skip:
        label += ", sliding layers native"
    from .quantize import Quantize

    return Quantize(**_meta("kivi" if name == "kivi" else name, spec, label), storage=storage, skip_windowed=skip)


def _fraction_or_count(spec: Spec) -> tuple[Fraction | None, int | None]:
    text = spec.options.get("budget") or spec.arg
    if text is None:
        raise spec.fail("needs a budget: a fraction such as 0.5 or a token count such as 2048")
    if "." in text or "/" in text:
        fraction = spec.fraction("budget", positional=True)
        if not 0 < fraction <= 1:
            raise spec.fail(f"a budget fraction must be in (0, 1], got {text}")
        return fraction, None
    count = spec.int("budget", positional=True)
    if count == 1:  # a count, as written, but almost surely meant as the whole cache
        import warnings

        warnings.warn(f"technique {spec.text!r}: a budget without a point is a token count, so this keeps one "
                      "token per layer; write 1.0 (or 0.5, 1/2) for a fraction of the tokens", stacklevel=2)
    return None, count


def build(text: str) -> Technique:
    spec = parse_spec(text)
    name = ALIASES.get(spec.name, spec.name)
    if spec.name in ("fp8_e4m3", "fp8_e5m2") and spec.arg is None:
        spec = Spec(spec.text, "fp8", spec.name[4:], spec.options)
    if name not in CATALOG:
        import difflib

        close = difflib.get_close_matches(name, list(CATALOG) + list(ALIASES), n=2)
        hint = f"did you mean {' or '.join(close)}?" if close else f"known: {', '.join(CATALOG)}"
        raise TechniqueError(f"unknown technique {spec.name!r}", hint)
    if name in ("fp8", "int8", "int4", "int2", "kivi"):
        return _quant(name, spec)
    if name in ("gqa", "mqa", "cla", "mla", "hybrid"):
        from . import architecture as arch
    elif name in ("window", "csa", "quest", "evict", "pyramid"):
        from . import tokens
    else:
        from . import serving
    if name in ("gqa", "mqa"):
        spec.known("heads")
        if name == "mqa" and (spec.arg is not None or "heads" in spec.options):
            raise spec.fail("mqa is one KV head and takes no value; for N heads use gqa:N")
        heads = 1 if name == "mqa" else spec.int("heads", positional=True)
        return arch.RegroupHeads(**_meta(name, spec, f"{heads} KV head{'s' if heads > 1 else ''} per layer"), kv_heads=heads)
    if name == "cla":
        spec.known("factor")
        factor = spec.int("factor", default=2, positional=True)
        if factor < 2:
            raise spec.fail("the sharing factor must be >= 2")
        return arch.ShareLayers(**_meta(name, spec, f"{factor} layers per cache"), factor=factor)
    if name == "window":
        spec.known("tokens", "pattern")
        window = spec.int("tokens", positional=True)
        local = glob = 0
        pattern = spec.options.get("pattern")
        if pattern:
            try:
                local, glob = (int(p) for p in pattern.split(":"))
                if local <= 0 or glob < 0:
                    raise ValueError(pattern)
            except ValueError:
                raise spec.fail(f"pattern must be LOCAL:GLOBAL such as 5:1, got {pattern!r}") from None
        label = f"window {window}" + (f", {local} local : {glob} global" if pattern else " on every layer")
        return tokens.Window(**_meta(name, spec, label), window=window, local=local, global_=glob)
    if name == "mla":
        spec.known("rank", "rope")
        rank, rope = spec.int("rank", default=512, positional=True), spec.int("rope", default=64, minimum=0)
        return arch.LatentWhatIf(**_meta(name, spec, f"latent {rank} + rope {rope}"), rank=rank, rope=rope)
    if name == "hybrid":
        spec.known("state", "pattern")
        pattern = spec.options.get("pattern") or _pattern_arg(text) or "3:1"
        try:
            rec, att = (int(p) for p in pattern.split(":"))
            if rec <= 0 or att < 0:
                raise ValueError(pattern)
        except ValueError:
            raise spec.fail(f"pattern must be RECURRENT:ATTENTION such as 3:1, got {pattern!r}") from None
        state = spec.size("state") if "state" in spec.options else None
        return arch.HybridWhatIf(**_meta(name, spec, f"{rec} recurrent : {att} attention"), recurrent=rec, attention=att, state_bytes=state)
    if name == "csa":
        spec.known("m", "k", "window")
        m = spec.int("m", default=4, positional=True)
        k = spec.int("k", default=512)
        window = spec.int("window", default=128, minimum=0)
        if window < m - 1:
            raise spec.fail(f"window must hold the unfinished group: window >= m - 1 = {m - 1}, got {window}")
        return tokens.CompressedSparse(**_meta(name, spec, f"m={m}, top-{k}, window {window}"), ratio=m, topk=k, window=window)
    if name == "quest":
        spec.known("page", "topk")
        page, topk = spec.int("page", default=16), spec.int("topk", default=64, positional=True)
        return tokens.Quest(**_meta(name, spec, f"top-{topk} pages of {page}"), page=page, topk=topk)
    if name == "evict":
        spec.known("recent", "budget")
        fraction, count = _fraction_or_count(spec)
        recent = spec.int("recent", default=0, minimum=0)
        label = (f"keep {float(fraction):.0%}" if fraction is not None else f"keep {count} tokens") + (f", {recent} recent" if recent else "")
        return tokens.Evict(**_meta(name, spec, label), fraction=fraction, tokens=count, recent=recent)
    if name == "pyramid":
        spec.known("budget")
        fraction = spec.fraction("budget", positional=True)
        if fraction is None or not 0 < fraction <= Fraction(2, 3):
            raise spec.fail("needs an average budget fraction in (0, 2/3], such as pyramid:0.12")
        return tokens.Pyramid(**_meta(name, spec, f"average {float(fraction):.0%}, 1.5x..0.5x"), fraction=fraction)
    if name == "page":
        spec.known("block")
        block = spec.int("block", default=16, positional=True)
        return serving.Page(**_meta(name, spec, f"blocks of {block} tokens"), block=block)
    if name == "prefix":
        spec.known("tokens", "requests")
        p = spec.int("tokens", positional=True)
        r = spec.int("requests", default=2)
        return serving.Prefix(**_meta(name, spec, f"{p}-token prefix shared by {r} requests"), tokens=p, requests=r)
    # offload
    spec.known("cpu", "active", "link", "mfu")
    cpu = spec.size("cpu") if "cpu" in spec.options or spec.arg is None else _size_arg(spec)
    active = spec.int("active", default=1)  # the sequences decoding now stay on the GPU: at least one
    link = spec.options.get("link")
    try:
        link_gbps = float(link.lower().replace("gb/s", "")) if link else None
        mfu = float(spec.options.get("mfu", 0.5))
        if not (0 < mfu <= 1 and (link_gbps is None or link_gbps > 0)):
            raise ValueError(link)
    except ValueError:
        raise spec.fail("link must be a bandwidth in GB/s and mfu a fraction in (0, 1]") from None
    return serving.OffloadTier(**_meta("offload", spec, f"CPU tier {spec.options.get('cpu', spec.arg)}"), cpu_bytes=cpu, active=active, link_gbps=link_gbps, mfu=mfu)


def _pattern_arg(text: str) -> str | None:
    """'hybrid:3:1,state=1MiB' -> '3:1' (the spec parser splits at the first colon)."""
    _, _, rest = text.partition(":")
    first = rest.split(",")[0]
    return first if first and "=" not in first else None


def _size_arg(spec: Spec) -> int:
    from ..units import parse_size

    try:
        return parse_size(spec.arg, "cpu")
    except Exception:
        raise spec.fail(f"cpu must be a size such as 64GiB, got {spec.arg!r}") from None


def build_all(texts) -> list[Technique]:
    """Every -t value, expanding 'all' is the caller's business. A technique given
    twice is refused: applying fp8 twice, or two windows, is a typo, never a plan."""
    check_unique(texts)
    return [build(t) for t in texts]


def check_unique(texts) -> None:
    seen: dict[str, str] = {}
    for text in texts:
        spec = parse_spec(text)
        name = ALIASES.get(spec.name, spec.name)
        if spec.name in ("fp8_e4m3", "fp8_e5m2"):
            name = "fp8"
        if name in seen:
            raise TechniqueError(f"technique {name!r} is given twice ({seen[name]!r} and {text.strip()!r})",
                                 "give each technique once")
        seen[name] = text.strip()
