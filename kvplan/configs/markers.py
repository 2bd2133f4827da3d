"""Per-layer kinds from a config: `layer_types`, the older per-family markers, family rules.

Shared by every family: a family only names which markers it honours (in order)
and, where the config carries none, which rule derives the kinds. Each marker is
read by one function here, whatever family writes it.
"""

from __future__ import annotations

from typing import Callable

from ..errors import ConfigError
from . import kinds as K
from .compressed import compress_ratio_kinds
from .fields import Fields


def _bad(f: Fields, field: str, message: str) -> ConfigError:
    return ConfigError(f"{f.source}: {field!r} {message} (model_type {f.model_type!r})",
                       "fix the config, or report the layer kind if it is real")


def normalise(f: Fields, field: str, names: list, allowed: frozenset[str]) -> list[str]:
    """Names written in a per-layer list -> kinds; unknown names are refused, naming the layer."""
    out = []
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise _bad(f, f"{field}[{i}]", f"must be a layer-type name, got {name!r}")
        kind = K.ALIASES.get(name.lower())
        if kind is None:
            what = K.UNSUPPORTED.get(name)
            if what:
                raise ConfigError(
                    f"{f.source}: layer {i} is {name!r} ({what}), which kvplan cannot size yet",
                    "this layer kind is not supported yet",
                )
            raise _bad(f, f"{field}[{i}]", f"is {name!r}, a layer kind kvplan does not know")
        if kind not in allowed and not (kind == K.ATTENTION and allowed & {K.FULL, K.SLIDING}):
            raise _bad(f, f"{field}[{i}]", f"is {name!r}, which model_type {f.model_type!r} cannot have "
                       f"(it has {', '.join(sorted(allowed))})")
        out.append(kind)
    return out


def _from_list(field: str) -> Callable:
    def read(f: Fields, n: int | None, allowed, rest) -> list[str]:
        return normalise(f, field, f.list(field, n), allowed)
    return read


def _hybrid_override_pattern(f: Fields, n, allowed, rest) -> list[str]:
    """Nemotron-H: M = Mamba-2, * = attention, - = MLP, E = MoE (one symbol a layer)."""
    pattern = f.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or not pattern:
        raise _bad(f, "hybrid_override_pattern", "must be a non-empty string of M, *, - and E")
    if n is not None and len(pattern) != n:
        raise _bad(f, "hybrid_override_pattern", f"has {len(pattern)} symbols but the config has {n} layers")
    symbols = {"M": K.LINEAR, "*": K.ATTENTION, "-": K.NONE, "E": K.NONE}
    bad = sorted(set(pattern) - set(symbols))
    if bad:
        raise _bad(f, "hybrid_override_pattern", f"has unknown symbols {bad}; expected M, *, - or E")
    return [symbols[s] for s in pattern]


def _index_list(field: str) -> Callable:
    """Listed layer indices are attention; every other layer is the family's other kind."""
    def read(f: Fields, n, allowed, rest) -> list[str]:
        if n is None:
            raise _bad(f, field, "needs num_hidden_layers beside it")
        indices = f.int_list(field, None, minimum=0, maximum=n - 1)
        return [K.ATTENTION if i in set(indices) else rest for i in range(n)]
    return read


def _attn_type_list(f: Fields, n, allowed, rest) -> list[str]:
    """MiniMax: 1 = softmax attention, 0 = lightning (linear) attention."""
    values = f.int_list("attn_type_list", n, minimum=0, maximum=1)
    return [K.ATTENTION if v == 1 else K.LINEAR for v in values]


def _block_types(f: Fields, n, allowed, rest, field: str = "block_types") -> list[str]:
    """RecurrentGemma: the list repeats over the layers (older files write _block_types)."""
    names = f.list(field)
    if not names:
        raise _bad(f, field, "must be a non-empty list")
    cycle = normalise(f, field, names, allowed)
    return [cycle[i % len(cycle)] for i in range(n)]


def _sliding_window_pattern(f: Fields, n, allowed, rest) -> list[str]:
    """An int p: layer i is full when (i + 1) % p == 0 (Gemma 3, Cohere 2, EXAONE 4); a string
    such as "LLLG": one letter a layer, repeated (L local, G global). Without a window every
    layer is full (EXAONE 4 sets the pattern to 0 then)."""
    pattern = f.get("sliding_window_pattern")
    if isinstance(pattern, str):
        letters = {"L": K.SLIDING, "G": K.FULL}
        if not pattern or set(pattern.upper()) - set(letters):
            raise _bad(f, "sliding_window_pattern", "must be an integer or a string of L and G")
        kinds = [letters[pattern.upper()[i % len(pattern)]] for i in range(n)]
    else:
        kinds = period_kinds(n, f.int("sliding_window_pattern"))
    return kinds if f.get("sliding_window") is not None else [K.FULL] * n


def period_kinds(n: int, period: int) -> list[str]:
    return [K.FULL if (i + 1) % period == 0 else K.SLIDING for i in range(n)]


def _cross_attention_layers(f: Fields, n, allowed, rest) -> list[str]:
    """Mllama: listed layers cross-attend to image tokens; the others are self-attention."""
    listed = set(f.int_list("cross_attention_layers", None, minimum=0, maximum=n - 1))
    return [K.CROSS if i in listed else K.ATTENTION for i in range(n)]


def _kimi_lists(f: Fields, n, allowed, rest) -> list[str]:
    """Kimi-Linear: linear_attn_config lists its MLA and KDA layers, counting from 1;
    every layer must be in exactly one of them."""
    full = f.int_list("linear_attn_config.full_attn_layers", None, minimum=1, maximum=n)
    kda = f.int_list("linear_attn_config.kda_layers", None, minimum=1, maximum=n) or []
    kinds: list[str | None] = [None] * n
    for index in full:
        kinds[index - 1] = K.FULL
    for index in kda:
        if kinds[index - 1] is not None:
            raise _bad(f, "linear_attn_config.kda_layers", f"lists layer {index}, which full_attn_layers lists too")
        kinds[index - 1] = K.LINEAR
    missing = [i + 1 for i, kind in enumerate(kinds) if kind is None]
    if missing:
        raise _bad(f, "linear_attn_config", f"puts layers {missing[:5]} in neither full_attn_layers nor kda_layers")
    return kinds  # type: ignore[return-value]


MARKERS: dict[str, Callable] = {
    "cross_attention_layers": _cross_attention_layers,
    "linear_attn_config.full_attn_layers": _kimi_lists,
    "layers_block_type": _from_list("layers_block_type"),
    "hybrid_override_pattern": _hybrid_override_pattern,
    "attn_layer_indices": _index_list("attn_layer_indices"),
    "full_attn_idxs": _index_list("full_attn_idxs"),
    "attn_type_list": _attn_type_list,
    "block_types": _block_types,
    "_block_types": lambda f, n, allowed, rest: _block_types(f, n, allowed, rest, "_block_types"),
    "sliding_window_pattern": _sliding_window_pattern,
    "compress_ratios": compress_ratio_kinds,
}


def marker_length(f: Fields, marker: str) -> int | None:
    """Layers a marker implies by itself (a per-layer list or pattern)."""
    value = f.get(marker)
    if marker in ("layers_block_type", "layer_types", "hybrid_override_pattern", "attn_type_list"):
        if isinstance(value, (list, str)):
            return len(value)
    return None


# -- family rules for configs that carry no per-layer marker ------------------

def alternate_sliding_first(f: Fields, n: int) -> list[str]:
    """Gemma 2, gpt-oss: even layers sliding, odd layers full."""
    return [K.SLIDING if i % 2 == 0 else K.FULL for i in range(n)]


def every_period(field: str, default: int, offset_field: str | None = None, default_offset: int = 0,
                 hit: str = K.ATTENTION, miss: str = K.LINEAR, one_based: bool = False) -> Callable:
    """Layer i is `hit` when i % period == offset (or (i + 1) % period == 0), else `miss`."""
    def derive(f: Fields, n: int) -> list[str]:
        period = f.int(field, default=default)
        offset = f.int(offset_field, default=default_offset, minimum=0) if offset_field else default_offset
        if offset >= period:
            raise _bad(f, offset_field or field, f"offset {offset} must be below the period {period}")
        if one_based:
            return [hit if (i + 1) % period == 0 else miss for i in range(n)]
        return [hit if i % period == offset else miss for i in range(n)]
    return derive


def bailing_kinds(f: Fields, n: int) -> list[str]:
    """Bailing hybrids: layer i is MLA (full) when (i + 1) % layer_group_size == 0 (6), else linear; Ling /
    Ring 3.0 (BailingMoeV3ForCausalLM, vLLM 0.33 bailing_moe_v3.py _is_kda_layer) also makes the
    n % layer_group_size trailing layers MLA, where V2.5 (bailing_moe_linear.py is_linear_layer) keeps them
    linear."""
    names = f.get("architectures")
    # Ming V3 ASR's text_config inherits MingV3ASRForConditionalGeneration, whose vLLM 0.34 class builds
    # BailingMoeV3ForCausalLM (ming_v3_asr.py)
    v3 = isinstance(names, list) and bool(names) and str(names[0]).startswith(("BailingMoeV3", "MingV3ASR"))
    v25 = isinstance(names, list) and bool(names) and str(names[0]) == "BailingMoeV2_5ForCausalLM"
    # the config class's default: BailingMoeV2_5Config (Ring-V2.5 remote code) 5, BailingHybridConfig 6
    period = f.int("layer_group_size", default=5 if v25 else 6, minimum=1)
    tail = n // period * period if v3 else n
    return [K.FULL if (i + 1) % period == 0 or i >= tail else K.LINEAR for i in range(n)]


def from_max_window_layers(f: Fields, n: int) -> list[str]:
    """Qwen 2/3 (+MoE): with use_sliding_window, layers with index >= max_window_layers
    use the window (transformers' layer_types derivation)."""
    first = f.int("max_window_layers", default=n, minimum=0, maximum=10**9)
    return [K.SLIDING if i >= first else K.FULL for i in range(n)]


def pattern_default(period: int) -> Callable:
    """Gemma 3 / 3n: full every `period`-th layer when the config names no pattern."""
    def derive(f: Fields, n: int) -> list[str]:
        return period_kinds(n, period)
    return derive


def gpt_neo_attention_types(f: Fields, n: int) -> list[str]:
    """GPT-Neo: attention_types [[pattern, count], ...] expands to one name a layer
    ("global" full, "local" windowed by window_size); the expansion must cover n layers."""
    spec = f.list("attention_types")
    if spec is None:
        spec = [[["global", "local"], n // 2]]
    names: list = []
    for item in spec:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list) and isinstance(item[1], int)
                and not isinstance(item[1], bool) and 0 <= item[1] <= 10_000):
            raise _bad(f, "attention_types", "must list [pattern, count] pairs such as [[\"global\", \"local\"], 12]")
        names.extend(item[0] * item[1])
    if len(names) != n:
        raise _bad(f, "attention_types", f"expands to {len(names)} layers but the config has {n}")
    return normalise(f, "attention_types", names, frozenset({K.FULL, K.SLIDING}))


def llama4_kinds(f: Fields, n: int) -> list[str]:
    """Llama 4: no_rope_layers (1 = RoPE, chunked local attention; 0 = NoPE, full) or, when it is
    empty, every no_rope_layer_interval-th layer is NoPE. Without attention_chunk_size every
    layer is full (vLLM's reading; transformers cannot run that config)."""
    flags = f.get("no_rope_layers")
    if flags:
        values = f.int_list("no_rope_layers", n, minimum=0, maximum=1)
    else:
        interval = f.int("no_rope_layer_interval", default=4)
        values = [int((i + 1) % interval != 0) for i in range(n)]
    local = K.CHUNKED if f.has("attention_chunk_size") else K.FULL
    return [local if v else K.FULL for v in values]


def kimi_default(f: Fields, n: int) -> list[str]:
    """Kimi-Linear with no lists: MLA on layers 4, 8, ... (i and i % 4 == 0), KDA elsewhere."""
    return [K.FULL if i and i % 4 == 0 else K.LINEAR for i in range(n)]


def glm_dsa_indexers(f: Fields, kinds: list[str]) -> list[str]:
    """GLM MoE DSA: every layer is MLA (indexed_attention); only layers whose indexer_types entry
    is "full" keep indexer keys, "shared" ones reuse another layer's selection. Without
    indexer_types: index_topk_pattern (F/S letters), else layer i is full iff
    max(i - offset + 1, 0) % freq == 0 (index_topk_freq, index_skip_topk_offset)."""
    n = len(kinds)
    types = f.list("indexer_types", n)
    if types is None:
        pattern = f.get("index_topk_pattern")
        if isinstance(pattern, str):
            letters = {"F": "full", "S": "shared"}
            if len(pattern) != n or set(pattern) - set(letters):
                raise _bad(f, "index_topk_pattern", f"must be {n} letters F or S")
            types = [letters[c] for c in pattern]
        else:
            freq = max(f.int("index_topk_freq", default=1), 1)
            offset = f.int("index_skip_topk_offset", default=2, minimum=0)
            types = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n)]
    return _indexer_kinds(f, kinds, types)


def mistral_large4_indexers(f: Fields, kinds: list[str]) -> list[str]:
    """Mistral Large 4: GLM MoE DSA's indexer rule (index_topk_pattern may also be a list of 'full' /
    'shared'). KV sharing between layers (kv_source_layers naming an earlier layer) is refused: a sharing
    layer can still keep its own indexer keys, which kvplan cannot describe yet."""
    n = len(kinds)
    sources = f.int_list("kv_source_layers", n, minimum=0, maximum=n - 1)
    if sources is not None and any(source != i for i, source in enumerate(sources)):
        raise ConfigError(f"{f.source}: kv_source_layers shares latent caches between layers, where sharing layers "
                          "may keep their own indexer keys; kvplan cannot size that yet "
                          f"(model_type {f.model_type!r})", "this layer-sharing form is not supported yet")
    pattern = f.get("index_topk_pattern")
    if f.list("indexer_types", n) is None and isinstance(pattern, list):
        return _indexer_kinds(f, kinds, f.list("index_topk_pattern", n))
    return glm_dsa_indexers(f, kinds)


def mistral_large4_rope(f: Fields, index: int, kind: str) -> dict:
    """Mistral Large 4's NoPE layers (no_rope_layers 0; absent: every no_rope_layer_interval-th, 4) cache a
    latent without the rope key: kv_lora_rank wide only."""
    n = f.int("num_hidden_layers")
    flags = f.int_list("no_rope_layers", n, minimum=0, maximum=1)
    if flags is None:
        interval = f.int("no_rope_layer_interval", default=4)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    return {} if flags[index] else {"qk_rope_head_dim": 0}


def hy_v4_indexers(f: Fields, kinds: list[str]) -> list[str]:
    """HY-V4: as GLM MoE DSA (MLA on every layer, indexer keys where indexer_types is "full"); without
    indexer_types, HYV4Config makes layer 0 and every layer with (i - 1) % 4 == 0 full."""
    n = len(kinds)
    types = f.list("indexer_types", n)
    if types is None:
        types = ["full" if i == 0 or (i - 1) % 4 == 0 else "shared" for i in range(n)]
    return _indexer_kinds(f, kinds, types)


def _indexer_kinds(f: Fields, kinds: list[str], types: list) -> list[str]:
    out = []
    for i, (t, kind) in enumerate(zip(types, kinds)):
        if t not in ("full", "shared"):
            raise _bad(f, f"indexer_types[{i}]", f"must be 'full' or 'shared', got {t!r}")
        out.append(K.FULL if kind == K.INDEXED and t == "shared" else kind)
    return out


def qwen2_moe_windows(f: Fields, n: int) -> list[str]:
    """Qwen2-MoE (with use_sliding_window): even layers below max_window_layers slide; odd
    layers and every layer from max_window_layers on are full (Qwen2MoeConfig)."""
    last = f.int("max_window_layers", default=28, minimum=0, maximum=10**9)
    return [K.SLIDING if (i + 1) % 2 != 0 and i < last else K.FULL for i in range(n)]


def cohere2_moe_windows(f: Fields, n: int) -> list[str]:
    """Cohere2-MoE with no layer_types (Cohere2MoeConfig): the first first_k_dense_replace (dense) layers
    follow prefix_dense_sliding_window_pattern (default 1: all full), the rest sliding_window_pattern
    (default 4) counted again from their first layer; layer i of a run is full when (i + 1) % pattern == 0."""
    first = f.int("first_k_dense_replace", default=0, minimum=0, maximum=n)
    prefix = period_kinds(first, f.int("prefix_dense_sliding_window_pattern", default=1))
    return prefix + period_kinds(n - first, f.int("sliding_window_pattern", default=4))


def first_of_four_full(f: Fields, n: int) -> list[str]:
    """Granite-SWA (dense and MoE) with no layer_types: layer i is full when i % 4 == 0, else sliding."""
    return [K.FULL if i % 4 == 0 else K.SLIDING for i in range(n)]


def last_of_four_full(f: Fields, n: int) -> list[str]:
    """Muse Spark / Glimmer text models with no layer_types: full when (n - 1 - i) % 4 == 0 (every 4th layer
    counted back from the last), sliding otherwise."""
    return [K.FULL if (n - 1 - i) % 4 == 0 else K.SLIDING for i in range(n)]


def olmo3_windows(f: Fields, n: int) -> list[str]:
    """Olmo 3: every 4th layer full, the others sliding (the period is fixed in Olmo3Config)."""
    return period_kinds(n, 4)


def lfm2_kinds(f: Fields, n: int) -> list[str]:
    """LFM2 with no layer_types: full_attn_idxs are attention, the rest short-conv; with neither,
    transformers makes EVERY layer attention."""
    listed = f.int_list("full_attn_idxs", None, minimum=0, maximum=n - 1)
    if listed is None:
        return [K.FULL] * n
    return [K.FULL if i in set(listed) else K.CONV for i in range(n)]


def lfm3_kinds(f: Fields, n: int) -> list[str]:
    """LFM3 with no layer_types (Lfm3Config): layer i is full when i % 4 == 2, sliding when i % 4 == 0 and
    i > 0, else a short-conv layer."""
    return [K.FULL if i % 4 == 2 else K.SLIDING if i % 4 == 0 and i > 0 else K.CONV for i in range(n)]


def last_layer_full(f: Fields, kinds: list[str]) -> list[str]:
    """Gemma 4: the last layer is always full attention (the config forces it)."""
    return kinds[:-1] + [K.FULL] if kinds and kinds[-1] == K.SLIDING else kinds


def gemma4_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """Gemma 4 and Gemma 4 Unified: the last layer is full. use_bidirectional_attention "vision" (the 26B-A4B
    and 31B configs; Unified's default) lets image tokens attend both ways and leaves the text cache causal
    (transformers 5.23 modeling_gemma4.py: is_causal = use_bidirectional_attention != "all"); "all" makes an
    encoder, refused."""
    if f.get("use_bidirectional_attention") == "all":
        raise _bad(f, "use_bidirectional_attention", "is 'all': bidirectional (embedding) attention, not a "
                   "decoder with a KV cache")
    return last_layer_full(f, kinds)


def step3p5_kinds(f: Fields, n: int) -> list[str]:
    """Step 3.5 / 3.7 with no layer_types: sparse_attention_config's sparse_attention_freq makes
    MiniMax-M3-style sparse layers, which Step's record does not read (refused), else every layer is full."""
    sparse = f.obj("sparse_attention_config") or {}
    if any(sparse.get("sparse_attention_freq") or []):
        raise ConfigError(f"{f.source}: sparse_attention_config.sparse_attention_freq makes lightning-index sparse "
                          f"attention layers, which kvplan cannot size yet (model_type {f.model_type!r})",
                          "this layer kind is not supported yet")
    return [K.FULL] * n


_PER_LAYER_CACHE_KEYS = ("head_dim", "num_key_value_heads")
_PER_LAYER_OTHER_KEYS = ("num_attention_heads",)


def per_layer_config_dims(f: Fields, index: int, kind: str) -> dict:
    """transformers' per_layer_config ({"3": {...}}): a layer's own num_key_value_heads / head_dim; query heads
    do not change the cache; any other key is refused by name (kvplan does not read it per layer)."""
    table = f.obj("per_layer_config") or {}
    out: dict = {}
    for key, entry in table.items():
        if not isinstance(key, str) or not key.isdigit() or not isinstance(entry, dict):
            raise _bad(f, "per_layer_config", "must map layer indices (\"3\") to objects")
        if int(key) != index:
            continue
        for name, value in entry.items():
            if name in _PER_LAYER_CACHE_KEYS:
                out[name] = f.check_int(f"per_layer_config.{key}.{name}", value)
            elif name not in _PER_LAYER_OTHER_KEYS:
                raise _bad(f, f"per_layer_config.{key}.{name}", "is a per-layer setting kvplan does not read")
    return out


def _dots3_use_dsa(f: Fields) -> bool | None:
    """Dots3NoteTextConfig's use_dsa: as written; absent, None when the file has per_layer_config (a canonical
    file), else True (legacy files call their DSA layers "full_attention")."""
    if "use_dsa" in f.raw:
        return f.flag("use_dsa")
    return None if "per_layer_config" in f.raw else True


def dots3_kinds(f: Fields, n: int) -> list[str]:
    """Dots3-Note with no layer_types: DSA (or, with use_dsa false, plain MLA) layers where i < 2 or
    i % 4 == 1 (every layer without use_sliding_window), sliding-window MLA elsewhere."""
    full = K.FULL if _dots3_use_dsa(f) is False else K.INDEXED
    sliding = f.flag("use_sliding_window", default=True)
    return [full if not sliding or i < 2 or i % 4 == 1 else K.SLIDING for i in range(n)]


def dots3_dsa(f: Fields, kinds: list[str]) -> list[str]:
    """Dots3-Note's use_dsa renames the layer types: true makes "full_attention" layers DSA (latent + indexer
    keys), false makes "indexed_attention" layers plain MLA."""
    use_dsa = _dots3_use_dsa(f)
    if use_dsa is None:
        return kinds
    old, new = (K.FULL, K.INDEXED) if use_dsa else (K.INDEXED, K.FULL)
    return [new if kind == old else kind for kind in kinds]


_DOTS3_SWA_DEFAULTS = {"kv_lora_rank": 1024, "head_dim": 256, "qk_nope_head_dim": 192}


def dots3_layer_dims(f: Fields, index: int, kind: str) -> dict:
    """Dots3-Note's per-layer latent widths: per_layer_config entries (kv_lora_rank, qk_rope_head_dim) when the
    file has them; else its sliding layers take swa_kv_lora_rank (1024) and swa_qk_rope_head_dim (default
    swa_head_dim 256 - swa_qk_nope_head_dim 192 = 64), as Dots3NoteTextConfig builds them."""
    table = f.obj("per_layer_config")
    if table is not None:
        out: dict = {}
        for key, entry in table.items():
            if not isinstance(key, str) or not key.isdigit() or not isinstance(entry, dict):
                raise _bad(f, "per_layer_config", "must map layer indices (\"3\") to objects")
            if int(key) == index:
                for name in ("kv_lora_rank", "qk_rope_head_dim"):
                    if name in entry:
                        out[name] = f.check_int(f"per_layer_config.{key}.{name}", entry[name], minimum=0)
        return out
    if kind != K.SLIDING:
        return {}
    swa = {name: f.int(f"swa_{name}", default=default) for name, default in _DOTS3_SWA_DEFAULTS.items()}
    rope = f.int("swa_qk_rope_head_dim", default=swa["head_dim"] - swa["qk_nope_head_dim"], minimum=0)
    return {"kv_lora_rank": swa["kv_lora_rank"], "qk_rope_head_dim": rope}


def gemma4_layer_dims(f: Fields, index: int, kind: str) -> dict:
    """Gemma 4's per-layer widths: a per_layer_config {"05": {"head_dim": .., "num_key_value_heads": ..}}
    when the config has one; else full layers use global_head_dim (default 512) and, when
    attention_k_eq_v, num_global_key_value_heads."""
    table = f.obj("per_layer_config")
    out: dict = {}
    if table is not None:
        for key, entry in table.items():
            if not isinstance(key, str) or not key.isdigit() or not isinstance(entry, dict):
                raise _bad(f, "per_layer_config", "must map layer indices (\"05\") to objects")
            if int(key) == index:
                for name in ("head_dim", "num_key_value_heads"):
                    if name in entry:
                        out[name] = f.check_int(f"per_layer_config.{key}.{name}", entry[name])
        return out
    if kind == K.FULL:
        out["head_dim"] = f.int("global_head_dim", default=512)
        if f.flag("attention_k_eq_v", default=False) and f.has("num_global_key_value_heads"):  # the classes' default
            out["num_key_value_heads"] = f.int("num_global_key_value_heads")
    return out


def mimo_v2_sliding(f: Fields, n: int) -> list[bool]:
    """Which of the n layers slide, with no layer_types. MiMo-V2-Flash (MiMoV2FlashConfig): layer 0 and every 6th
    layer ((i + 1) % 6 == 0) full, the rest sliding; hub files also write hybrid_layer_pattern (1 sliding, 0 full),
    which transformers does not read: it must agree with that rule, or the reading would depend on the engine.
    MiMo-V2.x (model_type "mimo_v2", remote code; transformers 5.25 has no such type) is served by vLLM 0.34
    mimo_v2.py, whose MiMoV2DecoderLayer.is_compressed_softmax_layer reads hybrid_layer_pattern[i] == 1: its
    pattern is the reading (MiMo-V2.5-Pro's full layers are 0, 7, 15, ..., 69)."""
    rule = [not (i == 0 or (i + 1) % 6 == 0) for i in range(n)]
    if not f.has("hybrid_layer_pattern"):
        return rule
    pattern = [v == 1 for v in f.int_list("hybrid_layer_pattern", n, minimum=0, maximum=1)]
    if f.model_type == "mimo_v2":
        return pattern
    if pattern != rule:
        raise _bad(f, "hybrid_layer_pattern", "disagrees with transformers' rule for this family (layer 0 and "
                   "every 6th layer full), which ignores it; give layer_types to say which layers slide")
    return rule


def mimo_v2_swa_kv(f: Fields) -> int:
    """K/V heads of a sliding layer. MiMo-V2-Flash: 2 x num_key_value_heads (MiMoV2FlashAttention); hub files also
    write swa_num_key_value_heads / swa_head_dim / swa_v_head_dim, which transformers does not read: each must
    agree with what it builds. MiMo-V2.x ("mimo_v2"): vLLM 0.34 mimo_v2.py MiMoV2DecoderLayer builds the sliding
    layers with swa_num_key_value_heads (MiMo-V2.5-Pro: 8, num_key_value_heads 8) and swa_num_attention_heads /
    swa_head_dim / swa_v_head_dim, which kvplan reads only where they equal the full layers' widths."""
    kv = f.int("num_key_value_heads")
    if f.model_type == "mimo_v2":
        same = {"swa_num_attention_heads": f.int("num_attention_heads"), "swa_head_dim": f.int("head_dim"),
                "swa_v_head_dim": f.int("value_head_dim")}
        for name, value in same.items():
            if f.has(name) and f.int(name) != value:
                raise _bad(f, name, f"is {f.int(name)}, not the full layers' {value}: kvplan sizes both kinds "
                           "of layer with one width")
        return f.int("swa_num_key_value_heads", default=2 * kv)
    expected = {"swa_num_key_value_heads": 2 * kv, "swa_head_dim": f.int("head_dim"),
                "swa_v_head_dim": f.int("value_head_dim")}
    for name, value in expected.items():
        if f.has(name) and f.int(name) != value:
            raise _bad(f, name, f"is {f.int(name)}, but transformers builds the sliding layers with {value} "
                       "(it does not read this field); kvplan cannot tell which one the checkpoint holds")
    return 2 * kv


def mimo_v2_flash_kinds(f: Fields, n: int) -> list[str]:
    """MiMo-V2-Flash / MiMo-V2.x with no layer_types: sliding where mimo_v2_sliding says so, else full."""
    return [K.SLIDING if s else K.FULL for s in mimo_v2_sliding(f, n)]


def mimo_v2_flash_dims(f: Fields, index: int, kind: str) -> dict:
    """A sliding layer's K/V heads (mimo_v2_swa_kv)."""
    swa = mimo_v2_swa_kv(f)
    return {"num_key_value_heads": swa} if kind == K.SLIDING else {}


def inkling_kinds(f: Fields, n: int) -> list[str]:
    """Inkling with no layer_types: local_layer_ids are 'hybrid_sliding', the rest 'hybrid'; without them
    every layer with (i + 1) % 6 != 0 slides (InklingTextConfig)."""
    listed = f.int_list("local_layer_ids", None, minimum=0, maximum=n - 1)
    local = set(listed) if listed is not None else {i for i in range(n) if (i + 1) % 6}
    return [K.HYBRID_SLIDING if i in local else K.HYBRID for i in range(n)]


def inkling2_kinds(f: Fields, n: int) -> list[str]:
    """Inkling-2 with no layer_types (Inkling2TextConfig; it has no local_layer_ids): 'hybrid' when
    (i + 1) % 6 == 0, else 'hybrid_sliding'."""
    return [K.HYBRID if (i + 1) % 6 == 0 else K.HYBRID_SLIDING for i in range(n)]


def inkling_dims(f: Fields, index: int, kind: str) -> dict:
    """Inkling's sliding layers use their own KV heads and head width (swa_num_key_value_heads, swa_head_dim)."""
    if kind == K.HYBRID_SLIDING:
        return {"num_key_value_heads": f.int("swa_num_key_value_heads"), "head_dim": f.int("swa_head_dim")}
    return {}


def zamba_default(f: Fields, n: int) -> list[str]:
    """Zamba with no layers_block_type: layer 2 is hybrid, and layer j >= 3 is hybrid iff
    (j - 3) % attn_layer_period == attn_layer_offset (ZambaConfig); the rest Mamba."""
    period = f.int("attn_layer_period", default=6)
    offset = f.int("attn_layer_offset", default=4, minimum=0)
    head = [K.LINEAR, K.LINEAR, K.HYBRID][:n]
    return head + [K.HYBRID if j % period == offset else K.LINEAR for j in range(n - len(head))]


def zamba2_default(f: Fields, n: int) -> list[str]:
    """Zamba2's default layer list (54 layers; hybrid at 6, 12, ..., 42, 47, 51)."""
    default = ([K.LINEAR] + ([K.LINEAR] * 5 + [K.HYBRID]) * 7 + [K.LINEAR] * 4 + [K.HYBRID] + [K.LINEAR] * 3
               + [K.HYBRID] + [K.LINEAR] * 2)
    if n != len(default):
        raise _bad(f, "layers_block_type", f"is needed: Zamba2's default list has {len(default)} layers, not {n}")
    return default


def olmo_hybrid_default(f: Fields, n: int) -> list[str]:
    """OLMo-Hybrid: full attention where i % 4 == 3, Gated DeltaNet elsewhere; with fewer than
    4 layers the last layer is full."""
    kinds = [K.FULL if i % 4 == 3 else K.LINEAR for i in range(n)]
    if K.FULL not in kinds:
        kinds[-1] = K.FULL
    return kinds


def smollm3_windows(f: Fields, n: int) -> list[str]:
    """SmolLM3 (with use_sliding_window): the NoPE layers (no_rope_layers 0, by default every
    no_rope_layer_interval-th layer) slide, the RoPE layers are full."""
    flags = f.int_list("no_rope_layers", n, minimum=0, maximum=1)
    if flags is None:
        interval = f.int("no_rope_layer_interval", default=4)
        flags = [int((i + 1) % interval != 0) for i in range(n)]
    return [K.FULL if rope else K.SLIDING for rope in flags]
