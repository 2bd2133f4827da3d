"""Common spellings of a GPU that users type or copy from nvidia-smi (kvplan/capacity/gpus.py lookup,
_spelled_key): a memory size, a form factor or the card's full driver name resolve to the catalog card they
name, and only when the size is the card's datasheet memory; an ambiguous or uncatalogued card stays an error.

Expected cards are from the datasheets and nvidia-smi's own names: nvidia-smi prints "NVIDIA H100 80GB HBM3"
for the SXM5 card ("NVIDIA H100 PCIe" for the PCIe one), "NVIDIA A100-SXM4-40GB" / "-80GB", "Tesla V100-SXM2-32GB";
the 94 GB H100 is two cards: nvidia-smi names the H100 NVL "NVIDIA H100 NVL", and the H100 SXM5 94GB (PCI id 2339,
4 a node on TSUBAME 4.0) "NVIDIA H100 94GB" (a TSUBAME 4.0 write-up's measured table: "NVIDIA H100 94GB (95,830 MiB)",
the NVL's MiB too), so a bare 94 GB H100 is refused, not planned as the NVL.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvplan.capacity.gpus import lookup
from kvplan.errors import UsageError


@pytest.mark.parametrize("spelling, card, datasheet_gb", [
    ("H100-80GB", "h100-sxm", 80),
    ("h100-80g", "h100-sxm", 80),
    ("NVIDIA H100 80GB HBM3", "h100-sxm", 80),
    ("h100-sxm5", "h100-sxm", 80),
    ("H100-SXM5-80GB", "h100-sxm", 80),
    ("h100-pcie-80gb", "h100-pcie", 80),
    ("h100-nvl-94gb", "h100-nvl", 94),
    ("NVIDIA H100 NVL", "h100-nvl", 94),
    ("a100-40g", "a100-40gb", 40),
    ("A100-SXM4-40GB", "a100-40gb", 40),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb", 80),
    ("Tesla V100-SXM2-32GB", "v100-32gb", 32),
    ("l40s-48gb", "l40s", 48),
    ("h200-141gb", "h200", 141),
    ("NVIDIA GeForce RTX 4090", "rtx-4090", 24),
    ("NVIDIA H100 PCIe", "h100-pcie", 80),
    ("NVIDIA H200", "h200", 141),
    ("NVIDIA L40S", "l40s", 48),
    ("NVIDIA B200", "b200", 180),
    ("AMD Instinct MI300X", "mi300x", 192),
])
def test_spelling_names_the_card(spelling, card, datasheet_gb):
    gpu = lookup(spelling)
    assert gpu.name == card
    assert gpu.memory_bytes == datasheet_gb * 2**30  # the datasheet size read as GiB (the catalog's rule)


@pytest.mark.parametrize("spelling", [
    "v100",            # 16 GB or 32 GB: two cards
    "a100-pcie-80gb",  # the PCIe A100 is not in the catalog (its bandwidth is not the SXM card's)
    "h100-40gb",       # no 40 GB H100
    "mi300",           # MI300A or MI300X
    "80gb",
    "NVIDIA A100 80GB PCIe",  # nvidia-smi's PCIe A100: not the catalog's SXM4 card
    "NVIDIA A100-PCIE-40GB",
])
def test_ambiguous_or_unknown_stays_an_error(spelling):
    with pytest.raises(UsageError, match="unknown GPU"):
        lookup(spelling)


def test_cli_accepts_h100_80gb():
    # the same plan as --gpu h100: Llama-3.1-8B's bytes per token 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B
    # = 131,072; the GPUs line names the SXM card
    run = subprocess.run([sys.executable, "-m", "kvplan", "estimate", "llama-3.1-8b", "--context", "8k",
                          "--gpu", "H100-80GB", "--format", "markdown"],
                         capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
    assert run.returncode == 0, run.stderr
    assert "| GPUs | 1 x h100-sxm (tp 1, pp 1) |" in run.stdout
    assert "131,072" in run.stdout


@pytest.mark.parametrize("spelling", ["h100-94gb", "NVIDIA H100 94GB", "H100 94GB"])
def test_a_94gb_h100_is_refused_naming_both_cards(spelling):
    # 94 GB fits the catalog's NVL (95,830 MiB) and the uncatalogued H100 SXM5 94GB alike (the same 95,830 MiB);
    # the SXM5 card is not the NVL (SXM form factor, NVLink to 8 GPUs), so guessing the NVL would plan another card
    with pytest.raises(UsageError, match="names two cards") as err:
        lookup(spelling)
    assert "h100-nvl" in err.value.hint and "H100 SXM5 94GB" in err.value.hint
