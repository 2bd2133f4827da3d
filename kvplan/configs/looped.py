"""Looped models, whose later passes over a block of layers keep caches of their own.

Dory (NVIDIA Nemotron Labs' looped nGPT): a recurrent block of layers run n_recurrent_loops times.

Read from transformers 5.25's models/dory (DoryConfig, DoryModel.forward's cache layers and
DoryPastReader) and vLLM 0.33's model_executor/models/dory.py (one Attention per loop of a
recurrent attention block in per_loop mode, one per block in last_loop mode). layer_types
gives each entry full or sliding attention; released configs write the physical layout, in
which "mlp" entries (MLP-only blocks) alternate with the attention ones and n_input_layers,
n_recurrent_layers and n_output_layers count entries of that list (transformers halves both
into attention+MLP layers, which caches the same). The entries in [n_input_layers,
n_input_layers + n_recurrent_layers) are the recurrent block:

- recurrent_kv_cache_mode "per_loop" (the default): each loop keeps its own cache of a
  recurrent attention layer: n_recurrent_loops copies, each read once a step;
- "last_loop": one cache a layer, which every loop reads (transformers writes it from the
  last loop, vLLM from each in turn): stored once, read n_recurrent_loops times a step.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.layers import LayerSpec
from ..errors import ConfigError
from . import kinds as K
from .attention import attention_cache
from .fields import Fields

MODES = ("per_loop", "last_loop")
MAX_PASSES = 1000  # far above any published model; a bigger count is junk, not a model


def default_kinds(f: Fields, n: int) -> list[str]:
    """DoryConfig without layer_types: sliding, sliding, sliding, full, repeated."""
    return [K.FULL if (i + 1) % 4 == 0 else K.SLIDING for i in range(n)]


def _sections(f: Fields, n: int, kinds: list[str]) -> tuple[int, int]:
    """(first recurrent entry, recurrent entries), in the units of layer_types."""
    scale = 2 if K.NONE in kinds else 1  # the physical layout: DoryConfig's defaults (8 / 8) are logical layers
    first = f.int("n_input_layers", default=8 * scale, minimum=0)
    last = f.int("n_output_layers", default=8 * scale, minimum=0)
    count = f.int("n_recurrent_layers", default=n - first - last, minimum=0)
    if first + count + last != n:
        raise ConfigError(f"{f.source}: n_input_layers {first} + n_recurrent_layers {count} + n_output_layers {last} "
                          f"is not the {n} layers (model_type {f.model_type!r})", "fix the config's layer counts")
    return first, count


def layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    """The n entries: attention caches (a recurrent layer's once per loop, or read once per loop) and MLP blocks."""
    loops = f.int("n_recurrent_loops", default=2, maximum=MAX_PASSES)
    mode = f.text("recurrent_kv_cache_mode", default="per_loop")
    if mode not in MODES:
        raise ConfigError(f"{f.source}: recurrent_kv_cache_mode {mode!r} is not per_loop or last_loop "
                          f"(model_type {f.model_type!r})", "fix the config's recurrent_kv_cache_mode")
    first, count = _sections(f, n, kinds)
    kv, head = f.int("num_key_value_heads"), f.int("head_dim", default=256)
    window = f.opt_int("sliding_window")
    out = []
    for i, kind in enumerate(kinds):
        if kind == K.NONE:
            out.append(LayerSpec())
            continue
        cache = attention_cache(kv, head, head, window if kind == K.SLIDING else None)
        if not first <= i < first + count or loops == 1:
            out.append(LayerSpec(caches=(cache,)))
        elif mode == "per_loop":
            out.append(LayerSpec(caches=(cache,) * loops))
        else:  # the earlier loops read the one cache the layer stores
            out.append(LayerSpec(caches=(cache,), borrows=(cache,) * (loops - 1), borrows_from=i))
    return out


def inkling2_passes(f: Fields, layers: list[LayerSpec]) -> list[LayerSpec]:
    """Inkling2-Loop (transformers 5.25 models/inkling2_loop): layers [loop_layer_index_start,
    loop_layer_index_end) run loop_num_passes times (a nested loop_config {core_start, core_end, num_passes}
    overrides them), and each later pass keeps a deep copy of their cache layers: K/V and the four short-conv
    states (Inkling2LoopTextModel.forward)."""
    loop = f.obj("loop_config") or {}
    start = loop.get("core_start", f.int("loop_layer_index_start", default=6, minimum=1))
    end = loop.get("core_end", f.int("loop_layer_index_end", default=18, minimum=1))
    passes = loop.get("num_passes", f.int("loop_num_passes", default=3, maximum=MAX_PASSES))
    for name, value in (("core_start", start), ("core_end", end), ("num_passes", passes)):
        f.check_int(f"loop_config.{name}", value, minimum=1, maximum=MAX_PASSES if name == "num_passes" else 10**6)
    if not start < end <= len(layers):
        raise ConfigError(f"{f.source}: the loop covers layers [{start}, {end}) of {len(layers)} (model_type "
                          f"{f.model_type!r})", "fix loop_layer_index_start / _end (or loop_config)")
    out = list(layers)
    for i in range(start, end):
        layer = layers[i]
        state = layer.state and replace(layer.state, also=layer.state.also + (layer.state,) * (passes - 1))
        out[i] = replace(layer, caches=layer.caches * passes, state=state)
    return out


def iquest_loops(f: Fields, layers: list[LayerSpec]) -> list[LayerSpec]:
    """IQuest-Coder-V1-Loop (vLLM 0.33 model_executor/models/iquest_loopcoder.py): the whole stack runs loop_num
    times (2). Loop 0 keeps every layer's K/V of all tokens; each later loop keeps its own K/V over the newest
    loop_window_size tokens (64: its Attention gets a sliding-window cache config) and also reads loop 0's cache
    (the global attention, which it does not write)."""
    loops = f.int("loop_num", default=2, maximum=MAX_PASSES)
    window = f.int("loop_window_size", default=64)
    out = []
    for i, layer in enumerate(layers):
        if loops == 1 or not layer.caches:
            out.append(layer)
            continue
        (full,) = layer.caches
        local = replace(full, policy=replace(full.policy, window_tokens=window))
        out.append(replace(layer, caches=(full,) + (local,) * (loops - 1), borrows=(full,) * (loops - 1),
                           borrows_from=i))
    return out
