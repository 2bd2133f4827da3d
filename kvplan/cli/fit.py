"""`kvplan fit`: the cheapest deployment that meets a workload's budgets."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .common import check_format, emit
from .options import (
    All2AllOpt, ContextOrDefaultOpt, DpEncoderOpt, DpLmHeadOpt, DraftModelOpt, EncoderTpModeOpt, EngineOpt, FormatOpt,
    GpusPerNodeOpt, ModelArg, MoeA2AOpt, MoeDenseTpOpt, MtpOpt, QuantizationOpt, RedundantExpertsOpt, ReserveOpt,
    RevisionOpt, SetOpt,
    SpecTokensOpt, WeightsOpt,
)


def fit_command(
    model: ModelArg,
    context: ContextOrDefaultOpt = None,
    concurrency: Annotated[str, typer.Option("--concurrency", "-n", help="Sequences of --context that must fit at once.")] = "1",
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU kinds to search, comma separated (h100,h200,b200,mi300x), or all (default).")] = None,
    max_gpus: Annotated[str, typer.Option("--max-gpus", help="Most GPUs in one replica (tp x pp, or dp x tp x pp with --dp-ep).")] = "8",
    dp_ep: Annotated[bool, typer.Option("--dp-ep", help="Also search a MoE model's data-parallel attention + expert-parallel splits (dp x tp x pp GPUs: vLLM's --data-parallel-size N --enable-expert-parallel [--pipeline-parallel-size P], as 'kvplan estimate --dp N --ep [--pp P]' plans them; under --engine sglang, pp 1 only, SGLang's attention DP, 'kvplan estimate --tp T --dp N [--ep]', DeepSeek-V2/V3 only).")] = False,
    allow: Annotated[Optional[List[str]], typer.Option("--allow", help="Techniques the search may add, comma separated or repeated: fp8,kivi,evict:0.5,offload:cpu=256GiB (see 'kvplan techniques').")] = None,
    kv_dtype: Annotated[str, typer.Option("--kv-dtype", help="KV dtypes to search, comma separated (auto = the model's dtype).")] = "auto,fp8",
    engine: EngineOpt = "ideal",
    all2all_backend: All2AllOpt = None,
    moe_a2a_backend: MoeA2AOpt = None,
    gpus_per_node: GpusPerNodeOpt = 8,
    enable_dp_lm_head: DpLmHeadOpt = False,
    moe_dense_tp_size: MoeDenseTpOpt = None,
    mm_enable_dp_encoder: DpEncoderOpt = False,
    mm_encoder_tp_mode: EncoderTpModeOpt = None,
    redundant_experts: RedundantExpertsOpt = None,
    mtp: MtpOpt = False,
    draft_model: DraftModelOpt = None,
    num_speculative_tokens: SpecTokensOpt = None,
    objective: Annotated[str, typer.Option("--objective", help="Rank by gpus (fewest), cost (USD per hour) or headroom (most sequences).")] = "gpus",
    price: Annotated[Optional[List[str]], typer.Option("--price", help="USD per GPU hour, overriding the catalog: h100=2.49 (repeatable).")] = None,
    max_kv_gib: Annotated[Optional[float], typer.Option("--max-kv-gib", help="Budget: most KV cache per GPU (GiB) for the batch.")] = None,
    max_decode_ms: Annotated[Optional[float], typer.Option("--max-decode-ms", help="Budget: slowest memory-bound decode floor per output token (ms).")] = None,
    mem_util: Annotated[Optional[float], typer.Option("--mem-util", help="Fraction of GPU memory the engine may use (default 0.9; with --engine vllm, that release's gpu_memory_utilization default; with --engine sglang, SGLang's own mem_fraction_static for each card).")] = None,
    reserve: ReserveOpt = "2GiB",
    weights: WeightsOpt = "auto",
    quantization: QuantizationOpt = None,
    quality_first: Annotated[bool, typer.Option("--quality-first/--any-quality", help="Rank options without quality caveats first (default), or by the objective alone.")] = True,
    top: Annotated[int, typer.Option("--top", help="Options to print (0: all that pass; each is evaluated again, slow on a large grid).")] = 10,
    explain: Annotated[bool, typer.Option("--explain", help="Say why each cheaper option failed (its binding constraint).")] = False,
    plot: Annotated[Optional[str], typer.Option("--plot", help="Draw the Pareto view to FILE.png or FILE.svg (needs matplotlib).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the --plot file if it exists.")] = False,
    set_: SetOpt = None,
    revision: RevisionOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """Search GPU kind x count x TP x PP x KV dtype x techniques for the deployments
    that meet the budgets, ranked best first. Exits 1 when nothing meets them.

    Examples:

      kvplan fit llama-3.1-70b --context 128k --concurrency 16 --gpu h200 --engine vllm

      kvplan fit llama-3.1-70b -c 128k -n 64 --gpu h100,h200,b200 --allow kivi,evict --objective cost --explain

      kvplan fit qwen3-8b -c 32k -n 128 --gpu all --max-gpus 4 --format markdown --plot fit.png
    """
    from ..fit.run import fit_report, request_from_options

    check_format(fmt)
    req = request_from_options(
        model=model, context=context, concurrency=concurrency, gpu=gpu, max_gpus=max_gpus, allow=allow,
        kv_dtypes=kv_dtype, engine=engine, objective=objective, prices=price, max_kv_gib=max_kv_gib,
        max_decode_ms=max_decode_ms, mem_util=mem_util, reserve=reserve, weights=weights, overrides=set_,
        revision=revision, quantization=quantization, quality_first=quality_first, mtp=mtp, draft_model=draft_model,
        num_speculative_tokens=num_speculative_tokens, dp_ep=dp_ep, all2all_backend=all2all_backend,
        moe_a2a_backend=moe_a2a_backend, gpus_per_node=gpus_per_node, enable_dp_lm_head=enable_dp_lm_head,
        moe_dense_tp_size=moe_dense_tp_size, mm_enable_dp_encoder=mm_enable_dp_encoder,
        mm_encoder_tp_mode=mm_encoder_tp_mode, redundant_experts=redundant_experts)
    emit(fit_report(req, explain=explain, top=top, plot=plot, force=force), fmt)
