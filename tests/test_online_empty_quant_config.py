"""An empty `quantization_config: {}` read one way (configs/build.py checkpoint_quantization_config) by the weights
sizing, the tensor table's format and --quantization (configs/quant_online.py), as the engines read it.

vLLM 0.34.0: transformers_utils/model_arch_config_convertor.py _normalize_quantization_config takes the dict (it is
not None) and sets its quant_method to ""; config/model.py _verify_quantization turns "" into None, so without a flag
the checkpoint is served unquantized and with --quantization fp8 it raises "Quantization method specified in the model
config (None) does not match the quantization method specified in the `quantization` argument (fp8)". SGLang 0.5.23:
configs/model_config.py _verify_quantization takes the flag as the config's method, then Fp8Config.from_config
(layers/quantization/fp8.py) raises "Cannot find any of ['quant_method'] in the model's quantization config".
"""

from __future__ import annotations

import json
from pathlib import Path

LLAMA = Path(__file__).resolve().parent.parent / "model_specs" / "llama-3.1-8b.json"


def _config(tmp_path, **fields) -> str:
    raw = json.loads(LLAMA.read_text()) | fields
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


def _error(cli, *args) -> str:
    code, out, err = cli(*args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), (code, out, err)
    return lines[0]


def test_an_empty_quantization_config_is_served_unquantized_and_refuses_online_quantization(cli, tmp_path):
    path = _config(tmp_path, quantization_config={})
    code, out, err = cli("estimate", path, "-c", "4k", "--format", "json")
    assert code == 0, err
    # served in bfloat16: the published total of the BF16 checkpoint (model_specs/weights.json)
    assert json.loads(out)["model"]["weight_bytes"] == 16_060_522_496
    # before: planned as vLLM's online FP8 of a float checkpoint (quant_online skipped the empty dict)
    line = _error(cli, "estimate", path, "-c", "4k", "--quantization", "fp8")
    assert "(None) does not match" in line and "(fp8)" in line
    line = _error(cli, "estimate", path, "-c", "4k", "--engine", "sglang", "--quantization", "fp8")
    assert "Cannot find any of ['quant_method']" in line


def test_an_empty_quantization_config_hides_the_text_configs_for_online_quantization_too(cli, tmp_path):
    # the top config's {} is taken before the text model's (vLLM 0.34 get_quantization_config: text_config only when
    # the top config has none; SGLang 0.5.23 _select_hf_quant_metadata likewise); before, the sizing read the {} (a
    # float checkpoint) while --quantization read the text model's fp8 and said "served as stored"
    text = json.loads(LLAMA.read_text()) | {"quantization_config": {"quant_method": "fp8",
                                                                    "activation_scheme": "dynamic"}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
                                "quantization_config": {}, "text_config": text,
                                "vision_config": {"model_type": "clip_vision_model"}}))
    line = _error(cli, "estimate", str(path), "-c", "4k", "--quantization", "fp8")
    assert "(None) does not match" in line
