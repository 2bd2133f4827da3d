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
