"""Llama-like text decoders vLLM 0.33 serves through trust_remote_code configs (MiniCPM, MiMo, TeleChat2, Orion,
Solar, TeleFLM, Step-1, openPangu-Embedded, PLaMo 3): their head and width rules and their parameter counts, as vLLM 0.33 builds them.

Each counter follows the modules of vLLM 0.33's model file (vllm/model_executor/models/<file>.py), which is
what the engine loads; the config-class defaults are those of each checkpoint's remote configuration_*.py.
"""

from __future__ import annotations

from ..errors import ConfigError
from .attention import gqa_from_hidden
from .fields import Fields
from .param_parts import embeddings


def _tied(f: Fields, default: bool | None) -> bool:
    """tie_word_embeddings, else the remote config class's default; None: no class default was read, so the config
    must say."""
    if f.get("tie_word_embeddings") is None and default is None:
        raise ConfigError(f"{f.source}: config (model_type {f.model_type!r}) does not say tie_word_embeddings, and "
                          "kvplan has not read its remote config class's default",
                          "add it (--set-new tie_word_embeddings=true or false), or give --weights")
    return f.flag("tie_word_embeddings", default=bool(default))


def _decoder(f: Fields, layers: list, dims, *, tied_default: bool | None, qkv_bias=False, o_bias=False,
             down_bias=False, gate_up_bias=False, norm_bias=False, inter: tuple[str, ...] = ("intermediate_size",),
             ) -> tuple[int, int]:
    """A Llama-shaped decoder: embeddings (+ head unless tied), per layer q/k/v/o, a gated MLP (gate, up, down)
    and two norms (RMSNorm: weight; LayerNorm: weight and bias), and a final norm."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = f.int(*inter, maximum=10**8)
    q, kv_width = heads * head_dim, kv * head_dim
    attn = hidden * (q + 2 * kv_width) + q * hidden
    attn += (q + 2 * kv_width if qkv_bias else 0) + (hidden if o_bias else 0)
    mlp = 3 * hidden * width + (2 * width if gate_up_bias else 0) + (hidden if down_bias else 0)
    norm = hidden * (2 if norm_bias else 1)
    vocab_hidden = embeddings(f, hidden, _tied(f, tied_default))
    total = vocab_hidden + norm + len(layers) * (attn + mlp + 2 * norm)
    return total, total


# -- MiniCPM (minicpm.py MiniCPMForCausalLM) ----------------------------------------------------------------

def minicpm_dims(f: Fields) -> tuple[int, int, int, int]:
    """MiniCPMAttention: num_key_value_heads (the remote MiniCPMConfig: None means num_attention_heads) heads of
    hidden_size // num_attention_heads; a head_dim key is not read."""
    return gqa_from_hidden(f)


def minicpm_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniCPMForCausalLM: Llama's modules without biases (MiniCPMAttention, MiniCPMMLP); with num_experts > 0
    every layer's MLP is MiniCPMMoE: a router (GateLinear hidden -> experts, no bias) and num_experts experts of
    w1, w3 (hidden -> intermediate_size) and w2; a token runs num_experts_per_tok of them. The muP fields
    (scale_emb, scale_depth, dim_model_base) scale activations only. Copies of the remote MiniCPMConfig disagree on
    tie_word_embeddings' default (MiniCPM-V's: False; MiniCPM-1B/2B share their embeddings), so the config must
    say."""
    experts = f.int("num_experts", default=0, minimum=0)
    if not experts:
        return _decoder(f, layers, dims, tied_default=None)
    heads, kv, head_dim, _ = dims
    hidden, inter = f.int("hidden_size"), f.int("intermediate_size", maximum=10**8)
    top_k = f.int("num_experts_per_tok", maximum=experts)
    dense_total, _ = _decoder(f, layers, dims, tied_default=None)
    dense_mlp = 3 * hidden * inter
    per_expert = 3 * hidden * inter
    router = hidden * experts
    total = dense_total + len(layers) * (experts * per_expert + router - dense_mlp)
    active = total - len(layers) * (experts - top_k) * per_expert
    return total, active


def minicpm_notes(f: Fields) -> tuple[str, ...]:
    if f.get("sparse_config") is None:
        return ()
    return ("sparse_config (InfLLM v2) is not read by vLLM 0.33 (minicpm.py builds plain attention): every token's "
            "K/V is cached on every layer and each step attends to all of them",)


# -- MiMo (mimo.py MiMoForCausalLM: Qwen2Model) -------------------------------------------------------------

def mimo_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """vLLM's Qwen2Model asserts when the window would cover some layers only (max_window_layers below
    num_hidden_layers with use_sliding_window)."""
    n = len(kinds)
    if f.flag("use_sliding_window") and f.int("max_window_layers", default=28, minimum=0) < n:
        raise ConfigError(f"{f.source}: use_sliding_window with max_window_layers "
                          f"{f.int('max_window_layers', default=28, minimum=0)} < {n} layers: vLLM 0.33's Qwen2Model "
                          f"refuses a window on some layers only (model_type {f.model_type!r})",
                          "set use_sliding_window false, or max_window_layers to num_hidden_layers")
    return kinds


def mimo_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiMoForCausalLM (vLLM's Qwen2 modules): q/k/v with biases, o_proj without; gated MLP; RMSNorms. The
    num_nextn_predict_layers MTP layers (model.mtp_layers.*) are skipped by the main model's loader
    (hf_to_vllm_mapper) and not counted. Qwen2Config's tie_word_embeddings default is False."""
    return _decoder(f, layers, dims, tied_default=False, qkv_bias=True)


# -- TeleChat2 (telechat2.py TeleChat2ForCausalLM: LlamaModel) ----------------------------------------------

TELECHAT_NAMES = {"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",),
                  "intermediate_size": ("ffn_hidden_size",)}


def telechat_kv_heads(f: Fields, heads: int) -> int:
    """Tele-AI's Telechat2Config keeps num_key_value_heads None when the config leaves it out, and vLLM's
    LlamaAttention cannot take None (TeleChat's AWQ recipe writes n_head into the config for vLLM)."""
    if f.get("num_key_value_heads") is None:
        raise ConfigError(f"{f.source}: config (model_type {f.model_type!r}) has no num_key_value_heads: Tele-AI's "
                          "Telechat2Config keeps it None and vLLM 0.33's LlamaAttention cannot run without it",
                          "add it (--set-new num_key_value_heads=N; n_head for the MHA checkpoints)")
    kv = f.int("num_key_value_heads")
    if heads % kv:
        raise ConfigError(f"{f.source}: n_head {heads} is not a multiple of num_key_value_heads {kv} "
                          f"(model_type {f.model_type!r})")
    return kv


def telechat_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """TeleChat2Model: LlamaModel built with bias and mlp_bias, then the q/k/v and gate/up biases removed: dense
    (o_proj) and down_proj keep theirs. Telechat2Config passes tie_word_embeddings to PretrainedConfig, whose
    default is True."""
    return _decoder(f, layers, dims, tied_default=True, o_bias=True, down_bias=True)


# -- Orion (orion.py OrionForCausalLM) ----------------------------------------------------------------------

def orion_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """OrionForCausalLM: attention and MLP without biases, nn.LayerNorm (weight and bias) before attention, before
    the MLP and at the end."""
    return _decoder(f, layers, dims, tied_default=None, norm_bias=True)


# -- Qwen (1) (SGLang 0.5.23 qwen.py QWenLMHeadModel; vLLM served it until 0.23) --------------------------------

def qwen_dims(f: Fields) -> tuple[int, int, int, int]:
    """QWenAttention: num_attention_heads K/V heads (multi-head: RadixAttention num_kv_heads=num_heads) of
    hidden_size // num_attention_heads (kv_channels is not read)."""
    heads = f.int("num_attention_heads")
    hidden = f.int("hidden_size")
    if hidden % heads:
        raise ConfigError(f"{f.source}: hidden_size {hidden} is not divisible by num_attention_heads {heads} "
                          f"(model_type {f.model_type!r})")
    return heads, heads, hidden // heads, hidden // heads


def qwen_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """QWenLMHeadModel: transformer.wte and an lm_head of its own (never tied; vocab_size rounded up to 64, which
    the released 151,936 already is), per layer ln_1 and ln_2 (RMSNorm), attn.c_attn (hidden -> 3 x hidden, with
    bias) and attn.c_proj (no bias), mlp.w1 / w2 (hidden -> intermediate_size // 2 each, no bias) and mlp.c_proj;
    transformer.ln_f."""
    heads, _, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = f.int("intermediate_size", maximum=2 * 10**8) // 2
    vocab = -(-f.int("vocab_size") // 64) * 64
    q = heads * head_dim
    layer = hidden * 3 * q + 3 * q + q * hidden + 3 * hidden * width + 2 * hidden
    total = 2 * vocab * hidden + hidden + len(layers) * layer
    return total, total


# -- Solar (solar.py SolarForCausalLM), TeleFLM (teleflm.py: LlamaForCausalLM) ------------------------------

def llama_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """vLLM's Llama modules (SolarForCausalLM's and TeleFLMForCausalLM's): q/k/v/o biases with attention_bias (or
    bias), MLP biases with mlp_bias, RMSNorms. Solar's bskcn_* skip connections mix hidden states and hold no
    parameters; TeleFLM's muP fields scale the logits only."""
    bias = f.flag("attention_bias") or f.flag("bias")
    return _decoder(f, layers, dims, tied_default=None, qkv_bias=bias, o_bias=bias,
                    down_bias=f.flag("mlp_bias"), gate_up_bias=f.flag("mlp_bias"))


# -- Step-1 (step1.py Step1ForCausalLM) ---------------------------------------------------------------------

def step1_dims(f: Fields) -> tuple[int, int, int, int]:
    """StepAttention: num_attention_groups K/V heads (StepConfig always sets it, 8 by default, so vLLM's fallback
    to num_key_value_heads is never reached) of hidden_size // num_attention_heads."""
    heads = f.int("num_attention_heads")
    kv = f.int("num_attention_groups")
    width = f.int("hidden_size") // heads
    if heads % kv:
        raise ConfigError(f"{f.source}: num_attention_heads {heads} is not a multiple of num_attention_groups {kv} "
                          f"(model_type {f.model_type!r})")
    return heads, kv, width, width


def step1_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Step1ForCausalLM: q/k/v/o biases with attention_bias, MLP biases with mlp_bias, RMSNorms; no position
    table (ALiBi). StepConfig passes tie_word_embeddings to PretrainedConfig (default True), as vLLM's
    getattr(config, 'tie_word_embeddings', True) does."""
    bias = f.flag("attention_bias")
    return _decoder(f, layers, dims, tied_default=True, qkv_bias=bias, o_bias=bias,
                    down_bias=f.flag("mlp_bias"), gate_up_bias=f.flag("mlp_bias"))


# -- openPangu-Embedded (openpangu.py PanguEmbeddedForCausalLM, model_type PanguEmbedded) --------------------

def _pangu_windows(f: Fields) -> list | None:
    """interleaved_sliding_window: one window for every layer, or a list cycled over the layers (None: full)."""
    value = f.get("interleaved_sliding_window")
    if value is None:
        return None
    if isinstance(value, list):
        for i, entry in enumerate(value):
            if entry is not None:
                f.check_int(f"interleaved_sliding_window[{i}]", entry)
        return value
    return [f.int("interleaved_sliding_window")]


def pangu_embedded_kinds(f: Fields, n: int) -> list[str]:
    """OpenPanguEmbeddedAttention: layer i slides over interleaved_sliding_window[i % len] (an int: every layer);
    without it, vLLM's cache_config.sliding_window (the config's sliding_window) covers every layer."""
    from . import kinds as K
    windows = _pangu_windows(f)
    if windows is None:
        return [K.ATTENTION] * n
    return [K.FULL if windows[i % len(windows)] is None else K.SLIDING for i in range(n)]


def pangu_embedded_window(f: Fields) -> int | None:
    windows = _pangu_windows(f)
    if windows is None:
        return f.opt_int("sliding_window")
    sizes = {w for w in windows if w is not None}
    if len(sizes) > 1:
        raise ConfigError(f"{f.source}: interleaved_sliding_window lists {len(sizes)} different windows, which "
                          f"kvplan cannot size yet (model_type {f.model_type!r})", "this layout is not supported yet")
    return sizes.pop() if sizes else None


def pangu_embedded_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """PanguEmbeddedForCausalLM (OpenPanguEmbeddedAttention, OpenPanguMLP): o_proj biased with attention_bias or
    bias, q/k/v likewise unless qkv_bias says otherwise; gate_up and down biased with mlp_bias; RMSNorms, two more a
    layer with sandwich_norm. MoE layers (n_routed_experts) are not counted here."""
    if f.get("n_routed_experts") is not None:
        raise ConfigError(f"{f.source}: n_routed_experts is set: kvplan counts openPangu's dense model only "
                          f"(model_type {f.model_type!r})", "give --weights")
    bias = f.flag("attention_bias") or f.flag("bias")
    qkv_bias = f.flag("qkv_bias", default=bias)
    mlp_bias = f.flag("mlp_bias")
    total, _ = _decoder(f, layers, dims, tied_default=None, qkv_bias=qkv_bias, o_bias=bias, down_bias=mlp_bias,
                        gate_up_bias=mlp_bias)
    if f.flag("sandwich_norm"):
        total += len(layers) * 2 * f.int("hidden_size")
    return total, total


# -- PLaMo 3 (plamo3.py Plamo3ForCausalLM) ------------------------------------------------------------------

PLAMO3_DEFAULTS = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                   "window_size": 2048, "sliding_window_pattern": 8, "tie_word_embeddings": True}


def plamo3_kinds(f: Fields, n: int) -> list[str]:
    """Plamo3Config: layer i is full attention when (i + 1) % sliding_window_pattern == 0 (is_full_attn), else it
    slides over window_size; a config.json that saved interleaved_sliding_window (None: full) is read as written,
    which PretrainedConfig's kwargs would set last."""
    from . import kinds as K
    if isinstance(f.get("interleaved_sliding_window"), list):
        return pangu_embedded_kinds(f, n)
    pattern = f.int("sliding_window_pattern")
    return [K.FULL if (i + 1) % pattern == 0 else K.SLIDING for i in range(n)]


def plamo3_window(f: Fields) -> int | None:
    if isinstance(f.get("interleaved_sliding_window"), list):
        return pangu_embedded_window(f)
    return f.int("window_size")


def plamo3_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Plamo3ForCausalLM: q/k/v/o without biases, per-head q_norm and k_norm (head_dim each), DenseMLP (gate_up and
    down, no biases), four RMSNorms a layer (pre/post mixer, pre/post MLP), a final norm; Plamo3Config ties the
    embeddings by default."""
    total, _ = _decoder(f, layers, dims, tied_default=True)
    hidden = f.int("hidden_size")
    total += len(layers) * (2 * dims[2] + 2 * hidden)  # q_norm, k_norm; two more RMSNorms than Llama's
    return total, total
