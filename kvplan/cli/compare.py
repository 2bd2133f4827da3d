"""`kvplan compare`: models side by side under one workload."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import check_format, emit
from .options import (
    BatchOpt, ContextOpt, FormatOpt, KvDtypeOpt, MemUtilOpt, PpOpt, QuantizationOpt, TechniqueOpt, TpOpt,
)


def compare_command(
    models: Annotated[list[str], typer.Argument(help="Two or more models: bundled names, HF ids or config.json paths.", show_default=False)],
    context: ContextOpt = "32k",
    batch: BatchOpt = "1",
    kv_dtype: KvDtypeOpt = "auto",
    technique: TechniqueOpt = None,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU kind every model is planned on (see 'kvplan gpus').")] = "h100",
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    mem_util: MemUtilOpt = 0.9,
    quantization: QuantizationOpt = None,
    fmt: FormatOpt = "table",
    engine: Annotated[Optional[str], typer.Option("--engine", hidden=True)] = None,
) -> None:
    """Compare models on the same workload: bytes per token, per sequence, KV pool
    tokens and max concurrency on the same GPUs.

    Models whose weights do not fit still get their byte counts; their capacity
    cells stay empty and a line says why. Up to four models are columns side by
    side; more are listed a row each (JSON and CSV keep every field).

    The figures are kvplan's own accounting. For one model under vLLM's and
    SGLang's, run 'kvplan estimate MODEL --engine vllm' and '--engine sglang'
    with the same --gpu and --tp.

    Examples:

      kvplan compare llama-3.1-8b qwen3-8b mistral-7b-v0.3 --context 32k

      kvplan compare llama-3.1-70b deepseek-v3 qwen3-next-80b-a3b --context 128k --gpu h200 --tp 8 -t fp8
    """
    from ..workload.compare import compare_workflow

    if engine is not None:  # a common first try; click's own answer suggested --technique
        from ..errors import UsageError

        raise UsageError("compare has no --engine: it compares models under kvplan's own accounting",
                         f"for one model under an engine's, run 'kvplan estimate MODEL --engine {engine}' "
                         "with the same --gpu and --tp")
    check_format(fmt)
    emit(compare_workflow(models=models, context=context, batch=batch, kv_dtype=kv_dtype, techniques=technique or [],
                          gpu=gpu, tp=tp, pp=pp, mem_util=mem_util, quantization=quantization), fmt)
