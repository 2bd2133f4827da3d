"""ModelOpt's hf_quant_config.json, read beside config.json (kvplan.sources, kvplan.hub).

ModelOpt up to 0.29 writes its quantization to hf_quant_config.json and leaves config.json without a
quantization_config; vLLM reads the file then (vllm/transformers_utils/config.py get_config) and, from 0.14,
follows its kv_cache_quant_algo for --kv-cache-dtype auto (utils/torch_utils.py
get_kv_cache_quant_algo_string). Test data, copied byte for byte (their sizes match the stored copies):

- data/hf_quant_config/qwen3-30b-a3b-nvfp4.json: nvidia/Qwen3-30B-A3B-NVFP4's hf_quant_config.json (ModelOpt
  0.33.0), as ai-dynamo/aiconfigurator keeps it (src/aiconfigurator/model_configs/
  nvidia--Qwen3-30B-A3B-NVFP4_hf_quant_config.json, commit 473ce5b6b44c7dd36516648be9b2fc7077aa7769);
- data/hf_quant_config/qwen3-32b-nvfp4.json: nvidia/Qwen3-32B-NVFP4's, the same repository
  (nvidia--Qwen3-32B-NVFP4_hf_quant_config.json, commit f577ab8432dfc9970fea27853a24861a6d3076cf).

Their config.json files are those of the BF16 originals (Qwen3-30B-A3B, Qwen3-32B's architecture is
bundled as qwen3-8b's family), as the NVFP4 repositories' config.json carries no quantization_config.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hub_server import HubServer
from kvplan.configs import build_model
from kvplan.configs.quant_bytes import modelopt_kv_cache
from kvplan.sources import load_config
from kvplan_inprocess import kvplan

DATA = Path(__file__).resolve().parent / "data" / "hf_quant_config"
SPECS = Path(__file__).resolve().parent.parent / "model_specs"
NVFP4_30B = (DATA / "qwen3-30b-a3b-nvfp4.json").read_text()


def _spec(name: str) -> dict:
    return json.loads((SPECS / f"{name}.json").read_text())


def _folder(tmp_path: Path, config: dict, quant: str | None, name: str = "ckpt") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if quant is not None:
        (folder / "hf_quant_config.json").write_text(quant)
    return folder


def _cli(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
    if cwd is None and env is None:
        return kvplan(*args)  # `python -m kvplan ARGS`, in this process
    # the Hub cases: their own HF_HOME and endpoint, read when huggingface_hub is imported
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


# Qwen3-30B-A3B: 30,532,122,624 parameters (Qwen/Qwen3-30B-A3B's index total_size 61,064,245,248 B / 2 B,
# model_specs/weights.json); embeddings and the untied head 151,936 x 2,048 = 311,164,928 each.
QWEN3_30B_PARAMS = 61_064_245_248 // 2
QWEN3_30B_EMBED = 151_936 * 2_048


def _qwen3_30b_nvfp4_tensors() -> int:
    """nvidia/Qwen3-30B-A3B-NVFP4 laid out tensor by tensor as ModelOpt exports NVFP4: per linear a U8 weight
    [out, in/2], an F8_E4M3 weight_scale [out, in/16] and two F32 scalars (weight_scale_2, input_scale); the
    excluded routers (mlp.gate, 2,048 -> 128) and lm_head, the embeddings and every norm in BF16; per layer
    two F32 KV scales (k_scale, v_scale: kv_cache_quant_algo FP8)."""
    def nvfp4(i, o):
        return o * i // 2 + o * i // 16 + 8
    hidden, heads, kv, head_dim, experts, inter = 2048, 32, 4, 128, 128, 768
    attention = (nvfp4(hidden, heads * head_dim) + 2 * nvfp4(hidden, kv * head_dim)
                 + nvfp4(heads * head_dim, hidden))
    moe = experts * (2 * nvfp4(hidden, inter) + nvfp4(inter, hidden))
    router = hidden * experts * 2
    norms = (2 * hidden + 2 * head_dim) * 2  # input / post-attention layernorms, q_norm, k_norm
    layer = attention + moe + router + norms + 8
    return 48 * layer + 2 * QWEN3_30B_EMBED * 2 + hidden * 2


def test_a_folder_with_hf_quant_config_is_sized_as_its_format(tmp_path):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), NVFP4_30B)
    raw, _, source = load_config(str(folder))
    assert raw["quantization_config"]["quantization"]["quant_algo"] == "NVFP4"
    model = build_model(raw, "nv", source)
    assert model.param_count == QWEN3_30B_PARAMS
    # the format's tensors one by one, per layer: attention 10,616,864 (q and o 4,718,600 each, k and v 589,832
    # each), 128 experts x 3 x 884,744 = 339,741,696, router 524,288, norms 8,704, KV scales 8: 350,891,560;
    # x 48 + embeddings and head 1,244,659,712 + final norm 4,096 = 18,087,458,688 B. kvplan reads Qwen3-MoE module
    # by module (routers and norms in BF16, two F32 scalars a quantized tensor, and with kv_cache_quant_algo FP8 the
    # k_scale and v_scale of each of the 48 attention layers): equal (before: 48 x 2 x 4 = 384 B under, the KV
    # scales left out; before that, routers and norms at the NVFP4 rate and no scalars, 18,540,544 B under)
    laid_out = _qwen3_30b_nvfp4_tensors()
    assert laid_out == 18_087_458_688
    assert model.weight_bytes == laid_out
    assert any("float32 k_scale and v_scale in 48 attention layers (384 B)" in n for n in model.notes)
    assert any("NVFP4 (modelopt, hf_quant_config.json)" in n for n in model.notes)
    assert model.checkpoint_kv_cache == "fp8"
    # without the file the same folder is the BF16 checkpoint
    bare = build_model(load_config(str(_folder(tmp_path, _spec("qwen3-30b-a3b"), None, "bf16")))[0], "bf16")
    assert bare.weight_bytes == 61_064_245_248 and bare.checkpoint_kv_cache is None


def test_llama_31_70b_fp8_is_no_longer_sized_as_bf16(tmp_path):
    # nvidia/Llama-3.1-70B-Instruct-FP8 ships config.json without a quantization_config and an FP8
    # hf_quant_config.json (ModelOpt 0.23: quant_algo FP8, kv_cache_quant_algo FP8, exclude_modules [lm_head])
    quant = json.dumps({"producer": {"name": "modelopt", "version": "0.23.0"},
                        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                                         "exclude_modules": ["lm_head"]}})
    model = build_model(load_config(str(_folder(tmp_path, _spec("llama-3.1-70b"), quant)))[0], "nv70b")
    # 70,553,706,496 parameters; embeddings and head 2 x 128,256 x 8,192 = 2,101,346,304 and the norms
    # 80 x 2 x 8,192 + 8,192 = 1,318,912 at 2 B = 4,205,330,432; the other 68,451,041,280 (the linear weights) at
    # 1 B, + weight_scale and input_scale (F32 each: vLLM 0.34 modelopt.py, per-tensor static FP8) for each of the
    # 80 x 7 linear tensors, 4,480 B, + the FP8 KV cache's k_scale and v_scale (F32 each, on k_proj and v_proj as
    # ModelOpt exports them) in each of the 80 layers, 640 B: 72,656,376,832 B (141,107,412,992 B as BF16)
    assert model.param_count == 70_553_706_496
    assert model.weight_bytes == 4_205_330_432 + 68_451_041_280 + 80 * 7 * 8 + 80 * 8 == 72_656_376_832


def test_a_config_json_path_reads_the_file_beside_it_and_a_loose_json_does_not(tmp_path):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), NVFP4_30B)
    raw, _, _ = load_config(str(folder / "config.json"))
    assert raw["quantization_config"]["producer"] == {"name": "modelopt", "version": "0.33.0"}
    loose = folder / "qwen3-30b-a3b.json"
    shutil.copy(folder / "config.json", loose)
    assert "quantization_config" not in load_config(str(loose))[0]


def test_config_json_s_own_quantization_config_wins(tmp_path):
    config = dict(_spec("qwen3-30b-a3b"), quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]})
    raw, _, _ = load_config(str(_folder(tmp_path, config, NVFP4_30B)))
    assert raw["quantization_config"]["quant_method"] == "fp8"
    # a null quantization_config is none (vLLM: config_dict.get("quantization_config") is None)
    config["quantization_config"] = None
    raw, _, _ = load_config(str(_folder(tmp_path, config, NVFP4_30B, "null")))
    assert raw["quantization_config"]["quantization"]["quant_algo"] == "NVFP4"


@pytest.mark.parametrize("text, words", [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
])
def test_a_broken_hf_quant_config_is_one_line_naming_it(tmp_path, text, words):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), text)
    out = _cli("estimate", str(folder))
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert "hf_quant_config.json" in out.stderr and words in out.stderr


@pytest.mark.parametrize("quant, reason", [
    ('{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "W4A8_AWQ"}}', "'W4A8_AWQ'"),
    ('{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "exclude_modules": "lm_head"}}',
     "not a list of names"),
])
def test_an_hf_quant_config_kvplan_cannot_size_refuses_gpu_plans(tmp_path, quant, reason):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), quant)
    plan = _cli("estimate", str(folder), "--gpu", "h100", "--context", "8k")
    assert plan.returncode == 2 and len(plan.stderr.strip().splitlines()) == 1
    assert "not known from its config" in plan.stderr and reason in plan.stderr and "--weights" in plan.stderr


# -- the KV cache vLLM serves for a ModelOpt checkpoint by default

@pytest.mark.parametrize("quant, expected", [
    ({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}, "fp8"),
    ({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None}}, None),
    ({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "NVFP4"}},
     "nvfp4"),
    # no producer: vLLM's normaliser names no quant_method, so nothing is read (aiconfigurator's GLM-5 copy)
    ({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}, None),
    # config.json's own ModelOpt layout: an 8-bit float kv_cache_scheme that is not dynamic
    ({"quant_method": "modelopt", "quant_algo": "NVFP4",
      "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"}}, "fp8"),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": {"dynamic": True, "num_bits": 8,
                                                                          "type": "float"}}, "unknown"),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": {"num_bits": 4, "type": "float"}}, "nvfp4"),
    # another method's kv_cache_scheme is not read here (vLLM: only quant_method modelopt*)
    ({"quant_method": "compressed-tensors", "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"}},
     None),
    (None, None),
])
def test_the_checkpoint_kv_cache_is_read_as_vllm_reads_it(quant, expected):
    assert modelopt_kv_cache(quant) == expected


def _estimate_json(folder: Path, *args: str) -> dict:
    out = _cli("estimate", str(folder), "--gpu", "h100", "--context", "8k", "--format", "json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_vllm_014_and_later_serve_the_checkpoint_s_fp8_kv_cache_by_default(tmp_path):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), NVFP4_30B)
    notes = _estimate_json(folder, "--engine", "vllm")["engine"]["notes"]
    assert any("names an FP8 KV cache" in n and "fp8_e4m3" in n and "--kv-dtype fp8" in n for n in notes), notes
    # 0.13 had no such rule: auto is the model's dtype
    notes = _estimate_json(folder, "--engine", "vllm@0.13")["engine"]["notes"]
    assert not any("KV cache, which vLLM" in n for n in notes)
    # planned in fp8 already: nothing to say
    notes = _estimate_json(folder, "--engine", "vllm", "--kv-dtype", "fp8")["engine"]["notes"]
    assert not any("KV cache, which vLLM" in n for n in notes)


def test_nvfp4_kv_cache_is_followed_from_vllm_020(tmp_path):
    quant = json.dumps({"producer": {"name": "modelopt"},
                        "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "NVFP4"}})
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), quant)
    old = _estimate_json(folder, "--engine", "vllm@0.19")["engine"]["notes"]
    assert not any("KV cache, which vLLM" in n for n in old)  # 0.14-0.19: not in the map, auto stays
    new = _estimate_json(folder, "--engine", "vllm@0.20")["engine"]["notes"]
    assert any("names an NVFP4 KV cache" in n and "as nvfp4" in n for n in new), new


def test_the_emitted_vllm_command_keeps_the_planned_kv_dtype(tmp_path):
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), NVFP4_30B)

    def emitted(*args):
        out = _cli("estimate", str(folder), "--gpu", "h100", "--context", "8k", "--format", "json", *args)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["emit"]

    latest = emitted("--emit", "vllm")
    assert latest["argv"][latest["argv"].index("--kv-cache-dtype") + 1] == "bfloat16"
    assert any("would follow the checkpoint's ModelOpt FP8 KV cache" in n for n in latest["notes"])
    old = emitted("--emit", "vllm@0.13")
    assert old["argv"][old["argv"].index("--kv-cache-dtype") + 1] == "auto"
    fp8 = emitted("--emit", "vllm", "--kv-dtype", "fp8")
    assert fp8["argv"][fp8["argv"].index("--kv-cache-dtype") + 1] == "fp8"


# -- the Hub: the file is fetched beside config.json (one bounded request), cached, read offline

def _run(args, tmp_path, endpoint=None, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1", **env_extra)
    if endpoint:
        env["HF_ENDPOINT"] = endpoint
    return _cli(*args, cwd=tmp_path, env=env)


def test_the_hub_file_is_read_then_cached_for_offline_use(tmp_path):
    config = _spec("qwen3-30b-a3b")
    with HubServer({"nvidia/q30": config, "acme/plain": config},
                   files={"nvidia/q30": {"hf_quant_config.json": NVFP4_30B.encode()}}) as hub:
        out = _run(["weights", "nvidia/q30", "--format", "json"], tmp_path, hub.url)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["weights"]["total_bytes"] == 18_087_458_688  # laid out, above
        asked = [p.split("?")[0] for m, p, _ in hub.requests if m == "GET"]
        assert asked.count("/nvidia/q30/resolve/main/hf_quant_config.json") == 1
        # a repository without the file: one 404, the plain checkpoint
        out = _run(["weights", "acme/plain", "--format", "json"], tmp_path, hub.url)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["weights"]["total_bytes"] == 61_064_245_248
    # offline: the cached copy answers, no request
    out = _run(["weights", "nvidia/q30", "--format", "json"], tmp_path, "http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["weights"]["total_bytes"] == 18_087_458_688  # laid out, above
    out = _run(["weights", "acme/plain", "--format", "json"], tmp_path, "http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["weights"]["total_bytes"] == 61_064_245_248


def test_a_hub_failing_on_the_second_file_plans_with_a_warning(tmp_path):
    config = _spec("qwen3-30b-a3b")
    with HubServer({"nvidia/q30": config}) as hub:
        original = hub.httpd.RequestHandlerClass.do_GET

        def do_get(handler):  # config.json answers, hf_quant_config.json fails (HTTP 503)
            if "hf_quant_config.json" in handler.path:
                hub.requests.append(("GET", handler.path, None))
                return handler._error(503, "", True, "status 503")
            return original(handler)

        hub.httpd.RequestHandlerClass.do_GET = do_get
        out = _run(["weights", "nvidia/q30", "--format", "json"], tmp_path, hub.url, KVPLAN_HUB_TIMEOUT="5")
    assert out.returncode == 0, out.stderr
    lines = out.stderr.strip().splitlines()
    assert any("503" in line and "hf_quant_config.json not read" in line for line in lines), out.stderr
    assert "Traceback" not in out.stderr
    assert json.loads(out.stdout)["weights"]["total_bytes"] == 61_064_245_248


def test_sglang_reads_the_kv_cache_of_hf_quant_config_too(tmp_path):
    # SGLang reads hf_quant_config.json itself (configs/model_config.py) and ModelOptFp8Config / ModelOptFp4Config
    # take kv_cache_quant_algo from its "quantization" (modelopt_quant.py from_config, 0.5.9 and 0.5.23); its KV
    # dtype auto follows an FP8 one (model_runner.py configure_kv_cache_dtype)
    folder = _folder(tmp_path, _spec("qwen3-30b-a3b"), NVFP4_30B)
    notes = _estimate_json(folder, "--engine", "sglang@0.5.9")["engine"]["notes"]
    assert any("names an FP8 KV cache" in n and "SGLang" in n for n in notes), notes
