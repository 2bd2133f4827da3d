"""The what-ifs of `kvplan calibrate` (`-t fp8 --max-model-len 64k --version 0.11`): the logged deployment's KV
memory per GPU replayed under the changed settings, with what that server would log (replay_what_if)."""

from __future__ import annotations

import os

from ..errors import UsageError
from .vllm import simulate
from .vllm_calibrate_draft import draft_layers, speculative_tokens
from .vllm_calibrate_records import Calibration, log_has
from .vllm_rules import V0_11, resolve
from .vllm_speculative import draft_layer_count


def replay_what_if(cal: Calibration, spec, what: dict, kv_dtype, block, mnbt):
    """The logged server's KV memory replayed under `what` (cal.what_if: what that server would log)."""
    log = cal.log
    kv = cal.kv_memory_bytes
    if kv is None:
        raise UsageError("what-ifs need the KV memory of the logged server, which the log does not give")
    rules = cal.rules
    if what.get("version"):
        rules, note = resolve(what["version"])
        if note:
            cal.notes.append(note)
    rules = rules or V0_11
    new_dtype = what.get("kv_cache_dtype") or kv_dtype
    new_len = what.get("max_model_len") or log.max_model_len
    new_block = what.get("block_size") or block
    drafts, tokens, draft = draft_layers(spec, log), speculative_tokens(spec, log), cal.draft
    if "speculative_tokens" in what:  # 0: speculative decoding off; else that many tokens (an MTP draft when the
        tokens = what["speculative_tokens"]  # log has no speculative decoding at all)
        if not tokens:
            drafts, draft = 0, None
        elif not log_has(log, "speculative") and not log.speculative_method and draft is None:
            drafts = draft_layer_count(spec)
    pool = simulate(spec, kv_memory_bytes=kv, max_model_len=new_len, block_tokens=new_block, tp=log.tp or 1,
                    pp=log.pp or 1, max_num_batched_tokens=what.get("max_num_batched_tokens") or mnbt, rules=rules,
                    kv_cache_dtype=new_dtype, allow_long_max_model_len=bool(
                        os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")), prefix_caching=log.enable_prefix_caching,
                    max_num_seqs=log.max_num_seqs, enforce_eager=log.enforce_eager,
                    draft_layers=drafts, num_speculative_tokens=tokens, draft_model=draft)
    cal.what_if = {
        "version": rules.version,
        "num_speculative_tokens": tokens,
        "mtp_draft_layers": drafts,
        "kv_cache_dtype": pool.kv_cache_dtype,
        "max_model_len": new_len,
        "block_size": pool.block_size,
        "kv_memory_bytes": kv,
        "num_blocks": pool.num_blocks,
        "gpu_kv_cache_tokens": pool.gpu_kv_cache_tokens,
        "max_concurrency": round(pool.max_concurrency, 6),
        "fits": pool.fits,
        "start_refusal": pool.refusal,
        "estimated_max_model_len": pool.estimated_max_model_len,
        "log": pool.log_lines(),
        "notes": list(pool.notes),
    }


__all__ = ["replay_what_if"]
