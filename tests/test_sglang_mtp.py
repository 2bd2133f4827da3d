"""`--engine sglang --mtp` on the MTP drafts SGLang 0.5.23 builds for MiMo-7B, ERNIE-4.5 MoE, Nemotron-H and MiMo-V2
(kvplan.engines.sglang_mtp). Every figure is worked out by hand from the SGLang 0.5.23 wheel's code, cited beside it;
before this, kvplan refused all four under --engine sglang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.engines.sglang_mtp import module_weights
from kvplan.sources import load_model

CONFIGS = Path(__file__).parent / "data" / "configs"
KV = 40 * 2**30  # --kv-memory 40GiB: the pool's bytes, no weights in the way


def _raw(name: str, **extra) -> dict:
    return {**json.loads((CONFIGS / name).read_text()), **extra}


# ERNIE-4.5-21B-A3B (the quoted test config has no architectures; baidu's config.json names
# Ernie4_5_MoeForCausalLM, which model_config._config_draft_model renames to Ernie4_5_MoeForCausalLMMTP)
ERNIE = _raw("ernie-4.5-21b-a3b-quoted.json", architectures=["Ernie4_5_MoeForCausalLM"], num_mtp_layers=1)
NEMOTRON = _raw("nemotron-h-8b-tf5.json", num_nextn_predict_layers=1)


def _engine(cli, tmp_path, raw_or_path, *extra):
    path = raw_or_path
    if isinstance(raw_or_path, dict):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(raw_or_path))
    rc, out, err = cli("estimate", str(path), "--engine", "sglang", "--kv-memory", "40GiB", "--max-model-len", "8192",
                       "--format", "json", *extra)
    assert rc == 0, err
    return json.loads(out)["engine"]


def test_the_draft_layers_join_the_cell_as_sglang_0523_prices_them(cli, tmp_path):
    # pool_configurator.DefaultPoolConfigurator.__init__: cell += int(cell x eagle_draft_num_layers / KV layers), and
    # spec_aux_hidden_state._resolve_eagle_aux_hidden_state: a path-less draft's eagle_draft_num_layers is the
    # target's num_nextn_predict_layers (1 in each config here); tokens = available // cell
    # MiMo-7B: 36 layers x 8 KV heads x (128 + 128) x 2 B = 147,456 B; + 147,456 / 36 = 4,096
    mimo = _engine(cli, tmp_path, CONFIGS / "mimo-7b.json", "--mtp")
    assert (mimo["cell_bytes"], mimo["draft_bytes_per_token"]) == (147_456, 4_096)
    assert mimo["max_total_num_tokens"] == KV // (147_456 + 4_096) == 283_398
    assert mimo["max_running_requests"] == 48  # _handle_eagle_family: 48 under speculation unless given
    # ERNIE-4.5-21B-A3B: 28 layers x 4 KV heads x (128 + 128) x 2 B = 57,344 B; + 57,344 / 28 = 2,048
    ernie = _engine(cli, tmp_path, ERNIE, "--mtp")
    assert (ernie["cell_bytes"], ernie["draft_bytes_per_token"]) == (57_344, 2_048)
    assert ernie["max_total_num_tokens"] == KV // (57_344 + 2_048) == 723_155
    # Nemotron-H-8B: the cell counts its 4 attention layers (mambaish full_attention_layer_ids): 4 x 8 x 256 x 2 B
    # = 16,384 B; the draft adds 16,384 x 1 / 4
    nemotron = _engine(cli, tmp_path, NEMOTRON, "--mtp")
    assert (nemotron["cell_bytes"], nemotron["draft_bytes_per_token"]) == (16_384, 4_096)


def test_mimo_v2s_draft_layers_are_priced_as_sliding_layers(cli):
    # MiMo-V2.6-Flash at TP 8 (9 full layers of 4 KV heads, 39 sliding of 8, K 192 / V 128, bfloat16): a layer's token is
    # max(1, heads / 8) x 320 x 2 = 640 B, full or sliding. HybridSWAPoolConfigurator.__init__: eagle_draft_num_layers
    # = num_nextn_predict_layers 3, eagle_draft_swa_num_layers = the target's 39 sliding layers, so all 3 draft layers
    # join the sliding cell (no mtp_local_layer_ids): cell = 640 x 9 + 0.8 x 640 x (39 + 3) = 27,264 B;
    # full = int(available // cell), sliding = int(full x 0.8) (_solve_pool_sizes, page 1)
    got = _engine(cli, None, CONFIGS / "mimo-v2.6-flash.json", "--tp", "8", "--mtp")
    assert got["max_total_num_tokens"] == KV // 27_264 == 1_575_325
    assert got["swa_tokens"] == int(1_575_325 * 0.8) == 1_260_260
    assert got["draft_bytes_per_token"] == 0.8 * 640 * 3 == 1_536


def test_mtp_local_layer_ids_split_mimo_v2s_draft(cli, tmp_path):
    # HybridSWAPoolConfigurator: with mtp_local_layer_ids, draft layer ids in it are sliding at the full pool's tokens
    # (no ratio), the rest full: ids [0] of 3 -> 1 x 640 + 2 x 640 more a full token, the target's cell unchanged
    raw = _raw("mimo-v2.6-flash.json", mtp_local_layer_ids=[0])
    got = _engine(cli, tmp_path, raw, "--tp", "8", "--mtp")
    assert got["max_total_num_tokens"] == KV // (640 * 9 + 640 * 3 + 0.8 * 640 * 39) == 1_553_445


def test_the_drafts_weights_by_hand():
    # each module loads before the target's pool is sized and builds its own VocabParallelEmbedding and ParallelLMHead
    # (/ TP), replaced by the target's only after (EAGLEWorkerV2.init_lm_head -> set_embed_and_head)
    # MiMo-7B (mimo_mtp.py MiMoMTP): a Qwen2DecoderLayer of 177,223,680 parameters (q 4,096^2 + 4,096 bias, k and v
    # 4,096 x 1,024 + 1,024 each, o 4,096^2, MLP 3 x 4,096 x 11,008, two norms), input_proj nn.Linear 2 x 4,096^2 and
    # three norms whole, embedding and head 151,680 x 4,096 each, all bfloat16
    model = load_model(str(CONFIGS / "mimo-7b.json"))
    raw = _raw("mimo-7b.json")
    assert module_weights(model, raw, 1, 3, "0.5.23")[0] == (177_223_680 * 2 + 2 * 4096 * 4096 * 2 + 3 * 4096 * 2
                                                            + 2 * 151_680 * 4096 * 2) == 2_906_705_920
    # ERNIE-4.5-21B-A3B at TP 2 (ernie4_eagle.py): Ernie4DecoderLayer(is_mtp=True) is dense: LlamaAttention (20 heads,
    # 4 KV, head 128, no bias: use_bias false) + DeepseekV2MLP of 12,288 + two norms = 110,105,600 parameters / 2;
    # mtp_linear_proj (nn.Linear) and two norms whole; tie_word_embeddings: lm_head is the embedding, one copy / 2
    model = build_model(ERNIE, "ernie-mtp")
    assert module_weights(model, ERNIE, 2, 3, "0.5.23")[0] == (110_105_600 * 2 // 2 + 2 * 2560 * 2560 * 2 + 2 * 2560 * 2
                                                              + 103_424 * 2560 * 2 // 2) == 401_095_680
    # Nemotron-H-8B (nemotron_h_mtp.py): one '*E' step as tests/test_vllm_draft_weights.py sizes it (1,284,743,200 B;
    # the same layers: ReplicatedLinear router, float32 e_score_correction_bias) plus the embedding and ParallelLMHead
    # NemotronHForCausalLMMTP builds, 131,072 x 4,096 x 2 B each
    model = build_model(NEMOTRON, "nemotron-mtp")
    assert module_weights(model, NEMOTRON, 1, 3, "0.5.23")[0] == 1_284_743_200 + 2 * 131_072 * 4096 * 2 == 3_432_226_848
    # MiMo-V2.6-Flash at TP 8 (mimo_v2_nextn.py MiMoV2MTP, multi-layer EAGLE: one module per step, 3 steps): the
    # MiMoV2MTPLayer at FP8 (295,778,882 B with its block scales, tests/test_vllm_draft_weights.py) / 8, eh_proj
    # (nn.Linear) and three norms whole, embedding and head 152,576 x 4,096 x 2 B / 8 each
    model = load_model(str(CONFIGS / "mimo-v2.6-flash.json"))
    raw = _raw("mimo-v2.6-flash.json")
    one = -(-295_778_882 // 8) + 2 * 4096 * 4096 * 2 + 3 * 4096 * 2 + 2 * (152_576 * 4096 * 2 // 8)
    assert module_weights(model, raw, 8, 3, "0.5.23")[0] == 3 * one == 1_249_744_347


def test_the_drafts_weights_leave_the_pool(cli):
    # from the GPU: the pool shrinks by the draft's weights and nothing else (0.5.23 reserves no extra memory for a
    # draft: spec_reserved_mib is empty)
    def pool_bytes(*extra):
        rc, out, err = cli("estimate", str(CONFIGS / "mimo-7b.json"), "--engine", "sglang", "--gpu", "h100",
                           "--max-model-len", "8192", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["engine"]["kv_memory_bytes"]

    assert pool_bytes() - pool_bytes("--mtp") == 2_906_705_920


@pytest.mark.parametrize("args, words", [
    # 0.5.9's draft classes were not read
    ((str(CONFIGS / "mimo-7b.json"), "--engine", "sglang@0.5.9"), "read SGLang 0.5.23's MiMoMTP"),
    # multi-layer EAGLE: runner i loads MTP layer i only (model_loader/loader.py _filter_mtp_weights); 3 layers
    ((str(CONFIGS / "mimo-v2.6-flash.json"), "--engine", "sglang", "--tp", "8", "--num-speculative-tokens", "4"),
     "give --num-speculative-tokens 3 or fewer"),
    # no num_nextn_predict_layers: SGLang prices no draft layer and loads no MTP weights
    ((str(CONFIGS / "nemotron-h-8b-tf5.json"), "--engine", "sglang"), "has no num_nextn_predict_layers"),
])
def test_refusals_are_one_line(cli, args, words):
    rc, _, err = cli("estimate", *args, "--kv-memory", "40GiB", "--max-model-len", "8192", "--mtp")
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err


def test_emit_sglang_prints_nextn_for_these_drafts(cli):
    # NEXTN, which SGLang turns into EAGLE; without --num-speculative-tokens the steps are left to SGLang's own
    # choice (arg_groups/speculative_hook._auto_choose_speculative_params: (3, 1, 4) for these), with 2: 2 steps of
    # top-1 and 3 draft tokens
    def command(*extra):
        rc, out, err = cli("estimate", str(CONFIGS / "mimo-7b.json"), "--engine", "sglang", "--kv-memory", "40GiB",
                           "--max-model-len", "8192", "--mtp", "--emit", "sglang", "--format", "json", *extra)
        assert rc == 0, err
        return json.loads(out)["emit"]["command"]

    plain = command()
    assert "--speculative-algorithm NEXTN" in plain and "--speculative-num-steps" not in plain
    assert ("--speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 3"
            in command("--num-speculative-tokens", "2"))


# Step-3.5 (SGLang 0.5.23 step3p5_mtp.py Step3p5MTP; model_config._config_draft_model renames Step3p5ForCausalLM to
# it; arg_groups/overrides.py _step3p_overrides turns on multi-layer EAGLE). A constructed config in the hub's shape as
# SGLang's configs/step3p5.py describes it: 45 layers, layer_types of 48 entries (full on every 4th: 12 full, 33
# sliding; entry 45 sliding), 8 K/V heads of 128, sliding layers 96 query heads (attention_other_setting), MoE layers
# 3-44 (layer 45 dense)
STEP35_TYPES = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(48)]
STEP35 = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "hidden_size": 4096,
          "num_hidden_layers": 45, "num_attention_heads": 64, "num_attention_groups": 8, "head_dim": 128,
          "attention_other_setting": {"num_attention_heads": 96, "num_attention_groups": 8},
          "use_head_wise_attn_gate": True, "moe_layers_enum": ",".join(str(i) for i in range(3, 45)),
          "sliding_window": 512, "layer_types": STEP35_TYPES, "num_nextn_predict_layers": 3,
          "max_position_embeddings": 262144, "vocab_size": 128896, "intermediate_size": 11264,
          "torch_dtype": "bfloat16"}


def test_step35s_draft_layers_are_priced_as_sliding_layers(cli, tmp_path):
    # a layer's token: 8 x (128 + 128) x 2 B = 4,096 B, full or sliding. HybridSWAPoolConfigurator.__init__: the target
    # is hybrid SWA, so eagle_draft_swa_num_layers = its 33 sliding layers and min(3, 33) = all 3 draft layers join
    # the sliding cell (no mtp_local_layer_ids): 4,096 x 12 + 0.8 x 4,096 x (33 + 3) = 167,116.8 B a full token;
    # full = int(40 GiB // that), sliding = int(full x 0.8). (The old code refused: "not modelled for SGLang".)
    got = _engine(cli, tmp_path, STEP35, "--mtp")
    assert got["max_total_num_tokens"] == int(KV // 167_116.8) == 257_003
    assert got["swa_tokens"] == int(257_003 * 0.8) == 205_602
    assert got["draft_bytes_per_token"] == int(0.8 * 4096 * 3) == 9_830


def test_step35s_draft_weights_by_hand():
    # TP 4, three steps, one Step3p5MTP module each. mtp_block is Step3p5DecoderLayer(layer_id=45), built without
    # quant_config: layer 45 is sliding, so 96 heads / 8 groups of 128: qkv 4,096 x (96 + 16) x 128 = 58,720,256,
    # o 96 x 128 x 4,096 = 50,331,648, q/k norms 256, g_proj 4,096 x 96 = 393,216, dense MLP 3 x 4,096 x 11,264 =
    # 138,412,032, two norms 8,192: 247,865,600 parameters x 2 B / 4 = 123,932,800 B; eh_proj 2 x 4,096^2 x 2 B =
    # 67,108,864 and enorm, hnorm, shared_head.norm 3 x 4,096 x 2 B whole; embedding and head 128,896 x 4,096 x 2 B / 4
    # = 263,979,008 each
    model = build_model(STEP35, "step-3.5")
    one = 123_932_800 + 67_108_864 + 24_576 + 2 * 263_979_008
    assert module_weights(model, STEP35, 4, 3, "0.5.23")[0] == 3 * one == 2_157_072_768


@pytest.mark.parametrize("change, words", [
    # step3p5_mtp.py: layer_id = 45 whatever num_hidden_layers says (its pool layer id 45 - num_hidden_layers)
    ({"num_hidden_layers": 44, "layer_types": STEP35_TYPES[:47]}, "models the 45-layer Step-3.5 shape only"),
    # Step3p5DecoderLayer reads layer_types[45]: a list of num_hidden_layers entries has none
    ({"layer_types": STEP35_TYPES[:45], "mtp_layer_types": STEP35_TYPES[45:]}, "no full_attention / sliding_attention "
                                                                               "entry for layer 45"),
])
def test_step35_refusals_are_one_line(cli, tmp_path, change, words):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**STEP35, **change}))
    rc, _, err = cli("estimate", str(path), "--engine", "sglang", "--kv-memory", "40GiB", "--max-model-len", "8192",
                     "--mtp")
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err
