"""The serving cards added to the GPU catalog in Dec 2026 (A10G, T4, V100, GeForce 30/40/50, MI355X): each driver total
against the public log it was read from, the datasheet figures, and vLLM 0.34's rules on cards below SM 8.0
(kvplan/engines/vllm_sm7.py), worked by hand.

A driver total is printed to 0.01 GiB; the catalog holds int(GiB x 2**30) bytes (GiB = 2**30 = 1,073,741,824 B).
"""

from __future__ import annotations

import json

import pytest

from kvplan.capacity.gpus import CATALOG, lookup, match_device_name

GIB = 2**30


@pytest.mark.parametrize("gpu, driver_gib, total", [
    # A10G: a vLLM (DJL LMI) OOM on an ml.g5.4xlarge "GPU 0 has a total capacity of 21.99 GiB".
    # 21 x 2**30 = 22,548,578,304 + 0.99 x 2**30 = 1,063,004,405.76 -> 23,611,582,709 B
    ("a10g", 21.99, 23_611_582_709),
    # T4: vLLM 0.8.2 on Colab's T4 "total_gpu_memory (14.74GiB)". 14 x 2**30 = 15,032,385,536 + 794,568,949.76
    # -> 15,826,954,485 B
    ("t4", 14.74, 15_826_954_485),
    # V100 16 GB: Azure NCv3 OOMs "(GPU 0; 15.77 GiB total capacity; ...)". 15 x 2**30 = 16,106,127,360
    # + 0.77 x 2**30 = 826,781,204.48 -> 16,932,908,564 B
    ("v100-16gb", 15.77, 16_932_908_564),
    # V100 32 GB: vLLM 0.8.5 on a V100 "total_gpu_memory (31.74GiB)". 31 x 2**30 = 33,285,996,544 + 794,568,949.76
    # -> 34,080,565,493 B
    ("v100-32gb", 31.74, 34_080_565_493),
    # RTX 4080: "NVIDIA GeForce RTX 4080 (15.992 GiB)", two decimals 15.99. 16,106,127,360 + 1,063,004,405.76
    # -> 17,169,131,765 B
    ("rtx-4080", 15.99, 17_169_131_765),
    # RTX 3080 (10 GB): "(GPU 0; 9.77 GiB total capacity; ...)". 9 x 2**30 = 9,663,676,416 + 826,781,204.48
    # -> 10,490,457,620 B
    ("rtx-3080", 9.77, 10_490_457_620),
    # RTX 3060 (12 GB): "GPU 0 has a total capacity of 11.63 GiB". 11 x 2**30 = 11,811,160,064 + 0.63 x 2**30 =
    # 676,457,349.12 -> 12,487,617,413 B
    ("rtx-3060", 11.63, 12_487_617_413),
    # RTX 5080: vLLM #30707 "Free memory on device (14.55/15.92 GiB)". 16,106,127,360 + 0.92 x 2**30 =
    # 987,842,478.08 -> 17,093,969,838 B
    ("rtx-5080", 15.92, 17_093_969_838),
    # MI355X: vLLM on MI355X nodes "(272.0-272.4/287.98 GiB)". 287 x 2**30 = 308,163,903,488 + 0.98 x 2**30 =
    # 1,052,266,987.52 -> 309,216,170,475 B
    ("mi355x", 287.98, 309_216_170_475),
])
def test_sourced_driver_totals(gpu, driver_gib, total):
    card = lookup(gpu)
    assert card.driver_bytes == int(driver_gib * GIB) == total and card.usable_bytes == total
    assert f"{driver_gib:.2f}" in card.driver_from


def test_the_mi355x_total_sits_where_a_byte_exact_report_puts_it():
    # a 288 GB Instinct node reports 309,220,868,096 B = 287.9844 GiB: the printed 287.98 is 4.7 MB (0.0044 GiB) low
    assert 0 < 309_220_868_096 - lookup("mi355x").driver_bytes < 0.005 * GIB


@pytest.mark.parametrize("gpu", ["rtx-4080-super", "rtx-4070-ti-super", "rtx-5070-ti"])
def test_geforce_cards_without_a_driver_total_keep_the_datasheet(gpu):
    # their public logs spread by 0.4 GiB between Linux and Windows hosts: no single total is kept
    card = lookup(gpu)
    assert card.driver_bytes is None and card.usable_bytes == 16 * GIB and "no driver total found" in card.note


@pytest.mark.parametrize("gpu, memory_gib, hbm_gbps, link_gbps, tflops, smi_mib", [
    ("a10g", 24, 600, 32, 70.0, None),  # 80 SMs x 4 tensor cores x 128 FLOP x 1.71 GHz = 70.04 (GeForce rate)
    ("t4", 16, 320, 16, 65, 15360),  # T4 datasheet: 65 FP16 TFLOPS, PCIe Gen3; "Tesla T4, 15360 MiB"
    ("v100-16gb", 16, 900, 16, 125, None),  # V100 SXM2: 125 tensor TFLOPS
    ("v100-32gb", 32, 900, 16, 125, None),
    ("rtx-4080", 16, 716.8, 32, 97.5, 16376),  # Ada whitepaper: 97.5 FP16/BF16 tensor (FP32 accumulate)
    ("rtx-4080-super", 16, 736, 32, 104.4, 16376),  # 80 x 512 x 2.55 GHz = 104.45
    ("rtx-4070-ti-super", 16, 672, 32, 88.2, None),  # 66 x 512 x 2.61 GHz = 88.20
    ("rtx-3080", 10, 760, 32, 59.5, None),  # GA102 whitepaper: 59.5 (FP32 accumulate)
    ("rtx-3060", 12, 360, 32, 25.5, None),  # 28 x 512 x 1.777 GHz = 25.47
    ("rtx-5080", 16, 960, 64, 112.6, None),  # 84 x 512 x 2.617 GHz = 112.55
    ("rtx-5070-ti", 16, 896, 64, 87.9, None),  # 70 x 512 x 2.452 GHz = 87.88
    ("mi355x", 288, 8000, 64, 2516.6, None),  # 256 CUs x 4,096 FLOP x 2.4 GHz = 2,516.58
])
def test_datasheet_figures(gpu, memory_gib, hbm_gbps, link_gbps, tflops, smi_mib):
    card = lookup(gpu)
    assert card.memory_bytes == memory_gib * GIB and card.smi_mib == smi_mib
    assert (card.hbm_gbps, card.link_gbps, card.bf16_tflops) == (hbm_gbps, link_gbps, tflops)


@pytest.mark.parametrize("device_name, key", [
    ("NVIDIA A10G", "a10g"), ("NVIDIA A10", "a10"), ("Tesla T4", "t4"), ("Tesla V100-SXM2-16GB", "v100-16gb"),
    ("Tesla V100-SXM2-32GB", "v100-32gb"), ("Tesla V100-PCIE-32GB", "v100-32gb"),
    ("NVIDIA GeForce RTX 4080", "rtx-4080"), ("NVIDIA GeForce RTX 4080 SUPER", "rtx-4080-super"),
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "rtx-4070-ti-super"), ("NVIDIA GeForce RTX 3080", "rtx-3080"),
    ("NVIDIA GeForce RTX 3080 Ti", None), ("NVIDIA GeForce RTX 3060", "rtx-3060"), ("NVIDIA GeForce RTX 3060 Ti", None),
    ("NVIDIA GeForce RTX 5080", "rtx-5080"), ("NVIDIA GeForce RTX 5070 Ti", "rtx-5070-ti"),
    ("AMD Instinct MI355X", "mi355x"),
])
def test_device_names(device_name, key):
    assert match_device_name(device_name) == key


def test_the_gpus_command_lists_them(cli):
    code, out, err = cli("gpus", "--format", "json")
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)["gpus"]}
    assert {"a10g", "t4", "v100-16gb", "v100-32gb", "rtx-5080", "mi355x"} <= set(rows) <= set(CATALOG)
    assert rows["t4"]["driver_gib"] == 14.74 and rows["t4"]["cuda_capability"] == "7.5"
    assert rows["rtx-4080-super"]["driver_gib"] is None


def _notes(cli, *args):
    code, out, err = cli("estimate", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_vllm_requests_the_a10g_driver_total(cli):
    # 0.34 requests the driver total x 1.0 under the extensible KV cache: "requested 21.99 GiB x 1 = 21.99 GiB";
    # 0.33 x 0.92 (config/cache.py): 23,611,582,709 x 0.92 = 21,722,656,092 B = 20.2308 GiB -> 20.23
    data = _notes(cli, "llama-3.1-8b", "--gpu", "a10g", "--engine", "vllm")
    assert data["capacity"]["gpu_memory_bytes"] == 23_611_582_709
    assert "requested 21.99 GiB x 1 = 21.99 GiB" in " ".join(data["engine"]["notes"])
    data = _notes(cli, "llama-3.1-8b", "--gpu", "a10g", "--engine", "vllm@0.33")
    assert "requested 21.99 GiB x 0.92 = 20.23 GiB" in " ".join(data["engine"]["notes"])


def test_vllm_034_serves_a_bf16_checkpoint_in_float16_on_a_t4(cli):
    # platforms/cuda.py supported_dtypes below SM 8.0: [float16, float32]; _resolve_auto_dtype falls back to
    # float16, 2 B an element as bf16: the page is unchanged. Attention is TRITON_ATTN (FLASH_ATTN and FLASHINFER
    # need SM 8.0 in 0.34), MultipleOf(16) keeps the default block, 64
    data = _notes(cli, "phi-3-mini-4k", "--gpu", "t4", "--engine", "vllm")
    notes = " ".join(data["engine"]["notes"])
    assert "SM 7.5 card serves this bfloat16 checkpoint in float16" in notes and "no kernels" not in notes
    assert data["engine"]["block_size"] == 64
    # Phi-3-mini: 32 layers x 32 KV heads x 96 x 2 (K, V) x 2 B = 393,216 B a token
    assert data["bytes_per_token"] == 393_216


def test_vllm_034_wheel_has_no_volta_kernels(cli):
    # CMakeLists.txt: CUDA >= 12.8 lists CUDA_SUPPORTED_ARCHS from 7.5; the 0.34.0 wheel is a cu13 build
    notes = " ".join(_notes(cli, "llama-3.1-8b", "--gpu", "v100-32gb", "--engine", "vllm")["engine"]["notes"])
    assert "no kernels for this SM 7.0 card" in notes


def test_vllm_034_refusals_on_a_t4(cli):
    # TritonAttentionImpl: an fp8 KV cache needs SM 8.9
    code, _, err = cli("estimate", "phi-3-mini-4k", "--gpu", "t4", "--engine", "vllm", "--kv-dtype", "fp8")
    assert code != 0 and "refuses --kv-cache-dtype fp8 on an SM 7.5 card" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    # gemma3_text: float16 refused (_FLOAT16_NOT_SUPPORTED_MODELS), bf16 unsupported: float32, not modelled
    code, _, err = cli("estimate", "gemma-3-1b", "--gpu", "t4", "--engine", "vllm")
    assert code != 0 and "serves gemma3_text on an SM 7.5 card in float32" in err
    # an L4 (SM 8.9) keeps bf16 and takes the fp8 KV cache: no such rule applies
    data = _notes(cli, "phi-3-mini-4k", "--gpu", "l4", "--engine", "vllm", "--kv-dtype", "fp8")
    assert not any("SM 8.9 card" in n for n in data["engine"]["notes"])


def test_vllm_034_refuses_an_fp8_mla_cache_on_a_v100(cli):
    # platforms/cuda.py _get_backend_priorities for MLA: FLASH_ATTN_MLA (SM 9 only), FLASHMLA (SM 9 / 10),
    # FLASHINFER_MLA (SM 10), TRITON_MLA: below SM 9 only TRITON_MLA runs, and mla/triton_mla.py TritonMLAImpl
    # refuses an fp8 KV cache below SM 8.9 ("native FP8 (fp8e4nv) requires SM89+")
    code, _, err = cli("estimate", "deepseek-v2-lite", "--gpu", "v100-32gb", "--tp", "2", "--engine", "vllm",
                       "--kv-dtype", "fp8")
    assert code != 0 and "refuses --kv-cache-dtype fp8 on an SM 7.0 card" in err and "triton_mla.py" in err
    assert len(err.strip().splitlines()) == 1
    # the default KV dtype (auto: float16 there) still plans
    code, _, err = cli("estimate", "deepseek-v2-lite", "--gpu", "v100-32gb", "--tp", "2", "--engine", "vllm")
    assert code == 0, err


def test_older_releases_say_the_rule_was_not_read(cli):
    notes = " ".join(_notes(cli, "phi-3-mini-4k", "--gpu", "t4", "--engine", "vllm@0.33")["engine"]["notes"])
    assert "kvplan read vLLM's rules for cards below SM 8.0 in 0.34.0 only" in notes


def _awq_config(tmp_path):
    """Phi-3-mini's shape with an AWQ int4 quantization_config (vLLM 0.34: auto_awq.py AutoAWQConfig claims
    quant_method "awq", get_min_capability 75)."""
    from kvplan.sources import bundled_config, bundled_index

    raw = dict(bundled_config(bundled_index()["phi-3-mini-4k"]))
    raw["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
                                  "version": "gemm"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    return str(path)


@pytest.mark.parametrize("args, refused", [
    # gpt-oss's mxfp4: GptOssMxfp4Config (mxfp4.py Mxfp4Config.get_min_capability 80) > the T4's 75
    (("gpt-oss-20b", "--gpu", "t4", "--weights", "10GiB"), "the gpt_oss_mxfp4 quantization on an SM 7.5 card: "
     "'Minimum capability: 80. Current capability: 75'"),
    # --quantization experts_int8: ExpertsInt8Config 80 > 75
    (("lfm2-8b-a1b", "--gpu", "t4", "--quantization", "experts_int8"), "Minimum capability: 80. Current capability: 75"),
    # --quantization fp8 on a V100: Fp8Config 75 > 70
    (("phi-3-mini-4k", "--gpu", "v100-32gb", "--quantization", "fp8"), "the fp8 quantization on an SM 7.0 card: "
     "'Minimum capability: 75. Current capability: 70'"),
    # ... and on a T4 it starts: 75 = 75
    (("phi-3-mini-4k", "--gpu", "t4", "--quantization", "fp8"), None),
    # experts_int8 on an A10G (SM 8.6): 86 >= 80
    (("lfm2-8b-a1b", "--gpu", "a10g", "--quantization", "experts_int8"), None),
])
def test_vllm_034_refuses_a_quantization_above_the_cards_capability(cli, args, refused):
    code, out, err = cli("estimate", *args, "--engine", "vllm", "--format", "json")
    if refused is None:
        assert code == 0, err
        return
    assert code != 0 and refused in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_awq_checkpoint_starts_on_a_t4_not_on_a_v100(cli, tmp_path):
    config = _awq_config(tmp_path)
    code, _, err = cli("estimate", config, "--gpu", "t4", "--engine", "vllm", "--format", "json")
    assert code == 0, err
    code, _, err = cli("estimate", config, "--gpu", "v100-32gb", "--engine", "vllm")
    assert code != 0 and "the auto_awq quantization on an SM 7.0 card: 'Minimum capability: 75. Current " \
        "capability: 70'" in err


def test_fit_does_not_offer_a_card_the_engine_refuses_as_the_closest(cli):
    # Qwen3-8B at 128k x 64 on at most 2 T4s meets nothing. vLLM 0.34 refuses an fp8 KV cache below SM 8.9
    # (TritonAttentionImpl), so the closest candidate is a bf16 one (served as float16 there), never fp8
    code, _, err = cli("fit", "qwen3-8b", "--gpu", "t4", "--engine", "vllm", "-c", "128k", "-n", "64", "--max-gpus", "2")
    assert code != 0 and "closest:" in err and "kv bf16 (served as float16)" in err and "fp8" not in err


def test_fit_says_when_every_candidate_is_on_a_refused_card(cli):
    # gemma3_text is served in float32 below SM 8.0 (not modelled, refused) whatever the split or KV dtype
    code, _, err = cli("fit", "gemma-3-4b", "-c", "8k", "-n", "4", "--gpu", "t4", "--engine", "vllm")
    assert code != 0 and "are on cards vLLM refuses for this model" in err and "gemma3_text" in err
    assert len(err.strip().splitlines()) == 1


def test_fit_explain_counts_the_refused_cards(cli):
    # objective cost, one L4 ($0.78 an hour) wins; the T4s cheaper than it at $0.30 each: 1 GPU (tp 1) and 2 GPUs
    # (tp 2, or pp 2) = 3 splits x 2 KV dtypes (bf16, fp8_e4m3) = 6, all refused on the card
    code, out, err = cli("fit", "gemma-3-4b", "-c", "8k", "-n", "4", "--gpu", "t4,l4", "--engine", "vllm", "--explain",
                         "--price", "t4=0.3", "--objective", "cost", "--format", "json")
    assert code == 0, err
    explain = json.loads(out)["explain"]
    assert explain["by_constraint"] == {"engine refuses the card": 6}


@pytest.mark.parametrize("args, refused", [
    # gemma-3-27b's 27B weights do not fit 4 T4s either, but more GPUs cannot cure vLLM's refusal of gemma3_text
    # below SM 8.0 (float32 only there): the refusal comes first
    (("gemma-3-27b", "--tp", "4", "--engine", "vllm"), "serves gemma3_text on an SM 7.5 card in float32"),
    # gpt-oss-20b's 12.82 GiB + the 2 GiB reserve exceed the T4's 14.74 GiB; Mxfp4Config's 80 is the answer
    (("gpt-oss-20b", "--engine", "vllm"), "the gpt_oss_mxfp4 quantization on an SM 7.5 card"),
    # SGLang 0.5.23's Mxfp4Config: 80 too (sglang_sm7)
    (("gpt-oss-20b", "--engine", "sglang"), "the mxfp4 quantization on an SM 7.5 card"),
])
def test_the_engines_card_refusal_comes_before_does_not_fit(cli, args, refused):
    code, _, err = cli("estimate", args[0], "--gpu", "t4", *args[1:])
    assert code != 0 and refused in err and "does not fit" not in err and len(err.strip().splitlines()) == 1
