"""Read an SGLang server's start-up log: the settings and the memory figures its pool is sized from.

The lines (sglang 0.4.x-0.5.9, model_executor/model_runner.py, mem_cache/memory_pool.py,
managers/scheduler.py), each possibly behind a "[time TPn]" or "[time DPm TPn]" prefix:

    server_args=ServerArgs(model_path='...', ..., tp_size=8, mem_fraction_static=0.831, ...)
    Init torch distributed ends. [elapsed=..., ]mem usage=1.25 GB
    Load weight begin. avail mem=77.43 GB
    Load weight end. [elapsed=..., ]type=Grok1ForCausalLM, dtype=torch.bfloat16, avail mem=40.69 GB[, mem usage=36.73 GB].
    Use sliding window memory pool. full_layer_tokens=F, swa_layer_tokens=S
    KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB     (MLA: KV size: X GB; before ~0.4.5 no #tokens)
    Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size: X GB, ssm_state size: Y GB   (hybrids)
    Memory pool end. avail mem=11.22 GB
    max_total_num_tokens=N, [chunked_prefill_size=C, ]max_prefill_tokens=P, max_running_requests=R, context_len=L[, ...]

Figures are rank 0's where ranks print their own (TP0, else the first seen). GB in these lines is 2**30 B.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field


_NUM = r"(-?\d+(?:\.\d+)?)"
_RANK = re.compile(r"\[[^\]]*?\bTP(\d+)\]")
_PATTERNS = {
    "init_usage_gib": re.compile(r"Init torch distributed ends\..*?mem usage=" + _NUM + " GB"),
    "load_begin_avail_gib": re.compile(r"Load weight begin\. avail mem=" + _NUM + " GB"),
    "load_end": re.compile(r"Load weight end\..*?type=(\w+).*?avail mem=" + _NUM + r" GB(?:, mem usage=" + _NUM + " GB)?"),
    "swa": re.compile(r"Use sliding window memory pool\. full_layer_tokens=(\d+), swa_layer_tokens=(\d+)"),
    "kv": re.compile(r"KV Cache is allocated\.(?: dtype: \S+,)?(?: #tokens: (\d+),)? (?:K size: " + _NUM + r" GB, V size: " + _NUM
                     + r" GB|KV size: " + _NUM + " GB)"),
    "pool_end_avail_gib": re.compile(r"Memory pool end\. avail mem=" + _NUM + " GB"),
    "mamba": re.compile(r"Mamba Cache is allocated\. max_mamba_cache_size: (\d+), conv_state size: " + _NUM
                        + r" ?GB, ssm_state size: " + _NUM + " ?GB"),
    "max_total": re.compile(r"max_total_num_tokens=(\d+),.*?max_running_requests=(\d+), context_len=(\d+)"),
}
_ARGS = {  # server_args fields read: name -> (pattern of the value, type)
    "model_path": (r"'([^']*)'", str), "tp_size": (r"(\d+)", int), "pp_size": (r"(\d+)", int),
    "dp_size": (r"(\d+)", int), "mem_fraction_static": (r"([0-9.]+)", float), "kv_cache_dtype": (r"'([^']*)'", str),
    "page_size": (r"(\d+|None)", int), "context_length": (r"(\d+|None)", int),
    "max_running_requests": (r"(\d+|None)", int), "max_total_tokens": (r"(\d+|None)", int),
    "chunked_prefill_size": (r"(-?\d+|None)", int), "enable_dp_attention": (r"(True|False)", str),
    "speculative_algorithm": (r"('[^']*'|None)", str), "disable_hybrid_swa_memory": (r"(True|False)", str),
    "disable_radix_cache": (r"(True|False)", str),
    # the placement settings beyond TP / PP (server_args.py ServerArgs fields, as its repr prints them:
    # "ep_size=1, moe_a2a_backend='none', ... ep_num_redundant_experts=0")
    "ep_size": (r"(\d+)", int), "moe_a2a_backend": (r"('[^']*'|None)", str),
    "ep_num_redundant_experts": (r"(\d+)", int), "enable_dp_lm_head": (r"(True|False)", str),
    "moe_dense_tp_size": (r"(\d+|None)", int), "mm_enable_dp_encoder": (r"(True|False)", str),
}


# no GPU holds 100,000 GiB and kvplan counts tokens to 2^40 (vllm_log's limits): a figure past them was edited
MOST_GIB = 100_000.0
MOST_COUNT = 2**40


class _NotAFigure(ValueError):
    """A figure SGLang prints as a number that does not read as one: (what it is, the text)."""


def _gib(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:  # "1.2.3" where the pattern allows dots
        raise _NotAFigure(what, text) from None
    if not math.isfinite(value) or abs(value) > MOST_GIB:  # hundreds of digits read as infinity
        raise _NotAFigure(what, text)
    return value


def _count(text: str, what: str) -> int:
    if len(text.lstrip("-")) > 13 or int(text) > MOST_COUNT:  # checked before int() meets thousands of digits
        raise _NotAFigure(what, text)
    return int(text)


@dataclass
class SglangLog:
    path: str
    args: dict = field(default_factory=dict)  # server_args fields as read (None where the log says None)
    ranks: set = field(default_factory=set)
    init_usage_gib: float | None = None
    load_begin_avail_gib: float | None = None
    load_end_avail_gib: float | None = None
    load_usage_gib: float | None = None
    architecture: str | None = None
    # the KV lines of one rank, in order: (#tokens or None, K GiB, V GiB, KV GiB); a hybrid pool logs its
    # sliding pool's, then its full pool's (0.5.9), or "Full " then "SWA " (0.5.23)
    kv_lines: list = field(default_factory=list)
    full_kv_index: int | None = None  # the line labelled "Full KV Cache" (0.5.23), where one is
    full_tokens: int | None = None
    swa_tokens: int | None = None
    pool_end_avail_gib: float | None = None
    mamba_cache_size: int | None = None  # "Mamba Cache is allocated. max_mamba_cache_size: N, ..."
    conv_state_gib: float | None = None
    ssm_state_gib: float | None = None
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    head_only_bytes: int | None = None
    # every rank's free memory before and after the load: SGLang sizes from the smallest (min over ranks)
    begin_by_rank: dict = field(default_factory=dict)
    end_by_rank: dict = field(default_factory=dict)  # rank -> (avail, usage or None)

    @property
    def tp(self) -> int | None:
        return self.args.get("tp_size") or (max(self.ranks) + 1 if self.ranks else None)

    @property
    def min_load_end_avail_gib(self) -> float | None:
        """A: the smallest rank's free memory after the load (the profile takes the minimum over ranks)."""
        return min(a for a, _ in self.end_by_rank.values()) if self.end_by_rank else self.load_end_avail_gib

    @property
    def min_load_begin_avail_gib(self) -> float | None:
        """T0 read from 'Load weight begin': the smallest rank's."""
        return min(self.begin_by_rank.values()) if self.begin_by_rank else self.load_begin_avail_gib

    @property
    def min_t0_from_usage_gib(self) -> float | None:
        """T0 as each rank's free memory after the load plus what the load took, the smallest."""
        values = [a + u for a, u in self.end_by_rank.values() if u is not None]
        return min(values) if values else None

    @property
    def full_kv(self) -> tuple | None:
        """The full pool's KV line: the one labelled "Full", else the last one a rank prints."""
        if self.full_kv_index is not None:
            return self.kv_lines[self.full_kv_index]
        return self.kv_lines[-1] if self.kv_lines else None

    @property
    def pool_tokens(self) -> int | None:
        """The pool's tokens (the full layers' in a hybrid pool): the max_total line's, else the KV line's."""
        if self.max_total_num_tokens is not None:
            return self.max_total_num_tokens
        return self.full_kv[0] if self.full_kv else None

    @property
    def read_nothing(self) -> bool:
        return self.load_end_avail_gib is None and self.pool_tokens is None and not self.kv_lines


def is_sglang(text: str) -> bool:
    """Whether a log is SGLang's (its memory lines or its ServerArgs), not vLLM's."""
    return bool(re.search(r"KV Cache is allocated\.|Load weight end\. |server_args=ServerArgs\(|"
                          r"max_total_num_tokens=\d+", text))


def parse(text: str, path: str = "-") -> SglangLog:
    log = SglangLog(path)
    seen: dict[str, int] = {}  # figure -> the rank it was read from (rank 0 wins)
    kv_rank = None
    for line in text.splitlines():
        rank_match = _RANK.search(line)
        rank = _count(rank_match.group(1), "the TP rank") if rank_match else 0
        if rank_match:
            log.ranks.add(rank)
        if "server_args=ServerArgs(" in line and not log.args:
            log.args = _server_args(line)
            continue
        for name, pattern in _PATTERNS.items():
            m = pattern.search(line)
            if m is not None and name == "load_begin_avail_gib":
                log.begin_by_rank.setdefault(rank, _gib(m.group(1), "'Load weight begin' avail mem"))
            elif m is not None and name == "load_end":
                log.end_by_rank.setdefault(rank, (_gib(m.group(2), "'Load weight end' avail mem"),
                                                  _gib(m.group(3), "'Load weight end' mem usage") if m.group(3) else None))
            if m is not None and name == "kv":  # every KV line of the lowest rank
                if kv_rank is None or rank < kv_rank:
                    kv_rank, log.kv_lines, log.full_kv_index = rank, [], None
                if rank == kv_rank:
                    if "Full KV Cache is allocated" in line:
                        log.full_kv_index = len(log.kv_lines)
                    log.kv_lines.append(_kv(m))
                continue
            if m is None or (name in seen and seen[name] <= rank):
                continue
            seen[name] = rank
            _store(log, name, m)
    return log


def _store(log: SglangLog, name: str, m: re.Match) -> None:
    if name in ("init_usage_gib", "load_begin_avail_gib", "pool_end_avail_gib"):
        setattr(log, name, _gib(m.group(1), name))
    elif name == "load_end":
        log.architecture, log.load_end_avail_gib = m.group(1), _gib(m.group(2), "load_end_avail_gib")
        log.load_usage_gib = _gib(m.group(3), "load_usage_gib") if m.group(3) else None
    elif name == "swa":
        log.full_tokens, log.swa_tokens = _count(m.group(1), "full_layer_tokens"), _count(m.group(2), "swa_layer_tokens")
    elif name == "mamba":
        log.mamba_cache_size, log.conv_state_gib, log.ssm_state_gib = (
            _count(m.group(1), "max_mamba_cache_size"), _gib(m.group(2), "conv_state size"),
            _gib(m.group(3), "ssm_state size"))
    elif name == "max_total":
        log.max_total_num_tokens, log.max_running_requests, log.context_len = (
            _count(v, k) for v, k in zip(m.groups(), ("max_total_num_tokens", "max_running_requests", "context_len")))


def _kv(m: re.Match) -> tuple:
    tokens = _count(m.group(1), "the KV line's #tokens") if m.group(1) else None
    if m.group(4) is not None:
        return tokens, None, None, _gib(m.group(4), "the KV line's KV size")
    return tokens, _gib(m.group(2), "the KV line's K size"), _gib(m.group(3), "the KV line's V size"), None


def _server_args(line: str) -> dict:
    out = {}
    for name, (value, kind) in _ARGS.items():
        m = re.search(r"[(, ]" + name + "=" + value, line)
        if m is None:
            continue
        raw = m.group(1)
        if raw == "None":
            out[name] = None
        elif kind is str:
            out[name] = raw.strip("'")
        elif kind is int:
            out[name] = _count(raw, f"server_args {name}")
        else:
            out[name] = _gib(raw, f"server_args {name}")  # mem_fraction_static
    return out


def sniff(path: str) -> bool:
    """Whether the file at path reads as an SGLang log (False when it cannot be read: the vLLM reader then
    says why)."""
    from ..errors import KvplanError
    from .vllm_log import read_startup

    try:
        return is_sglang(read_startup(path)[0])
    except KvplanError:
        return False


def read(path: str) -> SglangLog:
    from .vllm_log import LOG_HEAD_BYTES, read_startup

    from ..errors import UsageError

    text, size = read_startup(path)
    try:
        log = parse(text, path)
    except _NotAFigure as exc:
        what, figure = exc.args
        shown = figure if len(figure) <= 40 else f"{figure[:20]}... ({len(figure):,} characters)"
        raise UsageError(f"{path}: {what} reads {shown!r}, not a figure SGLang prints",
                         "the log was edited or cut mid-line: give the server's log as it printed it") from None
    if size > LOG_HEAD_BYTES:
        log.head_only_bytes = LOG_HEAD_BYTES
    return log


__all__ = ["SglangLog", "is_sglang", "parse", "read", "sniff"]
