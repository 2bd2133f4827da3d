"""vLLM 0.34's --mm-encoder-tp-mode data (engines/vllm_encoder_dp.py): the vision tower whole on every GPU, in
kvplan's plan, vLLM's report and --emit vllm; the fallback to "weights" for the classes without
supports_encoder_tp_data; the vision heads refusal lifted.

Qwen2.5-VL-7B's tower worked by hand from its config.json vision_config (depth 32, hidden_size 1,280,
intermediate_size 3,420, 16 heads, out_hidden_size 3,584, patch 14, temporal patch 2, 3 channels, merge 2), bf16,
as vLLM 0.34 builds it (qwen2_5_vl.py). Unlike SGLang (tests/test_sglang_groups.py, whose MLP is padded to 3,424 and
whose whole tower is 1,354,083,840 B), vLLM's Qwen2_5_VisionTransformer passes mlp_hidden_dim =
vision_config.intermediate_size, unpadded: 3,420. Parameters a block:
  norm1 / norm2 (RMSNorm) 2 x 1,280 = 2,560; qkv 1,280 x 3,840 + 3,840 = 4,919,040; proj 1,280 x 1,280 + 1,280 =
  1,639,680; gate_up 2 x (1,280 x 3,420 + 3,420) = 8,762,040; down 3,420 x 1,280 + 1,280 = 4,378,880
merger: ln_q 1,280; mlp.0 5,120 x 5,120 + 5,120 = 26,219,520; mlp.2 5,120 x 3,584 + 3,584 = 18,353,664
patch_embed 3 x 2 x 14 x 14 x 1,280 = 1,505,280 (no bias)
Under "weights" at --tp 4 (qwen2_5_vl.py: qkv QKVParallelLinear, gate_up MergedColumnParallelLinear and mlp.0
ColumnParallelLinear split with their biases; proj, down and mlp.2 RowParallelLinear, weight split, bias whole:
layers/linear.py; norms and the patch embedding whole). Under "data" every one of those linears is built with
disable_tp (models/vision.py is_vit_use_data_parallel): the whole tower on every GPU.
"""

import json

import pytest

BLOCK = 2_560 + 4_919_040 + 1_639_680 + 8_762_040 + 4_378_880
TOWER_WHOLE = 2 * (32 * BLOCK + 1_280 + 26_219_520 + 18_353_664 + 1_505_280)
BLOCK_TP4 = 2_560 + 4_919_040 // 4 + 1_638_400 // 4 + 1_280 + 8_762_040 // 4 + 3_420 * 1_280 // 4 + 1_280
TOWER_TP4 = 2 * (32 * BLOCK_TP4 + 1_280 + 26_219_520 // 4 + 18_350_080 // 4 + 3_584 + 1_505_280)
MORE = TOWER_WHOLE - TOWER_TP4


def test_hand_figures():
    assert BLOCK == 19_702_200
    assert TOWER_WHOLE == 1_353_100_288  # 1,290.4 MiB; SGLang's, padded: 1,354,083,840
    assert TOWER_TP4 == 340_786_048  # SGLang's: 341,031,936
    assert MORE == 1_012_314_240  # 965.4 MiB a GPU


def _run(cli, model, *args):
    code, out, err = cli("estimate", model, "--gpu", "h100", "--context", "4k", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


QWEN = ("--engine", "vllm", "--tp", "4", "--emit", "vllm")


def test_data_mode_holds_the_tower_whole(cli):
    before, after = _run(cli, "qwen2.5-vl-7b", *QWEN), _run(cli, "qwen2.5-vl-7b", *QWEN, "--mm-encoder-tp-mode", "data")
    # kvplan's plan and vLLM's profile both hold the whole tower: the weights grow and the KV pool shrinks by as much
    assert after["capacity"]["weight_bytes_per_gpu"] - before["capacity"]["weight_bytes_per_gpu"] == MORE
    assert before["capacity"]["pool_bytes"] - after["capacity"]["pool_bytes"] == MORE
    assert after["engine"]["profile"]["weight_bytes"] - before["engine"]["profile"]["weight_bytes"] == MORE
    assert before["engine"]["kv_memory_bytes"] - after["engine"]["kv_memory_bytes"] == MORE
    argv = after["emit"]["argv"]
    assert argv[argv.index("--mm-encoder-tp-mode") + 1] == "data"
    assert "--mm-encoder-tp-mode" not in before["emit"]["argv"]
    assert any("--mm-encoder-tp-mode data: the vision tower whole on every GPU" in n and "965.4 MiB" in n
               for n in after["engine"]["notes"])


def test_weights_mode_and_tp_1_change_nothing(cli):
    base = _run(cli, "qwen2.5-vl-7b", *QWEN)
    same = _run(cli, "qwen2.5-vl-7b", *QWEN, "--mm-encoder-tp-mode", "weights")  # vLLM's default, printed as given
    assert same["capacity"]["weight_bytes_per_gpu"] == base["capacity"]["weight_bytes_per_gpu"]
    assert "weights" in same["emit"]["argv"]
    one = ("--engine", "vllm", "--tp", "1")
    assert (_run(cli, "qwen2.5-vl-7b", *one)["engine"]["profile"]["weight_bytes"]
            == _run(cli, "qwen2.5-vl-7b", *one, "--mm-encoder-tp-mode", "data")["engine"]["profile"]["weight_bytes"])


def test_a_class_without_support_falls_back(cli):
    # llava.py LlavaForConditionalGeneration does not set supports_encoder_tp_data: config/model.py falls back to
    # "weights", the tower split as before, said in a note (in the report and under --emit vllm)
    args = ("--engine", "vllm", "--tp", "2", "--emit", "vllm")
    before, after = _run(cli, "llava-1.5-7b", *args), _run(cli, "llava-1.5-7b", *args, "--mm-encoder-tp-mode", "data")
    assert after["capacity"]["weight_bytes_per_gpu"] == before["capacity"]["weight_bytes_per_gpu"]
    assert after["engine"]["kv_memory_bytes"] == before["engine"]["kv_memory_bytes"]
    assert any("changes nothing for LlavaForConditionalGeneration" in n for n in after["engine"]["notes"])
    assert any("changes nothing for LlavaForConditionalGeneration" in n for n in after["emit"]["notes"])


def test_data_mode_lifts_the_vision_heads_refusal(cli):
    # Qwen3-VL-8B: 16 vision heads, the text model's 32 (8 KV heads). --tp 32 divides the text model's heads, not
    # the tower's: under "weights" QKVParallelLinear's divide asserts (engines/vllm_vision_refusal.py); under "data"
    # the tower is built with disable_tp, nothing to divide
    base = ("estimate", "qwen3-vl-8b", "--gpu", "h100", "--context", "8k", "--engine", "vllm", "--tp", "32")
    code, _, err = cli(*base)
    assert code == 2 and "16 vision heads" in err
    code, _, err = cli(*base, "--mm-encoder-tp-mode", "data")
    assert code == 0, err
    # LLaVA-1.5's CLIP (16 heads) falls back to "weights": still refused at --tp 32
    code, _, err = cli("estimate", "llava-1.5-7b", "--gpu", "h100", "--context", "4k", "--engine", "vllm", "--tp", "32",
                       "--mm-encoder-tp-mode", "data")
    assert code == 2 and "16 vision heads" in err


@pytest.mark.parametrize("args, said", [
    (["--engine", "sglang", "--tp", "4", "--mm-encoder-tp-mode", "data"], "--mm-enable-dp-encoder"),
    (["--tp", "4", "--mm-encoder-tp-mode", "data"], "vLLM's flag"),
    (["--engine", "vllm", "--tp", "4", "--mm-encoder-tp-mode", "dp"], "weights or data"),
])
def test_refused_in_one_line(cli, args, said):
    code, _, err = cli("estimate", "qwen2.5-vl-7b", "--gpu", "h100", "--context", "8k", *args)
    assert code == 2
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_data_mode_at_tp_2_with_pp_and_dp(cli):
    # at --tp 2 the split tower is the whole part (norms 2,560 + the proj / down biases 2 x 1,280 a block, ln_q
    # 1,280, mlp.2's bias 3,584, patch_embed 1,505,280: 1,673,984 parameters) and half the rest, so the whole tower
    # is (1,353,100,288 - 2 x 1,673,984) / 2 = 674,876,160 B more a GPU, on the first stage (the tower's: the fullest
    # here, beside the embedding), with or without DP
    more = (TOWER_WHOLE - 2 * 1_673_984) // 2
    assert more == 674_876_160
    for layout in (("--tp", "2", "--pp", "2"), ("--tp", "2", "--dp", "2")):
        args = ("--engine", "vllm", *layout)
        before, after = _run(cli, "qwen2.5-vl-7b", *args), _run(cli, "qwen2.5-vl-7b", *args, "--mm-encoder-tp-mode", "data")
        assert after["capacity"]["weight_bytes_per_gpu"] - before["capacity"]["weight_bytes_per_gpu"] == more
        assert after["engine"]["profile"]["weight_bytes"] - before["engine"]["profile"]["weight_bytes"] == more
