"""Real configs from the fourth sweep of public model reports (docs/models.md "Real configs from the Hub"): each
report prints the config and every tensor's shape, dtype and size; each expected figure is summed here from that
tensor list by hand.

tests/data/configs/:
- glm-4.5-fp8-transformers5-trimmed.json: zai-org GLM-4.5-FP8 (compressed-tensors float-quantized, FP8 weights
  per channel), transformers 5.7's to_dict as the report prints it (code index id 62988695292), trimmed: its
  generic fields (attention_dropout, initializer_range, bos_token_id, use_cache) and all but four of its 1,100-odd
  ignore entries left out (those name norms, biases, routers and their e_score_correction_bias, which no format
  quantizes); kept: lm_head, model.norm and the MTP layer's embed_tokens and eh_proj
"""

from __future__ import annotations

from pathlib import Path

from tests.kvplan_inprocess import estimate_json

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
GLM45_FP8 = str(CONFIGS / "glm-4.5-fp8-transformers5-trimmed.json")


def test_glm45_fp8_per_channel_scales_are_counted():
    # The report's tensor list, layers 0-91 (layer 92 is the MTP module kvplan leaves out), float32 weight_scale
    # [rows, 1] beside each FP8 weight:
    #   head and embeddings 2 x 151,552 x 5,120 BF16; 3 dense MLPs 5,120 x 12,288 x 3 FP8
    #   attention a layer (92): q 12,288 x 5,120, k and v 1,024 x 5,120, o 5,120 x 12,288 FP8 with BF16 q/k/v biases
    #   and q/k norms of 128; 89 MoE layers of 160 experts of 1,536 and one shared expert, FP8; routers
    #   160 x 5,120 BF16 and e_score_correction_bias 160 float32; norms 2 x 92 + 1 of 5,120 BF16
    fp8 = 3 * 3 * 5120 * 12288 + 92 * (2 * 12288 + 2 * 1024) * 5120 + 89 * 161 * 3 * 1536 * 5120
    rows = 3 * (5120 + 2 * 12288) + 92 * (12288 + 2 * 1024 + 5120) + 89 * 161 * (5120 + 2 * 1536)
    bf16 = 2 * 151552 * 5120 + 92 * (12288 + 2 * 1024 + 2 * 128) + 89 * 160 * 5120 + 185 * 5120
    assert rows == 119_262_208
    report = fp8 + 4 * rows + 2 * bf16 + 4 * 89 * 160
    assert report == 354_902_011_520  # summed from the report's rows for layers 0-91
    d = estimate_json(GLM45_FP8)
    m = d["model"]
    # kvplan sizes the routers' e_score_correction_bias (float32 in the checkpoint) at 2 B like the other floats;
    # before, the per-channel scales were left out (477,048,832 B, 0.134% under)
    assert m["weight_bytes"] == report - 2 * 89 * 160 == 354_901_983_040
    # parameters: the report's 358,458,543,424 less the MTP layer's 5,541,452,192 and the 119,262,208 scales
    assert m["param_count"] == 358_458_543_424 - 5_541_452_192 - rows
    assert d["bytes_per_token"] == 2 * 92 * 8 * 128 * 2
