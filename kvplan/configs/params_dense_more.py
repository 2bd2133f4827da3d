"""Parameter counters of dense attention decoders whose modules are not Llama's, found while writing their per-module
tables (configs/weight_tables/dense_more.py) and checked against the modules transformers 5.25 builds on the meta
device (tests/test_quant_exclude.py). Each was counted before by params_generic.count_params (Llama's modules), which
passed tests/parity/test_param_parity.py only because what it missed is under that test's 0.5% tolerance.

Each counter is `count(f, layers, dims) -> (total, active)` and reads the fields params_decoder.decoder reads (an absent
intermediate_size is 4 x hidden_size, an absent vocab_size 0), besides the flags named."""

from __future__ import annotations

from .fields import Fields
from .params_decoder import decoder
from .params_generic import count_params


def cohere(f: Fields, layers: list, dims) -> tuple[int, int]:
    """CohereForCausalLM (Command R / R+; transformers 5.25 modeling_cohere.py): a parallel block, so one
    CohereLayerNorm a layer (input_layernorm: a weight, no bias) and a final one; q/k/v/o_proj biased with
    attention_bias; with use_qk_norm, q_norm of [heads, head_dim] and k_norm of [KV heads, head_dim]
    (CohereAttention); the gated MLP; the head tied unless tie_word_embeddings is false (CohereConfig).
    Before: two norms a layer and no q/k norms."""
    heads, kv, head_dim = dims[:3]
    total = decoder(qkv_bias=("attention_bias", False), o_bias=("attention_bias", False), norm_bias=False, norms=1,
                    tied=True)(f, layers, dims)[0]
    if f.flag("use_qk_norm"):
        total += len(layers) * (heads + kv) * head_dim
    return total, total


def olmo(f: Fields, layers: list, dims) -> tuple[int, int]:
    """OlmoForCausalLM (OLMo 1; modeling_olmo.py): OlmoLayerNorm has no weight and no bias (F.layer_norm with
    None, None), so the layers' two norms and the final norm hold nothing; q/k/v/o_proj biased with
    attention_bias; the gated MLP; the head untied unless tie_word_embeddings (OlmoConfig). Before: three norms of
    hidden_size counted."""
    total = decoder(qkv_bias=("attention_bias", False), o_bias=("attention_bias", False), norms=0, final_norm=False,
                    tied=False)(f, layers, dims)[0]
    return total, total


def olmo2(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Olmo2ForCausalLM (OLMo 2; modeling_olmo2.py): Llama's modules (q/k/v/o_proj biased with attention_bias,
    the gated MLP, post_attention_layernorm and post_feedforward_layernorm) and Olmo2Attention's q_norm over the
    whole query projection (heads x head_dim) and k_norm over the whole key projection (KV heads x head_dim), as
    OLMo 3 (params_generic._attention). Before: the q/k norms uncounted."""
    heads, kv, head_dim = dims[:3]
    total = decoder(qkv_bias=("attention_bias", False), o_bias=("attention_bias", False), norm_bias=False,
                    tied=False)(f, layers, dims)[0]
    total += len(layers) * (heads + kv) * head_dim
    return total, total


def seed_oss(f: Fields, layers: list, dims) -> tuple[int, int]:
    """SeedOssForCausalLM (Seed-OSS; modeling_seed_oss.py): q/k/v_proj biased with attention_bias (SeedOssConfig's
    default: true), o_proj with attention_out_bias (default false), the MLP's three projections with mlp_bias
    (default false); two RMSNorms a layer; the head untied unless tie_word_embeddings. Before: the q/k/v biases
    only where the config writes attention_bias, and o_proj's bias with them."""
    total = decoder(qkv_bias=("attention_bias", True), o_bias=("attention_out_bias", False),
                    mlp_bias=("mlp_bias", False), norm_bias=False, tied=False)(f, layers, dims)[0]
    return total, total


_PHI = decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True, norms=1, head_bias=True, tied=False)


def phi(f: Fields, layers: list, dims) -> tuple[int, int]:
    """PhiForCausalLM (Phi-1, Phi-1.5, Phi-2; modeling_phi.py): params_decoder.decoder's plain MLP, biases everywhere,
    one LayerNorm (weight and bias) a layer, a biased head; with qk_layernorm, PhiAttention's q_layernorm and
    k_layernorm, LayerNorms (weight and bias) over hidden_size // num_attention_heads. Before: those uncounted."""
    total = _PHI(f, layers, dims)[0]
    if f.flag("qk_layernorm"):
        total += len(layers) * 2 * 2 * (f.int("hidden_size") // f.int("num_attention_heads"))
    return total, total


def granite_swa(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GraniteSWAForCausalLM (modeling_granite_swa.py): Granite's modules (params_generic.count_params) and
    GraniteSWAAttention's sinks, one learnable logit a query head a layer. Before: the sinks uncounted."""
    total = count_params(f, len(layers), *dims[:3])[0] + len(layers) * dims[0]
    return total, total


def hunyuan_v1_dense(f: Fields, layers: list, dims) -> tuple[int, int]:
    """HunYuanDenseV1ForCausalLM (modeling_hunyuan_v1_dense.py): Llama's modules (params_generic.count_params) and
    HunYuanDenseV1Attention's query_layernorm and key_layernorm, RMSNorms over head_dim, on every layer whatever
    use_qk_norm says. Before: those uncounted."""
    total = count_params(f, len(layers), *dims[:3])[0] + len(layers) * 2 * dims[2]
    return total, total


def diffllama(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DiffLlamaForCausalLM (modeling_diffllama.py): Llama's modules (params_generic.count_params) and
    DiffLlamaAttention's
    four lambda vectors (lambda_q1, lambda_k1, lambda_q2, lambda_k2) of head_dim; its groupnorm holds no weight
    (elementwise_affine=False). Before: the lambdas uncounted."""
    total = count_params(f, len(layers), *dims[:3])[0] + len(layers) * 4 * dims[2]
    return total, total


COUNTERS = {"cohere": cohere, "olmo": olmo, "olmo2": olmo2, "seed_oss": seed_oss, "phi": phi,
            "granite_swa": granite_swa, "hunyuan_v1_dense": hunyuan_v1_dense,
            "diffllama": diffllama}
