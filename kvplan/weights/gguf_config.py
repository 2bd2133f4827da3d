"""GGUF architecture metadata -> a Hugging Face-style config dict, so that the
one config reader (kvplan.configs.build_model) describes the cache.

Keys read (llama.cpp's names): <arch>.block_count, embedding_length,
feed_forward_length, context_length, attention.head_count, head_count_kv (a
number, or one per layer), attention.key_length / value_length,
attention.sliding_window, attention.sliding_window_pattern, expert_count,
expert_used_count, expert_feed_forward_length.

Layer kinds follow llama.cpp (src/llama-model.cpp, load_hparams): gemma2 puts
the window on every second layer, starting with layer 0, window 4096 unless the
file says otherwise; gemma3 on five layers of every six (set_swa_pattern(6)),
only when the file gives a sliding window; a sliding_window_pattern key, when
present, overrides the period (a number) or lists the windowed layers (booleans).
Mistral 7B GGUFs carry the llama architecture.
"""

from __future__ import annotations

from ..errors import ConfigError
from .gguf import GgufFile

# GGUF general.architecture -> Hugging Face model_type
ARCHITECTURES = {
    "llama": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe",
    "gemma2": "gemma2",
    "gemma3": "gemma3_text",
}


def _pattern_types(layers: int, period: int) -> list[str]:
    # llama.cpp set_swa_pattern(n): layer il is windowed when il % n < n - 1
    return ["sliding_attention" if i % period < period - 1 else "full_attention" for i in range(layers)]


def to_config(g: GgufFile) -> dict:
    meta = g.metadata
    arch = meta.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise ConfigError(
            f"{g.path}: GGUF architecture {arch!r} is not one kvplan translates",
            f"supported: {', '.join(ARCHITECTURES)}; or pass the model's config.json and --weights {g.path}",
        )

    def key(name: str, default=...):
        value = meta.get(f"{arch}.{name}")
        if value is None:
            if default is ...:
                raise ConfigError(f"{g.path}: GGUF metadata lacks {arch}.{name}")
            return default
        return value

    layers = int(key("block_count"))
    heads = int(key("attention.head_count"))
    kv = key("attention.head_count_kv", heads)
    if isinstance(kv, list):
        distinct = set(kv)
        if len(distinct) != 1:
            raise ConfigError(f"{g.path}: per-layer head_count_kv {sorted(distinct)} is not supported for {arch}")
        kv = distinct.pop()
    hidden = int(key("embedding_length"))
    key_len = key("attention.key_length", None)
    value_len = key("attention.value_length", None)
    if key_len is not None and value_len is not None and key_len != value_len:
        raise ConfigError(f"{g.path}: key_length {key_len} != value_length {value_len}; kvplan's {arch} reader assumes equal")
    tensors = {t.name: t for t in g.tensors}
    embed = tensors.get("token_embd.weight")
    vocab = key("vocab_size", None) or (embed.shape[0] if embed is not None and embed.shape else None)
    raw = {
        "model_type": ARCHITECTURES[arch],
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "intermediate_size": int(key("feed_forward_length", 4 * hidden)),
        "num_attention_heads": heads,
        "num_key_value_heads": int(kv),
        "head_dim": int(key_len) if key_len is not None else hidden // heads,
        "max_position_embeddings": int(key("context_length", 0)) or None,
        "vocab_size": int(vocab) if vocab else 0,
        "tie_word_embeddings": "output.weight" not in tensors,
        "torch_dtype": "float16",  # llama.cpp's default KV cache type is f16
    }
    experts = key("expert_count", 0)
    if experts:
        raw["num_experts"] = int(experts)
        raw["num_experts_per_tok"] = int(key("expert_used_count"))
        raw["moe_intermediate_size"] = int(key("expert_feed_forward_length", raw["intermediate_size"]))
    window = key("attention.sliding_window", None)
    pattern = key("attention.sliding_window_pattern", None)
    if arch == "gemma2":
        window = window or 4096
        period = pattern if isinstance(pattern, int) else 2
    elif arch == "gemma3":
        period = pattern if isinstance(pattern, int) else 6
        if not window:
            period = None
    else:
        period = pattern if isinstance(pattern, int) else None
    if isinstance(pattern, list):
        raw["layer_types"] = ["sliding_attention" if p else "full_attention" for p in pattern]
    elif period and window:
        raw["layer_types"] = _pattern_types(layers, int(period))
    elif window and arch in ("qwen2", "qwen3", "qwen2moe", "qwen3moe"):
        raw["use_sliding_window"] = True
        raw["max_window_layers"] = 0
    if window:
        raw["sliding_window"] = int(window)
    elif arch in ("gemma3",):
        raw["layer_types"] = ["full_attention"] * layers
        raw["sliding_window"] = None
    return {k: v for k, v in raw.items() if v is not None or k == "sliding_window"}
