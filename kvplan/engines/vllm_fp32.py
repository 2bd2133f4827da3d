"""The bytes vLLM's weights hold beyond the checkpoint's because vLLM builds some parameters in float32 whatever
the checkpoint's dtype (MoE routers and score-correction biases: configs/param_fp32.py names them and the vLLM
class of each). Each such parameter loads into a 4 B float32 where kvplan's plan sizes it at the checkpoint's float
width, so vLLM's profile adds (4 - width) B per parameter, held whole on every TP rank or split as the module is.

Sized from kvplan's per-module table of the family (configs/weight_tables/__init__.py), only where it adds up to the
family's parameter count. A tensor table (a checkpoint's safetensors, an index, a bundled record) gives the stored
dtypes: the upcast is added only where it stores no float32 tensor at all (then these parameters are stored in a
narrower float); otherwise it may store them in float32 already, and a note says what is not added.
"""

from __future__ import annotations

from dataclasses import dataclass

FP32_BYTES = 4


@dataclass(frozen=True)
class Fp32Upcast:
    whole_params: int  # float32 parameters every TP rank holds whole (routers, norms)
    split_params: int  # float32 parameters split over the TP ranks
    extra_bytes_per_param: int  # 4 - the width kvplan sizes them at (as stored, or 2 for a float32 checkpoint
    # served in bf16, which vLLM loads into 16-bit parameters but these)
    note: str | None = None  # what vLLM may hold in float32 that is not added (the GPU decides, and is not known)

    @property
    def params(self) -> int:
        return self.whole_params + self.split_params

    def per_gpu_bytes(self, tp: int = 1, pp: int = 1) -> int:
        """The extra bytes on one GPU of a (tp, pp) replica: the whole part on every rank of a stage, the rest
        split over every GPU; spread evenly over the stages as config_weights_per_gpu spreads the rest."""
        tp, pp = max(tp, 1), max(pp, 1)
        extra = self.extra_bytes_per_param
        return self.whole_params * extra // pp + self.split_params * extra // (tp * pp)


def fp32_params(modules: list, version=None, capability: tuple[int, int] | None = None) -> tuple[int, int, int]:
    """(parameters every TP rank holds whole, parameters split over TP, parameters whose dtype depends on a GPU
    not known) of a per-module table's modules that vLLM `version` builds in float32 (Module.vllm_fp32; version
    None: the newest release read, 0.34) on a GPU of this CUDA capability. Whole: a module vLLM builds whole
    (Module.whole), a RowParallelLinear bias, or a float-only norm or router (weight_tables.replicated_params:
    ReplicatedLinear / GateLinear, RMSNorm / LayerNorm)."""
    from ..configs.weight_tables import _whole_floats

    whole = split = unknown = 0
    for m in modules:
        held = m.vllm_fp32.held(version, capability) if m.vllm_fp32 is not None else False
        # less what vLLM does not build of it (LongCat-Flash's router bias: Module.vllm_delta)
        n = m.weight + m.other + sum(d.params for d in m.vllm_delta if d.held(version)) if held is not False else 0
        if held is None:
            unknown += n
        elif held and _whole_floats(m):
            whole += n
        elif held:
            split += n
    return whole, split, unknown


def upcast(model, version=None, halve: bool = False, gpu: str | None = None) -> Fp32Upcast | None:
    """What vLLM `version` holds in float32 of `model` on `gpu` (a catalog name) beyond kvplan's plan; None where
    kvplan cannot say (no config, no per-module table that adds up) or vLLM holds nothing in float32. halve: a
    float32 checkpoint served in bf16 (vllm_load.served_from_float32), whose other floats load at 2 B."""
    from ..configs.checkpoint_dtype import float_width_bytes
    from ..configs.param_fp32 import VLLM_FP32
    from ..capacity.gpus import CUDA_CAPABILITY
    from .vllm_load import module_table

    checked = module_table(model) if model.model_type in VLLM_FP32 else None
    if checked is None or checked[0].model_type not in VLLM_FP32:
        return None
    f, modules = checked
    whole, split, unknown = fp32_params(modules, version, CUDA_CAPABILITY.get(gpu or ""))
    if not whole + split + unknown:
        return None
    note = None
    if unknown:
        note = (f"vLLM {version or '0.34'} holds {unknown:,} more parameters (router gates) in float32 on GPUs other "
                "than Hopper and Blackwell (GateLinear force_fp32_compute: configs/param_fp32.py); the GPU is not "
                "known, so they are not added")
    width = 2 if halve else float_width_bytes(f)
    return Fp32Upcast(whole, split, FP32_BYTES - width, note)


def stores_no_float32(record) -> bool:
    """Whether a tensor table's dtypes show no float32 (nor float64) tensor: then the parameters vLLM builds in
    float32 are stored narrower, and the upcast is not counted twice. False without dtypes."""
    dtypes = [d.dtype.upper() for d in record.by_dtype]
    return bool(dtypes) and not any(d in ("F32", "FLOAT32", "F64", "FLOAT64") for d in dtypes)


def describe(up: Fp32Upcast, tp: int = 1, pp: int = 1) -> str:
    """', + X MiB of ...' for the weights line."""
    added = up.per_gpu_bytes(tp, pp)
    size = f"{added / 2**20:,.1f} MiB" if added >= 2**20 else f"{added:,} B"
    return (f", + {size} for the {up.params:,} parameters vLLM holds in float32 "
            f"(routers, score biases, Mamba mixers' A: + {up.extra_bytes_per_param} B each, configs/param_fp32.py)")


__all__ = ["Fp32Upcast", "fp32_params", "upcast", "stores_no_float32", "describe", "FP32_BYTES"]
