"""Fixed per-sequence states of recurrent layers, as serving engines allocate them.

- Mamba (v1): conv (d_conv - 1) x d_inner, SSM d_inner x d_state.
- Mamba-2: conv (d_conv - 1) x (d_inner + 2 x n_groups x d_state),
  SSM n_heads x head_dim x d_state.
- Gated DeltaNet (Qwen3-Next, Qwen3.5): conv (kernel - 1) x (2 x key_dim + value_dim),
  SSM v_heads x key_head_dim x value_head_dim.
Engines keep d_conv - 1 conv columns (the newest input completes the window);
transformers keeps d_conv (tests/parity names that rule).

The dtypes are the checkpoint's: the conv state in the model dtype, the SSM state
in `mamba_ssm_cache_dtype` when the config (or its family's transformers default,
float32 for Nemotron-H) sets one, else the model dtype. An
engine that overrides them (vLLM's float32 SSM state for Nemotron-H) does so in
kvplan/engines, not here.
"""

from __future__ import annotations

from ..core.layers import RecurrentState
from ..core.storage import Storage, float_storage
from ..errors import ConfigError, UsageError
from .fields import Fields
from .zaya_layout import zaya_dims


def _storage(f: Fields, *names: str, default: str = "bfloat16") -> Storage:
    name = f.text(*names, default=default)
    if name == "auto":
        name = default
    try:
        return float_storage(name)
    except UsageError:
        raise ConfigError(f"{f.source}: {names[0]!r} is {name!r}, not a float dtype kvplan knows "
                          f"(model_type {f.model_type!r})", "use float32, float16 or bfloat16") from None


def model_storage(f: Fields) -> Storage:
    return _storage(f, "torch_dtype", "dtype")


def _dtypes(f: Fields) -> tuple[Storage, Storage]:
    model = model_storage(f)
    names = ("mamba_ssm_cache_dtype", "mamba_ssm_dtype")  # the second: Qwen3.5's hub files
    ssm = _storage(f, *names, default=model.name) if f.get(*names) is not None else model
    return model, ssm


def mamba1_state(f: Fields) -> RecurrentState:
    hidden = f.int("hidden_size")
    expand = f.number("mamba_expand", "expand", default=2)
    d_inner = f.int("mamba_d_inner", default=int(expand * hidden))  # Mamba's own configs alias intermediate_size
    d_state = f.int("mamba_d_state", "state_size", "d_state", default=16)
    d_conv = f.int("mamba_d_conv", "conv_kernel", "d_conv", default=4)
    conv, ssm = _dtypes(f)
    return RecurrentState("mamba", (d_conv - 1) * d_inner, d_inner * d_state, conv, ssm, d_state=d_state,
                          d_inner=d_inner, conv_kernel=d_conv)


def mamba2_state(f: Fields, prefix: str = "mamba_") -> RecurrentState:
    n_heads = f.int(f"{prefix}n_heads", f"{prefix}num_heads", "num_heads")
    if f.get(f"{prefix}d_head") == "auto":  # Bamba, Granite-4.0-H: expand x hidden / heads
        d_inner = int(f.number(f"{prefix}expand", "expand", default=2) * f.int("hidden_size"))
        head_dim = d_inner // n_heads
    else:
        head_dim = f.int(f"{prefix}d_head", f"{prefix}head_dim", "head_dim")
        d_inner = f.int(f"{prefix}d_ssm", default=n_heads * head_dim)
    n_groups = f.int(f"{prefix}n_groups", "n_groups", default=1)
    d_state = f.int(f"{prefix}d_state", "ssm_state_size", "state_size", default=128)
    d_conv = f.int(f"{prefix}d_conv", "conv_kernel", default=4)
    conv, ssm = _dtypes(f)
    conv_dim = d_inner + 2 * n_groups * d_state
    return RecurrentState("mamba2", (d_conv - 1) * conv_dim, n_heads * head_dim * d_state, conv, ssm,
                          n_groups=n_groups, d_state=d_state, d_inner=d_inner, heads=n_heads, head_dim=head_dim,
                          conv_kernel=d_conv)


def gated_deltanet_state(f: Fields, fp32_state: bool = False) -> RecurrentState:
    k_heads = f.int("linear_num_key_heads")
    v_heads = f.int("linear_num_value_heads")
    k_dim = f.int("linear_key_head_dim")
    v_dim = f.int("linear_value_head_dim")
    kernel = f.int("linear_conv_kernel_dim", default=4)
    conv, ssm = _dtypes(f)
    if fp32_state:
        ssm = float_storage("float32")
    channels = 2 * k_heads * k_dim + v_heads * v_dim
    # the shape (key heads as groups, key width as state size, value heads and width) lets an engine pad and
    # shard it as its own state shape does (SGLang's Mamba2StateShape)
    return RecurrentState("gated_deltanet", (kernel - 1) * channels, v_heads * k_dim * v_dim, conv, ssm,
                          n_groups=k_heads, d_state=k_dim, heads=v_heads, head_dim=v_dim,
                          conv_kernel=kernel, conv_channels=channels)


def kda_state(f: Fields) -> RecurrentState:
    """Kimi Delta Attention: conv over q, k and v (3 x heads x head_dim channels, kernel - 1
    columns) in the model dtype; the recurrent state heads x head_dim x head_dim is float32 in
    both transformers and vLLM (the model code casts it)."""
    heads = f.int("linear_attn_config.num_heads", "linear_num_heads")
    head_dim = f.int("linear_attn_config.head_dim", "linear_head_dim")
    kernel = f.int("linear_attn_config.short_conv_kernel_size", "linear_conv_kernel_dim", default=4)
    conv = model_storage(f)
    return RecurrentState("kda", (kernel - 1) * 3 * heads * head_dim, heads * head_dim * head_dim,
                          conv, float_storage("float32"), heads=heads, head_dim=head_dim, conv_kernel=kernel)


def lightning_state(f: Fields) -> RecurrentState:
    """MiniMax lightning attention: one heads x head_dim x head_dim state (no conv), model dtype."""
    heads = f.int("num_attention_heads")
    head_dim = f.opt_int("head_dim") or f.int("hidden_size") // heads
    dtype = model_storage(f)
    return RecurrentState("lightning", 0, heads * head_dim * head_dim, dtype, dtype)


def short_conv_state(f: Fields) -> RecurrentState:
    """LFM2's short convolution: conv_L_cache is the kernel size; engines keep kernel - 1
    columns of hidden_size channels (transformers keeps kernel columns); no recurrent state."""
    kernel = f.int("conv_L_cache", default=3)
    dtype = model_storage(f)
    hidden = f.int("hidden_size")
    return RecurrentState("short_conv", (kernel - 1) * hidden, 0, dtype, dtype, conv_kernel=kernel, conv_channels=hidden)


def rg_lru_state(f: Fields) -> RecurrentState:
    """RecurrentGemma: a conv of (conv1d_width - 1) x lru_width in the model dtype and the
    RG-LRU state of lru_width in float32 (the model keeps it in float32)."""
    width = f.int("lru_width", default=f.int("hidden_size"))
    kernel = f.int("conv1d_width", default=4)
    return RecurrentState("rg_lru", (kernel - 1) * width, width, model_storage(f), float_storage("float32"))


def olmo_hybrid_state(f: Fields) -> RecurrentState:
    """OLMo-Hybrid's Gated DeltaNet: key/value heads default to the attention heads, the key
    width to int(0.75 x hidden / key heads), the value width to twice it; the recurrent state is
    built in float32 by the model code."""
    heads = f.int("num_attention_heads")
    k_heads = f.int("linear_num_key_heads", default=heads)
    k_dim = f.int("linear_key_head_dim", default=int(0.75 * f.int("hidden_size") / k_heads))
    defaults = {"linear_num_key_heads": k_heads, "linear_num_value_heads": heads,
                "linear_key_head_dim": k_dim, "linear_value_head_dim": 2 * k_dim}
    filled = Fields(f.raw, f.source, {**f.defaults, **defaults}, f.aliases, f.model_type)
    return gated_deltanet_state(filled, fp32_state=True)


def rwkv_state(f: Fields) -> RecurrentState:
    """RWKV-4: two token-shift vectors of hidden_size in the model dtype and the WKV numerator,
    denominator and running max of attention_hidden_size in float32, per layer."""
    hidden = f.int("hidden_size")
    width = f.int("attention_hidden_size", default=hidden)
    return RecurrentState("rwkv", 2 * hidden, 3 * width, model_storage(f), float_storage("float32"))


def zaya_cca_state(f: Fields) -> RecurrentState:
    """ZAYA's compressed convolutional attention, beside each layer's K/V: the causal convs over the
    concatenated q and k projections ((heads + KV heads) x head_dim channels) keep
    (cca_time0 - 1) + (cca_time1 - 1) past columns, and the delayed half of the value projection keeps
    the last token's KV heads x head_dim / 2; both in the model dtype (ZayaCCAProjection)."""
    heads, kv, head_dim = zaya_dims(f)  # either layout: transformers' fields, or the Megatron-style lists
    channels = (heads + kv) * head_dim
    columns = (f.int("cca_time0", default=2) - 1) + (f.int("cca_time1", default=2) - 1)
    dtype = model_storage(f)
    return RecurrentState("cca", columns * channels, kv * head_dim // 2, dtype, dtype)


def bailing_hybrid_state(f: Fields) -> RecurrentState:
    """Bailing-Hybrid's linear layers (Kimi Delta Attention): BailingHybridConfig sets linear_num_heads =
    num_attention_heads, linear_head_dim = head_dim (128 by default; the config then overwrites head_dim with
    qk_rope_head_dim, so files it saves carry linear_head_dim) and linear_conv_kernel_dim =
    short_conv_kernel_size (4). Conv over q, k and v in the model dtype, recurrent state in float32."""
    heads = f.int("linear_num_heads", "num_attention_heads")
    head_dim = f.int("linear_head_dim", "head_dim", default=128)
    kernel = f.int("linear_conv_kernel_dim", "short_conv_kernel_size", default=4)
    return RecurrentState("kda", (kernel - 1) * 3 * heads * head_dim, heads * head_dim * head_dim,
                          model_storage(f), float_storage("float32"), heads=heads, head_dim=head_dim, conv_kernel=kernel)


def inkling_conv_state(f: Fields, kind: str) -> RecurrentState:
    """Inkling's four short convolutions per layer (InklingShortConvolution, conv_kernel_size wide; checkpoints
    call it sconv_kernel_size): on K and on V (the layer's KV heads x head width, swa_* on sliding layers) and
    two on hidden_size; engines keep kernel - 1 columns of each, in the model dtype. No recurrent state."""
    sliding = kind == "hybrid_sliding"
    kv = f.int("swa_num_key_value_heads" if sliding else "num_key_value_heads")
    head_dim = f.int("swa_head_dim" if sliding else "head_dim")
    return inkling_short_convs(f, kv, head_dim, f.int("conv_kernel_size", "sconv_kernel_size", default=4))


def inkling_short_convs(f: Fields, kv: int, head_dim: int, kernel: int) -> RecurrentState:
    """Inkling's four short convolutions of one layer, kernel - 1 columns each in the model dtype: K and V (kv heads
    x head_dim each) and the attention- and MLP-output streams (hidden_size each). The shape is kept (heads = the
    layer's KV heads, conv_channels = 2 x kv x head_dim + 2 x hidden_size) for vLLM's paged form of it
    (kvplan.engines.vllm_inkling)."""
    dtype = model_storage(f)
    channels = 2 * kv * head_dim + 2 * f.int("hidden_size")
    return RecurrentState("short_conv", (kernel - 1) * channels, 0, dtype, dtype, heads=kv, head_dim=head_dim,
                          conv_kernel=kernel, conv_channels=channels)


def inkling_mtp(raw: dict) -> tuple[int | None, tuple[int, ...], tuple[str, ...]]:
    """(MTP depths, the sliding ones, notes) of an Inkling checkpoint, from the config's top-level mtp_config,
    where vLLM reads it (config/speculative.py SpeculativeConfig.hf_config_override, 0.27+:
    num_nextn_predict_layers, absent: 0, and local_layer_ids, absent: none) and only for MTP speculative
    decoding: an mtp_config kvplan cannot read leaves the depths absent, with a note."""
    mtp = raw.get("mtp_config")
    if mtp is None:
        return None, (), ()
    depths = mtp.get("num_nextn_predict_layers", 0) if isinstance(mtp, dict) else None
    local = mtp.get("local_layer_ids") or [] if isinstance(mtp, dict) else None
    if (not isinstance(depths, int) or isinstance(depths, bool) or depths < 0 or not isinstance(local, list)
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in local)):
        return None, (), ("mtp_config is not an object with a count num_nextn_predict_layers and a list of integers "
                          "local_layer_ids: its MTP draft is not read (--mtp is refused)",)
    return depths, tuple(local), ()


def nemotron_h_mtp_attention(f: Fields) -> tuple[int | None, tuple[str, ...]]:
    """(attention layers of Nemotron-H's MTP step, notes): vLLM's NemotronHMultiTokenPredictor (nemotron_h_mtp.py,
    0.17.0-0.34.0) builds one layer per character of config.mtp_hybrid_override_pattern, '*' a
    NemotronHAttentionDecoderLayer and 'E' a MoE layer, and raises NotImplementedError on any other. transformers
    5's NemotronHConfig stores the list mtp_layers_block_type (legacy 'attention' read as full_attention; absent:
    ['full_attention', 'moe']) and derives the pattern from it; older configs write the pattern, whose default
    (vLLM 0.17's own NemotronHConfig) is '*E'. None, with a note, where vLLM would not build it."""
    pattern = nemotron_h_mtp_pattern(f)
    if pattern is None:
        listed = f.get("mtp_layers_block_type")
        return None, (f"the MTP layers {listed if listed is not None else f.get('mtp_hybrid_override_pattern')!r} "
                      "are not all attention or MoE: vLLM's NemotronHMultiTokenPredictor builds no other (--mtp is "
                      "refused)",)
    return pattern.count("*"), ()


def nemotron_h_mtp_pattern(f: Fields) -> str | None:
    """The MTP step's layers as vLLM's mtp_hybrid_override_pattern spells them ('*' attention, 'E' MoE; read as
    nemotron_h_mtp_attention says); None where it names another kind."""
    names = {"full_attention": "*", "attention": "*", "moe": "E", "linear_attention": "M", "mamba": "M", "mlp": "-"}
    listed = f.get("mtp_layers_block_type")
    if isinstance(listed, list) and listed and all(isinstance(x, str) for x in listed):
        pattern = "".join(names.get(x, "?") for x in listed)
    else:
        pattern = f.get("mtp_hybrid_override_pattern")
        pattern = "*E" if pattern is None and listed is None else pattern
    if not isinstance(pattern, str) or not pattern or set(pattern) - {"*", "E"}:
        return None
    return pattern
