"""How one cached element is stored: bits per element plus scale metadata.

A storage format turns a token count into exact integer bytes for one cached
tensor of `heads x dim` elements per token. Quantized formats carry scales
(and zero points for asymmetric integer formats) whose bytes are counted:

- granularity "none": plain floating point (bf16, fp16, fp32).
- "tensor" / "head": one fp32 scale per cache tensor or per KV head, shared by
  every token and sequence (vLLM's fp8 scales). Counted once per layer, not per
  token, in `fixed_bytes`.
- "group": one scale (+ zero point) per `group_size` channels of each token and
  head (int8/int4/int2 per token, and the DeepSeek-V3.2 indexer's fp8 keys).
- "kivi": keys are grouped per channel over `group_size` tokens, values per
  token over `group_size` channels. Codes (and the scale slots of the open key
  group) are allocated for every token; each sequence also keeps a 16-bit
  buffer of `group_size` key rows for the open group, as kvplan's KIVI kernel
  does (kernels/quant_write.py). The newest `residual_tokens` tokens stay in
  16-bit for K and V (KIVI's recent window; the kernel does not implement it).
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from .._record import record
from ..errors import UsageError

FP32_SCALE_BYTES = 4
FP16_SCALE_BYTES = 2


@record
class Storage:
    name: str  # "bf16", "fp8_e4m3", "int4", ...
    bits: int
    granularity: str = "none"  # none | tensor | head | group | kivi
    group_size: int = 0
    scale_bytes: int = 0  # bytes of one scale
    zero_point: bool = False  # asymmetric: one zero point (same width) per scale
    residual_tokens: int = 0  # kivi: newest tokens kept in 16-bit
    residual_bits: int = 16

    @property
    def metadata_bytes_per_group(self) -> int:
        return self.scale_bytes * (2 if self.zero_point else 1)

    @property
    def is_quantized(self) -> bool:
        return self.granularity != "none"

    def payload_bytes(self, elements: int) -> int:
        return (elements * self.bits + 7) // 8

    def tensor_bytes(self, tokens: int, heads: int, dim: int, role: str) -> int:
        """Exact bytes of `tokens` tokens of one cached tensor (role key|value|latent)."""
        if tokens <= 0 or dim == 0:
            return 0
        row = heads * dim
        if self.granularity in ("none", "tensor", "head"):
            return tokens * self.payload_bytes(row)
        if self.granularity == "group":
            groups = heads * math.ceil(dim / self.group_size)
            return tokens * (self.payload_bytes(row) + groups * self.metadata_bytes_per_group)
        # kivi
        quantized = max(tokens - self.residual_tokens, 0)
        recent = tokens - quantized
        full_row = (row * self.residual_bits + 7) // 8
        if role == "key":
            meta = math.ceil(quantized / self.group_size) * row * self.metadata_bytes_per_group
            buffered = self.group_size  # the open key group, in 16-bit, per sequence
        else:
            meta = quantized * heads * math.ceil(dim / self.group_size) * self.metadata_bytes_per_group
            buffered = 0
        return quantized * self.payload_bytes(row) + meta + (recent + buffered) * full_row

    def marginal_bytes_per_token(self, heads: int, dim: int, role: str) -> Fraction:
        """Bytes one more token adds in steady state (KIVI amortises key scales)."""
        if dim == 0:
            return Fraction(0)
        row = heads * dim
        if self.granularity in ("none", "tensor", "head"):
            return Fraction(self.payload_bytes(row))
        if self.granularity == "group":
            groups = heads * math.ceil(dim / self.group_size)
            return Fraction(self.payload_bytes(row) + groups * self.metadata_bytes_per_group)
        if role == "key":
            return Fraction(self.payload_bytes(row)) + Fraction(
                row * self.metadata_bytes_per_group, self.group_size
            )
        groups = heads * math.ceil(dim / self.group_size)
        return Fraction(self.payload_bytes(row) + groups * self.metadata_bytes_per_group)

    def fixed_bytes(self, heads: int) -> int:
        """Scales shared by all tokens of one cached tensor of one layer."""
        if self.granularity == "tensor":
            return self.scale_bytes
        if self.granularity == "head":
            return self.scale_bytes * heads
        return 0


BF16 = Storage("bf16", 16)
FP16 = Storage("fp16", 16)
FP32 = Storage("fp32", 32)

# Torch/HF dtype names -> storage for unquantized caches and recurrent states.
_FLOAT_NAMES = {
    "bfloat16": BF16,
    "bf16": BF16,
    "float16": FP16,
    "fp16": FP16,
    "half": FP16,
    "float32": FP32,
    "fp32": FP32,
    "float": FP32,
}

KV_DTYPES = ("bf16", "fp16", "fp32", "fp8", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "int2")


def float_storage(name: str) -> Storage:
    try:
        return _FLOAT_NAMES[str(name).lower()]
    except KeyError:
        raise UsageError(
            f"unknown dtype {name!r}", f"use one of {', '.join(sorted(set(_FLOAT_NAMES)))}"
        ) from None


def kv_storage(
    name: str,
    *,
    group_size: int | None = None,
    scales: str = "tensor",
    kivi: bool = False,
    residual_tokens: int = 0,
) -> Storage:
    """A KV storage format by name: bf16|fp16|fp32|fp8[_e4m3|_e5m2]|int8|int4|int2.

    fp8 uses fp32 scales per tensor (vLLM's default) or per head. Integer formats
    are asymmetric with an fp16 scale and zero point per group of `group_size`
    channels (default 64 for int8/int4, 32 for int2), or the KIVI layout.
    """
    key = str(name).lower()
    if key in ("bf16", "fp16", "fp32", "bfloat16", "float16", "float32"):
        return float_storage(key)
    if key in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        if scales not in ("tensor", "head"):
            raise UsageError(f"fp8 scales must be 'tensor' or 'head', got {scales!r}")
        fmt = "fp8_e5m2" if key == "fp8_e5m2" else "fp8_e4m3"
        return Storage(fmt, 8, granularity=scales, scale_bytes=FP32_SCALE_BYTES)
    if key in ("int8", "int4", "int2"):
        bits = int(key[3:])
        group = group_size if group_size is not None else (32 if bits == 2 else 64)
        if group <= 0:
            raise UsageError(f"{key}: group size must be positive, got {group}")
        return Storage(
            key,
            bits,
            granularity="kivi" if kivi else "group",
            group_size=group,
            scale_bytes=FP16_SCALE_BYTES,
            zero_point=True,
            residual_tokens=residual_tokens if kivi else 0,
        )
    raise UsageError(f"unknown KV dtype {name!r}", f"use one of {', '.join(KV_DTYPES)}")


def with_residual(storage: Storage, residual_tokens: int) -> Storage:
    return replace(storage, residual_tokens=residual_tokens)
