"""Pieces the parameter counters share (kvplan/configs/params*.py)."""

from __future__ import annotations

from typing import Callable

from ..core.layers import LayerSpec
from ..errors import ConfigError
from .fields import Fields


def gated_mlp(hidden: int, inter: int, bias: bool = False) -> int:
    """gate_proj, up_proj (hidden -> inter) and down_proj (inter -> hidden), with their biases when `bias`."""
    return 3 * hidden * inter + ((2 * inter + hidden) if bias else 0)


def mlp_layer_types(f: Fields, n: int, rule: Callable[[int], str]) -> list[str]:
    """Each of n layers' MLP, "sparse" (a MoE) or "dense": the config's mlp_layer_types (its first n entries, so a
    count without the last layer reads the same list; an entry other than "sparse" builds the dense MLP), else
    the config class's rule(i)."""
    written = f.list("mlp_layer_types")
    if written is None:
        return [rule(i) for i in range(n)]
    if len(written) < n:
        raise ConfigError(f"{f.source}: 'mlp_layer_types' lists {len(written)} entries for {n} layers "
                          f"(model_type {f.model_type!r})", "fix the config or pass --set mlp_layer_types=[...]")
    return ["sparse" if t == "sparse" else "dense" for t in written[:n]]


def moe_stack(total: int, bases, kinds, moe: int, dense: int, idle: int) -> tuple[int, int]:
    """(total, active) of a decoder whose layers each hold their own parameters (bases: one int per layer, or one
    int for every layer) and an MLP, the MoE where kinds says "sparse", else the dense one; `total` brings what
    sits outside the layers (embeddings, head, final norms). A token leaves `idle` parameters of each MoE unused."""
    kinds = list(kinds)
    bases = [bases] * len(kinds) if isinstance(bases, int) else list(bases)
    total += sum(base + (moe if kind == "sparse" else dense) for base, kind in zip(bases, kinds))
    return total, total - kinds.count("sparse") * idle


def dense_first(count: int) -> Callable[[int], str]:
    """The usual rule: the first `count` layers dense, the rest MoE."""
    return lambda i: "dense" if i < count else "sparse"


def embeddings(f: Fields, hidden: int, tied_default: bool, vocab_default: int | None = None, head_bias: bool = False,
               tieable: bool = True) -> int:
    """Token embeddings, plus an LM head of its own unless tie_word_embeddings (tied_default when the config is
    silent; never for a model whose causal-LM class ties nothing: tieable False), with a bias when the head has
    one. vocab_default: the config class's vocab_size when the config leaves it out (None: it must be given)."""
    vocab = (f.int("vocab_size", minimum=0) if vocab_default is None
             else f.int("vocab_size", default=vocab_default, minimum=0))
    tied = tieable and f.flag("tie_word_embeddings", default=tied_default)
    return vocab * hidden * (1 if tied else 2) + (vocab if head_bias else 0)


def mla(hidden: int, heads: int, q_lora: int | None, rank: int, rope: int, nope: int, v_dim: int,
        bias: bool = False) -> int:
    """One multi-head latent attention (DeepSeek-V2/V3 layout, shared by every MLA counter): q_proj (no bias)
    when q_lora is None, else q_a_proj (+bias) + q_a_layernorm + q_b_proj; kv_a_proj_with_mqa (+bias),
    kv_a_layernorm, kv_b_proj, o_proj (+bias)."""
    q_head = nope + rope
    if q_lora is None:
        n = hidden * heads * q_head
    else:
        n = hidden * q_lora + (q_lora if bias else 0) + q_lora + q_lora * heads * q_head
    n += hidden * (rank + rope) + ((rank + rope) if bias else 0) + rank
    n += rank * heads * (nope + v_dim)
    n += heads * v_dim * hidden + (hidden if bias else 0)
    return n


def _kinds_of(layers: list[LayerSpec]) -> list[str]:
    """'attention', 'state' or 'none' per layer, from what it caches."""
    return ["attention" if layer.caches else "state" if layer.state is not None else "none" for layer in layers]


def _attention_plain(hidden: int, heads: int, kv: int, head_dim: int) -> int:
    return hidden * heads * head_dim + 2 * hidden * kv * head_dim + heads * head_dim * hidden


def _ffn_moe(hidden: int, experts: int, top_k: int, inter: int, *, matrices: int = 3, router_bias: int = 0,
             shared: int = 0) -> tuple[int, int]:
    """(total, active) of a routed MoE block: experts of `matrices` hidden x inter matrices, a router
    (hidden x experts, plus `router_bias` extra vectors such as e_score_correction_bias), and `shared`
    parameters that every token uses."""
    per_expert = matrices * hidden * inter
    router = hidden * experts + router_bias
    return experts * per_expert + router + shared, top_k * per_expert + router + shared


def _gdn_block(f: Fields, hidden: int) -> int:
    """Gated DeltaNet mixer (Qwen3-Next, Qwen3.5): qkv, z, b, a projections, conv, dt_bias, A_log, gated norm, out."""
    kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    kernel = f.int("linear_conv_kernel_dim", default=4)
    key_dim, value_dim = kh * kd, vh * vd
    n = hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * vh
    return n + (2 * key_dim + value_dim) * kernel + 2 * vh + vd + value_dim * hidden
