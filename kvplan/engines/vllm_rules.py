"""vLLM's KV accounting rules, one frozen object per release whose rules differ.

Every field cites the vLLM file and function it was read from (the field's
`source` metadata; `VllmRules.sources()` lists them). Read from the released
wheels' sources: vllm==0.11.0 and vllm==0.33.0 (the newest release on the
package index when this was written). Releases in between were not read: a
version between two modelled ones uses the older rules and says so.

The rules kvplan models (the version table in docs/engines.md repeats them):

| rule                                  | 0.11                         | 0.33                                  |
|---------------------------------------|------------------------------|---------------------------------------|
| gpu_memory_utilization default        | 0.90                         | 0.92                                  |
| "GPU KV cache size" token figure      | blocks // groups x block     | int(concurrency x max_model_len)      |
| log line                              | two lines                    | one line, "GPU KV cache size: N tokens, Maximum concurrency ..." |
| sliding window in-flight tokens       | max_num_batched_tokens       | 2 x max_num_batched_tokens (async scheduling) |
| MLA block on Hopper                   | 64 (FlashMLA), bf16 and fp8  | bf16 16 (FLASH_ATTN_MLA), fp8 64 (FlashMLA), sparse 64 |
| hybrid Mamba prefix caching           | off: one state per request   | "align": Mamba block = attention block, 2 pages (Mamba-2: 3) per request |
| start check                           | all memory                   | memory less one block (the null block) |
| --block-size                          | 1, 8, 16, 32, 64, 128        | any > 0                               |
| max_num_batched_tokens (`vllm serve`) | 8192 if >= 70 GiB and not A100, else 2048 | + 16384 if >= 160 GiB    |
| KV dtypes                             | auto, fp8, fp8_e4m3, fp8_e5m2 | + fp8_ds_mla, int8/fp8/int4_per_token_head, nvfp4 |
| Nemotron-H SSM state                  | serving dtype                | float32 (or the config's mamba_ssm_cache_dtype) |
| DeepSeek-V3.2 auto KV dtype           | fp8_ds_mla (656 B/token)     | bf16 (1,152 B/token); fp8 -> fp8_ds_mla |

Rules that hold in both: block 16; Mamba / Mamba-2 / GDN states in the serving
dtype (a float32 checkpoint is served in bf16); Mamba-2 groups padded to a
multiple of TP when they do not divide it; V3.2 indexer page 132 B/token in
fp8 + fp32 scales; --max-model-len above the model's maximum refused unless
VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from ..errors import UsageError
from ..units import GIB


def _src(text: str):
    return field(metadata={"source": text})


@dataclass(frozen=True)
class VllmRules:
    version: str = _src("the release these rules were read from")
    gpu_memory_utilization: float = _src("vllm/config/cache.py: CacheConfig.gpu_memory_utilization")
    default_block_tokens: int = _src("vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE / Platform.check_and_update_config")
    block_sizes: tuple[int, ...] | None = _src(
        "vllm/config/cache.py: BlockSize Literal (None: Field(gt=0), any positive size)")
    tokens_from_concurrency: bool = _src(
        "0.11 vllm/v1/core/kv_cache_utils.py: get_kv_cache_config (num_blocks // len(groups) * min_block); "
        "0.33 vllm/v1/core/kv_cache_utils.py: get_kv_cache_capacity (int(max_concurrency * max_model_len))")
    one_log_line: bool = _src("vllm/v1/core/kv_cache_utils.py: update_kv_cache_capacity (0.33) / get_kv_cache_config (0.11)")
    sliding_in_flight_batches: int = _src(
        "vllm/v1/kv_cache_interface.py: SlidingWindowSpec.max_memory_usage_bytes; "
        "0.33 vllm/config/vllm.py: VllmConfig.max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens "
        "(2 with async scheduling, the default)")
    mla_block_bf16: int = _src(
        "0.11 vllm/platforms/cuda.py: CudaPlatformBase.check_and_update_config (FlashMLA forces 64); "
        "0.33 vllm/v1/attention/backends/mla/flashattn_mla.py: get_supported_kernel_block_sizes MultipleOf(16)")
    mla_block_fp8: int = _src("vllm/v1/attention/backends/mla/flashmla.py: get_supported_kernel_block_sizes [64]")
    mla_block_sparse: int = _src(
        "0.11 vllm/platforms/cuda.py (FlashMLASparse forces 64); "
        "0.33 vllm/v1/attention/backends/mla/flashmla_sparse.py: get_supported_kernel_block_sizes")
    mamba_align_mode: bool = _src(
        "0.33 vllm/model_executor/models/config.py: MambaModelConfig.verify_and_update_config "
        "(prefix caching on for hybrids -> mamba_cache_mode 'align', mamba_block_size = block_size)")
    mamba_align_pages: tuple[tuple[str, int], ...] = _src(
        "0.33 vllm/v1/kv_cache_interface.py: MambaSpec.max_memory_usage_bytes (2 + num_prefill_checkpoint_blocks); "
        "vllm/model_executor/layers/mamba/mamba_mixer2.py: get_kv_cache_spec (Mamba-2: 1 checkpoint block)")
    chunked_hybrid_manager: bool = _src(
        "vllm/envs.py: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE (0.11 default 0, 0.33 default 1); "
        "vllm/config/vllm.py: a model with attention_chunk_size turns the hybrid KV cache manager off "
        "when it is 0, so every local layer is sized as full attention")
    null_block_in_check: bool = _src(
        "0.33 vllm/v1/core/kv_cache_planning.py: get_kv_cache_configs (check_memory = available - bytes_per_block)")
    batched_tokens_tiers: tuple[tuple[int, bool, int], ...] = _src(
        "vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults (OPENAI_API_SERVER): "
        "(min device memory, excludes A100, max_num_batched_tokens)")
    max_num_seqs_tiers: tuple[tuple[int, bool, int], ...] = _src(
        "vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults default_max_num_seqs")
    kv_cache_dtypes: tuple[str, ...] = _src("vllm/config/cache.py: CacheDType Literal")
    nemotron_h_fp32_ssm: bool = _src(
        "0.33 vllm/model_executor/models/config.py: NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype")
    v32_auto_kv_dtype: str = _src(
        "vllm/model_executor/models/config.py: DeepseekV32ForCausalLM.verify_and_update_config")
    v32_fp8_kv_dtype: str = _src(
        "0.11 DeepseekV32ForCausalLM.verify_and_update_config; "
        "0.33 vllm/v1/attention/backends/mla/flashmla_sparse.py: supported_kv_cache_dtypes ('fp8' alias of fp8_ds_mla)")

    def mamba_pages(self, kind: str) -> int:
        return dict(self.mamba_align_pages).get(kind, 2)

    def max_num_batched_tokens(self, memory_bytes: int | None, gpu_name: str = "") -> int:
        return _tier(self.batched_tokens_tiers, memory_bytes, gpu_name)

    def max_num_seqs(self, memory_bytes: int | None, gpu_name: str = "") -> int:
        return _tier(self.max_num_seqs_tiers, memory_bytes, gpu_name)

    @classmethod
    def sources(cls) -> dict[str, str]:
        return {f.name: f.metadata["source"] for f in fields(cls)}


def _tier(tiers, memory_bytes: int | None, gpu_name: str) -> int:
    """The first tier the GPU reaches; without a GPU, an H100-class one (80 GiB)."""
    memory = 80 * GIB if memory_bytes is None else memory_bytes
    for min_bytes, excludes_a100, value in tiers:
        if memory >= min_bytes and not (excludes_a100 and "a100" in gpu_name.lower()):
            return value
    return tiers[-1][2]


_COMMON_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")

V0_11 = VllmRules(
    version="0.11",
    gpu_memory_utilization=0.9,
    default_block_tokens=16,
    block_sizes=(1, 8, 16, 32, 64, 128),
    tokens_from_concurrency=False,
    one_log_line=False,
    sliding_in_flight_batches=1,
    mla_block_bf16=64,
    mla_block_fp8=64,
    mla_block_sparse=64,
    mamba_align_mode=False,
    mamba_align_pages=(),
    chunked_hybrid_manager=False,
    null_block_in_check=False,
    batched_tokens_tiers=((70 * GIB, True, 8192), (0, False, 2048)),
    max_num_seqs_tiers=((70 * GIB, True, 1024), (0, False, 256)),
    kv_cache_dtypes=_COMMON_DTYPES,
    nemotron_h_fp32_ssm=False,
    v32_auto_kv_dtype="fp8_ds_mla",
    v32_fp8_kv_dtype="fp8_ds_mla",
)

V0_33 = VllmRules(
    version="0.33",
    gpu_memory_utilization=0.92,
    default_block_tokens=16,
    block_sizes=None,
    tokens_from_concurrency=True,
    one_log_line=True,
    sliding_in_flight_batches=2,
    mla_block_bf16=16,
    mla_block_fp8=64,
    mla_block_sparse=64,
    mamba_align_mode=True,
    mamba_align_pages=(("mamba", 2), ("mamba2", 3), ("gated_deltanet", 2), ("linear", 2)),
    chunked_hybrid_manager=True,
    null_block_in_check=True,
    batched_tokens_tiers=((160 * GIB, False, 16384), (70 * GIB, True, 8192), (0, False, 2048)),
    max_num_seqs_tiers=((70 * GIB, True, 1024), (0, False, 256)),
    kv_cache_dtypes=_COMMON_DTYPES + ("float16", "fp8_ds_mla", "int8_per_token_head", "int4_per_token_head",
                                      "fp8_per_token_head", "nvfp4"),
    nemotron_h_fp32_ssm=True,
    v32_auto_kv_dtype="auto",
    v32_fp8_kv_dtype="fp8_ds_mla",
)

RULES = (V0_11, V0_33)
LATEST = V0_33


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def resolve(version: str | None) -> tuple[VllmRules, str | None]:
    """(rules, note) for a vLLM version such as "0.11", "0.11.2", "0.33.0" or "latest".

    A version between two modelled releases gets the older one's rules and a
    note; one older than the oldest modelled release gets 0.11's with a note.
    """
    if version in (None, "", "latest"):
        return LATEST, None
    text = version.strip().lstrip("v")
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-]?(?:post|rc|dev)?\d*.*)?", text)
    if not match:
        raise UsageError(f"unknown vLLM version {version!r}",
                         f"give a release such as 0.11 or 0.33 (modelled: {', '.join(r.version for r in RULES)})")
    wanted = (int(match.group(1)), int(match.group(2)))
    if wanted > _key(LATEST.version):
        raise UsageError(f"vLLM {version} is newer than the newest release kvplan models ({LATEST.version})",
                         f"use --engine vllm (= {LATEST.version}) or --engine vllm@{LATEST.version}")
    chosen = RULES[0]
    for rules in RULES:
        if _key(rules.version) <= wanted:
            chosen = rules
    if _key(chosen.version) == wanted:
        return chosen, None
    if wanted < _key(RULES[0].version):
        return chosen, (f"vLLM {text}: rules read from {chosen.version} (the oldest release kvplan models); "
                        "older releases may differ")
    return chosen, f"vLLM {text}: releases between {chosen.version} and the next modelled one were not read; using {chosen.version}'s rules"


def parse_engine(engine: str) -> tuple[str, VllmRules | None, str | None]:
    """'ideal' | 'vllm' | 'vllm@0.11' -> (name, rules or None, note)."""
    name, _, version = engine.partition("@")
    name = name.strip().lower()
    if name not in ("ideal", "vllm"):
        raise UsageError(f"--engine {engine!r} is not one of ideal, vllm, vllm@VERSION")
    if name == "ideal":
        if version:
            raise UsageError(f"--engine {engine!r}: the ideal engine has no versions")
        return name, None, None
    if "@" in engine and not version.strip():
        raise UsageError(f"--engine {engine!r}: give a version after @, e.g. vllm@0.11")
    rules, note = resolve(version or None)
    return name, rules, note


__all__ = ["VllmRules", "V0_11", "V0_33", "LATEST", "RULES", "resolve", "parse_engine"]
