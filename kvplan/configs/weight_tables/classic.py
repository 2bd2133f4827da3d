"""Per-module parameter tables (configs/weight_tables/__init__.py) of the older dense families: InternLM2, Falcon, Baichuan,
ChatGLM, StableLM, GPTBigCode (StarCoder), GPT-NeoX, MPT, BLOOM, OPT, GPT-J, GPT-2, Persimmon and XGLM. Each
mirrors its family's counter term by term and names modules as the checkpoints' safetensors do under
transformers 5.25's names (models/<type>/modeling_<type>.py; the remote code of InternLM2, Baichuan and ChatGLM,
as vLLM 0.34 loads them). Families whose checkpoints keep everything under `model.` give names relative to it
(weight_tables.ROOTS); the others (`transformer.`, `gpt_neox.`, `model.decoder.`) give full names as top modules.
GPT-2 and BLOOM checkpoints on the Hub often store their names without the `transformer.` prefix, which
transformers adds on load; the tables use transformers' names.

What each TP rank holds whole (weight_tables.replicated_params), as read in vLLM 0.34.0:
- Served by a vLLM model file of its own: internlm2.py (RMSNorm), falcon.py, bloom.py, gpt2.py, gpt_j.py, opt.py
  (LayerNorm weight and bias), chatglm.py (RMSNorm, or LayerNorm without rmsnorm). The biases of their
  RowParallelLinear output projections (falcon's dense / dense_4h_to_h with `bias`, BLOOM's dense /
  dense_4h_to_h, GPT-2's attn.c_proj / mlp.c_proj, GPT-J's mlp.fc_out, OPT's out_proj / fc2 with enable_bias,
  ChatGLM's dense / dense_4h_to_h with add_bias_linear) are whole on every rank (linear.py RowParallelLinear);
  the column-parallel biases split with their outputs. GPT-2's wpe and OPT's embed_positions are plain
  nn.Embedding (whole); OPT's project_in / project_out are ReplicatedLinear (whole); GPT-J's lm_head bias splits
  with the vocabulary (ParallelLMHead bias=True).
- Served by the Transformers modeling backend (registry.py _TRANSFORMERS_SUPPORTED_MODELS: GPTBigCodeForCausalLM,
  GPTNeoXForCausalLM, StableLmForCausalLM; models/transformers/base.py recursive replace): nn.LayerNorm becomes
  vLLM's LayerNorm (whole); an nn.Linear takes the style of the model's base_model_tp_plan, else of a fuser, else
  "replicate" (utils.py replace_linear_class: ReplicatedLinear, whole). GPT-NeoX has a plan (configuration_gpt_neox.py:
  query_key_value and dense_h_to_4h colwise, dense and dense_4h_to_h rowwise, so their biases are whole).
  StableLM has none, but fusers split it all: fusers/qkv.py QKVFuser (q/k/v_proj into a QKVParallelLinear,
  o_proj rowwise) and fusers/glu.py GLUFuser (gate/up merged, down_proj rowwise). GPTBigCode has none: its
  multi-query attention's `c_attn(x).split((embed, kv, kv))` matches fusers/packed_qkv.py PackedQKVFuser
  (QKVParallelLinear, attn.c_proj rowwise: its bias whole), but its MLP (c_fc -> act -> c_proj) matches no
  fuser, so mlp.c_fc and mlp.c_proj are ReplicatedLinear, whole on every rank with their biases; without
  multi_query its attention splits by a view, which PackedQKVFuser does not match, so it stays whole too. That is
  vLLM 0.25+ only (its own gpt_bigcode.py before, and SGLang 0.5.23's, split c_fc and c_proj as the checkpoint's
  layout does): the table keeps the split layout, and carries vLLM's whole copies as Module.vllm_delta
  (configs/param_vllm_load.py replicated_by_transformers_backend), which only vLLM's profile adds.
  wpe is a plain nn.Embedding (only the vocab embeddings become VocabParallelEmbedding): whole.
- Not served by vLLM 0.34 (registry.py _PREVIOUSLY_SUPPORTED_MODELS: BaichuanForCausalLM 0.23.0,
  PersimmonForCausalLM 0.25.0, MPTForCausalLM 0.28.0; XGLM never had a model file): the tables keep the layout
  their last vLLM model files had, read in vLLM's history: mpt.py (QKVParallelLinear Wqkv, RowParallelLinear
  out_proj and down_proj, nn.LayerNorm), persimmon.py (QKVParallelLinear query_key_value, RowParallelLinear
  dense and dense_4h_to_h with biases, nn.LayerNorm q_layernorm / k_layernorm and layer norms): norms whole, the
  output projections' biases whole, the rest split. Baichuan's (no biases: only its RMSNorms whole) and XGLM's
  (OPT's layout) follow the same rule, not read in a vLLM file.

KV heads: where the TP size exceeds the KV heads (GPTBigCode's one, Falcon-7B's one, ChatGLM's two groups) vLLM's
QKVParallelLinear keeps one whole KV head on each rank: the fused projections give the key and value rows as their
KV share (weight_tables.Module.kv_heads), which each rank holds 1 / kv_heads of (capacity.weights.kv_held).
InternLM2's wqkv interleaves its rows by KV group; vLLM 0.34 internlm2.py still builds it as a QKVParallelLinear of
(heads / tp + 2 x max(1, kv / tp)) x head_dim rows a rank, which these bytes follow (it loads the checkpoint's wqkv
through that layer's loader without a shard id; whether the rows it takes are right at TP above the KV heads was not
checked: only the bytes it allocates are counted).
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import ConfigError
from ..fields import Fields
from . import Module, _ends, _linear, _mlp
from ..param_parts import embeddings
from ..param_vllm_load import replicated_by_transformers_backend


def _lin(name: str, inputs: int, outputs: int, role: str, bias: bool = False, row: bool = False,
         whole: bool = False, top: bool = False, kv_heads: int = 0, kv_outputs: int | None = None) -> Module:
    """A linear layer (weight_tables._linear, with its KV share) that may be named from the top of the
    checkpoint."""
    return _linear(name, inputs, outputs, role, bias, row, whole, kv_heads, kv_outputs, top)


def _norm(name: str, width: int, bias: bool = True, top: bool = False) -> Module:
    """A LayerNorm (weight and bias) or, with bias False, an RMSNorm or weight-only LayerNorm."""
    return Module(name, 0, width * (2 if bias else 1), "norms", top=top)


def _head(f: Fields, name: str, hidden: int, tied_default: bool, vocab_default: int | None = 0,
          bias: bool = False) -> list[Module]:
    """The LM head (weight vocab x hidden, a bias of vocab with `bias`), none where tied to the embeddings
    (param_parts.embeddings: its head bias stays even then)."""
    vocab = (f.int("vocab_size", minimum=0) if vocab_default is None
             else f.int("vocab_size", default=vocab_default, minimum=0))
    both = embeddings(f, hidden, tied_default, vocab_default, head_bias=bias)
    weight = both - vocab * hidden - (vocab if bias else 0)
    if not weight and not bias:
        return []
    return [Module(name, weight, vocab if bias else 0, "lm_head", top=True, inputs=hidden)]


def _embed(name: str, rows: int, hidden: int, top: bool = False, whole: bool = False) -> Module:
    """Token embeddings (VocabParallelEmbedding: split), or learned positions (whole: a plain nn.Embedding)."""
    return Module(name, 0, rows * hidden, "embeddings", top=top, whole=whole)


# -- InternLM2 (params_generic.count_params) ---------------------------------------------------------------------------

def internlm2(f: Fields, layers: list, dims) -> list[Module]:
    """InternLM2ForCausalLM (remote modeling_internlm2.py; vLLM 0.34 internlm2.py InternLM2Attention, InternLM2MLP,
    InternLMDecoderLayer): model.tok_embeddings; per layer attention.wqkv (one fused projection of
    (heads + 2 x KV heads) x head_dim whose rows are grouped by KV head: queries of a group, its key, its value;
    vLLM builds it as a QKVParallelLinear, a 1/TP slice of it a rank, and regroups the outputs at run time:
    InternLM2Attention.split_qkv all-gathers them), attention.wo, feed_forward.w1 / w3 (vLLM's gate_up_proj) and
    w2, attention_norm and ffn_norm (RMSNorm, whole);
    model.norm; output (the head). vLLM builds wqkv and wo without a bias, so a config with `bias` gets no table
    (the counter does not count one either)."""
    if f.flag("bias"):
        raise ConfigError("bias: vLLM 0.34 internlm2.py builds wqkv and wo without biases")
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("tok_embeddings", vocab, hidden), _norm("norm", hidden, False)]
    out += _head(f, "output", hidden, False)
    for i in range(len(layers)):
        a, m = f"layers.{i}.attention", f"layers.{i}.feed_forward"
        out += [_lin(f"{a}.wqkv", hidden, (heads + 2 * kv) * head_dim, "attention", kv_heads=kv,
                     kv_outputs=2 * kv * head_dim),
                _lin(f"{a}.wo", heads * head_dim, hidden, "attention", row=True),
                _lin(f"{m}.w1", hidden, inter, "mlp"), _lin(f"{m}.w3", hidden, inter, "mlp"),
                _lin(f"{m}.w2", inter, hidden, "mlp"),
                _norm(f"layers.{i}.attention_norm", hidden, False), _norm(f"layers.{i}.ffn_norm", hidden, False)]
    return out


# -- Baichuan (params_generic.count_params) ----------------------------------------------------------------------------

def baichuan(f: Fields, layers: list, dims) -> list[Module]:
    """BaichuanForCausalLM (Baichuan / Baichuan2 remote modeling_baichuan.py: BaichuanAttention W_pack, the fused
    q/k/v of 3 x hidden without a bias, o_proj, MLP gate/up/down_proj, RMSNorm input_layernorm and
    post_attention_layernorm; model.embed_tokens, model.norm, lm_head: Baichuan2's NormHead holds one weight of
    vocab x hidden). No field of theirs adds a bias; a config with attention_bias (which the counter would count)
    gets no table."""
    if f.flag("attention_bias"):
        raise ConfigError("attention_bias: Baichuan's W_pack and o_proj have no biases")
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    out = _ends(f, hidden, False, 0)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [_lin(f"{a}.W_pack", hidden, (heads + 2 * kv) * head_dim, "attention"),
                _lin(f"{a}.o_proj", heads * head_dim, hidden, "attention", row=True),
                *_mlp(f"layers.{i}.mlp", hidden, inter, "mlp"),
                _norm(f"layers.{i}.input_layernorm", hidden, False),
                _norm(f"layers.{i}.post_attention_layernorm", hidden, False)]
    return out


# -- ChatGLM (params_classic.chatglm) ---------------------------------------------------------------------------

def chatglm(f: Fields, layers: list, dims) -> list[Module]:
    """ChatGLM2/3, GLM-4-9B-chat (remote code; vLLM 0.34 chatglm.py), as params_classic.chatglm counts them:
    transformer.embedding.word_embeddings, transformer.encoder.layers.N.{input_layernorm,
    self_attention.query_key_value, self_attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
    mlp.dense_4h_to_h}, transformer.encoder.final_layernorm, transformer.output_layer."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.int("intermediate_size", maximum=10**8)
    linear_bias = f.flag("add_bias_linear")
    qkv_bias = linear_bias or f.flag("add_qkv_bias")
    layernorm = not f.flag("rmsnorm", default=True)
    vocab = f.int("vocab_size", minimum=0)
    out = [_embed("transformer.embedding.word_embeddings", vocab, hidden, top=True)]
    out += _head(f, "transformer.output_layer", hidden, False, None)
    if f.flag("post_layer_norm", default=True):
        out.append(_norm("transformer.encoder.final_layernorm", hidden, layernorm, top=True))
    q, k = heads * head_dim, kv * head_dim
    for i in range(len(layers)):
        layer = f"transformer.encoder.layers.{i}"
        a, m = f"{layer}.self_attention", f"{layer}.mlp"
        out += [_lin(f"{a}.query_key_value", hidden, q + 2 * k, "attention", qkv_bias, top=True, kv_heads=kv,
                     kv_outputs=2 * k),
                _lin(f"{a}.dense", q, hidden, "attention", linear_bias, row=True, top=True),
                _lin(f"{m}.dense_h_to_4h", hidden, 2 * ffn, "mlp", linear_bias, top=True),
                _lin(f"{m}.dense_4h_to_h", ffn, hidden, "mlp", linear_bias, row=True, top=True),
                _norm(f"{layer}.input_layernorm", hidden, layernorm, top=True),
                _norm(f"{layer}.post_attention_layernorm", hidden, layernorm, top=True)]
    return out


# -- StableLM (params_classic.stablelm) -------------------------------------------------------------------------

def stablelm(f: Fields, layers: list, dims) -> list[Module]:
    """StableLmForCausalLM (transformers 5.25 modeling_stablelm.py), as params_classic.stablelm counts it: per
    layer q/k/v_proj (use_qkv_bias), o_proj, per-head q_layernorm.norms.H / k_layernorm.norms.H under
    qk_layernorm, mlp gate/up/down_proj, input_layernorm and (without use_parallel_residual)
    post_attention_layernorm with biases; model.norm with a bias; lm_head unless tied."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**8)
    bias = f.flag("use_qkv_bias")
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("embed_tokens", vocab, hidden), _norm("norm", hidden)] + _head(f, "lm_head", hidden, False)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [_lin(f"{a}.q_proj", hidden, heads * head_dim, "attention", bias),
                _lin(f"{a}.k_proj", hidden, kv * head_dim, "attention", bias, kv_heads=kv),
                _lin(f"{a}.v_proj", hidden, kv * head_dim, "attention", bias, kv_heads=kv),
                _lin(f"{a}.o_proj", hidden, hidden, "attention", row=True)]
        if f.flag("qk_layernorm"):
            out += [_norm(f"{a}.q_layernorm.norms.{h}", head_dim, False) for h in range(heads)]
            out += [_norm(f"{a}.k_layernorm.norms.{h}", head_dim, False) for h in range(kv)]
        out += _mlp(f"layers.{i}.mlp", hidden, inter, "mlp")
        out.append(_norm(f"layers.{i}.input_layernorm", hidden))
        if not f.flag("use_parallel_residual"):
            out.append(_norm(f"layers.{i}.post_attention_layernorm", hidden))
    return out


# -- Falcon (params_dense.falcon) ------------------------------------------------------------------------------

def falcon(f: Fields, layers: list, dims) -> list[Module]:
    """FalconForCausalLM (transformers 5.25 modeling_falcon.py; vLLM 0.34 falcon.py), as params_dense.falcon
    counts it, with its defaults: transformer.word_embeddings; per layer self_attention.query_key_value and
    dense, mlp.dense_h_to_4h and dense_4h_to_h (all biased with `bias`), the LayerNorms (input_layernorm and
    post_attention_layernorm without parallel_attn; ln_attn and ln_mlp with num_ln_in_parallel_attn 2, the
    default of new_decoder_architecture; else input_layernorm); transformer.ln_f; lm_head unless tied (the
    default)."""
    from ..params_dense import falcon_fields

    hidden, vocab, bias, kv, qkv_out, ffn, norms = falcon_fields(f)
    hd = hidden // f.int("num_attention_heads", default=71)
    out = [_embed("transformer.word_embeddings", vocab, hidden, top=True), _norm("transformer.ln_f", hidden, top=True)]
    if not f.flag("tie_word_embeddings", default=True):
        out.append(Module("lm_head", vocab * hidden, 0, "lm_head", top=True, inputs=hidden))
    for i in range(len(layers)):
        layer = f"transformer.h.{i}"
        out += [_lin(f"{layer}.self_attention.query_key_value", hidden, qkv_out, "attention", bias, top=True,
                     kv_heads=kv, kv_outputs=2 * kv * hd),
                _lin(f"{layer}.self_attention.dense", hidden, hidden, "attention", bias, row=True, top=True),
                _lin(f"{layer}.mlp.dense_h_to_4h", hidden, ffn, "mlp", bias, top=True),
                _lin(f"{layer}.mlp.dense_4h_to_h", ffn, hidden, "mlp", bias, row=True, top=True)]
        out += [_norm(f"{layer}.{norm}", hidden, top=True) for norm in norms]
    return out


# -- GPTBigCode (params_decoder.bigcode) -------------------------------------------------------------------------------

def gpt_bigcode(f: Fields, layers: list, dims) -> list[Module]:
    """GPTBigCodeForCausalLM (transformers 5.25 modeling_gpt_bigcode.py), as params_decoder._bigcode_params counts it:
    transformer.wte, transformer.wpe (n_positions rows); per layer ln_1, attn.c_attn (queries, then one key and
    one value head with multi_query, the default, else all heads; biased), attn.c_proj, ln_2, mlp.c_fc and
    mlp.c_proj (biased); transformer.ln_f; lm_head unless tied (the default). Whole on each rank under vLLM 0.34's
    Transformers backend (see the module docstring): the LayerNorms, wpe, attn.c_proj's bias, the MLP, and the
    attention too without multi_query."""
    hidden = f.int("n_embd", "hidden_size")
    heads = f.int("n_head", "num_attention_heads")
    inner = f.int("n_inner", default=4 * hidden)
    multi_query = f.flag("multi_query", default=True)
    kv_width = (hidden // heads) * (1 if multi_query else heads)
    vocab = f.int("vocab_size", default=0, minimum=0)
    top = "transformer"
    out = [_embed(f"{top}.wte", vocab, hidden, top=True),
           _embed(f"{top}.wpe", f.int("n_positions", default=0, minimum=0), hidden, top=True, whole=True),
           _norm(f"{top}.ln_f", hidden, top=True)] + _head(f, "lm_head", hidden, True)
    for i in range(len(layers)):
        b = f"{top}.h.{i}"
        out += [_norm(f"{b}.ln_1", hidden, top=True), _norm(f"{b}.ln_2", hidden, top=True),
                _backend_whole(_lin(f"{b}.attn.c_attn", hidden, hidden + 2 * kv_width, "attention", True, top=True,
                                    kv_heads=1 if multi_query else 0, kv_outputs=2 * kv_width), not multi_query),
                _backend_whole(_lin(f"{b}.attn.c_proj", hidden, hidden, "attention", True, row=True, top=True),
                               not multi_query, breaks_tp=True),
                _backend_whole(_lin(f"{b}.mlp.c_fc", hidden, inner, "mlp", True, top=True), True),
                _backend_whole(_lin(f"{b}.mlp.c_proj", inner, hidden, "mlp", True, row=True, top=True), True)]
    return out


def _backend_whole(m: Module, whole: bool = True, model_type: str = "gpt_bigcode", breaks_tp: bool = False) -> Module:
    """m split as the checkpoint's layout (and SGLang, and vLLM's own gpt_bigcode.py before 0.25) splits it; where
    `whole`, vLLM's Transformers backend (0.25+ for GPTBigCode; param_vllm_load.TRANSFORMERS_BACKEND_FROM) holds it
    whole on every rank (Module.vllm_delta: its weight, and its bias unless a RowParallelLinear bias, whole
    already). breaks_tp: an attention output projection whose being whole makes vLLM fail at TP > 1
    (LoadDelta.breaks_tp)."""
    if not whole:
        return m
    return replace(m, vllm_delta=replicated_by_transformers_backend(m.weight, 0 if m.whole_bias else m.other,
                                                                    model_type, breaks_tp))


# -- the dense decoders of params_decoder.decoder ----------------------------------------------------------------------

def _widths(f: Fields, dims) -> tuple[int, int, int, int]:
    """(hidden, query width, KV width, MLP width) as params_decoder.decoder reads them (intermediate_size, else 4 x
    hidden)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = f.int("intermediate_size", default=None, maximum=10**8)
    return hidden, heads * head_dim, kv * head_dim, width if width is not None else 4 * hidden


def gpt_neox(f: Fields, layers: list, dims) -> list[Module]:
    """GPTNeoXForCausalLM (transformers 5.25 modeling_gpt_neox.py; the Pythia checkpoints): gpt_neox.embed_in; per
    layer input_layernorm and post_attention_layernorm (both built, use_parallel_residual or not),
    attention.query_key_value and attention.dense (biased with attention_bias, default true), mlp.dense_h_to_4h
    and dense_4h_to_h (biased); gpt_neox.final_layer_norm; embed_out, the head (transformers 5.25 renames it
    lm_head on load: conversion_mapping.py), untied by default."""
    hidden, q, k, width = _widths(f, dims)
    bias = f.flag("attention_bias", default=True)
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("gpt_neox.embed_in", vocab, hidden, top=True), _norm("gpt_neox.final_layer_norm", hidden, top=True)]
    out += _head(f, "embed_out", hidden, False)
    for i in range(len(layers)):
        layer = f"gpt_neox.layers.{i}"
        out += [_norm(f"{layer}.input_layernorm", hidden, top=True),
                _norm(f"{layer}.post_attention_layernorm", hidden, top=True),
                _lin(f"{layer}.attention.query_key_value", hidden, q + 2 * k, "attention", bias, top=True),
                _lin(f"{layer}.attention.dense", q, hidden, "attention", bias, row=True, top=True),
                _lin(f"{layer}.mlp.dense_h_to_4h", hidden, width, "mlp", True, top=True),
                _lin(f"{layer}.mlp.dense_4h_to_h", width, hidden, "mlp", True, row=True, top=True)]
    return out


def mpt(f: Fields, layers: list, dims) -> list[Module]:
    """MptForCausalLM (transformers 5.25 modeling_mpt.py; MPT's remote code names them alike), as the family's
    params_decoder.decoder counts it: transformer.wte; per block norm_1 and norm_2 (LayerNorms whose bias transformers
    drops), attn.Wqkv (queries, then keys and values of attn_config.kv_n_heads where set), attn.out_proj,
    ffn.up_proj and ffn.down_proj of expansion_ratio x d_model, none biased; transformer.norm_f (weight only);
    lm_head unless tied (the default)."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = int(f.number("expansion_ratio", default=4)) * hidden
    q, k = heads * head_dim, kv * head_dim
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("transformer.wte", vocab, hidden, top=True), _norm("transformer.norm_f", hidden, False, top=True)]
    out += _head(f, "lm_head", hidden, True)
    for i in range(len(layers)):
        b = f"transformer.blocks.{i}"
        out += [_norm(f"{b}.norm_1", hidden, False, top=True), _norm(f"{b}.norm_2", hidden, False, top=True),
                _lin(f"{b}.attn.Wqkv", hidden, q + 2 * k, "attention", top=True, kv_heads=kv, kv_outputs=2 * k),
                _lin(f"{b}.attn.out_proj", q, hidden, "attention", row=True, top=True),
                _lin(f"{b}.ffn.up_proj", hidden, width, "mlp", top=True),
                _lin(f"{b}.ffn.down_proj", width, hidden, "mlp", row=True, top=True)]
    return out


def bloom(f: Fields, layers: list, dims) -> list[Module]:
    """BloomForCausalLM (transformers 5.25 modeling_bloom.py; vLLM 0.34 bloom.py): transformer.word_embeddings and
    word_embeddings_layernorm; per block input_layernorm, self_attention.query_key_value and dense,
    post_attention_layernorm, mlp.dense_h_to_4h and dense_4h_to_h (all biased); transformer.ln_f; lm_head
    unless tied (the default)."""
    hidden, q, k, width = _widths(f, dims)
    vocab = f.int("vocab_size", default=0, minimum=0)
    t = "transformer"
    out = [_embed(f"{t}.word_embeddings", vocab, hidden, top=True),
           _norm(f"{t}.word_embeddings_layernorm", hidden, top=True), _norm(f"{t}.ln_f", hidden, top=True)]
    out += _head(f, "lm_head", hidden, True)
    for i in range(len(layers)):
        b = f"{t}.h.{i}"
        out += [_norm(f"{b}.input_layernorm", hidden, top=True), _norm(f"{b}.post_attention_layernorm", hidden, top=True),
                _lin(f"{b}.self_attention.query_key_value", hidden, q + 2 * k, "attention", True, top=True),
                _lin(f"{b}.self_attention.dense", q, hidden, "attention", True, row=True, top=True),
                _lin(f"{b}.mlp.dense_h_to_4h", hidden, width, "mlp", True, top=True),
                _lin(f"{b}.mlp.dense_4h_to_h", width, hidden, "mlp", True, row=True, top=True)]
    return out


def gpt2(f: Fields, layers: list, dims) -> list[Module]:
    """GPT2LMHeadModel (transformers 5.25 modeling_gpt2.py, Conv1D layers of the same sizes; vLLM 0.34 gpt2.py):
    transformer.wte, transformer.wpe (max_position_embeddings rows); per block ln_1, attn.c_attn, attn.c_proj,
    ln_2, mlp.c_fc, mlp.c_proj (all biased); transformer.ln_f; lm_head unless tied (the default)."""
    hidden, q, k, width = _widths(f, dims)
    vocab = f.int("vocab_size", default=0, minimum=0)
    t = "transformer"
    out = [_embed(f"{t}.wte", vocab, hidden, top=True),
           _embed(f"{t}.wpe", f.int("max_position_embeddings"), hidden, top=True, whole=True),
           _norm(f"{t}.ln_f", hidden, top=True)] + _head(f, "lm_head", hidden, True)
    for i in range(len(layers)):
        b = f"{t}.h.{i}"
        out += [_norm(f"{b}.ln_1", hidden, top=True), _norm(f"{b}.ln_2", hidden, top=True),
                _lin(f"{b}.attn.c_attn", hidden, q + 2 * k, "attention", True, top=True),
                _lin(f"{b}.attn.c_proj", q, hidden, "attention", True, row=True, top=True),
                _lin(f"{b}.mlp.c_fc", hidden, width, "mlp", True, top=True),
                _lin(f"{b}.mlp.c_proj", width, hidden, "mlp", True, row=True, top=True)]
    return out


def gptj(f: Fields, layers: list, dims) -> list[Module]:
    """GPTJForCausalLM (transformers 5.25 modeling_gptj.py; vLLM 0.34 gpt_j.py fuses q/k/v_proj into qkv_proj):
    transformer.wte; per block ln_1 (one LayerNorm: attention and MLP run in parallel), attn.q_proj / k_proj /
    v_proj / out_proj (no biases), mlp.fc_in and fc_out (biased); transformer.ln_f; lm_head with a bias, untied
    by default."""
    hidden, q, k, width = _widths(f, dims)
    vocab = f.int("vocab_size", default=0, minimum=0)
    t = "transformer"
    out = [_embed(f"{t}.wte", vocab, hidden, top=True), _norm(f"{t}.ln_f", hidden, top=True)]
    out += _head(f, "lm_head", hidden, False, bias=True)
    for i in range(len(layers)):
        b = f"{t}.h.{i}"
        out += [_norm(f"{b}.ln_1", hidden, top=True),
                _lin(f"{b}.attn.q_proj", hidden, q, "attention", top=True),
                _lin(f"{b}.attn.k_proj", hidden, k, "attention", top=True),
                _lin(f"{b}.attn.v_proj", hidden, k, "attention", top=True),
                _lin(f"{b}.attn.out_proj", q, hidden, "attention", row=True, top=True),
                _lin(f"{b}.mlp.fc_in", hidden, width, "mlp", True, top=True),
                _lin(f"{b}.mlp.fc_out", width, hidden, "mlp", True, row=True, top=True)]
    return out


def persimmon(f: Fields, layers: list, dims) -> list[Module]:
    """PersimmonForCausalLM (transformers 5.25 modeling_persimmon.py), as params_classic.persimmon counts it:
    model.embed_tokens; per layer self_attn.query_key_value and dense (biased), q_layernorm and k_layernorm
    (LayerNorms over head_dim, under qk_layernorm, the default), mlp.dense_h_to_4h and dense_4h_to_h (biased),
    input_layernorm and post_attention_layernorm; model.final_layernorm; lm_head, untied by default."""
    heads, _, head_dim, _ = dims
    hidden, q, k, width = _widths(f, dims)
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("embed_tokens", vocab, hidden), _norm("final_layernorm", hidden)] + _head(f, "lm_head", hidden, False)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [_lin(f"{a}.query_key_value", hidden, q + 2 * k, "attention", True),
                _lin(f"{a}.dense", q, hidden, "attention", True, row=True)]
        if f.flag("qk_layernorm", default=True):
            out += [_norm(f"{a}.q_layernorm", head_dim), _norm(f"{a}.k_layernorm", head_dim)]
        out += [_lin(f"layers.{i}.mlp.dense_h_to_4h", hidden, width, "mlp", True),
                _lin(f"layers.{i}.mlp.dense_4h_to_h", width, hidden, "mlp", True, row=True),
                _norm(f"layers.{i}.input_layernorm", hidden), _norm(f"layers.{i}.post_attention_layernorm", hidden)]
    return out


def xglm(f: Fields, layers: list, dims) -> list[Module]:
    """XGLMForCausalLM (transformers 5.25 modeling_xglm.py): model.embed_tokens (its sinusoidal positions are a
    buffer, not a parameter); per layer self_attn.q/k/v_proj and out_proj, self_attn_layer_norm, fc1, fc2,
    final_layer_norm (all biased); model.layer_norm; lm_head unless tied (the default)."""
    hidden, q, k, width = _widths(f, dims)
    vocab = f.int("vocab_size", default=0, minimum=0)
    out = [_embed("embed_tokens", vocab, hidden), _norm("layer_norm", hidden)] + _head(f, "lm_head", hidden, True)
    for i in range(len(layers)):
        a = f"layers.{i}.self_attn"
        out += [_lin(f"{a}.q_proj", hidden, q, "attention", True), _lin(f"{a}.k_proj", hidden, k, "attention", True),
                _lin(f"{a}.v_proj", hidden, k, "attention", True),
                _lin(f"{a}.out_proj", q, hidden, "attention", True, row=True),
                _norm(f"layers.{i}.self_attn_layer_norm", hidden),
                _lin(f"layers.{i}.fc1", hidden, width, "mlp", True),
                _lin(f"layers.{i}.fc2", width, hidden, "mlp", True, row=True),
                _norm(f"layers.{i}.final_layer_norm", hidden)]
    return out


def opt(f: Fields, layers: list, dims) -> list[Module]:
    """OPTForCausalLM (transformers 5.25 modeling_opt.py; vLLM 0.34 opt.py), as params_classic.opt counts it:
    model.decoder.embed_tokens (word_embed_proj_dim wide), embed_positions (max_position_embeddings + 2 rows, a
    plain nn.Embedding in vLLM: whole), project_in / project_out where word_embed_proj_dim differs from hidden
    (vLLM ReplicatedLinear: whole); per layer self_attn.q/k/v_proj and out_proj, fc1, fc2 (biased with
    enable_bias), self_attn_layer_norm and final_layer_norm (with layer_norm_elementwise_affine); the decoder's
    final_layer_norm (params_classic.opt_final_norm); lm_head unless tied (the default)."""
    from ..params_classic import opt_final_norm, opt_widths

    hidden, proj, bias, norm = opt_widths(f)
    ffn = f.int("ffn_dim", default=4 * hidden, maximum=10**8)
    vocab = f.int("vocab_size", default=0, minimum=0)
    d = "model.decoder"
    out = [_embed(f"{d}.embed_tokens", vocab, proj, top=True),
           _embed(f"{d}.embed_positions", f.int("max_position_embeddings", default=2048) + 2, hidden, top=True,
                  whole=True)]
    out += _head(f, "lm_head", proj, True)
    if proj != hidden:
        out += [_lin(f"{d}.project_in", proj, hidden, "other", whole=True, top=True),
                _lin(f"{d}.project_out", hidden, proj, "other", whole=True, top=True)]
    if opt_final_norm(f) and norm:
        out.append(Module(f"{d}.final_layer_norm", 0, norm, "norms", top=True))
    for i in range(len(layers)):
        layer = f"{d}.layers.{i}"
        a = f"{layer}.self_attn"
        out += [_lin(f"{a}.q_proj", hidden, hidden, "attention", bias, top=True),
                _lin(f"{a}.k_proj", hidden, hidden, "attention", bias, top=True),
                _lin(f"{a}.v_proj", hidden, hidden, "attention", bias, top=True),
                _lin(f"{a}.out_proj", hidden, hidden, "attention", bias, row=True, top=True),
                _lin(f"{layer}.fc1", hidden, ffn, "mlp", bias, top=True),
                _lin(f"{layer}.fc2", ffn, hidden, "mlp", bias, row=True, top=True)]
        if norm:
            out += [Module(f"{layer}.{n}", 0, norm, "norms", top=True)
                    for n in ("self_attn_layer_norm", "final_layer_norm")]
    return out


CLASSIC = {"internlm2": internlm2, "falcon": falcon, "baichuan": baichuan, "chatglm": chatglm, "stablelm": stablelm,
           "gpt_bigcode": gpt_bigcode, "gpt_neox": gpt_neox, "mpt": mpt, "bloom": bloom, "opt": opt, "gptj": gptj,
           "gpt2": gpt2, "persimmon": persimmon, "xglm": xglm,
           "gpt-sw3": gpt2}  # GPT-SW3: GPT2Config and GPT2LMHeadModel (transformers 5.25 configuration_auto.py)
