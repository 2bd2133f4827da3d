"""vLLM 0.34's extensible KV cache (kvplan.engines.vllm_extensible): the pool measure_kv_cache_bytes gives after
warmup, worked out by hand from v1/worker/extensible_kv_cache.py (0.34.0), and how predict_available uses it."""

from __future__ import annotations

from kvplan.engines.vllm_extensible import (
    MARGIN_FLOOR_BYTES,
    PRE_SNAPSHOT_BYTES,
    PRE_SNAPSHOT_TP_BYTES,
    PRE_SNAPSHOT_TP_BYTES_PCIE,
    extensible_by_default,
    margin_bytes,
    measured_pool_bytes,
    pre_snapshot_bytes,
)
from kvplan.engines.vllm_profile import predict_available
from kvplan.units import GIB


def test_default_is_on_from_0_34():
    # config/cache.py enable_extensible_kv_cache: a field of 0.34.0, on by default on CUDA
    assert extensible_by_default("0.34.0") and extensible_by_default("0.34")
    assert not extensible_by_default("0.33.0") and not extensible_by_default(None)


def test_margin_is_the_floor_or_three_quarters_of_the_peak():
    # KV_CACHE_MARGIN_FLOOR_BYTES 1 << 30 on CUDA, KV_CACHE_MARGIN_FRACTION 0.75
    assert MARGIN_FLOOR_BYTES == 2**30
    assert margin_bytes(GIB // 2) == GIB
    assert margin_bytes(2 * GIB) == 3 * GIB // 2


def test_pool_at_the_default_utilization():
    # 80 GiB card, 0.5 GiB in use before the snapshot, 20 GiB resident, a 2 GiB transient peak, utilization 1.0:
    # requested - resident = 80 - 20 = 60; headroom - margin = (80 - 0.5 - 20) - max(1, 1.5) = 58;
    # min = 58, less the peak: 56 GiB
    pool = measured_pool_bytes(total_bytes=80 * GIB, utilization=1.0, pre_snapshot=GIB // 2,
                               resident_bytes=20 * GIB, transient_peak_bytes=2 * GIB)
    assert pool == 56 * GIB
    # a small peak (0.4 GiB): the 1 GiB floor: 80 - 0.5 - 20 - 1 - 0.4 = 58.1 GiB
    small = measured_pool_bytes(total_bytes=80 * GIB, utilization=1.0, pre_snapshot=GIB // 2,
                                resident_bytes=20 * GIB, transient_peak_bytes=2 * GIB // 5)
    assert small == 80 * GIB - GIB // 2 - 20 * GIB - GIB - 2 * GIB // 5


def test_pool_under_an_explicit_utilization():
    # 0.9 x 80 = 72 GiB requested (ceil of an exact figure): 72 - 20 = 52 < 58, so 52 - 2 = 50 GiB
    pool = measured_pool_bytes(total_bytes=80 * GIB, utilization=0.9, pre_snapshot=GIB // 2,
                               resident_bytes=20 * GIB, transient_peak_bytes=2 * GIB)
    assert pool == 50 * GIB
    # a reserve growth above the peak is what is kept free instead: 52 - 3 = 49 GiB
    grown = measured_pool_bytes(total_bytes=80 * GIB, utilization=0.9, pre_snapshot=GIB // 2,
                                resident_bytes=20 * GIB, transient_peak_bytes=2 * GIB, reserve_growth_bytes=3 * GIB)
    assert grown == 49 * GIB
    # nothing left: 0, never negative
    assert measured_pool_bytes(total_bytes=8 * GIB, utilization=1.0, pre_snapshot=GIB // 2,
                               resident_bytes=8 * GIB, transient_peak_bytes=GIB) == 0


def test_pre_snapshot_figures():
    # TP 1: the median of 0.23, 0.41, 0.45, 0.70 GiB (four public breakdown lines, B - A of "Free memory on
    # device (A/B GiB)"): (0.41 + 0.45) / 2 = 0.43 GiB; TP 4: 79.11 - 77.57 = 1.54 (H100, NVLink), 95.01 - 94.05 =
    # 0.96 (RTX PRO 6000, PCIe only)
    assert PRE_SNAPSHOT_BYTES == int(0.43 * GIB)
    assert PRE_SNAPSHOT_TP_BYTES == int(1.54 * GIB) and PRE_SNAPSHOT_TP_BYTES_PCIE == int(0.96 * GIB)
    assert pre_snapshot_bytes(1) == PRE_SNAPSHOT_BYTES
    assert pre_snapshot_bytes(4, pcie_only=True) == PRE_SNAPSHOT_TP_BYTES_PCIE


def _llama(version, util, **kw):
    from kvplan.sources import load_model

    model = load_model("llama-3.1-8b")
    return predict_available(model, total_bytes=80 * GIB, gpu_memory_utilization=util, version=version,
                             max_num_seqs=1024, gpu="h100-sxm", **kw)


def test_predict_available_sizes_the_pool_after_warmup_from_0_34():
    est = _llama("0.34.0", 1.0)
    ext = est.extensible
    assert ext is not None
    # the pool from the estimate's own terms (measure_kv_cache_bytes with utilization 1.0):
    # total - pre-snapshot - (weights + non-torch + kept buffers + graphs captured) - max(1 GiB, 0.75 P) - P,
    # P = peak_activation_memory = the profile's transient headroom + the CUDA-graph estimate, and the estimate is 0
    # under the extensible cache (v1/worker/gpu/model_runner.py profile_cudagraph_memory, 0.34.0)
    assert est.cuda_graph_bytes == 0 and ext.captured_graph_bytes > 0
    peak = est.activation_bytes
    resident = est.weight_bytes + est.non_torch_bytes + est.buffer_bytes + ext.captured_graph_bytes
    assert ext.transient_peak_bytes == peak and ext.resident_bytes == resident
    assert est.pool_bytes == 80 * GIB - PRE_SNAPSHOT_BYTES - resident - max(GIB, int(0.75 * peak)) - peak
    # the log's "Available KV cache memory" stays the profile's figure (the reserved capacity), requested 80 GiB:
    # requested - consumed - transient headroom, no graphs in it
    assert est.available_bytes == 80 * GIB - (resident - ext.captured_graph_bytes) - est.activation_bytes
    assert est.pool_bytes < est.available_bytes
    assert "extensible KV cache" in est.lines()[0]


def test_0_33_and_an_explicit_off_keep_the_available_figure():
    for est in (_llama("0.33.0", 0.92), _llama("0.34.0", 0.92, extensible_kv_cache=False)):
        assert est.extensible is None and est.pool_bytes == est.available_bytes
    # with it on and 0.92 given, the requested memory binds: 0.92 x 80 - resident - P (the same terms as 0.33,
    # the graphs captured resident in place of 0.33's estimate)
    est = _llama("0.34.0", 0.92)
    peak = est.activation_bytes
    resident = est.weight_bytes + est.non_torch_bytes + est.buffer_bytes + est.extensible.captured_graph_bytes
    # request_memory: ceil(80 GiB x 0.92) = ceil(79,027,398,246.4) = 79,027,398,247 B
    assert est.pool_bytes == 79_027_398_247 - resident - peak


def test_the_post_warmup_line_is_read():
    # not a public log (none of 0.34 was found): the line as extensible_kv_cache.py measure_kv_cache_blocks
    # formats it (format_gib: round(x, 2); "%d KV cache blocks"), with figures made up for the parser
    from kvplan.engines.vllm_log import parse_log

    line = ("(EngineCore pid=1) INFO 11-20 10:00:00 [extensible_kv_cache.py:693] Memory after warmup: 60.12 GiB free, "
            "0.0 GiB committed to the KV cache, 2.29 GiB kept for transient activations (2.29 GiB allocated at peak, "
            "0.1 GiB of torch reservation growth); 4790 KV cache blocks (58.5 GiB) fit within the requested "
            "79.18 GiB. Torch may reserve up to 20.0 GiB.")
    log = parse_log(line)
    assert (log.warmup_kv_gib, log.warmup_kv_blocks, log.transient_kept_gib) == (58.5, 4790, 2.29)
    assert log.extensible_kv_cache is True
    off = parse_log("WARNING [abstract.py:180] Disabling the extensible KV cache: the driver lacks VMM. The KV "
                    "cache will be sized from profiling estimates instead of measured memory.")
    assert off.extensible_kv_cache is False and off.warmup_kv_gib is None


def test_estimate_prints_the_reserved_capacity_and_plans_the_measured_pool():
    # `kvplan estimate llama-3.1-8b --gpu h100 --engine vllm` (0.34): utilization 1.0 unless given
    # (resolved_gpu_memory_utilization); the log's "Available KV cache memory" is the capacity the profile reserves
    # (v1/engine/core.py "num_blocks is the reserved capacity until the post-warmup measurement"), and the blocks,
    # tokens and concurrency are those of the pool measured after warmup, never above that capacity
    # (finalize_extensible_kv_cache's min). 0.33 has one figure for both.
    import json

    from typer.testing import CliRunner

    from kvplan.cli.app import app

    def engine(*extra):
        r = CliRunner().invoke(app, ["estimate", "llama-3.1-8b", "--gpu", "h100", "--format", "json", *extra])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["engine"]

    new = engine("--engine", "vllm@0.34")
    assert new["gpu_memory_utilization_default"] == 1.0
    reserved, pool = new["reserved_kv_memory_bytes"], new["kv_memory_bytes"]
    assert 0 < pool < reserved
    assert new["log"][0] == f"Available KV cache memory: {round(reserved / GIB, 2)} GiB"
    # Llama-3.1-8B's page: 64 tokens x 32 layers x 2 x 8 heads x 128 x 2 B = 8 MiB a block
    assert new["num_blocks"] == pool // (64 * 32 * 2 * 8 * 128 * 2)
    assert any("the capacity it reserves" in n for n in new["notes"])
    old = engine("--engine", "vllm@0.33")
    assert old["reserved_kv_memory_bytes"] is None and old["gpu_memory_utilization_default"] == 0.92
    assert old["log"][0] == f"Available KV cache memory: {round(old['kv_memory_bytes'] / GIB, 2)} GiB"
    # --kv-memory: the pool as given, nothing reserved apart from it
    fixed = engine("--engine", "vllm@0.34", "--kv-memory", "10GiB")
    assert fixed["kv_memory_bytes"] == 10 * GIB and fixed["reserved_kv_memory_bytes"] is None


def test_calibrate_takes_0_92_where_the_log_turned_the_extensible_cache_off():
    # a 0.34 start whose driver lacks VMM ("Disabling the extensible KV cache") profiles against
    # DEFAULT_GPU_MEMORY_UTILIZATION 0.92, one with the warmup line against 1.0 (config/cache.py 0.34)
    from kvplan.engines.vllm_extensible import resolved_utilization
    from kvplan.engines.vllm_log import parse_log
    from kvplan.engines.vllm_rules import V0_34

    off = parse_log("WARNING [abstract.py:180] Disabling the extensible KV cache: the driver lacks VMM.")
    assert resolved_utilization(V0_34, off.extensible_kv_cache) == 0.92
    on = parse_log("INFO Memory after warmup: 9.1 GiB free, 2.0 GiB committed to the KV cache, 1.0 GiB kept for "
                   "transient activations (1.0 GiB allocated at peak, 0.0 GiB of torch reservation growth); 500 KV "
                   "cache blocks (7.81 GiB) fit within the requested 79.18 GiB. Torch may reserve up to 1.0 GiB.\n"
                   "INFO Memory after warmup: 9.0 GiB free, 2.0 GiB committed to the KV cache, 1.5 GiB kept for "
                   "transient activations (1.5 GiB allocated at peak, 0.0 GiB of torch reservation growth); 480 KV "
                   "cache blocks (7.5 GiB) fit within the requested 79.18 GiB. Torch may reserve up to 1.0 GiB.")
    # the smallest count over the workers (finalize_extensible_kv_cache), with that worker's own figures
    assert (on.warmup_kv_blocks, on.warmup_kv_gib, on.transient_kept_gib) == (480, 7.5, 1.5)
    assert resolved_utilization(V0_34, on.extensible_kv_cache) == 1.0


def test_no_graph_estimate_under_the_extensible_cache_by_hand():
    # vLLM 0.34.0 v1/worker/gpu/model_runner.py profile_cudagraph_memory: `if
    # self.cache_config.enable_extensible_kv_cache: return 0` ("The extensible KV cache measures the capture
    # footprint after warmup"), so gpu_worker.py determine_available_memory subtracts no estimate and
    # peak_activation_memory (the transient peak the cache keeps free) holds none; the graphs captured before
    # measure_kv_cache_blocks are resident. Llama-3.1-8B, 80 GiB, utilization 1.0, 1,024 sequences, 8,192 tokens,
    # weights 15 GiB and 0.5 GiB of graphs given:
    #   peak activation: the V2 warm-up sampler pass, 1,024 x 128,256 x 14 B = 1,838,678,016 B (the forward,
    #     8,192 x 4,096 x 26 B = 872,415,232 B, is smaller); penalty bin counts 1,024 x 128,256 x 4 = 525,336,576 B
    #     and the int32 prompt bin mask and grammar bitmask 2 x 1,024 x cdiv(128,256, 32) x 4 = 2 x 1,024 x 4,008
    #     x 4 = 32,833,536 B: 558,170,112 B kept
    #   reserved capacity ("Available KV cache memory") = 85,899,345,920 - 16,106,127,360 - 1,838,678,016
    #     - non-torch - 558,170,112 (no graph term)
    #   pool = total - pre-snapshot - resident - margin - peak, resident = weights + non-torch + kept buffers
    #     + 536,870,912 B of graphs, margin = max(1 GiB, 0.75 x 1,838,678,016 = 1,379,008,512)
    from kvplan.engines.vllm_non_torch import NON_TORCH_BYTES_V1

    est = _llama("0.34.0", 1.0, weight_bytes=15 * GIB, cuda_graph_bytes=GIB // 2)
    assert est.activation_bytes == 1_838_678_016 and est.buffer_bytes == 558_170_112
    assert est.cuda_graph_bytes == 0
    assert est.available_bytes == 85_899_345_920 - 16_106_127_360 - 1_838_678_016 - NON_TORCH_BYTES_V1 - 558_170_112
    resident = 16_106_127_360 + NON_TORCH_BYTES_V1 + 558_170_112 + 536_870_912
    assert est.extensible.transient_peak_bytes == 1_838_678_016
    assert est.pool_bytes == 85_899_345_920 - PRE_SNAPSHOT_BYTES - resident - 1_379_008_512 - 1_838_678_016
    # with the cache turned off (e.g. a driver without VMM) the estimate is taken as in 0.33
    off = _llama("0.34.0", 0.92, weight_bytes=15 * GIB, cuda_graph_bytes=GIB // 2, extensible_kv_cache=False)
    assert off.cuda_graph_bytes == GIB // 2
