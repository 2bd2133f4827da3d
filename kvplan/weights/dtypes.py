"""Element sizes of the formats checkpoints store weights in.

safetensors: bits per element of every dtype the format defines (the `Dtype`
enum of the safetensors reference implementation; F4 and F6 are packed, so a
tensor's bytes are elements x bits / 8). GGUF: ggml stores most types in
blocks; a tensor of n elements takes n / block_elements x block_bytes bytes
(block sizes from ggml's ggml-common.h, as the gguf package's GGML_QUANT_SIZES
lists them).
"""

from __future__ import annotations

SAFETENSORS_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8,
    "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32,
    "I64": 64, "U64": 64, "F64": 64, "C64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

_QK_K = 256  # elements of a ggml "K" super-block

# ggml type id -> (name, elements per block, bytes per block)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 2 + 16),
    3: ("Q4_1", 32, 2 + 2 + 16),
    6: ("Q5_0", 32, 2 + 4 + 16),
    7: ("Q5_1", 32, 2 + 2 + 4 + 16),
    8: ("Q8_0", 32, 2 + 32),
    9: ("Q8_1", 32, 4 + 4 + 32),
    10: ("Q2_K", _QK_K, 2 + 2 + _QK_K // 16 + _QK_K // 4),
    11: ("Q3_K", _QK_K, 2 + _QK_K // 4 + _QK_K // 8 + 12),
    12: ("Q4_K", _QK_K, 2 + 2 + _QK_K // 2 + 12),
    13: ("Q5_K", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 8 + 12),
    14: ("Q6_K", _QK_K, 2 + _QK_K // 2 + _QK_K // 4 + _QK_K // 16),
    15: ("Q8_K", _QK_K, 4 + _QK_K + _QK_K // 8),
    16: ("IQ2_XXS", _QK_K, 2 + _QK_K // 4),
    17: ("IQ2_XS", _QK_K, 2 + _QK_K // 4 + _QK_K // 32),
    18: ("IQ3_XXS", _QK_K, 2 + _QK_K // 4 + _QK_K // 8),
    19: ("IQ1_S", _QK_K, 2 + _QK_K // 8 + _QK_K // 16),
    20: ("IQ4_NL", 32, 2 + 16),
    21: ("IQ3_S", _QK_K, 2 + _QK_K // 4 + _QK_K // 8 + _QK_K // 32 + 4),
    22: ("IQ2_S", _QK_K, 2 + _QK_K // 4 + _QK_K // 16),
    23: ("IQ4_XS", _QK_K, 2 + 2 + _QK_K // 2 + _QK_K // 64),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", _QK_K, _QK_K // 8 + _QK_K // 16 + _QK_K // 32),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", _QK_K, 2 + 4 * 13),
    35: ("TQ2_0", _QK_K, 2 + 64),
    39: ("MXFP4", 32, 1 + 16),
}
