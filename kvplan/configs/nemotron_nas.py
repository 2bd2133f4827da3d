"""Nemotron-NAS (model_type nemotron-nas, DeciLMForCausalLM): Llama layers that NVIDIA's architecture search
pruned one by one (Llama-3.1-Nemotron-51B, Llama-3.3-Nemotron-Super-49B v1 / v1.5, Llama-3.1-Nemotron-Ultra-253B).

Read from the checkpoints' remote code (block_config.py, configuration_decilm.py; modeling_decilm.py as NVIDIA's
Model-Optimizer copy keeps it) and vLLM's models/nemotron_nas.py (DeciLMDecoderLayer). `block_configs` holds one
{"attention": {...}, "ffn": {...}} per layer:
- attention: no_op, nothing; replace_with_linear, one hidden x hidden linear (no bias) and its norm, no cache;
  else Llama GQA attention of num_attention_heads query heads and num_attention_heads // n_heads_in_group K/V
  heads, head_dim (else hidden_size // num_attention_heads) wide: full attention.
- ffn: no_op, nothing; replace_with_linear, one hidden x hidden linear (no bias); else a gated MLP whose width is
  _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden_size / 3) rounded up to a multiple of 256 (ffn_mult
  first rounded to 6 decimals by FFNConfig).
A window_length or num_sink_tokens (a window and attention sinks the remote code masks and vLLM ignores) is
refused, and so is any block field block_config.py does not define. vLLM builds no linear replacement (it builds
attention or an MLP for every layer that is not no_op, from fields the remote config nulls for a replaced one),
so a config with replace_with_linear reads with a note that --engine vllm refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from . import kinds as K
from .fields import Fields

# block_config.py: AttentionConfig and FFNConfig (with SubblockConfig's no_op, replace_with_linear, sparsify)
ATTENTION_FIELDS = frozenset({"no_op", "replace_with_linear", "sparsify", "n_heads_in_group", "window_length",
                              "num_sink_tokens", "use_prefill_window_in_sink_attention", "unshifted_sink"})
FFN_FIELDS = frozenset({"no_op", "replace_with_linear", "sparsify", "ffn_mult"})
MAX_FFN_MULT = 1000  # far above any checkpoint's (Super-49B's widest is 5.25); keeps the width arithmetic finite
LINEAR_NOTE = "Nemotron-NAS: a linear layer replaces"  # the note --engine vllm and sglang refuse (engines/)


def linear_replacement(model) -> str | None:
    """The model's note that a linear layer replaces an attention or MLP (None: none does), which neither vLLM's
    nor SGLang's DeciLMDecoderLayer builds."""
    if model.family != "nemotron-nas":
        return None
    return next((n for n in model.notes if n.startswith(LINEAR_NOTE)), None)


@dataclass(frozen=True)
class Block:
    """One layer as the remote code builds it."""

    attention: str  # "attention" | "linear" | "none"
    kv_heads: int | None  # attention: num_attention_heads // n_heads_in_group
    ffn: str  # "mlp" | "linear" | "none"
    intermediate: int | None  # mlp: _ffn_mult_to_intermediate_size(ffn_mult, hidden_size)


def ffn_mult_to_intermediate_size(ffn_mult: float, hidden: int) -> int:
    """DeciLM's _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden / 3), then _find_multiple(.., 256)."""
    size = int(2 * ffn_mult * hidden / 3)
    return size if size % 256 == 0 else size + 256 - size % 256


def _bad(f: Fields, where: str, message: str) -> ConfigError:
    return ConfigError(f"{f.source}: {where} {message} (model_type {f.model_type!r})",
                       "fix the config's block_configs; kvplan reads only the fields block_config.py defines")


def _flag(f: Fields, where: str, section: dict, name: str) -> bool:
    value = section.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _bad(f, f"{where}.{name}", f"must be true or false, got {value!r}")
    return value


def _section(f: Fields, i: int, entry: dict, name: str, known: frozenset[str]) -> tuple[str, dict, bool, bool]:
    where = f"block_configs[{i}].{name}"
    section = entry.get(name)
    if not isinstance(section, dict):
        raise _bad(f, where, "must be a JSON object")
    unknown = sorted(set(section) - known)
    if unknown:
        raise _bad(f, where, f"has {', '.join(map(repr, unknown))}, which kvplan does not read (the checkpoints' "
                             "block_config.py defines no such field)")
    sparsify = section.get("sparsify")
    if sparsify is not None and not (isinstance(sparsify, list) and all(isinstance(s, str) for s in sparsify)):
        raise _bad(f, f"{where}.sparsify", f"must be null or a list of module names, got {sparsify!r}")
    no_op, linear = _flag(f, where, section, "no_op"), _flag(f, where, section, "replace_with_linear")
    if no_op and linear:  # SubblockConfig.__post_init__ asserts not both
        raise _bad(f, where, "sets both no_op and replace_with_linear")
    return where, section, no_op, linear


def block(f: Fields, i: int) -> Block:
    """Layer i's block, checked as block_config.py's dataclasses check it, and the window fields refused."""
    entries = f.list("block_configs")
    entry = entries[i] if entries is not None and i < len(entries) else None
    if not isinstance(entry, dict):
        raise _bad(f, f"block_configs[{i}]", "must be a JSON object with 'attention' and 'ffn'")
    unknown = sorted(set(entry) - {"attention", "ffn"})
    if unknown:
        raise _bad(f, f"block_configs[{i}]", f"has {', '.join(map(repr, unknown))}, which kvplan does not read")
    heads = f.int("num_attention_heads")
    hidden = f.int("hidden_size")
    where, section, no_op, linear = _section(f, i, entry, "attention", ATTENTION_FIELDS)
    attention, kv = ("none" if no_op else "linear"), None
    if not no_op and not linear:  # AttentionConfig nulls the other fields of a no_op or linear layer
        for name in ("window_length", "num_sink_tokens"):
            if section.get(name) is not None:
                raise _bad(f, f"{where}.{name}", f"is {section[name]!r}: a window or attention sinks, which the "
                                                 "remote code masks and vLLM's nemotron_nas.py ignores; kvplan "
                                                 "does not read it")
        for name in ("use_prefill_window_in_sink_attention", "unshifted_sink"):
            _flag(f, where, section, name)  # they act only with a window (AttentionConfig.is_sink)
        group = section.get("n_heads_in_group")
        if group is None:
            raise _bad(f, f"{where}.n_heads_in_group", "is needed for an attention layer (AttentionConfig "
                                                       "asserts it)")
        group = f.check_int(f"{where}.n_heads_in_group", group, maximum=heads)
        if heads % group:
            raise _bad(f, f"{where}.n_heads_in_group", f"is {group}, which does not divide num_attention_heads "
                                                       f"{heads}")
        attention, kv = "attention", heads // group
    where, section, no_op, linear = _section(f, i, entry, "ffn", FFN_FIELDS)
    ffn, inter = ("none" if no_op else "linear"), None
    if not no_op and not linear:
        mult = section.get("ffn_mult")
        if isinstance(mult, bool) or not isinstance(mult, (int, float)) or not 0 < mult <= MAX_FFN_MULT:
            raise _bad(f, f"{where}.ffn_mult", f"must be a number in (0, {MAX_FFN_MULT}] for an MLP layer, got "
                                               f"{mult!r}")
        ffn, inter = "mlp", ffn_mult_to_intermediate_size(round(mult, 6), hidden)  # FFNConfig rounds it
    return Block(attention, kv, ffn, inter)


def blocks(f: Fields, n: int) -> list[Block]:
    """Every layer's block; block_configs must list num_hidden_layers entries (DeciLMConfig asserts it)."""
    if f.get("block_configs") is None:
        raise ConfigError(f"{f.source}: Nemotron-NAS config without block_configs (model_type {f.model_type!r})",
                          "give the checkpoint's config.json: its layers are listed one by one there")
    f.list("block_configs", n)
    return [block(f, i) for i in range(n)]


def kinds(f: Fields, n: int) -> list[str]:
    """full_attention where a layer keeps its attention, none where it is no_op or a linear replacement."""
    return [K.FULL if b.attention == "attention" else K.NONE for b in blocks(f, n)]


def dims(f: Fields) -> tuple[int, int, int, int]:
    """(query heads, KV heads, head width, head width): DeciLMAttention's head_dim is config.head_dim, else
    hidden_size // num_attention_heads (vLLM's LlamaAttention the same); the KV heads differ by layer
    (layer_dims), so this gives the query heads in their place."""
    heads = f.int("num_attention_heads")
    width = f.opt_int("head_dim")
    if width is None:
        hidden = f.int("hidden_size")
        if hidden % heads:
            raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads} "
                              f"(model_type {f.model_type!r})")
        width = hidden // heads
    return heads, heads, width, width


def layer_dims(f: Fields, index: int, kind: str) -> dict:
    """An attention layer's own KV heads: num_attention_heads // its n_heads_in_group."""
    return {"num_key_value_heads": block(f, index).kv_heads}


def notes(f: Fields) -> tuple[str, ...]:
    """Says where a linear layer replaces attention or an MLP, which vLLM does not build."""
    n = f.int("num_hidden_layers")
    replaced = [(i, part) for i, b in enumerate(blocks(f, n)) for part, kind in (("attention", b.attention),
                                                                                ("MLP", b.ffn)) if kind == "linear"]
    if not replaced:
        return ()
    where = ", ".join(f"the {part} of layer {i}" for i, part in replaced[:6]) + (", ..." if replaced[6:] else "")
    return (f"{LINEAR_NOTE} {where} ({len(replaced)} in all; hidden x hidden, no cache): the remote code "
            "builds it, vLLM's nemotron_nas.py does not (it builds attention or an MLP from the fields the "
            "remote config nulls for such a layer, and fails to load)",)
