"""Cross-layer KV sharing: owner validation, bytes counted once per owner, readers decode the owner's KV."""
import pytest
import torch

from _paged_case import make_block_table
from kvplan.kernels.cross_layer import CrossLayerKV, owners, resident_bytes, validate_owner_map
from kvplan.kernels.paged_decode import paged_decode_reference

from _tol import DOT_ATOL as ATOL


def test_owner_map_validation():
    validate_owner_map([0, 0, None, 3, 3, 3])
    assert owners([0, 0, None, 3, 3, 3]) == [0, 3]
    with pytest.raises(ValueError, match="owner_of_layer"):
        validate_owner_map([1, 1])  # layer 0 reads a later layer
    with pytest.raises(ValueError, match="owner_of_layer"):
        validate_owner_map([0, 0, 1])  # layer 1 is not an owner
    with pytest.raises(ValueError, match="owner_of_layer"):
        validate_owner_map([0, 5])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
def test_shared_decode_and_bytes(device, dtype):
    owner_map = [0, 0, None, 3, 3]
    lens, bs, h, d = [17, 30, 2], 16, 2, 64
    bt, nb, slots = make_block_table(lens, bs, device)
    scale = torch.tensor([0.02]) if dtype == torch.float8_e4m3fn else None
    x = CrossLayerKV(owner_map, nb, bs, h, d, dtype=dtype, device=device, k_scale=scale, v_scale=scale)
    esize = torch.empty(0, dtype=dtype).element_size()
    scale_bytes = 8 if dtype == torch.float8_e4m3fn else 0
    want_bytes = resident_bytes(owner_map, nb, bs, h, d, esize, scale_bytes_per_owner=scale_bytes)
    assert x.resident_bytes() == want_bytes == 2 * (2 * nb * bs * h * d * esize + scale_bytes)
    # a map without sharing holds 4 caches (layers 0,1,3,4)
    assert resident_bytes([0, 1, None, 3, 4], nb, bs, h, d, esize) == 2 * resident_bytes(owner_map, nb, bs, h, d, esize)
    sl = torch.cat(slots).to(device)
    for o in (0, 3):
        k = torch.randn(sl.numel(), h, d, device=device)
        x.write(o, k, torch.randn_like(k), sl)
    with pytest.raises(ValueError, match="layer"):
        x.write(1, k, k, sl)
    with pytest.raises(ValueError, match="layer"):
        x.decode(2, torch.randn(3, 4, d, device=device), bt, torch.tensor(lens, dtype=torch.int32, device=device))
    assert x.cache_for_layer(2) is None
    assert x.cache_for_layer(1)[0].data_ptr() == x.cache_for_layer(0)[0].data_ptr()
    q = torch.randn(3, 4, d, device=device)
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    outs = {layer: x.decode(layer, q, bt, seq_lens, num_splits=2) for layer in (1, 4)}
    for layer, o in ((1, 0), (4, 3)):
        kc, vc = x.caches[o]
        ks, vs = x.scales[o]
        want = paged_decode_reference(q, kc, vc, bt, seq_lens, k_scale=ks, v_scale=vs)
        torch.testing.assert_close(outs[layer].double(), want, atol=ATOL, rtol=0)
    assert not torch.allclose(outs[1], outs[4])


def test_owner_map_from_the_model_description():
    """Gemma 3n: the last 15 of 35 layers reuse the last earlier layer of their type:
    layer i is full when (i + 1) % 5 == 0, so the last full owner is 19 and the
    last sliding owner 18."""
    from kvplan import load_model
    from kvplan.kernels.cross_layer import owner_map_from_model, owners

    model = load_model("gemma-3n-e4b")
    owner_map = owner_map_from_model(model)
    assert len(owners(owner_map)) == 20
    assert owner_map[:20] == list(range(20))
    # layer types repeat 4 sliding + 1 full: 19 is the last full owner, 18 the last sliding one
    assert owner_map[20:] == [19 if (i + 1) % 5 == 0 else 18 for i in range(20, 35)]
    # CLA:2 on Llama: layer 2k+1 reads layer 2k
    from kvplan.planner import compose
    from kvplan.techniques.registry import build

    cla = compose(load_model("llama-3.1-8b"), [build("cla:2")])[-1].model
    assert owner_map_from_model(cla) == [i - i % 2 for i in range(32)]
