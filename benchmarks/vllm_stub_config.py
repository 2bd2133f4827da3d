"""What the oracle scripts (benchmarks/vllm_oracle*.py) share: the slice of a VllmConfig that vLLM's KV cache
planner reads, built without a model, a GPU or a HF download, and the release-dependent calls into the
planner (its capacity figures, its start check)."""

from __future__ import annotations

import contextlib

import importlib
import inspect
from types import SimpleNamespace


def vllm_config(max_model_len: int, *, mnbt: int = 8192, in_flight: int | None = None, layout: str = "LBNHC",
                mamba_align: bool = True, hybrid_manager: bool = True):
    """`vllm serve`'s scheduler on an H100 by default: mnbt batched tokens, two batches in flight (async
    scheduling). layout: the KV cache layout the engine core would resolve (LBNHC, the default preference;
    BLHNC where a backend needs block-outermost, as DeepSeek-V4's indexer does). hybrid_manager=False: vLLM's
    --disable-hybrid-kv-cache-manager (get_kv_cache_groups sizes local layers as full attention)."""
    from vllm.config.cache import CacheConfig

    cache = CacheConfig()
    if hasattr(cache, "kv_cache_layout"):  # 0.33
        cache.kv_cache_layout = layout
    if hasattr(cache, "mamba_cache_mode"):
        cache.mamba_cache_mode = "align" if mamba_align else "none"
    return SimpleNamespace(
        scheduler_config=SimpleNamespace(disable_hybrid_kv_cache_manager=not hybrid_manager, max_num_batched_tokens=mnbt,
                                         max_model_len=max_model_len),
        cache_config=cache, attention_config=SimpleNamespace(hisparse_config=None),
        parallel_config=SimpleNamespace(decode_context_parallel_size=1, prefill_context_parallel_size=1,
                                        pipeline_parallel_size=1),
        model_config=SimpleNamespace(max_model_len=max_model_len), speculative_config=None,
        max_in_flight_tokens=2 * mnbt if in_flight is None else in_flight, num_gpu_blocks_override=None,
        device_config=SimpleNamespace(device_type="cuda"), kv_transfer_config=None, kv_events_config=None)


def planner():
    """(kv_cache_planning where the release has it (0.33), else kv_cache_utils; kv_cache_utils)."""
    utils = importlib.import_module("vllm.v1.core.kv_cache_utils")
    try:
        return importlib.import_module("vllm.v1.core.kv_cache_planning"), utils
    except ModuleNotFoundError:
        return utils, utils


def capacity(cfg, kv, max_model_len: int) -> tuple[int, float]:
    """(tokens, concurrency) as the release logs them: get_kv_cache_capacity from 0.24, before that
    int(concurrency x max_model_len) from get_max_concurrency_for_kv_cache_config."""
    _, utils = planner()
    if hasattr(utils, "get_kv_cache_capacity"):
        return utils.get_kv_cache_capacity(cfg, kv)
    concurrency = utils.get_max_concurrency_for_kv_cache_config(cfg, kv)
    return int(concurrency * max_model_len), concurrency


def start_check(cfg, registered: dict, groups, memory: int) -> bool:
    """The memory test the release's get_kv_cache_configs runs: 0.11-0.13 every registered layer's worst case
    (check_enough_kv_cache_memory); 0.14-0.28 _max_memory_usage_bytes_from_groups; 0.29-0.32 the same in the
    memory less one block (the null block); 0.33 through its config builder. registered: the specs as the
    model runner registers them (before get_kv_cache_groups unifies them)."""
    planning, utils = planner()
    if hasattr(planning, "DefaultKVCacheConfigBuilder"):
        builder = planning.DefaultKVCacheConfigBuilder()
        per_block = planning._pool_bytes_per_block_from_builder(builder, cfg, groups)
        return planning._max_memory_usage_bytes_from_groups(builder, cfg, groups) <= memory - per_block
    source = inspect.getsource(utils.get_kv_cache_configs)
    if "_max_memory_usage_bytes_from_groups" not in source:
        return utils.max_memory_usage_bytes(cfg, registered.values()) <= memory
    needed = utils._max_memory_usage_bytes_from_groups(cfg, groups)
    if "- _pool_bytes_per_block(" in source:
        one = len(inspect.signature(utils._pool_bytes_per_block).parameters) == 1
        memory -= utils._pool_bytes_per_block(groups) if one else utils._pool_bytes_per_block(cfg, groups)
    return needed <= memory


def plan_case(cfg, specs: dict, memory: int, max_len: int):
    """(the config at max_len, groups, kv cache config, tokens, concurrency, start check passed): the planner
    on registered specs at one memory and max length (0.33's kv_cache_planning)."""
    import copy

    planning = planner()[0]
    case = copy.copy(cfg)
    case.model_config = copy.copy(cfg.model_config)
    case.model_config.max_model_len = max_len
    case.model_config.original_max_model_len = max_len
    case.scheduler_config = copy.copy(cfg.scheduler_config)
    case.scheduler_config.max_model_len = max_len
    groups = planning.get_kv_cache_groups(case, dict(specs))
    kv = planning.get_kv_cache_config_from_groups(case, groups, memory)
    tokens, concurrency = capacity(case, kv, max_len)
    return case, groups, kv, tokens, concurrency, start_check(case, specs, groups, memory)


def print_specs(specs: dict, describe, show_names: bool, first: int) -> None:
    """The registered specs, counted by description, and the first names in registration order."""
    print(f"    {len(specs)} specs registered (Model Runner V2 get_kv_cache_spec order):")
    kinds: dict[str, list[str]] = {}
    for name, spec in specs.items():
        kinds.setdefault(describe(spec), []).append(name.removeprefix("language_model.model.layers."))
    for desc, names in kinds.items():
        print(f"    {len(names):2d} x {desc}")
        if show_names:
            print(f"         {names}")
    print("    registration order:", [n.removeprefix("language_model.model.layers.") for n in list(specs)[:first]], "...")


def print_plans(registered, mems, lens, group_label, full_start) -> None:
    """The planner's figures per memory and max length, with the groups of the first case. registered(max_len):
    (config, specs), rebuilt per length (a Mamba block can be the max length); full_start(config, specs, groups,
    memory): what get_kv_cache_configs says."""
    import math

    planning = planner()[0]
    for gib in mems:
        for max_len in lens:
            memory = int(gib * 2**30)
            cfg, specs = registered(max_len)
            groups = planning.get_kv_cache_groups(cfg, dict(specs))
            kv = planning.get_kv_cache_config_from_groups(cfg, groups, memory)
            tokens, concurrency = capacity(cfg, kv, max_len)
            fits = start_check(cfg, specs, groups, memory)
            per_request = [math.ceil(g.kv_cache_spec.max_memory_usage_bytes(cfg) / g.kv_cache_spec.page_size_bytes)
                           for g in groups]
            if gib == mems[0] and max_len == lens[0]:
                print(f"    {len(groups)} groups (kind, layers, page bytes, block_size):")
                for g in groups:
                    first = g.layer_names[0].removeprefix("language_model.model.layers.")
                    print(f"      {group_label(g)}: {len(g.layer_names)} layers, page {g.kv_cache_spec.page_size_bytes:,} "
                          f"B, block_size {g.kv_cache_spec.block_size}, first {first}")
                print(f"    bytes per block {planning._pool_bytes_per_block(cfg, groups):,}")
            start = full_start(cfg, dict(specs), groups, memory)
            print(f"  {gib} GiB, max_model_len {max_len:,}: {kv.num_blocks:,} blocks, {tokens:,} tokens, "
                  f"{concurrency:.4f}x, fits {fits}; blocks/request {sum(per_request)} {per_request}; "
                  f"get_kv_cache_configs: {start}")


@contextlib.contextmanager
def hopper():
    """vLLM's current_platform reports CUDA SM 9.0 while a backend or kernel choice is made."""
    from vllm.platforms import current_platform
    from vllm.platforms.interface import DeviceCapability, PlatformEnum

    plat = type(current_platform)
    saved = {k: plat.__dict__.get(k) for k in ("_enum", "get_device_capability")}
    plat._enum = PlatformEnum.CUDA
    plat.get_device_capability = classmethod(lambda cls, device_id=0: DeviceCapability(9, 0))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                delattr(plat, k)
            else:
                setattr(plat, k, v)


def group_label(group) -> str:
    """A KV cache group's spec class, or for a packed group U[count x class, ...]."""
    spec = group.kv_cache_spec
    if hasattr(spec, "kv_cache_specs"):
        kinds: dict[str, int] = {}
        for s in spec.kv_cache_specs.values():
            kinds[type(s).__name__] = kinds.get(type(s).__name__, 0) + 1
        return "U[" + ", ".join(f"{n}x{k}" for k, n in kinds.items()) + "]"
    return type(spec).__name__


def full_start(cfg, specs, groups, memory: int) -> str:
    """What vLLM's get_kv_cache_configs says: ok with the blocks, or its refusal."""
    try:
        kv = planner()[0].get_kv_cache_configs(cfg, [specs], [memory], groups)[0]
        return f"ok ({kv.num_blocks:,} blocks)"
    except (ValueError, AssertionError) as exc:
        return f"{type(exc).__name__}: " + str(exc).split(" Try increasing")[0][:300]


def mtp_retained_tokens(hf_config: dict, tokens: int) -> int:
    """extra_retained_tokens as the release on the path tags every SlidingWindowSpec with under an MTP draft of
    `tokens` draft tokens, from the release's own code run on a stub of the speculative config: hf_config holds what
    config/speculative.py hf_config_override writes into the draft config (model_type, n_predict,
    num_nextn_predict_layers where set). 0.31+: VllmConfig.num_prefill_lookahead_tokens - 1 (0.34: through the
    speculator config MTPSpeculatorConfig.specialize picks); 0.28-0.30: num_speculative_tokens - 1 where
    SpeculativeConfig.use_multi_module_mtp holds (kv_cache_utils.get_kv_cache_configs); before 0.28 no such field
    (0)."""
    import dataclasses

    from vllm.config import VllmConfig
    from vllm.config.speculative import SpeculativeConfig
    from vllm.v1.kv_cache_interface import SlidingWindowSpec

    if "extra_retained_tokens" not in {f.name for f in dataclasses.fields(SlidingWindowSpec)}:
        return 0
    spec = SimpleNamespace(method="mtp", num_speculative_tokens=tokens, index_share_for_mtp_iteration=None,
                           draft_model_config=SimpleNamespace(hf_config=SimpleNamespace(**hf_config)))
    for name in ("num_mtp_modules", "use_multi_module_mtp", "use_eagle"):
        if hasattr(SpeculativeConfig, name):
            setattr(spec, name, getattr(SpeculativeConfig, name).__get__(spec))
    try:  # 0.34
        from vllm.v1.worker.gpu.spec_decode.mtp.config import MTPSpeculatorConfig

        spec.speculator_config = MTPSpeculatorConfig.specialize(spec)(spec)
    except ModuleNotFoundError:
        pass
    lookahead = getattr(VllmConfig, "num_prefill_lookahead_tokens", None)
    if lookahead is None:  # 0.28-0.30
        return tokens - 1 if spec.use_multi_module_mtp() else 0
    cfg = SimpleNamespace(speculative_config=spec, diffusion_config=None)
    cfg.num_speculative_tokens = VllmConfig.num_speculative_tokens.fget(cfg)
    return max(0, lookahead.fget(cfg) - 1)
