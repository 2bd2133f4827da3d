"""Weight bytes on one GPU of a (tp, pp) replica, split by role.

TP: every tensor is divided across the ranks (rounded up), except the roles in
REPLICATED (norms, MoE routers), which each rank holds whole; embeddings and
lm_head are vocabulary-parallel (vLLM's VocabParallelEmbedding / ParallelLMHead).
Tensors vLLM holds otherwise than their role (Weights.against_role, read by
name: MLA's q_a_proj / kv_a_proj_with_mqa, the DSA indexer's wq_b / wk /
weights_proj, o_proj biases, one-element per-tensor / KV scales and the
per-output-row scales of row-parallel modules (roles.is_row_parallel) whole;
MiniMax-M2's q/k norms split; and, where kvplan has the family's per-module
table, what that table holds whole or splits otherwise than the name's role:
roles.table_whole_bytes) follow vLLM.
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
(Weights.replicated_bytes: norms, routers, RowParallelLinear biases and
per-row scales, per-tensor and KV scales, from the family's per-module count) are divided by
pp only, and a vision tower the estimate counts (Weights.vision: configs/vision_towers.py) sits on the first
stage, its whole part whole and the rest over the TP ranks.

KV heads: vLLM builds k_proj / v_proj (or a fused qkv) as a QKVParallelLinear
(0.11.0 to 0.34.0 layers/linear.py QKVParallelLinear.__init__: `if tp_size >=
total_num_kv_heads: num_kv_heads = 1; num_kv_head_replicas = tp_size /
total_num_kv_heads`), so under TP above a model's KV heads each rank holds one
whole KV head of keys and values, with its bias and the scales and zero points
that follow the output rows: 1 / kv_heads of that share, not 1 / tp. The
record's kv_parts (Weights.kv_split: a tensor table's k/v tensors and the KV
rows of fused qkv tensors, or the config estimate's) say which bytes;
kv_held applies the rule, for kvplan's plan and for vLLM's profile alike
(engines.vllm_load.config_weights_per_gpu). Where they are not known (no
per-module table of the family, a GGUF, a given size) kv_note says so.
"""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError
from ..weights.estimate import estimated, given
from ..weights.record import NO_LAYER, REPLICATED, Weights
from .placement import VLLM_SPLIT, Placement
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


def vision_bytes(weights: Weights) -> int:
    """Bytes of the image encoder (vision tower and projector): the tensor table's "vision" parts, else the config
    estimate's (Weights.vision). A decode step never reads them: the tower runs once per image, at prefill."""
    if not weights.parts:
        return weights.vision[0]
    return sum(n for role, _, n in weights.parts if role == "vision")


def vision_whole_bytes(weights: Weights) -> int:
    """Of the image encoder's bytes, those each TP rank holds whole in kvplan's (vLLM 0.34's "weights") split: the
    tensor table's vision parts held against their role, else the config estimate's whole part (Weights.vision)."""
    if weights.parts:
        return sum(n for role, layer, n in weights.against_role if role == "vision" and layer == NO_LAYER)
    return weights.vision[1]


def vision_split_bytes(weights: Weights, tp: int) -> int:
    """The image encoder's bytes on one GPU of the first stage as stage_weight_bytes splits it over tp: what each TP
    rank holds whole, and the rest over tp (SGLang's and vLLM's whole-tower flags are measured against it)."""
    total = vision_bytes(weights)
    if tp <= 1:
        return total
    whole = vision_whole_bytes(weights)
    return whole + _ceil_div(total - whole, tp)


def decode_read_bytes(weights: Weights, num_layers: int) -> int:
    """The weights a decode step reads (before MoE routing): what the engine loads less the image encoder."""
    return served_bytes(weights, num_layers) - vision_bytes(weights)


def require_known(weights: Weights, name: str = "") -> None:
    """A GPU's pool is its memory less the weights: refuse to plan one with weights nobody counted (a family
    whose parameter count kvplan lacks, or a config without a field the count needs)."""
    if not weights.known:
        why = next((n for n in weights.notes if n.startswith(("parameters not counted", "weights not sized"))), "")
        raise UsageError(f"the weights of {name or weights.origin} are not known from its config"
                         + (f": {why.split('; give')[0].removeprefix('weights not sized from the config: ')}"
                            if why else ""),
                         "give them with --weights: a size such as 300GB, or the checkpoint's folder")


def kv_held(kv, tp: int, pp: int = 1) -> tuple[int, int]:
    """(of the KV shares kv, (bytes, KV heads) pairs, the bytes vLLM holds one whole KV head a rank of (TP above
    their KV heads), the bytes one GPU of a (tp, pp) replica holds of those: 1 / heads of each, spread over the
    stages). vLLM 0.11.0-0.34.0 layers/linear.py QKVParallelLinear: num_kv_heads = 1 and num_kv_head_replicas =
    tp / total_num_kv_heads when tp >= total_num_kv_heads (at tp == heads that is the even split, so it is left
    to it)."""
    taken = held = 0
    for n, heads in kv:
        if tp > heads > 0:
            taken += n
            held += _ceil_div(n, heads * pp)
    return taken, held


def kv_note(weights: Weights, model: ModelSpec, tp: int) -> str | None:
    """A line saying that KV-head replication is not counted, where TP exceeds some layer's KV heads and the
    record does not know which bytes are keys and values (no per-module table of the family, a GGUF, a size
    given); None otherwise."""
    if tp <= 1:
        return None
    kv = sorted({c.heads for layer, _ in model.groups for c in layer.caches if c.kind == "attention" and c.heads})
    fewer = [h for h in kv if h < tp]
    if not fewer or weights.kv_parts is not None:
        return None
    if weights.source == "given":
        why = "a size given"
    elif weights.source == "gguf":
        why = "a GGUF tensor table, whose names kvplan does not match for this"
    elif model.weight_kv_bytes is None:
        why = f"no per-module table of model_type {model.model_type!r} that adds up to its parameter count"
    elif weights.source in ("bundled", "index"):
        why = ("a checkpoint total without a tensor table, not matched to the config estimate" if not weights.parts
               else "a role split without tensor names")
    else:
        why = "tensor names that kvplan's per-module table of the family does not give"
    heads = f"{fewer[0]} KV head" + ("s" if fewer[0] != 1 else "")
    return (f"KV-head replication not counted: at TP {tp}, above the model's {heads}, vLLM's QKVParallelLinear "
            "gives every rank one whole KV head of the k/v projections (1 / KV heads of them, not 1 / TP), but kvplan "
            f"does not know those bytes here ({why}), so they are split evenly and the weights a GPU are understated")


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
        kv = (weights.kv_parts or ()) if tp > 1 else ()  # read only under TP, as replicated_bytes
        taken, held = kv_held(((n, heads) for _, _, n, heads in kv), tp, pp)
        # the config estimate's vision tower (in total, its whole part in replicated_bytes): on the first stage
        vision, vision_whole = weights.vision[0], weights.vision[1] if tp > 1 else 0
        out = [_ceil_div(weights.total_bytes - mtp - whole - taken - (vision - vision_whole), tp * pp)
               + _ceil_div(whole - vision_whole, pp) + held] * pp
        out[0] += vision_whole + _ceil_div(vision - vision_whole, tp)
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
    kv: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for role, layer, n, heads in (weights.kv_parts or ()) if tp > 1 else ():
        kv.setdefault((role, layer), []).append((n, heads))
    for role, layer, n in weights.parts:
        mtp = is_mtp_part(role, layer, num_layers)
        if mtp and not include_mtp:
            continue
        other = against.get((role, layer), 0)  # held the other way (Weights.against_role)
        whole = n - other if role in REPLICATED else other
        taken, held = kv_held(kv.get((role, layer), ()), tp)  # one whole KV head a rank above the KV heads
        per_rank = whole + held + _ceil_div(n - whole - taken, tp)
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


def engine_stage_delta(model: ModelSpec, weights: Weights, tp: int, pp: int = 1, dp: int = 1,
                       placement: Placement = VLLM_SPLIT) -> list[int] | None:
    """Bytes one GPU of each pipeline stage holds beyond stage_weight_bytes' split (vLLM 0.34's) where the plan
    follows another engine's placement (Deployment.placement, capacity/placement.py; the default: None). Under
    SGLang (engines/sglang_placement.py) the vision tower as SGLang 0.5.23 splits it, on the first stage, the figure
    SGLang's report adds (engines/sglang_report.record_tower -> sglang_tower.py tower_delta; whole under
    --mm-enable-dp-encoder; under attention DP the tower is placed by capacity/experts.py placement_saving instead);
    under vLLM's --mm-encoder-tp-mode data the tower whole on every GPU (engines/vllm_encoder_dp.py EncoderData).
    None where nothing differs."""
    got = placement.stage_delta(model, weights, tp, pp, dp)
    return got if got is not None and any(got) else None


def plan_weights(model: ModelSpec, deployment) -> Weights:
    """The record a deployment plans with: its own, a size it was given, or the config estimate."""
    if deployment is not None and deployment.weights is not None:
        return deployment.weights
    if deployment is not None and deployment.weight_bytes is not None:
        return given(deployment.weight_bytes)
    return estimated(model)
