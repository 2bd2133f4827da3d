"""Parameter counters of dense decoders whose layers hold more than Llama's modules: Gemma 3n (LAuReL, AltUp,
per-layer inputs), Dory and IQuest-Coder-V1-Loop (looped: the loops share their weights), and Nemotron-NAS (each
layer's block_configs). Each counter is `count(f, layers, dims) -> (total, active)`, read from the transformers
modeling code (5.23; 5.25, vLLM 0.33 / 0.34 and remote code where cited at a counter).
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import embeddings, gated_mlp
from .params_generic import count_params


def gemma3n_fields(f: Fields, n: int) -> tuple[int, list[int], int, int, int, int]:
    """(hidden_size, the n layers' MLP widths (a list or one width), hidden_size_per_layer_input, altup_num_inputs,
    laurel_rank, num_kv_shared_layers) as Gemma 3n's count reads them (its per-module table, weight_tables/wrap.py,
    reads them here too)."""
    if isinstance(f.get("intermediate_size"), list):
        inters = f.int_list("intermediate_size", n, minimum=1, maximum=10**8)
    else:
        inters = [f.int("intermediate_size")] * n
    return (f.int("hidden_size"), inters, f.int("hidden_size_per_layer_input", default=256),
            f.int("altup_num_inputs", default=4), f.int("laurel_rank", default=64),
            f.int("num_kv_shared_layers", default=0, minimum=0, maximum=n))


def gemma3n(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Gemma 3n text model: besides attention (q/k norms; the last num_kv_shared_layers have no k/v
    projections) and a GeGLU MLP of the layer's width, each layer holds LAuReL (a rank-laurel_rank
    residual), AltUp (coefficients, router, norms) and a per-layer-input gate and projection; the model
    holds a second embedding table of hidden_size_per_layer_input per layer (vocab_size_per_layer_input
    rows), its projection from the hidden state, and the AltUp (un)embedding projections."""
    heads, kv, head_dim, _ = dims
    n = len(layers)
    hidden, inters, per_input, altup, rank, shared = gemma3n_fields(f, n)
    total = embeddings(f, hidden, True, 0) + hidden
    total += f.int("vocab_size_per_layer_input", default=262144) * n * per_input + hidden * n * per_input + per_input
    total += 2 * (altup - 1) * hidden * hidden
    for i in range(n):
        layer = hidden * heads * head_dim + head_dim + heads * head_dim * hidden
        if i < n - shared:
            layer += 2 * hidden * kv * head_dim + head_dim
        layer += 3 * hidden * int(inters[i]) + 4 * hidden
        layer += 2 * hidden * rank + hidden
        layer += hidden + altup * altup + altup ** 3 + hidden * altup + hidden
        layer += 2 * hidden * per_input + hidden
        total += layer
    return total, total


def dory(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Dory as transformers 5.25 builds it (the loops share their weights): per attention+MLP layer gated attention
    (q, k, v, o and a gate projection, the sqk and s_gate scales), a gated MLP with its suv_gate / suv_up scales,
    and two residual lambdas; the embedding, the head and its per-token logit scale. A physical layout's "mlp"
    entries pair with its attention entries, so the attention entries count the layers."""
    heads, kv, head, _ = dims
    hidden, vocab, inter = f.int("hidden_size"), f.int("vocab_size"), f.int("intermediate_size")
    q = heads * head
    attention = 3 * hidden * q + 2 * hidden * kv * head + 2 * q
    if f.flag("attention_bias"):
        attention += q + 2 * kv * head + hidden
    mlp = 3 * hidden * inter + 2 * inter + (2 * inter + hidden if f.flag("mlp_bias") else 0)
    count = sum(1 for layer in layers if layer.caches)
    total = count * (attention + mlp + 2 * hidden) + vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + vocab
    return total, total


def iquest_loop(f: Fields, layers: list, dims) -> tuple[int, int]:
    """IQuest-Coder-V1-Loop as vLLM 0.33 builds it (iquest_loopcoder.py; transformers has no loop model): a Llama
    decoder (the loops share its weights) plus one gate projection a layer (head_dim -> heads, with a bias)."""
    heads, kv_heads, head_dim, _ = dims
    total, active = count_params(f, len(layers), heads, kv_heads, head_dim)
    gates = len(layers) * (head_dim * heads + heads)
    return total + gates, active + gates


def nemotron_nas(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Nemotron-NAS as its remote code (DeciLMDecoderLayer) and vLLM's nemotron_nas.py build it, layer by layer
    from block_configs (kvplan.configs.nemotron_nas): an attention that is not no_op has its norm and either
    Llama GQA q, k, v, o (biases with attention_bias) or one hidden x hidden linear (no bias); an MLP that is
    not no_op has its norm and either a gated MLP of its own width (biases with mlp_bias) or one hidden x
    hidden linear (no bias). Then the embeddings, the final norm and the LM head (untied by default)."""
    from .nemotron_nas import blocks, dims as nas_dims

    heads, _, head_dim, _ = nas_dims(f)
    hidden = f.int("hidden_size")
    attention_bias, mlp_bias = f.flag("attention_bias"), f.flag("mlp_bias")
    q = heads * head_dim
    total = embeddings(f, hidden, tied_default=False) + hidden
    for b in blocks(f, f.int("num_hidden_layers"))[:len(layers)]:
        if b.attention == "attention":
            kv = b.kv_heads * head_dim
            total += hidden * (q + 2 * kv) + q * hidden + ((q + 2 * kv + hidden) if attention_bias else 0)
        elif b.attention == "linear":
            total += hidden * hidden
        if b.ffn == "mlp":
            total += gated_mlp(hidden, b.intermediate, mlp_bias)
        elif b.ffn == "linear":
            total += hidden * hidden
        total += hidden * ((b.attention != "none") + (b.ffn != "none"))  # input / post-attention RMSNorm
    return total, total
