"""Bundled checkpoint totals (model_specs/weights.json).

Each figure was read in a published source (named in its entry). The tests
check a few against the source figure, check that `kvplan weights` and
`kvplan estimate` use them, and check every entry against an independent
reference: the config's parameter count x the stored dtype's bytes, with the
tolerance stated per model below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.capacity.weights import stage_weight_bytes
from kvplan.sources import load_config, load_model
from kvplan.weights.load import bundled_table, from_bundled

# figures as the sources give them (index metadata.total_size, or the weight files' bytes)
PUBLISHED = {
    "llama-3.1-8b": 16_060_522_496,  # Llama-3.1-8B(-Instruct) index total_size
    "llama-3.1-70b": 141_107_412_992,  # meta-llama/Llama-3.1-70B@349b2ddb checkpoint bytes
    "qwen3-8b": 16_381_470_720,  # Qwen/Qwen3-8B@b968826d index total_size
    "qwen3-30b-a3b": 61_064_245_248,  # Qwen/Qwen3-30B-A3B index total_size
    "qwen2.5-7b": 15_231_233_024,  # Qwen/Qwen2.5-7B-Instruct index total_size
    "phi-4": 29_319_014_400,  # microsoft/phi-4@2db69c1c index total_size
    "gemma-3-27b": 54_864_980_440,  # google/gemma-3-27b-it@005ad340 weight files
    "kimi-k2": 1_029_190_981_272,  # moonshotai/Kimi-K2-Instruct@fd1984e2 weight files
}

PPM = 1e-6


def _siglip_params(v: dict) -> int:
    """Gemma 3's SigLIP vision tower + multimodal projector, from vision_config:
    patch conv (with bias) + position table, per layer q/k/v/o with biases,
    two LayerNorms and a biased two-layer MLP, the post LayerNorm, and the
    projector (vision hidden x text hidden) with its RMSNorm."""
    h, i, n = v["hidden_size"], v["intermediate_size"], v["num_hidden_layers"]
    p, img = v["patch_size"], v["image_size"]
    embed = 3 * p * p * h + h + (img // p) ** 2 * h
    layer = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embed + n * layer + 2 * h + (h * 5376 + h)  # 5376: gemma-3-27b text hidden_size


def _mxfp4_bytes(alias: str) -> int:
    """gpt-oss: expert gate_up (2I x H) and down (H x I) weights in MXFP4 (32
    values in 16 B + one E8M0 scale: 17 B per 32), everything else BF16."""
    raw = load_config(alias)[0]
    experts = raw["num_hidden_layers"] * raw["num_local_experts"] * 3 * raw["hidden_size"] * raw["intermediate_size"]
    return (load_model(alias).param_count - experts) * 2 + experts * 17 // 32


def _reference(alias: str) -> tuple[int, float, float]:
    """(reference bytes, lowest allowed ratio total/reference, highest allowed)."""
    model = load_model(alias)
    text = model.param_count * 2
    if alias.startswith("gpt-oss"):
        return _mxfp4_bytes(alias), 1 - 1e-3, 1 + 1e-3  # bias and sink rounding only
    if alias == "gemma-3-27b":  # the estimate holds the SigLIP tower and projector (configs/vision_towers.py)
        vision = _siglip_params(load_config(alias)[0]["vision_config"])
        assert model.weight_vision[:2] == (vision, 2 * vision)
        return text + 2 * vision, 1.0, 1 + 10 * PPM  # + shard headers of the weight files
    if alias == "llama-4-scout":  # the estimate holds the vision encoder and projector (configs/vision_towers.py)
        return text + model.weight_vision[1], 1.0, 1 + 10 * PPM  # + shard headers of the weight files
    if alias == "kimi-k2":
        return model.param_count, 1.0, 1.01  # FP8 at 1 B, + BF16 embeddings/head/norms + F32 scales
    if alias == "deepseek-v3":
        return model.param_count, 1.0, 1.03  # FP8, + the MTP module (a 62nd layer) + BF16 parts + scales
    assert model.weight_dtype == "bfloat16", alias  # a new kind of entry needs its own rule here
    if bundled_table()[alias].get("by_dtype") == {"BF16": text}:
        return text, 1.0, 1.0  # an index total_size of a plain BF16 checkpoint: exact
    return text, 1.0, 1 + 10 * PPM  # the weight files' size: + their headers


@pytest.mark.parametrize("alias", sorted(PUBLISHED))
def test_total_is_the_published_figure(alias):
    w = from_bundled(alias)
    assert w.total_bytes == PUBLISHED[alias]
    assert w.source == "bundled" and w.notes and str(PUBLISHED[alias])[:6] in w.notes[0].replace(",", "")


@pytest.mark.parametrize("alias", sorted(bundled_table()))
def test_every_entry_agrees_with_its_config(alias):
    total = bundled_table()[alias]["total_bytes"]
    ref, low, high = _reference(alias)
    assert low * ref <= total <= high * ref, (alias, total, ref, total / ref)


def test_every_entry_names_its_source_and_matches_its_alias():
    index = json.loads((Path(__file__).parents[1] / "model_specs" / "index.json").read_text())
    for alias, entry in bundled_table().items():
        assert alias in index, alias
        assert entry["hf_id"] == index[alias]["hf_id"], alias
        assert isinstance(entry["total_bytes"], int) and entry["total_bytes"] > 0
        assert len(entry.get("source", "")) > 40, alias
        if "by_dtype" in entry:
            assert sum(entry["by_dtype"].values()) == entry["total_bytes"], alias


@pytest.mark.parametrize("alias", ["qwen3-8b", "llama-3.1-70b", "gemma-3-27b"])
def test_kvplan_weights_reports_the_bundled_total(cli, alias):
    code, out, err = cli("weights", alias, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["weights"]["source"] == "bundled"
    assert data["weights"]["total_bytes"] == PUBLISHED[alias]
    assert data["weight_bytes_per_gpu"] == PUBLISHED[alias]


def test_an_entry_without_a_role_split_divides_evenly_under_tp_and_pp(cli):
    total = PUBLISHED["llama-3.1-70b"]
    w = from_bundled("llama-3.1-70b")
    assert not w.parts
    assert stage_weight_bytes(w, 80, tp=2, pp=2) == [-(-total // 4)] * 2
    code, out, err = cli("estimate", "llama-3.1-70b", "--gpu", "h100", "--tp", "2", "--pp", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["model"]["weights"]["source"] == "bundled"
    # the plan keeps the config's norms whole on each TP rank, as the total is the config's count x 2 B to the byte:
    # 80 x 2 x 8,192 + 8,192 = 1,318,912 x 2 B = 2,637,824 B; (141,107,412,992 - 2,637,824) / 4 + 2,637,824 / 2
    # = 35,277,512,704 (an even split: 35,276,853,248)
    assert total == 141_107_412_992
    assert data["capacity"]["weight_bytes_per_gpu"] == (total - 2_637_824) // 4 + 2_637_824 // 2 == 35_277_512_704


def test_multimodal_total_holds_the_counted_tower_on_the_first_stage(cli):
    # Gemma 3 27B's files (54,864,980,440 B) are its count x 2 B (27,432,406,640 parameters with the SigLIP tower and
    # projector) + 167,160 B of shard headers, so the plan takes the count's split (weights/estimate.py
    # with_config_replicated). Held whole on each TP rank (vLLM 0.34), by hand from the config: the text model's
    # RMSNorms, 62 layers x (4 x 5,376 + q_norm / k_norm 2 x 128) + the final 5,376 = 1,354,496 parameters; the
    # tower's patch conv 3 x 14^2 x 1,152 + 1,152 = 678,528, position table (896 / 14)^2 x 1,152 = 4,718,592, 27
    # layers x (two LayerNorms 4 x 1,152 + out_proj and fc2 biases 2 x 1,152) = 186,624, post_layernorm 2,304 and
    # the projector 1,152 x 5,376 + 1,152 = 6,194,304: 11,780,352. The tower (846,120,672 B: _siglip_params x 2)
    # sits on the first stage only (vLLM 0.34 interfaces.py _mark_tower_model), its whole part whole, the rest by TP.
    code, out, err = cli("weights", "gemma-3-27b", "--tp", "2", "--pp", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    total, vision = PUBLISHED["gemma-3-27b"], 2 * _siglip_params(load_config("gemma-3-27b")[0]["vision_config"])
    text_whole, vision_whole = 2 * 1_354_496, 2 * 11_780_352
    assert vision == 846_120_672
    rest = -(-(total - text_whole - vision) // 4) + text_whole // 2
    assert data["weight_bytes_per_gpu_by_stage"] == [rest + vision_whole + (vision - vision_whole) // 2, rest]


def test_a_set_that_changes_the_parameters_drops_the_bundled_bytes_for_the_estimate():
    # Llama-3.1-8B with 64 layers: a layer is q, o 4096 x 4096, k, v 4096 x 1024, the MLP 3 x 4096 x 14336 and two
    # norms = 218,112,000 parameters; 64 of them + untied embeddings and head 2 x 128,256 x 4,096 + the final norm
    # = 15,009,845,248 parameters x 2 B. The bundled 16,060,522,496 B are the 32-layer checkpoint's, not this model's
    from kvplan.sources import load_model_and_weights

    spec, weights = load_model_and_weights("llama-3.1-8b", overrides=["num_hidden_layers=64"])
    assert spec.param_count == 64 * 218_112_000 + 2 * 128_256 * 4_096 + 4_096 == 15_009_845_248
    assert weights.source == "estimated from config"
    assert weights.total_bytes == 2 * 15_009_845_248
    assert any("--set changes the parameter count" in n and "16,060,522,496" in n for n in weights.notes)
    # a --set that leaves the parameters as they are keeps the checkpoint's bytes
    _, same = load_model_and_weights("llama-3.1-8b", overrides=["rope_theta=1000"])
    assert same.source == "bundled" and same.total_bytes == 16_060_522_496
