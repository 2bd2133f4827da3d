"""--quantization: vLLM 0.34's and SGLang 0.5.23's online FP8 of a float checkpoint (kvplan/configs/quant_online.py),
its bytes worked out by hand from the configs' shapes."""

from __future__ import annotations

import json

# Llama-3.1-8B (bundled config): hidden 4096, 32 layers, 32 heads and 8 KV heads of 128, intermediate 14336,
# vocab 128256, untied LM head
H, L, KV, I, V = 4096, 32, 8 * 128, 14336, 128256
ROWS = (H, KV, KV, H, I, I, H)  # output rows of q, k, v, o, gate, up, down
LINEAR = L * (H * H + H * KV + H * KV + H * H + 3 * H * I)  # every decoder linear weight: FP8, 1 B each
PLAIN = 2 * V * H + L * 2 * H + H  # embeddings and LM head (VocabParallelEmbedding / ParallelLMHead: not
#                                     LinearBase, so not quantized), two norms a layer and the final one: 2 B each
# vLLM fp8_per_tensor: a float32 weight_scale per quantized module; kvplan counts one per checkpoint tensor (7 a
# layer), vLLM holds one per fused module (qkv_proj, o_proj, gate_up_proj, down_proj: 4 a layer)
LLAMA_VLLM = LINEAR + 2 * PLAIN + L * 7 * 4
LLAMA_BF16 = 16_060_522_496  # the published total of the BF16 checkpoint (model_specs/weights.json)


def _json(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _error(cli, *args) -> str:
    code, out, err = cli(*args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("kvplan: error:"), (code, out, err)
    return lines[0]


def test_llama_8b_vllm_fp8_is_linears_at_1_byte_and_the_rest_at_2(cli):
    assert LINEAR == 6_979_321_856 and PLAIN == 525_336_576 * 2 + 266_240
    assert LLAMA_VLLM == 9_081_201_536
    assert abs(LLAMA_VLLM - (LINEAR + 2 * PLAIN + L * 4 * 4)) < 1024  # vLLM's own count of scales, within 1 KiB
    d = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "h100", "--engine", "vllm", "--quantization", "fp8")
    assert d["model"]["weight_bytes"] == LLAMA_VLLM
    assert d["capacity"]["weight_bytes_per_gpu"] == LLAMA_VLLM
    assert d["model"]["online_quantization"] == "fp8"
    assert "online" in d["model"]["weights"]["quantization"] and "fp8_per_tensor" in d["model"]["weights"]["quantization"]
    # vLLM's profile holds the FP8 bytes in its weights term instead of the BF16 checkpoint's (its other terms alike)
    bf16 = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "h100", "--engine", "vllm")
    assert bf16["model"]["online_quantization"] is None
    assert (bf16["engine"]["profile"]["weight_bytes"] - d["engine"]["profile"]["weight_bytes"]
            == LLAMA_BF16 - LLAMA_VLLM)


def test_mixtral_vllm_fp8_quantizes_the_experts_and_keeps_the_router(cli):
    # Mixtral-8x7B: hidden 4096, 32 layers, 8 KV heads of 128, 8 experts of 14336, vocab 32000, untied; its router
    # is a GateLinear built without quant_config (vLLM 0.34 mixtral.py), so it stays in bf16
    experts, vocab = 8, 32000
    linear = L * (H * H + 2 * H * KV + H * H + experts * 3 * H * I)
    router, norms = L * H * experts, L * 2 * H + H
    plain = 2 * vocab * H + router + norms
    # a float32 scale per quantized checkpoint tensor of attention (q, k, v, o; vLLM holds one per fused qkv_proj: a
    # few KB), and per expert one for its fused w13 and one for its w2 (online/fp8.py Fp8PerTensorOnlineMoEMethod:
    # w13_scale / w2_scale [experts])
    scales = L * 4 * 4 + L * experts * 2 * 4
    whole = linear + 2 * plain + scales
    assert whole == 46_966_254_080
    d = _json(cli, "estimate", "mixtral-8x7b", "-c", "4k", "--gpu", "h100", "--tp", "2", "--engine", "vllm",
              "--quantization", "fp8")
    assert d["model"]["weight_bytes"] == whole
    # TP 2: the router, the norms and the per-tensor scales whole on each rank, the rest (8 KV heads) halved
    replicated = 2 * (router + norms) + scales
    assert d["capacity"]["weight_bytes_per_gpu"] == (whole - replicated) // 2 + replicated


def test_mixtral_vllm_experts_int8_quantizes_the_experts_only(cli):
    # experts_int8 (vLLM 0.34 ExpertsInt8Config): the routed experts int8 with a float32 scale per output row of each
    # expert (online/int8.py: w13_scale [E, 2 x 14336], w2_scale [E, 4096]); attention, router, norms, embeddings and
    # head stay bf16
    experts, vocab = 8, 32000
    expert_weights = L * experts * 3 * H * I
    rows = L * experts * (2 * I + H)
    plain = L * (H * H + 2 * H * KV + H * H) + 2 * vocab * H + L * H * experts + L * 2 * H + H
    d = _json(cli, "estimate", "mixtral-8x7b", "-c", "4k", "--emit", "vllm", "--quantization", "experts_int8")
    assert d["model"]["weight_bytes"] == expert_weights + 4 * rows + 2 * plain == 48_341_983_232


def test_sglang_fp8_is_per_channel(cli):
    # SGLang 0.5.23 Fp8LinearMethod on CUDA: per_token_group_quant_fp8 over whole rows, a float32 scale per row
    scales = L * sum(ROWS) * 4
    d = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "h100", "--engine", "sglang",
              "--quantization", "fp8")
    assert d["model"]["weight_bytes"] == LINEAR + 2 * PLAIN + scales == 9_086_705_664


def test_sglang_load_holds_the_bf16_checkpoint(cli):
    # 70B in bf16 is 141,107,412,992 B (published): more than an H100's 79.18 GiB at TP 1, within it at TP 2
    d = _json(cli, "estimate", "llama-3.1-70b", "-c", "4k", "--gpu", "h100", "--engine", "sglang", "--mem-util", "0.97",
              "--quantization", "fp8")
    assert any("would run out of memory loading" in n for n in d["model"]["weights"]["notes"])
    d = _json(cli, "estimate", "llama-3.1-70b", "-c", "4k", "--gpu", "h100", "--tp", "2", "--engine", "sglang",
              "--quantization", "fp8")
    assert not any("would run out of memory loading" in n for n in d["model"]["weights"]["notes"])


def test_emit_passes_the_flag_on(cli):
    d = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--quantization", "fp8_per_block", "--emit", "vllm")
    argv = d["emit"]["argv"]
    assert argv[argv.index("--quantization") + 1] == "fp8_per_block"
    d = _json(cli, "estimate", "llama-3.1-8b", "-c", "8k", "--quantization", "fp8", "--emit", "sglang")
    argv = d["emit"]["argv"]
    assert argv[argv.index("--quantization") + 1] == "fp8"
    assert d["model"]["weight_bytes"] == LINEAR + 2 * PLAIN + L * sum(ROWS) * 4  # SGLang's rule: the one emitted


def test_fit_sizes_the_quantized_weights(cli):
    d = _json(cli, "fit", "llama-3.1-8b", "-c", "8k", "-n", "1", "--gpu", "h100", "--max-gpus", "1", "--engine", "vllm",
              "--quantization", "fp8", "--kv-dtype", "auto")
    first = d["options"][0]
    assert first["gpus"] == 1 and first["weight_bytes_per_gpu"] == LLAMA_VLLM
    assert "--quantization fp8" in first["estimate_command"]


def test_refusals(cli):
    line = _error(cli, "estimate", "llama-3.1-8b", "--quantization", "int4")
    assert "--quantization 'int4'" in line and "fp8_per_tensor" in line
    assert "SGLang" in _error(cli, "estimate", "llama-3.1-8b", "--engine", "sglang", "--quantization", "fp8_per_block")
    # an FP8 checkpoint with another method: vLLM's "does not match" (config/model.py _verify_quantization)
    line = _error(cli, "estimate", "deepseek-v3", "--quantization", "fp8_per_tensor")
    assert "(fp8) does not match" in line and "(fp8_per_tensor)" in line
    assert "does not match" in _error(cli, "estimate", "gpt-oss-20b", "--engine", "sglang", "--quantization", "fp8")
    assert "0.34" in _error(cli, "estimate", "llama-3.1-8b", "--engine", "vllm@0.33", "--quantization", "fp8")
    assert "--weights" in _error(cli, "estimate", "llama-3.1-8b", "--weights", "10GB", "--quantization", "fp8")


def test_a_checkpoint_already_so_is_served_as_stored(cli):
    # DeepSeek-V3 is FP8 already: --quantization fp8 changes nothing; gpt-oss's mxfp4 overrides the flag in vLLM
    for model in ("deepseek-v3", "gpt-oss-20b"):
        plain = _json(cli, "estimate", model, "-c", "4k")
        d = _json(cli, "estimate", model, "-c", "4k", "--quantization", "fp8")
        assert d["model"]["weight_bytes"] == plain["model"]["weight_bytes"]
        assert d["model"]["online_quantization"] is None
        assert "no online quantization" in d["model"]["weights"]["notes"][-1]


def test_vllm_profile_takes_the_moe_kernels_of_the_online_layout(cli):
    # Mixtral's bf16 experts run vLLM 0.34's unquantized TritonExperts with a persistent workspace; once quantized
    # online to per-tensor FP8 they run the FP8 oracle's kernel (online/fp8.py Fp8PerTensorOnlineMoEMethod:
    # select_fp8_moe_backend), whose workspace kvplan has not read: not the bf16 one
    args = ("estimate", "mixtral-8x7b", "-c", "4k", "--gpu", "h100", "--tp", "2", "--engine", "vllm")
    plain = _json(cli, *args)["engine"]["profile"]
    fp8 = _json(cli, *args, "--quantization", "fp8")["engine"]["profile"]
    assert "fused-MoE workspace" in plain["kept_from"] and "fused-MoE workspace" not in fp8["kept_from"]
    assert any("online fp8_per_tensor are not read" in n for n in fp8["notes"])
    # the per-channel layout is sized as a compressed-tensors checkpoint, but its kernels are vLLM's online FP8 ones
    channel = _json(cli, *args, "--quantization", "fp8_per_channel")["engine"]["profile"]["notes"]
    assert any("online fp8_per_channel are not read" in n for n in channel)
    assert not any("compressed-tensors" in n for n in channel)


def test_an_emitted_engine_takes_the_flag_too(cli):
    # the command --emit prints passes --quantization on: SGLang 0.5.23 has no fp8_per_block
    # (layers/quantization/__init__.py BASE_QUANTIZATION_METHODS), and vLLM 0.33's online quantization is not read
    line = _error(cli, "estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--emit", "sglang",
                  "--quantization", "fp8_per_block")
    assert "'fp8_per_block'" in line and "SGLang 0.5.23" in line
    line = _error(cli, "estimate", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--emit", "vllm@0.33",
                  "--quantization", "fp8")
    assert "not 0.33" in line and "--emit" in line
    # a release kvplan has not read, modelled with 0.34's rules: refused by estimate as by fit (fit/run.py _online)
    for command in ("estimate", "fit"):
        assert "not 0.34.1" in _error(cli, command, "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.34.1",
                                      "--quantization", "fp8")


def test_deepseek_v41_fp8_is_served_as_stored_whatever_the_flag(cli):
    # vLLM 0.34 on CUDA takes models/deepseek_v41/quant_config.py's DeepseekV4FP8Config for deepseek_v4_fp8, whose
    # override_quantization_method claims an fp8 checkpoint of model_type deepseek_v41(_text) whatever --quantization
    # says (config/model.py _verify_quantization then takes its answer): no "does not match" refusal
    plain = _json(cli, "estimate", "deepseek-v4.1-flash", "-c", "4k")
    for value in ("fp8_per_tensor", "experts_int8"):
        d = _json(cli, "estimate", "deepseek-v4.1-flash", "-c", "4k", "--quantization", value)
        assert d["model"]["weight_bytes"] == plain["model"]["weight_bytes"]
        assert d["model"]["online_quantization"] is None
        assert "deepseek_v4_fp8" in d["model"]["weights"]["notes"][-1]


def test_a_float32_checkpoint_loads_in_16_bits(cli):
    # yayi2-30b (float32, Llama layout): hidden 7168, 64 layers, 64 query heads of 112 and one KV head, intermediate
    # 16384, vocab 81920, untied. Both engines' dtype auto serve float32 in 16 bits (SGLang 0.5.23 model_config.py
    # _get_and_verify_dtype: float16 for a non-Gemma model), so SGLang's load holds 2 B a parameter before it
    # quantizes, not the float32 file's 4
    h, layers, kv, inter, vocab = 7168, 64, 112, 16384, 81920
    params = 2 * vocab * h + h + layers * (2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h)
    assert params == 30_403_337_216
    held = 2 * params  # 56.63 GiB: within an H100's 79.18 GiB at TP 1 (the float32 file's 113.26 GiB is not)
    d = _json(cli, "estimate", "tests/data/configs/yayi2-30b-guanaco-llama-fp32.json", "-c", "4k", "--gpu", "h100",
              "--engine", "sglang", "--quantization", "fp8")
    notes = d["model"]["weights"]["notes"]
    assert not any("would run out of memory loading" in n for n in notes)
    assert any(f"in float16 ({held / 2**30:,.2f} GiB" in n for n in notes), notes
    # an A100 40GB (39.50 GiB) cannot hold that at TP 1: the warning gives the 16-bit share
    d = _json(cli, "estimate", "tests/data/configs/yayi2-30b-guanaco-llama-fp32.json", "-c", "4k", "--gpu",
              "a100-40gb", "--engine", "sglang", "--quantization", "fp8")
    warning = [n for n in d["model"]["weights"]["notes"] if "would run out of memory loading" in n]
    assert len(warning) == 1 and f"{held / 2**30:,.2f} GiB a GPU at TP 1" in warning[0] and "float16" in warning[0]


def test_fit_under_sglang_leaves_out_what_its_load_cannot_hold(cli):
    # EXAONE-4.0-32B (bundled config): hidden 5120, 64 layers, 40 query and 8 KV heads of 128, intermediate 27392,
    # vocab 102400, untied; per layer two norms and q_norm / k_norm of 128. In bf16: 64.0 GB = 59.61 GiB, more than
    # an L40S's 44.42 GiB; SGLang 0.5.23 holds it all before quantizing (loader.py load_weights_and_postprocess),
    # while the FP8 weights alone (~30.8 GiB) fit one card. The one-GPU options must fail, as the estimate warns
    h, layers, heads, kv, inter, vocab = 5120, 64, 40, 8, 27392, 102400
    params = 2 * vocab * h + h + layers * (2 * h * heads * 128 + 2 * h * kv * 128 + 3 * h * inter + 2 * h + 2 * 128)
    assert 2 * params / 2**30 > 44.42 and 2 * params / 2 / 2**30 < 44.42
    d = _json(cli, "fit", "exaone-4.0-32b", "-c", "4k", "-n", "1", "--gpu", "l40s", "--max-gpus", "2",
              "--engine", "sglang", "--quantization", "fp8")
    assert d["options"] and all(o["gpus"] == 2 for o in d["options"])
    assert d["settings"]["quantization"] == "fp8"
    argv = d["options"][0]["estimate_command"].split()[1:]
    e = _json(cli, *argv)
    assert not any("would run out of memory loading" in n for n in e["model"]["weights"]["notes"])


def test_sglang_serves_a_modelopt_checkpoint_as_stored(cli, tmp_path):
    # SGLang 0.5.23 names a ModelOpt checkpoint modelopt_fp8 / modelopt_fp4 (model_config.py
    # _parse_modelopt_quant_config) and its override returns that name whatever --quantization says
    # (base_config.py _modelopt_override_quantization_method): no "does not match" refusal, no online step
    from test_weights_quantized_config import _llama8b_with

    for algo in ("FP8", "NVFP4"):
        path = tmp_path / f"{algo}.json"
        path.write_text(json.dumps(_llama8b_with({"quant_method": "modelopt", "quant_algo": algo, "group_size": 16,
                                                  "exclude_modules": ["lm_head"]})))
        plain = _json(cli, "estimate", str(path), "-c", "4k")
        d = _json(cli, "estimate", str(path), "-c", "4k", "--gpu", "h100", "--engine", "sglang", "--quantization", "fp8")
        assert d["model"]["weight_bytes"] == plain["model"]["weight_bytes"]
        assert d["model"]["online_quantization"] is None
        assert f"as modelopt_fp{4 if algo == 'NVFP4' else 8}" in d["model"]["weights"]["notes"][-1]


def test_the_weights_note_names_the_online_layout(cli):
    # the per-channel layout is sized as a compressed-tensors checkpoint of the same bytes; the note says which
    # layout it is (vLLM 0.34's online fp8_per_channel), not only the stand-in format
    notes = _json(cli, "estimate", "llama-3.1-8b", "-c", "4k", "--quantization", "fp8_per_channel")["model"]["weights"]
    line = next(n for n in notes["notes"] if n.startswith("weights estimated as"))
    assert line.startswith("weights estimated as FP8 per-channel, online (sized as the checkpoint format "
                           "compressed-tensors")


def test_granite_moe_routed_experts_are_quantized_by_experts_int8(cli):
    # granite-4.0-h-tiny (bundled): hidden 1536, 40 layers each with 64 routed experts of intermediate 512, stored as
    # block_sparse_moe.input_linear [64, 2 x 512, 1536] and output_linear [64, 1536, 512]: a FusedMoE in vLLM 0.34
    # (granitemoehybrid.py), so experts_int8's Int8OnlineMoEMethod quantizes them, though no ".experts." is in their
    # names. Its 6,939,037,248 parameters in bf16 (the plain estimate) less the experts' stay at 2 B
    params, layers, experts, hidden, inter = 6_939_037_248, 40, 64, 1536, 512
    assert _json(cli, "estimate", "granite-4.0-h-tiny", "-c", "4k")["model"]["weight_bytes"] == 2 * params
    expert_weights = layers * experts * 3 * hidden * inter
    rows = layers * experts * (2 * inter + hidden)  # a float32 scale per output row of each expert's tensor
    d = _json(cli, "estimate", "granite-4.0-h-tiny", "-c", "4k", "--quantization", "experts_int8")
    assert d["model"]["weight_bytes"] == 2 * (params - expert_weights) + expert_weights + 4 * rows == 7_864_491_136
