"""The cards added to the GPU catalog in Dec 2026 (kvplan/capacity/gpus.py CATALOG): each driver total against the
public log it was read from, the datasheet figures, and plans sized from the driver total, worked by hand.

A driver total is printed to 0.01 GiB; the catalog holds int(GiB x 2**30) bytes, the figure a log's own
arithmetic uses (GiB = 2**30 B).
"""

from __future__ import annotations

import json

import pytest

from kvplan.capacity.gpus import CATALOG, lookup, match_device_name

GIB = 2**30

NEW = ("rtx-a6000", "rtx-6000-ada", "l40", "l20", "h100-nvl", "h20", "h800", "a800-80gb", "gh200", "gh200-144g",
       "mi325x")


@pytest.mark.parametrize("gpu, driver_gib, total, smi_mib", [
    # RTX A6000: vLLM #1201 prints "(GPU 0; 47.54 GiB total capacity; ...)" beside nvidia-smi's "NVIDIA RTX A6000 ...
    # 13936MiB / 49140MiB" (ECC Off); vLLM #4417 (8 x RTX A6000) "GPU 0 has a total capacity of 47.54 GiB".
    # 47 x 2**30 = 50,465,865,728 + 0.54 x 2**30 = 579,820,584.96 -> 51,045,686,312 B
    ("rtx-a6000", 47.54, 51_045_686_312, 49140),
    # RTX 6000 Ada: MTVCrafter #21 "total capacity of 44.43 GiB", nvidia-smi "NVIDIA RTX 6000 Ada Gene... 46068MiB"
    # (ECC on). 44 x 2**30 = 47,244,640,256 + 461,708,984.32 -> 47,706,349,240 B
    ("rtx-6000-ada", 44.43, 47_706_349_240, 46068),
    # L40: Qwen3-VL #2097 "GPU 0 has a total capacity of 44.40 GiB"; lmdeploy #1459 "L40 but only 46068MiB is
    # shown". 47,244,640,256 + 429,496,729.6 -> 47,674,136,985 B
    ("l40", 44.40, 47_674_136_985, 46068),
    # H100 NVL: "H100 NVL, 93.10 GiB" (a research log on one) and vLLM #34877 "NVIDIA H100 94GB (93.10 GiB)";
    # nvidia-smi "NVIDIA H100 NVL ... 95830MiB" in public tables. 93 x 2**30 = 99,857,989,632 + 107,374,182.4
    # -> 99,965,363,814 B
    ("h100-nvl", 93.10, 99_965_363_814, 95830),
    # H20: sglang #10736 on a single H20 "GPU 0 has a total capacity of 95.08 GiB"; nvidia-smi "NVIDIA H20 ...
    # 97871MiB". 95 x 2**30 = 102,005,473,280 + 85,899,345.92 -> 102,091,372,625 B
    ("h20", 95.08, 102_091_372_625, 97871),
    # GH200 (96 GB): NVIDIA's blog on a GH200 "GPU 0 has a total capacity of 95.00 GiB", nvidia-smi 97.871 GB of
    # memory ("NVIDIA GH200 480GB ... 97871MiB" in public tables). 95 x 2**30 = 102,005,473,280 B
    ("gh200", 95.00, 102_005_473_280, 97871),
    # A800: PB-LLM #3 (A800-80G) and Kimi-VL #51 (8 x A800) "total capac(i)ty of 79.33 GiB"; nvidia-smi
    # "NVIDIA A800-SXM4-80GB ... 81920MiB" (dexbotic #41). 79 x 2**30 = 84,825,604,096 + 354,334,801.92
    # -> 85,179,938,897 B
    ("a800-80gb", 79.33, 85_179_938_897, 81920),
    # H100 PCIe: torch's device properties on one print "total_memory=81008MB" (torch 2.0.1, an older driver):
    # 81,008 MiB / 1,024 = 79.109 GiB, which vLLM prints as 79.11; nvidia-smi "NVIDIA H100 PCIe ... 81559MiB".
    # 79 x 2**30 = 84,825,604,096 + 0.11 x 2**30 = 118,111,600.64 -> 84,943,715,696 B
    ("h100-pcie", 79.11, 84_943_715_696, 81559),
    # MI325X: vLLM #41962 "AMD MI325X x 8 (255.98 GiB HBM each)", "HIP out of memory ... total capacity of 255.98
    # GiB". 255 x 2**30 = 273,804,165,120 + 1,052,266,987.52 -> 274,856,432,107 B (ROCm: no nvidia-smi figure)
    ("mi325x", 255.98, 274_856_432_107, None),
])
def test_sourced_driver_totals_of_the_new_cards(gpu, driver_gib, total, smi_mib):
    card = lookup(gpu)
    assert card.driver_bytes == int(driver_gib * GIB) == total and card.usable_bytes == total
    assert card.smi_mib == smi_mib
    assert f"{driver_gib:.2f}" in card.driver_from


@pytest.mark.parametrize("gpu, smi_mib", [
    # no public log tied to the card was found printing torch's total: the plan uses the datasheet's GiB, and
    # nvidia-smi's figure (which SGLang sizes from) is kept where public tables print it
    ("h800", 81559),  # "NVIDIA H800 ... 56073MiB / 81559MiB" (an 8 x H800 nvidia-smi table)
    ("l20", 46068),  # "NVIDIA L20 ... 3MiB / 46068MiB" (ECC on)
    ("gh200-144g", None),
])
def test_cards_without_a_driver_total_keep_the_datasheet(gpu, smi_mib):
    card = lookup(gpu)
    assert card.driver_bytes is None and card.usable_bytes == card.memory_bytes and card.driver_from == ""
    assert card.smi_mib == smi_mib


@pytest.mark.parametrize("gpu, memory_gib, hbm_gbps, link_gbps, bf16", [
    ("rtx-a6000", 48, 768, 32, 154.8),  # RTX A6000 datasheet: 309.7 sparse tensor TFLOPS / 2
    ("rtx-6000-ada", 48, 960, 32, 364.2),  # 1,457 FP8 sparse TFLOPS / 2 (sparsity) / 2 (FP8 -> bf16) = 364.25
    ("l40", 48, 864, 32, 181.05),  # L40 datasheet: BF16 181.05 dense (362.1 sparse)
    ("l20", 48, 864, 32, 118.7),  # 368 tensor cores x 128 FLOP/clock (the L40's 181.05 / (568 x 2.49 GHz)) x 2.52 GHz
    ("h100-nvl", 94, 3900, 64, 835.5),  # 1,671 sparse BF16 TFLOPS / 2
    ("h20", 96, 4000, 64, 148),  # dense FP16/BF16
    ("h800", 80, 3350, 64, 989),  # the H100 SXM's figures
    ("a800-80gb", 80, 2039, 32, 312),  # the A100 80GB's figures
    ("gh200", 96, 4000, 450, 989),  # NVLink-C2C 900 GB/s both ways: 450 one direction
    ("gh200-144g", 144, 4900, 450, 989),
    ("mi325x", 256, 6000, 64, 1307.4),  # 2,614.9 with sparsity / 2
])
def test_datasheet_figures(gpu, memory_gib, hbm_gbps, link_gbps, bf16):
    card = lookup(gpu)
    assert card.memory_bytes == memory_gib * GIB
    assert (card.hbm_gbps, card.link_gbps, card.bf16_tflops) == (hbm_gbps, link_gbps, bf16)


def test_driver_totals_and_the_logs_own_products():
    # The H100 PCIe's torch properties give MiB, floored: [81,008, 81,009) MiB = [79.1094, 79.1104) GiB, which the
    # two-decimal 79.11 lies in.
    assert 81_008 * 2**20 <= lookup("h100-pcie").driver_bytes < 81_009 * 2**20
    # The H20's figure is driver-dependent: an older driver's torch properties print total_memory=97285MB
    # (95.005 GiB), sglang #10736 prints 95.08; the catalog keeps the newer one, 0.08 GiB (0.08%) more.
    assert 0.07 * GIB < lookup("h20").driver_bytes - 97_285 * 2**20 < 0.08 * GIB
    # The A800 start on vLLM 0.8.2 (LLaMA-Factory write-up, 4 x A800) prints "total_gpu_memory (79.33GiB) x
    # gpu_memory_utilization (0.90) = 71.39GiB". 79.33 x 0.9 = 71.397 would print 71.40, so the card's total lies in
    # [79.325, 71.395 / 0.9 = 79.3278) GiB: the printed 79.33 is up to 0.005 GiB (0.006%) high, as the MI300X's is.
    assert round(lookup("a800-80gb").driver_bytes * 0.9 / GIB, 2) == 71.40
    assert 79.325 <= 71.395 / 0.9 < lookup("a800-80gb").driver_bytes / GIB < 79.335


def test_driver_totals_sit_where_the_memory_kind_puts_them():
    # HBM cards report about 1% under the datasheet's GiB, GDDR6 with ECC on about 7.5% (the L40S's 44.42 of 48),
    # GDDR6 with ECC off about 1% (the RTX A6000's 47.54 of 48: 99.0%); the ROCm cards 0.02 GiB under
    for gpu in ("h100-pcie", "h100-nvl", "h20", "gh200", "a800-80gb"):
        assert 0.985 < lookup(gpu).driver_bytes / lookup(gpu).memory_bytes < 0.995
    for gpu in ("l40", "rtx-6000-ada"):
        assert 0.92 < lookup(gpu).driver_bytes / lookup(gpu).memory_bytes < 0.93
    assert 0.985 < lookup("rtx-a6000").driver_bytes / lookup("rtx-a6000").memory_bytes < 0.995
    assert lookup("mi325x").memory_bytes - lookup("mi325x").driver_bytes < 0.021 * GIB


@pytest.mark.parametrize("alias, key", [
    ("a6000", "rtx-a6000"), ("RTX A6000", "rtx-a6000"), ("rtx_6000_ada", "rtx-6000-ada"), ("6000ada", "rtx-6000-ada"),
    ("h100nvl", "h100-nvl"), ("H100 NVL", "h100-nvl"), ("a800", "a800-80gb"), ("gh200-96gb", "gh200"),
    ("gh200-144gb", "gh200-144g"), ("MI325X", "mi325x"),
])
def test_aliases(alias, key):
    assert lookup(alias).name == key


@pytest.mark.parametrize("device_name, key", [
    ("NVIDIA H100 NVL", "h100-nvl"),
    ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # ties go to catalog order: the SXM card stays first
    ("NVIDIA H20", "h20"),
    ("NVIDIA H800", "h800"),
    ("NVIDIA A800-SXM4-80GB", "a800-80gb"),
    ("NVIDIA GH200 480GB", "gh200"),  # the 96 GB HBM3 superchip (480 GB of LPDDR5X on the Grace side)
    ("NVIDIA GH200 144G HBM3e", "gh200-144g"),
    ("NVIDIA L40", "l40"),
    ("NVIDIA L40S", "l40s"),
    ("NVIDIA L20", "l20"),
    ("AMD Instinct MI325X", "mi325x"),
    ("NVIDIA GeForce RTX 5090 D v2", None),  # 24 GB on 384 bits (Tom's Hardware, 2025-08-12), not the 5090's 32
    # a stated size is the card's memory where a card of the name has it: 94 GB is no 80 GB SXM card; the NVL's
    # 95,830 MiB is what the H100 SXM5 94GB (nvidia-smi: "NVIDIA H100 94GB") has too
    ("NVIDIA H100 94GB", "h100-nvl"),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("Tesla V100-SXM2-16GB", "v100-16gb"),
])
def test_new_device_names(device_name, key):
    assert match_device_name(device_name) == key


def test_rtx_a6000_plan_from_the_driver_total(cli):
    # int(47.54 GiB) = 51,045,686,312 B x 0.9 = 45,941,117,680.8 -> 45,941,117,680 B; minus Llama-3.1-8B's
    # 16,060,522,496 B of weights and the 2 GiB reserve (2,147,483,648 B): 27,733,111,536 B. Per token
    # 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B: 27,733,111,536 / 131,072 = 211,586.3 -> 211,586 tokens.
    # From the datasheet's 48 GiB it would be 28,177,640,652 B (+1.6%).
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "a6000", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["capacity"]["gpu_memory_bytes"] == 51_045_686_312
    assert data["capacity"]["gpu_memory_from"] == "driver"
    assert data["bytes_per_token"] == 131_072
    assert data["pool_bytes"] == 27_733_111_536
    assert data["pool_tokens"] == 211_586


def test_vllm_requests_the_h100_nvl_driver_total(cli):
    # vLLM's request is the driver total x utilization (0.33: 0.92 by default, config/cache.py):
    # 99,965,363,814 B x 0.92 = 91,968,134,708.9 B = 85.652 GiB -> "requested 93.10 GiB x 0.92 = 85.65 GiB"
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100-nvl", "--engine", "vllm@0.33", "--format", "json")
    assert code == 0, err
    notes = " ".join(json.loads(out)["engine"]["notes"])
    assert "requested 93.10 GiB x 0.92 = 85.65 GiB" in notes
    # 0.34 requests ceil(total x 1.0) under its extensible KV cache (v1/worker/utils.py request_memory)
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "h100-nvl", "--engine", "vllm@0.34", "--format", "json")
    assert code == 0, err
    assert "requested 93.10 GiB x 1 = 93.10 GiB" in " ".join(json.loads(out)["engine"]["notes"])


def test_vllm_batched_token_default_follows_the_device_name():
    # vLLM 0.33 engine/arg_utils.py get_batch_defaults: at >= 70 GiB a device whose name holds "a100" keeps the
    # small tier (2,048 for `vllm serve`), others get 8,192. The A800 reports "NVIDIA A800-SXM4-80GB": no "a100" in
    # it, so vLLM gives it the H100 tier; the GH200 (95 GiB) and H20 too; the L40 (48 GB) stays at 2,048, and the
    # MI325X (>= 160 GiB) gets 16,384.
    from kvplan.engines.vllm import default_max_num_batched_tokens

    assert default_max_num_batched_tokens(lookup("a100-80gb")) == 2048
    assert default_max_num_batched_tokens(lookup("a800-80gb")) == 8192
    assert default_max_num_batched_tokens(lookup("gh200")) == 8192
    assert default_max_num_batched_tokens(lookup("h20")) == 8192
    assert default_max_num_batched_tokens(lookup("l40")) == 2048
    assert default_max_num_batched_tokens(lookup("mi325x")) == 16384


def test_gpus_command_lists_the_new_cards(cli):
    code, out, err = cli("gpus", "--format", "json")
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)["gpus"]}
    assert set(NEW) <= set(rows) and set(NEW) <= set(CATALOG)
    assert rows["rtx-a6000"]["driver_gib"] == 47.54 and rows["mi325x"]["driver_gib"] == 255.98
    assert rows["l20"]["driver_gib"] is None and rows["h800"]["driver_gib"] is None
    code, out, err = cli("gpus", "--format", "csv")
    assert code == 0 and "h100-nvl,94.0,93.1,3900.0,64.0,835.5," in out


# NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus): Hopper 9.0, B200 10.0, B300 10.3 (public nvidia-smi
# rows print "NVIDIA B300 SXM6 AC, 275040 MiB, 10.3"), RTX PRO 6000 Blackwell and RTX 5090 12.0,
# A100 / A800 (GA100) 8.0, GA102 cards (A40, A10, RTX A5000 / A6000, RTX 3090) 8.6, Ada cards 8.9
CAPABILITY = {
    "h100-sxm": (9, 0), "h100-pcie": (9, 0), "h100-nvl": (9, 0), "h800": (9, 0), "h20": (9, 0), "gh200": (9, 0),
    "gh200-144g": (9, 0), "h200": (9, 0), "b200": (10, 0), "a100-40gb": (8, 0), "a100-80gb": (8, 0),
    "a800-80gb": (8, 0), "l40s": (8, 9), "l40": (8, 9), "l20": (8, 9), "l4": (8, 9), "a40": (8, 6),
    "rtx-a5000": (8, 6), "rtx-a6000": (8, 6), "rtx-6000-ada": (8, 9), "rtx-4090": (8, 9), "a10": (8, 6),
    "rtx-3090": (8, 6), "rtx-pro-6000": (12, 0), "mi300x": None, "mi325x": None, "b300": (10, 3),
    "rtx-5090": (12, 0),
    # added with their cards (tests/test_gpus_old_cards.py): T4 (TU104) 7.5, V100 (GV100) 7.0, A10G and RTX 3080 /
    # 3060 (GA10x) 8.6, RTX 4080 / 4080 SUPER / 4070 Ti SUPER (AD10x) 8.9, RTX 5080 / 5070 Ti (GB20x) 12.0
    "a10g": (8, 6), "t4": (7, 5), "v100-16gb": (7, 0), "v100-32gb": (7, 0), "rtx-4080": (8, 9),
    "rtx-4080-super": (8, 9), "rtx-4070-ti-super": (8, 9), "rtx-3080": (8, 6), "rtx-3060": (8, 6),
    "rtx-5080": (12, 0), "rtx-5070-ti": (12, 0), "mi355x": None,
}


def test_every_card_has_its_compute_capability_in_the_catalog():
    assert {name: g.cuda_capability for name, g in CATALOG.items()} == CAPABILITY


def test_the_engine_rules_read_the_capability_of_every_catalog_card():
    # vLLM 0.34's MXFP4 MoE: Marlin below SM 9, the bundled triton_kernels on Hopper (scales freed from 0.25);
    # before, only ten catalog cards had a capability and the others (A40, H20, H800, GH200, ...) fell back to the
    # checkpoint's layout
    from kvplan.engines.sglang_rules import SM10_GPUS
    from kvplan.engines.vllm_cudagraph import SM100_FAMILY
    from kvplan.weights.vllm_mxfp4 import backend

    for name in ("a40", "a10", "rtx-3090", "rtx-a5000", "rtx-a6000", "l40", "l20", "rtx-6000-ada", "a800-80gb"):
        assert backend((0, 34, 0), name) == "marlin", name
    for name in ("h20", "h800", "h100-nvl", "gh200", "gh200-144g"):
        assert backend((0, 34, 0), name) == "triton-freed", name
    assert backend((0, 34, 0), "mi325x") is None
    assert SM10_GPUS == {"b200", "b300", "rtx-pro-6000", "rtx-5090", "rtx-5080", "rtx-5070-ti"}
    assert SM100_FAMILY == {"b200", "b300"}


def test_gpt_oss_on_an_a40_is_held_in_marlins_layout(cli):
    # the A40 (SM 8.6) runs vLLM's Marlin MXFP4 path, as the L40S (SM 8.9) does: the same weights a GPU, not the
    # checkpoint's 13,761,264,768 B
    weights = {}
    for gpu in ("a40", "l40s"):
        code, out, err = cli("estimate", "gpt-oss-20b", "--gpu", gpu, "--engine", "vllm", "-c", "32k", "-f", "json")
        assert code == 0, err
        weights[gpu] = json.loads(out)["engine"]["profile"]["weight_bytes"]
    assert weights["a40"] == weights["l40s"]
    assert weights["a40"] > 13_761_264_768


def test_deepseek_v41_plans_on_an_h20_as_on_an_h100(cli):
    # the H20 is a Hopper card (SM 9.0): vLLM's DeepSeek-V4.1 layout is the H100's (it was refused as a card of
    # unknown capability)
    got = []
    for gpu in ("h20", "h100"):
        code, out, err = cli("estimate", "deepseek-v4.1-flash", "--gpu", gpu, "--tp", "8", "--engine", "vllm",
                             "--kv-memory", "40GiB", "-c", "64k", "-f", "json")
        assert code == 0, err
        got.append(json.loads(out)["engine"]["num_blocks"])
    assert got[0] == got[1] > 0


def test_pcie_only_cards_take_the_pcie_tp_term():
    # the L40, L20, A10 and RTX 6000 Ada have no NVLink (datasheets); TP 2 adds the PCIe-only non-torch figure
    from kvplan.engines.vllm_non_torch import NON_TORCH_TP_BYTES_PCIE, tp_non_torch_bytes

    for name in ("l40", "l20", "a10", "rtx-6000-ada", "l40s"):
        assert tp_non_torch_bytes(2, name, "0.34.0") == NON_TORCH_TP_BYTES_PCIE, name
    assert tp_non_torch_bytes(2, "h100-sxm", "0.34.0") > NON_TORCH_TP_BYTES_PCIE


def test_rtx_5090_plan_from_the_driver_total(cli):
    # int(31.36 GiB) = 33,672,543,600 B x 0.9 = 30,305,289,240 B; minus Llama-3.1-8B's 16,060,522,496 B of weights
    # and the 2 GiB reserve: 12,097,283,096 B; at 131,072 B a token: 92,294.9 -> 92,294 tokens
    code, out, err = cli("estimate", "llama-3.1-8b", "--gpu", "5090", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["capacity"]["gpu_memory_bytes"] == 33_672_543_600
    assert data["pool_tokens"] == 92_294


def test_b300_plans_from_nvidia_smis_total():
    # nvidia-smi's 275040 MiB: 275,040 x 2**20 = 288,400,343,040 B (no torch total is sourced)
    g = lookup("b300")
    assert g.usable_bytes == 275_040 * 2**20 == 288_400_343_040
    assert g.smi_mib == 275_040 and g.hbm_gbps == 8000 and g.bf16_tflops == 2250
    assert match_device_name("NVIDIA B300 SXM6 AC") == "b300"
    assert match_device_name("NVIDIA GeForce RTX 5090") == "rtx-5090"


def test_gpus_table_names_amds_link_as_infinity_fabric():
    # the AMD Instinct MI300X / MI325X join their GPUs with Infinity Fabric (xGMI), not NVLink
    from kvplan.reports.catalogs import gpus_report

    table = gpus_report().tables[0]
    link = table.columns.index("GPU link")
    rows = {row[0]: row[link] for row in table.rows}
    assert rows["mi300x"] == rows["mi325x"] == "Infinity Fabric"
    assert rows["h100-sxm"] == "NVLink" and rows["l40s"] == "PCIe"
