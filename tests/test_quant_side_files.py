"""Quantization side files beside config.json, read from a folder and from the Hub alike (kvplan.sources
with_side_quant_config), and the GPTQ / AWQ configs both engines refuse (kvplan.configs.quant_bytes refusal).

vLLM 0.34 model_loader/weight_utils.py get_quant_config reads a side file only where config.json (its text_config,
its compression_config) holds no quantization: a file named by quant_cls.get_config_filenames(), auto_gptq.py
AutoGPTQConfig ["quantize_config.json"], auto_awq.py AutoAWQConfig ["quantize_config.json", "quant_config.json"].
AutoGPTQConfig.from_config / AutoAWQConfig.from_config read bits, group_size, desc_act (AWQ: w_bit or bits,
q_group_size or group_size, zero_point) with get_from_keys, which raises where a key is missing; SGLang 0.5.23
gptq/gptq.py GPTQConfig takes bits 2, 3, 4 or 8, vLLM 0.22-0.34 AutoGPTQConfig.TYPE_MAP only (4, sym) and (8, sym).

Data: tests/data/quantize_config/wizard-vicuna-30b-gptq-4bit-128g/ (see tests/test_wild_configs_gptq.py): the
config.json of TheBloke/Wizard-Vicuna-30B-Uncensored-GPTQ's 4-bit group 128 branch, without a quantization_config,
and its quantize_config.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hub_server import HubServer
from kvplan_inprocess import kvplan

WIZARD = Path(__file__).resolve().parent / "data" / "quantize_config" / "wizard-vicuna-30b-gptq-4bit-128g"

# Wizard-Vicuna-30B (LLaMA 30B: hidden 6,656, intermediate 17,920, 60 layers, vocab 32,000, untied head, float16),
# by hand from AutoGPTQ's QuantLinear (tests/test_wild_configs_gptq.py test_autogptq_quantize_config_beside_...):
# a layer's 535,035,904 weights at 1/2 + (2 + 1/2)/128 B = 277,967,872 B, its 57,856 inputs' g_idx x 4 B and two
# norms 2 x 6,656 x 2 B; embeddings and head 2 x 32,000 x 6,656 x 2 B = 851,968,000; the final norm 13,312 B.
# The file gptq_model-4bit-128g.safetensors is 17,554,104,608 B: this, AutoGPTQ's zero biases and the header.
LAYER_QUANTIZED = 535_035_904 // 2 + 535_035_904 * 5 // 256
GPTQ_4_128 = 60 * (LAYER_QUANTIZED + 57_856 * 4 + 2 * 6656 * 2) + 2 * 32_000 * 6656 * 2 + 6656 * 2
# AutoAWQ's WQLinear_GEMM stores the same qweight, qzeros and scales and no g_idx
AWQ_4_128 = 60 * (LAYER_QUANTIZED + 2 * 6656 * 2) + 2 * 32_000 * 6656 * 2 + 6656 * 2
# sized as float16: 32,528,943,616 parameters x 2 B
FLOAT16 = 65_057_887_232


def test_the_hand_counts():
    assert LAYER_QUANTIZED == 277_967_872
    assert GPTQ_4_128 == 17_545_536_512
    assert AWQ_4_128 == GPTQ_4_128 - 60 * 57_856 * 4 == 17_531_651_072


def _hub_run(args, tmp_path, endpoint, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1", HF_ENDPOINT=endpoint, **env_extra)
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env)


def test_a_hub_repo_reads_quantize_config_json_as_a_folder_does(tmp_path):
    config = json.loads((WIZARD / "config.json").read_text())
    side = (WIZARD / "quantize_config.json").read_bytes()
    with HubServer({"thebloke/wizard": config, "acme/plain": config},
                   files={"thebloke/wizard": {"quantize_config.json": side}}) as hub:
        out = _hub_run(["weights", "thebloke/wizard", "--format", "json"], tmp_path, hub.url)
        assert out.returncode == 0, out.stderr
        weights = json.loads(out.stdout)["weights"]
        # before: hf://thebloke/wizard was sized as float16, 65,057,887,232 B
        assert weights["total_bytes"] == GPTQ_4_128
        assert weights["quantization"] == "GPTQ int4, group 128"
        asked = [p.split("?")[0] for m, p, _ in hub.requests if m == "GET"]
        assert asked.count("/thebloke/wizard/resolve/main/quantize_config.json") == 1
        assert "/thebloke/wizard/resolve/main/quant_config.json" not in asked  # found the first: no more asked
        # no side file at all: two 404s, not an error, the float16 size
        out = _hub_run(["weights", "acme/plain", "--format", "json"], tmp_path, hub.url)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["weights"]["total_bytes"] == FLOAT16
    # offline: the cached quantize_config.json answers, no request
    out = _hub_run(["weights", "thebloke/wizard", "--format", "json"], tmp_path, "http://127.0.0.1:9",
                   HF_HUB_OFFLINE="1")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["weights"]["total_bytes"] == GPTQ_4_128


def _folder(tmp_path: Path, side: dict | None, name: str = "quantize_config.json", **config_extra) -> Path:
    folder = tmp_path / "ckpt"
    shutil.copytree(WIZARD, folder)
    if side is not None:
        (folder / "quantize_config.json").unlink()
        (folder / name).write_text(json.dumps(side))
    if config_extra:
        raw = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**raw, **config_extra}))
    return folder


def _weights(path: Path) -> dict:
    out = kvplan("weights", str(path), "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["weights"]


def test_an_autoawq_quant_config_json_is_sized_as_awq(tmp_path):
    # AutoAWQ before its transformers integration: awq/models/base.py save_quantized writes its quant_config dict
    folder = _folder(tmp_path, {"zero_point": True, "q_group_size": 128, "w_bit": 4, "version": "GEMM"},
                     "quant_config.json")
    weights = _weights(folder / "config.json")
    assert weights["total_bytes"] == AWQ_4_128  # before: FLOAT16
    assert weights["quantization"] == "AWQ int4, group 128"


def _refused(path: Path, *words: str) -> None:
    out = kvplan("weights", str(path))
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    for word in words:
        assert word in out.stderr, out.stderr


def test_gptq_bits_both_engines_refuse_are_refused(tmp_path):
    folder = _folder(tmp_path, {"bits": 5, "group_size": 128, "desc_act": False, "sym": True})
    # before: sized as GPTQ int5
    _refused(folder / "config.json", "quantize_config.json", "bits is 5", "2, 3, 4 or 8")


def test_a_gptq_config_without_group_size_is_refused(tmp_path):
    # config.json's own quantization_config; before: group_size taken as 128
    folder = _folder(tmp_path, None, quantization_config={"quant_method": "gptq", "bits": 4, "desc_act": False,
                                                          "sym": True})
    _refused(folder / "config.json", "quantization_config", "group_size", "vLLM 0.34")


def test_an_awq_side_file_with_bits_neither_engine_loads_is_refused(tmp_path):
    folder = _folder(tmp_path, {"zero_point": True, "q_group_size": 128, "w_bit": 3, "version": "GEMM"},
                     "quant_config.json")
    # AutoAWQ's layout (w_bit, q_group_size): SGLang's AWQConfig, 4 bits only (awq/awq.py AWQConfig.__init__)
    _refused(folder / "config.json", "quant_config.json", "w_bit is 3", "AWQ with 4 bits", "vLLM 0.34 with 4")


def test_an_8_bit_autoawq_layout_is_refused_by_both_engines(tmp_path):
    # SGLang 0.5.23 takes 8-bit AWQ only through AWQMarlinConfig (TYPE_MAP 4, 8), reached from a config that names
    # bits and group_size: awq/awq.py is_awq_marlin_compatible reads quant_config.get("bits") (None for AutoAWQ's
    # w_bit: no conversion), AWQMarlinConfig.from_config get_from_keys(["bits"]); AWQConfig.__init__ raises on
    # weight_bits != 4. vLLM 0.34 auto_awq.py AutoAWQConfig.TYPE_MAP {4}. So w_bit 8 loads on neither
    folder = _folder(tmp_path, {"zero_point": True, "q_group_size": 128, "w_bit": 8, "version": "GEMM"},
                     "quant_config.json")
    _refused(folder / "config.json", "quant_config.json", "w_bit is 8", "AWQMarlinConfig")
    # the transformers layout (bits, group_size) at 8 bits is SGLang's AWQMarlinConfig: not refused
    from kvplan.configs.quant_bytes import refusal

    assert refusal({"quant_method": "awq", "bits": 8, "group_size": 128, "zero_point": True}) is None


def test_a_side_file_is_not_read_where_the_config_holds_a_compression_config(tmp_path):
    # vLLM 0.34 get_quant_config takes compression_config before any file
    compression = {"quant_method": "compressed-tensors", "format": "pack-quantized",
                   "config_groups": {"g": {"targets": ["Linear"], "weights": {
                       "num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True}}}}
    folder = _folder(tmp_path, None, compression_config=compression)
    # before: the quantize_config.json beside it won, "GPTQ int4, group 128"
    assert _weights(folder / "config.json")["quantization"] == "compressed-tensors pack-quantized (int8 channel)"


def test_vllm_022_and_later_note_gptq_bits_other_than_4_and_8():
    from kvplan.engines.vllm_quant_support import unsupported_note

    three = {"quant_method": "gptq", "bits": 3, "group_size": 128, "desc_act": False, "sym": True}
    assert "4 or 8 bits" in unsupported_note(three, "0.34.0")
    assert unsupported_note(three, "0.21.0") is None  # gptq.py GPTQConfig: 2, 3, 4 or 8
    asym = {**three, "bits": 4, "sym": False}
    assert "sym False" in unsupported_note(asym, "0.22.0")
    assert unsupported_note({**three, "bits": 8}, "0.34.0") is None


def test_every_vllm_release_read_notes_8_bit_awq():
    from kvplan.engines.vllm_quant_support import unsupported_note

    # vLLM 0.11.0 / 0.21.0 awq.py: weight_bits != 4 raises; 0.22.0-0.34.0 auto_awq.py TYPE_MAP {4: uint4}
    eight = {"quant_method": "awq", "bits": 8, "group_size": 128, "zero_point": True}
    assert "4 bits only" in unsupported_note(eight, "0.11.0")
    assert "4 bits only" in unsupported_note(eight, "0.34.0")
    assert unsupported_note({**eight, "bits": 4}, "0.34.0") is None
