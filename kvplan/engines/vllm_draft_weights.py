"""The drafter's weights under speculative decoding: what vLLM's load adds beside the target model, on
each GPU of the last pipeline stage (the drafter exists only there).

vLLM loads the drafter inside the same memory profiler as the target (gpu_model_runner.load_model:
`self.drafter.load_model(self.model)` within `DeviceMemoryProfiler`), so "Model loading took" and the
profile's weights term include it; a tensor the proposer replaces by the target's is freed before the
profile. What each method keeps, read in the proposer (0.11.0 v1/spec_decode/eagle.py
EagleProposer.load_model; 0.11.1-0.19 eagle.py and 0.20+ llm_base_proposer.py `_maybe_share_embeddings` /
`_maybe_share_lm_head`; 0.15+ draft_model.py):

- MTP (kvplan.weights.mtp gives the module's layout): the module loads whole, then
  - its vocabulary embedding is replaced by the target's when PP = 1 (0.11.0: when the shapes match, as
    an MTP module's do; 0.11.1+: "Detected MTP model"); with PP > 1 it stays, loaded separately;
  - an `lm_head` of the module itself (the fc layout: Qwen3-Next, Qwen3.5; MiMo-7B's mimo_mtp.py MiMoMTP and
    ERNIE-4.5 MoE's ernie_mtp.py ErnieMTP, which declare no has_own_lm_head) is replaced in every release
    (0.11.0 sets it to the target's for every method but eagle3; 0.34.0 v1/worker/gpu/spec_decode/eagle/
    utils.py share_target_lm_head shares unless the draft declares its own);
  - the shared_head layout's per-layer `shared_head.head` (DeepSeek, GLM) stays up to 0.15.0 and is
    replaced from 0.16.0 ("Shared target model lm_head with MTP shared_head.head"; HEAD_SHARED_FROM);
  - Step-3.5's per-layer `shared_head.head` stays (OWN_HEADS): 0.33.0 v1/spec_decode/step3p5.py
    Step3p5MTPProposer._maybe_share_lm_head shares nothing; 0.34.0 Step3p5MTP declares has_own_lm_head and has no
    top-level lm_head, so eagle/utils.py _should_share keeps it. Its module is sized from the config only (the
    checkpoint names the head shared_head.output, a role the tensor table does not read).
  Under TP the decoder layer, `mtp.fc`, the embedding and the head shard like the target's
  (ColumnParallelLinear, VocabParallelEmbedding, ParallelLMHead); `eh_proj`, MiMo's `input_proj` and
  ERNIE's `mtp_linear_proj` (nn.Linear, unquantized) and the norms are whole on every rank, and so is what the
  target's decoder layer holds whole: DeepSeek's MTP layer is a DeepseekV2DecoderLayer (0.34.0 deepseek_mtp.py
  DeepSeekMultiTokenPredictorLayer.mtp_block), whose q_a_proj / kv_a_proj_with_mqa, norms and router are whole
  (a tensor table's Weights.against_role; from the config, MtpModule.decoder_whole_bytes).
- draft_model (0.15+): draft_model.py overrides both sharing methods to do nothing: the draft
  checkpoint's weights, sharded over the target's TP.
- EAGLE / EAGLE-3 heads: the head's own tensors, less the embedding and head vLLM shares, which from
  0.11.1 depends on whether the head's checkpoint holds them and whether they equal the target's
  (torch.equal): with the head's safetensors beside its config they are counted whole, an upper bound;
  from a config alone they are not modelled.

Not here: the top-k indices buffer each DeepSeek-V3.2 / GLM-5 MTP layer allocates of its own (not shared with
the target's; max_num_batched_tokens x index_topk x 4 B), a load buffer beside the weights:
vllm_load_buffers.mtp_topk_bytes. Not modelled: LongCat-Flash's MTP module, the drafter's own CUDA graphs and
profiling forward.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..capacity.weights import is_mtp_part
from ..core.model import ModelSpec
from ..weights.mtp import LAYOUTS, PROJ_WHOLE, mtp_module
from ..weights.record import REPLICATED, Weights
from ..units import cdiv
from .vllm_release import at_least

HEAD_SHARED_FROM = (0, 16, 0)  # the shared_head layout's per-layer head replaced by the target's lm_head
OWN_HEADS = frozenset({"step3p5"})  # layouts whose per-layer heads vLLM keeps (modelled from 0.33.0)


@dataclass(frozen=True)
class DrafterWeights:
    bytes_per_gpu: int | None  # on each GPU of the last stage; None: not modelled
    how: str
    mtp: bool = False  # the target's own MTP layers (their buffers: vllm_load_buffers.mtp_topk_bytes)


def mtp_drafter(model: ModelSpec, raw: dict | None, record: Weights | None, *, tp: int = 1, pp: int = 1,
                release: str = "0.33.0", shares: tuple[bool, bool, str] | None = None) -> DrafterWeights:
    """The MTP module's weights vLLM `release` keeps on each last-stage GPU: from the checkpoint's tensor
    table where it has the module, else estimated from the config (kvplan.weights.mtp). shares: another
    engine's (embedding shared, head shared, why) in place of vLLM's rules."""
    layout = LAYOUTS.get(model.model_type, (None,))[0]
    if layout is None:
        return DrafterWeights(None, f"the weights of {model.model_type}'s MTP module are not modelled", True)
    tp = max(tp, 1)
    if shares is None:
        embedding_shared = pp == 1
        head_shared = layout not in OWN_HEADS and (layout != "shared_head" or at_least(release, HEAD_SHARED_FROM))
        kept = "the embedding and head" if embedding_shared and head_shared else (
            "the head" if head_shared else "the embedding" if embedding_shared else "nothing")
        rule = f"vLLM {release} shares {kept} with the target"
    else:
        embedding_shared, head_shared, rule = shares
    if record is not None and record.parts and layout not in OWN_HEADS:
        table = [(role, layer, n) for role, layer, n in _mtp_table(record, model.num_layers)
                 if not (layout == "mimo_v2" and layer > 0)]  # mimo_v2_mtp.py loads model.mtp.layers.0 only
        if table:
            total = 0
            # tensors held otherwise than their role (Weights.against_role): an MTP decoder layer's MLA
            # q_a_proj / kv_a_proj_with_mqa and indexer, whole on every rank as in the target's layers
            against = dict(((role, layer), n) for role, layer, n in record.against_role)
            for role, layer, n in table:
                if (role == "embeddings" and embedding_shared) or (role == "lm_head" and head_shared):
                    continue
                other = against.get((role, layer), 0)
                whole = n - other if _whole(role, layout) else other
                total += whole + cdiv(n - whole, tp)
            return DrafterWeights(total, f"MTP module from the checkpoint's tensor table; {rule}", True)
    # MiMo-V2: mimo_v2_mtp.py MiMoV2MultiTokenPredictor builds one layer (num_mtp_layers = 1), whatever the config
    module = mtp_module(model, raw, 1 if layout == "mimo_v2" else None)
    if module is None:
        return DrafterWeights(None, f"{model.name}'s MTP module could not be sized from its config", True)
    total = (cdiv(module.decoder_bytes - module.decoder_whole_bytes, tp) + module.decoder_whole_bytes
             + module.norm_bytes + module.whole_bytes)
    total += module.proj_bytes if layout in PROJ_WHOLE else cdiv(module.proj_bytes, tp)
    if not embedding_shared and module.copy_bytes:
        total += cdiv(module.copy_bytes, tp)  # one embedding for the predictor, loaded apart from the target's
    if not head_shared:
        total += cdiv(module.layers * module.copy_bytes, tp)  # shared_head.head per layer
    whole = (f"; {module.decoder_whole_bytes:,} B of the decoder layer (its norms, router and MLA latent "
             "down-projections) whole on every TP rank" if module.decoder_whole_bytes and tp > 1 else "")
    return DrafterWeights(total, f"{module.how}{whole}; {rule}", True)


def _mtp_table(record: Weights, num_layers: int) -> list[tuple[str, int, int]]:
    """The MTP module's parts: a namespaced module ("mtp" parts) by its roles inside (record.mtp_parts) where
    the record carries them for every "mtp" byte, else as one "mtp" role (split under TP)."""
    table = [part for part in record.parts if is_mtp_part(part[0], part[1], num_layers)]
    namespaced = sum(n for role, _, n in table if role == "mtp")
    if namespaced and sum(n for *_, n in record.mtp_parts) == namespaced:
        table = [part for part in table if part[0] != "mtp"] + list(record.mtp_parts)
    return table


def _whole(role: str, layout: str) -> bool:
    """Whether vLLM 0.34 keeps an MTP tensor of `role` whole on every TP rank: norms (RMSNorm) and routers
    (GateLinear) always; Nemotron-H's latent projections (ReplicatedLinear); the projection joining the embedding
    and hidden state where the module builds it as nn.Linear / ReplicatedLinear (PROJ_WHOLE: DeepSeek/GLM
    eh_proj, MiMo input_proj, ERNIE mtp_linear_proj, MiMo-V2 eh_proj; Nemotron-H's eh_proj is a
    ColumnParallelLinear). role "other" at a layer past num_layers is the shared_head layout's eh_proj."""
    return (role in REPLICATED or role == "latent_proj"
            or (role in ("mtp_proj", "other") and layout in PROJ_WHOLE))


def draft_checkpoint_drafter(draft: ModelSpec, method: str, record: Weights | None, *,
                             tp: int = 1) -> DrafterWeights:
    """A separate draft checkpoint's weights on each GPU (draft_model: whole, TP-sharded; an EAGLE head: its
    tensor table whole, an upper bound, else not modelled)."""
    from ..capacity.weights import stage_weight_bytes

    tp = max(tp, 1)
    if record is not None and record.source != "estimated from config":
        per_gpu = stage_weight_bytes(record, draft.num_layers, tp, 1)[0]
        if method == "draft_model":
            return DrafterWeights(per_gpu, f"the draft {draft.name}'s checkpoint ({record.source}), nothing shared")
        return DrafterWeights(per_gpu, f"the {method} head {draft.name}'s checkpoint ({record.source}) counted "
                                       "whole: vLLM frees its embedding and head where it shares them with the "
                                       "target, which it decides by comparing the tensors (an upper bound)")
    if method == "draft_model" and draft.param_count:
        plain = 2 if draft.float_dtype in ("float32", "fp32") else draft.weight_bytes_per_param
        per_gpu = cdiv(int(draft.param_count * plain), tp)
        return DrafterWeights(per_gpu, f"the draft {draft.name}: parameter count {draft.param_count:,} x {plain:g} B "
                                       "(its config; no checkpoint read), nothing shared")
    return DrafterWeights(None, f"the {method} head {draft.name}'s weights are not modelled without its "
                                "safetensors beside its config (vLLM shares its embedding and head with the "
                                "target only where the tensors are absent or equal)")


def drafter_weights(model: ModelSpec, record: Weights | None, *, draft_layers: int = 0,
                    draft: ModelSpec | None = None, tp: int = 1, pp: int = 1,
                    release: str = "0.33.0") -> DrafterWeights | None:
    """The drafter's weights per last-stage GPU for MTP draft layers or a separate draft checkpoint (None:
    no speculative decoding). record: the target's weights record (its tensor table sizes an MTP module
    exactly); else the checkpoint kvplan can read offline."""
    from .vllm_load import checkpoint_weights, raw_config
    from .vllm_speculative import draft_method

    if draft_layers:
        return mtp_drafter(model, raw_config(model), record or checkpoint_weights(model), tp=tp, pp=pp,
                           release=release)
    if draft is not None:
        return draft_checkpoint_drafter(draft, draft_method(draft), checkpoint_weights(draft), tp=tp)
    return None
