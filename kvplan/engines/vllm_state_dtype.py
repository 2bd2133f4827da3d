"""The state dtypes vLLM keeps a hybrid's conv and SSM states in, per release (engine_model): the model with them
applied, before its pages are sized (kvplan.engines.vllm_layer_specs)."""

from __future__ import annotations

from dataclasses import replace

from ..core.model import ModelSpec
from ..core.storage import FP16, FP32
from ..core.transform import map_layers
from .vllm_pages import serving_storage
from .vllm_rules import VllmRules


def engine_model(model: ModelSpec, rules: VllmRules) -> tuple[ModelSpec, list[str]]:
    """The model with the engine's own state dtypes: conv and SSM state in the
    serving dtype (MambaStateDtypeCalculator with mamba_cache_dtype 'auto'),
    Nemotron-H's SSM state in the config's mamba_ssm_cache_dtype, else float16
    (0.13-0.19) or float32 (0.20 on); Qwen3.5's (0.17 on) in the config's
    mamba_ssm_dtype (float32 in the published checkpoints).

    A function of (model, rules) alone, kept on the model (ModelSpec.memo, one entry per release asked): a sweep
    or the release grid plans one model at many sizes, and rebuilding a hybrid's layers each time was a third of
    simulate's time in tests/test_vllm_grid.py; the same object back also lets shard's memo on it answer."""
    fixed, notes = model.memo(("vllm engine_model", rules), lambda: _engine_model(model, rules))
    return fixed, list(notes)


def _engine_model(model: ModelSpec, rules: VllmRules) -> tuple[ModelSpec, tuple[str, ...]]:
    serving = serving_storage(model)
    checkpoint = FP32 if model.float_dtype in ("float32", "fp32") else serving
    notes: list[str] = []
    nemotron_default = {"float32": FP32, "float16": FP16}.get(rules.nemotron_h_ssm_dtype or "")
    nemotron = model.model_type == "nemotron_h" and nemotron_default is not None
    qwen35 = model.model_type.startswith("qwen3_5") and rules.qwen35_config_ssm_dtype
    changed = set()

    def fix(_i, layer):
        state = layer.state
        if state is None:
            return layer
        ssm = serving
        if state.kind == "kda":  # MambaStateDtypeCalculator.kda_state_dtype: the recurrent state is float32
            ssm = FP32           # in every release (0.32+: mamba_ssm_cache_dtype 'auto' -> float32)
        elif nemotron:
            named = state.ssm_storage if state.ssm_storage not in (checkpoint, serving) else None
            ssm = named or nemotron_default
        elif qwen35:  # Qwen3_5ForConditionalGenerationConfig: mamba_ssm_cache_dtype = hf_text_config.mamba_ssm_dtype
            ssm = state.ssm_storage if state.ssm_storage not in (checkpoint, serving) else serving
        new = replace(state, conv_storage=serving, ssm_storage=ssm)
        if new != state:
            changed.add((state.conv_storage.name, state.ssm_storage.name, serving.name, ssm.name))
        return replace(layer, state=new)

    out = map_layers(model, fix) if any(layer.state is not None for layer in model.layers) else model
    for old_conv, old_ssm, conv, ssm in sorted(changed):
        notes.append(f"state dtype: vLLM {rules.version} keeps the conv state in {conv} and the SSM state in {ssm} "
                     f"(the config reads {old_conv}/{old_ssm})")
    if nemotron:
        notes.append(f"Nemotron-H: vLLM {rules.version} keeps the SSM state in {rules.nemotron_h_ssm_dtype} unless "
                     "the config's mamba_ssm_cache_dtype says otherwise (--mamba-ssm-cache-dtype overrides)")
        if rules.nemotron_h_ssm_dtype == "float16":
            # 0.13-0.19 read getattr(hf_config, "mamba_ssm_cache_dtype", "float16"): which config class loaded
            # the checkpoint decides it when config.json does not name the field, and kvplan cannot tell
            notes.append("uncertain: when config.json does not name mamba_ssm_cache_dtype, vLLM "
                         f"{rules.version} gets float16 from the checkpoint's remote-code config class and float32 "
                         "from transformers' NemotronHConfig (kvplan reads the latter's default, float32): "
                         "pass --set mamba_ssm_cache_dtype=float16 for the former")
    if qwen35:
        notes.append(f"Qwen3.5: vLLM {rules.version} keeps the SSM state in the config's mamba_ssm_dtype "
                     "(--mamba-ssm-cache-dtype overrides)")
    return out, tuple(notes)

