"""The dtype SGLang 0.5.23 serves a checkpoint in under --dtype auto, as the GPTQ experts' dtype assert and the KV
cache's dtype see it (kvplan.engines.sglang_sm7.served_dtype):

- configs/model_config.py _get_and_verify_dtype reads hf_text_config's dtype (config.dtype, else torch_dtype); a
  config naming none is taken as float32, and "auto" serves float32 as float16 (bfloat16 for a Gemma);
  utils/hf_transformers/common.py get_hf_text_config gives a text sub-config without a dtype its parent's.
- arg_groups/model_override_base.py MODEL_OVERRIDES forces bfloat16 for MistralLarge3ForCausalLM and
  PixtralForConditionalGeneration; model_overrides/gpt_oss.py forces it for an MXFP4 gpt-oss.
- mem_cache/kv_cache_dtype.py configure_kv_cache_dtype: kv_cache_dtype auto is the model dtype.
"""

from __future__ import annotations

import json

from kvplan_inprocess import estimate_json, kvplan, refused_line

GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}
H100 = ("--gpu", "h100", "--context", "4k", "--engine", "sglang")


def _q30(tmp_path, name: str, **dtype) -> str:
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["qwen3-30b-a3b"]))
    raw.pop("torch_dtype", None)
    raw.pop("dtype", None)
    raw.update(dtype, quantization_config=GPTQ)
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return str(path)


def test_gptq_experts_of_a_config_naming_no_dtype_start_in_float16(tmp_path):
    # no torch_dtype: SGLang takes float32 and serves float16 (qwen3_moe is no Gemma), the GPTQ experts' torch.half
    # scales match the activations: TP 2 starts (p 384 a rank, 768 // 128 = 6 rows, group 64: the tiles and kernel of
    # tests/test_sglang_widths_moe.py), as the same config with torch_dtype float16 does
    path = _q30(tmp_path, "nodt.json")
    assert estimate_json(path, *H100, "--tp", "2")["capacity"]["tp"] == 2
    # and a float32 one the same
    assert estimate_json(_q30(tmp_path, "f32.json", torch_dtype="float32"), *H100, "--tp", "2")["capacity"]["tp"] == 2
    # bfloat16 named: the assert (sgl-project/sglang#20599)
    line = refused_line(_q30(tmp_path, "bf16.json", torch_dtype="bfloat16"), *H100, "--tp", "2")
    assert "GPTQ experts of a bfloat16 model" in line
    # a text sub-config without a dtype takes its parent's (get_hf_text_config): the parent's bfloat16 is named, so
    # not "none named"
    from kvplan.engines.sglang_sm7 import _names_no_dtype

    assert _names_no_dtype({"text_config": {"model_type": "qwen3_moe"}})
    assert not _names_no_dtype({"torch_dtype": "bfloat16", "text_config": {"model_type": "qwen3_moe"}})
    assert not _names_no_dtype({"text_config": {"dtype": "bfloat16"}})


def test_kv_cache_dtype_line_is_the_served_dtype(tmp_path):
    # kv_cache_dtype auto = the model dtype: float16 for a float32 or unnamed config (both above), not bfloat16
    for name, dtype in (("nodt.json", {}), ("f32.json", {"torch_dtype": "float32"})):
        out = kvplan("estimate", _q30(tmp_path, name, **dtype), *H100, "--tp", "2").stdout
        assert "KV Cache is allocated. dtype: torch.float16" in out
    out = kvplan("estimate", _q30(tmp_path, "f16.json", torch_dtype="float16"), *H100, "--tp", "2").stdout
    assert "KV Cache is allocated. dtype: torch.float16" in out


def test_architecture_overrides_force_bfloat16():
    from types import SimpleNamespace
    from unittest import mock

    from kvplan.engines import sglang_sm7

    model = SimpleNamespace(float_dtype="float16", model_type="gpt_oss", source="local:x")
    for raw in ({"architectures": ["GptOssForCausalLM"], "quantization_config": {"quant_method": "mxfp4"}},
                {"architectures": ["PixtralForConditionalGeneration"], "torch_dtype": "float16"}):
        with mock.patch("kvplan.engines.vllm_load.raw_config", return_value=raw):
            assert sglang_sm7.served_dtype(model) == "bfloat16"
    # gpt-oss without MXFP4 and naming no dtype: float16 (the float32 default)
    with mock.patch("kvplan.engines.vllm_load.raw_config", return_value={"architectures": ["GptOssForCausalLM"],
                                                                          "model_type": "gpt_oss"}):
        assert sglang_sm7.served_dtype(model) == "float16"


def test_architectures_that_are_not_a_list_name_no_override():
    # fuzz seed 44: `--set architectures=NaN` reached served_dtype, which iterated the float ("internal error:
    # TypeError"); a config whose architectures is not a list of names lists none, so no override applies and
    # gemma-3-1b (bfloat16 in its config) is served in bfloat16 as without the field
    for value in ("NaN", "7", '"MistralLarge3ForCausalLM"'):
        run = kvplan("estimate", "gemma-3-1b", "--gpu", "h100", "--engine", "sglang", "--set", f"architectures={value}",
                     "--format", "json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["engine"]["log"][0].startswith("KV Cache is allocated. dtype: torch.bfloat16,")
