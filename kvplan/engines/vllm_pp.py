"""Does vLLM run the model's architecture with pipeline parallelism? Read from the registry table.

vLLM refuses pipeline_parallel_size > 1 when the architecture's class does not implement SupportsPP (0.34
config/model.py ModelConfig.verify_with_parallel_config: "Pipeline parallelism is not supported for this model.
Supported models implement the `SupportsPP` interface."; registry.py _ModelInfo.from_model_cls sets supports_pp from
interfaces.py supports_pp). kvplan.engines.vllm_registry_data's NO_PP holds, per architecture, the releases of
PP_RELEASES in which its class lacks it (benchmarks/vllm_registry_table.py reads the classes statically). For a
release not in PP_RELEASES (no sdist to read) the answer is "not known", said in a note, never a refusal.
"""

from __future__ import annotations

from .._record import record
from ..errors import UsageError
from .vllm_release import release_key as _key


@record
class PipelineSupport:
    """An engine's answer for one architecture and release (vLLM here, SGLang in engines/sglang_pp.py)."""
    supported: bool | None  # None: not known (release or class not read, or no registered architecture)
    architecture: str | None  # the name the engine looks up (the first of the config's it registers)
    release: str | None  # the release whose sources were read (None: none for the release asked)
    note: str | None  # for the report where not known


def _inside(spans, key) -> bool:
    return any(_key(first) <= key and (end is None or key < _key(end)) for first, end in spans)


def _registered(name: str, key) -> bool:
    from .vllm_registry_data import REGISTRY

    return any(_inside(spans, key) for spans in REGISTRY.get(name, ((), ())))


def pipeline_support(architectures, release: str) -> PipelineSupport:
    """Whether vLLM `release` (e.g. "0.34", "0.33.0") supports pipeline parallelism for the first of
    `architectures` (a config's, in order) it registers (ModelRegistry.inspect_model_cls takes that one)."""
    from .vllm_registry_data import NO_PP, PP_RELEASES, PP_UNREAD, RELEASES

    wanted = _key(release)
    names = [architectures] if isinstance(architectures, str) else list(architectures or ())
    if wanted is None or not names:
        return PipelineSupport(None, None, None, None)  # no architecture: the registry check already says so
    earlier = [r for r in RELEASES if _key(r) <= wanted]
    table_release = earlier[-1] if earlier else None
    chosen = next((n for n in names if table_release and _registered(n, _key(table_release))), None)
    if chosen is None:
        return PipelineSupport(None, None, None, None)  # not registered: vllm_served's note says so
    if table_release not in PP_RELEASES:
        return PipelineSupport(None, chosen, None,
                               f"whether vLLM {table_release} runs {chosen} with pipeline parallelism is not known: "
                               f"kvplan did not read that release's model sources for SupportsPP")
    here = _key(table_release)
    if _inside(PP_UNREAD.get(chosen, ()), here):
        return PipelineSupport(None, chosen, table_release,
                               f"whether vLLM {table_release} runs {chosen} with pipeline parallelism is not known: "
                               "its class could not be read")
    return PipelineSupport(not _inside(NO_PP.get(chosen, ()), here), chosen, table_release, None)


def enforce(found: PipelineSupport, refusal: str, pp: int, tp: int, notes: list[str]) -> None:
    """Refuse --pp `pp` with `refusal` (UsageError, exit 2) where the engine's sources say it fails the check; add
    `found`'s note to `notes` where that is not known. For vLLM and SGLang alike (engines/sglang_pp.py)."""
    if found.supported is False:
        raise UsageError(refusal, f"use --pp 1, e.g. --tp {tp * pp} --pp 1 for the same GPUs, or another engine")
    if found.note:
        notes.append(found.note)


def check_pp(architectures, release: str, pp: int, tp: int, notes: list[str]) -> None:
    """Refuse `--pp pp` (UsageError, exit 2) where vLLM `release`'s sources say the architecture lacks SupportsPP;
    add a note to `notes` where that is not known; nothing for --pp 1 or a supported architecture."""
    if pp <= 1:
        return
    found = pipeline_support(architectures, release)
    enforce(found, f"vLLM {found.release} refuses --pp {pp} for {found.architecture}: its class does not implement "
            "SupportsPP (config/model.py verify_with_parallel_config)", pp, tp, notes)


__all__ = ["PipelineSupport", "pipeline_support", "check_pp", "enforce"]
