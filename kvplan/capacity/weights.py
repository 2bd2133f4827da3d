"""Weight bytes on one GPU of a (tp, pp) replica, split by role.

TP: every tensor is divided across the ranks (rounded up), except the roles in
REPLICATED (norms, MoE routers), which each rank holds whole; embeddings and
lm_head are vocabulary-parallel (vLLM's VocabParallelEmbedding / ParallelLMHead).
Tensors vLLM holds otherwise than their role (Weights.against_role, read by
name: MLA's q_a_proj / kv_a_proj_with_mqa, the DSA indexer's wq_b / wk /
weights_proj, o_proj biases and one-element per-tensor / KV scales whole;
MiniMax-M2's q/k norms split) follow vLLM.
PP: a decoder layer's tensors sit on the stage that runs the layer (the split
of capacity/shard.stage_bounds); the embeddings, vision tower and anything
outside the layers sit on the first stage, the final norm and lm_head on the
last. Tied embeddings are held on the last stage too when pp > 1 (vLLM builds
embed_tokens on the first rank and, when tie_word_embeddings, on the last).

MTP: a checkpoint's multi-token-prediction module (decoder layers past
num_layers, as DeepSeek-V3's model.layers.61, or tensors in an `mtp` namespace,
role "mtp") is not loaded by a serving engine unless MTP speculative decoding
is on: vLLM's main models skip it when loading (deepseek_v2.py load_weights:
get_spec_layer_idx_from_weight_name; qwen3_next.py: the `mtp.` prefix mapped to
None) and load it in a separate draft model (deepseek_mtp.py, qwen3_next_mtp.py).
So served_bytes and stage_weight_bytes leave it out unless include_mtp; a
checkpoint total without a tensor table carries the module's estimate from the
config (Weights.mtp_estimated_bytes, kvplan.weights.mtp) and leaves that out.

A record with no tensor table (a given size, an index total, the config
estimate) is split evenly: (total - MTP estimate) / (tp x pp), rounded up;
for the config estimate under TP the bytes each TP rank holds whole
(Weights.replicated_bytes: norms, routers, RowParallelLinear biases,
per-tensor and KV scales, from the family's per-module count) are divided by
pp only.
"""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError
from ..weights.estimate import estimated, given
from ..weights.record import NO_LAYER, REPLICATED, Weights
from .shard import check_pp, stage_bounds


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def is_mtp_part(role: str, layer: int, num_layers: int) -> bool:
    return role == "mtp" or layer >= num_layers


def mtp_bytes(weights: Weights, num_layers: int) -> int:
    """Bytes of the checkpoint's multi-token-prediction module: the tensor table's, else the estimate a
    total without one carries (kvplan.weights.mtp); 0 when it has none."""
    if not weights.parts:
        return weights.mtp_estimated_bytes
    return sum(n for role, layer, n in weights.parts if is_mtp_part(role, layer, num_layers))


def require_known(weights: Weights, name: str = "") -> None:
    """A GPU's pool is its memory less the weights: refuse to plan one with weights nobody counted (a family
    whose parameter count kvplan lacks, or a config without a field the count needs)."""
    if weights.total_bytes <= 0 and weights.source == "estimated from config":
        why = next((n for n in weights.notes if n.startswith(("parameters not counted", "weights not sized"))), "")
        raise UsageError(f"the weights of {name or weights.origin} are not known from its config"
                         + (f": {why.split('; give')[0].removeprefix('weights not sized from the config: ')}"
                            if why else ""),
                         "give them with --weights: a size such as 300GB, or the checkpoint's folder")


def served_bytes(weights: Weights, num_layers: int, include_mtp: bool = False) -> int:
    """The bytes a serving engine loads: the checkpoint less its MTP module unless include_mtp."""
    return weights.total_bytes - (0 if include_mtp else mtp_bytes(weights, num_layers))


def stage_weight_bytes(weights: Weights, num_layers: int, tp: int = 1, pp: int = 1,
                       include_mtp: bool = False, bounds: list[tuple[int, int]] | None = None) -> list[int]:
    """Weight bytes on one GPU of each pipeline stage (the MTP module, when loaded, on the last). bounds: the
    stages' layer ranges where the engine splits otherwise than vLLM (kvplan.capacity.shard.stage_bounds)."""
    check_pp(num_layers, pp)  # first: the even split below is a list of pp figures (--pp 10^8 took 4.7 GB)
    if not weights.parts:  # split evenly, but what each TP rank holds whole (Weights.replicated_bytes) only by stage
        # (read only under TP: an unquantized config counts it on first use)
        mtp, whole = weights.mtp_estimated_bytes, weights.replicated_bytes if tp > 1 else 0
        out = [_ceil_div(weights.total_bytes - mtp - whole, tp * pp) + _ceil_div(whole, pp)] * pp
        if include_mtp and mtp:
            out[-1] += _ceil_div(mtp, tp)
        return out
    bounds = bounds or stage_bounds(num_layers, pp)
    stage_of_layer = {}
    for s, (start, end) in enumerate(bounds):
        for i in range(start, end):
            stage_of_layer[i] = s
    out = [0] * pp
    against = {(role, layer): n for role, layer, n in weights.against_role}
    for role, layer, n in weights.parts:
        mtp = is_mtp_part(role, layer, num_layers)
        if mtp and not include_mtp:
            continue
        other = against.get((role, layer), 0)  # held the other way (Weights.against_role)
        whole = n - other if role in REPLICATED else other
        per_rank = whole + _ceil_div(n - whole, tp)
        if mtp:
            stage = pp - 1
        elif layer == NO_LAYER:
            stage = pp - 1 if role in ("lm_head", "norms") else 0
            if role == "embeddings" and weights.tied_embeddings and pp > 1:
                out[pp - 1] += per_rank
        else:
            stage = stage_of_layer[layer]
        out[stage] += per_rank
    return out


def plan_weights(model: ModelSpec, deployment) -> Weights:
    """The record a deployment plans with: its own, a size it was given, or the config estimate."""
    if deployment is not None and deployment.weights is not None:
        return deployment.weights
    if deployment is not None and deployment.weight_bytes is not None:
        return given(deployment.weight_bytes)
    return estimated(model)
