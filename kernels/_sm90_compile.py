"""Compile the part-2 kernels for a Hopper GPU (sm_90) without a GPU.

The interpreter runs kernels as Python, so it cannot catch what only the
compiler rejects (tl.dot shape rules, scoping of values across branches,
type mismatches in loop-carried values) or report register spills. Triton
wheels ship ptxas, so ``triton.compile`` with a GPUTarget produces a cubin on
any machine. Must run in a process WITHOUT TRITON_INTERPRET=1 (the kernels must
be compiled-mode JITFunctions); the tests call it through a subprocess:

    python -m kvplan.kernels._sm90_compile [group ...]   # groups: mla quest evict csa recurrent

Prints one line per kernel (registers, spill bytes when cuobjdump is present)
and exits 1 if any kernel fails to compile or spills.
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import tempfile


def _cases():
    from . import (compact, csa_compress, csa_decode, mla_cache, mla_decode, quest_meta,
                   quest_score, recurrent_state)

    mla_dec_types = {"ql_ptr": "*bf16", "qr_ptr": "*bf16", "bt_ptr": "*i32", "lens_ptr": "*i32",
                     "kscale_ptr": "*fp32", "out_ptr": "*bf16", "ws_acc_ptr": "*fp32",
                     "ws_lse_ptr": "*fp32", "sm_scale_log2": "fp32"}
    out = []
    for cache_t, kind, has_scale in (("*fp8e4nv", 3, True), ("*bf16", 1, False)):
        out.append(("mla", mla_cache._mla_write_kernel,
                    {"c_ptr": "*bf16", "r_ptr": "*bf16", "cache_ptr": cache_t, "slot_ptr": "*i64",
                     "scale_ptr": "*fp32"},
                    {"R": 512, "P": 64, "BLOCK_R": 512, "BLOCK_P": 64, "HAS_SCALE": has_scale,
                     "OUT_KIND": kind, "INTERP": False}, 4))
        for splits in (1, 4):
            out.append(("mla", mla_decode._mla_decode_kernel, dict(mla_dec_types, cache_ptr=cache_t),
                        {"BS": 64, "R": 512, "P": 64, "BLOCK_H": 16, "BLOCK_N": 16, "BLOCK_R": 512,
                         "BLOCK_P": 64, "NUM_SPLITS": splits, "HAS_SCALE": has_scale, "INTERP": False}, 8))
        for bh, warps in ((32, 8), (64, 16)):
            out.append(("mla", mla_decode._mla_decode_kernel, dict(mla_dec_types, cache_ptr=cache_t),
                        {"BS": 64, "R": 512, "P": 64, "BLOCK_H": bh, "BLOCK_N": 16, "BLOCK_R": 512,
                         "BLOCK_P": 64, "NUM_SPLITS": 4, "HAS_SCALE": has_scale, "INTERP": False}, warps))
    out.append(("mla", mla_decode._mla_merge_kernel,
                {"ws_acc_ptr": "*fp32", "ws_lse_ptr": "*fp32", "out_ptr": "*bf16"},
                {"R": 512, "BLOCK_R": 512, "NUM_SPLITS": 4, "BLOCK_S": 4}, 4))
    for k_t, has_scale, per_head, meta_bf16 in (("*bf16", False, False, True),
                                                ("*fp8e4nv", True, True, False),
                                                ("*fp8e4nv", True, False, True)):
        m_t = "*bf16" if meta_bf16 else "*fp32"
        out.append(("quest", quest_meta._quest_meta_kernel,
                    {"k_ptr": k_t, "slot_ptr": "*i64", "last_ptr": "*i64", "scale_ptr": "*fp32",
                     "kmin_ptr": m_t, "kmax_ptr": m_t},
                    {"BS": 16, "HD": 1024, "D": 128, "BLOCK_T": 16, "BLOCK_C": 256, "HAS_SCALE": has_scale,
                     "SCALE_PER_HEAD": per_head, "META_BF16": meta_bf16}, 4))
    for m_t in ("*bf16", "*fp32"):
        out.append(("quest", quest_score._quest_score_kernel,
                    {"q_ptr": "*bf16", "kmin_ptr": m_t, "kmax_ptr": m_t, "bt_ptr": "*i32",
                     "lens_ptr": "*i32", "out_ptr": "*fp32"},
                    {"BS": 16, "D": 128, "G": 4, "BLOCK_P": 16, "BLOCK_D": 128}, 4))
    out.append(("evict", compact._copy_rows_kernel,
                {"src_k": "*u8", "src_v": "*u8", "dst_k": "*u8", "dst_v": "*u8", "src_rows": "*i64",
                 "dst_rows": "*i64"}, {"ROW": 2048, "BLOCK": 1024}, 4))
    out.append(("csa", csa_compress._csa_compress_kernel,
                {"k_ptr": "*bf16", "v_ptr": "*bf16", "lens_ptr": "*i32", "ck_ptr": "*bf16", "cv_ptr": "*bf16"},
                {"M": 4, "D": 128, "BLOCK_M": 4, "BLOCK_D": 128, "OUT_KIND": 1, "INTERP": False}, 4))
    out.append(("csa", csa_decode._csa_score_kernel,
                {"q_ptr": "*bf16", "ck_ptr": "*bf16", "ng_ptr": "*i32", "out_ptr": "*fp32"},
                {"D": 128, "GRP": 4, "BLOCK_E": 16, "BLOCK_D": 128}, 4))
    out.append(("csa", csa_decode._csa_attn_kernel,
                {"q_ptr": "*bf16", "ck_ptr": "*bf16", "cv_ptr": "*bf16", "sel_ptr": "*i64", "lk_ptr": "*bf16",
                 "lv_ptr": "*bf16", "llen_ptr": "*i32", "out_ptr": "*bf16", "qk_scale": "fp32"},
                {"D": 128, "GRP": 4, "BLOCK_G": 16, "BLOCK_N": 16, "BLOCK_D": 128}, 4))
    out.append(("recurrent", recurrent_state._recurrent_kernel,
                {"q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32", "s_ptr": "*fp32", "decay_ptr": "*fp32",
                 "lens_ptr": "*i32", "o_ptr": "*fp32"},
                {"DK": 128, "DV": 128, "BLOCK_K": 128, "BLOCK_V": 64}, 4))
    return out


def main(groups: list[str]) -> int:
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        print("unset TRITON_INTERPRET to compile for sm_90")
        return 2
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", 90, 32)
    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    bad = 0
    for group, fn, types, consts, warps in _cases():
        if groups and group not in groups:
            continue
        name = fn.fn.__name__
        sig = {p: ("constexpr" if p in consts else types.get(p, "i32"))
               for p in inspect.signature(fn.fn).parameters}
        try:
            k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts), target=target,
                               options={"num_warps": warps})
        except Exception as e:  # noqa: BLE001 - report every kernel
            print(f"FAIL {group:9s} {name}: {type(e).__name__}: {str(e)[:2000]}")
            bad += 1
            continue
        usage = ""
        if os.path.exists(cuobjdump):
            with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                f.write(k.asm["cubin"])
            res = subprocess.run([cuobjdump, "--dump-resource-usage", f.name], capture_output=True,
                                 text=True).stdout
            os.unlink(f.name)
            usage = " ".join(re.findall(r"REG:\d+|LOCAL:\d+", res))
            if re.search(r"LOCAL:[1-9]", res):
                bad += 1
                usage += "  <- spills"
        print(f"OK   {group:9s} {name:22s} {usage}")
    return 1 if bad else 0


def ptxas_available() -> bool:
    import triton

    return os.path.exists(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))


def check_in_subprocess(*groups: str) -> tuple[int, str]:
    """Run :func:`main` in a fresh interpreter without TRITON_INTERPRET; (returncode, output)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    r = subprocess.run([sys.executable, "-m", "kvplan.kernels._sm90_compile", *groups], env=env,
                       capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
