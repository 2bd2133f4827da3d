"""A catalog of accelerators: memory, HBM bandwidth, host link and dense bf16 TFLOP/s.

Figures are datasheet values. Memory is the datasheet capacity read as GiB
(HBM stacks come in binary sizes). The driver reports less than that: about 1%
less on HBM cards, about 7.5% less on GDDR6 cards that run with ECC on (an L40S
reports 44.42 GiB of its 48). Engines size their pools from what the driver
reports (torch.cuda.mem_get_info's total, times --gpu-memory-utilization), so a
card whose total a public log prints carries it in `driver_bytes`, and plans use
that (`usable_bytes`); others fall back to the datasheet figure, and pass
--gpu-memory with the driver's figure for an exact plan. `smi_mib` is
nvidia-smi's memory.total, which SGLang sizes its defaults from. Bandwidths are
decimal GB/s; the host link is one direction of the PCIe slot.
"""

from __future__ import annotations

import difflib
import re

from .._record import record
from ..errors import UsageError
from ..units import GIB


@record
class Gpu:
    name: str
    memory_bytes: int
    hbm_gbps: float
    link_gbps: float
    bf16_tflops: float
    note: str = ""
    driver_bytes: int | None = None  # CUDA's total as a public log prints it; None: not sourced
    driver_from: str = ""  # the log it was read from
    # nvidia-smi's memory.total (MiB) as public nvidia-smi outputs print it, which SGLang sizes its default
    # mem_fraction_static from (utils/common.py get_nvgpu_memory_capacity)
    smi_mib: int | None = None
    # CUDA compute capability (NVIDIA's CUDA GPU list), which picks engines' kernels and layouts; None: not a CUDA
    # card (the AMD Instinct cards run ROCm, whose paths kvplan has not read)
    cuda_capability: tuple[int, int] | None = None
    # no NVLink between the cards in their usual form: NCCL rings over PCIe, and vLLM turns its custom all-reduce
    # off above two such GPUs. Cards whose NVLink bridge is optional and joins pairs only (A40, RTX A5000 / A6000,
    # RTX 3090, H100 PCIe) count as PCIe-only, as cloud instances run them
    pcie_only: bool = False

    @property
    def usable_bytes(self) -> int:
        """What the driver reports as the card's total (what engines multiply by their utilization): the
        sourced figure, else the datasheet capacity."""
        return self.driver_bytes or self.memory_bytes


def _gpu(name, memory_gib, hbm, link, tflops, note="", driver_gib=None, driver_from="", smi_mib=None, *, cap=None,
         pcie_only=False):
    # a driver total is printed to 0.01 GiB; int(x * GIB) is the figure a log's own arithmetic uses
    return Gpu(name, int(memory_gib * GIB), float(hbm), float(link), float(tflops), note,
               int(driver_gib * GIB) if driver_gib else None, driver_from, smi_mib, cap, pcie_only)


CATALOG = {
    g.name: g
    for g in (
        _gpu("h100-sxm", 80, 3350, 64, 989, "H100 SXM5 80GB, PCIe Gen5 host link", 79.18,
             "llm-d-benchmark H100 logs: 'Free memory on device (78.57/79.18 GiB)'", 81559, cap=(9, 0)),
        # H100 PCIe: torch's device properties on one print total_memory=81008MB (MiB, floored: 79.109-79.110 GiB,
        # which vLLM prints as 79.11). That log is torch 2.0.1 on an older driver: H100 SXM cards print 79.11 on
        # driver 535 (vLLM #27508) and 79.18 on newer ones, so a PCIe card on a current driver may report up to
        # ~0.07 GiB more. nvidia-smi prints 81559 MiB, as for the SXM card (public nvidia-smi tables of the PCIe card)
        _gpu("h100-pcie", 80, 2000, 64, 756, "H100 PCIe 80GB", 79.11,
             "torch.cuda.get_device_properties on an H100 PCIe (torch 2.0.1): 'total_memory=81008MB' = 79.11 GiB "
             "(code-index file id 33356850601; an older driver: the SXM card prints 79.11 on driver 535, 79.18 on "
             "newer ones)", 81559, cap=(9, 0), pcie_only=True),
        # H100 NVL datasheet (per GPU): 94 GB HBM3 at 3.9 TB/s, PCIe Gen5 x16; NVIDIA quotes 1,671 BF16 tensor TFLOPS
        # with sparsity, so dense bf16 is 1,671 / 2 = 835.5. vLLM #34877's "NVIDIA H100 94GB" may be an H100 SXM5 94GB
        # (nvidia-smi's name for that card, _SHARED_SIZES): the same 95,830 MiB, so its 93.10 GiB agrees either way
        _gpu("h100-nvl", 94, 3900, 64, 835.5, "H100 NVL 94GB HBM3 (PCIe); bf16 derived from 1,671 sparse TFLOPS", 93.10,
             "torch's total on H100 NVLs: 'H100 NVL, 93.10 GiB' in a 2026 research log on one (code-index file id "
             "68399705480) and vLLM issue #34877's 'NVIDIA H100 94GB (93.10 GiB)'; an older driver printed 93.11 "
             "(ESMFold on Lambda's H100 NVL, id 53789465788)", 95830, cap=(9, 0)),
        # H800 SXM: the H100 SXM's die and memory (80 GB HBM3, 3.35 TB/s, 989 dense bf16 TFLOPS) with NVLink cut to
        # 400 GB/s; nvidia-smi prints the H100's 81559 MiB (a public 8 x H800 nvidia-smi table), but no public log
        # found prints torch's two-decimal total, so the plan uses the datasheet's 80
        _gpu("h800", 80, 3350, 64, 989, "H800 SXM 80GB HBM3 (export H100, NVLink 400 GB/s)", smi_mib=81559, cap=(9, 0)),
        # H20 (the 96 GB card): 96 GB HBM3 at 4.0 TB/s, PCIe Gen5 x16, 148 dense FP16/BF16 tensor TFLOPS (NVIDIA's
        # H20 spec sheet; 296 with FP8). A 141 GB HBM3e H20 also exists (nvidia-smi 143771 MiB): not this row
        _gpu("h20", 96, 4000, 64, 148, "H20 96GB HBM3 (export Hopper, 78 SMs)", 95.08,
             "sglang issue #10736 on a single H20: 'GPU 0 has a total capacity of 95.08 GiB' (an older driver's "
             "torch.cuda.get_device_properties prints total_memory=97285MB, 95.00 GiB: code-index file id "
             "15982154570)", 97871, cap=(9, 0)),
        # GH200 Grace Hopper datasheet: 96 GB HBM3 at 4 TB/s (or 144 GB HBM3e at 4.9 TB/s), 1,979 BF16 TFLOPS with
        # sparsity (989 dense), and the host link is NVLink-C2C, 900 GB/s both ways: 450 one direction
        _gpu("gh200", 96, 4000, 450, 989, "GH200 96GB HBM3 (NVLink-C2C 900 GB/s to Grace)", 95.00,
             "NVIDIA's blog 'Accelerate Large-Scale LLM Inference and KV Cache Offload with CPU-GPU Memory Sharing' "
             "(2025-09-05), on a GH200: 'GPU 0 has a total capacity of 95.00 GiB' (nvidia-smi 97.871 GB)", 97871, cap=(9, 0)),
        _gpu("gh200-144g", 144, 4900, 450, 989,
             "GH200 144G HBM3e (NVLink-C2C 900 GB/s to Grace); no public log of its driver total was found", cap=(9, 0)),
        _gpu("h200", 141, 4800, 64, 989, "H200 SXM 141GB HBM3e", 139.81,
             "a vLLM 0.10.2 start on 2 x H200: 'Free memory on device (139.21/139.81 GiB)'", 143771, cap=(9, 0)),
        _gpu("b200", 180, 8000, 64, 2250, "B200 HGX 180GB", 178.36,
             "vLLM PR #21489's B200 start: 'Free memory on device (177.66/178.36 GiB)'", 183359, cap=(10, 0)),
        # B300 (Blackwell Ultra, HGX): 288 GB HBM3e (decimal: nvidia-smi prints 275040 MiB = 268.59 GiB), 8 TB/s,
        # 36 PFLOPS FP16/BF16 with sparsity for 8 GPUs (the HGX B300 table): 2,250 dense a GPU; SM 10.3. The GPU's own
        # link is PCIe Gen6, but it reaches the host through ConnectX-8's switch on Gen5 x86 hosts: 64 GB/s a
        # direction. No public log found prints torch's total, so plans use nvidia-smi's 268.59 GiB, which a B200
        # exceeds its torch total by 0.70 GiB (183359 MiB against 178.36 GiB); NCCL's NVLS buffers are not counted
        _gpu("b300", 275040 / 1024, 8000, 64, 2250,
             "B300 HGX 288GB HBM3e (SM 10.3); memory is nvidia-smi's 275040 MiB, torch reports about 0.7 GiB less",
             smi_mib=275040, cap=(10, 3)),
        _gpu("a100-40gb", 40, 1555, 32, 312, "A100 SXM4 40GB, PCIe Gen4 host link", 39.50,
             "vLLM issue #12330: 'total_gpu_memory (39.50GiB)'", 40960, cap=(8, 0)),
        _gpu("a100-80gb", 80, 2039, 32, 312, "A100 SXM4 80GB", 79.25,
             "a vLLM 0.31.0 start: 'Free memory on device (78.84/79.25 GiB)'", 81920, cap=(8, 0)),
        # A800 SXM4 80GB: the A100 80GB's figures (80 GB HBM2e at 2,039 GB/s, 312 dense bf16 TFLOPS) with NVLink cut
        # to 400 GB/s; nvidia-smi 81920 MiB (dexbotic issue #41's A800-SXM4-80GB table)
        _gpu("a800-80gb", 80, 2039, 32, 312, "A800 SXM4 80GB (export A100, NVLink 400 GB/s)", 79.33,
             "A800 reports print 'GPU 0 has a total capacity of 79.33 GiB': vLLM issue #13067 (8 x A800), PB-LLM "
             "issue #3 (A800-80G) and Kimi-VL issue #51 (8 x A800); a vLLM 0.8.2 start on 4 x A800 prints "
             "'total_gpu_memory (79.33GiB)' (code-index file id 12053131581)", 81920, cap=(8, 0)),
        _gpu("l40s", 48, 864, 32, 362, "L40S 48GB GDDR6 (ECC on)", 44.42,
             "a vLLM 0.10.2 start on 8 x L40S: 'Free memory on device (43.93/44.42 GiB)'", cap=(8, 9), pcie_only=True),
        # L4 driver total: a vLLM 0.29 start on an L4 (nvidia-smi 23034 MiB in the same write-up); an L4 torch
        # OOM prints the same 22.03, while other public L4 logs print 22.04 and vLLM's CI L4s 22.05 (driver versions)
        # L40 datasheet: 48 GB GDDR6 with ECC at 864 GB/s, PCIe Gen4 x16, BF16 tensor 181.05 dense (362.1 sparse)
        _gpu("l40", 48, 864, 32, 181.05, "L40 48GB GDDR6 (ECC on)", 44.40,
             "QwenLM/Qwen3-VL issue #2097, one L40: 'GPU 0 has a total capacity of 44.40 GiB' (the same report is "
             "NVlabs/Eagle issue #68: one source; L40S logs print 44.39-44.42); nvidia-smi 46068 MiB in "
             "InternLM/lmdeploy issue #1459's L40", 46068, cap=(8, 9), pcie_only=True),
        # L20: 48 GB GDDR6 at 864 GB/s, PCIe Gen4 x16 (AD102, 92 SMs, 368 tensor cores, 2,520 MHz boost). No NVIDIA
        # dense bf16 figure was found; derived at the L40's rate per tensor core and clock (181.05 TFLOPS / (568 x
        # 2.49 GHz) = 128 FLOP per clock): 368 x 128 x 2.52 GHz = 118.7. nvidia-smi 46068 MiB (ECC on) in public
        # tables; no public log found prints torch's total, so the plan uses the datasheet's 48
        _gpu("l20", 48, 864, 32, 118.7, "L20 48GB GDDR6 (ECC on); bf16 derived from tensor cores x clock",
             smi_mib=46068, cap=(8, 9), pcie_only=True),
        _gpu("l4", 24, 300, 32, 121, "L4 24GB GDDR6 (ECC on)", 22.03,
             "a vLLM 0.29 start on an L4: 'Free memory on device (21.84/22.03 GiB)' (code-index file id 69494016274; "
             "other L4 logs print 22.04-22.05)", 23034, cap=(8, 9), pcie_only=True),
        # NVIDIA A40 datasheet: 48 GB GDDR6 with ECC at 696 GB/s, PCIe Gen4 x16, 149.7 dense BF16 tensor TFLOPS
        _gpu("a40", 48, 696, 32, 149.7, "A40 48GB GDDR6 (ECC on)", 44.34,
             "two A40 OOM reports print 'GPU 0 has a total capacity of 44.34 GiB': vLLM on RunPod A40s (code-index "
             "file id 19543808360) and TGI on Exoscale's A40 (camptocamp/self-hosted-llm-models-tests README)", 46068, cap=(8, 6), pcie_only=True),
        # RTX A5000 datasheet: 24 GB GDDR6 (ECC off as shipped) at 768 GB/s, PCIe Gen4 x16; NVIDIA quotes 222.2 tensor
        # TFLOPS with sparsity, so dense bf16 is 222.2 / 2 = 111.1 (256 tensor cores x 256 FLOP/clock x 1.695 GHz)
        _gpu("rtx-a5000", 24, 768, 32, 111.1, "RTX A5000 24GB GDDR6 (ECC off); bf16 derived from 222.2 sparse TFLOPS",
             23.67, "torch's total on RTX A5000s: 'Total: 23.67' (code-index file ids 66464995957, 13191757707; one "
             "more report prints 23.68, a 2025 RunPod note 23.57)", 24564, cap=(8, 6), pcie_only=True),
        # RTX A6000 datasheet: 48 GB GDDR6 with ECC (off as shipped) at 768 GB/s, PCIe Gen4 x16; NVIDIA quotes 309.7
        # tensor TFLOPS with sparsity, so dense bf16 is 309.7 / 2 = 154.8 (336 tensor cores x 256 FLOP/clock x 1.8 GHz)
        _gpu("rtx-a6000", 48, 768, 32, 154.8, "RTX A6000 48GB GDDR6 (ECC off); bf16 derived from 309.7 sparse TFLOPS",
             47.54, "vLLM issue #1201 on an RTX A6000 (nvidia-smi 49140MiB, ECC off): '47.54 GiB total capacity'; "
             "vLLM issue #4417 on 8 x RTX A6000: 'GPU 0 has a total capacity of 47.54 GiB'", 49140, cap=(8, 6), pcie_only=True),
        # RTX 6000 Ada datasheet: 48 GB GDDR6 with ECC at 960 GB/s, PCIe Gen4 x16; NVIDIA quotes 1,457 tensor TFLOPS
        # (FP8 with sparsity), so dense bf16 is 1,457 / 2 (sparsity) / 2 (FP8 -> bf16) = 364.2
        _gpu("rtx-6000-ada", 48, 960, 32, 364.2,
             "RTX 6000 Ada 48GB GDDR6 (ECC on as logged); bf16 derived from 1,457 FP8 sparse TFLOPS", 44.43,
             "DINGYANB/MTVCrafter issue #21 on an RTX 6000 Ada (nvidia-smi 46068MiB, ECC on): 'GPU 0 has a total "
             "capacity of 44.43 GiB' (one report; with ECC off the card shows 49140 MiB and reports more)", 46068, cap=(8, 9), pcie_only=True),
        _gpu("rtx-4090", 24, 1008, 32, 165, "GeForce RTX 4090 24GB (bf16 with fp32 accumulate)", 23.99,
             "a vLLM 0.27.1 start on an RTX 4090: 'Free memory on device (22.45/23.99 GiB)'", 24564, cap=(8, 9), pcie_only=True),
        # NVIDIA A10 datasheet: 24 GB GDDR6 at 600 GB/s, PCIe Gen4, 125 dense BF16 tensor TFLOPS
        _gpu("a10", 24, 600, 32, 125, "A10 24GB GDDR6 (ECC on)", 22.18,
             "OpenBMB/MiniCPM-V issue #640, one A10: 'GPU 0 has a total capacity of 22.18 GiB'", cap=(8, 6), pcie_only=True),
        # RTX 5090: 32 GB GDDR7 at 1,792 GB/s, PCIe Gen5 x16, no NVLink; 838.4 FP16 tensor TFLOPS with sparsity and
        # FP16 accumulate, halved for FP32 accumulate on GeForce and halved again for dense: 209.5; SM 12.0
        _gpu("rtx-5090", 32, 1792, 64, 209.5, "GeForce RTX 5090 32GB GDDR7 (bf16 with fp32 accumulate)", 31.36,
             "torch's total on RTX 5090s: '31.36 GiB usable' with get_device_capability() (12, 0) (code-index file id "
             "61228942590) and 'NVIDIA GeForce RTX 5090 (31.36 GiB)' (id 53445870722); other hosts print 31.32-31.35",
             32607, cap=(12, 0), pcie_only=True),
        # GA102 whitepaper: 936 GB/s GDDR6X, 71 dense FP16/BF16 tensor TFLOPS with FP32 accumulate (GeForce rate)
        _gpu("rtx-3090", 24, 936, 32, 71, "GeForce RTX 3090 24GB GDDR6X (bf16 with fp32 accumulate)", 23.58,
             "vLLM issue #10517's RTX 3090 starts: 'total_gpu_memory=23.58GiB'", cap=(8, 6), pcie_only=True),
        # 96 GB GDDR7 at 1,792 GB/s, PCIe Gen5 x16 (NVIDIA's announcement, GTC 2025); NVIDIA quotes 4,000 AI TOPS
        # (FP4 with sparsity), so dense bf16 is derived: 4,000 / 2 (sparsity) / 4 (FP4 -> bf16) = 500
        _gpu("rtx-pro-6000", 96, 1792, 64, 500,
             "RTX PRO 6000 Blackwell 96GB GDDR7 (SM120, no NVLink); bf16 derived from 4,000 FP4 sparse TOPS", 95.01,
             "a vLLM 0.27 runbook on 4 x RTX PRO 6000: 'Free memory on device (94.05/95.01 GiB)' (other public "
             "logs of the card print 94.97)", cap=(12, 0), pcie_only=True),
        # A10G (AWS G5): GA102 with 24 GB GDDR6 (ECC on) at 600 GB/s, PCIe Gen4 x16, 80 SMs at 1.71 GHz. NVIDIA publishes no
        # A10G datasheet; its tensor cores run at the GeForce rate (Baseten's "NVIDIA A10 vs A10G": the A10 leads on
        # tensor compute, the A10G on CUDA cores): dense bf16 derived as 80 SMs x 512 FLOP/clock x 1.71 GHz = 70.0
        _gpu("a10g", 24, 600, 32, 70.0, "A10G 24GB GDDR6 (AWS G5, ECC on); bf16 derived from SMs x clock", 21.99,
             "a vLLM (DJL LMI) OOM on an ml.g5.4xlarge (one A10G): 'GPU 0 has a total capacity of 21.99 GiB' "
             "(code-index file id 45023115869)", cap=(8, 6), pcie_only=True),
        # T4 datasheet: 16 GB GDDR6 (ECC on) at 320 GB/s, PCIe Gen3 x16 (16 GB/s a direction), 65 FP16 tensor TFLOPS
        # (mixed precision); Turing has no bf16, so the rate is fp16's (vLLM serves bf16 checkpoints in float16 there)
        _gpu("t4", 16, 320, 16, 65, "Tesla T4 16GB GDDR6 (ECC on, SM 7.5); fp16 tensor rate, no bf16", 14.74,
             "a vLLM 0.8.2 start on Colab's T4 (compute capability 7.5): 'total_gpu_memory (14.74GiB)' (code-index "
             "file id 7884883735); Kaggle T4 OOMs print 'total capacity of 14.74 GiB' (id 29760867128)", 15360,
             cap=(7, 5), pcie_only=True),
        # V100 SXM2 datasheet: 16 or 32 GB HBM2 at 900 GB/s, 125 tensor TFLOPS (fp16; the PCIe card 112), NVLink 300 GB/s,
        # PCIe Gen3 host link; no bf16 on Volta (SM 7.0)
        _gpu("v100-16gb", 16, 900, 16, 125, "Tesla V100 SXM2 16GB HBM2 (SM 7.0); fp16 tensor rate, no bf16", 15.77,
             "Azure NCv3 (V100 16GB) OOMs: '(GPU 0; 15.77 GiB total capacity; ...)' (code-index file id 7048187110; "
             "an older driver printed 15.78, kchengiva/Shift-GCN issue #34 on a 16G V100)", cap=(7, 0)),
        _gpu("v100-32gb", 32, 900, 16, 125, "Tesla V100 SXM2 32GB HBM2 (SM 7.0); fp16 tensor rate, no bf16", 31.74,
             "a vLLM 0.8.5 start on a V100 (dtype float16): 'total_gpu_memory (31.74GiB)' (code-index file id "
             "33435952071); a Tesla V100-SXM2-32GB OOM prints 'total capacity of 31.74 GiB' (id 56934688327)",
             cap=(7, 0)),
        # Ada whitepaper: RTX 4080 16 GB GDDR6X at 716.8 GB/s, PCIe Gen4 x16, 97.5 dense FP16/BF16 tensor TFLOPS with FP32
        # accumulate. GeForce 16 GB cards report 15.5-16.0 GiB by OS and driver (Windows / WSL2 hosts the most)
        _gpu("rtx-4080", 16, 716.8, 32, 97.5, "GeForce RTX 4080 16GB GDDR6X (bf16 with fp32 accumulate)", 15.99,
             "torch's total on an RTX 4080 (Windows driver 596.49): 'NVIDIA GeForce RTX 4080 (15.992 GiB)' (code-index "
             "file id 60026105091); a Linux host may report less (an RTX 4080 SUPER on Linux prints 15.6 GiB)", 16376,
             cap=(8, 9), pcie_only=True),
        # RTX 4080 SUPER: 80 SMs at 2.55 GHz, 23 Gbps on 256 bits = 736 GB/s; bf16 (FP32 accumulate) at the Ada GeForce
        # 512 FLOP per SM-clock (the 4090's 165.2 / (128 x 2.52 GHz)): 80 x 512 x 2.55 GHz = 104.4
        _gpu("rtx-4080-super", 16, 736, 32, 104.4,
             "GeForce RTX 4080 SUPER 16GB GDDR6X; bf16 derived from SMs x clock; no driver total found: public logs "
             "print 15.6 GiB (Linux, id 70428138726) to 15.99 (Windows, id 52799557589)", smi_mib=16376, cap=(8, 9),
             pcie_only=True),
        # RTX 4070 Ti SUPER: 66 SMs at 2.61 GHz, 21 Gbps on 256 bits = 672 GB/s: 66 x 512 x 2.61 GHz = 88.2
        _gpu("rtx-4070-ti-super", 16, 672, 32, 88.2,
             "GeForce RTX 4070 Ti SUPER 16GB GDDR6X; bf16 derived from SMs x clock; no driver total found (public logs "
             "print 15.56-15.99 with unclear units)", cap=(8, 9), pcie_only=True),
        # GA102 whitepaper: RTX 3080 10 GB GDDR6X at 760 GB/s, 59.5 dense FP16 tensor TFLOPS with FP32 accumulate
        _gpu("rtx-3080", 10, 760, 32, 59.5, "GeForce RTX 3080 10GB GDDR6X (bf16 with fp32 accumulate)", 9.77,
             "an RTX 3080 training OOM: '(GPU 0; 9.77 GiB total capacity; ...)' (code-index file id 12439663263)",
             cap=(8, 6), pcie_only=True),
        # RTX 3060 12 GB: GDDR6 at 360 GB/s (15 Gbps, 192 bits), 28 SMs at 1.777 GHz: 28 x 512 x 1.777 GHz = 25.5
        _gpu("rtx-3060", 12, 360, 32, 25.5, "GeForce RTX 3060 12GB GDDR6; bf16 derived from SMs x clock", 11.63,
             "an RTX 3060 (12 GiB) OOM: 'GPU 0 has a total capacity of 11.63 GiB' (code-index file id 58322896488); "
             "one on a Vast.ai RTX 3060 prints 11.76 (id 57181620855)", cap=(8, 6), pcie_only=True),
        # RTX 5080: 16 GB GDDR7 at 960 GB/s (30 Gbps, 256 bits), PCIe Gen5 x16, 84 SMs at 2.617 GHz; bf16 (FP32 accumulate)
        # at the 5090's 512 FLOP per SM-clock (209.5 / (170 x 2.407 GHz)): 84 x 512 x 2.617 GHz = 112.6; SM 12.0
        _gpu("rtx-5080", 16, 960, 64, 112.6, "GeForce RTX 5080 16GB GDDR7; bf16 derived from SMs x clock", 15.92,
             "vLLM issue #30707 on an RTX 5080 (WSL2, driver 591.44): 'Free memory on device (14.55/15.92 GiB)'",
             cap=(12, 0), pcie_only=True),
        # RTX 5070 Ti: 16 GB GDDR7 at 896 GB/s (28 Gbps, 256 bits), 70 SMs at 2.452 GHz: 70 x 512 x 2.452 GHz = 87.9
        _gpu("rtx-5070-ti", 16, 896, 64, 87.9,
             "GeForce RTX 5070 Ti 16GB GDDR7; bf16 derived from SMs x clock; no driver total found: public logs print "
             "15.47 GiB (Linux, torch 2.13, id 59192148213) to 15.92 (Windows, id 67180222591)", cap=(12, 0),
             pcie_only=True),
        _gpu("mi300x", 192, 5300, 64, 1307, "AMD Instinct MI300X 192GB", 191.98,
             "a vLLM (ROCm) start on 8 x MI300X: 'Free memory on device cuda:N (0.79/191.98 GiB)' (code-index file id "
             "57926334775; a HIP OOM on MI300X prints 'total capacity of 191.98 GiB', id 62923531134)"),
        # MI325X: 256 GB HBM3E at 6 TB/s, PCIe Gen5 x16, 1,307.4 dense FP16/BF16 TFLOPS (2,614.9 with sparsity), AMD's
        # MI325X spec page
        _gpu("mi325x", 256, 6000, 64, 1307.4, "AMD Instinct MI325X 256GB HBM3E", 255.98,
             "vLLM issue #41962 on 8 x MI325X: '255.98 GiB HBM each' and 'HIP out of memory ... total capacity of "
             "255.98 GiB'"),
        # MI355X: 288 GB HBM3E at 8 TB/s, PCIe Gen5 x16; 2,516.6 dense FP16/BF16 TFLOPS (AMD's MI355X spec page: 2.5 PF,
        # 5.0 with sparsity; 256 CUs x 4,096 FLOP/clock x 2.4 GHz)
        _gpu("mi355x", 288, 8000, 64, 2516.6, "AMD Instinct MI355X 288GB HBM3E", 287.98,
             "vLLM on MI355X nodes: 'Free memory on device cuda:N (272.0-272.4/287.98 GiB)' (code-index file id "
             "60288493720); a 288 GB Instinct node reports 309,220,868,096 B total (id 69068205465)"),
    )
}
# what the engine rules look up by catalog name (an edited card keeps its name: capacity/hardware.py)
CUDA_CAPABILITY = {g.name: g.cuda_capability for g in CATALOG.values() if g.cuda_capability is not None}
PCIE_ONLY_GPUS = tuple(g.name for g in CATALOG.values() if g.pcie_only)


@record
class Price:
    usd_per_gpu_hour: float
    source: str
    date: str  # when the source gave this figure (ISO date)


# On-demand list prices per GPU hour, one provider where it lists the GPU, for
# ranking by cost (`kvplan fit --objective cost`). Prices move: pass
# `--price GPU=USD` for your own. No sourced on-demand figure was found for
# the MI300X, so it has none (cost ranking needs --price mi300x=USD).
_RUNPOD = "RunPod on-demand, as tabled by deploybase.ai 'RunPod GPU Pricing: 2026 Comprehensive Pricing Guide'"
LIST_PRICES = {
    "rtx-4090": Price(0.60, _RUNPOD, "2026-03-10"),
    "l4": Price(0.78, _RUNPOD, "2026-03-10"),
    "l40s": Price(1.40, _RUNPOD, "2026-03-10"),
    "a100-80gb": Price(2.45, _RUNPOD + " (A100 SXM 80GB)", "2026-03-10"),
    "h100-pcie": Price(3.51, _RUNPOD, "2026-03-10"),
    "h100-sxm": Price(4.76, _RUNPOD, "2026-03-10"),
    "h200": Price(6.35, _RUNPOD, "2026-03-10"),
    "b200": Price(10.57, _RUNPOD, "2026-03-10"),
    "a100-40gb": Price(1.48, "Lambda on-demand 1x A100 40GB, as listed by techbytes.app 'Serverless GPU Pricing Matrix'",
                       "2026-05-07"),
}

_ALIASES = {"h100": "h100-sxm", "a100": "a100-80gb", "4090": "rtx-4090", "rtx4090": "rtx-4090",
            "3090": "rtx-3090", "rtx3090": "rtx-3090", "5090": "rtx-5090", "rtx5090": "rtx-5090", "a5000": "rtx-a5000", "rtxa5000": "rtx-a5000",
            "rtxpro6000": "rtx-pro-6000", "rtx-pro-6000-blackwell": "rtx-pro-6000",
            "a6000": "rtx-a6000", "rtxa6000": "rtx-a6000", "6000ada": "rtx-6000-ada", "rtx6000ada": "rtx-6000-ada",
            "h100nvl": "h100-nvl", "a800": "a800-80gb", "gh200-96gb": "gh200",
            "gh200-144gb": "gh200-144g",
            "tesla-t4": "t4", "4080": "rtx-4080", "3080": "rtx-3080", "3060": "rtx-3060", "5080": "rtx-5080"}


# words of a card's full name that do not pick the card: the vendor and line ("NVIDIA GeForce RTX 4090", "AMD
# Instinct MI300X", "Tesla T4") and the memory type nvidia-smi appends ("NVIDIA H100 80GB HBM3")
_NAME_NOISE = frozenset({"nvidia", "amd", "geforce", "tesla", "instinct", "hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6",
                         "gddr6x", "gddr7"})


def _resolve(key: str) -> str | None:
    key = _ALIASES.get(key, key)
    return key if key in CATALOG else None


# a name and memory size that an uncatalogued card shares with a catalogued one: refused, the two named, never
# guessed. The H100 SXM5 94GB (PCI id 2339; TSUBAME 4.0's and Snellius's GPU) has the H100 NVL's 95,830 MiB, and
# nvidia-smi names it "NVIDIA H100 94GB" (a TSUBAME 4.0 write-up's measured table: "NVIDIA H100 94GB (95,830 MiB)";
# TSUBAME 4.0 is 4 x H100 SXM5 94GB a node, its operator's spec sheet), while an NVL is "NVIDIA H100 NVL"
_SHARED_SIZES = {("h100", 94): "an H100 with 94 GB is the H100 NVL (--gpu h100-nvl) or the H100 SXM5 94GB, which the "
                               "catalog lacks"}


def _spelled_key(key: str) -> str | None:
    """The catalog key of a longer spelling of a card: a memory size ("H100-80GB", "a100-40g", "l40s-48gb"), a form
    factor ("h100-sxm5", "A100-SXM4-40GB") or the words of its full name ("NVIDIA H100 80GB HBM3"). A size must be
    the card's datasheet memory and "sxm" an SXM card; the card is the one the rest names (its alias: "h100" is the
    SXM card), else the only one of that name with that memory; anything else, None. A size an uncatalogued card of
    that name shares (_SHARED_SIZES: "h100-94gb") is refused in one line."""
    words = [re.sub(r"^(\d+)g$", r"\1gb", w) for w in key.split("-") if w and w not in _NAME_NOISE]
    direct = _resolve("-".join(words))
    if direct:
        return direct
    sizes = {int(w[:-2]) for w in words if re.fullmatch(r"\d+gb", w)}
    sxm = any(re.fullmatch(r"sxm\d?", w) for w in words)
    base = "-".join(w for w in words if not re.fullmatch(r"\d+gb|sxm\d?", w))
    if not base or not (sizes or sxm):
        return None

    def fits(k: str) -> bool:
        gpu = CATALOG[k]
        return (all(round(gpu.memory_bytes / GIB) == s for s in sizes)
                and (not sxm or "SXM" in gpu.note))

    named = _resolve(base)
    if named and fits(named):
        return named
    shared = next((_SHARED_SIZES[(base, s)] for s in sizes if (base, s) in _SHARED_SIZES), None)
    if shared and not sxm:
        raise UsageError("names two cards", shared)  # lookup puts the name as given in front
    same_name = [k for k in CATALOG if k.startswith(base + "-") and fits(k)]
    return same_name[0] if len(same_name) == 1 else None


def lookup(name: str, *, custom_hint: bool = False) -> Gpu:
    """The catalog entry of `name`; an unknown name lists the catalog, and with `custom_hint` (commands
    that take --gpu-memory and --hbm-gbps: estimate) says a GPU can be given by its figures instead."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    try:
        key = _resolve(key) or _spelled_key(key) or key
    except UsageError as exc:
        raise UsageError(f"GPU {name!r} {exc.message}",
                         exc.hint + ("; or give --gpu-memory and --hbm-gbps" if custom_hint else "")) from None
    if key in CATALOG:
        return CATALOG[key]
    close = difflib.get_close_matches(key, list(CATALOG), n=2)
    hint = (f"did you mean {' or '.join(close)}? " if close else "") + f"known GPUs: {', '.join(CATALOG)}"
    raise UsageError(f"unknown GPU {name!r}", hint + ("; or give --gpu-memory and --hbm-gbps" if custom_hint else ""))


# key tokens a device name must hold as whole words, beyond the model token: "NVIDIA RTX 6000 Ada Generation"
# is not the "NVIDIA RTX PRO 6000 Blackwell ...", and a Turing "Quadro RTX 6000" is not the RTX 6000 Ada
_REQUIRED_WORDS = ("pro", "ada")
# words of a device name that make it another card than a key without them: an "RTX 3090 Ti" is not a 3090, and
# the "RTX 5090 D v2" has 24 GB on a 384-bit bus, not the 5090's 32 GB (Tom's Hardware, 2025-08-12: "Nvidia RTX
# 5090D V2 limits AI performance even more with 25% less VRAM and bandwidth"; the 5090 D keeps 32 GB)
_VARIANT_WORDS = ("ti", "super", "v2")


def match_device_name(device_name: str) -> str | None:
    """The catalog key of a device as its driver names it ("NVIDIA H100 PCIe",
    "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X"), or None.

    A key matches when its model token (the first with a digit: h100, l40s,
    4090) is a whole word of the name; among matches the key with the most other
    tokens in the name wins ("pcie", "80gb"; "sxm" also matches "sxm4"), ties
    going to catalog order. Whole words keep "L40S" from matching l4. A size the
    name states ("94GB") must be the card's datasheet memory where a matching card
    has it: "NVIDIA H100 94GB" is not the 80 GB SXM card but the H100 NVL, whose
    95,830 MiB the H100 SXM5 94GB that nvidia-smi names so has too (_SHARED_SIZES),
    so the memory a plan reads is right either way; a size no matching card has is
    not the GPU's memory ("NVIDIA GH200 480GB" counts its CPU's LPDDR5X).
    """
    words = re.findall(r"[a-z0-9]+", device_name.lower())
    matches = []
    for key in CATALOG:
        tokens = key.split("-")
        model = next((t for t in tokens if any(c.isdigit() for c in t)), tokens[0])
        if model not in words or any(t in _REQUIRED_WORDS and t not in words for t in tokens):
            continue
        if any(w in _VARIANT_WORDS and w not in tokens for w in words):
            continue
        matches.append((key, sum(any(w.startswith(t) for w in words) for t in tokens if t != model)))
    sizes = {int(w[:-2]) for w in words if re.fullmatch(r"\d+gb", w)}
    sized = [(k, score) for k, score in matches if all(round(CATALOG[k].memory_bytes / GIB) == s for s in sizes)]
    best, best_score = None, -1
    for key, score in sized or matches:
        if score > best_score:
            best, best_score = key, score
    return best
