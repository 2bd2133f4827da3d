"""Bytes of an Intel AutoRound checkpoint (quant_method "auto-round", which vLLM 0.34 inc.py
INCConfig.override_quantization_method reads as "inc"; or "inc" itself), read as vLLM 0.34 inc/inc.py and
inc/config_parser.py read its config. vLLM 0.34 accepts no other spelling ("autoround", "intel/auto-round")."""

from __future__ import annotations

from .quant_bytes import QuantBytes, Unsized, _group, _grouped, _ignored, _kept, _positive_int

_AR_SPECIALS = set("*+?^$()[]{}|\\")  # inc/config_parser.py: an extra_config key with one of these is a regex


def read(q: dict) -> QuantBytes:
    """Intel AutoRound, read as vLLM 0.34 inc/inc.py INCConfig.from_config and inc/config_parser.py do. Its int
    packing ("auto_round:auto_gptq", the default, or "auto_round:auto_awq") stores each linear as GPTQ's or AWQ's
    qweight, qzeros and scales without a g_idx (auto-round export_to_autoround/qlinear_triton.py QuantLinear: int32
    qweight [in * b / 32, out], int32 qzeros [in / g, out * b / 32] written whatever `sym` says, float16 scales
    [in / g, out]; vLLM's inc_wna16_linear.py _create_inc_weights loads the same three, no g_idx): b/8 + (2 + b/8)/g.
    mx_fp: weight_packed uint8 [out, in / 2] (4 bits) or [out, in] (8 bits) + a uint8 E8M0 weight_scale per 32
    (inc_mxfp4_linear.py / inc_mxfp8_linear.py). The LM head and anything outside block_name_to_quantize stay
    unquantized (config_parser.py _resolve_raw) unless extra_config quantizes them."""
    kind = str(q.get("data_type") or "int")
    kind = "fp" if kind == "fp8" else kind
    bits = _positive_int(q.get("bits"), "bits", "AutoRound")
    group = _group(q.get("group_size"), "AutoRound") if not isinstance(q.get("group_size"), list) else None
    sym = q.get("sym", True)
    blocks = q.get("block_name_to_quantize", q.get("to_quant_block_names"))
    blocks = blocks.split(",") if isinstance(blocks, str) else blocks
    if blocks is not None and (not isinstance(blocks, list)
                               or not all(isinstance(b, str) and b.endswith("layers") for b in blocks)):
        raise Unsized(f"AutoRound quantizes only the blocks {blocks!r}, and kvplan sizes the decoder layers' stack "
                      "(a name ending in 'layers') only")
    head, kept = _auto_round_extra(q.get("extra_config"), (bits, group, sym))
    _, exclusions = _ignored(kept, "AutoRound", True)
    if "mx_fp" in kind:
        if q.get("packing_format") not in (None, "auto_round:llm_compressor"):
            raise Unsized(f"AutoRound mx_fp with packing_format {q.get('packing_format')!r}: vLLM 0.34 reads "
                          "auto_round:llm_compressor only")
        if bits not in (4, 8) or group != 32:
            raise Unsized(f"AutoRound mx_fp with {bits} bits, group {group}: vLLM 0.34 reads 4 or 8 bits, group 32")
        return QuantBytes(f"AutoRound MXFP{bits}", f"mxfp{bits}", bits / 8 + 1 / 32, keeps_lm_head=not head,
                          exclusions=exclusions)
    if kind != "int":
        raise Unsized(f"AutoRound data_type {kind!r}: kvplan has read the int and mx_fp layouts")
    packing = str(q.get("packing_format") or "auto_round:auto_gptq")
    if packing not in ("auto_round:auto_gptq", "auto_round:auto_awq"):
        raise Unsized(f"AutoRound packing_format {packing!r}: kvplan knows auto_round:auto_gptq and "
                      "auto_round:auto_awq")
    if bits not in (2, 4, 8) or group is None:
        raise Unsized(f"AutoRound int{bits}, group {group}: kvplan has read 2-, 4- and 8-bit packing (32 / bits values "
                      "an int32) with one group size")
    act = q.get("act_bits", 16)
    if isinstance(act, int) and not isinstance(act, bool) and act < 16:
        raise Unsized(f"AutoRound with act_bits {act}: kvplan has read the weight-only (W{bits}A16) layout")
    return QuantBytes(f"AutoRound int{bits}, group {group}", f"int{bits}", _grouped(bits, group, 2, True),
                      keeps_lm_head=not head, exclusions=exclusions)


def _auto_round_extra(extra, default) -> tuple[bool, list[str]]:
    """(extra_config quantizes the LM head, the names it keeps in 16 bits). An entry that gives a module other bits,
    group or symmetry than the config's is a mixed-precision checkpoint kvplan does not split."""
    if extra is None:
        return False, []
    if not isinstance(extra, dict):
        raise Unsized("AutoRound: extra_config is not a table of module names")
    head, kept = False, []
    for name, cfg in extra.items():
        if not isinstance(cfg, dict):
            raise Unsized(f"AutoRound: extra_config entry {name!r} is not a table of settings")
        if not isinstance(cfg.get("bits", default[0]), int) or cfg.get("bits", default[0]) >= 16:
            if any(c in _AR_SPECIALS for c in name):
                _kept([name], "AutoRound")  # a regex: only one of what the estimate keeps anyway
            kept.append(name)
            continue
        mine = (cfg.get("bits", default[0]), cfg.get("group_size", default[1]), cfg.get("sym", default[2]))
        if name.split(".")[-1] == "lm_head" and mine == default:
            head = True
        elif mine != default:
            raise Unsized(f"AutoRound's extra_config gives {name!r} {mine[0]} bits, group {mine[1]}: a "
                          "mixed-precision checkpoint, which kvplan sizes at one rate only")
    return head, kept
