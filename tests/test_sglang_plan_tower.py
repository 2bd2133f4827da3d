"""kvplan's own plan under --engine sglang splits the vision tower as SGLang 0.5.23 does (Deployment.placement,
capacity/weights.py engine_stage_delta -> engines/sglang_placement.py -> sglang_tower.py tower_delta), so its
`capacity` weights a GPU are SGLang's report's; without --engine sglang (or with --engine vllm, --emit sglang too)
it keeps vLLM 0.34's split.

SGLang 0.5.23's module split (weights/vision_tp.py SGLANG_TOWERS, read in the wheel; tests/test_sglang_vision_tp.py):
- qwen3_vl.py Qwen3VLMoeVisionModel.pos_embed a VocabParallelEmbedding (rows padded to 64, split over TP; vLLM 0.34
  qwen3_vl.py: nn.Embedding, whole);
- gemma3_mm.py -> siglip.py SiglipVisionEmbeddings.position_embedding a VocabParallelEmbedding (vLLM: nn.Embedding);
- mllama4.py builds transformers' Llama4MultiModalProjector, linear_1 an nn.Linear, whole (vLLM: ColumnParallelLinear).

Tower bytes a GPU = the weights a GPU less those of the text model alone (--set vision_config=null); bf16, 2 B a
parameter; the config.json's vision_config shapes:

Qwen3-VL-30B-A3B: hidden 1,152, intermediate 4,304, depth 27, 2,304 positions, out 2,048, merge 2 (4,608), 3 deepstack
mergers, patch 16, temporal 2, 3 channels: 538,631,408 parameters (= by_role.vision 1,077,262,816 B / 2):
  Conv3d 1,536 x 1,152 + 1,152 = 1,770,624; pos_embed 2,304 x 1,152 = 2,654,208; per block 2 LayerNorms 4,608, qkv
  3 x 1,152^2 + 3,456 = 3,984,768, proj 1,327,104 + 1,152, fc1 1,152 x 4,304 + 4,304 = 4,962,512, fc2 4,958,208 +
  1,152: 15,239,504 (x 27 = 411,466,608); merger LayerNorm 2,304 + fc1 4,608^2 + 4,608 = 21,238,272 + fc2 4,608 x 2,048
  + 2,048 = 9,439,232: 30,679,808; deepstack 3 x (LayerNorm 9,216 + 21,238,272 + 9,439,232) = 92,060,160.
  whole in both engines: 1,770,624 + 27 x 6,912 + 2,304 + 2,048 + 3 x 11,264 = 1,995,392; split in both: 533,981,808.
  vLLM at TP 4 (pos_embed whole): 2 x (1,995,392 + 2,654,208) + 2 x 533,981,808 / 4 = 9,299,200 + 266,990,904
    = 276,290,104 B
  SGLang at TP 4 (2,304 rows: a multiple of 64 and of 4, no padding; 576 rows a GPU): 3,990,784 + 266,990,904
    + 2 x 576 x 1,152 = 272,308,792 B: 3,981,312 B a GPU less (2 x 1,728 x 1,152)
Gemma 3 27B (tests/test_sglang_vision_tp.py): vLLM's whole 11,780,352, split 411,279,984; SGLang also splits the
  4,096 x 1,152 = 4,718,592 positions (no padding): whole 7,061,760, split 415,998,576.
  TP 4: vLLM 23,560,704 + 822,559,968 / 4 = 229,200,696 B; SGLang 14,123,520 + 207,999,288 = 222,122,808 B
    (7,077,888 B less = 2 x 3,072 x 1,152)
Llama 4 Scout (tests/test_sglang_vision_tp.py): 871,932,416 parameters, vLLM's whole 1,106,688; SGLang also
  linear_1 4,096 x 5,120 = 20,971,520: 22,078,208 whole, 849,854,208 split.
  TP 2: vLLM 2,213,376 + 870,825,728 = 873,039,104 B; SGLang 44,156,416 + 849,854,208 = 894,010,624 B
    (20,971,520 B more = 2 x 20,971,520 / 2)
  TP 4: vLLM 2,213,376 + 435,412,864 = 437,626,240 B; SGLang 44,156,416 + 424,927,104 = 469,083,520 B
    (31,457,280 B more = 2 x 20,971,520 x 3 / 4)
"""

from __future__ import annotations

import json

import pytest

from kvplan_inprocess import estimate_json

MEMORY = ("--gpu", "h200", "--gpu-memory", "2TB", "--context", "4k")
SGLANG = (*MEMORY, "--engine", "sglang")
NO_TOWER = ("--set", "vision_config=null")


def _local(tmp_path, name: str) -> str:
    """The bundled config as a local file: its weights are the config estimate with or without the tower."""
    from kvplan.sources import bundled_config, bundled_index

    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(bundled_config(bundled_index()[name])))
    return str(path)


def _weights(got: dict) -> tuple[int, int | None]:
    """(kvplan's plan's weights a GPU, SGLang's report's where there is one)."""
    return got["capacity"]["weight_bytes_per_gpu"], got.get("engine", {}).get("weight_bytes_per_gpu")


CASES = [("qwen3-vl-30b-a3b", 4, 272_308_792, 276_290_104),
         ("gemma-3-27b", 4, 222_122_808, 229_200_696),
         ("llama-4-scout", 2, 894_010_624, 873_039_104),
         ("llama-4-scout", 4, 469_083_520, 437_626_240)]


def test_hand_figures_add_up():
    assert 1_770_624 + 27 * 6_912 + 2_304 + 2_048 + 3 * 11_264 == 1_995_392
    assert 1_770_624 + 2_654_208 + 27 * 15_239_504 + 30_679_808 + 92_060_160 == 538_631_408
    assert 2 * (1_995_392 + 2_654_208) + 2 * 533_981_808 // 4 == 276_290_104
    assert 2 * 1_995_392 + 2 * 533_981_808 // 4 + 2 * 576 * 1_152 == 272_308_792
    assert 276_290_104 - 272_308_792 == 2 * 1_728 * 1_152 == 3_981_312
    assert 229_200_696 - 222_122_808 == 2 * 3_072 * 1_152
    assert 894_010_624 - 873_039_104 == 20_971_520 and 469_083_520 - 437_626_240 == 2 * 20_971_520 * 3 // 4


@pytest.mark.parametrize("name,tp,sglang,vllm", CASES)
def test_plan_weights_are_sglang_reports_and_the_hand_figure(tmp_path, name, tp, sglang, vllm):
    path, split = _local(tmp_path, name), ("--tp", str(tp))
    plan, report = _weights(estimate_json(path, *SGLANG, *split))
    text_plan, text_report = _weights(estimate_json(path, *SGLANG, *split, *NO_TOWER))
    assert plan == report  # one figure a GPU: kvplan's plan and SGLang's report
    assert (plan - text_plan, report - text_report) == (sglang, sglang)
    # kvplan's plan without --engine sglang keeps vLLM's split
    assert (_weights(estimate_json(path, *MEMORY, *split))[0]
            - _weights(estimate_json(path, *MEMORY, *split, *NO_TOWER))[0]) == vllm


def test_bundled_qwen3_vl_plan_and_report_agree():
    # the bundled checkpoint record (not a local config): the 3,981,312 B a GPU apart before
    plan, report = _weights(estimate_json("qwen3-vl-30b-a3b", *SGLANG, "--tp", "4"))
    assert plan == report
    vllm_plan = _weights(estimate_json("qwen3-vl-30b-a3b", *MEMORY, "--tp", "4"))[0]
    assert vllm_plan - plan == 3_981_312


def test_emit_sglang_plans_sglang_split_unless_vllm_is_planned():
    # --emit sglang alone: the plan is for the command it prints (SGLang's split); --engine vllm --emit sglang plans
    # vLLM, whose report stands beside the plan at vLLM's split
    split = ("--tp", "4")
    vllm_plan = _weights(estimate_json("qwen3-vl-30b-a3b", *MEMORY, *split))[0]
    emitted = _weights(estimate_json("qwen3-vl-30b-a3b", *MEMORY, *split, "--emit", "sglang"))[0]
    beside_vllm = _weights(estimate_json("qwen3-vl-30b-a3b", *MEMORY, *split, "--engine", "vllm", "--emit", "sglang"))
    assert vllm_plan - emitted == 3_981_312
    assert beside_vllm[0] == vllm_plan


def test_fit_ranks_with_sglang_split():
    # fit --engine sglang screens each split with the weights kvplan's plan counts (fit/split_weights.py split_weight_bytes): TP 4's
    # option holds SGLang's figure, 3,981,312 B a GPU below vLLM's split
    from kvplan_inprocess import kvplan

    out = kvplan("fit", "qwen3-vl-30b-a3b", "--gpu", "h100", "--max-gpus", "4", "--engine", "sglang",
                 "--format", "json")
    assert out.returncode == 0, out.stderr
    options = [c for c in json.loads(out.stdout)["options"] if (c["tp"], c["pp"], c["dp"]) == (4, 1, 1)]
    assert options
    vllm_plan = _weights(estimate_json("qwen3-vl-30b-a3b", "--gpu", "h100", "--tp", "4"))[0]
    report = _weights(estimate_json("qwen3-vl-30b-a3b", "--gpu", "h100", "--tp", "4", "--engine", "sglang"))[1]
    assert {c["weight_bytes_per_gpu"] for c in options} == {report} == {vllm_plan - 3_981_312}
