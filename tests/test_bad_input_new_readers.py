"""Bad and odd input on the readers added in Dec 2026 (wrappers under llm_config / language_config / text_config,
remote-code decoders, Ling / Ring, Nemotron-NAS, MiniCPM-V): found by probing them with mutated copies of their
test configs. Each case ends in one clear line and a non-zero exit, or in what the engine itself would read.

Configs: tests/data/configs/ (sources in the docstrings of tests/test_vl_wrappers.py and
tests/test_families_remote_decoders.py); hand-written shapes where said.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan.configs.build import build_model
from kvplan.core.estimate import estimate
from kvplan.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"


def _raw(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


# -- the text model's class is the wrapper's, not what the nested model_type says ---------------------------

@pytest.mark.parametrize("named", [None, "deepseek_v2", "llama", "qwen2"])
def test_kimi_vl_text_config_is_always_a_deepseek_v2_config(named):
    # vLLM 0.33 transformers_utils/configs/kimi_vl.py KimiVLConfig: text_config = DeepseekV2Config(**text_config),
    # whatever model_type the dict names, and kimi_vl.py builds DeepseekV2Model from it. Kimi-VL-A3B-Instruct:
    # 27 layers of one MLA latent, kv_lora_rank 512 + qk_rope_head_dim 64, bf16: 27 x 576 x 2 B = 31,104 B
    # (read as llama, the same fields gave 27 layers x 16 heads x 128 x 2 x 2 B = 221,184 B)
    raw = _raw("kimi-vl-a3b-instruct.json")
    if named is not None:
        raw["text_config"]["model_type"] = named
    model = build_model(raw, "kimi-vl")
    assert model.family == "deepseek_v2"
    assert estimate(model, 1024).bytes_per_token == 27 * (512 + 64) * 2 == 31_104


def test_deepseek_vl2_language_config_is_always_a_deepseek_v2_config():
    # vLLM 0.33 configs/deepseek_vl2.py: text_config = DeepseekVLV2TextConfig(**language_config), a DeepseekV2Config
    # (hand-written shape, as in tests/test_vl_wrappers.py): 4 layers x (512 + 64) x 2 B = 4,608 B
    raw = {"model_type": "deepseek_vl_v2", "architectures": ["DeepseekVLV2ForCausalLM"], "language_config": {
        "model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 8, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128, "intermediate_size": 2048, "vocab_size": 1000}}
    model = build_model(raw, "deepseek-vl2-shape")
    assert model.family == "deepseek_v2"
    assert estimate(model, 1024).bytes_per_token == 4 * (512 + 64) * 2 == 4_608


@pytest.mark.parametrize("wrapper", ["internvl_chat", "NVLM_D", "kimi_vl", "minicpmv"])
def test_a_wrapper_nested_in_internvl_is_refused(wrapper):
    # llm_config names a wrapper's model_type: no engine builds a text model from that; before, kvplan read the
    # nested fields by the wrapper's record and called the reading exact
    raw = _raw("internvl3-1b-pretrained.json")
    raw["llm_config"]["model_type"] = wrapper
    with pytest.raises(ConfigError, match="itself a multimodal wrapper"):
        build_model(raw, "internvl")


def test_a_nested_wrapper_is_one_line_on_the_cli(cli, tmp_path):
    raw = _raw("internvl3-1b-pretrained.json")
    raw["llm_config"]["model_type"] = "internvl_chat"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = cli("estimate", str(path), "--gpu", "h100", "--emit", "vllm")
    assert code == 1 and "itself a multimodal wrapper" in _one_line(err)


# -- a quantization_config that is not an object ---------------------------------------------------------------

@pytest.mark.parametrize("name, where", [("laguna-xs.2-fp8.json", None), ("internvl3-1b-pretrained.json", "llm_config"),
                                         ("llama-4-scout-fp8-dynamic.json", None)])
@pytest.mark.parametrize("quant", ["fp8", ["fp8"], True])
def test_a_quantization_config_that_is_not_an_object_leaves_the_weights_unsized(cli, tmp_path, name, where, quant):
    # vLLM 0.33 reads quant_method from quantization_config with .get() (transformers_utils/
    # model_arch_config_convertor.py _normalize_quantization_config),
    # so such a checkpoint does not load; before, kvplan sized it as an unquantized bf16 model without a word
    raw = _raw(name)
    (raw[where] if where else raw)["quantization_config"] = quant
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = cli("weights", str(path))
    assert code == 2 and f"quantization_config is a {type(quant).__name__}, not a JSON object" in _one_line(err)
    # the KV cache does not depend on it
    code, out, err = cli("estimate", str(path), "--format", "json")
    assert code == 0, err


def test_a_null_quantization_config_is_no_quantization(cli, tmp_path):
    # null is how transformers writes "none" (PretrainedConfig attributes default to None): the bf16 figure stands
    raw = _raw("internvl3-1b-pretrained.json")
    raw["quantization_config"] = None
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, out, err = cli("weights", str(path), "--format", "json")
    assert code == 0, err


# -- the in-suite fuzz over these configs -------------------------------------------------------------------------
# (the probe behind this file ran ~22,000 single mutations of these configs and of hand-written wrapper and
# remote-decoder shapes through estimate with vLLM's and SGLang's accounting, --emit and weights, none crashing)

from hypothesis import HealthCheck, given, settings  # noqa: E402

import config_fuzz  # noqa: E402


@pytest.mark.parametrize("name", config_fuzz.DATA_NAMES)
def test_each_new_reader_config_runs_unmutated(name, tmp_path):
    for variant in config_fuzz.VARIANTS:
        outcome = config_fuzz.run_estimate(config_fuzz.data_config(name), variant, tmp_path)
        assert outcome.crash is None, f"{name} {' '.join(variant)}: {outcome.crash} at {outcome.site}"


@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=config_fuzz.mutated_configs(config_fuzz.ALL_DATA_NAMES, config_fuzz.data_config))
def test_mutated_new_reader_configs_answer_or_fail_cleanly(case, tmp_path):
    config_fuzz.check_case(case, tmp_path)


# -- SGLang's state pool for the new hybrid readers: one line that does not contradict itself ----------------------

# (Ling 3.0's KDA, Nemotron Nano VL V2's Mamba-2 and Ling 2.5's lightning states are pooled now:
# tests/test_sglang_hybrid_wrappers.py, tests/test_sglang_ling25.py; below, that they plan, and that MiniMax's
# lightning state is still refused in one line)
_NANO_VL_SHAPE = {  # hand-written shape as in tests/test_vl_wrappers.py: Mamba-2 layers under llm_config
    "model_type": "NemotronH_Nano_VL_V2", "architectures": ["NemotronH_Nano_VL_V2"], "llm_config": {
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "num_hidden_layers": 4,
        "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
        "hybrid_override_pattern": "M*M-", "mamba_num_heads": 16, "mamba_head_dim": 32, "ssm_state_size": 128,
        "n_groups": 8, "conv_kernel": 4, "intermediate_size": 1024, "vocab_size": 1000}}


_LING25 = {"model_type": "bailing_hybrid", "architectures": ["BailingMoeV2_5ForCausalLM"], "torch_dtype": "bfloat16",
           "layer_group_size": 5}  # hand-written: the class defaults (no real Ling 2.5 config.json was found)


def _bundled(name: str) -> dict:
    from kvplan.sources import bundled_config, bundled_index

    return bundled_config(bundled_index()[name])


@pytest.mark.parametrize("raw", [_raw("edge0-8b-a1b-preview.json"), _NANO_VL_SHAPE, _LING25],
                         ids=["ling-3.0-kda", "nemotron-nano-vl-v2", "ling-2.5-lightning"])
def test_sglang_plans_the_state_pools_it_reads(cli, tmp_path, raw):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = cli("estimate", str(path), "--gpu", "h200", "--engine", "sglang", "--weights", "1GiB")
    assert code == 0, err


@pytest.mark.parametrize("raw", [_bundled("minimax-text-01")], ids=["minimax-lightning"])
def test_sglang_refuses_a_state_pool_it_does_not_read_in_one_line(cli, tmp_path, raw):
    # the old line said "(... Mamba-2 hybrids ... and Kimi Linear's KDA are)" modelled while refusing a Mamba-2 or
    # KDA state: the state kind is read, the architecture's pool is not
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    code, _, err = cli("estimate", str(path), "--gpu", "h200", "--engine", "sglang", "--weights", "1GiB")
    line = _one_line(err)
    # SGLang registers no MiniMaxText01ForCausalLM: the line leads with that (tests/test_sglang_pure_ssm.py), then
    # names the state kvplan does not plan
    assert code == 2 and line.startswith(f"kvplan: error: SGLang 0.5.23 registers no {raw['architectures'][0]}, ")
    assert "lightning state" in line


def test_sglang_refuses_a_ling25_config_without_layer_group_size_in_one_line(cli, tmp_path):
    # SGLang re-reads bailing_hybrid through its own BailingHybridConfig, whose layer_group_size default is 1
    # (every layer full attention), not the checkpoints' 5 that kvplan reads
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in _LING25.items() if k != "layer_group_size"}), encoding="utf-8")
    code, _, err = cli("estimate", str(path), "--gpu", "h200", "--engine", "sglang", "--weights", "1GiB")
    assert code == 2 and "its default 1" in _one_line(err)
