"""Exact parameter counters for the "dense" group (transformers 5.23 modeling code).

Each counter is `count(f, layers, dims) -> (total, active)`: every parameter of the causal LM as
transformers builds it (text model + LM head, a tied head counted once, buffers not counted), read from
the module shapes in transformers/models/<type>/modeling_<type>.py. Where a per-layer module exists, the
layers counted are `len(layers)` (so kvplan's last_layer_params works); tables shared by all layers use
the config's own fields.

GIT and Phi-4-multimodal build their image (and audio) encoders inside the causal-LM class itself;
kvplan counts the text model only, so those towers are left out here (git_image_tower gives GIT's, for
a caller who wants the whole GitForCausalLM).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .fields import Fields
from ..errors import ConfigError


# -- helpers -------------------------------------------------------------------------------------------

def _linear(n_in: int, n_out: int, bias: bool) -> int:
    return n_in * n_out + (n_out if bias else 0)


def _layernorm(width: int, bias: bool = True) -> int:
    """torch.nn.LayerNorm (elementwise affine): weight, and bias unless bias=False."""
    return width * (2 if bias else 1)


def _head(f: Fields, vocab: int, hidden: int, tied_default: bool) -> int:
    """The LM head weight: 0 when tied to the token embeddings (tie_word_embeddings)."""
    return 0 if f.flag("tie_word_embeddings", default=tied_default) else vocab * hidden


def _opt_width(f: Fields, name: str, default: int) -> int:
    """A width transformers treats as 'off' when 0 or null: the config's value, 0 for an explicit null,
    else transformers' default."""
    if f.has(name):
        return f.int(name, minimum=0)
    return 0 if name in f.raw else default


def _n_layers(layers) -> int:
    return len(layers)


# -- Gemma 4 ------------------------------------------------------------------------------------------

_GEMMA4_DEFAULTS = {"vocab_size": 262_144, "hidden_size": 2304, "intermediate_size": 9216,
                    "num_hidden_layers": 30, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256}


def _gemma4_layer_types(f: Fields, n: int) -> list[str]:
    """Gemma4(Unified)TextConfig.__post_init__: layer_types, else sliding except every 6th layer; the last
    layer is forced to full_attention."""
    given = f.list("layer_types")
    types = list(given) if given is not None else [
        "sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(n)]
    if types and types[-1] != "full_attention":
        types[-1] = "full_attention"
    return types


def _gemma4_overrides(f: Fields, types: list[str]) -> dict[int, dict]:
    """Per-layer head_dim / num_key_value_heads overrides, as the config builds per_layer_config: the file's
    per_layer_config when it has the key (then global_head_dim and num_global_key_value_heads are dropped),
    else full layers get global_head_dim (512) and, with attention_k_eq_v, num_global_key_value_heads."""
    if "per_layer_config" in f.raw:
        table = f.raw.get("per_layer_config") or {}
        if not isinstance(table, dict):
            raise ConfigError(f"{f.source}: 'per_layer_config' must map layer indices to objects "
                              f"(model_type {f.model_type!r})")
        out: dict[int, dict] = {}
        for key, entry in table.items():
            if not isinstance(entry, dict) or not str(key).isdigit():
                raise ConfigError(f"{f.source}: 'per_layer_config' must map layer indices (\"05\") to objects "
                                  f"(model_type {f.model_type!r})")
            out[int(key)] = {name: f.check_int(f"per_layer_config.{key}.{name}", entry[name])
                             for name in ("head_dim", "num_key_value_heads") if entry.get(name) is not None}
        return out
    override = {"head_dim": f.int("global_head_dim", default=512)}
    if f.flag("attention_k_eq_v", default=False) and f.has("num_global_key_value_heads"):
        override["num_key_value_heads"] = f.int("num_global_key_value_heads")
    return {i: dict(override) for i, t in enumerate(types) if t == "full_attention"}


@dataclass(frozen=True)
class Gemma4Fields:
    """The fields Gemma 4's text model is built from, read once for its counter and its per-module table
    (weight_tables.wrapped.gemma4), with Gemma4TextConfig's defaults."""
    vocab: int
    hidden: int
    inter: int
    n_cfg: int
    heads: int
    kv_default: int
    hd_default: int
    bias: bool
    k_eq_v: bool
    double_wide: bool
    shared: int
    types: list
    overrides: dict
    ple: int  # hidden_size_per_layer_input (0: none)
    moe: bool
    experts: int = 0
    top_k: int = 0
    moe_inter: int = 0

    def layer(self, i: int) -> tuple[str, int, int, bool]:
        """(layer type, head_dim, KV heads, reuses an earlier layer's K/V) of layer i."""
        kind = self.types[i] if i < len(self.types) else "full_attention"
        hd = self.overrides.get(i, {}).get("head_dim", self.hd_default)
        kv = self.overrides.get(i, {}).get("num_key_value_heads", self.kv_default)
        return kind, hd, kv, self.shared > 0 and i >= self.n_cfg - self.shared  # kv_sharing_modes "reuse"


def gemma4_fields(f: Fields, unified: bool = False) -> Gemma4Fields:
    d = _GEMMA4_DEFAULTS
    n_cfg = f.int("num_hidden_layers", default=d["num_hidden_layers"])
    types = _gemma4_layer_types(f, n_cfg)
    moe = (not unified) and f.flag("enable_moe_block", default=False)
    return Gemma4Fields(
        vocab=f.int("vocab_size", default=d["vocab_size"]),
        hidden=f.int("hidden_size", default=d["hidden_size"]),
        inter=f.int("intermediate_size", default=d["intermediate_size"], maximum=10**9),
        n_cfg=n_cfg,
        heads=f.int("num_attention_heads", default=d["num_attention_heads"]),
        kv_default=f.int("num_key_value_heads", default=d["num_key_value_heads"]),
        hd_default=f.int("head_dim", default=d["head_dim"]),
        bias=f.flag("attention_bias", default=False),
        k_eq_v=f.flag("attention_k_eq_v", default=False),
        double_wide=f.flag("use_double_wide_mlp", default=False),
        shared=f.int("num_kv_shared_layers", default=0, minimum=0),
        types=types,
        overrides=_gemma4_overrides(f, types),
        ple=0 if unified else _opt_width(f, "hidden_size_per_layer_input", 256),
        moe=moe,
        experts=f.int("num_experts") if moe else 0,
        top_k=f.int("top_k_experts") if moe else 0,
        moe_inter=f.int("moe_intermediate_size", maximum=10**9) if moe else 0,
    )


def _gemma4_family(f: Fields, layers, unified: bool) -> tuple[int, int]:
    g = gemma4_fields(f, unified)
    vocab, hidden, inter, n_cfg, heads, bias = g.vocab, g.hidden, g.inter, g.n_cfg, g.heads, g.bias
    ple, moe, experts, top_k, moe_inter = g.ple, g.moe, g.experts, g.top_k, g.moe_inter

    total = vocab * hidden + _head(f, vocab, hidden, True) + hidden  # embed_tokens, lm_head, norm
    if ple:
        ple_vocab = f.int("vocab_size_per_layer_input", default=262_144)
        total += ple_vocab * n_cfg * ple  # embed_tokens_per_layer
        total += hidden * n_cfg * ple + ple  # per_layer_model_projection, per_layer_projection_norm
    routed_off = 0
    for i in range(_n_layers(layers)):
        kind, hd, kv, reuse = g.layer(i)  # reuse (kv_sharing_modes "reuse"): no k/v weights of its own
        n = _linear(hidden, heads * hd, bias) + hd  # q_proj, q_norm
        if not reuse:
            n += hd  # k_norm (v_norm has no scale)
            n += _linear(hidden, kv * hd, bias)  # k_proj
            if not (g.k_eq_v and kind != "sliding_attention"):
                n += _linear(hidden, kv * hd, bias)  # v_proj (absent: full layers with attention_k_eq_v)
        n += _linear(heads * hd, hidden, bias)  # o_proj
        width = inter * (2 if g.double_wide and reuse else 1)
        n += 3 * hidden * width  # mlp gate/up/down
        n += 4 * hidden  # input, post_attention, pre_feedforward, post_feedforward norms
        if ple:
            n += hidden * ple + ple * hidden + hidden  # per_layer_input_gate, per_layer_projection, norm
        if moe:
            n += hidden * experts + hidden + experts  # router: proj, scale, per_expert_scale
            n += experts * 3 * hidden * moe_inter  # experts: gate_up_proj, down_proj
            n += 3 * hidden  # post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2
            routed_off += (experts - top_k) * 3 * hidden * moe_inter
        total += n
    return total, total - routed_off


def gemma4_text(f: Fields, layers, dims) -> tuple[int, int]:
    """Gemma4ForCausalLM (models/gemma4/modeling_gemma4.py): Gemma4TextModel's embed_tokens, and per
    Gemma4TextDecoderLayer: Gemma4TextAttention (q_proj, q_norm, o_proj; k_proj, k_norm, v_proj except on
    KV-shared 'reuse' layers; no v_proj on full layers with attention_k_eq_v; head_dim and
    num_key_value_heads per layer from per_layer_config / global_head_dim / num_global_key_value_heads),
    Gemma4TextMLP (intermediate doubled on reuse layers with use_double_wide_mlp), four RMSNorms, the
    per-layer-input gate/projection/norm (hidden_size_per_layer_input), and with enable_moe_block a
    Gemma4TextRouter (proj, scale, per_expert_scale), Gemma4TextExperts and three more norms; the model's
    embed_tokens_per_layer, per_layer_model_projection, per_layer_projection_norm and final norm; lm_head
    (tied by default). layer_scalar and embed_scale are buffers, not parameters."""
    return _gemma4_family(f, layers, unified=False)


def gemma4_unified_text(f: Fields, layers, dims) -> tuple[int, int]:
    """Gemma4UnifiedForCausalLM (models/gemma4_unified/modeling_gemma4_unified.py): as gemma4_text's
    attention and MLP (Gemma4UnifiedTextAttention, Gemma4UnifiedTextMLP, four RMSNorms per
    Gemma4UnifiedTextDecoderLayer), embed_tokens, final norm, lm_head (tied by default); no per-layer
    embeddings and no MoE block."""
    return _gemma4_family(f, layers, unified=True)


# -- BitNet ---------------------------------------------------------------------------------------------

def bitnet(f: Fields, layers, dims) -> tuple[int, int]:
    """BitNetForCausalLM (models/bitnet/modeling_bitnet.py): embed_tokens; per BitNetDecoderLayer:
    BitNetAttention q/k/v/o_proj (attention_bias) and attn_sub_norm (hidden_size), BitNetMLP
    gate/up/down_proj and ffn_sub_norm (intermediate_size), input/post_attention RMSNorms; final norm;
    lm_head (untied by default). head_dim: the config's, else hidden_size // num_attention_heads."""
    vocab = f.int("vocab_size", default=128_256)
    hidden = f.int("hidden_size", default=2560)
    inter = f.int("intermediate_size", default=6912, maximum=10**9)
    heads = f.int("num_attention_heads", default=20)
    kv = f.int("num_key_value_heads", default=heads)
    hd = f.int("head_dim", default=hidden // heads)
    bias = f.flag("attention_bias", default=False)
    per_layer = (_linear(hidden, heads * hd, bias) + 2 * _linear(hidden, kv * hd, bias)
                 + _linear(heads * hd, hidden, bias) + hidden)  # q, k, v, o, attn_sub_norm
    per_layer += 3 * hidden * inter + inter  # gate, up, down, ffn_sub_norm
    per_layer += 2 * hidden  # input_layernorm, post_attention_layernorm
    total = vocab * hidden + _head(f, vocab, hidden, False) + hidden + _n_layers(layers) * per_layer
    return total, total


# -- ModernBERT decoder --------------------------------------------------------------------------------

def modernbert_decoder(f: Fields, layers, dims) -> tuple[int, int]:
    """ModernBertDecoderForCausalLM (models/modernbert_decoder/modeling_modernbert_decoder.py):
    ModernBertDecoderEmbeddings (tok_embeddings, LayerNorm); per ModernBertDecoderLayer: attn_norm
    (LayerNorm, absent on layer 0), q/k/v_proj of (hidden // heads) x heads and Wo (attention_bias), mlp_norm,
    ModernBertDecoderMLP Wi (hidden -> 2 x intermediate) and Wo (mlp_bias); final_norm; lm_head =
    ModernBertDecoderPredictionHead (dense with classifier_bias, LayerNorm); decoder (weight tied to
    tok_embeddings by default, bias with decoder_bias, never tied). LayerNorms carry a bias with norm_bias."""
    vocab = f.int("vocab_size", default=50368)
    hidden = f.int("hidden_size", default=768)
    inter = f.int("intermediate_size", default=1152, maximum=10**9)
    heads = f.int("num_attention_heads", default=12)
    all_head = (hidden // heads) * heads
    attn_bias = f.flag("attention_bias", default=False)
    mlp_bias = f.flag("mlp_bias", default=False)
    norm_bias = f.flag("norm_bias", default=False)
    ln = _layernorm(hidden, norm_bias)
    per_layer = 3 * _linear(hidden, all_head, attn_bias) + _linear(hidden, hidden, attn_bias)
    per_layer += ln + _linear(hidden, 2 * inter, mlp_bias) + _linear(inter, hidden, mlp_bias)  # mlp_norm, mlp
    n = _n_layers(layers)
    total = vocab * hidden + ln  # embeddings
    total += n * per_layer + max(n - 1, 0) * ln  # layers (attn_norm on every layer but the first)
    total += ln  # final_norm
    total += _linear(hidden, hidden, f.flag("classifier_bias", default=False)) + ln  # prediction head
    total += _head(f, vocab, hidden, True) + (vocab if f.flag("decoder_bias", default=True) else 0)  # decoder
    return total, total


# -- Doge -------------------------------------------------------------------------------------------------

def doge(f: Fields, layers, dims) -> tuple[int, int]:
    """DogeForCausalLM (models/doge/modeling_doge.py): embed_tokens; per DogeDecoderLayer: DogeAttention
    q/k/v/o_proj (attention_bias), A (num_key_value_heads), dt_proj (kv x head_dim -> kv, attention_bias),
    q_norm and k_norm (head_dim); input_layernorm, input_residual, post_attention_layernorm,
    post_attention_residual (hidden_size each); DogeMLP gate/up/down_proj (mlp_bias), or with is_moe
    DogeCDMoE: that shared MLP, router_gate (hidden -> 2 x floor(sqrt(num_experts))), down_embed and
    up_embed (num_experts x hidden each: one routed expert is 2 x hidden); final norm; lm_head (untied by
    default). Active: less (num_experts - num_experts_per_tok) routed experts per layer."""
    vocab = f.int("vocab_size", default=32768)
    hidden = f.int("hidden_size", default=1024)
    inter = f.int("intermediate_size", default=2048, maximum=10**9)
    heads = f.int("num_attention_heads", default=8)
    kv = f.int("num_key_value_heads", default=heads)
    hd = f.int("head_dim", default=hidden // heads)
    abias = f.flag("attention_bias", default=False)
    mbias = f.flag("mlp_bias", default=False)
    per_layer = (_linear(hidden, heads * hd, abias) + 2 * _linear(hidden, kv * hd, abias)
                 + _linear(heads * hd, hidden, abias))
    per_layer += kv + _linear(kv * hd, kv, abias) + 2 * hd  # A, dt_proj, q_norm, k_norm
    per_layer += 4 * hidden  # two RMSNorms, two residual scales
    per_layer += 2 * _linear(hidden, inter, mbias) + _linear(inter, hidden, mbias)  # (shared) MLP
    routed_off = 0
    if f.flag("is_moe", default=False):
        experts = f.int("num_experts", default=16384)
        top_k = f.int("num_experts_per_tok", default=64)
        per_layer += hidden * 2 * math.floor(math.sqrt(experts))  # router_gate (num_keys = floor(sqrt(num_experts)))
        per_layer += 2 * experts * hidden  # down_embed, up_embed
        routed_off = (experts - top_k) * 2 * hidden
    n = _n_layers(layers)
    total = vocab * hidden + _head(f, vocab, hidden, False) + hidden + n * per_layer
    return total, total - n * routed_off


# -- Falcon ----------------------------------------------------------------------------------------------

def falcon_fields(f: Fields) -> tuple:
    """(hidden_size, vocab, bias, KV heads, query_key_value's outputs, ffn_hidden_size, the layer's LayerNorm names) as
    Falcon's count below reads them (its per-module table, weight_tables/classic.py, reads them here too). KV heads as
    vLLM 0.34 falcon.py FalconAttention reads them: num_kv_heads under new_decoder_architecture, one with multi_query,
    else every head; the queries take heads x head_dim of query_key_value, keys and values the rest. Norms:
    input_layernorm and post_attention_layernorm without parallel_attn; ln_attn and ln_mlp with
    num_ln_in_parallel_attn 2 (the default of new_decoder_architecture); else input_layernorm."""
    hidden = f.int("n_embed") if f.has("n_embed") else f.int("hidden_size", default=4544)
    heads = f.int("num_attention_heads", default=71)
    hd = hidden // heads
    new_arch = f.flag("new_decoder_architecture", default=False)
    if new_arch:
        kv = f.int("num_kv_heads", "n_head_kv", default=heads)
        qkv_out = (2 * kv + heads) * hd
    elif f.flag("multi_query", default=True):
        kv, qkv_out = 1, hidden + 2 * hd
    else:
        kv, qkv_out = heads, 3 * hidden
    num_ln = f.opt_int("num_ln_in_parallel_attn")
    if num_ln is None and new_arch:
        num_ln = 2
    if not f.flag("parallel_attn", default=True):
        norms = ("input_layernorm", "post_attention_layernorm")
    else:
        norms = ("ln_attn", "ln_mlp") if num_ln == 2 else ("input_layernorm",)
    return (hidden, f.int("vocab_size", default=65024), f.flag("bias", default=False), kv, qkv_out,
            f.int("ffn_hidden_size", default=4 * hidden, maximum=10**9), norms)


def falcon(f: Fields, layers, dims) -> tuple[int, int]:
    """FalconForCausalLM (models/falcon/modeling_falcon.py): word_embeddings; per FalconDecoderLayer:
    FalconAttention query_key_value ((num_kv_heads x 2 + heads) x head_dim with new_decoder_architecture,
    hidden + 2 x head_dim with multi_query, else 3 x hidden) and dense, FalconMLP dense_h_to_4h and
    dense_4h_to_h (ffn_hidden_size, 4 x hidden by default), all biased with `bias`; LayerNorms (weight and
    bias): two without parallel_attn (input, post_attention), with parallel_attn two when
    num_ln_in_parallel_attn is 2 (its default under new_decoder_architecture: ln_attn, ln_mlp) else one;
    ln_f; lm_head (tied by default). head_dim = hidden // heads; n_embed is an alias of hidden_size; the
    KV heads are num_kv_heads (n_head_kv in older files), default num_attention_heads."""
    hidden, vocab, bias, _, qkv_out, ffn, norms = falcon_fields(f)
    per_layer = _linear(hidden, qkv_out, bias) + _linear(hidden, hidden, bias)
    per_layer += _linear(hidden, ffn, bias) + _linear(ffn, hidden, bias)
    per_layer += len(norms) * _layernorm(hidden)
    total = vocab * hidden + _head(f, vocab, hidden, True) + _layernorm(hidden) + _n_layers(layers) * per_layer
    return total, total


# -- HRM-Text -------------------------------------------------------------------------------------------

def hrm_text(f: Fields, layers, dims) -> tuple[int, int]:
    """HrmTextForCausalLM (models/hrm_text/modeling_hrm_text.py): embed_tokens; z_L_init (hidden_size, a
    parameter); two HrmTextStacks (L_module, H_module) of num_layers_per_stack HrmTextDecoderLayers each:
    HrmTextAttention q/k/v/o_proj and the sigmoid gate_proj (all heads x head_dim, MHA, attention_bias),
    HrmTextMLP gate/up/down_proj (mlp_bias); its RMSNorms have no weight. lm_head (untied by default).
    num_layers_per_stack: the config's, else num_hidden_layers (HrmTextConfig then rewrites
    num_hidden_layers to the cache-slot count per_stack x H_cycles x (L_cycles + 1), which kvplan's layers
    follow, so the weights are counted from the config, not from `layers`)."""
    vocab = f.int("vocab_size", default=151_808)
    hidden = f.int("hidden_size", default=1536)
    inter = f.int("intermediate_size", default=4096, maximum=10**9)
    heads = f.int("num_attention_heads", default=12)
    hd = f.int("head_dim", default=128)
    abias = f.flag("attention_bias", default=False)
    mbias = f.flag("mlp_bias", default=False)
    per_stack = f.opt_int("num_layers_per_stack") or f.int("num_hidden_layers", default=16)
    width = heads * hd
    per_layer = 4 * _linear(hidden, width, abias) + _linear(width, hidden, abias)  # q, k, v, gate; o
    per_layer += 2 * _linear(hidden, inter, mbias) + _linear(inter, hidden, mbias)
    total = vocab * hidden + _head(f, vocab, hidden, False) + hidden + 2 * per_stack * per_layer
    return total, total


# -- GIT --------------------------------------------------------------------------------------------------

def git(f: Fields, layers, dims) -> tuple[int, int]:
    """GitForCausalLM's text decoder (models/git/modeling_git.py): GitEmbeddings word_embeddings,
    position_embeddings (max_position_embeddings), LayerNorm; per GitLayer: GitSelfAttention query/key/value
    (biased, heads x (hidden // heads)), GitSelfOutput dense and LayerNorm, GitIntermediate dense,
    GitOutput dense and LayerNorm; output (biased; weight untied by default). Not counted: the CLIP image
    encoder (git.image_encoder), git.visual_projection and img_temporal_embedding, which GitForCausalLM
    also builds (git_image_tower counts them)."""
    vocab = f.int("vocab_size", default=30522)
    hidden = f.int("hidden_size", default=768)
    inter = f.int("intermediate_size", default=3072, maximum=10**9)
    heads = f.int("num_attention_heads", default=12)
    positions = f.int("max_position_embeddings", default=1024)
    all_head = heads * int(hidden / heads)
    per_layer = 3 * _linear(hidden, all_head, True) + _linear(hidden, hidden, True) + _layernorm(hidden)
    per_layer += _linear(hidden, inter, True) + _linear(inter, hidden, True) + _layernorm(hidden)
    total = vocab * hidden + positions * hidden + _layernorm(hidden) + _n_layers(layers) * per_layer
    total += _head(f, vocab, hidden, False) + vocab  # output weight (unless tied) and bias
    return total, total


def git_image_tower(f: Fields) -> int:
    """What GitForCausalLM builds besides the text decoder: GitVisionModel (CLIP: class_embedding,
    patch_embedding Conv2d without bias, position_embedding of (image / patch)^2 + 1, pre_layrnorm, layers of
    q/k/v/out_proj, two LayerNorms, fc1/fc2, post_layernorm), GitProjection (Linear vision -> hidden,
    LayerNorm) and img_temporal_embedding (num_image_with_embedding x vision hidden)."""
    vc = f.get("vision_config") or {}
    if not isinstance(vc, dict):
        raise ConfigError(f"{f.source}: 'vision_config' must be an object (model_type {f.model_type!r})")
    v = Fields(vc, f.source, model_type="git_vision_model")
    e = v.int("hidden_size", default=768)
    inter = v.int("intermediate_size", default=3072, maximum=10**9)
    n = v.int("num_hidden_layers", default=12)
    channels = v.int("num_channels", default=3)
    image, patch = v.get("image_size", default=224), v.get("patch_size", default=16)
    if isinstance(image, list) or isinstance(patch, list):
        raise ConfigError(f"{f.source}: GIT's vision image_size / patch_size as pairs are not counted here")
    positions = (v.check_int("image_size", image) // v.check_int("patch_size", patch)) ** 2 + 1
    tower = e + channels * patch * patch * e + positions * e + 2 * _layernorm(e)
    tower += n * (4 * _linear(e, e, True) + 2 * _layernorm(e) + _linear(e, inter, True) + _linear(inter, e, True))
    hidden = f.int("hidden_size", default=768)
    tower += _linear(e, hidden, True) + _layernorm(hidden)
    tower += (f.opt_int("num_image_with_embedding") or 0) * e
    return tower


# -- CTRL -------------------------------------------------------------------------------------------------

def ctrl(f: Fields, layers, dims) -> tuple[int, int]:
    """CTRLLMHeadModel (models/ctrl/modeling_ctrl.py): CTRLModel w (token embeddings; pos_encoding is a
    buffer); per EncoderLayer: MultiHeadAttention Wq/Wk/Wv/dense (n_embd x n_embd, biased), the point-wise
    FFN (Linear n_embd -> dff, Linear dff -> n_embd, biased), layernorm1/2; final layernorm; lm_head
    (weight tied by default, bias of vocab_size always)."""
    vocab = f.int("vocab_size", default=246_534)
    hidden = f.int("hidden_size", "n_embd", default=1280)
    dff = f.int("dff", default=8192, maximum=10**9)
    per_layer = 4 * _linear(hidden, hidden, True) + _linear(hidden, dff, True) + _linear(dff, hidden, True)
    per_layer += 2 * _layernorm(hidden)
    total = vocab * hidden + _layernorm(hidden) + _n_layers(layers) * per_layer
    total += _head(f, vocab, hidden, True) + vocab
    return total, total


# -- GPT-NeoX-Japanese --------------------------------------------------------------------------------

def gpt_neox_japanese(f: Fields, layers, dims) -> tuple[int, int]:
    """GPTNeoXJapaneseForCausalLM (models/gpt_neox_japanese/modeling_gpt_neox_japanese.py): embed_in; per
    GPTNeoXJapaneseLayer: input/post_attention LayerNorms, attention query_key_value (3 x hidden) and dense
    (no biases) plus dense_bias on the last layer (num_hidden_layers - 1) only, MLP dense_h_to_4h /
    dense_4h_to_h of int(hidden x intermediate_multiple_size) (no biases); final_layer_norm; embed_out (tied
    by default)."""
    vocab = f.int("vocab_size", default=32000)
    hidden = f.int("hidden_size", default=2560)
    n_cfg = f.int("num_hidden_layers", default=32)
    inter = int(hidden * f.number("intermediate_multiple_size", default=4))
    per_layer = 2 * _layernorm(hidden) + 3 * hidden * hidden + hidden * hidden + 2 * hidden * inter
    n = _n_layers(layers)
    total = vocab * hidden + _layernorm(hidden) + n * per_layer + _head(f, vocab, hidden, True)
    if n_cfg - 1 < n:
        total += hidden  # the last layer's attention dense_bias
    return total, total


# -- Phi-4-multimodal (text model) ---------------------------------------------------------------------

def phi4_multimodal(f: Fields, layers, dims) -> tuple[int, int]:
    """Phi4MultimodalForCausalLM's text model (models/phi4_multimodal/modeling_phi4_multimodal.py):
    embed_tokens; per Phi4MultimodalDecoderLayer: Phi4MultimodalAttention qkv_proj (heads + 2 x kv heads,
    x head_dim) and o_proj (no biases), Phi4MultimodalMLP gate_up_proj (2 x intermediate) and down_proj,
    input/post_attention RMSNorms; final norm; lm_head (untied by default). Not counted: embed_tokens_extend
    (Phi4MultimodalFeatureEmbedding: the SigLIP image_embed and conformer audio_embed towers with their
    projections), which the same class builds."""
    vocab = f.int("vocab_size", default=200_064)
    hidden = f.int("hidden_size", default=3072)
    inter = f.int("intermediate_size", default=8192, maximum=10**9)
    heads = f.int("num_attention_heads", default=32)
    kv = f.int("num_key_value_heads", default=heads)
    hd = f.int("head_dim", default=hidden // heads)
    per_layer = hidden * (heads + 2 * kv) * hd + heads * hd * hidden + 3 * hidden * inter + 2 * hidden
    total = vocab * hidden + _head(f, vocab, hidden, False) + hidden + _n_layers(layers) * per_layer
    return total, total


def gemma4(f: Fields, layers, dims) -> tuple[int, int]:
    """Gemma4ForConditionalGeneration's text model (text_config, model_type gemma4_text): as gemma4_text
    (Gemma4ForCausalLM); the vision and audio towers and their embedders are not counted."""
    return gemma4_text(f, layers, dims)


def gemma4_unified(f: Fields, layers, dims) -> tuple[int, int]:
    """Gemma4UnifiedForConditionalGeneration's text model (text_config, gemma4_unified_text): as
    gemma4_unified_text (Gemma4UnifiedForCausalLM); the vision and audio embedders are not counted."""
    return gemma4_unified_text(f, layers, dims)


def glm_image_text(f: Fields, layers, dims) -> tuple[int, int]:
    """GLM-Image's autoregressive generator (transformers 5.25 models/glm_image/modeling_glm_image.py
    GlmImageTextModel, and the lm_head GlmImageForConditionalGeneration puts on it; SGLang 0.5.23 glm_image_vl.py
    builds the same): embed_tokens of vocab_size; per GlmImageTextDecoderLayer q/k/v_proj with a bias when
    attention_bias (true by default), o_proj without, a gated MLP fused as gate_up_proj (2 x intermediate) and
    down_proj, four RMSNorms (input, post_self_attn, post_attention, post_mlp); the final norm; an lm_head of
    vision_vocab_size rows (the generator predicts image tokens), never tied (its shape is not the embeddings').
    The vision encoder and the VQ-VAE (GlmImageModel.visual, .vqmodel) are not counted."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**9)
    bias = f.flag("attention_bias", default=True)
    q, k = heads * head_dim, kv * head_dim
    attention = _linear(hidden, q, bias) + 2 * _linear(hidden, k, bias) + _linear(q, hidden, False)
    per_layer = attention + 3 * hidden * inter + 4 * hidden
    vocab, rows = f.int("vocab_size"), f.int("vision_vocab_size", default=16_512)
    total = vocab * hidden + hidden + _n_layers(layers) * per_layer + rows * hidden
    return total, total


def higgs_audio_v2(f: Fields, layers, dims) -> tuple[int, int]:
    """HiggsAudioV2ForConditionalGeneration (transformers 5.25 models/higgs_audio_v2/modeling_higgs_audio_v2.py):
    embed_tokens and the audio codebooks' embeddings (num_codebooks x codebook_size rows); per DualFFN decoder
    layer a Llama attention (q/k/v/o with a bias when attention_bias), a text MLP and an audio MLP (gated, biases
    with mlp_bias) and four RMSNorms (input and post-attention, text and audio); the final norm; audio_lm_head
    (num_codebooks x codebook_size rows, no bias). The text_lm_head is built only with use_text_head (training;
    from_pretrained drops the checkpoint's, _keys_to_ignore_on_load_unexpected), so it is not counted."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    inter = f.int("intermediate_size", maximum=10**9)
    attention_bias, mlp_bias = f.flag("attention_bias", default=False), f.flag("mlp_bias", default=False)
    q, k = heads * head_dim, kv * head_dim
    attention = _linear(hidden, q, attention_bias) + 2 * _linear(hidden, k, attention_bias)
    attention += _linear(q, hidden, attention_bias)
    mlp = 2 * _linear(hidden, inter, mlp_bias) + _linear(inter, hidden, mlp_bias)
    per_layer = attention + 2 * mlp + 4 * hidden
    audio_rows = f.int("num_codebooks", default=8) * f.int("codebook_size", default=1024)
    total = f.int("vocab_size") * hidden + 2 * audio_rows * hidden + hidden + _n_layers(layers) * per_layer
    return total, total


COUNTERS = {
    "gemma4_text": gemma4_text,
    "gemma4": gemma4,
    "gemma4_unified_text": gemma4_unified_text,
    "gemma4_unified": gemma4_unified,
    "bitnet": bitnet,
    "modernbert-decoder": modernbert_decoder,
    "doge": doge,
    "falcon": falcon,
    "hrm_text": hrm_text,
    "git": git,
    "ctrl": ctrl,
    "gpt_neox_japanese": gpt_neox_japanese,
    "phi4_multimodal": phi4_multimodal,
    "glm_image_text": glm_image_text,
    "higgs_audio_v2": higgs_audio_v2,
}


# -- Llama 3.2 Vision's text model (transformers 5.25 modeling_mllama.py MllamaTextModel) ------------------

def mllama_cross_layers(f: Fields, n: int) -> set[int]:
    """The layers of cross_attention_layers (MllamaTextConfig; the family's default fills it) below n."""
    return {i for i in f.int_list("cross_attention_layers", maximum=10**6) or [] if i < n}


def mllama_text(f: Fields, layers, dims) -> tuple[int, int]:
    """MllamaForCausalLM's text model: Llama's layers (q/k/v/o without biases, gated MLP, two RMSNorms) with
    embed_tokens of vocab_size + 8 rows (MllamaTextModel: nn.Embedding(config.vocab_size + 8, ...)) and an LM
    head of vocab_size (untied by default: MllamaTextConfig); each layer of cross_attention_layers is a
    MllamaCrossAttentionDecoderLayer, whose cross_attn adds q_norm and k_norm over head_dim and which holds two
    one-element gates (cross_attn_attn_gate, cross_attn_mlp_gate)."""
    from .params_generic import count_params

    heads, kv, head_dim, _ = dims
    n = len(layers)
    hidden = f.int("hidden_size")
    llama, _ = count_params(f, n, heads, kv, head_dim)
    total = llama + 8 * hidden + len(mllama_cross_layers(f, n)) * (2 * head_dim + 2)
    return total, total


COUNTERS["mllama_text_model"] = mllama_text


# -- Molmo2's text model (transformers 5.25 modeling_molmo2.py Molmo2TextModel) ----------------------------

def molmo2_fields(f: Fields) -> dict:
    """Molmo2TextConfig as transformers 5.25 reads it (attribute_map: qkv_bias -> attention_bias): hidden_size,
    intermediate_size, vocab_size and additional_vocab_size (the embedding's extra rows), the q/k/v biases, and
    qk_norm_type ("qwen3": q_norm / k_norm over head_dim; otherwise over all heads' queries / keys)."""
    return {"hidden": f.int("hidden_size", default=4096), "inter": f.int("intermediate_size", default=12288),
            "vocab": f.int("vocab_size", default=151936, minimum=0),
            "extra": f.int("additional_vocab_size", default=128, minimum=0),
            "bias": f.flag("attention_bias") or f.flag("qkv_bias"),
            "per_head": (f.get("qk_norm_type") or "qwen3") == "qwen3",
            "tied": f.flag("tie_word_embeddings", default=False)}


def molmo2_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Molmo2's text model and the wrapper's lm_head (transformers 5.25 modeling_molmo2.py): embed_tokens of
    vocab_size + additional_vocab_size rows (the checkpoint's wte.embedding and wte.new_embedding), the final norm,
    an LM head of vocab_size rows unless tied; per layer q/k/v_proj (biases with attention_bias / qkv_bias), o_proj
    (no bias), q_norm and k_norm (Molmo2TextAttention: head_dim wide for qk_norm_type "qwen3", else heads x
    head_dim and KV heads x head_dim; built whatever use_qk_norm says), the gated MLP, two RMSNorms."""
    heads, kv, head_dim, _ = dims
    m = molmo2_fields(f)
    hidden = m["hidden"]
    attention = hidden * (heads + 2 * kv) * head_dim + heads * head_dim * hidden
    attention += (heads + 2 * kv) * head_dim if m["bias"] else 0
    attention += 2 * head_dim if m["per_head"] else (heads + kv) * head_dim
    layer = attention + 3 * hidden * m["inter"] + 2 * hidden
    total = (m["vocab"] + m["extra"]) * hidden + (0 if m["tied"] else m["vocab"] * hidden) + hidden
    total += len(layers) * layer
    return total, total


COUNTERS["molmo2_text"] = molmo2_text  # configs/weight_tables/vl_more.py


# -- Kosmos-2's text model (transformers 5.25 modeling_kosmos2.py Kosmos2TextForCausalLM) -------------------

def kosmos_2_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Kosmos-2's text model (Kosmos2TextTransformer and the wrapper's lm_head, no bias, tied by default): embed_tokens
    (the positions are sinusoidal, a buffer); per Kosmos2TextBlock self_attn q/k/v_proj and out_proj (biased, embed_dim
    each), its inner_attn_ln, self_attn_layer_norm, ffn.fc1 (embed_dim -> ffn_dim) and fc2 (biased) with
    ffn.ffn_layernorm (over ffn_dim) between them, final_layer_norm (all LayerNorms with a bias); layer_norm. A config
    with add_cross_attention is refused by the family. Kosmos-2.5's (modeling_kosmos2_5.py Kosmos2_5TextTransformer)
    has no inner_attn_ln and a segment_emb of 2 rows (image / text positions)."""
    kosmos_2 = f.model_type == "kosmos_2_text_model"
    hidden = f.int("hidden_size")
    ffn = f.int("intermediate_size", maximum=10**9)
    vocab = f.int("vocab_size", minimum=0)
    per_layer = 4 * _linear(hidden, hidden, True) + (3 if kosmos_2 else 2) * _layernorm(hidden)
    per_layer += _linear(hidden, ffn, True) + _layernorm(ffn) + _linear(ffn, hidden, True)
    total = vocab * hidden + _head(f, vocab, hidden, True) + _layernorm(hidden) + _n_layers(layers) * per_layer
    total += 0 if kosmos_2 else 2 * hidden  # Kosmos-2.5's segment_emb
    return total, total


COUNTERS["kosmos_2_text_model"] = kosmos_2_text  # configs/weight_tables/vl_more.py
COUNTERS["kosmos_2_5_text_model"] = kosmos_2_text
