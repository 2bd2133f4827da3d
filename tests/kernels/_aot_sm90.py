"""Compile the part-1 kernels for sm_90 (H100/H200) without a GPU and report their PTX loads.

Run as a script without TRITON_INTERPRET (tests/kernels/test_paged_decode.py does it in a
subprocess). Prints one JSON object:
{name: {"ok": bool, "error": str, "loads": {ptx load op: count}, "usage": {"regs", "local_bytes"}}}.
Pointer arguments are given 16-byte divisibility, as Triton's JIT specialises them at launch.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

os.environ.pop("TRITON_INTERPRET", None)

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from kvplan.kernels import lse_merge as lm  # noqa: E402
from kvplan.kernels import offload as of  # noqa: E402
from kvplan.kernels import paged_decode as pd  # noqa: E402
from kvplan.kernels import paged_write as pw  # noqa: E402
from kvplan.kernels import quant_write as qw  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
PAT = re.compile(r"\b(ld\.global[\.\w]*|cp\.async\.c[ag]\.shared\.global|mma\.sync[\.\w]*|wgmma[\.\w]*)")


def compile_one(fn, types, consts):
    sig, attrs = {}, {}
    for i, n in enumerate(fn.arg_names):
        sig[n] = "constexpr" if n in consts else types.get(n, "i32")
        if sig[n].startswith("*"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    cx = {(fn.arg_names.index(n),): v for n, v in consts.items()}
    k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=cx, attrs=attrs), target=TARGET,
                       options={"num_warps": 4})
    return dict(Counter(PAT.findall(k.asm["ptx"]))), _usage(k.asm["cubin"])


def _usage(cubin: bytes) -> dict:
    """Registers and local-memory (spill) bytes from cuobjdump, when triton ships it."""
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        res = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    reg = re.search(r"REG:(\d+)", res)
    local = re.search(r"LOCAL:(\d+)", res)
    return {"regs": int(reg.group(1)) if reg else None, "local_bytes": int(local.group(1)) if local else None}


def cases():
    dec = dict(q_ptr="*bf16", bt_ptr="*i32", lens_ptr="*i32", k_scale_ptr="*fp32", v_scale_ptr="*fp32",
               kq_scale_ptr="*fp16", kq_zero_ptr="*fp16", vq_scale_ptr="*fp16", vq_zero_ptr="*fp16",
               k_res_ptr="*fp16", part_out_ptr="*fp32", part_lse_ptr="*fp32", qk_scale="fp32")
    base = dict(GROUP=4, BLOCK_G=16, HEAD_DIM=128, BLOCK_D=128, BLOCK_N=64, PAGE=16, SCALE_PER_HEAD=False,
                BITS=4, GROUP_K=16, GROUP_V=32, HAS_WINDOW=True, INTERPRET=False)
    for name, kind, kv, extra in (("decode_bf16", 0, "*bf16", {}), ("decode_fp8", 1, "*fp8e4nv", {}),
                                  ("decode_int4", 2, "*u8", {}), ("decode_int2", 2, "*u8", dict(BITS=2)),
                                  ("decode_fp16_gqa8", 0, "*fp16", dict(GROUP=8))):
        t = dict(dec, k_ptr=kv, v_ptr=kv, q_ptr="*fp16" if "fp16" in name else "*bf16")
        yield name, pd._paged_decode_split_kernel, t, dict(base, KV_KIND=kind, **extra)
    for name, cache, kind in (("write_bf16", "*bf16", 2), ("write_fp8", "*fp8e4nv", 1)):
        t = dict(k_ptr="*bf16", v_ptr="*bf16", k_cache_ptr=cache, v_cache_ptr=cache, slot_ptr="*i64",
                 k_scale_ptr="*fp32", v_scale_ptr="*fp32")
        yield name, pw._paged_write_kernel, t, dict(HEAD_DIM=128, BLOCK_T=1, BLOCK_H=8, BLOCK_D=128, CACHE_KIND=kind,
                                                    SCALE_PER_HEAD=True, INTERPRET=False)
    yield "lse_merge", lm._lse_merge_kernel, dict(part_out_ptr="*fp32", part_lse_ptr="*fp32", out_ptr="*fp32",
                                                 lse_ptr="*fp32"), dict(BLOCK_S=8, BLOCK_D=128)
    yield "quant_values", qw._quant_values_kernel, dict(v_ptr="*bf16", slot_ptr="*i64", codes_ptr="*u8",
                                                       scale_ptr="*fp16", zero_ptr="*fp16"), \
        dict(HEAD_DIM=128, GROUP_V=32, BITS=4, BLOCK_T=1)
    yield "quant_keys", qw._quant_key_groups_kernel, dict(x_ptr="*fp32", first_slot_ptr="*i64", codes_ptr="*u8",
                                                         scale_ptr="*fp16", zero_ptr="*fp16"), \
        dict(HEAD_DIM=128, GROUP_K=16, BLOCK_GK=16, BITS=2)
    yield "copy_blocks", of._copy_blocks_kernel, dict(src_ptr="*i32", dst_ptr="*i32", src_ids_ptr="*i64",
                                                     dst_ids_ptr="*i64"), \
        dict(HAS_SRC_IDS=True, HAS_DST_IDS=True, BLOCK=4096)


def main():
    out = {}
    for name, fn, types, consts in cases():
        try:
            loads, usage = compile_one(fn, types, consts)
            out[name] = {"ok": True, "loads": loads, "usage": usage}
        except Exception as e:  # report, the test decides
            out[name] = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:2000]}"}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
