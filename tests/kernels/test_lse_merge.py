"""lse_merge against its float64 torch reference, including empty splits and empty rows."""
import pytest
import torch

from kvplan.kernels.lse_merge import lse_merge, lse_merge_reference


@pytest.mark.parametrize("splits,head_dim", [(1, 64), (3, 128), (5, 80)])
def test_matches_reference(device, splits, head_dim):
    part_out = torch.randn(3, 4, splits, head_dim, device=device)
    part_lse = torch.randn(3, 4, splits, device=device) * 5
    part_lse[0, 0, 0] = float("-inf")  # one empty split
    part_out[0, 0, 0] = float("nan")  # whatever an empty split holds is ignored
    part_lse[1, 2, :] = float("-inf")  # a row with no keys at all
    out = torch.full((3, 4, head_dim), float("nan"), device=device)
    lse = torch.full((3, 4), float("nan"), device=device)
    lse_merge(part_out, part_lse, out=out, lse=lse)
    ro, rl = lse_merge_reference(part_out, part_lse)
    torch.testing.assert_close(out.double(), ro, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(lse.double(), rl, rtol=1e-6, atol=1e-6)
    assert (out[1, 2] == 0).all() and lse[1, 2] == float("-inf")


def test_merge_equals_full_softmax():
    # splitting a softmax and merging gives the full softmax
    s = torch.randn(2, 90, dtype=torch.float64)
    v = torch.randn(90, 64, dtype=torch.float64)
    full = torch.softmax(s, -1) @ v
    chunks = [(0, 30), (30, 31), (31, 90)]
    po = torch.stack([torch.softmax(s[:, a:b], -1) @ v[a:b] for a, b in chunks], 1)
    pl = torch.stack([torch.logsumexp(s[:, a:b], -1) for a, b in chunks], 1)
    out, lse = lse_merge(po.float().contiguous(), pl.float().contiguous())
    torch.testing.assert_close(out.double(), full, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(lse.double(), torch.logsumexp(s, -1), rtol=1e-6, atol=1e-6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="part_lse"):
        lse_merge(torch.zeros(2, 3, 8), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="part_out"):
        lse_merge(torch.zeros(2, 3, 8, dtype=torch.float64), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="out"):
        lse_merge(torch.zeros(2, 3, 8), torch.zeros(2, 3), out=torch.zeros(2, 7))
