"""vLLM's load layout of MXFP4 experts (kvplan/weights/vllm_mxfp4.py) against hand arithmetic from
the shapes in vllm/model_executor/layers/quantization/mxfp4.py (create_weights, and
process_weights_after_loading's Marlin and Triton branches) and four public "Model loading took"
figures. GiB = 2**30 B. gpt-oss: hidden 2,880, intermediate 2,880; 120b 128 experts x 36 layers,
20b 32 experts x 24 layers; the checkpoint's experts are 1,694,269,440 B per 120b layer (bundled)."""

from __future__ import annotations

from kvplan.weights.record import Weights
from kvplan.weights.vllm_mxfp4 import backend, expert_layer_bytes, loaded_by_vllm, mxfp4_moe_shape

GIB = 2**30
OSS = {"num_local_experts": 128, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36,
       "quantization_config": {"quant_method": "mxfp4"}}


def test_checkpoint_shapes_reproduce_the_bundled_expert_bytes():
    # w13 blocks 128 x 5,760 x 1,440 = 1,061,683,200 + scales 128 x 5,760 x 90 = 66,355,200 + bias 128 x 5,760 x 2
    # = 1,474,560; w2 blocks 128 x 2,880 x 1,440 = 530,841,600 + scales 33,177,600 + bias 737,280: 1,694,269,440
    assert expert_layer_bytes("checkpoint", 128, 2880, 2880) == 1_694_269_440


def test_marlin_pads_intermediate_to_128_and_hidden_to_256():
    # I 2,880 -> 2,944, H 2,880 -> 3,072: w13 128 x 5,888 x 1,536 = 1,157,627,904, scales 128 x 5,888 x 96
    # = 72,351,744, bias 128 x 5,888 x 2 = 1,507,328; w2 128 x 3,072 x 1,472 = 578,813,952, scales
    # 128 x 3,072 x 92 = 36,175,872, bias 128 x 3,072 x 2 = 786,432: 1,847,263,232 per layer
    assert expert_layer_bytes("marlin", 128, 2880, 2880) == 1_847_263_232
    # TP 2: I 1,440 -> 1,536: 603,979,776 + 37,748,736 + 786,432 + 301,989,888 + 18,874,368 + 786,432
    assert expert_layer_bytes("marlin", 128, 2880, 1440) == 964_165_632


def test_triton_keeps_both_scale_copies_and_fp32_biases():
    # I 2,880 (a multiple of 64): weights unchanged 1,061,683,200 + 530,841,600; original scales
    # 66,355,200 + 33,177,600; swizzled scales, rows padded to 256: 128 x 5,888 x 90 = 67,829,760 and
    # 128 x 3,072 x 90 = 35,389,440; FP32 biases 128 x 8,640 x 4 = 4,423,680: 1,799,700,480
    assert expert_layer_bytes("triton", 128, 2880, 2880) == 1_799_700_480
    # TP 2: I 1,440 -> 1,472 (64); w13 128 x 2,944 x 1,440 = 542,638,080 + scales 128 x 2,944 x 90 = 33,914,880;
    # w2 128 x 2,880 x 736 (byte columns to 32) = 271,319,040 + scales 128 x 2,880 x 46 = 16,957,440;
    # swizzled 128 x 3,072 x 90 = 35,389,440 + 128 x 3,072 x 46 = 18,087,936; biases 128 x 5,824 x 4 = 2,981,888
    assert expert_layer_bytes("triton", 128, 2880, 1440) == 921_288_704


def test_backend_per_release_and_gpu():
    # 0.10.1 pins torch 2.7.1 (< 2.8.0): Marlin on Hopper; 0.10.2-0.11.x lack triton_kernels by default;
    # 0.12.0 bundles it; below capability 9.0 always Marlin; 0.25.0 frees the original scales;
    # 0.34.0 keeps one storage per param and swizzled tensor (store_params_in_triton): the same bytes as
    # 0.25-0.33; Blackwell, ROCm and releases after 0.34 are not read
    assert backend((0, 10, 1), "h100-sxm") == "marlin"
    assert backend((0, 11, 2), "h200") == "marlin"
    assert backend((0, 12, 0), "h100-sxm") == "triton" and backend((0, 24, 0), "h100-sxm") == "triton"
    assert backend((0, 25, 0), "h100-sxm") == "triton-freed" and backend((0, 33, 0), "h200") == "triton-freed"
    assert backend((0, 14, 1), "a100-80gb") == "marlin" and backend((0, 30, 0), "l40s") == "marlin"
    assert backend((0, 34, 0), "h100-sxm") == "triton-freed" and backend((0, 34, 0), "a100-80gb") == "marlin"
    assert backend((0, 14, 1), "b200") is None and backend((0, 35, 0), "h100-sxm") is None
    assert backend((0, 10, 0), "h100-sxm") is None and backend(None, "h100-sxm") is None
    assert backend((0, 14, 1), "mi300x") is None


def test_triton_from_0_25_holds_only_the_swizzled_scales():
    # 1,799,700,480 less the original scales (66,355,200 + 33,177,600): 1,700,167,680 per 120b layer,
    # 5,898,240 B over the checkpoint (the padded swizzled scales 3,686,400 + FP32 biases 2,211,840)
    assert expert_layer_bytes("triton-freed", 128, 2880, 2880) == 1_700_167_680
    # TP 2: 921,288,704 less the original scales 33,914,880 + 16,957,440
    assert expert_layer_bytes("triton-freed", 128, 2880, 1440) == 870_416_384


def test_gpt_oss_loaded_bytes_against_public_logs():
    # 120b, checkpoint 65,248,815,744 B. Marlin: + (1,847,263,232 - 1,694,269,440) x 36 = 5,507,776,512 B
    # -> 70,756,592,256 B = 65.897 GiB; vLLM 0.10.1 on an H100 (issue #23278, Marlin warning in the log)
    # logged 65.9651 GiB (-0.10%)
    record = Weights(65_248_815_744, "bundled", parts=tuple(("experts", i, 1_694_269_440) for i in range(36))
                     + (("other", -1, 65_248_815_744 - 36 * 1_694_269_440),))
    marlin, note = loaded_by_vllm(record, OSS, tp=1, version=(0, 10, 1), gpu="h100-sxm")
    assert marlin.total_bytes == 70_756_592_256 and "Marlin" in note
    assert abs(marlin.total_bytes / GIB - 65.9651) / 65.9651 < 0.002
    # Triton: + 105,431,040 x 36 = 3,795,517,440 B -> 69,044,333,184 B = 64.303 GiB; llm-d-benchmark's H100
    # run and issue #33155 (0.14.1, "Using Triton backend") logged 64.38 GiB (-0.12%)
    triton, note = loaded_by_vllm(record, OSS, tp=1, version=(0, 14, 1), gpu="h100-sxm")
    assert triton.total_bytes == 69_044_333_184 and "beside the originals" in note
    assert abs(triton.total_bytes / GIB - 64.38) / 64.38 < 0.002
    # 20b (32 experts, 24 layers; checkpoint 13,761,264,768 B, no tensor table here: the difference is
    # added per layer): Marlin + (461,815,808 - 423,567,360) x 24 = 917,962,752 -> 13.671 GiB vs 13.7194 logged
    # (kserve issue #4657, 0.10.1 with the Marlin warning; -0.35%); Triton + (449,925,120 - 423,567,360) x 24
    # = 632,586,240 -> 13.405 GiB vs llm-d's H100 13.47 (-0.48%)
    small = dict(OSS, num_local_experts=32, num_hidden_layers=24)
    bare = Weights(13_761_264_768, "index")
    m20, _ = loaded_by_vllm(bare, small, tp=1, version=(0, 10, 1), gpu="a100-80gb")
    t20, _ = loaded_by_vllm(bare, small, tp=1, version=(0, 12, 0), gpu="h100-sxm")
    assert m20.total_bytes == 13_761_264_768 + 917_962_752 and t20.total_bytes == 13_761_264_768 + 632_586_240
    assert abs(m20.total_bytes / GIB - 13.7194) / 13.7194 < 0.005
    assert abs(t20.total_bytes / GIB - 13.47) / 13.47 < 0.006


def test_tp_split_gives_the_per_rank_layout():
    # TP 2, Marlin: each layer's experts become 2 x 964,165,632 so the role split (halving) gives one rank's
    record = Weights(36 * 1_694_269_440, "bundled", parts=tuple(("experts", i, 1_694_269_440) for i in range(36)))
    out, _ = loaded_by_vllm(record, OSS, tp=2, version=(0, 10, 1), gpu="h100-sxm")
    assert all(n == 2 * 964_165_632 for _, _, n in out.parts)


def test_no_rule_leaves_the_checkpoint_and_says_why():
    record = Weights(100, "bundled")
    same, note = loaded_by_vllm(record, OSS, tp=1, version=(0, 24, 0), gpu="b200")
    assert same is record and "0.10.1-0.34.x" in note
    # not MXFP4 (or no MoE fields): nothing to say
    assert loaded_by_vllm(record, {"hidden_size": 8}, tp=1, version=(0, 14, 1), gpu="h100-sxm") == (record, None)
    assert mxfp4_moe_shape(dict(OSS, num_local_experts=True)) is None
