"""The config reads shared by the engines' text-width refusals (engines/vllm_widths.py, engines/sglang_widths.py and
their *_quant.py): a positive int field of the config, the [block_n, block_k] of a block-wise FP8 checkpoint the
engine serves with its fp8 method, a compressed-tensors config's groups, and the error both engines raise for experts
FP8 blocks do not fit."""

from __future__ import annotations

from typing import Callable


def config_int(raw: dict, key: str) -> int | None:
    """A positive int field of the config, top level else the nested text config."""
    from ..configs.resolve_family import nested_text

    for src in (raw, nested_text(raw)):
        value = src.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def fp8_block(model, raw: dict, method_of: Callable[[dict | None, str], str | None]) -> tuple[int, int] | None:
    """(block_n, block_k) of a checkpoint the engine serves with its fp8 method (the engine's `method_of`, as
    pre_ampere.served_quantization reads it) block-wise; None otherwise, and None for a config with ignored_layers /
    modules_to_not_convert (both engines' Fp8Config.get_quant_method serve those modules unquantized) or store_dtype
    (vLLM's experts stored otherwise): not checked."""
    from ..configs.checkpoint_dtype import checkpoint_quantization_config
    from .pre_ampere import served_quantization

    if served_quantization(model, method_of) != "fp8" or getattr(model, "online_quantization", ""):
        return None
    q = checkpoint_quantization_config(raw) or {}
    if q.get("ignored_layers") or q.get("modules_to_not_convert") or q.get("store_dtype") is not None:
        return None
    block = q.get("weight_block_size")
    if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and not isinstance(b, bool) and b > 0
                                                           for b in block):
        return block[0], block[1]
    return None


def ct_groups(q: dict) -> list[dict] | None:
    """A compressed-tensors config's config_groups, where it has some and ignores at most lm_head (every linear of
    the text model then takes one of its schemes; more left unquantized is not checked); None otherwise."""
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups or not set(q.get("ignore") or []) <= {"lm_head"}:
        return None
    return list(groups.values())


def int_weight_only(q: dict) -> bool:
    """A compressed-tensors config whose every group is WNA16's (both engines' compressed_tensors.py
    _is_wNa16_group_channel with format pack-quantized: int 4 / 8-bit static weights by group or channel, no input
    quantization), ignoring at most lm_head (ct_groups)."""
    groups = ct_groups(q)
    if groups is None:
        return False
    for g in groups:
        w = g.get("weights") if isinstance(g, dict) else None
        if (not isinstance(w, dict) or g.get("input_activations") or w.get("type") != "int" or w.get("num_bits")
                not in (4, 8) or w.get("strategy") not in ("group", "channel") or w.get("dynamic")
                or (g.get("format") or q.get("format")) != "pack-quantized"):
            return False
    return True


def moe_block_error(per_rank: int, block: tuple[int, int], checks_k: bool) -> str | None:
    """The ValueError both engines raise for an expert intermediate per rank a block-wise FP8 checkpoint's blocks do
    not fit (vLLM 0.34 quantization/utils/fp8_utils.py validate_fp8_block_shape_moe, SGLang 0.5.23
    layers/quantization/fp8.py Fp8MoEMethod.create_fp8_moe_weight_: the same two checks, the same words): gate / up
    against block_n, then down against block_k where `checks_k` (the TP world size above 1), quoted; None where both
    fit."""
    block_n, block_k = block
    if per_rank % block_n:
        return (f"'The output_size of gate's and up's weight = {per_rank} is not divisible by weight quantization "
                f"block_n = {block_n}.'")
    if checks_k and per_rank % block_k:
        return (f"'The input_size of down's weight = {per_rank} is not divisible by weight quantization block_k = "
                f"{block_k}.'")
    return None


__all__ = ["config_int", "ct_groups", "fp8_block", "int_weight_only", "moe_block_error"]
