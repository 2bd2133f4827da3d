"""Session 26's vision-tower follow-up (tower2): a text-only start planned with `--set KEY=null` on whichever key the
family's tower is read from (configs/vision_towers.py tower_key) emits the engine's text-only flag."""

from __future__ import annotations

import json

from test_vision_towers3 import _phi4mm

PHI3_V = "tests/data/configs/phi-3-vision-128k-instruct.json"


def _emit(cli, *args, engine="vllm"):
    code, out, err = cli("estimate", *args, "--context", "8192", "--gpu", "h100", "--emit", engine, "--format", "json")
    assert code == 0, err
    return json.loads(out)["emit"]


def test_a_text_only_plan_on_a_nested_tower_key_emits_language_model_only(cli, tmp_path):
    # vLLM 0.34 phi3v.py Phi3VForCausalLM and phi4mm.py Phi4MMForCausalLM build their encoders under
    # _mark_tower_model, which --language-model-only skips (config/multimodal.py get_limit_per_prompt answers 0 for
    # every modality); kvplan reads their towers from img_processor / embd_layer, not vision_config
    text_only = _emit(cli, PHI3_V, "--set", "img_processor=null")
    assert "--language-model-only" in text_only["argv"]
    assert any("(--set img_processor=null)" in n for n in text_only["notes"])
    assert "--language-model-only" not in _emit(cli, PHI3_V)["argv"]
    phi4mm = tmp_path / "phi4mm.json"
    phi4mm.write_text(json.dumps(_phi4mm()))
    assert "--language-model-only" in _emit(cli, str(phi4mm), "--set", "embd_layer=null")["argv"]
    assert "--language-model-only" not in _emit(cli, str(phi4mm))["argv"]
    # vision_config on a config whose tower is read from elsewhere drops nothing: no flag
    assert "--language-model-only" not in _emit(cli, PHI3_V, "--set-new", "vision_config=null")["argv"]


def test_sglangs_text_only_note_names_the_key_that_dropped_the_tower(cli):
    notes = _emit(cli, PHI3_V, "--set", "img_processor=null", engine="sglang")["notes"]
    assert any("the plan leaves the vision tower out (--set img_processor=null)" in n for n in notes)
