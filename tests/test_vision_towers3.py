"""The image and audio towers counted in session 26's third vision pass (kvplan/configs/vision_towers.py): the
Qwen-Omni thinkers, ... Each count is checked against transformers 5.25's modules on the meta device, and the part
vLLM 0.34 holds whole on every TP rank is worked out by hand from the shapes."""

from __future__ import annotations

import json
import warnings

import pytest

from kvplan.sources import load_config, load_model

QWEN2_5_OMNI = "tests/data/configs/qwen2.5-omni-7b-trimmed.json"
QWEN3_OMNI = "tests/data/configs/qwen3-omni-30b-a3b-instruct-tf5-trimmed.json"


def _meta_params(build) -> int:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        modules = build()
    return sum(p.numel() for m in modules for p in m.parameters())


def test_qwen2_5_omni_thinker_towers_match_transformers_and_the_split_by_hand():
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen2_5_omni import modeling_qwen2_5_omni as m

    thinker = transformers.AutoConfig.for_model(**load_config(QWEN2_5_OMNI)[0]).thinker_config
    expected = _meta_params(lambda: (m.Qwen2_5OmniVisionEncoder._from_config(thinker.vision_config),
                                     m.Qwen2_5OmniAudioEncoder._from_config(thinker.audio_config)))
    # by hand: the vision tower is Qwen2.5-VL-7B's (hidden 1,280, MLP 3,420, 32 blocks, out 3,584: 676,550,144, of
    # which 1,673,984 whole: tests/test_vision_towers.py); the audio encoder (d_model 1,280, FFN 5,120, 32 layers,
    # 128 mel bins, out 3,584): conv1 128 x 3 -> 1,280 and conv2 1,280 x 3 -> 1,280 with biases, the bos / eos
    # embedding 2 x 3,584, a layer's two LayerNorms, q / v / out with biases and k without, fc1 / fc2 with biases;
    # ln_post and proj 1,280 -> 3,584 with bias. vLLM 0.34 builds transformers' own audio encoder: all of it whole
    h, i = 1280, 5120
    layer = 4 * h + 4 * h * h + 3 * h + (h * i + i) + (i * h + h)
    audio = (128 * 3 * h + h) + (h * 3 * h + h) + 2 * 3584 + 32 * layer + 2 * h + (h * 3584 + 3584)
    assert expected == 676_550_144 + audio
    model = load_model(QWEN2_5_OMNI)
    assert model.weight_vision == (expected, 2 * expected, 2 * (1_673_984 + audio))
    assert any(n.startswith("vision tower counted: Qwen2.5-Omni thinker") for n in model.notes)


def test_qwen3_omni_thinker_towers_match_transformers_and_the_split_by_hand():
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen3_omni_moe import modeling_qwen3_omni_moe as m

    thinker = transformers.AutoConfig.for_model(**load_config(QWEN3_OMNI)[0]).thinker_config
    expected = _meta_params(lambda: (m.Qwen3OmniMoeVisionEncoder._from_config(thinker.vision_config),
                                     m.Qwen3OmniMoeAudioEncoder._from_config(thinker.audio_config)))
    # by hand: the vision tower is Qwen3-VL-30B-A3B's (out 2,048: 538,631,408, of which 4,649,600 whole:
    # tests/test_vision_towers.py); the audio encoder (d_model 1,280, FFN 5,120, 32 layers, 128 mel bins, 480
    # downsample channels, out 2,048): three 3 x 3 Conv2d with biases (1 -> 480 -> 480 -> 480), conv_out 480 x 16
    # -> 1,280 without bias, a layer's two LayerNorms, q/k/v/out and fc1 / fc2 with biases, ln_post, proj1 1,280 ->
    # 1,280 and proj2 1,280 -> 2,048 with biases
    h, i, d = 1280, 5120, 480
    layer = 4 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h)
    convs = (9 * d + d) + 2 * (9 * d * d + d) + d * 16 * h
    post = 2 * h + (h * h + h) + (h * 2048 + 2048)
    audio = convs + 32 * layer + post
    assert expected == 538_631_408 + audio
    # whole on every rank (vLLM 0.34 Qwen3OmniMoeAudioEncoder): the convolutions, conv_out, ln_post, proj1 / proj2
    # (ReplicatedLinear), a layer's LayerNorms and its out_proj / fc2 biases (RowParallelLinear)
    audio_whole = convs + 32 * (4 * h + 2 * h) + post
    model = load_model(QWEN3_OMNI)
    assert model.weight_vision == (expected, 2 * expected, 2 * (4_649_600 + audio_whole))


def test_qwen_omni_estimate_before_and_after(cli):
    # the config estimate now adds the thinker's towers (1,186,558,576 parameters, above) to the text model's
    # 30,532,646,912 (tests/test_omni.py): it was 61,065,293,824 B, the text model alone
    code, out, err = cli("estimate", QWEN3_OMNI, "-f", "json")
    assert code == 0, err
    w = json.loads(out)["model"]["weights"]
    assert w["by_role"] == {"vision": 2 * 1_186_558_576}
    assert w["total_bytes"] == 2 * (30_532_646_912 + 1_186_558_576) == 63_438_410_976
    # a thinker without its audio_config is not counted, and says so
    raw = load_config(QWEN2_5_OMNI)[0]
    raw = dict(raw, thinker_config={k: v for k, v in raw["thinker_config"].items() if k != "audio_config"})
    from kvplan.configs.build import build_model

    model = build_model(raw, "omni")
    assert model.weight_vision == (0, 0, 0)
    assert any(n.startswith("vision tower not counted (thinker_config has no audio_config") for n in model.notes)
