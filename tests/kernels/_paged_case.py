"""Random paged KV caches for the decode tests: shuffled blocks, -1 past each sequence, poison elsewhere."""
import torch

from kvplan.kernels.paged_write import paged_write


def poison_(t: torch.Tensor) -> torch.Tensor:
    """Fill with NaN bytes (0xFF is NaN in e4m3fn/bf16/fp16/fp32; 255 for uint8 codes)."""
    t.view(torch.uint8).fill_(0xFF)
    return t


def make_block_table(seq_lens, block_size, device, spare_blocks=3, max_blocks=None):
    """Random disjoint blocks per sequence; returns (block_table int32, num_blocks, slot_mapping per seq)."""
    need = [-(-L // block_size) for L in seq_lens]
    num_blocks = sum(need) + spare_blocks
    perm = torch.randperm(num_blocks).tolist()
    max_blocks = max_blocks or max(max(need), 1) + 1
    bt = torch.full((len(seq_lens), max_blocks), -1, dtype=torch.int32)
    slots = []
    for b, n in enumerate(need):
        ids = [perm.pop() for _ in range(n)]
        bt[b, :n] = torch.tensor(ids, dtype=torch.int32)
        t = torch.arange(seq_lens[b])
        slots.append(bt[b].long()[t // block_size] * block_size + t % block_size)
    return bt.to(device), num_blocks, slots


def make_case(seq_lens, *, num_q_heads, num_kv_heads, head_dim, block_size, dtype, device,
              per_head_scale=False):
    """Write random K/V (float32 source) for each sequence; returns a dict of tensors."""
    bt, num_blocks, slots = make_block_table(seq_lens, block_size, device)
    shape = (num_blocks, block_size, num_kv_heads, head_dim)
    kc = poison_(torch.empty(shape, dtype=dtype, device=device))
    vc = poison_(torch.empty(shape, dtype=dtype, device=device))
    ks = vs = None
    if dtype == torch.float8_e4m3fn:
        n = num_kv_heads if per_head_scale else 1
        ks = (torch.rand(n) * 0.01 + 0.01).to(device)
        vs = (torch.rand(n) * 0.01 + 0.01).to(device)
    src = []
    for b, L in enumerate(seq_lens):
        k = torch.randn(L, num_kv_heads, head_dim, device=device)
        v = torch.randn(L, num_kv_heads, head_dim, device=device)
        src.append((k, v))
        if L:
            paged_write(k, v, kc, vc, slots[b].to(device), k_scale=ks, v_scale=vs)
    q = torch.randn(len(seq_lens), num_q_heads, head_dim, device=device)
    lens = torch.tensor(seq_lens, dtype=torch.int32, device=device)
    return dict(q=q, k_cache=kc, v_cache=vc, block_table=bt, seq_lens=lens, k_scale=ks,
                v_scale=vs, src=src, slots=slots)
