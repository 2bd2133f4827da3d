"""`kvplan calibrate LOG`: reproduce a vLLM start-up log, then answer what-ifs on that deployment."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import check_format, emit
from .options import FormatOpt, SetOpt


def calibrate_command(
    log: Annotated[str, typer.Argument(help="A vLLM or SGLang start-up log (the server's output up to 'Application startup complete').")],
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="The model, when the log's name is not bundled and cannot be read as a Hub id or a local folder from here: a bundled name, a config.json or a Hub id.")] = None,
    version: Annotated[Optional[str], typer.Option("--version", help="The release whose rules reproduce the log: vLLM's (default: the version the log prints), or for an SGLang log 0.5.9 (default) or 0.5.23.")] = None,
    kv_dtype: Annotated[Optional[str], typer.Option("--kv-dtype", "-t", help="What-if: another vLLM --kv-cache-dtype (fp8, fp8_e5m2, int8_per_token_head, ...); for an SGLang log its --kv-cache-dtype (fp8_e4m3, fp8_e5m2, bf16).")] = None,
    max_model_len: Annotated[Optional[str], typer.Option("--max-model-len", help="What-if: another max_model_len (64k, 131072).")] = None,
    block_size: Annotated[Optional[int], typer.Option("--block-size", help="What-if: another --block-size (an SGLang log: its --page-size).")] = None,
    what_if_version: Annotated[Optional[str], typer.Option("--as-version", help="What-if: the same deployment under another vLLM release's rules (any of 0.11-0.34, e.g. 0.24).")] = None,
    spec_tokens: Annotated[Optional[int], typer.Option("--num-speculative-tokens", help="What-if: another number of draft tokens for the log's speculative decoding (0: speculative decoding off, its MTP draft layers gone).")] = None,
    draft_model: Annotated[Optional[str], typer.Option("--draft-model", help="The config of the log's draft checkpoint (EAGLE head, draft LLM) when kvplan cannot read the one the log names: a bundled name, a config.json or a Hub id.")] = None,
    prefix_caching: Annotated[Optional[str], typer.Option("--prefix-caching", help="on or off: the server's --enable-prefix-caching, when the log does not print it (hybrid models' state pages depend on it).")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="GPU kind (see 'kvplan gpus'), when the log does not print it: predicts the available KV memory (an SGLang log: the KV dtype DeepSeek's sparse attention defaults to).")] = None,
    tp: Annotated[Optional[int], typer.Option("--tp", help="Tensor-parallel size, when the log does not print it.")] = None,
    mem_fraction_static: Annotated[Optional[float], typer.Option("--mem-fraction-static", help="An SGLang log's mem_fraction_static, when it does not print its server_args.")] = None,
    set_: SetOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """Reproduce every figure of a vLLM (or SGLang) start-up log and print predicted vs logged.

    An SGLang log (its 'Load weight end.' and 'KV Cache is allocated.' lines) is reproduced with
    SGLang 0.5.9's pool rules (SGLang prints no version; the public logs are of 0.4-0.5.10; --version 0.5.23 for
    a newer one; docs/sglang.md): the tokens, the K/V sizes, max_running_requests.

    When the log has vLLM's profile breakdown ("Free memory on device ... Actual usage is ..."),
    each profile term (weights, peak activation, non-torch, CUDA graphs) is shown beside kvplan's.

    Examples:

      kvplan calibrate server.log

      kvplan calibrate server.log -t fp8 --max-model-len 64k

      kvplan calibrate server.log --model llama-3.1-8b --as-version 0.11
    """
    from ..engines.sglang_log import sniff
    from ..engines.vllm_calibrate import calibrate_workflow

    check_format(fmt)
    if sniff(log):
        _sglang(log, model, tp, mem_fraction_static, gpu, fmt, kv_dtype, max_model_len, block_size, version,
                {"--as-version": what_if_version, "--num-speculative-tokens": spec_tokens,
                 "--draft-model": draft_model, "--prefix-caching": prefix_caching, "--set": set_})
        return
    if mem_fraction_static is not None:
        from ..errors import UsageError

        raise UsageError("--mem-fraction-static is for SGLang logs; this log reads as vLLM's")
    report, problem = calibrate_workflow(log, model=model, version=version, kv_dtype=kv_dtype,
                                         max_model_len=max_model_len, block_size=block_size,
                                         as_version=what_if_version, overrides=set_ or [], tp=tp, gpu=gpu,
                                         speculative_tokens=spec_tokens, prefix_caching=prefix_caching,
                                         draft_model=draft_model)
    from ..reports import tidy

    report.tidy = tidy.calibrate(report.data)
    emit(report, fmt)
    if problem is not None:
        raise problem


def _sglang(log, model, tp, mem_fraction_static, gpu, fmt, kv_dtype, max_model_len, block_size, version,
            vllm_only: dict) -> None:
    """An SGLang log: its reproduction (the vLLM what-ifs and settings, by flag, do not apply)."""
    from ..engines.sglang_calibrate import calibrate_workflow
    from ..errors import UsageError

    given = [flag for flag, value in vllm_only.items() if value not in (None, [], ())]
    if given:
        flag = given[0]
        raise UsageError(f"{flag} is a vLLM calibrate option; this log reads as SGLang's",
                         "SGLang logs take --model, --tp, --gpu, --mem-fraction-static, --version and the what-ifs -t, "
                         "--max-model-len and --block-size")
    report, problem = calibrate_workflow(log, model=model, tp=tp, mem_fraction_static=mem_fraction_static, gpu=gpu,
                                         kv_dtype=kv_dtype, max_model_len=max_model_len, block_size=block_size,
                                         version=version)
    from ..reports import tidy

    report.tidy = tidy.calibrate(report.data)
    emit(report, fmt)
    if problem is not None:
        raise problem
