"""SGLang 0.5.23's --enable-dp-lm-head and --moe-dense-tp-size (engines/sglang_groups.py): the bytes each GPU holds
more, and the KV pool that follows.

Worked by hand from DeepSeek-V3's config.json (vocab_size 129,280, hidden_size 7,168, intermediate_size 18,432,
first_k_dense_replace 3, kv_lora_rank 512, qk_rope_head_dim 64, 61 layers; FP8 block-scaled 128 x 128 linears, the
LM head in bf16) and the cited SGLang source rules, never read off kvplan's output:
- LM head: 129,280 x 7,168 x 2 B = 1,853,358,080 B. SGLang pads the rows to 64 (vocab_parallel_embedding.py
  pad_vocab_size): 129,280 = 2,020 x 64, no padding, and every TP size below divides it. Under attention DP the
  head is split over all --tp GPUs (deepseek_v2.py ParallelLMHead use_attn_tp_group=False); --enable-dp-lm-head
  splits it over the attention TP group instead.
- the dense MLP layers (first 3): each gate / up / down 18,432 x 7,168 = 132,120,576 B at 1 B (FP8), with
  ceil(18,432 / 128) x ceil(7,168 / 128) = 144 x 56 = 8,064 float32 scales = 32,256 B; 3 layers x 3 x
  (132,120,576 + 32,256) = 1,189,375,488 B. Split over 8 GPUs by default (parallel_group "tp"); whole on every GPU
  under --moe-dense-tp-size 1 (layer_boundary/layout.py is_dense_ffn_fully_dp -> "replicated").
- the KV cell (MLA, bf16): (512 + 64) x 61 x 2 B = 70,272 B a token; the pool loses the extra weight bytes, so
  SGLang's tokens fall by extra / 70,272 (floored on each side: that or one more).
"""

import json

import pytest

HEAD = 129_280 * 7_168 * 2
DENSE = 3 * 3 * (18_432 * 7_168 + 144 * 56 * 4)
CELL = (512 + 64) * 61 * 2
BASE = ["estimate", "deepseek-v3", "--gpu", "h200", "--context", "8k", "--engine", "sglang"]


def test_hand_figures():
    assert HEAD == 1_853_358_080
    assert DENSE == 1_189_375_488
    assert CELL == 70_272


@pytest.fixture
def plan(cli):
    def get(*args):
        code, out, err = cli(*BASE, *args, "--emit", "sglang", "--format", "json")
        assert code == 0, err
        return json.loads(out)

    return get


def _delta(plan, base_args, flag_args):
    before, after = plan(*base_args), plan(*base_args, *flag_args)
    more = after["engine"]["weight_bytes_per_gpu"] - before["engine"]["weight_bytes_per_gpu"]
    # kvplan's own plan moves by the same bytes
    assert after["capacity"]["weight_bytes_per_gpu"] - before["capacity"]["weight_bytes_per_gpu"] == more
    lost = before["engine"]["max_total_num_tokens"] - after["engine"]["max_total_num_tokens"]
    return more, lost, after


@pytest.mark.parametrize("tp, dp, more", [
    (8, 8, HEAD - HEAD // 8),  # attention TP 1: whole instead of 1/8 = 1,621,688,320 B
    (8, 4, HEAD // 2 - HEAD // 8),  # attention TP 2: 1/2 instead of 1/8 = 695,009,280 B
])
def test_dp_lm_head_splits_the_head_over_attention_tp(plan, tp, dp, more):
    got, lost, after = _delta(plan, ["--tp", str(tp), "--dp", str(dp)], ["--enable-dp-lm-head"])
    assert got == more
    assert lost in (more // CELL, more // CELL + 1)  # 8 x 1: 23,077 or 23,078
    assert "--enable-dp-lm-head" in after["emit"]["argv"]


@pytest.mark.parametrize("dp", [1, 8])
def test_moe_dense_tp_1_holds_the_dense_layers_whole(plan, dp):
    # default: the dense MLPs over the 8 GPUs of SGLang's TP group, with or without attention DP
    more = DENSE - DENSE // 8  # 1,040,703,552 B
    got, lost, after = _delta(plan, ["--tp", "8", "--dp", str(dp)], ["--moe-dense-tp-size", "1"])
    assert got == more
    assert lost in (more // CELL, more // CELL + 1)  # 14,809 or 14,810
    argv = after["emit"]["argv"]
    assert argv[argv.index("--moe-dense-tp-size") + 1] == "1"


def test_both_flags_add_up(plan):
    got, _, _ = _delta(plan, ["--tp", "8", "--dp", "8"], ["--enable-dp-lm-head", "--moe-dense-tp-size", "1"])
    assert got == (HEAD - HEAD // 8) + (DENSE - DENSE // 8)


@pytest.mark.parametrize("model, args, flag, said", [
    # no data parallelism: overrides.py _data_parallelism_defaults resets the flag
    ("deepseek-v3", ["--tp", "8"], ["--enable-dp-lm-head"], "SGLang resets it"),
    # minimax_m2.py MiniMaxM2ForCausalLM: ParallelLMHead without use_attn_tp_group
    ("minimax-m2", ["--tp", "8", "--dp", "8"], ["--enable-dp-lm-head"], "does not read it"),
    # qwen3_moe.py Qwen3MoeDecoderLayer never reads is_dense_ffn_fully_dp
    ("qwen3-30b-a3b", ["--tp", "8"], ["--moe-dense-tp-size", "1"], "does not read it"),
    # the whole --tp is the default group
    ("deepseek-v3", ["--tp", "8", "--dp", "8"], ["--moe-dense-tp-size", "8"], "the default group"),
])
def test_flags_that_change_nothing_say_so(cli, model, args, flag, said):
    def get(*extra):
        code, out, err = cli("estimate", model, "--gpu", "h200", "--context", "8k", "--engine", "sglang", *args,
                             *extra, "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    before, after = get(), get(*flag)
    assert after["weight_bytes_per_gpu"] == before["weight_bytes_per_gpu"]
    assert any(flag[0] in n and said in n for n in after["notes"])


@pytest.mark.parametrize("args, said", [
    (["--engine", "sglang", "--tp", "8", "--moe-dense-tp-size", "4"], "only 1 or the --tp size (8)"),
    (["--engine", "sglang", "--tp", "8", "--moe-dense-tp-size", "0"], "only 1 or the --tp size (8)"),
    (["--engine", "vllm", "--tp", "8", "--moe-dense-tp-size", "1"], "SGLang's flag"),
    (["--tp", "8", "--dp", "8", "--enable-dp-lm-head"], "SGLang's flag"),
    (["--engine", "sglang", "--tp", "4", "--pp", "2", "--moe-dense-tp-size", "1"], "with --pp 2"),
])
def test_refused_in_one_line(cli, args, said):
    code, out, err = cli("estimate", "deepseek-v3", "--gpu", "h200", "--context", "8k", *args)
    assert code == 2
    assert said in err and "Traceback" not in err


# --mm-enable-dp-encoder, Qwen2.5-VL-7B's tower (config.json vision_config: depth 32, hidden_size 1,280,
# intermediate_size 3,420, 16 heads, out_hidden_size 3,584, patch 14, temporal patch 2, 3 channels, merge 2), bf16.
# qwen2_5_vl.py pads the MLP to ((3,420 + 7) // 8) x 8 = 3,424 whatever the flag. Parameters a block:
#   norms 2 x 1,280 = 2,560; qkv 1,280 x 3,840 + 3,840 = 4,919,040; proj 1,280 x 1,280 + 1,280 = 1,639,680;
#   gate_up 2 x (1,280 x 3,424 + 3,424) = 8,772,288; down 3,424 x 1,280 + 1,280 = 4,384,000
# merger: ln_q 1,280; mlp.0 5,120 x 5,120 + 5,120 = 26,219,520; mlp.2 5,120 x 3,584 + 3,584 = 18,353,664
# patch_embed 3 x 2 x 14 x 14 x 1,280 = 1,505,280 (no bias)
BLOCK = 2_560 + 4_919_040 + 1_639_680 + 8_772_288 + 4_384_000
TOWER_WHOLE = 2 * (32 * BLOCK + 1_280 + 26_219_520 + 18_353_664 + 1_505_280)
# without the flag at --tp 4 (qwen2_5_vl.py: qkv QKVParallelLinear, gate_up MergedColumnParallelLinear and mlp.0
# ColumnParallelLinear split with their biases; proj, down and mlp.2 RowParallelLinear split, their biases whole
# (layers/linear.py); norms and the patch embedding whole)
BLOCK_TP4 = (2_560 + 4_919_040 // 4 + 1_638_400 // 4 + 1_280 + 8_772_288 // 4 + 3_424 * 1_280 // 4 + 1_280)
TOWER_TP4 = 2 * (32 * BLOCK_TP4 + 1_280 + 26_219_520 // 4 + 18_350_080 // 4 + 3_584 + 1_505_280)


def test_tower_hand_figures():
    assert BLOCK == 19_717_568
    assert TOWER_WHOLE == 1_354_083_840  # 1,291.4 MiB
    assert TOWER_TP4 == 341_031_936


def test_dp_encoder_holds_the_tower_whole(cli):
    def get(*extra):
        code, out, err = cli("estimate", "qwen2.5-vl-7b", "--gpu", "h100", "--context", "8k", "--engine", "sglang",
                             "--tp", "4", *extra, "--emit", "sglang", "--format", "json")
        assert code == 0, err
        return json.loads(out)

    before, after = get(), get("--mm-enable-dp-encoder")
    more = TOWER_WHOLE - TOWER_TP4  # 1,013,051,904 B a GPU
    assert after["engine"]["weight_bytes_per_gpu"] - before["engine"]["weight_bytes_per_gpu"] == more
    assert after["capacity"]["weight_bytes_per_gpu"] - before["capacity"]["weight_bytes_per_gpu"] == more
    assert "--mm-enable-dp-encoder" in after["emit"]["argv"]
    assert any("--mm-enable-dp-encoder: the vision tower whole" in n for n in after["engine"]["notes"])


def test_dp_encoder_at_tp_1_and_elsewhere_changes_nothing(cli):
    def weights(model, tp, *extra):
        code, out, err = cli("estimate", model, "--gpu", "h100", "--context", "8k", "--engine", "sglang", "--tp", tp,
                             *extra, "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    # TP 1: the tower is whole already (parallel_hook.py handle_data_parallelism only warns)
    assert (weights("qwen2.5-vl-7b", "1")["weight_bytes_per_gpu"]
            == weights("qwen2.5-vl-7b", "1", "--mm-enable-dp-encoder")["weight_bytes_per_gpu"])
    # a model without a tower kvplan read for the flag: said
    got = weights("llama-3.1-8b", "2", "--mm-enable-dp-encoder")
    assert got["weight_bytes_per_gpu"] == weights("llama-3.1-8b", "2")["weight_bytes_per_gpu"]
    assert any("--mm-enable-dp-encoder: not modelled for" in n for n in got["notes"])


def test_dp_encoder_lifts_the_vision_heads_refusal(cli):
    # Qwen3-VL-8B's 16 vision heads at --tp 32: VisionAttention splits them over TP without dummy heads
    # (dist_utils.divide asserts); with use_data_parallel its tp_size is 1 (layers/attention/vision.py)
    base = ("estimate", "qwen3-vl-8b", "--gpu", "h100", "--context", "8k", "--engine", "sglang", "--tp", "32")
    code, _, err = cli(*base)
    assert code == 2 and "16 vision heads" in err
    code, _, err = cli(*base, "--mm-enable-dp-encoder")
    assert code == 0, err


@pytest.mark.parametrize("model,flags,said,unsaid", [
    # deepseek_v2.py DeepseekV2DecoderLayer: the dense MLP "replicated" under is_dense_ffn_fully_dp();
    # ParallelLMHead use_attn_tp_group=enable_dp_lm_head: neither is split over all 8 GPUs then
    ("deepseek-v3", ["--tp", "8", "--dp", "8", "--enable-dp-lm-head", "--moe-dense-tp-size", "1"],
     ("dense MLPs whole on every GPU (--moe-dense-tp-size 1)", "LM head over the attention TP group of 1"),
     "dense MLPs, shared experts and the LM head split over all"),
    # qwen3_vl.py use_data_parallel = mm_enable_dp_encoder: the tower whole, not over the attention TP group
    ("qwen3-vl-30b-a3b", ["--tp", "4", "--dp", "4", "--mm-enable-dp-encoder"],
     ("the vision tower whole on every GPU (--mm-enable-dp-encoder)",), "the vision tower as SGLang's"),
])
def test_placement_note_follows_the_flags(cli, model, flags, said, unsaid):
    code, out, err = cli("estimate", model, "--gpu", "h200", "--context", "8k", "--engine", "sglang", *flags)
    assert code == 0, err
    note = next(line for line in out.splitlines() if line.startswith("note: SGLang --tp"))
    assert all(s in note for s in said) and unsaid not in note, note


def test_moe_dense_tp_size_mimo_v2_reads_it(cli):
    # mimo_v2.py MiMoV2DecoderLayer builds the dense MLP "replicated" under is_dense_ffn_fully_dp(), and
    # MiMoV2ForCausalLM (EntryClass, the MiMo-V2.5 / V2.6 configs' architecture) is the base of MiMoV2FlashForCausalLM.
    # MiMo-V2.6-Flash: moe_layer_freq[0] = 0, one dense layer, hidden 4,096, intermediate 16,384, FP8 blocks 128 x 128:
    # 3 x (16,384 x 4,096 B + 128 x 32 x 4 B of scales) = 201,375,744 B; whole instead of an eighth at --tp 8:
    # + 201,375,744 - 25,171,968 = 176,203,776 B a GPU
    def get(*extra):
        code, out, err = cli("estimate", "tests/data/configs/mimo-v2.6-flash.json", "--gpu", "h200", "--context", "8k",
                             "--engine", "sglang", "--tp", "8", *extra, "--format", "json")
        assert code == 0, err
        return json.loads(out)["engine"]

    before, after = get(), get("--moe-dense-tp-size", "1")
    assert after["weight_bytes_per_gpu"] - before["weight_bytes_per_gpu"] == 176_203_776


def test_moe_dense_tp_size_unmodelled_family_is_not_said_to_ignore_it():
    # xllm.py XllmDecoderLayer: mlp_parallel_group = "replicated" if is_dense_ffn_fully_dp() else "tp": the flag is
    # read, kvplan does not size it; the note must not say "does not read it"
    from types import SimpleNamespace

    from kvplan.engines.sglang_groups import GroupFlags, notes

    model = SimpleNamespace(architecture="XllmForCausalLM", model_type="xllm")
    dep = SimpleNamespace(sglang_groups=GroupFlags(moe_dense_tp=1), tp=8, dp=1, dense_over_all=False)
    (line,) = notes(model, None, dep)
    assert "not modelled" in line and "xllm.py" in line and "does not read it" not in line
