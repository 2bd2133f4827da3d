"""vLLM 0.34's NVFP4 routed experts under a compressed-tensors config whose groups differ (kvplan.engines.vllm_nvfp4_moe):
the experts take the scheme of the group vLLM matches for them, not the config's every group.

Read in the vllm 0.34.0 wheel (model_executor/layers/quantization/compressed_tensors/):
- compressed_tensors_moe/compressed_tensors_moe.py CompressedTensorsMoEMethod.get_moe_method: it first maps
  "RoutedExperts" to the "Linear" target's scheme (compressed_tensors.py _add_fused_moe_to_target_scheme_map), then asks
  get_scheme_dict for "<layer_name>.0.<gate>", "<layer_name>.0.<up>" and "<layer_name>.0.<down>" (the checkpoint's
  projection names, routed_experts.py: gate_proj / up_proj / down_proj unless the model passes ckpt_names); an NVFP4
  weight scheme (_is_nvfp4_format) with NVFP4 input activations -> CompressedTensorsW4A4Nvfp4MoEMethod, which asks
  fused_moe/oracle/nvfp4.py select_nvfp4_moe_backend (FLASHINFER_CUTLASS on SM 12.x: swizzle_blockscale pads the
  gate/up scale rows to 128 and prepare_nvfp4_moe_layer_for_fi_or_cutlass raises for gated experts).
- get_scheme_dict -> utils.py find_matched_target: the name against each target in the order of target_scheme_map
  (group by group, compressed_tensors.py _quantization_scheme_map_from_config), equal or re.match after "re:"
  (utils/config_utils.py is_equal_or_regex_match); else the class name with check_contains.
So an FP8 attention group beside an NVFP4 experts group leaves the experts W4A4 NVFP4: refused on SM 12.x where
2 x the intermediate a rank is not a multiple of 128, as an all-NVFP4 config is. Before this fix kvplan asked every
group to be NVFP4 and planned such a split.

Config: the bundled Qwen3-30B-A3B (moe_intermediate_size 768, "<layer>.mlp.experts", qwen3_moe.py) with groups on the
shape of unsloth/Qwen3.6-35B-A3B-NVFP4-Fast's (an FP8 group for attention, NVFP4 for the experts).
"""

from __future__ import annotations

from kvplan_inprocess import bundled_variant, estimate_json, refused_line

RUN = ("--context", "4k", "--engine", "vllm", "--weights", "20GB")
NVFP4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True,
         "dynamic": False}
FP8 = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}


def _config(tmp_path, experts_target: str, input_activations: bool = True, name: str = "config.json") -> str:
    groups = {
        "group_0": {"format": "float-quantized", "weights": FP8,
                    "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True},
                    "targets": ["re:.*self_attn.(q|k|v|o)_proj$"]},
        "group_1": {"format": "nvfp4-pack-quantized", "weights": NVFP4,
                    "input_activations": dict(NVFP4, dynamic="local") if input_activations else None,
                    "targets": [experts_target]},
    }
    quant = {"quant_method": "compressed-tensors", "format": "mixed-precision", "config_groups": groups,
             "ignore": ["lm_head", "re:.*mlp.gate$"]}
    return bundled_variant(tmp_path, "qwen3-30b-a3b", name, quantization_config=quant)


def test_nvfp4_experts_group_beside_an_fp8_group_refused_on_sm120(tmp_path):
    # 768 / 8 = 96 a rank, 2 x 96 = 192 = 128 + 64: swizzle_blockscale pads 64 rows -> NotImplementedError
    path = _config(tmp_path, "re:.*mlp.experts.*")
    assert "compressed-tensors NVFP4 experts' intermediate size of 768 into 96 a rank (768 / 8)" in refused_line(
        path, "--gpu", "rtx-pro-6000", *RUN, "--tp", "8")
    # 768 / 4 = 192, 2 x 192 = 384 = 3 x 128: nothing padded -> planned; and TRT-LLM (B200) pads -> planned at 8
    assert estimate_json(path, "--gpu", "rtx-pro-6000", *RUN, "--tp", "4")["capacity"]["tp"] == 4
    assert estimate_json(path, "--gpu", "b200", *RUN, "--tp", "8")["capacity"]["tp"] == 8


def test_the_linear_group_reaches_the_experts_through_routed_experts(tmp_path):
    # "Linear" is copied to "RoutedExperts" (_add_fused_moe_to_target_scheme_map): the NVFP4 "Linear" group serves the
    # experts, whose names no other target matches
    path = _config(tmp_path, "Linear")
    assert "into 96 a rank (768 / 8)" in refused_line(path, "--gpu", "rtx-pro-6000", *RUN, "--tp", "8")


def test_experts_matched_by_no_nvfp4_group_are_not_refused(tmp_path):
    # the NVFP4 group's target names no routed expert (Qwen3-30B-A3B has no shared expert either): the experts match no
    # target and stay unquantized (get_moe_method -> UnquantizedFusedMoEMethod), so no NVFP4 backend is asked
    path = _config(tmp_path, "re:.*mlp.shared_expert.*")
    assert estimate_json(path, "--gpu", "rtx-pro-6000", *RUN, "--tp", "8")["capacity"]["tp"] == 8
    # W4A16 experts (no input_activations): activation key None, which only Marlin / Humming take; both pad
    a16 = _config(tmp_path, "re:.*mlp.experts.*", input_activations=False, name="a16.json")
    assert estimate_json(a16, "--gpu", "rtx-pro-6000", *RUN, "--tp", "8")["capacity"]["tp"] == 8
