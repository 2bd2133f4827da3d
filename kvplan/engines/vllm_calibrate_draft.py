"""Speculative decoding in a vLLM log, for `kvplan calibrate`: the MTP draft layers in the pool (draft_layers), the
draft tokens per step (speculative_tokens) and a separate draft checkpoint read from --draft-model or the log's own
draft model (resolve_draft), else a note saying why it is not in the pool."""

from __future__ import annotations

from ..errors import KvplanError, UsageError
from .vllm_calibrate_model import hub_cache_id, match_bundled
from .vllm_calibrate_records import Calibration, log_has
from .vllm_log import VllmLog
from .vllm_speculative import default_draft_tokens, draft_layer_count, is_mtp_method


def draft_layers(model, log: VllmLog) -> int:
    """The MTP draft layers the log's server put in its pool (speculative method "mtp" or a family's older
    name for it, on a family whose draft kvplan models: vllm_speculative.py, DeepSeek-V4); 0 otherwise."""
    if not is_mtp_method(log.speculative_method):
        return 0
    try:
        return draft_layer_count(model)
    except UsageError:
        return 0


def speculative_tokens(model, log: VllmLog) -> int:
    """The draft tokens per step of the log's speculative decoding: as printed, else an MTP draft's default
    (vLLM: num_speculative_tokens = n_predict, its layer count); 0 when off or unknown."""
    if not log_has(log, "speculative"):
        return 0
    if log.speculative_tokens is not None and log.speculative_tokens > 64:
        raise UsageError(f"the log's num_speculative_tokens ({log.speculative_tokens:,}) is outside what kvplan "
                         "models (1-64)", "replay another with --num-speculative-tokens")
    if log.speculative_tokens:
        return log.speculative_tokens
    layers = draft_layers(model, log)  # not printed (or 0): an MTP draft's default, its depths
    return default_draft_tokens(model, layers) if layers else 0


DRAFT_CHECKPOINT_METHODS = ("eagle", "eagle3", "draft_model")  # a separate draft checkpoint's own layers


def resolve_draft(cal: Calibration, spec, draft_model: str | None) -> None:
    """A separate draft checkpoint (eagle, eagle3, draft_model): --draft-model, else the log's own 'model' when
    kvplan can read it (a bundled name or a config it reaches); otherwise a note."""
    from .vllm_family_rules import is_deepseek_v4
    from .vllm_speculative import load_draft

    log = cal.log
    if log.draft_tp is not None and log.draft_tp != (log.tp or 1) and (
            draft_model is not None or log.speculative_method in DRAFT_CHECKPOINT_METHODS):
        cal.notes.append(f"the draft runs at draft_tensor_parallel_size {log.draft_tp}, not the target's TP: kvplan "
                         "shards its heads by the target's TP (a replicated draft is not modelled)")
    if draft_model is not None:
        cal.draft = load_draft(draft_model)
        return
    if (not log_has(log, "speculative") or log.speculative_method not in DRAFT_CHECKPOINT_METHODS
            or not log.speculative_model):
        return
    if hub_cache_id(log.speculative_model) == hub_cache_id(log.model or ""):
        cal.notes.append(f"the log's {log.speculative_method} draft names the target checkpoint itself: not put in "
                         "the pool (give --draft-model for a separate draft)")
        return
    from ..sources import load_model

    try:
        draft = load_model(match_bundled(log.speculative_model) or hub_cache_id(log.speculative_model))
    except KvplanError as exc:
        cal.notes.append(f"the log's draft checkpoint cannot be read here ({exc.message}): give its config with "
                         "--draft-model to put its layers in the pool")
        return
    if is_deepseek_v4(spec) or any(layer.state is not None for layer in draft.layers):
        cal.notes.append(f"the log's draft {draft.name} is not modelled with this target (DeepSeek-V4, or a draft "
                         "with recurrent state layers): not put in the pool")
        return
    cal.draft = draft


__all__ = ["draft_layers", "speculative_tokens", "resolve_draft", "DRAFT_CHECKPOINT_METHODS"]
