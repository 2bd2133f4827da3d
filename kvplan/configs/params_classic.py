"""Parameter counters of StableLM, ChatGLM and OPT, whose generic counters missed modules (transformers 5.25
modeling_stablelm.py and modeling_opt.py; ChatGLM's remote modeling_chatglm.py as vLLM 0.34 chatglm.py builds
it). Each is `count(f, layers, dims) -> (total, active)`, every parameter of the causal LM (a tied head once);
configs/weight_tables/classic.py names the same parameters module by module.
"""

from __future__ import annotations

from .fields import Fields
from .param_parts import embeddings


def stablelm(f: Fields, layers: list, dims) -> tuple[int, int]:
    """StableLmForCausalLM (StableLmAttention, StableLmMLP, StableLmDecoderLayer): q/k/v_proj (biased with
    use_qkv_bias), o_proj (hidden -> hidden, no bias), per-head q_layernorm / k_layernorm under qk_layernorm (a
    weight-only LayerNorm of head_dim for each query and each KV head), the gated MLP, and LayerNorms with weight
    and bias: input_layernorm, post_attention_layernorm unless use_parallel_residual, the final norm. Embeddings
    and an LM head of its own unless tie_word_embeddings (default false)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    q, k = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * k) + hidden * hidden
    if f.flag("use_qkv_bias"):
        attn += q + 2 * k
    if f.flag("qk_layernorm"):
        attn += q + k
    norms = 2 * hidden * (1 if f.flag("use_parallel_residual") else 2)
    per_layer = attn + 3 * hidden * inter + norms
    n = embeddings(f, hidden, False, 0) + 2 * hidden + len(layers) * per_layer
    return n, n


def chatglm(f: Fields, layers: list, dims) -> tuple[int, int]:
    """ChatGLM2/3 and GLM-4-9B-chat (remote code GLMBlock; vLLM 0.34 chatglm.py GLMAttention, GLMMLP, GLMBlock,
    GLMTransformer, ChatGLMModel): self_attention.query_key_value (queries, then keys and values of
    multi_query_group_num groups of kv_channels; biased with add_bias_linear or add_qkv_bias), self_attention.dense
    (biased with add_bias_linear), mlp.dense_h_to_4h (2 x ffn_hidden_size) and mlp.dense_4h_to_h (both biased
    with add_bias_linear), input_layernorm and post_attention_layernorm (RMSNorm with rmsnorm, the default, else
    LayerNorm with a bias), encoder.final_layernorm with post_layer_norm (default true); embedding and
    output_layer of padded_vocab_size rows."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.int("intermediate_size", maximum=10**8)
    linear_bias = f.flag("add_bias_linear")
    q, k = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * k) + q * hidden
    attn += (q + 2 * k if linear_bias or f.flag("add_qkv_bias") else 0) + (hidden if linear_bias else 0)
    mlp = hidden * 2 * ffn + ffn * hidden + ((2 * ffn + hidden) if linear_bias else 0)
    norm = hidden * (1 if f.flag("rmsnorm", default=True) else 2)
    total = embeddings(f, hidden, False, None) + (norm if f.flag("post_layer_norm", default=True) else 0)
    total += len(layers) * (attn + mlp + 2 * norm)
    return total, total


def phi3small(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Phi-3-small (remote code Phi3SmallForCausalLM; SGLang 0.5.23 models/phi3_small.py Phi3SmallSelfAttention,
    Phi3SmallMLP, Phi3SmallDecoderLayer, Phi3SmallModel): self_attn.query_key_value (queries, keys and values,
    biased) and self_attn.dense (biased); mlp.up_proj (2 x ff_intermediate_size, biased) and mlp.down_proj
    (biased); input_layernorm, post_attention_layernorm and model.final_layernorm are LayerNorms with a bias;
    embed_tokens, the LM head tied to it unless tie_word_embeddings is false (Phi3SmallForCausalLM)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.int("intermediate_size", maximum=10**8)
    q, k = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * k) + (q + 2 * k) + q * hidden + hidden
    mlp = hidden * 2 * ffn + 2 * ffn + ffn * hidden + hidden
    total = embeddings(f, hidden, True, None) + 2 * hidden + len(layers) * (attn + mlp + 4 * hidden)
    return total, total


def opt_widths(f: Fields) -> tuple[int, int, bool, int]:
    """(hidden, word_embed_proj_dim, enable_bias, parameters of one LayerNorm) as OPTConfig reads them."""
    hidden = f.int("hidden_size")
    proj = f.int("word_embed_proj_dim", default=hidden) if f.get("word_embed_proj_dim") is not None else hidden
    norm = 2 * hidden if f.flag("layer_norm_elementwise_affine", default=True) else 0
    return hidden, proj, f.flag("enable_bias", default=True), norm


def opt_final_norm(f: Fields) -> bool:
    """OPTDecoder builds final_layer_norm with do_layer_norm_before and not _remove_final_layer_norm."""
    return f.flag("do_layer_norm_before", default=True) and not f.flag("_remove_final_layer_norm")


def opt(f: Fields, layers: list, dims) -> tuple[int, int]:
    """OPTForCausalLM (modeling_opt.py OPTDecoder, OPTDecoderLayer, OPTAttention): embed_tokens of
    word_embed_proj_dim, embed_positions of max_position_embeddings + 2 rows, project_in / project_out (no bias)
    where word_embed_proj_dim differs from hidden_size, per layer q/k/v/out_proj and fc1 / fc2 of ffn_dim (biased
    with enable_bias), self_attn_layer_norm and final_layer_norm (weight and bias with
    layer_norm_elementwise_affine), the decoder's final_layer_norm (opt_final_norm); lm_head of
    word_embed_proj_dim, tied by default."""
    hidden, proj, bias, norm = opt_widths(f)
    ffn = f.int("ffn_dim", default=4 * hidden, maximum=10**8)
    per_layer = 4 * hidden * hidden + 2 * hidden * ffn + ((4 * hidden + ffn + hidden) if bias else 0) + 2 * norm
    total = embeddings(f, proj, True, 0) + (f.int("max_position_embeddings", default=2048) + 2) * hidden
    total += (2 * proj * hidden if proj != hidden else 0) + (norm if opt_final_norm(f) else 0)
    total += len(layers) * per_layer
    return total, total


def persimmon(f: Fields, layers: list, dims) -> tuple[int, int]:
    """PersimmonForCausalLM (modeling_persimmon.py PersimmonAttention, PersimmonMLP, PersimmonDecoderLayer):
    query_key_value (3 x hidden) and dense, biased; q_layernorm and k_layernorm (LayerNorms over head_dim with a
    bias) only under qk_layernorm (PersimmonConfig default true); mlp.dense_h_to_4h and dense_4h_to_h, biased;
    input_layernorm and post_attention_layernorm; final_layernorm; embed_tokens and lm_head (untied by default)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    q, k = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * k) + (q + 2 * k) + q * hidden + hidden
    if f.flag("qk_layernorm", default=True):
        attn += 2 * 2 * head_dim
    per_layer = attn + 2 * hidden * inter + inter + hidden + 2 * 2 * hidden
    n = embeddings(f, hidden, False, 0) + 2 * hidden + len(layers) * per_layer
    return n, n
