"""DeepSeek-V4.1's per-module table (configs/weight_tables/mla.py deepseek_v41): it adds up to kvplan's count
(params.deepseek_v41_parts), names the modules vLLM 0.34 builds (models/deepseek_v41: attention.py
DeepseekV4Attention / DeepseekV4Indexer, compressor.py DeepseekCompressor, common/engram.py Engram, nvidia/model.py
DeepseekV4DecoderLayer / DeepseekV4Model; the MoE of models/deepseek_v4/nvidia/model.py), and sizes the checkpoint
module by module, with the bytes each TP rank holds whole worked out here by hand.

The bundled V4.1-Flash: hidden 5,120, 64 heads of 512, q_lora_rank 1,280, o_groups 8 of o_lora_rank 1,024, 384
experts of 2,304 and one shared, hc_mult 4, index 32 heads of 128, vocab 129,280 (head untied), 40 layers:
compress_ratios 0 on 0-1, 2 on 2-19, 1 on 20-39; KV sources 2, 8, 14 (ratio 2) and 20 (ratio 1); index sources 2, 8,
14, 20, 24, 28, 32, 36; Engram on layers 1 and 14 (max n-gram 4, 8 heads of 256). FP8 linears with one UE8M0 scale
per 32 x 32 block (1 + 1/1,024 B), routed experts MXFP4 (17/32 B)."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_load import config_weights_per_gpu
from kvplan.weights.estimate import estimated

SPECS = Path(__file__).resolve().parent.parent / "model_specs"
TOTAL_BYTES = 298_624_579_008  # tests/test_deepseek_v41.py test_parameters_and_weight_bytes_by_hand


def _raw() -> dict:
    return json.loads((SPECS / "deepseek-v4.1-flash.json").read_text())


def _modules():
    family, f, _, layers, dims = _read(_raw(), "deepseek-v4.1-flash")
    return family, f, layers, dims, {m.name: m for m in table(f, layers, dims)}


def test_the_table_adds_up_to_the_family_count():
    family, f, layers, dims, modules = _modules()
    # 543,581,798,400 experts + 6,836,715,520 FP8 + 1,422,964,224 BF16 + 39,357,040 float32 (test_deepseek_v41.py)
    assert modules and sum(m.weight + m.other for m in modules.values()) == 551_880_835_184
    assert family.params(f, layers, dims)[0] == 551_880_835_184  # before: no table ([])


def test_the_table_names_v41s_modules_and_what_vllm_holds_whole():
    *_, modules = _modules()
    # no hc_head (DeepseekV4Model: "v4.1 has no learned hc_head"), no compressor ape (DeepseekCompressor)
    assert not [n for n in modules if n.startswith("hc_head") or n.endswith(".ape")]
    # layer 8: a ratio-2 KV source: wkv and wgate 5,120 x 512 each (BF16, whole), its norm, the indexer's wk
    # 512 x 128 (BF16, whole) and k_norm, indexer.wq_b 1,280 x 4,096 (FP8, ReplicatedLinear: whole)
    for name in ("compressor.wkv", "compressor.wgate", "indexer.wk"):
        m = modules[f"layers.8.attn.{name}"]
        assert m.whole and not m.weight
    assert modules["layers.8.attn.compressor.wkv"].other == 2_621_440
    assert modules["layers.8.attn.indexer.wk"].other == 65_536
    wq_b = modules["layers.8.attn.indexer.wq_b"]
    assert wq_b.whole and wq_b.weight == 5_242_880
    # layer 20: a ratio-1 KV source has no gate; layer 24: an index source that does not own the keys (no wk)
    assert "layers.20.attn.compressor.wkv" in modules and "layers.20.attn.compressor.wgate" not in modules
    assert "layers.24.attn.indexer.wq_b" in modules and "layers.24.attn.indexer.wk" not in modules
    assert "layers.24.attn.compressor.wkv" not in modules
    # Engram (layer 14): wkv 3 x 8 x 256 -> 5 x 5,120, a ColumnParallelLinear (FP8, split); q_weight, k_weight whole
    wkv = modules["layers.14.engram.wkv"]
    assert wkv.weight == 6_144 * 25_600 and not wkv.whole
    assert modules["layers.14.engram.q_weight"].whole and modules["layers.14.engram.q_weight"].other == 20_480
    assert "layers.13.engram.wkv" not in modules
    # both router biases on every layer (DeepseekV4MoE built with num_hash_layers 0), float32
    assert modules["layers.0.ffn.gate.bias"].other == modules["layers.0.ffn.gate.bias_vl"].other == 384
    # the one shared K/V head's wkv is built whole (fused_wqa_wkv, disable_tp): no KV-head split to mark
    assert modules["layers.0.attn.wkv"].whole and not any(m.kv_heads for m in modules.values())


# Whole on every TP rank, a layer (40): wq_a 5,120 x 1,280 = 6,553,600 and wkv 5,120 x 512 = 2,621,440 in FP8
# (+ 1/1,024: 6,560,000 + 2,624,000 B); q_norm 1,280 and kv_norm 512 (BF16: 3,584 B); router gate 384 x 5,120
# (BF16: 3,932,160 B); gate.bias and gate.bias_vl 2 x 384 (float32: 3,072 B); attn_norm and ffn_norm 2 x 5,120
# (BF16: 20,480 B); hc_attn / hc_ffn fn 2 x 24 x 20,480 (float32: 3,932,160 B), base 2 x 24 and scale 2 x 3
# (float32: 216 B): 17,075,672 B a layer.
LAYER = 6_560_000 + 2_624_000 + 3_584 + 3_932_160 + 3_072 + 20_480 + 3_932_160 + 216
# A ratio-2 KV source (2, 8, 14): compressor wkv + wgate 2 x 5,120 x 512 (BF16: 10,485,760 B), norm 512 (1,024 B),
# indexer.wk 512 x 128 (131,072 B), k_norm 128 (256 B): 10,618,112 B; the ratio-1 source (20) without the gate:
# 5,375,232 B. An index source (8): indexer.wq_b 1,280 x 4,096 FP8 (5,248,000 B) and weights_proj 5,120 x 32 BF16
# (327,680 B). An Engram layer (2): q_weight and k_weight 2 x 4 x 5,120 BF16 (81,920 B). The final norm: 10,240 B.
WHOLE = 40 * LAYER + 3 * 10_618_112 + 5_375_232 + 8 * (5_248_000 + 327_680) + 2 * 81_920 + 10_240


def test_v41_flash_holds_its_latent_projections_compressors_indexers_and_mixers_whole():
    assert LAYER == 17_075_672 and WHOLE == 765_035_968
    model = build_model(_raw(), "deepseek-v4.1-flash")
    # the stored bytes are those counted by dtype (test_deepseek_v41.py), now module by module
    assert model.weight_bytes == TOTAL_BYTES
    assert model.weight_replicated_bytes == WHOLE  # before: 0


def test_v41_flash_per_gpu_at_tp4_adds_what_every_rank_holds_whole():
    model = build_model(_raw(), "deepseek-v4.1-flash")
    # (298,624,579,008 - 765,035,968) / 4 + 765,035,968 (before: an even split, 74,656,144,752)
    per_gpu = (TOTAL_BYTES - WHOLE) // 4 + WHOLE
    assert per_gpu == 75_229_921_728
    assert stage_weight_bytes(estimated(model), 40, tp=4) == [per_gpu]
    assert config_weights_per_gpu(model, 4, 1, "0.34.0") == per_gpu


def test_kvplan_weights_at_tp4_shows_the_whole_modules(cli):
    code, out, err = cli("weights", "deepseek-v4.1-flash", "--tp", "4")
    assert code == 0, err
    # 75,229,921,728 B = 70.06 GiB (75.23 GB); before: 74,656,144,752 B = 69.53 GiB (74.66 GB)
    assert "70.06 GiB (75.23 GB)" in out
    assert "298,624,579,008 B" in out
