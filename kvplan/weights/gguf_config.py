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

Every value is checked where it is read, as kvplan.configs.fields checks a
config.json, and before anything is sized by it: counts are integers (not
booleans, floats, NaN, text or arrays) within the same bounds (at most 10,000
layers), and each bad value is one line naming the file and the metadata key.
"""

from __future__ import annotations

from typing import Any

from ..configs.fields import DEFAULT_MAXIMUM, MAX_LAYERS, MAXIMUM
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


# upper bounds of the <arch>.* counts: config.json's for the same fields (kvplan.configs.fields)
_MAXIMUM = {
    "block_count": MAX_LAYERS,
    "embedding_length": MAXIMUM["hidden_size"],
    "feed_forward_length": MAXIMUM["intermediate_size"],
    "expert_feed_forward_length": MAXIMUM["intermediate_size"],
    "attention.head_count": MAXIMUM["num_attention_heads"],
    "attention.head_count_kv": MAXIMUM["num_key_value_heads"],
    "attention.key_length": MAXIMUM["head_dim"],
    "attention.value_length": MAXIMUM["head_dim"],
    "attention.sliding_window_pattern": MAX_LAYERS,
    "vocab_size": MAXIMUM["vocab_size"],
    "expert_count": 100_000,  # no model comes near; the largest have a few hundred
}


def _shown(value: Any) -> str:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "array":  # a long array, skipped by the parser
        return f"an array of {value[1]:,} entries"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


class _Metadata:
    """Checked reads of a GGUF's <arch>.* keys; each refusal names the file and the key."""

    def __init__(self, g: GgufFile, arch: str):
        self.g, self.arch = g, arch

    def raw(self, name: str) -> Any:
        return self.g.metadata.get(f"{self.arch}.{name}")

    def fail(self, name: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(
            f"{self.g.path}: GGUF metadata {self.arch}.{name} must be {expected}, got {_shown(value)}",
            f"the file is damaged or was not written by llama.cpp's converter: convert the model again, "
            f"or pass its config.json and --weights {self.g.path}",
        )

    def check_int(self, name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
        if maximum is None:
            maximum = _MAXIMUM.get(name.split("[")[0], DEFAULT_MAXIMUM)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(name, value, f"an integer >= {minimum}")
        if value > maximum:
            raise self.fail(name, value, f"an integer <= {maximum:,}")
        return value

    def int(self, name: str, default: Any = ..., minimum: int = 1, maximum: int | None = None) -> Any:
        """An integer within [minimum, maximum]; `default` when the key is absent (none: required)."""
        value = self.raw(name)
        if value is None:
            if default is ...:
                raise ConfigError(f"{self.g.path}: GGUF metadata lacks {self.arch}.{name}",
                                  f"convert the model again, or pass its config.json and --weights {self.g.path}")
            return default
        return self.check_int(name, value, minimum, maximum)

    def int_or_layers(self, name: str, default: Any, layers: int) -> Any:
        """An integer, or one per layer (llama.cpp's get_key_or_arr, which wants block_count of them)."""
        value = self.raw(name)
        if not isinstance(value, list):
            return self.int(name, default)
        if len(value) != layers:
            raise self.fail(name, value, f"an integer or an array of {layers:,} (block_count) integers")
        return [self.check_int(f"{name}[{i}]", v) for i, v in enumerate(value)]

    def layer_flags(self, name: str, layers: int) -> list[bool]:
        """An array of one boolean per layer."""
        value = self.raw(name)
        if not isinstance(value, list) or len(value) != layers:
            raise self.fail(name, value, f"an integer or an array of {layers:,} (block_count) booleans")
        for i, v in enumerate(value):
            if not (isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))):
                raise self.fail(f"{name}[{i}]", v, "true or false")
        return [bool(v) for v in value]


def _pattern_types(layers: int, period: int) -> list[str]:
    # llama.cpp set_swa_pattern(n): layer il is windowed when il % n < n - 1
    return ["sliding_attention" if i % period < period - 1 else "full_attention" for i in range(layers)]


def to_config(g: GgufFile) -> dict:
    arch = g.metadata.get("general.architecture")
    if not isinstance(arch, str) or arch not in ARCHITECTURES:  # a list is not even hashable
        raise ConfigError(
            f"{g.path}: GGUF general.architecture {_shown(arch)} is not one kvplan translates",
            f"supported: {', '.join(ARCHITECTURES)}; or pass the model's config.json and --weights {g.path}",
        )

    m = _Metadata(g, arch)
    # counts first: nothing below is sized by a value not yet checked
    layers = m.int("block_count", maximum=MAX_LAYERS)
    heads = m.int("attention.head_count")
    kv = m.int_or_layers("attention.head_count_kv", heads, layers)
    if isinstance(kv, list):
        distinct = set(kv)
        if len(distinct) != 1:
            raise ConfigError(f"{g.path}: per-layer head_count_kv {sorted(distinct)} is not supported for {arch}")
        kv = distinct.pop()
    hidden = m.int("embedding_length")
    key_len = m.int("attention.key_length", None)
    value_len = m.int("attention.value_length", None)
    if key_len is not None and value_len is not None and key_len != value_len:
        raise ConfigError(f"{g.path}: key_length {key_len} != value_length {value_len}; kvplan's {arch} reader assumes equal")
    if key_len is None and hidden < heads:  # llama.cpp's head size n_embd / n_head would be 0
        raise m.fail("embedding_length", hidden, f">= {arch}.attention.head_count ({heads:,}) when no key_length is given")
    tensors = {t.name: t for t in g.tensors}
    embed = tensors.get("token_embd.weight")
    vocab = m.int("vocab_size", None, minimum=0)
    if not vocab and embed is not None and embed.shape:
        vocab = embed.shape[0]
        if vocab > MAXIMUM["vocab_size"]:
            raise ConfigError(f"{g.path}: GGUF tensor token_embd.weight has {vocab:,} rows (vocabulary entries), "
                              f"more than {MAXIMUM['vocab_size']:,}",
                              f"the file is damaged: convert the model again, or pass its config.json and --weights {g.path}")
    raw = {
        "model_type": ARCHITECTURES[arch],
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "intermediate_size": m.int("feed_forward_length", 4 * hidden),
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": key_len if key_len is not None else hidden // heads,
        "max_position_embeddings": m.int("context_length", 0, minimum=0) or None,
        "vocab_size": vocab or 0,
        "tie_word_embeddings": "output.weight" not in tensors,
        "torch_dtype": "float16",  # llama.cpp's default KV cache type is f16
    }
    experts = m.int("expert_count", 0, minimum=0)
    if experts:
        raw["num_experts"] = experts
        raw["num_experts_per_tok"] = m.int("expert_used_count", maximum=experts)
        raw["moe_intermediate_size"] = m.int("expert_feed_forward_length", raw["intermediate_size"])
    window = m.int("attention.sliding_window", None, minimum=0, maximum=DEFAULT_MAXIMUM)
    pattern = m.raw("attention.sliding_window_pattern")
    if isinstance(pattern, list):
        pattern = m.layer_flags("attention.sliding_window_pattern", layers)
    elif pattern is not None:
        pattern = m.int("attention.sliding_window_pattern", minimum=0)
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
        raw["layer_types"] = _pattern_types(layers, period)
    elif window and arch in ("qwen2", "qwen3", "qwen2moe", "qwen3moe"):
        raw["use_sliding_window"] = True
        raw["max_window_layers"] = 0
    if window:
        raw["sliding_window"] = window
    elif arch in ("gemma3",):
        raw["layer_types"] = ["full_attention"] * layers
        raw["sliding_window"] = None
    return {k: v for k, v in raw.items() if v is not None or k == "sliding_window"}
