"""Per-module tables of the Mamba hybrids: Nemotron-H, Granite 4.0-H, Falcon-H1, Jamba, Zamba2
(configs/weight_tables/hybrid.py). They add up to the parameter counts, and the bytes each TP rank holds whole are
worked out here by hand from the configs (transformers 5.25 modeling_nemotron_h.py, modeling_granitemoehybrid.py,
modeling_falcon_h1.py, modeling_jamba.py, modeling_zamba2.py; what vLLM 0.34 holds whole: the module's docstring,
including the B and C rows MambaMixer2 repeats on every rank when n_groups is 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.configs import build_model
from kvplan.configs.build import _read
from kvplan.configs.weight_tables import table
from kvplan.engines.vllm_load import config_weights_per_gpu
from kvplan.weights.estimate import estimated

ROOT = Path(__file__).resolve().parent.parent
SPECS, DATA = ROOT / "model_specs", ROOT / "tests" / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def _configs() -> list:
    bundled = [_raw(n) for n in ("nemotron-h-8b", "nemotron-3-nano-30b-a3b", "granite-4.0-h-small",
                                 "granite-4.0-h-tiny", "falcon-h1-7b", "jamba-v0.1", "zamba2-2.7b")]
    test = [json.loads((DATA / f"{n}.json").read_text()) for n in
            ("nemotron-h-8b-tf5", "nemotron-3-nano-omni-30b-a3b-trimmed",
             "nemotron-3.5-transcribe-nemo-layout-handwritten")]
    speech = json.loads((DATA / "transformers-5.25-speech-defaults.json").read_text())["nemo_speechlm"]
    return bundled + test + [speech]


@pytest.mark.parametrize("raw", _configs(), ids=lambda raw: str(raw.get("model_type")))
def test_the_table_adds_up_to_the_parameter_count(raw):
    family, f, _, layers, dims = _read(raw, "hybrid")
    assert f.model_type in ("nemotron_h", "granitemoehybrid", "falcon_h1", "jamba", "zamba2")
    modules = table(f, layers, dims)
    assert modules and sum(m.weight + m.other for m in modules) == family.params(f, layers, dims)[0]


def test_falcon_h1_7b_counts_no_gated_norm_without_mamba_rms_norm():
    model = build_model(_raw("falcon-h1-7b"), "falcon-h1-7b")
    # FalconH1Mixer's norm is nn.Identity unless mamba_rms_norm (default False). 44 layers of hidden 3,072, 12 query /
    # 2 KV heads of 128; mixer: 24 heads, d_ssm 3,072, one group, state 256, conv 4 with bias
    attention = 3072 * 1536 + 2 * 3072 * 256 + 1536 * 3072  # 11,010,048
    mixer = 3072 * (3072 + 3072 + 2 * 256 + 24) + (3072 + 512) * 5 + 3 * 24 + 3072 * 3072  # 29,976,136
    layer = attention + mixer + 3 * 3072 * 12288 + 2 * 3072
    total = 44 * layer + 2 * 130048 * 3072 + 3072
    assert total == 7_585_513_568  # transformers 5.25 builds this many on the meta device; was 44 x 3,072 more
    assert model.param_count == total
    # whole on every TP rank: two norms a layer and the final norm, and (one group, padded to tp_size groups by
    # vLLM's MambaMixer2) in_proj's B and C rows, 2 x 256 x 3,072, and conv1d's 512 B and C channels with bias
    whole = 44 * (2 * 3072 + 2 * 256 * 3072 + 512 * 5) + 3072
    assert whole == 69_592_064 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: (15,171,027,136 - 139,184,128) / 2 + 139,184,128
    assert stage_weight_bytes(estimated(model), 44, tp=2) == [7_655_105_632]
    assert config_weights_per_gpu(model, 2, 1, "0.34.0") == 7_655_105_632


def test_granite_4_0_h_tiny_keeps_norms_routers_and_the_one_group_whole():
    model = build_model(_raw("granite-4.0-h-tiny"), "granite-4.0-h-tiny")
    # 40 layers of hidden 1,536 (attention at 5, 15, 25, 35: q/o 1,536 x 1,536, k/v 1,536 x 512), the others
    # Mamba-2: 48 heads x 64 = 3,072 inner, one group, state 128, conv 4 with bias; every layer 64 experts of 512
    # (input_linear 2 x 512 x 1,536, output_linear 1,536 x 512), a router [64, 1,536] and the shared_mlp of 1,024
    attention = 2 * 1536 * 1536 + 2 * 1536 * 512
    mamba = 1536 * (2 * 3072 + 256 + 48) + (3072 + 256) * 5 + 3 * 48 + 3072 + 3072 * 1536
    ffn = 64 * 3 * 1536 * 512 + 64 * 1536 + 3 * 1536 * 1024
    total = 4 * attention + 36 * mamba + 40 * (ffn + 2 * 1536) + 100352 * 1536 + 1536  # tied head
    assert total == 6_939_037_248 and model.param_count == total
    # whole: the norms and routers of 40 layers, the final norm, and in the 36 Mamba layers the one group's
    # B and C rows of in_proj (256 x 1,536) and channels of conv1d (256 x 5)
    whole = 40 * (2 * 1536 + 64 * 1536) + 36 * (256 * 1536 + 256 * 5) + 1536
    assert whole == 18_258_432 and model.weight_replicated_bytes == 2 * whole
    # TP 2, BF16: 6,939,037,248 - 18,258,432 split in two, the rest on both ranks
    assert stage_weight_bytes(estimated(model), 40, tp=2) == [(2 * total - 2 * whole) // 2 + 2 * whole]
    assert stage_weight_bytes(estimated(model), 40, tp=2) == [6_957_295_680]


def test_nemotron_3_nano_keeps_norms_and_routers_whole_and_splits_its_eight_groups():
    model = build_model(_raw("nemotron-3-nano-30b-a3b"), "nemotron-3-nano-30b-a3b")
    # 52 blocks of hidden 2,688 (23 Mamba-2, 23 MoE, 6 attention), one norm each, and norm_f; each MoE block's
    # router gate [128, 2,688] with its e_score_correction_bias [128]. n_groups 8: vLLM splits B and C with
    # the heads (tp_size must divide 8), so no part of the mixers is whole
    whole = 52 * 2688 + 2688 + 23 * (128 * 2688 + 128)
    assert whole == 8_058_880 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 31_577_940_288
    # TP 4, above the 2 KV heads of the 6 attention blocks: one KV head of k_proj / v_proj a rank, half of
    # 6 x 2 x 2,688 x 256 x 2 B = 16,515,072 B (vLLM QKVParallelLinear); (63,155,880,576 - 16,117,760 - 16,515,072)
    # / 4 = 15,780,811,936, + 16,117,760 + 8,257,536 (before: 15,801,058,464, the k/v projections split by 4)
    assert stage_weight_bytes(estimated(model), 52, tp=4) == [15_805_187_232]
    assert config_weights_per_gpu(model, 4, 1, "0.34.0") == 15_805_187_232


def test_jamba_keeps_its_norms_mixer_norms_and_routers_whole():
    model = build_model(_raw("jamba-v0.1"), "jamba-v0.1")
    # 32 layers of hidden 4,096, attention every 8th from 4 (4 layers), Mamba elsewhere (28): each mixer's
    # dt_layernorm (dt_rank ceil(4,096 / 16) = 256), b_layernorm and c_layernorm (state 16) are RMSNorms, whole;
    # experts on the odd layers (16), each with a router [16, 4,096]; two norms a layer and the final norm
    whole = 32 * 2 * 4096 + 4096 + 28 * (256 + 16 + 16) + 16 * 16 * 4096
    assert whole == 1_322_880 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 51_570_323_328
    # TP 4: (103,140,646,656 - 2,645,760) / 4 + 2,645,760
    assert stage_weight_bytes(estimated(model), 32, tp=4) == [25_787_145_984]


def test_zamba2_holds_its_hybrid_linears_norms_and_the_one_group_whole():
    model = build_model(_raw("zamba2-2.7b"), "zamba2-2.7b")
    # 54 Mamba-2 layers of hidden 2,560 (80 heads x 64 = 5,120 inner, one group, state 64, conv 4 with bias), each
    # with its input_layernorm; 9 hybrid layers add a linear 2,560 x 2,560 (a ReplicatedLinear in vLLM); two shared
    # blocks, each with input_layernorm over attention_hidden_size 5,120 and pre_ff_layernorm over 2,560
    whole = 54 * (2560 + 2 * 64 * 2560 + 2 * 64 * 5) + 9 * 2560 * 2560 + 2 * (5120 + 2560) + 2560
    assert whole == 76_867_840 and model.weight_replicated_bytes == 2 * whole
    assert model.param_count == 2_662_214_560
    # TP 2: (5,324,429,120 - 153,735,680) / 2 = 2,585,346,720, + 153,735,680
    assert stage_weight_bytes(estimated(model), 54, tp=2) == [2_739_082_400]


def test_mamba2_biases_follow_each_family_s_flags():
    # Granite 4.0-H tiny with attention_bias, mamba_proj_bias and no mamba_conv_bias (GraniteMoeHybridAttention
    # biases q/k/v/o, GraniteMoeHybridMambaLayer in_proj and out_proj, conv1d only under mamba_conv_bias):
    # + 4 attention layers x ((12 + 2 x 4) x 128 + 1,536), + 36 Mamba layers x (in_proj's 2 x 3,072 + 256 + 48
    # outputs + out_proj's 1,536), - 36 x the conv's 3,072 + 256 channels
    raw = dict(_raw("granite-4.0-h-tiny"), attention_bias=True, mamba_proj_bias=True, mamba_conv_bias=False)
    model = build_model(raw, "granite-tiny-biased")
    assert model.param_count == 6_939_037_248 + 4 * (2560 + 1536) + 36 * (6448 + 1536) - 36 * 3328 == 6_939_221_248
    family, f, _, layers, dims = _read(raw, "granite-tiny-biased")
    assert sum(m.weight + m.other for m in table(f, layers, dims)) == model.param_count
    # Zamba2-2.7B with add_bias_linear: each of 54 mixers' in_proj (2 x 5,120 + 2 x 64 + 80 outputs) and out_proj
    # (2,560) biases, and each of the two shared blocks' gate_up_proj (2 x 10,240) and down_proj (2,560) biases
    raw = dict(_raw("zamba2-2.7b"), add_bias_linear=True)
    model = build_model(raw, "zamba2-biased")
    assert model.param_count == 2_662_214_560 + 54 * (10448 + 2560) + 2 * (20480 + 2560) == 2_662_963_072
    family, f, _, layers, dims = _read(raw, "zamba2-biased")
    assert sum(m.weight + m.other for m in table(f, layers, dims)) == model.param_count


def test_nemotron_3_nano_nvfp4_exclusions_come_out_module_by_module():
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4's hf_quant_config.json (ModelOpt 0.29.0, NVFP4, FP8 KV cache), as
    # ollama.com shows it (dhiltgen/nemotron-3-nano:30b-a3b-nvfp4, blob 37ff9e85d043): only the first 31 entries of
    # its exclude_modules are shown there, up to "backbone.layers.41.m..."; those are used here and nothing more,
    # so this is not that checkpoint's whole list, nor its size
    shown = ["lm_head"]
    for mamba, attention in ((4, 5), (11, 12), (18, 19), (25, 26), (32, 33)):
        shown += [f"backbone.layers.{mamba}.mixer.in_proj", f"backbone.layers.{mamba}.mixer.out_proj"]
        shown += [f"backbone.layers.{attention}.mixer.{p}_proj" for p in "qkvo"]
    assert len(shown) == 31
    raw = dict(_raw("nemotron-3-nano-30b-a3b"), quantization_config={
        "producer": {"name": "modelopt", "version": "0.29.0"},
        "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                         "exclude_modules": shown}})
    model = build_model(raw, "nemotron-3-nano-nvfp4-shown")
    # linear weights (hidden 2,688): a Mamba mixer's in_proj 2,688 x (2 x 4,096 + 2 x 8 x 128 + 64) = 27,697,152
    # and out_proj 4,096 x 2,688 = 11,010,048; attention q/o 2,688 x 4,096 each, k/v 2,688 x 256 each; a MoE
    # block's 128 experts of up/down 2,688 x 1,856 and its shared expert of 3,712 (up and down); the head
    mamba = 2688 * 10304 + 4096 * 2688
    attention = 2 * 2688 * 4096 + 2 * 2688 * 256
    moe = 128 * 2 * 2688 * 1856 + 2 * 2688 * 3712
    head = 131072 * 2688
    kept = 5 * (mamba + attention) + head  # the five Mamba / attention pairs the list names, and lm_head
    quantized = 23 * mamba + 6 * attention + 23 * moe + head - kept
    assert quantized == 30_553_915_392
    plain = model.param_count - quantized  # embeddings, norms, routers, mixer floats, and the kept linears
    assert plain == 1_024_024_896
    # NVFP4: 0.5 B + a float8 scale per 16 weights; 8 B of per-tensor scales on each quantized tensor: 18 Mamba
    # layers x 2, layer 42's q/k/v/o, and 23 MoE blocks x (128 x 2 + 2) = 5,974 tensors
    tensors = 18 * 2 + 4 + 23 * (128 * 2 + 2)
    # the FP8 KV cache: a float32 k_scale and v_scale on layer 42's mixer.k_proj and v_proj, the one attention
    # layer whose k_proj and v_proj are both quantized (vLLM 0.34 base_config.py get_cache_scale_mapper reads
    # NemotronH's at .mixer.{k,v}_proj.{k,v}_scale), 8 B; the five kept layers' scales are not counted
    assert model.weight_bytes == quantized * 9 // 16 + 2 * plain + 8 * tensors + 8 == 19_234_675_000
    # whole on every TP rank: the BF16 norms and routers (as unquantized), the per-tensor and the KV scales
    assert model.weight_replicated_bytes == 2 * 8_058_880 + 8 * tensors + 8


def test_nemotron_h_modules_answer_to_every_prefix_its_checkpoints_use():
    # backbone.* (the NemotronH checkpoints), model.* (transformers 5.25 after conversion_mapping), and a Nano VL /
    # Omni wrapper's language_model.backbone.* (vLLM 0.34 nano_nemotron_vl.py maps it to language_model.model)
    _, f, _, layers, dims = _read(_raw("nemotron-h-8b"), "nemotron-h-8b")
    in_proj = next(m for m in table(f, layers, dims) if m.name == "layers.0.mixer.in_proj")
    names = in_proj.names()
    assert {"backbone.layers.0.mixer.in_proj", "model.layers.0.mixer.in_proj",
            "language_model.backbone.layers.0.mixer.in_proj"} <= set(names)
