"""Parameter counters of the state-space and recurrent families: the Mamba-1 / Mamba-2 block arithmetic, the
generic hybrid counter (`hybrid`: Mamba, Mamba-2, Falcon-Mamba, Falcon-H1, Jamba, Qwen3-Next: attention, Mamba or
Gated DeltaNet per layer, as kvplan's layer list says), the Mamba-2 hybrids (Bamba, Granite-4.0-H), Zamba and
Zamba2 (a shared transformer block), RWKV-4 and RecurrentGemma. Each counter is `count(f, layers, dims) ->
(total, active)`, read from the module shapes of the transformers modeling code (5.23; 5.25 and vLLM 0.34 where
cited at a rule).
"""

from __future__ import annotations

from ..core.layers import LayerSpec
from .fields import Fields
from .param_embeddings import _vocab_embed
from .param_parts import _attention_plain, _ffn_moe, _gdn_block, _kinds_of, embeddings, gated_mlp
from .params_generic import _attention, _is_moe_layer, _moe


def hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    return _hybrid_params(f, layers, heads, kv, head_dim)


def mamba1_block(hidden: int, d_inner: int, d_state: int, d_conv: int, dt_rank: int, jamba: bool,
                 conv_bias: bool = True) -> int:
    """A Mamba-1 mixer: in_proj, conv1d (with its bias unless conv_bias is False), x_proj, dt_proj with bias,
    A_log, D, out_proj; Jamba adds its dt / B / C layernorms."""
    n = hidden * 2 * d_inner  # in_proj
    n += d_inner * d_conv + (d_inner if conv_bias else 0)  # conv1d, with bias
    n += d_inner * (dt_rank + 2 * d_state)  # x_proj
    n += dt_rank * d_inner + d_inner  # dt_proj
    n += d_inner * d_state + d_inner  # A_log, D
    n += d_inner * hidden  # out_proj
    if jamba:
        n += dt_rank + 2 * d_state  # dt, B, C layernorms
    return n


def mamba2_block(hidden: int, n_heads: int, head_dim: int, n_groups: int, d_state: int, d_conv: int, d_inner: int | None = None,
                 gated_norm: bool = True, conv_bias: bool = True, in_bias: bool = False, out_bias: bool = False) -> int:
    """gated_norm: the mixer has its gated RMSNorm over d_inner (Falcon-H1's only with mamba_rms_norm); conv_bias,
    in_bias, out_bias: conv1d, in_proj and out_proj have biases (_mamba2_mixer reads each family's flags)."""
    d_inner = d_inner or n_heads * head_dim
    conv_dim = d_inner + 2 * n_groups * d_state
    projected = 2 * d_inner + 2 * n_groups * d_state + n_heads
    n = hidden * projected + (projected if in_bias else 0)  # in_proj
    n += conv_dim * d_conv + (conv_dim if conv_bias else 0)  # conv1d
    n += 3 * n_heads  # dt_bias, A_log, D
    n += d_inner if gated_norm else 0  # gated norm
    n += d_inner * hidden + (hidden if out_bias else 0)  # out_proj
    return n


def _hybrid_params(f: Fields, layers: list[LayerSpec], heads: int, kv: int, head_dim: int) -> tuple[int, int]:
    mt = f.model_type
    hidden = f.int("hidden_size", "d_model")
    total = active = _vocab_embed(f, hidden) + hidden
    inter = f.int("intermediate_size", default=0, minimum=0)
    for i, layer in enumerate(layers):
        block = 0
        if layer.caches:
            block += _attention(f, hidden, heads, kv, head_dim)
            if mt == "qwen3_next":
                block += hidden * heads * head_dim  # output gate doubles q_proj
        if layer.state is not None:
            if layer.state.kind == "mamba":
                d_inner = f.int("mamba_d_inner", default=int(f.number("mamba_expand", default=2) * hidden))
                d_state = f.int("state_size", "mamba_d_state", default=16)
                d_conv = f.int("conv_kernel", "mamba_d_conv", default=4)
                dt_rank = f.get("time_step_rank", "mamba_dt_rank", default="auto")
                dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("time_step_rank", "mamba_dt_rank")
                block += mamba1_block(hidden, d_inner, d_state, d_conv, dt_rank, mt == "jamba")
            elif layer.state.kind == "gated_deltanet":
                block += _gdn_block(f, hidden)
            elif layer.state.kind == "mamba2":
                p = "" if mt == "mamba2" else "mamba_"
                nh = f.int(f"{p}n_heads", f"{p}num_heads", "num_heads")
                hd = f.int(f"{p}d_head", f"{p}head_dim", "head_dim")
                block += mamba2_block(
                    hidden, nh, hd, f.int(f"{p}n_groups", "n_groups", default=1),
                    f.int(f"{p}d_state", "ssm_state_size", "state_size", default=128),
                    f.int(f"{p}d_conv", "conv_kernel", default=4), f.opt_int(f"{p}d_ssm"),
                    # transformers 5.25 modeling_falcon_h1.py FalconH1Mixer: norm is nn.Identity unless
                    # mamba_rms_norm (FalconH1Config default False); vLLM 0.34 falcon_h1.py passes
                    # use_rms_norm=config.mamba_rms_norm, and MambaMixer2 then registers no norm weight
                    gated_norm=mt != "falcon_h1" or f.flag("mamba_rms_norm", default=False),
                )
        # the pure Mamba blocks hold one norm (Falcon-Mamba's mixer norms are weightless buffers: transformers 5.25
        # modeling_falcon_mamba.py FalconMambaWeightlessRMSNorm; vLLM 0.34 mamba.py rms_norm_has_weight=False)
        norms = hidden if mt in ("mamba", "mamba2", "falcon_mamba") else 2 * hidden
        moe_t, moe_a = (_moe(f, hidden) if mt in ("jamba", "qwen3_next") and _is_moe_layer(f, i) else (0, 0))
        if moe_t:
            total += block + norms + moe_t
            active += block + norms + moe_a
            continue
        mlp = 0
        if mt in ("jamba", "falcon_h1") and inter:
            mlp = gated_mlp(hidden, inter)
        total += block + norms + mlp
        active += block + norms + mlp
    return total, active


def _mamba2_mixer(f: Fields, hidden: int) -> int:
    """A Mamba-2 mixer read from the mamba_* fields (Bamba, Granite-4.0-H, Nemotron-H, Zamba2)."""
    nh = f.int("mamba_n_heads", "mamba_num_heads", "num_heads")
    if f.get("mamba_d_head") == "auto":  # transformers: expand x hidden / heads
        hd = int(f.number("mamba_expand", default=2) * hidden) // nh
    else:
        hd = f.int("mamba_d_head", "mamba_head_dim", "head_dim")
    # biases as transformers 5.25 builds them: Zamba2Mixer's conv1d always, in_proj and out_proj under
    # add_bias_linear; BambaMixer's and GraniteMoeHybridMambaLayer's conv1d under mamba_conv_bias, in_proj and
    # out_proj under mamba_proj_bias
    if f.model_type == "zamba2":
        conv_bias, proj_bias = True, f.flag("add_bias_linear")
    else:
        conv_bias, proj_bias = f.flag("mamba_conv_bias", default=True), f.flag("mamba_proj_bias")
    return mamba2_block(hidden, nh, hd, f.int("mamba_n_groups", "n_groups", default=1),
                        f.int("mamba_d_state", "ssm_state_size", "state_size", default=128),
                        f.int("mamba_d_conv", "conv_kernel", default=4), f.opt_int("mamba_d_ssm"),
                        conv_bias=conv_bias, in_bias=proj_bias, out_bias=proj_bias)


def _mamba2_hybrid(f: Fields, layers: list, dims, ffn: tuple[int, int]) -> tuple[int, int]:
    """Mamba-2 / attention layers, each followed by the same feed-forward block; two RMSNorms a layer. The
    attention's q/k/v/o_proj are biased under attention_bias (BambaAttention, GraniteMoeHybridAttention)."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    attn = _attention_plain(hidden, heads, kv, head_dim) if dims else 0
    if dims and f.flag("attention_bias"):
        attn += (heads + 2 * kv) * head_dim + hidden
    mamba = _mamba2_mixer(f, hidden)
    total = active = embeddings(f, hidden, False, 0) + hidden
    for kind in _kinds_of(layers):
        mixer = attn if kind == "attention" else mamba
        total += mixer + 2 * hidden + ffn[0]
        active += mixer + 2 * hidden + ffn[1]
    return total, active


def bamba(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Bamba: Mamba-2 or attention, then a SwiGLU MLP (feed_forward) on every layer, its gate / up / down_proj
    biased under mlp_bias (transformers 5.25 modeling_bamba.py BambaMLP)."""
    hidden = f.int("hidden_size")
    mlp = gated_mlp(hidden, f.int("intermediate_size"), f.flag("mlp_bias"))
    return _mamba2_hybrid(f, layers, dims, (mlp, mlp))


def granite_hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Granite-4.0-H: Mamba-2 or attention, then (when num_local_experts > 0) a routed MoE plus the
    shared_mlp (input_linear to 2 x shared_intermediate_size, output_linear back) on every layer."""
    hidden = f.int("hidden_size")
    shared = 3 * hidden * f.int("shared_intermediate_size", default=1024)
    experts = f.int("num_local_experts", default=8, minimum=0)
    if experts:
        ffn = _ffn_moe(hidden, experts, f.int("num_experts_per_tok", default=2), f.int("intermediate_size"),
                       shared=shared)
    else:
        ffn = (shared, shared)
    return _mamba2_hybrid(f, layers, dims, ffn)


def rwkv(f: Fields, layers: list, dims) -> tuple[int, int]:
    """RWKV-4: per block two LayerNorms, time-mix (time_decay, time_first, three mix vectors; key, value,
    receptance, output) and channel-mix (two mix vectors; key to intermediate, receptance, value back);
    a LayerNorm before the first block, ln_out, embeddings and an untied head."""
    hidden = f.int("hidden_size")
    attn_width = f.int("attention_hidden_size", default=hidden)
    inter = f.int("intermediate_size", default=4 * hidden, maximum=10**8)
    time_mix = 2 * attn_width + 3 * hidden + 3 * hidden * attn_width + attn_width * hidden
    channel_mix = 2 * hidden + 2 * hidden * inter + hidden * hidden
    per_block = time_mix + channel_mix + 2 * 2 * hidden
    n = embeddings(f, hidden, False, 0) + 2 * hidden + 2 * hidden + len(layers) * per_block
    return n, n


def _mamba1_heads(f: Fields, hidden: int) -> int:
    """Zamba's Mamba mixer: in_proj, conv with bias, per-head x_proj and dt_proj (+ bias), A_log, D, out_proj."""
    d_inner = int(f.number("mamba_expand", default=2) * hidden)
    d_state = f.int("mamba_d_state", default=16)
    d_conv = f.int("mamba_d_conv", default=4)
    dt_rank = f.get("mamba_dt_rank", default="auto")
    dt_rank = -(-hidden // 16) if dt_rank == "auto" else f.int("mamba_dt_rank")
    return mamba1_block(hidden, d_inner, d_state, d_conv, dt_rank, False, f.flag("mamba_conv_bias", default=True))


def zamba(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Zamba: a Mamba layer (norm + mixer) everywhere; 'hybrid' layers add a hidden x hidden linear and
    call ONE shared transformer block (counted once): attention over the 2 x hidden concatenation,
    a SwiGLU MLP and two norms."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)  # no hybrid layer: no shared block
    hidden = f.int("hidden_size")
    attn_in = f.int("attention_hidden_size", default=2 * hidden)
    shared = attn_in * (heads + 2 * kv) * head_dim + heads * head_dim * hidden
    shared += gated_mlp(hidden, f.int("intermediate_size")) + attn_in + hidden
    per_mamba = hidden + _mamba1_heads(f, hidden)
    hybrid = sum(1 for layer in layers if layer.caches)
    n = embeddings(f, hidden, True, 0) + hidden + len(layers) * per_mamba + hybrid * hidden * hidden
    n += shared if hybrid else 0
    return n, n


def zamba2(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Zamba2: a Mamba-2 layer everywhere; 'hybrid' layers add a linear and call one of num_mem_blocks
    shared transformer blocks (each counted once), whose per-call LoRA adapters are not shared: on the
    MLP's gate_up always, on q/k/v with use_shared_attention_adapter."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)  # no hybrid layer: no shared block
    hidden = f.int("hidden_size")
    attn_in = f.int("attention_hidden_size", default=2 * hidden)
    inter = f.int("intermediate_size")
    rank = f.int("adapter_rank", default=128)
    bias = f.flag("add_bias_linear")
    block = attn_in * (heads + 2 * kv) * head_dim + heads * head_dim * hidden
    block += 3 * hidden * inter + ((2 * inter + hidden) if bias else 0) + attn_in + hidden
    adapter = hidden * rank + rank * 2 * inter
    if f.flag("use_shared_attention_adapter"):
        adapter += 3 * (attn_in * rank + rank * attn_in)
    hybrid = sum(1 for layer in layers if layer.caches)
    blocks = min(hybrid, f.int("num_mem_blocks", default=1))
    per_mamba = hidden + _mamba2_mixer(f, hidden)
    n = embeddings(f, hidden, True, 0) + hidden + len(layers) * per_mamba
    n += hybrid * (hidden * hidden + adapter) + blocks * block
    return n, n


def recurrent_gemma(f: Fields, layers: list, dims) -> tuple[int, int]:
    """RecurrentGemma: per layer two RMSNorms and a biased GeGLU MLP of intermediate_size / 2; the temporal
    block is local attention (o_proj with bias) or the recurrent block (linear_x, linear_y, linear_out
    with biases, a depthwise conv with bias, the RG-LRU's block-diagonal gates and recurrent_param)."""
    hidden = f.int("hidden_size")
    # no attention layer (block_types all 'recurrent'): the gates' blocks still follow the heads
    heads, kv, head_dim = dims[:3] if dims else (f.int("num_attention_heads"), 0, 0)
    lru = f.int("lru_width", default=hidden)
    width = f.int("conv1d_width", default=4)
    bias = f.flag("attention_bias")
    attn = _attention_plain(hidden, heads, kv, head_dim) + hidden
    attn += (heads + 2 * kv) * head_dim if bias else 0
    block_width = lru // heads
    recurrent = 2 * (hidden * lru + lru) + lru * hidden + hidden + lru * width + lru
    recurrent += lru + 2 * (heads * block_width * block_width + lru)
    mlp = gated_mlp(hidden, f.int("intermediate_size") // 2, bias=True)
    n = embeddings(f, hidden, True, 0) + hidden
    for kind in _kinds_of(layers):
        n += (attn if kind == "attention" else recurrent) + mlp + 2 * hidden
    return n, n
