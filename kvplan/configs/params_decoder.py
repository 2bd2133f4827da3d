"""Dense decoders described by their parts: decoder() builds the counter of a GPT-2 / GPT-J / OPT / BLOOM / MPT
style decoder from its MLP kind, biases, norms and positions; _PLAIN_DECODERS holds the generic-rule family
records' decoders whose modules are not Llama's (checked against transformers' modules by
tests/parity/test_param_parity.py), which params.by_type dispatches to; bigcode counts GPTBigCode (c_attn with
multi-query K/V, learned positions). Counts follow the transformers 5.25 modeling files named at each counter.
"""

from __future__ import annotations

from .fields import Fields
from .param_embeddings import _vocab_embed
from .param_parts import embeddings


def bigcode(f: Fields, layers: list, dims) -> tuple[int, int]:
    return _bigcode_params(f, len(layers))


def _bigcode_params(f: Fields, num_layers: int) -> tuple[int, int]:
    hidden = f.int("n_embd", "hidden_size")
    heads = f.int("n_head", "num_attention_heads")
    inner = f.int("n_inner", default=4 * hidden)
    kv_width = (hidden // heads) * (1 if f.flag("multi_query", default=True) else heads)
    per_layer = hidden * (hidden + 2 * kv_width) + hidden + 2 * kv_width  # c_attn
    per_layer += hidden * hidden + hidden  # c_proj
    per_layer += hidden * inner + inner + inner * hidden + hidden  # mlp
    per_layer += 4 * hidden  # ln_1, ln_2
    n = _vocab_embed(f, hidden) + f.int("n_positions", default=0, minimum=0) * hidden + 2 * hidden
    n += num_layers * per_layer
    return n, n


def _switch(f: Fields, value) -> bool:
    """A fixed flag, or (config field, default) read from the config (attention_bias, mlp_bias)."""
    return f.flag(value[0], default=value[1]) if isinstance(value, tuple) else value


def decoder(*, mlp: str = "gated", qkv_bias=False, o_bias=False, mlp_bias=False,
            norm_bias: bool = True, norms: int = 2, positions: str | None = None, position_offset: int = 0,
            embed_norm: bool = False, head_bias: bool = False, qk_norm_bias: bool | None = None,
            tied: bool = True, inter: tuple[str, ...] = ("intermediate_size",), expansion: str | None = None,
            final_norm: bool = True, layer_extra: int = 0):
    """A dense decoder described by its parts (GPT-2, GPT-J, OPT, BLOOM, MPT, ...).

    mlp 'gated' (three matrices) or 'plain' (up and down); biases on the QKV, output and MLP
    projections (True / False, or a (config field, default) pair); `norms` LayerNorms per layer
    (1 for parallel blocks, 0 for parameterless norms), with bias or weight only, and a final one
    unless final_norm is False; learned `positions` (a field naming their count, plus
    `position_offset`: OPT keeps two more); a LayerNorm on the embeddings (BLOOM); per-head q/k norms
    (with bias: Persimmon; weight only: False); the default of tie_word_embeddings in the family's
    config class; `inter` the MLP width field (default 4 x hidden) or `expansion` a ratio field (MPT);
    `layer_extra` scalars a layer (Apertus' xIELU alphas).
    """
    def count(f: Fields, layers: list, dims) -> tuple[int, int]:
        heads, kv, head_dim, _ = dims
        hidden = f.int("hidden_size")
        width = f.int(*inter, default=None, maximum=10**8) if inter else None
        if width is None:
            width = int(f.number(expansion, default=4)) * hidden if expansion else 4 * hidden
        q_width, kv_width = heads * head_dim, kv * head_dim
        attn = hidden * (q_width + 2 * kv_width) + q_width * hidden
        attn += (q_width + 2 * kv_width if _switch(f, qkv_bias) else 0) + (hidden if _switch(f, o_bias) else 0)
        if qk_norm_bias is not None:
            attn += 2 * head_dim * (2 if qk_norm_bias else 1)
        ffn = (3 if mlp == "gated" else 2) * hidden * width
        if _switch(f, mlp_bias):
            ffn += (2 if mlp == "gated" else 1) * width + hidden
        norm = hidden * (2 if norm_bias else 1)
        per_layer = attn + ffn + norms * norm + layer_extra
        n = embeddings(f, hidden, tied, 0, head_bias=head_bias) + (norm if final_norm else 0) + len(layers) * per_layer
        if positions:
            n += (f.int(positions) + position_offset) * hidden
        if embed_norm:
            n += norm
        return n, n
    return count


# Decoders of the generic-rule family records whose modules are not llama's (their parameter counts, checked against
# transformers' modules by tests/parity/test_param_parity.py)
_PLAIN_DECODERS = {
    "apertus": decoder(mlp="plain", norm_bias=False, qk_norm_bias=False, tied=False, layer_extra=2),
    "arcee": decoder(mlp="plain", mlp_bias=("mlp_bias", False), norm_bias=False, tied=False),
    "nanochat": decoder(mlp="plain", norms=0, final_norm=False, tied=False),
    "jais2": decoder(mlp="plain", qkv_bias=("attention_bias", True), o_bias=("attention_bias", True),
                     mlp_bias=("mlp_bias", True), tied=False),
    "nemotron": decoder(mlp="plain", qkv_bias=("attention_bias", False), o_bias=("attention_bias", False),
                        mlp_bias=("mlp_bias", False), tied=False),
    "biogpt": decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True, positions="max_position_embeddings",
                      position_offset=2),
    "starcoder2": decoder(mlp="plain", qkv_bias=("use_bias", True), o_bias=("use_bias", True),
                          mlp_bias=("use_bias", True)),
    # phi: params_dense_more.py (its q/k layernorms)
}


def apertus1p5_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Apertus1p5TextForCausalLM (transformers 5.25 modeling_apertus1p5.py; vLLM 0.34 registers no Apertus 1.5
    model): Apertus' decoder (Apertus1p5TextMLP is up_proj and down_proj, no gate, with xIELU's two scalars; q_norm
    and k_norm; attention_layernorm and feedforward_layernorm; untied by default), whose lm_head holds
    output_vocab_size rows where the config prunes the head (None or vocab_size: every row). A tied head is the
    embedding matrix itself, counted once."""
    total = _PLAIN_DECODERS["apertus"](f, layers, dims)[0]
    vocab, hidden = f.int("vocab_size"), f.int("hidden_size")
    rows = f.int("output_vocab_size", default=None, minimum=1)
    if rows is not None and not f.flag("tie_word_embeddings", default=False):
        total += (rows - vocab) * hidden
    return total, total


_PLAIN_DECODERS["apertus1p5_text"] = apertus1p5_text
