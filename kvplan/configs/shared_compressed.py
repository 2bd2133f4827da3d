"""DeepSeek-V4.1: compressed caches that groups of layers share.

Read from vLLM 0.33.0's DeepSeek-V4.1 model (models/deepseek_v41/attention.py
DeepseekV4Attention / DeepseekV4IndexerCache / DeepseekV4Indexer, compressor.py
DeepseekCompressor / CompressorStateCache) and its config class
(transformers_utils/configs/deepseek_v41.py, which lifts text_config's fields to
the top). Every layer keeps ONE K/V head of head_dim (K and V are the same
vector, rope in its last qk_rope_head_dim columns) for its own newest
sliding_window tokens. compress_ratios gives each layer 0 (that window only),
1 (a full-length compressed cache: one entry per token) or 2 (one entry per 2
tokens). The compressed caches are not per layer:

- a KV source (kv_source_layer_ids) stores the compressed entries, and its
  compressor keeps the open group (ratio 2 only: ratio rows of kv and score,
  2 x head_dim float32 a row; ratio 1 pools nothing);
- every later compressed layer reads the entries of the newest source at or
  below it and stores only its window;
- index sources (index_source_layer_ids) run an indexer that scores index keys
  (index_head_dim per entry) and picks index_topk entries; the keys are stored
  by the KV source (which must itself be an index source), and the other index
  sources scan that source's keys. Layers that are not index sources reuse the
  newest index source's picks and read no keys.

A decode step of a compressed layer reads the index_topk entries picked plus its
window; an index source also reads every index key of its source. (vLLM's
opt-in indexer_sparse_logits scores only the candidate blocks that
candidate_source_layer_id publishes; by default every key is scored.) Layers
past num_hidden_layers (the MTP layers) are not cached.
"""

from __future__ import annotations

from ..core.layers import LayerSpec, RecurrentState, TokenCache, TokenPolicy
from ..core.storage import FP32
from ..errors import ConfigError
from . import kinds as K
from .compressed import EXPERT_BYTES, _by_module, _nvfp4_experts, _shared_kv
from .fields import Fields
from .params_mla_more import deepseek_v41_parts

DEFAULTS = {"head_dim": 512, "qk_rope_head_dim": 64, "sliding_window": 128, "index_head_dim": 128,
            "index_topk": 512, "num_key_value_heads": 1}
RATIOS = (0, 1, 2)  # DeepseekV4Attention: "only 0 (sliding window), 1 and 2 are supported"


def ratios(f: Fields, n: int) -> list[int]:
    """compress_ratios for the n decoder layers (the list may also cover the MTP layers)."""
    values = f.list("compress_ratios")
    mtp = f.int("num_nextn_predict_layers", default=0, minimum=0)
    if len(values) not in (n, n + mtp):
        raise ConfigError(f"{f.source}: 'compress_ratios' has {len(values)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", f"give {n} entries (or {n + mtp} with the MTP layers)")
    for i, ratio in enumerate(values[:n]):
        if isinstance(ratio, bool) or ratio not in RATIOS:
            raise ConfigError(f"{f.source}: compress_ratios[{i}] is {ratio!r}; DeepSeek-V4.1 layers use 0 (sliding "
                              "window only), 1 (full-length compressed cache) or 2 (one entry per 2 tokens)",
                              "fix the config's compress_ratios")
    return list(values[:n])


def _layer_ids(f: Fields, name: str, n: int) -> list[int]:
    ids = f.list(name)
    for i, value in enumerate(ids):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            raise ConfigError(f"{f.source}: {name}[{i}] is {value!r}, not a layer index below {n}",
                              f"fix the config's {name}")
    if any(b <= a for a, b in zip(ids, ids[1:])):
        raise ConfigError(f"{f.source}: {name} {ids} is not strictly increasing", f"fix the config's {name}")
    return ids


def _source_of(sources: list[int], i: int) -> int | None:
    below = [s for s in sources if s <= i]
    return below[-1] if below else None


def kinds(f: Fields, n: int) -> list[str]:
    """The layer kinds `kvplan models` names: 0 -> sliding, 1 and 2 -> compressed sparse."""
    return [K.SLIDING if r == 0 else K.CSA for r in ratios(f, n)]


def layers(f: Fields, n: int, kinds: list[str] | None = None) -> list[LayerSpec]:
    """What each of the n decoder layers stores, and what it reads of its KV source's caches."""
    r = ratios(f, n)
    kv_sources = _layer_ids(f, "kv_source_layer_ids", n)
    index_sources = _layer_ids(f, "index_source_layer_ids", n)
    if f.int("num_key_value_heads", minimum=1) != 1:
        raise ConfigError(f"{f.source}: DeepSeek-V4.1 attention has one shared K/V head, but num_key_value_heads is "
                          f"{f.int('num_key_value_heads')}", "fix the config (num_key_value_heads 1)")
    window = f.int("sliding_window", minimum=1)
    topk = f.int("index_topk", minimum=1)
    index_dim = f.int("index_head_dim", minimum=1)
    head = f.int("head_dim", minimum=1)
    for name, ids in (("kv_source_layer_ids", kv_sources), ("index_source_layer_ids", index_sources)):
        for i in ids:
            if r[i] == 0:
                raise ConfigError(f"{f.source}: {name} lists layer {i}, a sliding-window-only layer "
                                  "(compress_ratios 0) that has no compressed cache", f"fix the config's {name}")
    own_window = _shared_kv(f, TokenPolicy(window_tokens=window), f"shared K/V window {window}")
    out: list[LayerSpec] = []
    for i in range(n):
        if r[i] == 0:
            out.append(LayerSpec(caches=(own_window,)))
            continue
        source, index = _source_of(kv_sources, i), _source_of(index_sources, i)
        if source is None or index is None:
            which = "kv_source_layer_ids" if source is None else "index_source_layer_ids"
            raise ConfigError(f"{f.source}: layer {i} is compressed (compress_ratios {r[i]}) but no layer at or "
                              f"below it is in {which}", f"fix the config's {which}")
        if r[source] != r[i]:
            raise ConfigError(f"{f.source}: layer {i} compresses 1/{r[i]} but reads the 1/{r[source]} cache of "
                              f"its KV source, layer {source}", "a change of compress ratio needs a new KV source")
        if source not in index_sources:
            raise ConfigError(f"{f.source}: KV source layer {source} is not an index source, so nothing stores "
                              "the index keys its layers are picked by", "list it in index_source_layer_ids")
        entries = TokenPolicy(compress_ratio=r[i], compress_topk=topk, compress_selector_keys=False)
        keys = TokenCache(kind="indexer", heads=1, key_dim=index_dim,
                          policy=TokenPolicy(compress_ratio=r[i], compress_selector_keys=False),
                          label=f"index keys 1/{r[i]}")
        if i == source:
            main = _shared_kv(f, TokenPolicy(compress_ratio=r[i], compress_topk=topk, compress_window=window,
                                             compress_selector_keys=False),
                              f"CSA 1/{r[i]} (KV source) + window {window}")
            state = None
            if r[i] > 1:  # the open group: ratio rows of kv and score, head_dim each, float32
                state = RecurrentState("compressor", 0, r[i] * 2 * head, conv_storage=FP32, ssm_storage=FP32,
                                       tp_replicated=True)
            out.append(LayerSpec(caches=(main, keys), state=state))
            continue
        view = _shared_kv(f, entries, f"top {topk} of 1/{r[i]} entries")
        borrows = (view, keys) if i in index_sources else (view,)
        out.append(LayerSpec(caches=(own_window,), borrows=borrows, borrows_from=source))
    return out


def weight_format(f: Fields, layers: list, total: int, rest_dtype: str, rest_bytes: float):
    """(label, average bytes per parameter, bytes each TP rank holds whole) of the text model as the checkpoint
    stores it: the routed experts in expert_dtype (quantization_config's, as vLLM's config class lifts it; FP4: 4
    bits + one E8M0 scale per 32), the quantized linears in FP8 with one scale per weight_block_size block (32 x
    32, UE8M0: 1 B), the rest in bf16 and float32 as vLLM allocates them. Module by module from kvplan's table
    (configs/weight_tables/mla.py deepseek_v41, sized as DeepSeek-V4's: compressed._by_module) where the experts'
    dtype is one it sizes and the table adds up to `total`, which also gives the bytes vLLM holds whole on every
    TP rank; else by dtype from params_mla_more.deepseek_v41_parts, with nothing counted whole."""
    if not total:
        return rest_dtype, rest_bytes, 0
    quant = f.get("quantization_config")
    quant = quant if isinstance(quant, dict) else {}
    fp8 = str(quant.get("quant_method", "")).lower() == "fp8"
    expert_dtype = str(f.text("expert_dtype") or quant.get("expert_dtype") or ("fp4" if fp8 else "")).lower()
    block = quant.get("weight_block_size")
    scale = 1 if str(quant.get("scale_fmt", "")).lower() == "ue8m0" else 4
    per_block = (block[0] * block[1] if isinstance(block, list) and len(block) == 2
                 and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block) else None)
    linear = 1 + scale / per_block if fp8 and per_block else (1.0 if fp8 else rest_bytes)
    rest = "fp8" if fp8 else rest_dtype
    if fp8 and expert_dtype in EXPERT_BYTES:
        by_module = _by_module(f, layers, total, expert_dtype, linear)
        if by_module is not None:
            experts = "nvfp4" if _nvfp4_experts(f, expert_dtype) else expert_dtype
            return (f"{experts} experts + {rest}",) + by_module
    parts = deepseek_v41_parts(f, layers)
    experts = EXPERT_BYTES.get(expert_dtype, linear)
    stored = parts["experts"] * experts + parts["fp8"] * linear + parts["bf16"] * 2 + parts["fp32"] * 4
    label = f"{expert_dtype or rest_dtype} experts + {rest}"
    return label, stored / total, 0


def engram_note(f: Fields) -> tuple[str, ...]:
    """The Engram n-gram tables: one per engram layer, engram_num_embeddings rows of engram_head_dim FP8
    values and one UE8M0 scale per 32 (common/engram.py ParallelEngramEmbedding); vLLM keeps them in pinned
    host memory unless --engram-config '{"cpu_offload": false}' (config/engram.py EngramConfig)."""
    rows = f.list("engram_num_embeddings") if f.has("engram_num_embeddings") else []
    if not rows or not all(isinstance(r, int) and not isinstance(r, bool) and r > 0 for r in rows):
        return ()
    width = f.int("engram_head_dim", minimum=1)
    size = sum(rows) * (width + -(-width // 32))
    return (f"Engram n-gram tables ({sum(rows) * width / 1e9:,.1f}B parameters, {size / 1e9:,.2f} GB with their "
            "scales) are not in the weights: vLLM keeps them in pinned host memory (its default, EngramConfig "
            "cpu_offload)",)
