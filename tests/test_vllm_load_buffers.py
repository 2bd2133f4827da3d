"""What vLLM builds for DeepSeek-sparse-attention models inside its load, beside the weights
(kvplan.engines.vllm_load_buffers, GLM-5's rule in vllm_rope_cache): the top-k indices buffer (max_num_batched_tokens x
index_topk int32), the sparse MLA index groups' workspaces (0.30+), and GLM-5's rotary tables. Expected bytes are
worked out by hand from the shapes the vLLM files allocate; the GLM-5.2 figures are checked against a public 0.26.0
start (tests/data/vllm_logs/v0260_glm52_dummy_32gb_pocketinfer.log)."""

import json
from pathlib import Path

from test_calibrate import calibrate, figures

from kvplan import load_model
from kvplan.configs.build import resolve
from kvplan.engines.vllm_load_buffers import index_group_bytes, topk_buffer
from kvplan.engines.vllm_profile import predict_available
from kvplan.engines.vllm_load import load_buffers
from kvplan.engines.vllm_rope_cache import rope_cache_bytes, rope_tables

GIB = 2**30
DATA = Path(__file__).parent / "data"
SPECS = Path(__file__).parent.parent / "model_specs"
GLM52 = DATA / "configs" / "glm-5.2-dummy-pocketinfer.json"
LOG = "v0260_glm52_dummy_32gb_pocketinfer.log"


def fields_of(raw: dict):
    return resolve(raw, "test")[1]


def raw_of(path: Path) -> dict:
    return json.loads(path.read_text())


# -- GLM-5's rotary tables ---------------------------------------------------------------------------------------

def test_glm5_rope_is_one_table_when_the_indexer_interleaves():
    # deepseek_v2.py DeepseekV2MLAAttention (0.26.0): get_rope(qk_rope_head_dim 64, max_position 1,048,576, default
    # rope, is_neox_style=False) and the indexer's get_rope(..., is_neox_style=not indexer_rope_interleave): with
    # the flag true both calls have the same arguments, so get_rope's cache hands one table back:
    # 1,048,576 x 64 x 2 B = 134,217,728 B (128 MiB)
    fields = fields_of(raw_of(GLM52))
    assert rope_cache_bytes(fields, version="0.26.0") == 134_217_728
    assert rope_cache_bytes(fields, version="0.34.0") == 134_217_728


def test_glm5_rope_is_two_tables_with_a_neox_indexer():
    # indexer_rope_interleave false: the indexer's rope is neox style, a distinct instance: 2 x 134,217,728 B
    raw = {**raw_of(GLM52), "indexer_rope_interleave": False}
    tables = rope_tables(fields_of(raw), version="0.26.0")
    assert [(t.rows, t.rotary_dim, t.dtype_bytes) for t in tables] == [(1_048_576, 64, 2)] * 2
    assert rope_cache_bytes(fields_of(raw), version="0.16.0") == 268_435_456


# -- the top-k indices buffer ---------------------------------------------------------------------------------------

def test_topk_buffer_is_tokens_x_index_topk_int32():
    # deepseek_v2.py DeepseekV2Model.__init__ (0.26.0): torch.empty(max_num_batched_tokens, index_topk, int32)
    glm = fields_of(raw_of(GLM52))
    assert topk_buffer(glm, 2048, "0.26.0").bytes == 2048 * 2048 * 4 == 16_777_216
    assert topk_buffer(glm, 8192, "0.26.0").bytes == 67_108_864
    v32 = fields_of(raw_of(SPECS / "deepseek-v3.2-exp.json"))
    assert topk_buffer(v32, 8192, "0.11.0").bytes == 67_108_864  # DeepSeek-V3.2's first release
    assert topk_buffer(v32, 8192, "0.10.2").bytes == 0
    # deepseek_v4 (models/deepseek_v4/nvidia/model.py DeepseekV4Model): index_topk 512: 8,192 x 512 x 4 B
    v4 = fields_of(raw_of(SPECS / "deepseek-v4-flash.json"))
    assert topk_buffer(v4, 8192, "0.34.0").bytes == 16_777_216
    # a dense model builds none
    llama = fields_of({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                       "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256})
    assert topk_buffer(llama, 8192, "0.34.0").bytes == 0


def test_minimax_m3_buffer_holds_each_ranks_index_heads():
    # models/minimax_m3/nvidia/model.py (0.24.0-0.34.0): (max(1, 4 index heads // TP), max_num_batched_tokens
    # rounded up to 4, 16 top-k blocks) int32: 8,190 tokens -> 8,192 rows
    sparse = {"sparse_num_index_heads": 4, "sparse_topk_blocks": 16, "sparse_index_dim": 128, "sparse_block_size": 128,
              "sparse_local_block": 1, "sparse_attention_freq": [0, 0, 0] + [1] * 57,
              "sparse_disable_index_value": [0, 0, 0] + [1] * 57}
    raw = {"model_type": "minimax_m3_vl_text", "num_hidden_layers": 60, "hidden_size": 6144,
           "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 200064,
           "intermediate_size": 3072, "num_local_experts": 128, "num_experts_per_tok": 4,
           "max_position_embeddings": 1048576, "sparse_attention_config": sparse}
    f = fields_of(raw)
    assert topk_buffer(f, 8190, "0.34.0", tp=2).bytes == 2 * 8192 * 16 * 4 == 1_048_576
    assert topk_buffer(f, 8190, "0.34.0", tp=8).bytes == 8192 * 16 * 4
    assert topk_buffer(f, 8190, "0.23.0", tp=2).bytes == 0  # before MiniMax-M3's first release


def test_an_unread_width_is_none():
    # GLM-5-Next's buffer width changed between 0.30 and 0.34 and is not read through: not sized
    from kvplan.engines.vllm_load_buffers import BUFFERS

    assert BUFFERS["glm5_next_text"].unread


# -- the sparse MLA index groups (0.30+) ---------------------------------------------------------------------------

def test_index_groups_of_deepseek_v32():
    # index_group.py SparseMLAIndexGroupBuilder.register_layer: one group per indexer layer (61 in DeepSeek-V3.2),
    # each (rows + 1) x index_topk int32 + (rows + 1) int32, rows = min(max_num_batched_tokens, max_num_seqs):
    # min(8,192, 1,024) = 1,024: 61 x (1,025 x 2,048 x 4 + 1,025 x 4) = 61 x 8,400,900 = 512,454,900 B
    assert index_group_bytes("deepseek_v32", 61, 2048, 8192, 1024, "0.34.0") == 512_454_900
    # 0.30.x also keeps request_ids (rows,) int32: + 61 x 1,024 x 4 = 249,856 B
    assert index_group_bytes("deepseek_v32", 61, 2048, 8192, 1024, "0.30.0") == 512_704_756
    assert index_group_bytes("deepseek_v32", 61, 2048, 8192, 1024, "0.29.0") == 0
    # 256 sequences, 2,048 tokens: 61 x (257 x 2,048 x 4 + 257 x 4) = 128,488,692 B
    assert index_group_bytes("deepseek_v32", 61, 2048, 2048, 256, "0.34.0") == 128_488_692


def test_profile_counts_buffer_and_groups_for_deepseek_v32():
    # the whole term for DeepSeek-V3.2-Exp on 0.34.0 at 8,192 tokens and 1,024 sequences: the buffer 67,108,864 B +
    # 61 groups 512,454,900 B = 579,563,764 B on every GPU (whole on every TP rank); 0 on 0.10.2
    model = load_model("deepseek-v3.2-exp")
    assert load_buffers(model, "0.34.0", 8192, tp=8)[0] == 579_563_764
    assert load_buffers(model, "0.26.0", 8192, tp=8)[0] == 67_108_864  # no index groups before 0.30


def test_glm5_groups_follow_its_indexer_layers():
    # GLM-5.2 dummy: indexer_types 'full' on layers 0, 1, 2, 6, 10: 5 groups of (1,025 x 2,048 x 4 + 1,025 x 4) B
    model = load_model(str(GLM52))
    assert load_buffers(model, "0.34.0", 8192, max_num_seqs=1024)[0] == 67_108_864 + 5 * 8_400_900


# -- the public GLM-5.2 start on vLLM 0.26.0 -----------------------------------------------------------------------

def _weights(tokens: int) -> int:
    model = load_model(str(GLM52))
    est = predict_available(model, total_bytes=32 * GIB, gpu_memory_utilization=0.9, max_num_batched_tokens=tokens,
                            max_model_len=4096, version="0.26.0", max_num_seqs=256, enforce_eager=True)
    return est.weight_bytes


def test_glm52_dummy_load_by_hand():
    # parameters: transformers 5.25 GlmMoeDsaForCausalLM built on the meta device from this config counts
    # 8,146,361,088 parameters (the MTP layer is not built), all held in bf16 by vLLM 0.26 (GateLinear keeps the
    # router in bf16): 16,292,722,176 B; + e_score_correction_bias, a buffer there, a float32 Parameter in vLLM
    # (deepseek_v2.py DeepseekV2MoE, noaux_tc) on the 8 MoE layers x 16 experts: 512 B -> 16,292,722,688 B
    # + the one rope table 134,217,728 B + the top-k buffer (tokens x 2,048 x 4 B)
    params = 8_146_361_088 * 2 + 8 * 16 * 4
    assert _weights(2048) == params + 134_217_728 + 2048 * 2048 * 4 == 16_443_717_632
    assert _weights(8192) == params + 134_217_728 + 8192 * 2048 * 4 == 16_494_049_280


def test_glm52_dummy_against_the_public_log(cli):
    # the log prints "Model loading took 15.36 GiB memory": [15.355, 15.365) GiB = [16,487,497,482,
    # 16,498,234,900) B. `vllm serve` on a card below 70 GiB takes max_num_batched_tokens 2,048 (0.26.0
    # engine/arg_utils.py get_batch_defaults, OPENAI_API_SERVER; chunked prefill stays on for this decoder:
    # config/model.py is_chunked_prefill_supported, and neither --enforce-eager nor models/config.py touches it):
    # 16,443,717,632 B = 15.314 GiB, 0.046 GiB below the log. With 8,192 tokens (`--max-num-batched-tokens 8192`, or
    # the LLM class's default) the load is 16,494,049,280 B = 15.3613 GiB, inside the log's rounding. Which it was
    # the README does not say; the card is unnamed, so the available-memory figure is not judged here.
    low, high = int(15.355 * GIB), int(15.365 * GIB)
    assert _weights(2048) < low and low - _weights(2048) < 0.05 * GIB
    assert low <= _weights(8192) < high
    # the tokens, reproduced from the logged 12.29 GiB (the pool's layout, not this change, decides them)
    code, data, err = calibrate(cli, LOG, "--model", str(GLM52), "--version", "0.26.0", "--max-model-len", "4096")
    assert code == 0, err
    tokens = figures(data)["GPU KV cache size (tokens)"]
    assert tokens["logged"] == "990,144" and tokens["within_rounding"]


# -- speculative decoding by MTP: the MTP layers' own top-k buffers ---------------------------------------------

def test_mtp_layers_allocate_their_own_topk_buffer():
    # deepseek_mtp.py DeepSeekMultiTokenPredictorLayer.__init__ (0.11.0, 0.16.0, 0.26.0, 0.30.0, 0.33.0, 0.34.0) and
    # models/deepseek_v32/nvidia/mtp.py (0.33.0, 0.34.0): each of the config's num_nextn_predict_layers MTP layers
    # allocates torch.empty(max_num_batched_tokens, index_topk, int32) of its own, inside the load that measures
    # the drafter with the model. DeepSeek-V3.2-Exp: 1 MTP layer x 8,192 x 2,048 x 4 B = 67,108,864 B more than
    # the target's 579,563,764 B (0.34.0) and 67,108,864 B (0.26.0)
    model = load_model("deepseek-v3.2-exp")
    assert load_buffers(model, "0.34.0", 8192, tp=8, speculative=True, mtp=True)[0] == 579_563_764 + 67_108_864
    assert load_buffers(model, "0.26.0", 8192, tp=8, speculative=True, mtp=True)[0] == 2 * 67_108_864
    # a separate draft model or an EAGLE head (speculative, no MTP): the target's buffers only
    assert load_buffers(model, "0.26.0", 8192, tp=8, speculative=True)[0] == 67_108_864
    assert load_buffers(model, "0.10.2", 8192, tp=8, speculative=True, mtp=True)[0] == 0


def test_profile_with_an_mtp_drafter_adds_its_buffer():
    # the profile's weights term with an MTP drafter: the drafter's weights (given here, 1 GiB) + the MTP layer's
    # top-k buffer, 2,048 tokens x 2,048 x 4 B = 16,777,216 B, on 0.26.0
    from kvplan.engines.vllm_draft_weights import DrafterWeights

    model = load_model("deepseek-v3.2-exp")
    common = dict(total_bytes=141 * GIB, gpu_memory_utilization=0.9, tp=8, max_num_batched_tokens=2048,
                  max_model_len=4096, version="0.26.0", max_num_seqs=256, enforce_eager=True)
    plain = predict_available(model, **common).weight_bytes
    drafted = predict_available(model, drafter=DrafterWeights(GIB, "an MTP module", True), **common).weight_bytes
    assert drafted - plain == GIB + 2048 * 2048 * 4


def test_mtp_draft_tokens_widen_the_index_groups():
    # get_sparse_mla_index_group_max_rows: min(max_num_batched_tokens, max_num_seqs x the widest decode query), which
    # an MTP drafter of k draft tokens makes 1 + k (0.30.0: 1 + k, parallel_drafting off; 0.33.0 / 0.34.0
    # max_decode_query_len: 1 + k + max_num_new_slots_for_drafting, 0 for MTP). DeepSeek-V3.2-Exp, 1,024
    # sequences, 8,192 tokens, k = 1: min(8,192, 2,048) = 2,048 rows, 61 x (2,049 x 2,048 x 4 + 2,049 x 4) =
    # 61 x 16,793,604 = 1,024,409,844 B, beside the target's and the MTP layer's top-k buffers (2 x 67,108,864)
    model = load_model("deepseek-v3.2-exp")
    assert load_buffers(model, "0.34.0", 8192, tp=8, speculative=True, mtp=True, speculative_tokens=1)[0] \
        == 1_024_409_844 + 2 * 67_108_864
    # k = 3: 1,024 x 4 = 4,096 rows: 61 x (4,097 x 2,048 x 4 + 4,097 x 4) = 2,048,319,732 B
    assert index_group_bytes("deepseek_v32", 61, 2048, 8192, 1024, "0.34.0", 4) == 2_048_319_732
    # 0.30.x keeps request_ids (rows,) int32 too: + 61 x 2,048 x 4 = 499,712 B
    assert index_group_bytes("deepseek_v32", 61, 2048, 8192, 1024, "0.30.0", 2) == 1_024_909_556
    # a separate draft model or EAGLE head: not widened (a note says so)
    total, _, notes = load_buffers(model, "0.34.0", 8192, tp=8, speculative=True, speculative_tokens=1)
    assert total == 579_563_764 and any("modelled only for an MTP drafter" in n for n in notes)


def test_estimate_with_mtp_counts_the_widened_groups(cli):
    # kvplan estimate --engine vllm@0.34 --mtp on 8 x H200 (vLLM's defaults above 70 GiB: 1,024 sequences, 8,192
    # batched tokens): DeepSeek-V3.2-Exp's one MTP layer gives num_speculative_tokens 1, so the load holds the MTP layer's top-k buffer (67,108,864 B) and the 61 index
    # groups at 2,048 rows instead of 1,024 (1,024,409,844 - 512,454,900 = 511,954,944 B more) beside the run without
    code, out, err = cli("estimate", "deepseek-v3.2-exp", "--gpu", "h200", "--tp", "8", "--engine", "vllm@0.34",
                         "--context", "32768", "--format", "json")
    assert code == 0, err
    plain = json.loads(out)["engine"]["profile"]["weight_bytes"]
    code, out, err = cli("estimate", "deepseek-v3.2-exp", "--gpu", "h200", "--tp", "8", "--engine", "vllm@0.34",
                         "--context", "32768", "--mtp", "--format", "json")
    assert code == 0, err
    profile = json.loads(out)["engine"]["profile"]
    assert "64 MiB of the MTP layers' own top-k indices buffers" in profile["weights_from"]
    # the drafter's weights are vllm_draft_weights' (tested there); the buffers come on top of them
    from kvplan.engines.vllm_draft_weights import drafter_weights

    mtp = drafter_weights(load_model("deepseek-v3.2-exp"), None, draft_layers=1, tp=8, release="0.34").bytes_per_gpu
    assert profile["weight_bytes"] - plain == mtp + 67_108_864 + 511_954_944
