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

Speculative decoding with Inkling's MTP draft (with_inkling_draft; read in 0.27.1-0.29.0, 0.31.0-0.34.0, run
against 0.33 and 0.34's planner): config/speculative.py takes the depths and their local ids from the config's
top-level mtp_config (none: "The Inkling checkpoint does not contain MTP weights"); nvidia/mtp.py builds
min(depths, num_speculative_tokens) InklingDecoderLayers, each registering a conv state and K/V as a target
layer of its kind does; with two or more, multi-module MTP makes get_global_kv_cache_groups keep
num_speculative_tokens - 1 more tokens below every sliding window (0.28+; 0.27.1 exposed one depth and kept
none). The lookahead slots (num_speculative_tokens, allocate_slots) are a scheduling reserve, not in the
pool planner; the drafter's weights are not modelled (not a layout kvplan.weights.mtp reads: only the built
depths load, each a dense-MLP Inkling block beside a replicated 2H -> H input_proj).
"""

from __future__ import annotations

from dataclasses import replace

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


# Inkling's MTP draft as kvplan plans it under vLLM: checked against the planner of these releases
# (benchmarks/vllm_oracle_inkling.py). 0.27.1 exposes one depth only (n_predict 1) and keeps no extra sliding
# tokens; 0.28.0-0.32.0 read as 0.33 (extra tokens from use_multi_module_mtp, later num_prefill_lookahead_tokens),
# 0.30 not read, and none of them run against the planner
MTP_CHECKED_FROM = (0, 33, 0)


def check_inkling(model: ModelSpec, tp: int, rules=None, draft_layers: int = 0, draft_model: bool = False,
                  tokens: int = 0) -> None:
    """What vLLM's InklingConvState refuses (its asserts), what vLLM refuses of Inkling's MTP draft, and what
    kvplan has not read for Inkling."""
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
    if draft_model or (tokens and not draft_layers):
        raise UsageError(f"--engine vllm: a separate draft checkpoint for {model.name} is not modelled (kvplan "
                         "models Inkling's own MTP draft only)", "use --mtp, or plan without the draft")
    if not draft_layers:
        return
    from .vllm_release import at_least

    version = getattr(rules, "version", None)
    if version is not None and not at_least(version, MTP_CHECKED_FROM):
        raise UsageError(f"--engine vllm: Inkling's MTP draft under vLLM {version} is not modelled: kvplan checked "
                         "it against vLLM 0.33 and 0.34's planner only (0.27.1 builds one depth whatever the "
                         "checkpoint holds and keeps no extra sliding-window tokens; 0.28-0.32 were read, not "
                         "checked)", "use vllm@0.33 or vllm@0.34, or plan without the draft")


def with_inkling_draft(model: ModelSpec, depths_in_checkpoint: int, tokens: int) -> tuple[ModelSpec, list[str]]:
    """(the target with its MTP depth layers appended, notes).

    vLLM (0.33, 0.34) builds min(mtp_config.num_nextn_predict_layers, num_speculative_tokens) depths (models/
    inkling/nvidia/mtp.py _select_mtp_depth_count), each an InklingDecoderLayer built from the target's text
    config: its conv state and K/V are a local layer's (swa_* heads, the window) for the depths in
    mtp_config.local_layer_ids and a full layer's for the others, so kvplan copies the target's last layer of
    that kind. With two or more depths the speculator is multi-module MTP and every SlidingWindowSpec, conv
    states included, keeps num_speculative_tokens - 1 more tokens below its window
    (vllm_speculative.multi_module_retained, as for every family)."""
    tokens = tokens or depths_in_checkpoint  # vLLM's default: n_predict
    depths = min(depths_in_checkpoint, tokens)

    def is_local(layer: LayerSpec) -> bool:
        return any(c.kind == "attention" and c.policy.window_tokens is not None for c in layer.caches)

    last = {kind: next((layer for layer in reversed(model.layers) if is_local(layer) == kind), None)
            for kind in (True, False)}
    local_ids = set(model.mtp_local_layers)
    layers = []
    for depth in range(depths):
        template = last[depth in local_ids]
        if template is None:
            kind = "sliding" if depth in local_ids else "full"
            raise UsageError(f"--engine vllm: {model.name}'s MTP depth {depth} has {kind} attention, but the target "
                             f"has no {kind} layer whose shape kvplan could give it", "plan without the draft")
        layers.append(template)
    notes = [f"speculative decoding (mtp): {depths} Inkling MTP depth layer(s) (min(mtp_config."
             f"num_nextn_predict_layers {depths_in_checkpoint}, num_speculative_tokens {tokens})), each with a conv "
             "state and K/V of a "
             + ("sliding or full layer by mtp_config.local_layer_ids" if local_ids & set(range(depths))
                else "full layer (none in mtp_config.local_layer_ids)"),
             "the pool leaves out the slots a decoding request allocates ahead for its draft tokens (allocate_slots: "
             "the drafts and as many lookahead slots), as vLLM's pool planner does; --emit vllm's --max-num-seqs "
             "counts them"]
    return replace(model, layers=model.layers + tuple(layers)), notes


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
