"""Families vLLM 0.33 serves that kvplan read only from Dec 2026: Kimi K3 (kimi_k3, its text model kimi_linear)
and MiMo-V2.x (mimo_v2, vLLM's MiMoV2ForCausalLM: a MiMoV2FlashForCausalLM subclass with the same attention).

Configs (tests/data/configs/):
- kimi-k3.json: moonshotai/Kimi-K3's config.json as quoted verbatim in a public model-information report (code
  index file id 62826164383, its "original config.json" block);
- mimo-v2.6-flash.json: XiaomiMiMo/MiMo-V2.6-Flash-RL's config.json as transcribed in a public C++ test header
  (code index file id 69700804720); its vision, audio and processor sub-configs were left out by that source;
- glm-5.3-flash-exl3-derivative.json: the config.json of a public EXL3 re-quantization of GLM-5.3-Flash
  (0xSero/glm-5.3-flash-spark-mosaic, artifact-metadata/k2-k256/config.json, code index id 68536254103),
  verbatim; it prunes the routed experts (256 of 288) and brings its own quantization_config, and keeps
  every field the cache depends on (45 layers, KDA 64 x 128, kv_lora_rank 512 NoPE, index_kpool 4,
  index_topk 2048), which agree with vLLM's models/glm5next and transformers' Glm5NextTextConfig.
- qwen3.8-flash-next.json: Qwen/Qwen3.8-Flash-Next's config.json (model_type qwen4_exp) as embedded verbatim in a
  public Rust config-parser test (code index file id 59111384863, "the shipped config.json, verbatim apart from
  the vision block and the 48-entry layer_types", revision de4b8e4d43b917e7706784d8bb445c9af86a3540): its
  text_config is whole; its vision_config is cut to depth and width there; layer_types is derived by the
  config class (3 x linear_attention + 1 x indexed_attention), which the same file's shipped list and two more
  public copies (ids 69562400950, 71512192201) confirm.
- step-5-preview-reconstructed.json: NOT a verbatim file (none is public): the values a safetensors-header study of
  the Step-5-Preview checkpoint states (code index id 70329046700; its sparse_config block is quoted verbatim
  there), which a third-party vLLM plugin's defaults (id 70121057955) and the tensor shapes agree with, re-keyed as
  vLLM 0.33's step5_vl (the Preview ships model_type step3p5v / text step4, which 0.33 does not register).
- iquest-coder-v1-40b-loop.json: IQuest-Coder-V1-40B-Loop's config.json fields as a public Swift test transcribes
  them (code index id 55321679936, constant kIQuestLoopCoderConfigJSON): 17 keys, probably a subset of the file,
  but every field vLLM's iquest_loopcoder.py reads for the cache is among them.
Expected values are worked out by hand from the layouts in vLLM 0.33's model code, or are figures vLLM's own
planner gave on the specs (benchmarks/vllm_oracle.py, vllm_oracle_glm5next.py, vllm_oracle_qwen4exp.py,
vllm_oracle_step5.py, on CPU).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.engines.vllm import simulate as _simulate
from kvplan.errors import KvplanError, UsageError
from kvplan.engines.vllm_rules import V0_33, resolve


def simulate(*args, **kwargs):
    """vLLM 0.33's pool: the release whose model code these families were first read in and whose planner gave
    the figures below (0.34 was read for them too: test_kimi_k3_vllm_034_pool_by_hand,
    test_qwen4_exp_vllm_034_pool_by_hand)."""
    kwargs.setdefault("rules", V0_33)
    return _simulate(*args, **kwargs)


DATA = Path(__file__).parent / "data" / "configs"
GIB = 2**30


def _model(name: str):
    return build_model(json.loads((DATA / name).read_text()), name)


def test_kimi_k3_reads_its_text_model():
    model = _model("kimi-k3.json")
    assert model.reading == "exact" and model.architecture == "KimiK3ForConditionalGeneration"
    est = estimate(model, 32768)
    # 24 MLA layers (full_attn_layers) of one latent, 512 + 64, in bf16
    assert est.bytes_per_token == 24 * (512 + 64) * 2 == 27_648
    # 69 KDA layers: 96 heads x 128 x 128 float32 recurrent state + a short conv (kernel 4: 3 columns) of
    # q, k and v (3 x 96 x 128 channels) in bf16
    assert est.state_bytes_per_sequence == 69 * (96 * 128 * 128 * 4 + 3 * 3 * 96 * 128 * 2) == 449_372_160


@pytest.mark.parametrize("gpu, tokens", [
    ("h200", 146_363),  # FlashKDA: 3 state pages a request in 'align' mode (2 + the prefill checkpoint)
    ("a100-80gb", 182_954),  # Triton KDA prefill (FlashKDA needs SM 9, 10 or 12): 2 pages
])
def test_kimi_k3_vllm_pool_keeps_flashkdas_checkpoint_page(gpu, tokens):
    """vLLM's planner on the same specs (benchmarks/vllm_oracle.py 'kimi-k3 (flashkda)', and with
    num_prefill_checkpoint_blocks=0): 3 KDA groups of 23 and the 24 MLA layers, blocks of 5,760 tokens,
    67 blocks at 10 GiB; a request of 32K needs 3 x 3 + 6 or 3 x 2 + 6 blocks."""
    pool = simulate(_model("kimi-k3.json"), kv_memory_bytes=10 * GIB, max_model_len=32768, gpu=gpu)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == (67, tokens)
    assert pool.blocks_per_request == (15 if gpu == "h200" else 12)


@pytest.mark.parametrize("gpu, per_request", [("h200", 3 * 3 + 6), ("a100-80gb", 3 * 2 + 6)])
def test_kimi_k3_vllm_034_pool_by_hand(gpu, per_request):
    """vLLM 0.34.0 registers 0.33's KDA and MLA specs (models/kimi_k3/nvidia/kda.py get_kv_cache_spec and
    resolve_kda_prefill_backend unchanged) and sizes the block as 0.33 does (platforms/interface.py
    _align_hybrid_block_size: MLA's 128-token alignment outweighs the new default 64); its planner on those specs
    agrees (benchmarks/vllm_oracle.py --kimi-k3 0.34: 12 cases). By hand at 10 GiB and 32K: a KDA state is
    96 x 128 x 128 x 4 + 3 x (3 x 96 x 128) x 2 = 6,512,640 B (mamba_utils.py kda_state_shape, also unchanged),
    so the block is 128 x cdiv(6,512,640, 128 x 1,152) = 5,760 tokens, its page 5,760 x 1,152 = 6,635,520 B; a row
    holds the widest group, the 24 MLA layers: 159,252,480 B; 10 GiB // that = 67 blocks. A request of 32,768
    tokens needs cdiv(32,768, 5,760) = 6 MLA blocks and 3 KDA groups x 3 pages (FlashKDA's checkpoint) or x 2."""
    pool = simulate(_model("kimi-k3.json"), kv_memory_bytes=10 * GIB, max_model_len=32768, gpu=gpu,
                    rules=resolve("0.34")[0])
    assert pool.bytes_per_block == 24 * 5_760 * 1_152 == 159_252_480
    assert pool.num_blocks == 10 * GIB // 159_252_480 == 67
    assert pool.blocks_per_request == per_request
    assert pool.gpu_kv_cache_tokens == 67 * 32_768 // per_request  # 146,363 (FlashKDA) or 182,954


def test_kimi_k3_vllm_releases_before_033_are_refused():
    with pytest.raises(UsageError, match="Kimi K3's KDA pages in vLLM 0.33 and 0.34 only"):
        simulate(_model("kimi-k3.json"), kv_memory_bytes=10 * GIB, max_model_len=32768, rules=resolve("0.32")[0])


def test_mimo_v2_reads_as_the_flash_layout():
    model = _model("mimo-v2.6-flash.json")
    assert model.reading == "exact" and model.num_layers == 48
    est = estimate(model, 32768)
    # hybrid_layer_pattern: 9 full layers of 4 KV heads x (192 K + 128 V) and 39 sliding ones of 8 KV heads,
    # window sliding_window_size + 1 = 129 (MiMoV2FlashConfig), bf16
    full, sliding = 4 * (192 + 128) * 2, 8 * (192 + 128) * 2
    assert (full, sliding) == (2_560, 5_120)
    assert est.kv_bytes_per_sequence == 9 * full * 32768 + 39 * sliding * 129 == 780_733_440


@pytest.mark.parametrize("architecture, full", [
    ("BailingMoeV3ForCausalLM", [5, 11, 17, 23, 24, 25]),  # Ling 3.0: the 2 trailing layers are MLA too
    ("BailingMoeV2_5ForCausalLM", [5, 11, 17, 23]),  # V2.5: every 6th only
])
def test_bailing_hybrid_tail_layers_follow_the_architecture(architecture, full):
    """vLLM 0.33 bailing_moe_v3.py _is_kda_layer: not ((i + 1) % g == 0 or i >= n // g * g);
    bailing_moe_linear.py is_linear_layer: (i + 1) % g != 0. 26 layers, layer_group_size 6."""
    config = {"model_type": "bailing_hybrid", "architectures": [architecture], "num_hidden_layers": 26,
              "layer_group_size": 6, "hidden_size": 1024, "num_attention_heads": 16, "head_dim": 128,
              "vocab_size": 1000, "intermediate_size": 2048}
    model = build_model(config, "ling")
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == full



def test_glm5_next_layers_by_hand():
    model = _model("glm-5.3-flash-exl3-derivative.json")
    assert model.reading == "exact" and model.num_layers == 45
    sparse = [i for i, layer in enumerate(model.layers) if layer.caches]
    assert sparse == list(range(3, 45, 4))  # deepseek_sparse_attention every 4th layer
    n = 131072
    est = estimate(model, n)
    # a DSA layer: a 512-wide NoPE latent in bf16 (1,024 B) per token and one 132-B fp8 key per pool of 4
    assert est.bytes_per_token == 11 * (1024 + 132 // 4) == 11_627
    assert est.kv_bytes_per_sequence == 11 * (n * 1024 + n // 4 * 132) == 1_523_974_144
    # KDA (34 layers): conv 3 columns x 3 x 64 x 128 bf16 + 64 x 128 x 128 float32; a tail ring of 4 x 2 x 128
    # bf16 on each DSA layer
    kda = 3 * 3 * 64 * 128 * 2 + 64 * 128 * 128 * 4
    assert est.state_bytes_per_sequence == 34 * kda + 11 * 4 * 2 * 128 * 2 == 147_642_368
    # a step: every pooled key, and the latents of the top 512 pools of 4 (2,048 tokens)
    assert est.read_bytes_per_step == 11 * (n // 4 * 132 + 2048 * 1024) == 70_647_808


# (tp, GiB, max_model_len) -> (blocks, tokens): vLLM 0.33.0's planner on the specs its GLM-5-Next code registers
# on Hopper (benchmarks/vllm_oracle_glm5next.py: vLLM's own ModelConfig, indexer and tail caches, KDA spec code,
# block-size resolution and Model Runner V2's collection), max_num_batched_tokens 8,192
VLLM_GLM5_NEXT = {
    (1, 10, 8192): (212, 115_780), (1, 10, 131072): (212, 631_528), (1, 40, 8192): (848, 463_121),
    (1, 40, 131072): (848, 2_526_114), (2, 10, 131072): (424, 751_007), (4, 40, 8192): (3_201, 1_248_694),
    (8, 10, 131072): (1_437, 863_992),
}


@pytest.mark.parametrize("case", sorted(VLLM_GLM5_NEXT), ids=lambda c: f"tp{c[0]}-{c[1]}GiB-{c[2]}")
def test_glm5_next_vllm_pool_equals_vllms_planner(case):
    tp, gib, max_len = case
    pool = simulate(_model("glm-5.3-flash-exl3-derivative.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len,
                    tp=tp, max_num_batched_tokens=8192, gpu="h200")
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == VLLM_GLM5_NEXT[case] and pool.fits


def test_glm5_next_vllm_pool_by_hand_at_tp1():
    pool = simulate(_model("glm-5.3-flash-exl3-derivative.json"), kv_memory_bytes=10 * GIB, max_model_len=131072,
                    max_num_batched_tokens=8192, gpu="h200")
    kda = 3 * 3 * 64 * 128 * 2 + 64 * 128 * 128 * 4  # 4,341,760 B
    block = 128 * -(-kda // (128 * 1024))  # a latent page (1,024 B a token) holds the KDA state: 4,352 tokens
    # the widest group: 11 latent pages + 11 pages of pooled keys (1,088 x 132 B), rounded to lcm(64 keys x 132 B
    # (the indexer's 256-token kernel page), 1,024 B) = 33,792
    widest = 11 * block * 1024 + 11 * block // 4 * 132
    assert pool.bytes_per_block == -(-widest // 33_792) * 33_792 == 50_620_416
    # KDA: 34 layers in groups of 50,600,704 // 4,456,448 = 11 -> 4 groups, 3 pages each (align + checkpoint);
    # cdiv(128K, 4,352) = 31 latent blocks; 1 ring block
    assert pool.blocks_per_request == 4 * 3 + 31 + 1 == 44
    assert pool.gpu_kv_cache_tokens == int(10 * GIB // 50_620_416 / 44 * 131072) == 631_528


# vLLM 0.34.0's planner on the specs its GLM-5-Next code registers (benchmarks/vllm_oracle_glm5next.py on 0.34.0's
# sdist: TP 1 and 2 in bf16, TP 1 in fp8, 10 / 40 GiB, 8K / 128K, 12 cases equal kvplan's): as under 0.33
VLLM_GLM5_NEXT_034 = {
    (1, "auto", 10, 131072): (212, 631_528), (2, "auto", 40, 131072): (1_696, 3_004_028),
    (1, "fp8", 40, 8192): (835, 488_594),
}


@pytest.mark.parametrize("case", sorted(VLLM_GLM5_NEXT_034), ids=lambda c: "-".join(map(str, c)))
def test_glm5_next_vllm_034_pool_equals_vllms_planner(case):
    tp, dtype, gib, max_len = case
    pool = simulate(_model("glm-5.3-flash-exl3-derivative.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len,
                    tp=tp, max_num_batched_tokens=8192, gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype,
                    rules=resolve("0.34")[0])
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == VLLM_GLM5_NEXT_034[case] and pool.fits


def test_glm5_next_vllm_034_pool_by_hand_at_tp1():
    # 0.34's default block (64) does not move the hybrid block: MLA aligns it to 128 anyway
    # (platforms/interface.py _align_hybrid_block_size), so 128 x cdiv(4,341,760, 128 x 1,024) = 4,352 tokens
    pool = simulate(_model("glm-5.3-flash-exl3-derivative.json"), kv_memory_bytes=10 * GIB, max_model_len=131072,
                    max_num_batched_tokens=8192, gpu="h200", rules=resolve("0.34")[0])
    assert pool.bytes_per_block == 50_620_416  # 11 x (4,352 x 1,024 + 1,088 x 132) rounded up to 33,792
    assert pool.num_blocks == 10 * GIB // 50_620_416 == 212
    assert pool.blocks_per_request == 4 * 3 + 131_072 // 4_352 + 1 + 1 == 44  # cdiv(131,072, 4,352) = 31
    assert pool.gpu_kv_cache_tokens == 212 * 131_072 // 44 == 631_528


def test_glm5_next_fp8_latents_and_refusals():
    model = _model("glm-5.3-flash-exl3-derivative.json")
    pool = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=131072, max_num_batched_tokens=8192, gpu="h200",
                    kv_cache_dtype="fp8")
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == (208, 940_102)  # the oracle: block 8,576
    with pytest.raises(UsageError, match="modelled on Hopper"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="b200")
    with pytest.raises(UsageError, match="as vLLM 0.33 and 0.34 plan it"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, rules=resolve("0.32")[0])


def test_glm5_next_parameters_equal_transformers_count():
    """Glm5NextTextModel built by transformers 5.23 on the meta device from this config (sum of numel:
    278,864,038,910) plus the untied lm_head (154,880 x 4,096) and the routers' e_score_correction_bias (a buffer
    in transformers, a tensor of the checkpoint: 42 sparse layers x 256); the derivative keeps 256 of the 288
    experts."""
    model = _model("glm-5.3-flash-exl3-derivative.json")
    assert model.param_count == 278_864_038_910 + 154_880 * 4096 + 42 * 256 == 279_498_438_142
    # active: 8 of the 256 routed experts (3 x 4,096 x 2,048 each) on the 42 sparse-MLP layers
    assert model.active_param_count == model.param_count - 42 * (256 - 8) * 3 * 4096 * 2048


def test_glm5_next_official_expert_count_meets_the_published_size():
    """With the official 288 routed experts the text model counts 313,326,799,870 (transformers 5.23's meta-device
    count agrees) and 42 x 288 score-correction biases; adding the MTP layer (7,432,592,128, counted by hand from
    vLLM's mtp.py) and the vision tower (563,627,008) gives 321.3B, the published 'GLM-5.3-Flash: 320B total'
    (Baidu AIHC's model page)."""
    config = json.loads((DATA / "glm-5.3-flash-exl3-derivative.json").read_text())
    config["text_config"]["n_routed_experts"] = 288
    model = build_model(config, "glm-5.3-flash")
    assert model.param_count == 313_326_799_870 + 42 * 288 == 313_326_811_966
    whole = model.param_count + 7_432_592_128 + 563_627_008
    assert abs(whole - 320e9) / 320e9 < 0.01


# -- Qwen4-Exp (Qwen3.8-Flash-Next): Gated DeltaNet, QSA and one PLE conv

def test_qwen4_exp_layers_by_hand():
    model = _model("qwen3.8-flash-next.json")
    assert model.reading == "exact" and model.num_layers == 48
    assert [i for i, layer in enumerate(model.layers) if layer.caches] == list(range(3, 48, 4))
    n = 131072
    est = estimate(model, n)
    # a QSA layer: K and V of 2 heads x 256 in bf16 (2,048 B) per token, one bf16 index key of 128 per 4 tokens
    assert est.bytes_per_token == 12 * (2 * 2 * 256 * 2 + 128 * 2 // 4) == 25_344
    assert est.kv_bytes_per_sequence == 12 * (n * 2048 + n // 4 * 256) == 3_321_888_768
    # states: 36 Gated DeltaNet (conv 3 rows of 2 x 16 x 128 + 48 x 128 channels in bf16, 48 x 128 x 128 float32),
    # 12 rings (4 rows of 128 bf16 + 3 int64 MRoPE positions as 12 bf16), the PLE conv on layer 1 (4 x 2,560
    # channels, (4 - 1) x 3 rows, bf16)
    gdn = 3 * 10240 * 2 + 48 * 128 * 128 * 4
    assert est.state_bytes_per_sequence == 36 * gdn + 12 * 4 * 140 * 2 + 10240 * 9 * 2 == 115_655_808
    # a step: every index key, the K/V of the top 512 complete groups of 4 (2,048 tokens) and of the open group
    odd = 10_003  # 2,500 complete groups and 3 tokens in the open one
    assert estimate(model, odd).read_bytes_per_step == 12 * (odd // 4 * 256 + (2048 + 3) * 2048)
    assert estimate(model, 2_000).read_bytes_per_step == 12 * (500 * 256 + 2_000 * 2048)  # all of it, below 2,048


def test_qwen4_exp_ple_conv_stays_whole_under_tp():
    from kvplan.capacity.shard import shard

    model = _model("qwen3.8-flash-next.json")
    rank = shard(model, 2, 1)[0]
    ple = rank.layers[1].state.also[0]
    assert rank.layers[1].state.kind == "gated_deltanet" and ple.kind == "short_conv" and ple.bytes == 184_320
    assert rank.layers[0].state.bytes == (3 * 10240 * 2 + 48 * 128 * 128 * 4) // 2
    assert rank.layers[3].state.bytes == 4 * 140 * 2  # the ring, whole on every rank


def test_qwen4_exp_text_architecture_rings_hold_no_positions_and_plain_full_attention_without_qsa():
    config = json.loads((DATA / "qwen3.8-flash-next.json").read_text())
    config["architectures"] = ["Qwen4ExpForCausalLM"]  # vLLM strips MRoPE for the text architecture
    assert build_model(config, "text").layers[3].state.bytes == 4 * 128 * 2
    text = config["text_config"]
    for name in ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio"):
        del text[name]
    plain = build_model(config, "no-qsa")  # Qwen3NextAttention: K/V of every token, no indexer
    assert estimate(plain, 8192).bytes_per_token == 12 * 2048
    assert plain.layers[3].state is None
    text["indexer_budget"] = 2048
    with pytest.raises(KvplanError, match="sets indexer_budget but not indexer_n_heads"):
        build_model(config, "half-qsa")


# (tp, kv cache dtype, prefix caching, GiB, max_model_len) -> (blocks, tokens): vLLM 0.33.0's planner on the specs
# its Qwen4-Exp code registers on Hopper (benchmarks/vllm_oracle_qwen4exp.py; --grid agrees on 168 of 168 cases, 32 under
# PP, 72 with a --block-size)
VLLM_QWEN4_EXP = {
    (1, "auto", True, 10, 8192): (264, 113_825), (1, "auto", True, 10, 131072): (264, 364_242),
    (1, "auto", True, 40, 8192): (1_059, 456_596), (1, "auto", True, 40, 131072): (1_059, 1_461_107),
    (1, "fp8", True, 10, 8192): (262, 134_144), (1, "fp8", True, 10, 131072): (262, 624_379),
    (1, "auto", False, 10, 8192): (270, 201_076), (1, "auto", False, 10, 131072): (270, 397_634),
    (8, "auto", True, 10, 8192): (1_835, 469_760), (8, "auto", True, 40, 131072): (7_342, 3_144_871),
    (2, "fp8", True, 40, 131072): (1_981, 4_720_975),
}


@pytest.mark.parametrize("case", sorted(VLLM_QWEN4_EXP), ids=lambda c: "-".join(map(str, c)))
def test_qwen4_exp_vllm_pool_equals_vllms_planner(case):
    tp, dtype, prefix, gib, max_len = case
    pool = simulate(_model("qwen3.8-flash-next.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len, tp=tp,
                    gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype, prefix_caching=prefix)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == VLLM_QWEN4_EXP[case] and pool.fits


def test_qwen4_exp_vllm_pool_by_hand_at_tp1():
    pool = simulate(_model("qwen3.8-flash-next.json"), kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200")
    gdn = 3 * 10240 * 2 + 48 * 128 * 128 * 4  # 3,207,168 B, the largest state
    block = 64 * -(-gdn // (64 * 2048))  # a K/V page (2,048 B a token) holds it, in steps of lcm(16, 64): 1,600
    # the attention group: 12 K/V pages and 12 pages of index keys (400 rows of 256 B); every other group is smaller
    per_block = 12 * (block * 2048 + block // 4 * 256)
    assert per_block == 40_550_400 and pool.num_blocks == 10 * GIB // per_block == 264
    # a request: 3 Gated DeltaNet groups and the PLE group at 3 pages each ('align' mode with FlashInfer's
    # prefill checkpoint), 1 ring page, cdiv(8,192, 1,600) K/V blocks
    assert pool.blocks_per_request == 4 * 3 + 1 + 6 == 19
    assert pool.gpu_kv_cache_tokens == int(264 / 19 * 8192)


def test_qwen4_exp_vllm_034_pool_by_hand():
    """vLLM 0.34.0: CacheConfig.DEFAULT_BLOCK_SIZE 64, which both non-SSM backends take (QWEN4_EXP_QSA_INDEXER
    MultipleOf(1), QWEN4_EXP_QSA_TRITON MultipleOf(16): platforms/interface.py _preferred_block_size_for_backends);
    _align_hybrid_block_size then steps by max(1, 64) = 64, lcm'ed with the checkpoint grid 64 in 'align' mode."""
    model = _model("qwen3.8-flash-next.json")
    v034 = resolve("0.34")[0]
    gdn = 3 * 10240 * 2 + 48 * 128 * 128 * 4  # 3,207,168 B, the largest state; a K/V token 2 x 2 x 256 x 2 = 2,048 B
    block = 64 * -(-gdn // (64 * 2048))  # 64 x 25 = 1,600, as 0.33's lcm(16, 64) steps gave
    per_block = 12 * (block * 2048 + block // 4 * 256)  # the attention group: 12 K/V pages + 12 key pages
    assert block == 1600 and per_block == 40_550_400
    pool = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=v034)
    # prefix caching on: 4 state groups x 3 pages + 1 ring + cdiv(8,192, 1,600) = 6
    assert (pool.num_blocks, pool.blocks_per_request) == (10 * GIB // per_block, 4 * 3 + 1 + 6) == (264, 19)
    # prefix caching off: 0.33 stepped by 16 (16 x cdiv(gdn, 16 x 2,048) = 16 x 98 = 1,568: 270 blocks); 0.34
    # steps by the default block, 64, so the block stays 1,600: 264 blocks, 4 + 1 + 6 = 11 a request,
    # 264 / 11 x 8,192 = 196,608 tokens (benchmarks/vllm_oracle_qwen4exp.py --no-prefix-caching on 0.34.0 prints
    # the same: 264 blocks, 196,608 tokens)
    off = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=v034, prefix_caching=False)
    assert (off.num_blocks, off.blocks_per_request, off.gpu_kv_cache_tokens) == (264, 11, 264 * 8192 // 11)
    assert simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200",
                    prefix_caching=False).num_blocks == 10 * GIB // (12 * (1568 * 2048 + 392 * 256)) == 270


def test_qwen4_exp_vllm_034_pool_with_a_block_size_by_hand():
    """vLLM 0.34.0, --block-size 96 (user_specified_block_size: phase 1 skipped, the backends take 96);
    _align_hybrid_block_size (platforms/interface.py) steps by max(1, 96) = 96, lcm'ed with the checkpoint grid 64 in
    'align' mode, rounds up to 16 and keeps 96 where that is larger. 96 % 4 == 0, so the indexer caches build."""
    model = _model("qwen3.8-flash-next.json")
    v034 = resolve("0.34")[0]
    gdn = 3 * 10240 * 2 + 48 * 128 * 128 * 4  # 3,207,168 B, the largest state; a K/V token 2 x 2 x 256 x 2 = 2,048 B
    # 'align': lcm(96, 64) = 192; 192 x cdiv(3,207,168, 192 x 2,048 = 393,216) = 192 x 9 = 1,728 (a multiple of 16)
    assert 192 * -(-gdn // (192 * 2048)) == 1728 and 96 * -(-gdn // (96 * 2048)) == 1632  # 'align', no prefix caching
    per_block = 12 * (1728 * 2048 + 1728 // 4 * 256)  # the attention group: 12 x (3,538,944 + 110,592) B
    assert per_block == 43_794_432 and 10 * GIB // per_block == 245
    pool = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=v034, block_tokens=96)
    # a request: 4 state groups x 3 pages + 1 ring + cdiv(8,192, 1,728) = 5; 245 / 18 x 8,192 = 111,502.2 tokens
    assert (pool.num_blocks, pool.blocks_per_request, pool.gpu_kv_cache_tokens) == (245, 18, 111_502)
    # no prefix caching: steps of 96: 96 x cdiv(3,207,168, 96 x 2,048 = 196,608) = 96 x 17 = 1,632 (16 x 102);
    # 12 x (1,632 x 2,048 + 408 x 256) = 41,361,408 B a block: 259 blocks; 4 + 1 + cdiv(8,192, 1,632) = 6 = 11
    # (benchmarks/vllm_oracle_qwen4exp.py --block-size 96 [--no-prefix-caching] on 0.34.0 prints 245 blocks,
    # 111,502 tokens and 259 blocks, 192,884 tokens)
    off = simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=v034, block_tokens=96,
                   prefix_caching=False)
    assert 10 * GIB // (12 * (1632 * 2048 + 408 * 256)) == 259
    assert (off.num_blocks, off.blocks_per_request, off.gpu_kv_cache_tokens) == (259, 11, 259 * 8192 // 11)


def test_qwen4_exp_vllm_pool_under_pp():
    """--pp 2, TP 1, bf16, 40 GiB, 128K. get_pp_indices(48, rank, 2): layers 0-23 and 24-47, each stage building its
    own decoder layers with their QSA indexer caches and PLE conv (make_layers). The whole model's groups
    (get_global_kv_cache_groups): the 36 Gated DeltaNet states split into 3 groups dealt round-robin (group g: layers
    4k + g), the 12 QSA layers' keys and K/V one group, the PLE conv one, the 12 rings one. A stage's block is its
    widest group (_project_kv_cache_groups_to_worker, _get_kv_cache_bytes_per_block) and every stage takes the
    fewest blocks (get_kv_cache_configs)."""
    model = _model("qwen3.8-flash-next.json")
    block = 1600  # as at TP 1 without PP: the block comes from the config, not the stage
    kv_page, key_page = block * 2048, block // 4 * 256  # 3,276,800 B and 102,400 B
    stage = 6 * (kv_page + key_page)  # 6 of the 12 QSA layers (3, 7, ..., 23 | 27, ..., 47) on each stage
    assert stage == 20_275_200 > 6 * kv_page  # wider than 6 GDN states (19,660,800 B) or the PLE conv (one page)
    pool = simulate(model, kv_memory_bytes=40 * GIB, max_model_len=131072, gpu="h200", pp=2)
    blocks = 40 * GIB // stage  # 42,949,672,960 // 20,275,200 = 2,118 (twice PP 1's 1,059: half the layers)
    per_request = 4 * 3 + 1 + -(-131072 // block)  # every group on every stage: 12 + 1 + 82 = 95, as at PP 1
    assert (pool.num_blocks, pool.blocks_per_request) == (blocks, per_request) == (2_118, 95)
    assert pool.gpu_kv_cache_tokens == 2_118 * 131072 // 95 == 2_922_215 and pool.fits
    # vLLM 0.33.0's get_kv_cache_configs on CPU (benchmarks/vllm_oracle_qwen4exp.py plan_pp) gives the same
    # 2,118 blocks and 2,922,215 tokens; at PP 4 (12 layers, 3 QSA a stage: 3 x 3,379,200 B) 4,236 and 5,844,431
    pp4 = simulate(model, kv_memory_bytes=40 * GIB, max_model_len=131072, gpu="h200", pp=4)
    assert (pp4.num_blocks, pp4.gpu_kv_cache_tokens) == (40 * GIB // (3 * (kv_page + key_page)), 5_844_431)
    # 1 GiB: 52 blocks a stage; the check holds back one block, so a request may hold 51: 13 + cdiv(L, 1,600) <= 51
    # -> L <= 38 x 1,600 = 60,800 (vLLM 0.33.0's per-stage check, run on CPU through plan_pp, refuses 128K with
    # "the estimated maximum model length is 60800")
    small = simulate(model, kv_memory_bytes=GIB, max_model_len=131072, gpu="h200", pp=2)
    assert (small.num_blocks, small.fits, small.estimated_max_model_len) == (GIB // stage, False, 60_800)


def test_qwen4_exp_ring_row_widths():
    # QSARawKeyCache (0.34 common/qsa_indexer.py; QSAKeyStateCache in 0.33): with cache_rope_positions the row is
    # round_up(indexer_head_dim, 4) + 3 x 4 bf16 columns, without it indexer_head_dim alone; 4 rows (the ratio)
    config = json.loads((DATA / "qwen3.8-flash-next.json").read_text())
    config["text_config"]["indexer_head_dim"] = 130
    assert build_model(config, "vl").layers[3].state.bytes == 4 * (132 + 12) * 2 == 1_152
    config["architectures"] = ["Qwen4ExpForCausalLM"]  # MRoPE stripped (models/config.py)
    text = build_model(config, "text")
    assert text.layers[3].state.bytes == 4 * 130 * 2 == 1_040
    # only the rings with positions get the note that --language-model-only would drop them
    notes = [simulate(m, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=resolve("0.34")[0]).notes
             for m in (_model("qwen3.8-flash-next.json"), text)]
    assert [any("--language-model-only" in n for n in group) for group in notes] == [True, False]


def test_qwen4_exp_vllm_refuses_a_ratio_the_default_block_does_not_divide():
    # _QSAStateCache.__init__ (0.33) and _QSAIndexerCache.__init__ (0.34) raise when the block the caches are
    # built with (CacheConfig's default: 16 in 0.33, 64 in 0.34) is not a multiple of indexer_compress_ratio
    config = json.loads((DATA / "qwen3.8-flash-next.json").read_text())
    config["text_config"]["indexer_compress_ratio"] = 32  # indexer_budget 2,048 stays a multiple of it
    model = build_model(config, "ratio-32")
    with pytest.raises(UsageError, match="indexer_compress_ratio 32 does not divide the default block of 16"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200")
    assert simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200", rules=resolve("0.34")[0]).fits
    config["text_config"]["indexer_compress_ratio"] = 128
    with pytest.raises(UsageError, match="indexer_compress_ratio 128 does not divide the default block of 64"):
        simulate(build_model(config, "ratio-128"), kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="h200",
                 rules=resolve("0.34")[0])


def test_qwen4_exp_vllm_refusals():
    model = _model("qwen3.8-flash-next.json")
    with pytest.raises(UsageError, match="modelled on Hopper"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="b200")
    with pytest.raises(UsageError, match="new in 0.33"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, rules=resolve("0.32")[0])
    with pytest.raises(UsageError, match="speculative decoding"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, num_speculative_tokens=1)
    # the indexer caches are built with --block-size and refuse one that indexer_compress_ratio 4 does not divide
    # (_QSAStateCache.__init__, common/qsa_cache.py, 0.33; benchmarks/vllm_oracle_qwen4exp.py --grid: vLLM raises too)
    with pytest.raises(UsageError, match="does not divide --block-size 6") as err:
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, block_tokens=6)
    assert "multiple of 4" in err.value.hint and "-t page:N" in err.value.hint
    # a release after the ones read (none exists yet: a stand-in 0.35 with 0.34's rules)
    with pytest.raises(UsageError, match="read Qwen4-Exp's pool in vLLM 0.33 and 0.34 only") as err:
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, rules=replace(resolve("0.34")[0], version="0.35"))
    assert err.value.hint == "use --engine vllm@0.34"


def test_qwen4_exp_parameters_equal_transformers_count():
    """Qwen4ExpTextModel built by transformers 5.25 on the meta device from this config (sum of numel:
    176,308,200,320, of which the PLE layer's n-gram table is 320,001,536 x 160 and the routed experts
    48 x 512 x 3 x 2,560 x 640) plus the untied lm_head (248,320 x 2,560)."""
    model = _model("qwen3.8-flash-next.json")
    assert model.param_count == 176_308_200_320 + 248_320 * 2560 == 176_943_899_520
    assert model.active_param_count == model.param_count - 48 * (512 - 10) * 3 * 2560 * 640
    # the published checkpoint (359,999,963,128 B in bf16: 179,999,981,564 parameters, an artifact summary of
    # the official repository, code index id 61689507604) adds the vision tower and the MTP layer, about 1.7%
    published = 359_999_963_128 // 2
    assert 0 < published - model.param_count < 0.02 * published


# -- Step-5: 69 sliding and 23 DSA layers (3, 7, ..., 91), 4 KV heads x 192

def test_step5_layers_by_hand():
    model = _model("step-5-preview-reconstructed.json")
    assert model.num_layers == 92  # layer_types' 3 MTP entries are not decoder layers
    assert [i for i, layer in enumerate(model.layers) if layer.state is not None] == list(range(3, 92, 4))
    n = 131072
    est = estimate(model, n)
    # K and V of 4 x 192 in bf16: 3,072 B a token; a DSA layer also one 256-B FP8 summary per 8 tokens (32 B)
    assert est.bytes_per_token == 92 * 3072 + 23 * 32
    assert est.kv_bytes_per_sequence == 69 * 512 * 3072 + 23 * (n * 3072 + n // 8 * 256)
    assert est.state_bytes_per_sequence == 23 * 7 * 1024  # the open region's 7 rows of 512 bf16
    # a step: the sliding windows; every summary, and the K/V of the top 512 regions of 8 plus the open one
    odd = 10_005  # 1,250 closed regions and 5 tokens in the open one
    assert estimate(model, odd).read_bytes_per_step == 69 * 512 * 3072 + 23 * (odd // 8 * 256 + (4096 + 5) * 3072)


# (tp, kv dtype, block size, GiB, max_model_len) -> (blocks, tokens, fits): vLLM 0.33.0's planner on the specs its
# Step-5 code registers on Hopper (benchmarks/vllm_oracle_step5.py; --grid agrees on 64 of 64 cases)
VLLM_STEP5 = {
    (1, "auto", None, 10, 8192): (9_295, 37_107, True), (1, "auto", None, 10, 131072): (9_295, 107_208, False),
    (1, "auto", None, 40, 131072): (37_183, 428_867, True), (1, "fp8", None, 10, 131072): (18_591, 214_427, True),
    (2, "fp8", None, 40, 131072): (145_635, 1_679_749, True), (8, "auto", None, 10, 8192): (36_408, 145_348, True),
    (4, "fp8", 32, 40, 131072): (139_810, 3_223_993, True),
}


@pytest.mark.parametrize("case", sorted(VLLM_STEP5, key=str), ids=lambda c: "-".join(map(str, c)))
def test_step5_vllm_pool_equals_vllms_planner(case):
    tp, dtype, block, gib, max_len = case
    pool = simulate(_model("step-5-preview-reconstructed.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len,
                    tp=tp, gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype, block_tokens=block)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits) == VLLM_STEP5[case]


def test_step5_vllm_pool_by_hand_at_tp1():
    pool = simulate(_model("step-5-preview-reconstructed.json"), kv_memory_bytes=10 * GIB, max_model_len=8192,
                    gpu="h200")
    page = 16 * 3072  # block 16 (every backend's default) x K/V of 4 x 192 in bf16
    # the widest of five packed groups: the 23 DSA layers' K/V and summaries (2 x 256 B a block), rounded up to
    # lcm(an 8-token K/V page, 1 KiB ring rows) = 24,576 B
    per_block = -(-23 * (page + 2 * 256) // 24576) * 24576
    assert per_block == 1_155_072 and pool.num_blocks == 10 * GIB // per_block == 9_295
    # a request: each of 3 sliding groups its window and 2 x 8,192 tokens in flight, at most the request
    # (cdiv(min(511 + 16,384, 8,192), 16) + 1), the DSA group cdiv(8,192, 16), one ring page
    assert pool.blocks_per_request == 3 * (-(-min(511 + 16384, 8192) // 16) + 1) + 512 + 1 == 2_052


# vLLM 0.34.0's planner on the specs its Step-5 code registers (benchmarks/vllm_oracle_step5.py --grid --release 0.34
# on 0.34.0's sdist: 64 of 64 agree): every backend takes 0.34's default block, 64
VLLM_STEP5_034 = {
    (8, "auto", None, 10, 8192): (9_102, 144_503, True), (8, "auto", None, 40, 131072): (36_408, 1_677_942, True),
    (4, "fp8", None, 10, 8192): (17_476, 277_448, True), (4, "fp8", 32, 40, 131072): (139_810, 3_223_993, True),
}


@pytest.mark.parametrize("case", sorted(VLLM_STEP5_034, key=str), ids=lambda c: "-".join(map(str, c)))
def test_step5_vllm_034_pool_equals_vllms_planner(case):
    tp, dtype, block, gib, max_len = case
    pool = simulate(_model("step-5-preview-reconstructed.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len,
                    tp=tp, gpu="h200", kv_cache_dtype=None if dtype == "auto" else dtype, block_tokens=block,
                    rules=resolve("0.34")[0])
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens, pool.fits) == VLLM_STEP5_034[case]


def test_step5_vllm_034_pool_by_hand_at_tp1():
    pool = simulate(_model("step-5-preview-reconstructed.json"), kv_memory_bytes=10 * GIB, max_model_len=8192,
                    gpu="h200", rules=resolve("0.34")[0])
    page = 64 * 3072  # block 64 (0.34's default, which every backend takes) x K/V of 4 x 192 in bf16: 196,608 B
    # the DSA group: 23 x (196,608 + 64 / 8 x 256 summary bytes) = 4,569,088, rounded up to lcm(24,576, 1,024)
    per_block = -(-23 * (page + 8 * 256) // 24576) * 24576
    assert per_block == 186 * 24_576 == 4_571_136 and pool.bytes_per_block == per_block
    assert pool.num_blocks == 10 * GIB // per_block == 2_348
    # 3 sliding groups of cdiv(min(511 + 16,384, 8,192), 64) + 1 = 129, the DSA group 8,192 / 64, one ring page
    assert pool.blocks_per_request == 3 * 129 + 128 + 1 == 516
    assert pool.gpu_kv_cache_tokens == 2_348 * 8_192 // 516 == 37_276  # the oracle's figure too
    # at TP 4 with fp8 0.33's block 16 left the ring 6 rows (refused below); 0.34's 64 holds 24
    assert simulate(_model("step-5-preview-reconstructed.json"), kv_memory_bytes=10 * GIB, max_model_len=8192, tp=4,
                    kv_cache_dtype="fp8", gpu="h200", rules=resolve("0.34")[0]).fits


def test_step5_refusals():
    model = _model("step-5-preview-reconstructed.json")
    with pytest.raises(UsageError, match="tail ring needs 7 rows"):  # 1 KV head x 192 x fp8 x 16 = 6,144 B a page
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, tp=4, kv_cache_dtype="fp8", gpu="h200")
    with pytest.raises(UsageError, match="modelled on Hopper"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, gpu="b200")
    with pytest.raises(UsageError, match="new in 0.33"):
        simulate(model, kv_memory_bytes=10 * GIB, max_model_len=8192, rules=resolve("0.32")[0])
    config = json.loads((DATA / "step-5-preview-reconstructed.json").read_text())
    del config["text_config"]["sparse_config"]
    with pytest.raises(KvplanError, match="without a sparse_config"):
        build_model(config, "dense")


def test_step3_caches_one_kv_head_of_256_on_every_layer():
    # vLLM 0.33's Step3TextConfig defaults (61 layers, 64 query heads, num_attention_groups 1, head_dim 256) in the
    # step3_vl wrapper; Step3TextDecoderLayer builds every attention with one K/V head (no public config.json here)
    config = {"model_type": "step3_vl", "architectures": ["Step3VLForConditionalGeneration"], "text_config": {
        "hidden_size": 7168, "num_attention_heads": 64, "num_attention_groups": 1, "num_hidden_layers": 61,
        "head_dim": 256, "max_position_embedding": 65536, "share_q_dim": 2048}}
    model = build_model(config, "step3")
    assert estimate(model, 1000).bytes_per_token == 61 * 2 * 256 * 2 == 62_464
    assert model.max_context_tokens == 65536
    config["text_config"]["num_attention_groups"] = 8
    with pytest.raises(KvplanError, match="one K/V head"):
        build_model(config, "step3")



def test_iquest_loop_keeps_a_window_per_later_loop_and_reads_loop_0_again():
    model = _model("iquest-coder-v1-40b-loop.json")  # 80 layers, 8 KV heads x 128 (5,120 / 40), loop_num 2, window 64
    n, per_token = 131072, 2 * 8 * 128 * 2
    est = estimate(model, n)
    assert est.kv_bytes_per_sequence == 80 * (n + 64) * per_token  # loop 0: every token; loop 1: 64
    assert est.read_bytes_per_step == 80 * (2 * n + 64) * per_token  # loop 1 reads loop 0's cache too
    # parameters as vLLM builds the model: Llama's, plus a gate projection a layer (128 -> 40 heads, with a bias)
    llama = 2 * 76800 * 5120 + 5120 + 80 * (2 * 5120 * 5120 + 2 * 5120 * 1024 + 3 * 5120 * 27648 + 2 * 5120)
    assert model.param_count == llama + 80 * (128 * 40 + 40)


@pytest.mark.parametrize("gib, max_len, blocks, tokens", [(10, 8192, 2_048, 16_368), (40, 131072, 8_192, 116_445)])
def test_iquest_loop_vllm_pool_equals_vllms_planner(gib, max_len, blocks, tokens):
    # vLLM 0.33.0's planner on the 160 specs iquest_loopcoder.py registers (benchmarks/vllm_oracle.py, iquest_loop())
    pool = simulate(_model("iquest-coder-v1-40b-loop.json"), kv_memory_bytes=gib * GIB, max_model_len=max_len,
                    max_num_batched_tokens=8192)
    assert (pool.num_blocks, pool.gpu_kv_cache_tokens) == (blocks, tokens)
