"""`kvplan weights`: a checkpoint's exact bytes by dtype and role, and per GPU."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import emit
from .options import FormatOpt, ModelArg, PpOpt, RevisionOpt, SetOpt, TpOpt


def weights_command(
    model: ModelArg,
    weights: Annotated[Optional[str], typer.Option("--weights", help="Read these instead: a safetensors file or folder, an index.json, a .gguf, or a size.")] = None,
    tp: TpOpt = 1,
    pp: PpOpt = 1,
    set_: SetOpt = None,
    revision: RevisionOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """Weight bytes of a checkpoint by dtype and by role, read from its own headers.

    Safetensors headers (local shards, or the Hub's over HTTP range requests),
    a GGUF tensor table, a safetensors index, the bundled totals, or, as a last
    resort, the parameter count from the config; the output says which.

    Examples:

      kvplan weights gpt-oss-120b

      kvplan weights ./my-model --tp 4 --pp 2

      kvplan weights ./qwen3-8b-Q4_K_M.gguf --format json
    """
    from ..reports.weights import build
    from ..sources import load_model_and_weights

    if tp < 1 or pp < 1:
        from ..errors import UsageError

        raise UsageError("--tp and --pp must be >= 1")
    spec, record = load_model_and_weights(model, revision=revision, overrides=set_ or [], weights=weights or "auto")
    from ..capacity.shard import check_tp, stage_bounds
    from ..capacity.weights import require_known

    require_known(record, spec.name)  # 0 B is not a figure: say why the config gives none

    check_tp(spec, tp)  # the split vLLM would refuse is not shown as a plan
    stage_bounds(spec.num_layers, pp)
    emit(build(spec, record, tp, pp), fmt)
