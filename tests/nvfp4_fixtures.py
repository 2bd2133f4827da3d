"""Inputs and runners the NVFP4 routed-expert tests share (test_vllm_nvfp4_moe.py, test_sglang_nvfp4_moe.py,
test_nvfp4_moe_families.py): the real published configs, a ModelOpt Qwen3-30B-A3B folder, llm-compressor's
compressed-tensors NVFP4 preset, and `kvplan estimate` at a 4K context on one engine, card and TP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kvplan_inprocess import estimate_json, refused_line

DATA = Path(__file__).resolve().parent / "data"
GEMMA = str(DATA / "configs" / "gemma-4-26b-a4b-nvfp4.json")
PUBLISHED = DATA / "modelopt_published"


def planned_tp(engine: str, path: str, gpu: str, tp: int, *extra: str) -> int:
    """The TP of the plan `kvplan estimate` makes (it must succeed)."""
    return estimate_json(path, "--context", "4k", "--engine", engine, "--gpu", gpu, *extra,
                         "--tp", str(tp))["capacity"]["tp"]


def refusal(engine: str, path: str, gpu: str, tp: int, *extra: str) -> str:
    """The one line `kvplan estimate` refuses with (it must refuse)."""
    return refused_line(path, "--context", "4k", "--engine", engine, "--gpu", gpu, *extra, "--tp", str(tp))


def qwen3_30b_nvfp4(tmp_path) -> str:
    """A folder: the bundled Qwen3-30B-A3B config.json beside NVIDIA's Qwen3-30B-A3B-NVFP4 hf_quant_config.json."""
    from kvplan.sources import bundled_config, bundled_index

    folder = tmp_path / "qwen3-30b-a3b-nvfp4"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(bundled_config(bundled_index()["qwen3-30b-a3b"])))
    shutil.copy(DATA / "hf_quant_config" / "qwen3-30b-a3b-nvfp4.json", folder / "hf_quant_config.json")
    return str(folder)


def published(tmp_path, name: str) -> str:
    """A folder with a published ModelOpt checkpoint's config.json and hf_quant_config.json (tests/data)."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(PUBLISHED / f"{name}.config.json", folder / "config.json")
    shutil.copy(PUBLISHED / f"{name}.hf_quant_config.json", folder / "hf_quant_config.json")
    return str(folder)


def ct_nvfp4(input_activations: bool, ignore: tuple[str, ...] = ()) -> dict:
    """llm-compressor's compressed-tensors NVFP4 preset (tensor_group, float 4-bit, group 16, symmetric weights and,
    for W4A4, input activations; lm_head and the routers ignored, plus `ignore`)."""
    args = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True,
            "dynamic": False}
    group = {"targets": ["Linear"], "weights": args,
             "input_activations": dict(args, dynamic="local") if input_activations else None}
    return {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
            "config_groups": {"group_0": group}, "ignore": ["lm_head", "re:.*mlp.gate$", *ignore]}
