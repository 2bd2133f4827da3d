"""What a config says of how its checkpoint is stored: the quantization config where the engines find it
(checkpoint_quantization_config), a misshapen one, the float dtype (torch_dtype) and its width, and a name that
suggests a quantized checkpoint."""

from __future__ import annotations

import re

from .fields import Fields
from .resolve_family import nested_text

WEIGHTS_NOT_SIZED = "weights not sized from the config"


def checkpoint_quantization_config(raw: dict, text: dict | None = None) -> dict | None:
    """The checkpoint's quantization config where the engines find it, the one reading kvplan takes of it: the
    config's quantization_config, else its compression_config, else its text model's (text, or nested_text(raw)) in
    the same order; the first that is not None (or absent) is taken, and a value that is no JSON object is none (the
    misshapen config is refused where the weights are sized: _misshapen_quantization_config). vLLM 0.34
    transformers_utils/model_arch_config_convertor.py get_quantization_config / _normalize_quantization_config (the
    text_config only when the top config has neither); SGLang 0.5.23 model_loader/checkpoint_quantization.py
    _select_hf_quant_metadata (`is not None` likewise). An empty `quantization_config: {}` is taken, and hides the
    others: it names no method, so vLLM 0.34 serves the checkpoint unquantized (config/model.py _verify_quantization:
    quant_method "" is None) and refuses an online --quantization against it ("... model config (None) does not
    match ..."); SGLang 0.5.23 finds no quant_method in it (configs/model_config.py _verify_quantization: "Unknown
    quantization method: " without the flag; with --quantization fp8, fp8.py Fp8Config.from_config: "Cannot find
    any of ['quant_method'] in the model's quantization config")."""
    for holder in (raw, nested_text(raw) if text is None else text):
        for key in ("quantization_config", "compression_config"):
            quant = holder.get(key) if isinstance(holder, dict) else None
            if quant is not None:
                return quant if isinstance(quant, dict) else None
    return None


def _quantization_config(raw: dict, f: Fields) -> dict | None:
    """The checkpoint's quantization config (checkpoint_quantization_config), the text model's fields read as f has
    them."""
    return checkpoint_quantization_config(raw, f.raw)


def _misshapen_quantization_config(raw: dict, f: Fields) -> str | None:
    """The type of a quantization_config (the config's or its text model's) that is neither null nor a JSON object
    (vLLM 0.33 model_arch_config_convertor.py _normalize_quantization_config reads its quant_method with .get(),
    so such a config does not load); None when there is none."""
    for holder in (raw, f.raw):
        quant = holder.get("quantization_config")
        if quant is not None and not isinstance(quant, dict):
            return type(quant).__name__
    return None


# the dtypes a checkpoint's torch_dtype names (torch's names; transformers writes them without "torch.")
_DTYPES = ("float32", "float16", "bfloat16", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8")


def float_width_bytes(f: Fields) -> int:
    """Bytes of one float parameter as the checkpoint stores it (its torch_dtype; bfloat16 when it names none)."""
    return {"float32": 4, "float16": 2, "bfloat16": 2}.get(_float_dtype(f)[0], 2)


def _float_dtype(f: Fields) -> tuple[str, str | None]:
    """(the checkpoint's dtype, a note when the config names none kvplan knows: bfloat16 is taken)."""
    value = f.get("torch_dtype", "dtype", default="bfloat16")
    text = str(value).removeprefix("torch.") if isinstance(value, str) else None
    if text in _DTYPES:
        return text, None
    return "bfloat16", (f"torch_dtype {value!r} is not a dtype kvplan knows ({', '.join(_DTYPES[:3])} ...): "
                        "the weights are sized as bfloat16")


# a quantization format's mark in a checkpoint's name (nvidia/Llama-3.1-70B-Instruct-FP8, ...-NVFP4, ...-AWQ)
_QUANTIZED_NAME = re.compile(r"(?i)(?:^|[-_./])(?:fp8|nvfp4|mxfp4|fp4|awq|gptq|int4|int8|w4a16|w8a8|w4a4|bnb-4bit)"
                             r"(?:$|[-_./])")

