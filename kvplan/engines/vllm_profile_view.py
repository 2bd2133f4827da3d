"""vLLM's profile predicted from the GPU (kvplan.engines.vllm_profile.ProfileEstimate) as a table, a JSON
object and short notes: how `kvplan estimate --engine vllm` and `kvplan calibrate` show it.

Nothing is computed here: every figure is a ProfileEstimate term (ProfileEstimate.lines() keeps the one-line
form, which engine.notes and calibrate's figures[].explanation hold in the JSON).
"""

from __future__ import annotations

from typing import NamedTuple

from ..render import Table
from ..units import GIB


class ProfileRow(NamedTuple):
    key: str  # stable: requested, weights, activation, non_torch, kept, cuda_graphs, available, pool
    term: str
    bytes: int
    source: str  # what it is / where kvplan's figure comes from, short


def _gib(value: int) -> str:
    return f"{value / GIB:.2f}"


def graphs_row(est) -> ProfileRow:
    """The CUDA-graph row: the estimate vLLM subtracts, or under 0.34's extensible cache the captured graphs it
    counts as resident in the pool after warmup (not subtracted from the available figure)."""
    if est.cuda_graph_bytes:
        return ProfileRow("cuda_graphs", "CUDA graphs (subtracted)", est.cuda_graph_bytes,
                          f"estimate vLLM subtracts ({est.cuda_graph_from})")
    captured = est.extensible.captured_graph_bytes if est.extensible is not None else 0
    if captured:
        return ProfileRow("cuda_graphs", "CUDA graphs (not subtracted)", captured,
                          "estimate, modelled; not subtracted: the extensible cache skips it "
                          "(profile_cudagraph_memory returns 0); stands for the graphs resident in the pool after warmup")
    return ProfileRow("cuda_graphs", "CUDA graphs", 0, "none subtracted by this release or mode")


def profile_rows(est) -> list[ProfileRow]:
    """The profile's terms in the order vLLM subtracts them, then the available figure (and the pool after
    warmup under 0.34's extensible KV cache)."""
    rows = [
        ProfileRow("requested", "requested (total x utilization)", est.requested_bytes,
                   f"total {_gib(est.total_bytes)} GiB x {est.gpu_memory_utilization:g}"),
        ProfileRow("weights", "weights", est.weight_bytes, est.weights_from),
        ProfileRow("activation", "peak activation", est.activation_bytes,
                   f"{est.activation_from}; {est.profiled_tokens:,} profiled tokens; heuristic"),
        ProfileRow("non_torch", "non-torch", est.non_torch_bytes,
                   "CUDA context, NCCL and all-reduce buffers: per-release constant + TP term, empirical"),
    ]
    if est.buffer_bytes:
        rows.append(ProfileRow("kept", "kept after the profile", est.buffer_bytes, est.buffers_from))
    rows.append(graphs_row(est))
    ext = est.extensible
    rows.append(ProfileRow("available", "available", est.available_bytes,
                           "requested - the terms above: 'Available KV cache memory'"
                           + ("; the capacity the extensible cache reserves" if ext is not None else "; the KV pool")))
    if ext is not None:
        rows.append(ProfileRow("pool", "KV pool after warmup", est.pool_bytes,
                               f"min(requested, total - {_gib(ext.pre_snapshot_bytes)} in use before the first "
                               f"snapshot - margin {_gib(ext.margin_bytes)}) - resident {_gib(ext.resident_bytes)} "
                               f"- peak {_gib(ext.transient_peak_bytes)}; at most available; modelled"))
    return rows


def summary(est) -> str:
    """The profile in one short line, GiB (an error message): requested - each term subtracted = available."""
    rows = profile_rows(est)
    subtracted = [r for r in rows if r.key in ("weights", "activation", "non_torch", "kept")
                  or (r.key == "cuda_graphs" and est.cuda_graph_bytes)]
    line = (f"requested {_gib(est.requested_bytes)} GiB (total {_gib(est.total_bytes)} GiB x "
            f"{est.gpu_memory_utilization:g})" + "".join(f" - {r.term} {_gib(r.bytes)}" for r in subtracted)
            + f" = available {_gib(est.available_bytes)} GiB")
    if est.extensible is not None:
        line += f"; KV pool after warmup {_gib(est.pool_bytes)} GiB"
    return line


def profile_json(est) -> dict:
    """engine.profile (docs/json.md): the terms in bytes and where each comes from."""
    ext = est.extensible
    return {
        "total_bytes": est.total_bytes,
        "gpu_memory_utilization": est.gpu_memory_utilization,
        "requested_bytes": est.requested_bytes,
        "weight_bytes": est.weight_bytes,
        "weights_from": est.weights_from,
        "activation_bytes": est.activation_bytes,
        "activation_from": est.activation_from,
        "profiled_tokens": est.profiled_tokens,
        "non_torch_bytes": est.non_torch_bytes,
        "kept_bytes": est.buffer_bytes,
        "kept_from": est.buffers_from,
        "cuda_graph_bytes": est.cuda_graph_bytes,
        "cuda_graph_from": est.cuda_graph_from,
        "available_bytes": est.available_bytes,
        "pool_bytes": est.pool_bytes,
        "extensible": None if ext is None else {
            "pre_snapshot_bytes": ext.pre_snapshot_bytes, "margin_bytes": ext.margin_bytes,
            "resident_bytes": ext.resident_bytes, "captured_graph_bytes": ext.captured_graph_bytes,
            "transient_peak_bytes": ext.transient_peak_bytes, "measured_pool_bytes": ext.pool_bytes},
        "notes": list(est.notes),
    }


def profile_table(title: str, runs: list[tuple[str, object]]) -> Table:
    """One table of the profile's terms, GiB: one column per run ((label, ProfileEstimate)); a source that
    differs between runs is given per run."""
    keyed = [{r.key: r for r in profile_rows(est)} for _, est in runs]
    order = list(dict.fromkeys(key for rows in keyed for key in rows))
    body = []
    for key in order:
        present = [rows.get(key) for rows in keyed]
        first = next(r for r in present if r is not None)
        sources = [r.source for r in present if r is not None]
        if len(set(sources)) == 1:
            source = sources[0]
        else:
            source = "; ".join(f"{label}: {r.source}" for (label, _), r in zip(runs, present) if r is not None)
        body.append([first.term, *("" if r is None else _gib(r.bytes) for r in present), source])
    labels = [label for label, _ in runs] if len(runs) > 1 else ["GiB"]
    return Table(title, ["term", *labels, "what it is / source"], body, set(range(1, len(runs) + 1)))


def short_notes(est, lead: str = "KV memory predicted from the GPU by vLLM's profile (table above)") -> list[str]:
    """The caveats that go with the table, each on its own line: which terms are fitted, and the profile's own
    notes (ProfileEstimate.notes)."""
    lines = [f"{lead}: peak activation and non-torch are fitted heuristics, the CUDA-graph estimate empirical"]
    if est.extensible is not None:
        lines.append("pool after warmup: vLLM 0.34's extensible KV cache, predicted from these terms; the sizing "
                     "warmup's peak, torch's reserve growth and page rounding are not modelled; no 0.34 log checks it")
    from .vllm_profile import EXTENSIBLE_GRAPHS_NOTE

    # the CUDA-graph row says what the extensible cache's graph note says
    return lines + [n for n in est.notes if not (est.extensible is not None and n.startswith(EXTENSIBLE_GRAPHS_NOTE))]


__all__ = ["ProfileRow", "profile_rows", "summary", "profile_json", "profile_table", "short_notes", "graphs_row"]
