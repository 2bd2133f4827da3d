"""Gemma 3n's encoders (kvplan/configs/vision_gemma3n.py, vision_towers.py gemma3n): the timm MobileNetV5 vision
tower by hand against a figure measured with timm's own source, the audio encoder and the embedders against
transformers 5.25 on the meta device, and vLLM 0.34's TP split by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from meta_params import meta_params as _meta_params

from kvplan.sources import load_model

# timm 1.0.31 mobilenetv5_300m_enc, measured in a scratch run of timm's own source (timm/models/mobilenetv5.py and
# its blocks, with a stand-in torchvision: no torchvision wheel matches the CPU torch here): the sum of the model's
# parameters. An independent figure: it is not kvplan's output.
MOBILENETV5_300M_MEASURED = 294_126_912


def _spec() -> dict:
    return json.loads((Path(__file__).parents[1] / "model_specs" / "gemma-3n-e4b.json").read_text())


def test_mobilenetv5_300m_enc_counted_by_hand_matches_the_figure_measured_with_timm():
    from kvplan.configs.vision_gemma3n import MOBILENETV5_300M, mobilenetv5_300m_params

    # the arch_def's 3 + 5 + 37 + 39 blocks, 33 of them MobileAttention (14 in stage 2, 19 in stage 3)
    assert sum(row[0] for row in MOBILENETV5_300M) == 3 + 5 + 37 + 39
    assert sum(row[0] for row in MOBILENETV5_300M if row[1] == "mqa") == 14 + 19
    assert mobilenetv5_300m_params() == MOBILENETV5_300M_MEASURED


def test_gemma3n_e4b_towers_match_transformers_and_the_split_by_hand():
    pytest.importorskip("transformers")
    from transformers.models.gemma3n import configuration_gemma3n as c
    from transformers.models.gemma3n import modeling_gemma3n as m

    audio, vision, text = c.Gemma3nAudioConfig(), c.Gemma3nVisionConfig(), c.Gemma3nTextConfig(hidden_size=2048)
    meta = _meta_params(lambda: (m.Gemma3nAudioEncoder(audio), m.Gemma3nMultimodalEmbedder(vision, text),
                                 m.Gemma3nMultimodalEmbedder(audio, text)))
    # by hand: embed_vision 128 x 2,048 + two norms [2,048] + 2,048 -> 2,048; embed_audio 128 x 1,536 + two norms
    # [1,536] + 1,536 -> 2,048; the audio encoder (hidden 1,536, 8 heads, 12 blocks, 128 mel bins -> 32 after two
    # stride-2 convs): the convs 1 -> 128 -> 32 (3 x 3, no bias) with their norms, input_proj 32 x 32 -> 1,536,
    # and a block's two feed-forwards (8 h^2 + 2 h each), attention (q/k/v, pos_proj, post: 5 h^2; three norms
    # and per_dim_scale [192]), light conv (3 h^2 + 5 h depthwise + two norms) and its norm
    h = 1536
    block = 2 * (8 * h * h + 2 * h) + (5 * h * h + 2 * h + 192) + (3 * h * h + 5 * h + 2 * h) + h
    encoder = (9 * 128 + 128) + (9 * 128 * 32 + 32) + 32 * 32 * h + 12 * block
    embed_vision, embed_audio = 128 * 2048 + 2 * 2048 + 2048 * 2048, 128 * h + 2 * h + h * 2048
    assert meta == encoder + embed_vision + embed_audio == 681_348_640 + 4_460_544 + 3_345_408
    total = MOBILENETV5_300M_MEASURED + meta
    # vLLM 0.34 gemma3n_mm.py: both towers from AutoModel, whole on every rank; of the embedders only the
    # RMSNorm weights are whole (the VocabParallelEmbedding and the RowParallelLinear without bias are split)
    whole = MOBILENETV5_300M_MEASURED + encoder + 2 * 2048 + 2 * h
    model = load_model("gemma-3n-e4b")
    assert model.weight_vision == (total, 2 * total, 2 * whole) == (983_281_504, 1_966_563_008, 1_950_965_440)
    # the text model's 6,835,235,568 parameters (tests/test_param_counts.py) at 2 B, plus the towers
    assert model.weight_bytes == 2 * 6_835_235_568 + 2 * 983_281_504
    assert any(n.startswith("vision tower counted: MobileNetV5") for n in model.notes)


def test_gemma3n_without_an_audio_config_counts_the_vision_tower_alone(tmp_path):
    raw = _spec()
    raw["audio_config"] = None
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    # 294,126,912 + embed_vision 4,460,544, the embedding projection's 4,194,304 split
    assert load_model(str(path)).weight_vision[0] == 298_587_456


def test_a_gemma3n_tower_other_than_mobilenetv5_300m_reads_as_not_counted(cli, tmp_path):
    raw = _spec()
    raw["vision_config"]["architecture"] = "mobilenetv5_base"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    code, out, err = cli("estimate", str(path), "-f", "json")
    assert code == 0, err
    notes = json.loads(out)["model"]["weights"]["notes"]
    assert any(n.startswith("vision tower not counted") and "mobilenetv5_300m_enc" in n for n in notes), notes


def test_a_malformed_gemma3n_audio_config_is_one_line_naming_audio_config(cli, tmp_path):
    raw = _spec()
    raw["audio_config"]["conf_num_hidden_layers"] = -3
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    code, out, err = cli("estimate", str(path))
    assert code != 0 and "Traceback" not in err
    assert "audio_config: 'conf_num_hidden_layers' must be >= 1" in err and "--set audio_config=null" in err
