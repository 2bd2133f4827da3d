"""Inkling's short-convolution state as vLLM pages it: a sliding window of the kernel's tokens, not a Mamba state.

Read in vLLM 0.26.0 (where InklingForCausalLM / InklingForConditionalGeneration were registered), 0.27-0.32,
0.33.0 and 0.34.0: models/inkling/nvidia/sconv_swa_attn.py InklingConvState (the same in every release; 0.29
only dropped its backend's cache-shape methods) and nvidia/model.py InklingDecoderLayer:

- every decoder layer builds one InklingConvState, before its InklingAttention, and registers it in the static
  forward context as an attention-like layer; its get_kv_cache_spec is a SlidingWindowSpec with block_size =
  sliding_window = sconv_kernel_size, num_kv_heads = the layer's KV heads // TP (swa_num_key_value_heads on local
  layers; it asserts TP <= KV heads), head_size = 2 x head_dim + 2 x (hidden_size // KV heads) rounded up to a
  power of two (the K, V, attention-output and MLP-output streams packed head-major), head_size_v = 0, in the
  model dtype, which it asserts is bfloat16 (whatever --kv-cache-dtype says);
- InklingAttention's own spec is FullAttentionSpec, or SlidingWindowSpec of sliding_window_size on local layers,
  with cache_config.block_size;
- _TmlForCausalLMBase is SupportsPP and SupportsLoRA only: not IsHybrid, so no Mamba block alignment and no
  Mamba cache modes; the pool groups these specs as any sliding + full model's (unify_kv_cache_spec_page_size
  scales the smaller pages' block sizes, then one group per spec and group size). Neither FlashAttention nor the
  conv backend declares KV cache layouts, so 0.33-0.34 resolve the default LBNHC (not block-outermost: no
  packed groups).

A request then holds, per conv group, cdiv(min(kernel - 1 + in-flight tokens, max_model_len), its block) + 1
pages (SlidingWindowSpec.max_memory_usage_bytes), not one state page.
"""

from __future__ import annotations

from ..core.layers import LayerSpec
from ..core.model import ModelSpec
from ..errors import UsageError

# vLLM's registry: models/inkling (vllm_registry_data.py: from 0.26.0)
INKLING_ARCHS = frozenset({"InklingForCausalLM", "InklingForConditionalGeneration"})
CONV_STATE_BYTES_PER_VALUE = 2  # bfloat16, asserted by InklingConvState


def is_inkling(model: ModelSpec) -> bool:
    """A model vLLM builds with models/inkling whose layers carry the four short convolutions."""
    return (model.architecture in INKLING_ARCHS
            and any(layer.state is not None and layer.state.kind == "short_conv" for layer in model.layers))


def check_inkling(model: ModelSpec, tp: int, speculative: bool) -> None:
    """What vLLM's InklingConvState refuses (its asserts), and what kvplan has not read for Inkling."""
    for layer in model.layers:
        state = layer.state
        if state is None or state.kind != "short_conv":
            continue
        if None in (state.heads, state.head_dim, state.conv_channels, state.conv_kernel):
            raise UsageError(f"--engine vllm: the shape of {model.name}'s short-convolution state is not known to "
                             "kvplan, and vLLM pages it by that shape", "use --engine ideal")
        if tp > state.heads:
            raise UsageError(f"vLLM cannot serve {model.name} at --tp {tp}: InklingConvState asserts TP <= the "
                             f"layer's {state.heads} KV heads (models/inkling/nvidia/sconv_swa_attn.py)",
                             f"use --tp {state.heads} or less")
    if model.float_dtype in ("float16", "fp16", "half"):  # vLLM's dtype auto keeps float16 (serving_storage)
        raise UsageError(f"vLLM cannot serve {model.name} in float16: InklingConvState asserts a bfloat16 model "
                         "dtype (models/inkling/nvidia/sconv_swa_attn.py)", "serve it in bfloat16")
    if speculative:
        raise UsageError(f"--engine vllm: speculative decoding is not modelled for {model.name}: vLLM 0.34 serves "
                         "Inkling's MTP draft (models/inkling/nvidia/mtp.py: min(mtp_config.num_nextn_predict_"
                         "layers, num_speculative_tokens) depth layers, each an Inkling decoder layer with a conv "
                         "state and full or sliding attention by mtp_config.local_layer_ids), and with two or more "
                         "depths every sliding-window spec, conv states included, keeps num_speculative_tokens - 1 "
                         "more tokens (kv_cache_planning.py get_global_kv_cache_groups); kvplan sizes neither yet",
                         "drop the draft, or plan without it")


def decode_blocks_per_request(pool, context_tokens: int) -> int:
    """Blocks one decoding request of context_tokens holds in vLLM's pool at most, summed over the groups.

    A full group holds cdiv(L, block); a sliding group (the conv states too) frees the blocks wholly below the
    window (single_type_kv_cache_manager.py SlidingWindowManager.remove_skipped_blocks: the first L - W + 1 tokens
    are skipped), so it holds at most cdiv(W - 1, block) + 1 blocks, or cdiv(L, block) when L is shorter. This is
    the steady state; SlidingWindowSpec.max_memory_usage_bytes (the start-up concurrency) instead counts the
    tokens in flight, which a prefill chunk holds until it is computed."""
    total = 0
    for group in pool.groups:
        spec = group.spec
        held = -(-context_tokens // spec.block_tokens)
        if spec.kind == "sliding":
            held = min(held, -(-(spec.window_tokens - 1) // spec.block_tokens) + 1)
        total += held
    return total


def conv_state_geometry(layer: LayerSpec) -> tuple[int, int, int]:
    """(KV heads on this rank, packed head width, kernel) of one layer's InklingConvState.

    `layer` is one TP rank's: its attention cache holds the KV heads // TP (TP <= KV heads, so the same count
    InklingConvState keeps); the packed width is 2 x head_dim + 2 x (hidden_size // KV heads), rounded up to a
    power of two."""
    state = layer.state
    hidden = (state.conv_channels - 2 * state.heads * state.head_dim) // 2
    raw = 2 * state.head_dim + 2 * (hidden // state.heads)
    packed = 1 << (raw - 1).bit_length()
    rank_heads = next(c.heads for c in layer.caches if c.kind == "attention")
    return rank_heads, packed, state.conv_kernel


def conv_state_token_bytes(layer: LayerSpec) -> int:
    """One token of the conv-state page: heads x packed width x 2 B (head_size_v = 0)."""
    heads, packed, _ = conv_state_geometry(layer)
    return heads * packed * CONV_STATE_BYTES_PER_VALUE
