"""SGLang 0.5.23 on the catalog's cards below SM 8.0 (T4 at 7.5, V100 at 7.0): kvplan/engines/sglang_sm7.py, each
figure worked by hand from the 0.5.23 wheel's source.

- dtype: configs/model_config.py _get_and_verify_dtype keeps the config's dtype under --dtype auto (no capability
  check): a bfloat16 checkpoint stays bfloat16 on a T4, and no model is refused float16 (vLLM refuses Gemma 3 there).
- quantization: model_loader/loader.py _get_quantization_config refuses a method whose get_min_capability is above
  the card's ("Minimum capability: N. Current capability: M"), then a model dtype outside its supported act dtypes.
  Fp8Config 80, Mxfp4Config 80, AWQConfig 75 (float16 only), ModelOptFp8Config 89, CompressedTensorsConfig 70.
  Below SM 8.0 Marlin runs no type (marlin_utils.py query_marlin_supported_quant_types), so GPTQ stays "gptq",
  which the CUDA build does not register: 'Unknown quantization method: gptq' (_verify_quantization).
"""

from __future__ import annotations

import json

import pytest


def _estimate(cli, *args, engine: str = "sglang"):
    code, out, err = cli("estimate", *args, "--engine", engine, "--format", "json")
    assert code == 0, err
    return json.loads(out)["engine"]


def _refused(cli, *args) -> str:
    code, _, err = cli("estimate", *args, "--engine", "sglang")
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _config(tmp_path, quantization_config: dict, torch_dtype: str | None = None) -> str:
    """Phi-3-mini's shape (torch_dtype bfloat16 as published) with a quantization_config."""
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["phi-3-mini-4k"]))
    raw["quantization_config"] = quantization_config
    if torch_dtype is not None:
        raw["torch_dtype"] = torch_dtype
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}


def test_a_bf16_checkpoint_stays_bf16_on_a_t4(cli):
    # _get_and_verify_dtype: auto keeps the config's bfloat16 (vLLM falls back to float16 there); 2 B either way.
    # Phi-3-mini: 32 layers x 32 KV heads x 96 x 2 (K, V) x 2 B = 393,216 B a token; page size 1
    # (overrides.py _page_size_default on CUDA; get_default_attn_backend: flashinfer below Hopper for MHA)
    engine = _estimate(cli, "phi-3-mini-4k", "--gpu", "t4")
    notes = " ".join(engine["notes"])
    assert "serves this checkpoint in bfloat16 on an SM 7.5 card too" in notes
    assert "flashinfer attention" in notes and "was not read" in notes
    assert engine["cell_bytes"] == 393_216 and engine["page_size"] == 1 and engine["kv_cache_dtype"] == "auto"
    # an A10G (SM 8.6) gets none of it, and takes --quantization fp8 (86 >= Fp8Config's 80)
    engine = _estimate(cli, "phi-3-mini-4k", "--gpu", "a10g", "--quantization", "fp8")
    assert not any("SM 8.6" in n for n in engine["notes"])


def test_gemma3_is_not_refused_float16_under_sglang(cli):
    # no _FLOAT16_NOT_SUPPORTED_MODELS in SGLang 0.5.23: gemma-3-1b (bfloat16) starts on a T4, kept in bfloat16
    notes = " ".join(_estimate(cli, "gemma-3-1b", "--gpu", "t4")["notes"])
    assert "serves this checkpoint in bfloat16 on an SM 7.5 card too" in notes


def test_an_fp8_kv_cache_is_taken_with_a_note(cli):
    # kv_cache_dtype.py configure_kv_cache_dtype: no capability check for fp8_e4m3; 393,216 / 2 = 196,608 B a token
    engine = _estimate(cli, "phi-3-mini-4k", "--gpu", "t4", "--kv-dtype", "fp8")
    assert engine["kv_cache_dtype"] == "fp8_e4m3" and engine["cell_bytes"] == 196_608
    assert "takes the fp8_e4m3 KV cache on an SM 7.5 card without a check" in " ".join(engine["notes"])


@pytest.mark.parametrize("args, refused", [
    # --quantization fp8: Fp8Config.get_min_capability 80 (not mxfp8) > 75 and > 70
    (("phi-3-mini-4k", "--gpu", "t4", "--quantization", "fp8"),
     "refuses the fp8 quantization on an SM 7.5 card: 'Minimum capability: 80. Current capability: 75'"),
    (("phi-3-mini-4k", "--gpu", "v100-32gb", "--quantization", "fp8"),
     "refuses the fp8 quantization on an SM 7.0 card: 'Minimum capability: 80. Current capability: 70'"),
    # gpt-oss's mxfp4 checkpoint: Mxfp4Config 80 (SGLang has no gpt-oss override of the name)
    (("gpt-oss-20b", "--gpu", "t4", "--weights", "10GiB"),
     "refuses the mxfp4 quantization on an SM 7.5 card: 'Minimum capability: 80. Current capability: 75'"),
])
def test_a_method_above_the_cards_capability_is_refused(cli, args, refused):
    assert refused in _refused(cli, *args)


def test_awq_runs_on_a_t4_in_float16_only(cli, tmp_path):
    # AWQConfig: 75; get_supported_act_dtypes [torch.float16] on CUDA (AWQMarlinConfig, which takes bfloat16, needs
    # Marlin: SM 8.0). A float16 AWQ config starts on a T4 (75 >= 75) ...
    fp16 = _config(tmp_path, AWQ, "float16")
    assert not any("bfloat16" in n for n in _estimate(cli, fp16, "--gpu", "t4")["notes"])
    # ... not on a V100 (70 < 75), the capability being checked before the dtype
    assert ("refuses the awq quantization on an SM 7.0 card: 'Minimum capability: 75. Current capability: 70'"
            in _refused(cli, fp16, "--gpu", "v100-32gb"))
    # ... and Phi-3's bfloat16 one is refused on a T4 under --dtype auto
    bf16 = _config(tmp_path, AWQ)
    assert ("'torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]'"
            in _refused(cli, bf16, "--gpu", "t4"))


def test_gptq_is_unknown_below_sm80(cli, tmp_path):
    config = _config(tmp_path, GPTQ, "float16")
    assert "'Unknown quantization method: gptq'" in _refused(cli, config, "--gpu", "t4")
    assert "'Unknown quantization method: gptq'" in _refused(cli, config, "--gpu", "v100-16gb")


def test_modelopt_fp8_needs_sm89_and_compressed_tensors_70(cli, tmp_path):
    # a ModelOpt FP8 config is served as modelopt_fp8 (_parse_modelopt_quant_config): ModelOptFp8Config 89
    config = _config(tmp_path, {"quant_method": "modelopt", "quant_algo": "FP8"})
    assert "'Minimum capability: 89. Current capability: 75'" in _refused(cli, config, "--gpu", "t4",
                                                                          "--weights", "4GiB")
    # compressed-tensors: CompressedTensorsConfig 70 = the V100's 70: it starts
    ct = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                   "strategy": "group", "group_size": 128}}}}
    _estimate(cli, _config(tmp_path, ct, "float16"), "--gpu", "v100-32gb", "--weights", "2GiB")


def test_other_releases_say_the_rule_was_not_read(cli):
    notes = " ".join(_estimate(cli, "phi-3-mini-4k", "--gpu", "t4", engine="sglang@0.5.9")["notes"])
    assert "kvplan read SGLang's rules for cards below SM 8.0 in 0.5.23 only" in notes


def test_fit_drops_the_refused_cards(cli):
    # fit's screen runs the same check (fit/engine.py: refuse_unread): fp8 on a T4 is not a deployment
    code, _, err = cli("fit", "phi-3-mini-4k", "--gpu", "t4", "--engine", "sglang", "--quantization", "fp8",
                       "--context", "4096")
    assert code != 0 and "'Minimum capability: 80. Current capability: 75'" in err


def test_sglang_method_below_sm80():
    from kvplan.configs.quant_online import sglang_method_below_sm80 as method

    assert method({"quant_method": "modelopt", "quant_algo": "NVFP4"}) == "modelopt_fp4"  # ModelOptFp4Config: 80
    assert method(AWQ) == "awq" and method(GPTQ) == "gptq" and method({}) is None and method(None) is None
