"""`kvplan estimate`: bytes, techniques, capacity, decode cost for one model."""

from typing import Annotated, Optional

import typer

from .common import check_format, emit
from .options import (
    All2AllOpt, BatchOpt, ContextOrDefaultOpt, DpOpt, EnforceEagerOpt, EpOpt, EngineOpt, FormatOpt, GpuMemoryOpt, GpuOpt, GpusPerNodeOpt, HbmOpt, KvDtypeOpt,
    DpEncoderOpt, DpLmHeadOpt, EncoderTpModeOpt, KvMemoryOpt, MaxModelLenOpt, MoeDenseTpOpt, MaxNumSeqsOpt, ModelArg, MoeA2AOpt, MtpOpt, RedundantExpertsOpt, SpecTokensOpt, DraftModelOpt, PpOpt, QuantizationOpt, ReserveOpt,
    RevisionOpt, SetNewOpt, SetOpt,
    TechniqueOpt, TpOpt, WeightsOpt,
)


def estimate_command(
    model: ModelArg,
    context: ContextOrDefaultOpt = None,
    batch: BatchOpt = "1",
    kv_dtype: KvDtypeOpt = "auto",
    technique: TechniqueOpt = None,
    gpu: GpuOpt = None,
    gpu_memory: GpuMemoryOpt = None,
    hbm_gbps: HbmOpt = None,
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    dp: DpOpt = 1,
    ep: EpOpt = False,
    all2all_backend: All2AllOpt = None,
    moe_a2a_backend: MoeA2AOpt = None,
    gpus_per_node: GpusPerNodeOpt = 8,
    enable_dp_lm_head: DpLmHeadOpt = False,
    moe_dense_tp_size: MoeDenseTpOpt = None,
    mm_enable_dp_encoder: DpEncoderOpt = False,
    mm_encoder_tp_mode: EncoderTpModeOpt = None,
    redundant_experts: RedundantExpertsOpt = None,
    mem_util: Annotated[Optional[float], typer.Option("--mem-util", help="Fraction of GPU memory the engine may use (default: 0.9; with --engine vllm, that release's gpu_memory_utilization default).")] = None,
    reserve: ReserveOpt = "2GiB",
    weights: WeightsOpt = "auto",
    quantization: QuantizationOpt = None,
    kv_memory: KvMemoryOpt = None,
    engine: EngineOpt = "ideal",
    max_model_len: MaxModelLenOpt = None,
    max_num_seqs: MaxNumSeqsOpt = None,
    enforce_eager: EnforceEagerOpt = False,
    mtp: MtpOpt = False,
    num_speculative_tokens: SpecTokensOpt = None,
    draft_model: DraftModelOpt = None,
    max_kv_gib: Annotated[Optional[float], typer.Option("--max-kv-gib", help="Fail (exit 1) when the batch's KV cache per GPU exceeds this many GiB (> 0).")] = None,
    min_concurrency: Annotated[Optional[int], typer.Option("--min-concurrency", help="Fail (exit 1) when fewer sequences of --context fit (>= 1); with --engine vllm, in vLLM's pool too.")] = None,
    emit_flags: Annotated[Optional[str], typer.Option("--emit", help="Print the serving flags that realise the plan: vllm, vllm@VERSION, sglang or sglang@0.5.9 (SGLang's launch_server). With --engine vllm, --max-num-seqs is the --context-long requests vLLM's pool keeps decoding.")] = None,
    set_: SetOpt = None,
    set_new: SetNewOpt = None,
    revision: RevisionOpt = None,
    explain: Annotated[bool, typer.Option("--explain", help="Print the formula with the model's numbers substituted.")] = False,
    fmt: FormatOpt = "table",
) -> None:
    """Bytes of the KV cache per token, per sequence and per batch, by layer kind.

    Examples:

      kvplan estimate llama-3.1-70b --context 128k

      kvplan estimate llama-3.1-70b --context 128k -t cla:2 -t fp8 -t evict:0.5

      kvplan estimate qwen3-8b --gpu h100 --context 32k -t fp8 -t prefix:tokens=2000,requests=32

      kvplan estimate ./config.json --set num_key_value_heads=32 --format json
    """
    from ..request import EstimateRequest
    from ..workflows import estimate_workflow

    check_format(fmt)
    request = EstimateRequest.from_options(
        model=model, context=context, batch=batch, kv_dtype=kv_dtype, techniques=technique or [],
        gpu=gpu, gpu_memory=gpu_memory, hbm_gbps=hbm_gbps, tp=tp, pp=pp, dp=dp, ep=ep,
        redundant_experts=redundant_experts, mem_util=mem_util,
        reserve=reserve, weights=weights, kv_memory=kv_memory, engine=engine, max_model_len=max_model_len,
        max_num_seqs=max_num_seqs, enforce_eager=enforce_eager, mtp=mtp,
        num_speculative_tokens=num_speculative_tokens, draft_model=draft_model, max_kv_gib=max_kv_gib, min_concurrency=min_concurrency, emit=emit_flags, overrides=set_ or [],
        revision=revision, explain=explain, new_overrides=set_new or [], quantization=quantization,
        all2all_backend=all2all_backend, moe_a2a_backend=moe_a2a_backend, gpus_per_node=gpus_per_node,
        enable_dp_lm_head=enable_dp_lm_head, moe_dense_tp_size=moe_dense_tp_size,
        mm_enable_dp_encoder=mm_enable_dp_encoder, mm_encoder_tp_mode=mm_encoder_tp_mode,
    )
    report, budgets_failed = estimate_workflow(request)
    emit(report, fmt)
    if budgets_failed:
        raise typer.Exit(1)
