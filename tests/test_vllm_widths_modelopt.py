"""vLLM 0.34's ModelOpt width checks beyond the Llama / Qwen dense ones (kvplan.engines.vllm_widths_quant): the
attention o_proj of more families, quant_algo MIXED_PRECISION, and published NVIDIA checkpoints at their TP. Read in
the vllm 0.34.0 wheel (vllm/model_executor/...):

- The o_proj check is the linear method's (quantization/modelopt.py ModelOptLinearMethod.create_weights -> the
  weight scheme's create_weights: KNvfp4Static % 16, KMxfp8Static % 32, KFp8Block128 % 128), whatever the family:
  the o_proj input is total heads x head width (models/qwen3_moe.py Qwen3MoeAttention: config head_dim, else
  hidden / heads; models/deepseek_v2.py DeepseekV2MLAAttention: num_heads x v_head_dim).
- MIXED_PRECISION (ModelOptMixedPrecisionConfig): quantized_layers names each module's quant_algo;
  get_quant_method gives a linear of an algo in LINEAR_ALGOS that algo's scheme and a linear it does not name
  UnquantizedLinearMethod; the routed experts (_resolve_quant_algo: a key under "...mlp.experts.") MXFP8 ->
  ModelOptMxFp8FusedMoE (create_weights: intermediate_size_per_partition % 32), FP8_PB_WO -> fp8.py Fp8MoEMethod
  with blocks [group_size, group_size] (128 by default): fused_moe/oracle/fp8.py refine_fp8_moe_block_shape keeps
  gcd(128, 128, per rank, hidden) where >= 32, else validate_fp8_block_shape_moe refuses.
- NVFP4 routed experts: ModelOptNvFp4FusedMoE.create_weights checks nothing; the backend select_nvfp4_moe_backend
  picks by card decides (engines/vllm_nvfp4_moe.py; tests/test_vllm_nvfp4_moe.py): on the B200 used here FlashInfer
  TRT-LLM pads the intermediate a rank to 64, so no expert width below is refused.

Published configs (tests/data/modelopt_published, byte for byte from ai-dynamo/aiconfigurator
aic-core/src/aiconfigurator_core/model_configs/, commit 095f58a51c4ca8e61b66ec108d86f223f8d559ce):
nvidia/Qwen3-235B-A22B-NVFP4 and nvidia/DeepSeek-V3.1-NVFP4, config.json and hf_quant_config.json each. Every width
below is worked by hand; "constructed" marks a real shape with one field changed to make a split fail.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvplan_inprocess import bundled_variant, estimate_json, refused_line

DATA = Path(__file__).resolve().parent / "data"
PUBLISHED = DATA / "modelopt_published"
B200 = ("--gpu", "b200", "--context", "4k", "--engine", "vllm")


def _published(tmp_path, name: str, **fields) -> str:
    """A checkpoint folder of a published config.json (fields changed, if any) and its hf_quant_config.json."""
    folder = tmp_path / name
    folder.mkdir()
    config = json.loads((PUBLISHED / f"{name}.config.json").read_text())
    (folder / "config.json").write_text(json.dumps(dict(config, **fields)))
    shutil.copy(PUBLISHED / f"{name}.hf_quant_config.json", folder / "hf_quant_config.json")
    return str(folder)


def _tp(path: str, tp: int, *extra: str) -> int:
    return estimate_json(path, *B200, *extra, "--tp", str(tp))["capacity"]["tp"]


# kvplan sizes no MIXED_PRECISION weights: given (Qwen3-30B-A3B's 30.5B parameters at 8 bits or less)
WEIGHTS = ("--weights", "32GB")


@pytest.mark.parametrize("tp", [2, 4, 8, 16])
def test_qwen3_235b_a22b_nvfp4_planned_at_every_tp(tmp_path, tp):
    # nvidia/Qwen3-235B-A22B-NVFP4 (qwen3_moe: 64 heads x head_dim 128, hidden 4,096, moe_intermediate_size 1,536;
    # exclude_modules: lm_head and each layer's mlp.gate, so o_proj is NVFP4): o_proj 8,192 / 16 = 512 = 32 x 16,
    # / 8 = 1,024, / 4 = 2,048, / 2 = 4,096; experts 1,536 / 16 = 96 (B200: TRT-LLM pads it to 128).
    assert _tp(_published(tmp_path, "qwen3-235b-a22b-nvfp4"), tp) == tp


@pytest.mark.parametrize("tp", [4, 8, 16])
def test_deepseek_v3_1_nvfp4_planned_at_every_tp(tmp_path, tp):
    # nvidia/DeepSeek-V3.1-NVFP4 (deepseek_v3: 128 heads x v_head_dim 128; its exclude_modules name each layer's
    # q_a / q_b / kv_a / kv_b projections but not o_proj, which is NVFP4): o_proj 16,384 / 16 = 1,024 = 64 x 16;
    # dense MLP (first_k_dense_replace 3) 18,432 / 16 = 1,152 = 72 x 16; shared expert 2,048 x 1 / 16 = 128;
    # routed experts 2,048 / 16 = 128. nvidia/DeepSeek-R1-FP4 (the same shape) is published for TP 8
    # (its model card: tensor_parallel_size=8, https://model.aibase.com/en/models/details/1915694027871248385)
    assert _tp(_published(tmp_path, "deepseek-v3.1-nvfp4"), tp) == tp


def test_qwen3_moe_o_proj_input_a_rank_checked(tmp_path):
    # constructed: nvidia/Qwen3-235B-A22B-NVFP4 with head_dim 66: o_proj 64 x 66 = 4,224; TP 16 -> 4 heads, 264
    # inputs a rank = 16 x 16 + 8 -> KNvfp4Static's ValueError; TP 8 -> 8 heads, 528 = 33 x 16: planned
    path = _published(tmp_path, "qwen3-235b-a22b-nvfp4", head_dim=66)
    line = refused_line(path, *B200, "--tp", "16")
    assert ("ModelOpt NVFP4 attention o_proj (qwen3_moe.py Qwen3MoeAttention.o_proj) into 264 inputs a rank "
            "(4,224 / 16), not a multiple of 16") in line
    assert "KNvfp4Static.create_weights" in line
    assert _tp(path, 8) == 8


def test_deepseek_mla_o_proj_is_heads_times_v_head_dim(tmp_path):
    # constructed: nvidia/DeepSeek-V3.1-NVFP4 with v_head_dim 129: o_proj 128 x 129 = 16,512; TP 16 -> 8 heads,
    # 1,032 inputs a rank = 64 x 16 + 8 -> refused; TP 8 -> 2,064 = 129 x 16: planned
    path = _published(tmp_path, "deepseek-v3.1-nvfp4", v_head_dim=129)
    line = refused_line(path, *B200, "--tp", "16")
    assert "attention o_proj (deepseek_v2.py DeepseekV2MLAAttention.o_proj) into 1,032 inputs a rank (16,512 / 16)" \
        in line
    assert _tp(path, 8) == 8


def test_o_proj_excluded_by_the_published_self_attn_wildcards_is_unchecked(tmp_path):
    # nvidia/DeepSeek-V3-0324-NVFP4 / GLM-5.1-NVFP4 and others exclude "model.layers.<i>.self_attn*" in every layer:
    # is_layer_excluded (fnmatch) then serves o_proj unquantized. The constructed v_head_dim 129 of the test above,
    # with every layer's self_attn excluded: TP 16 planned (1,032 is never checked)
    quant = json.loads((PUBLISHED / "deepseek-v3.1-nvfp4.hf_quant_config.json").read_text())
    quant["quantization"]["exclude_modules"] += [f"model.layers.{i}.self_attn*" for i in range(61)]
    path = _published(tmp_path, "deepseek-v3.1-nvfp4", v_head_dim=129)
    (Path(path) / "hf_quant_config.json").write_text(json.dumps(quant))
    assert _tp(path, 16) == 16


def _mixed(experts: dict, layers: int = 48, extra: dict | None = None) -> dict:
    """A MIXED_PRECISION quantization_config (config.json layout) whose every layer's routed experts take
    `experts` (ModelOpt names them model.layers.<i>.mlp.experts.<e>.<proj>; one key per layer is enough for
    _resolve_quant_algo's prefix lookup)."""
    table = {f"model.layers.{i}.mlp.experts.0.down_proj": experts for i in range(layers)}
    return {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "ignore": ["lm_head"],
            "quantized_layers": dict(table, **(extra or {}))}


def test_mixed_precision_mxfp8_experts_need_32_a_rank(tmp_path):
    # constructed: Qwen3-30B-A3B (48 layers) with moe_intermediate_size 784 and MIXED_PRECISION MXFP8 experts:
    # TP 8 -> 98 a rank = 3 x 32 + 2 -> ModelOptMxFp8FusedMoE.create_weights' ValueError; the real 768 -> 96 = 3 x 32
    q = _mixed({"quant_algo": "MXFP8"})
    line = refused_line(bundled_variant(tmp_path, "qwen3-30b-a3b", moe_intermediate_size=784, quantization_config=q),
                        *B200, *WEIGHTS, "--tp", "8")
    assert "'MXFP8 MoE requires intermediate_size_per_partition divisible by 32, got 98.'" in line
    assert _tp(bundled_variant(tmp_path, "qwen3-30b-a3b", "real.json", quantization_config=q), 8, *WEIGHTS) == 8


def test_mixed_precision_block_fp8_experts_take_fp8_moe_rules(tmp_path):
    # MIXED_PRECISION FP8_PB_WO experts -> fp8.py Fp8MoEMethod, blocks [128, 128] (group_size absent: 128).
    # Qwen3-30B-A3B (hidden 2,048), TP 8: 768 / 8 = 96, gcd(128, 128, 96, 2,048) = 32 >= 32 -> refined, planned;
    # constructed 784 / 8 = 98: gcd(128, 128, 98, 2,048) = 2 < 32 -> validate_fp8_block_shape_moe: 98 % 128 != 0
    q = _mixed({"quant_algo": "FP8_PB_WO"})
    assert _tp(bundled_variant(tmp_path, "qwen3-30b-a3b", quantization_config=q), 8, *WEIGHTS) == 8
    line = refused_line(bundled_variant(tmp_path, "qwen3-30b-a3b", "odd.json", moe_intermediate_size=784,
                                        quantization_config=q), *B200, *WEIGHTS, "--tp", "8")
    assert "gcd(128, 128, 98, hidden 2048) = 2 < 32" in line
    assert "'The output_size of gate's and up's weight = 98 is not divisible by weight quantization block_n = 128.'" \
        in line


def test_mixed_precision_linears_take_their_own_algo(tmp_path):
    # constructed: Qwen3-30B-A3B (32 heads) with head_dim 66 -> o_proj 32 x 66 = 2,112; TP 8 -> 264 = 16 x 16 + 8.
    # Experts NVFP4 (unchecked). o_proj named W4A16_NVFP4 in every layer -> KNvfp4Static refuses; o_proj not named
    # in quantized_layers -> UnquantizedLinearMethod: planned
    named = {f"model.layers.{i}.self_attn.o_proj": {"quant_algo": "W4A16_NVFP4"} for i in range(48)}
    q = _mixed({"quant_algo": "NVFP4"}, extra=named)
    line = refused_line(bundled_variant(tmp_path, "qwen3-30b-a3b", head_dim=66, quantization_config=q),
                        *B200, *WEIGHTS, "--tp", "8")
    assert ("ModelOpt MIXED_PRECISION (W4A16_NVFP4 layers) attention o_proj (qwen3_moe.py Qwen3MoeAttention.o_proj) "
            "into 264 inputs a rank (2,112 / 8), not a multiple of 16") in line
    bare = bundled_variant(tmp_path, "qwen3-30b-a3b", "bare.json", head_dim=66,
                           quantization_config=_mixed({"quant_algo": "NVFP4"}))
    assert _tp(bare, 8, *WEIGHTS) == 8


def test_fit_screens_the_o_proj_per_split(tmp_path):
    # the constructed head_dim 66 checkpoint of test_qwen3_moe_o_proj_input_a_rank_checked under `kvplan fit`
    # (fit/screen.py asks engines/vllm_widths.py refusal per split): TP 16 refused (264 inputs a rank), TP 8 not
    from kvplan.fit.grid import parse_gpus
    from kvplan.fit.search import FitRequest, search

    path = _published(tmp_path, "qwen3-235b-a22b-nvfp4", head_dim=66)
    req = FitRequest(path, 4096, 1, tuple(parse_gpus("b200")), max_gpus=16, engine="vllm")
    by_split = {(c.tp, c.pp): c for c in search(req, verify_top=1).candidates if c.kv_dtype == "bf16"}
    assert not by_split[(16, 1)].ok and "into 264 inputs a rank (4,224 / 16)" in by_split[(16, 1)].reason
    assert by_split[(8, 1)].reason is None or "o_proj" not in by_split[(8, 1)].reason
