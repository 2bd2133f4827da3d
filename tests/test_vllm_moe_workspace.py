"""The fused-MoE workspace of vLLM's profiling run (kvplan/engines/vllm_moe_workspace.py), worked out by hand
from the shapes read in vLLM's source (the module doc): 2 B per element (bf16), each persistent tensor rounded
up to 256 B (v1/worker/workspace.py get_simultaneous)."""

from __future__ import annotations

from kvplan.engines.vllm_moe_workspace import (
    MoeShape,
    moe_shape,
    triton_experts_bytes,
    workspace,
)

# the MoE fields of the public configs (config.json)
QWEN3_235B_FP8 = {"num_experts_per_tok": 8, "moe_intermediate_size": 1536, "intermediate_size": 12288,
                  "hidden_size": 4096, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
GPT_OSS = {"num_experts_per_tok": 4, "experts_per_token": 4, "intermediate_size": 2880, "hidden_size": 2880,
           "quantization_config": {"quant_method": "mxfp4"}}
QWEN3_30B_A3B = {"num_experts_per_tok": 8, "moe_intermediate_size": 768, "intermediate_size": 6144,
                 "hidden_size": 2048}
QWEN3_NEXT = {"num_experts_per_tok": 10, "moe_intermediate_size": 512, "intermediate_size": 5120,
              "hidden_size": 2048}


def test_config_fields():
    assert moe_shape(QWEN3_235B_FP8) == MoeShape(8, 1536, 4096, "fp8-block")  # moe_intermediate_size first
    assert moe_shape(GPT_OSS) == MoeShape(4, 2880, 2880, "mxfp4")
    assert moe_shape({"text_config": QWEN3_30B_A3B}) == MoeShape(8, 768, 2048, "unquantized")
    assert moe_shape({"hidden_size": 4096, "intermediate_size": 14336}) is None  # dense: no experts per token


def test_the_256_byte_alignment():
    # M 3, topk 1, I 6, H 5: workspace13 (3, 1, max(6, 5)) = 18 elements = 36 B -> 256 (the output, 15, shares it);
    # workspace2 (3, 1, max(12, 5)) = 36 elements = 72 B -> 256
    assert triton_experts_bytes(3, MoeShape(1, 6, 5, "unquantized"), tp=1, chunk=None) == 512


def test_qwen3_235b_fp8_tp4_on_sm120_0_27():
    # TritonExperts (the FP8 oracle's TRITON on SM120, DeepGEMM off), 8,192 tokens, TP 4: I = 1,536 / 4 = 384.
    # workspace13 (8,192, 8, max(384, 4,096)) = 268,435,456 elements (the (8,192, 4,096) output shares it);
    # workspace2 (8,192, 8, max(768, 4,096)) = 268,435,456; x 2 B each = 1,073,741,824 B = 1.00 GiB, persistent
    ws = workspace("0.27.1", "rtx-pro-6000", QWEN3_235B_FP8, tp=4, tokens=8192)
    assert ws.bytes == 1_073_741_824 and ws.persistent and "TritonExperts" in ws.path
    # the same on Hopper from 0.17 (TRITON moved to the front for block FP8 without EP); before 0.17 not modelled
    assert workspace("0.17.0", "h100-sxm", QWEN3_235B_FP8, tp=4, tokens=8192).bytes == 1_073_741_824
    assert workspace("0.16.0", "h100-sxm", QWEN3_235B_FP8, tp=4, tokens=8192).bytes is None
    # on SM120 before 0.14: fused_experts' per-call caches, cache13 8,192 x 8 x max(768, 4,096) + cache2
    # 8,192 x 8 x 384 = 268,435,456 + 25,165,824 elements x 2 B = 587,202,560 B, transient
    early = workspace("0.13.0", "rtx-pro-6000", QWEN3_235B_FP8, tp=4, tokens=8192)
    assert early.bytes == 587_202_560 and not early.persistent
    # the GPU decides the kernel: unknown GPU, Blackwell SM100, an unread release: no figure
    assert workspace("0.27.1", None, QWEN3_235B_FP8, tp=4, tokens=8192).bytes is None
    assert workspace("0.27.1", "b200", QWEN3_235B_FP8, tp=4, tokens=8192).bytes is None
    assert workspace("0.9.2", "h100-sxm", QWEN3_235B_FP8, tp=4, tokens=8192).bytes is None
    # 0.34.0 (sdist): TritonExperts.workspace_shapes, _allocate_buffers and the FP8 oracle's order as in 0.33:
    # the same 1.00 GiB; a release not read yet: no figure
    assert workspace("0.34.0", "rtx-pro-6000", QWEN3_235B_FP8, tp=4, tokens=8192).bytes == 1_073_741_824
    assert workspace("0.35.0", "rtx-pro-6000", QWEN3_235B_FP8, tp=4, tokens=8192).bytes is None


def test_gpt_oss_20b_marlin_on_a100():
    # MarlinExperts from 0.17: N = 2,880 padded to 128 = 2,944, K = 2,880 padded to 256 = 3,072; 2,048 tokens x 4.
    # workspace13 (8,192, max(2,944, 3,072)) = 25,165,824 elements = 50,331,648 B (the output, 2,048 x 3,072,
    # shares it); workspace2 8,192 x max(5,888, 3,072) = 48,234,496 elements = 96,468,992 B: 146,800,640 B
    ws = workspace("0.19.0", "a100-80gb", GPT_OSS, tokens=2048)
    assert ws.bytes == 146_800_640 and ws.persistent and "Marlin" in ws.path
    # 0.10.1-0.16: fused_marlin_moe's per-call caches, M x topk x (max(2N, K) + N): gpt-oss-120b (same
    # expert shapes) on an H100 with 0.10.1 at 8,192 tokens: 32,768 x (5,888 + 2,944) x 2 B = 578,813,952 B
    early = workspace("0.10.1", "h100-sxm", GPT_OSS, tokens=8192)
    assert early.bytes == 578_813_952 and not early.persistent


def test_gpt_oss_triton_kernels_on_hopper_is_per_call():
    # triton_kernels (Hopper from 0.12): intermediate (8,192 x 4, 2,880) + output (8,192, 2,880), bf16:
    # 8,192 x 2,880 x 5 x 2 B = 235,929,600 B, transient
    ws = workspace("0.14.1", "h100-sxm", GPT_OSS, tokens=8192)
    assert ws.bytes == 235_929_600 and not ws.persistent


def test_unquantized_chunking_by_release():
    # Qwen3-30B-A3B (topk 8, I 768, H 2,048) on an H100, 32,768 tokens. 0.17 chunks at 16,384 tokens:
    # workspace13 16,384 x 8 x 2,048 and workspace2 16,384 x 8 x max(1,536, 2,048) = 268,435,456 elements each,
    # and the whole output 32,768 x 2,048 = 67,108,864: 603,979,776 elements x 2 B = 1,207,959,552 B
    assert workspace("0.17.0", "h100-sxm", QWEN3_30B_A3B, tokens=32768).bytes == 1_207_959_552
    # 0.19+ does not chunk: 2 x 32,768 x 8 x 2,048 x 2 B = 2,147,483,648 B; 0.18 is not read
    assert workspace("0.19.0", "h100-sxm", QWEN3_30B_A3B, tokens=32768).bytes == 2_147_483_648
    assert workspace("0.18.0", "h100-sxm", QWEN3_30B_A3B, tokens=32768).bytes is None
    assert workspace("0.18.0", "h100-sxm", QWEN3_30B_A3B, tokens=8192).bytes == 2 * 8192 * 8 * 2048 * 2
    # 0.13: fused_experts' per-call caches; 0.14: the modular kernel's persistent TritonExperts workspace
    assert not workspace("0.13.0", "a100-80gb", QWEN3_30B_A3B, tokens=8192).persistent
    assert workspace("0.14.0", "a100-80gb", QWEN3_30B_A3B, tokens=8192).persistent


def test_qwen3_next_tp2_0_10_2_per_call():
    # fused_experts_impl, TP 2: I = 256, chunk 32,768 > 8,192. cache13 8,192 x 10 x max(512, 2,048) = 167,772,160
    # + cache2 8,192 x 10 x 256 = 20,971,520 elements, x 2 B = 377,487,360 B, transient
    ws = workspace("0.10.2", "h200", QWEN3_NEXT, tp=2, tokens=8192)
    assert ws.bytes == 377_487_360 and not ws.persistent
    assert workspace("0.27.1", "h200", {"hidden_size": 1}, tokens=8192) is None  # no experts: no workspace


def test_a_rocm_card_is_named_not_called_unknown():
    # the MI355X is in the catalog (a ROCm card, no CUDA capability): the note names it and the path left unread,
    # instead of calling the GPU unknown; a plan without --gpu still says the GPU is not known
    ws = workspace("0.34.0", "mi355x", QWEN3_30B_A3B, tokens=8192)
    assert ws.bytes is None and "mi355x is a ROCm card" in ws.path and "not known" not in ws.path
    assert "not known here" in workspace("0.34.0", None, QWEN3_30B_A3B, tokens=8192).path
