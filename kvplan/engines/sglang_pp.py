"""Does SGLang run the model's architecture with pipeline parallelism? Read from the registry table.

SGLang (0.5.9 and 0.5.23 alike) loads the model on every rank, then ModelRunner.__init__
(srt/model_executor/model_runner.py) sets support_pp = "pp_proxy_tensors" in
inspect.signature(self.model.forward).parameters and, with pp_size > 1, asserts it ("Pipeline Parallel is not
compatible with this model."): the server stops at start, after loading the weights. 0.5.23 exempts only a
draft worker under SGLANG_ENABLE_PP_SPEC (kvplan refuses --pp with speculative decoding for SGLang anyway).
kvplan.engines.sglang_registry_data's NO_PP holds, per architecture, the releases whose registered class's
forward takes no pp_proxy_tensors (benchmarks/sglang_registry_table.py read_pp reads the classes statically);
PP_UNREAD those whose forward it could not follow.
"""

from __future__ import annotations

from .vllm_pp import PipelineSupport, enforce  # the same record and refusal for both engines


def pipeline_support(architectures, release: str, model_type: str | None = None) -> PipelineSupport:
    """Whether SGLang `release` (one of sglang_registry_data.RELEASES) passes its PP check for the first of
    `architectures` (a config's, in order) it registers (ModelRegistry.resolve_model_cls takes that one; its own
    config class renames some model_types' architectures, sglang_served.looked_up)."""
    from .sglang_registry_data import NO_PP, PP_UNREAD, REGISTRY, RELEASES
    from .sglang_served import looked_up

    names = [architectures] if isinstance(architectures, str) else list(architectures or ())
    if release not in RELEASES or not names:
        return PipelineSupport(None, None, None, None)
    looked = [looked_up(name, model_type, release) for name in names]
    chosen = next((n for n in looked if n and release in REGISTRY.get(n, ())), None)
    if chosen is None:
        return PipelineSupport(None, None, release, None)  # not registered: sglang_served's note says so
    if release in PP_UNREAD.get(chosen, ()):
        return PipelineSupport(None, chosen, release,
                               f"whether SGLang {release} runs {chosen} with pipeline parallelism is not known: "
                               "kvplan's reader could not follow its class's forward")
    return PipelineSupport(release not in NO_PP.get(chosen, ()), chosen, release, None)


def refusal(found: PipelineSupport, pp: int) -> str:
    return (f"SGLang {found.release} refuses --pp {pp} for {found.architecture}: its forward takes no "
            "pp_proxy_tensors (model_executor/model_runner.py ModelRunner: \"Pipeline Parallel is not compatible "
            "with this model.\", after loading the weights)")


def check_pp(architectures, release: str, pp: int, tp: int, notes: list[str], model_type: str | None = None) -> None:
    """Refuse `--pp pp` (UsageError, exit 2) where SGLang `release`'s sources say the architecture fails its PP
    check; add a note to `notes` where that is not known; nothing for --pp 1 or a supported architecture."""
    if pp <= 1:
        return
    found = pipeline_support(architectures, release, model_type)
    enforce(found, refusal(found, pp), pp, tp, notes)


__all__ = ["PipelineSupport", "pipeline_support", "check_pp", "refusal"]
