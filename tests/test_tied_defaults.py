"""Which model types tie the LM head to the embeddings when a config is silent (params._TIED_BY_DEFAULT), against
the config classes of transformers 5.25 (`tie_word_embeddings: bool = True` or False in each configuration_*.py):
save_pretrained leaves a value equal to the class default out of config.json, so a silent config means it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from kvplan.configs import build_model
from kvplan.configs.families import FAMILIES
from kvplan.configs.param_embeddings import _TIED_BY_DEFAULT

SPECS = Path(__file__).resolve().parent.parent / "model_specs"


def test_every_known_type_ties_by_default_as_its_transformers_config_class_does():
    pytest.importorskip("transformers")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    differ = []
    for model_type in sorted(FAMILIES):
        if model_type not in CONFIG_MAPPING:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                config = CONFIG_MAPPING[model_type]()
            except Exception:  # noqa: BLE001 (a class that cannot be built from its defaults says nothing)
                continue
        text = config.get_text_config(decoder=True)
        tied = getattr(text, "tie_word_embeddings", getattr(config, "tie_word_embeddings", None))
        if tied is not None and bool(tied) != (model_type in _TIED_BY_DEFAULT):
            differ.append((model_type, tied))
    assert differ == []


def test_a_silent_command_r7b_awq_config_takes_its_head_as_tied():
    # Cohere2Config ties by default (transformers 5.25 configuration_cohere2.py), and Command R7B's config.json is
    # silent; kvplan counted 8,028,033,024 parameters, the head tied (256,000 x 4,096 counted once), yet its note
    # said the head was "taken as separate"
    raw = json.loads((SPECS / "command-r7b.json").read_text())
    assert "tie_word_embeddings" not in raw
    raw["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
                                  "version": "gemm"}
    model = build_model(raw, "command-r7b-awq")
    note = next(n for n in model.notes if n.startswith("weights estimated as AWQ"))
    assert note.endswith("the config has no tie_word_embeddings, so the head is taken as tied")
