"""Text and image-text architectures new in vLLM 0.34.0's registry, as vLLM 0.34 serves them.

- Ricursive / Ripple (RicursiveForCausalLM, model_type ricursive): read exactly. vLLM 0.34 registers its own config
  class (vllm/transformers_utils/configs/ricursive.py RicursiveConfig) and model (model_executor/models/ricursive.py):
  K/V of num_key_value_heads x head_dim on every layer; a "sliding_attention" layer keeps sliding_window tokens
  (per_layer_sliding_window, RoPE), a "full_attention" layer (NoPE) every token; without layer_types every fifth
  layer (i % 5 == 4) is full. Parameters are counted as ricursive.py builds them.
- Mistral Large 4 from its Mistral-format params.json (MistralLarge4ForCausalLM; configs/mistral_params.py adapts it
  to model_type mistral_large_4 as vLLM 0.34 does): read exactly as vLLM 0.34's models/mistral (common/layer_spec.py
  get_layer_specs, nvidia/attention.py MistralMLAAttention, nvidia/indexer.py MistralIndexer) keeps it: one MLA
  latent of kv_lora_rank + qk_rope_head_dim per token on every layer that owns one, NoPE layers included (they
  write a zero rope key into the same 576-wide layout); a layer whose kv_source_layers entry names an earlier layer
  keeps no latent (kv_sharing_target_layer_name); layers whose index_sharing is "full" add the DSA indexer's keys
  (index_head_dim fp8 values + one fp32 scale per 128, DeepSeek-V3.2's layout). The Hugging Face form
  (transformers 5.25 mistral_large4_text) is read by its own row, as transformers lays it out (NoPE layers without
  the rope key); vLLM 0.34 registers no class for it (MistralLarge4ForConditionalGeneration).
- Kimi K3.1's sparse attention (KimiK31ForConditionalGeneration; model_type kimi_k31 is read as kimi_k3 by
  configs/vllm_own.py): a text model (kimi_linear) with a dsa_config is refused (KIMI_DSA_REFUSED, on the kimi_linear
  row). vLLM 0.34 (transformers_utils/configs/kimi_linear.py KimiLinearDSAConfig, models/kimi_k3) puts DeepSeek
  sparse attention on the dsa_layers: an MLA latent plus indexer keys (index_head_dim fp8 values and one 4-byte
  scale per token, or MXFP4 on request), packed beside the MLA pages into block rows sized by the KDA states
  (models/kimi_k3/common/dsa_cache.py packed_dsa_block_size), which kvplan does not size yet.
- Unlimited-OCR-2 (UnlimitedOCR2TextForCausalLM): refused by architecture, as Unlimited-OCR is by model_type (every
  spelling: configs/vllm_own.py and families.py).
- ColUltraVBERT (UltraVBertModel, ColUltraVBertForRetrieval): a bidirectional retrieval encoder, refused by
  architecture.
"""

from __future__ import annotations

from ..core.layers import LayerSpec
from ..errors import ConfigError
from . import kinds as K
from .family import Family
from .fields import Fields
from .latent import indexer_cache, latent_cache
from .param_parts import embeddings, gated_mlp

# RicursiveConfig.__init__ defaults (vLLM 0.34 transformers_utils/configs/ricursive.py): the Ripple-65B shape
RICURSIVE_DEFAULTS = {
    "vocab_size": 100352, "hidden_size": 5120, "intermediate_size": 40960, "num_hidden_layers": 80,
    "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 2097152,
    "sliding_window": 1024, "tie_word_embeddings": False, "use_gated_attention": True, "use_valres": False,
}


def ricursive_kinds(f: Fields, n: int) -> list[str]:
    """RicursiveConfig without layer_types: full_attention where i % 5 == 4, sliding_attention elsewhere."""
    return [K.FULL if i % 5 == 4 else K.SLIDING for i in range(n)]


def ricursive_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """RicursiveForCausalLM (vLLM 0.34 ricursive.py): per layer qkg_proj (hidden -> q, k and, with
    use_gated_attention, a gate as wide as q), v_proj, o_proj, q_norm and k_norm of head_dim, value_res_lambda (one
    value, with use_valres), a SiLU-gated MLP, four RMSNorms (input, post-attention, pre- and post-feedforward);
    embed_tokens, the final norm and lm_head unless tie_word_embeddings. No biases."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    q, kv_width = heads * head_dim, kv * head_dim
    gate = q if f.flag("use_gated_attention", default=True) else 0
    attn = hidden * (q + kv_width + gate) + hidden * kv_width + q * hidden + 2 * head_dim
    attn += 1 if f.flag("use_valres", default=False) else 0
    layer = attn + gated_mlp(hidden, f.int("intermediate_size", maximum=10**8)) + 4 * hidden
    total = embeddings(f, hidden, tied_default=False) + hidden + len(layers) * layer
    return total, total


def large4_kinds(f: Fields, kinds: list[str]) -> list[str]:
    """vLLM 0.34 get_layer_specs: with index_topk set every layer runs sparse MLA, and a layer whose index_sharing
    entry is "full" (absent: every layer) has its own indexer; without index_topk no layer has one."""
    n = len(kinds)
    if f.get("index_topk") is None:
        return [K.FULL] * n
    sharing = f.list("index_sharing", n)
    if sharing is None:
        return [K.INDEXED] * n
    if set(sharing) - {"full", "shared"}:
        raise ConfigError(f"{f.source}: index_sharing entries must be 'full' or 'shared', got {sorted(set(sharing))} "
                          f"(model_type {f.model_type!r})", "fix the config's index_sharing")
    return [K.INDEXED if t == "full" else K.FULL for t in sharing]


def large4_layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    """The latent (NoPE layers too) and indexer caches of each layer; a KV-sharing layer reads its source's latent.
    A sharing layer with an indexer of its own (vLLM allows it) is refused: kvplan cannot describe a layer that
    reads another's latent and stores index keys."""
    sources = f.int_list("kv_source_layers", n, minimum=0, maximum=n - 1) or list(range(n))
    latent = latent_cache(f)
    indexed = LayerSpec(caches=(latent, indexer_cache(f)))
    plain = LayerSpec(caches=(latent,))
    out = []
    for i, (kind, src) in enumerate(zip(kinds, sources)):
        if src == i:
            out.append(indexed if kind == K.INDEXED else plain)
            continue
        if src > i or sources[src] != src:
            raise ConfigError(f"{f.source}: kv_source_layers[{i}] is {src}, not an earlier layer that keeps its own "
                              f"latent (model_type {f.model_type!r})", "fix the config's kv_source_layers")
        if kind == K.INDEXED:
            raise ConfigError(f"{f.source}: layer {i} shares layer {src}'s latent cache but runs an indexer of its "
                              f"own (index_sharing 'full'), which kvplan cannot describe yet (model_type "
                              f"{f.model_type!r})", "this layer-sharing form is not supported yet")
        out.append(LayerSpec(caches=(latent,), shares_cache_of=src))
    return out


def large4_notes(f: Fields) -> tuple[str, ...]:
    """vLLM 0.34 model_executor/models/config.py MistralLarge4ForCausalLM.verify_and_update_config: with
    --kv-cache-dtype auto and the checkpoint's dsa.fp8_kv_cache, the latent is kept as fp8_ds_mla (fp8 on ROCm)."""
    if not f.flag("fp8_kv_cache", default=False):
        return ()
    return ("the checkpoint sets dsa.fp8_kv_cache: vLLM 0.34 keeps the latent cache as fp8_ds_mla (FP8 on ROCm) "
            "unless --kv-cache-dtype bfloat16 is given (--engine vllm plans it so); kvplan's own plan keeps the "
            "model's dtype unless --kv-dtype fp8",)


ROWS: list[Family] = [
    Family(("ricursive",), kinds=frozenset({K.FULL, K.SLIDING}), defaults=RICURSIVE_DEFAULTS, derive=ricursive_kinds,
           params=ricursive_params,
           rules=("vLLM 0.34 ricursive.py RicursiveAttention: K/V of num_key_value_heads x head_dim on every layer; "
                  "layer_types sliding_attention keep sliding_window tokens (1,024 by default), full_attention (NoPE) "
                  "every token; without layer_types full where i % 5 == 4 (RicursiveConfig)",)),
    Family(("mistral_large_4",), kinds=frozenset({K.INDEXED, K.FULL}), attention="latent",
           derive=lambda f, n: [K.INDEXED] * n, refine=large4_kinds, layers=large4_layers, notes=large4_notes,
           rules=("Mistral Large 4 as vLLM 0.34 adapts its params.json (models/mistral): an MLA latent of "
                  "kv_lora_rank + qk_rope_head_dim on every layer that owns one (NoPE layers too); a layer whose "
                  "kv_source_layers entry names an earlier layer reads that latent; index_sharing 'full' layers "
                  "add DSA indexer keys (index_head_dim fp8 + fp32 scales); parameters not counted",)),
]

KIMI_DSA_REFUSED = (
    "Kimi K3.1's DeepSeek sparse attention: its full-attention layers keep an MLA latent plus indexer keys "
    "(index_head_dim fp8 values and one 4-byte scale per token, or MXFP4 on request), which vLLM 0.34 packs beside "
    "the MLA pages in block rows sized by the KDA states (models/kimi_k3/common/dsa_cache.py)")


REFUSED_ARCHITECTURES: dict[str, str] = {
    "UnlimitedOCR2TextForCausalLM": (
        "Unlimited-OCR-2's text model (vLLM 0.34 unlimited_ocr.py UnlimitedOCR2DecoderLayer, "
        "layers/dash_attention.py DASHAttention): K/V of num_key_value_heads / TP + 1 heads of hidden_size / heads "
        "per TP rank (one shared router head per rank) on every layer, kept as Reference Sliding Window Attention "
        "(the whole prompt plus a ring window of rswa_window generated tokens, 128 by default) when rswa_window is "
        "set; kvplan sizes neither the per-rank extra head nor the prompt-plus-ring window yet"),
    **dict.fromkeys(("UltraVBertModel", "ColUltraVBertForRetrieval"), (
        "ColUltraVBERT, a retrieval encoder (vLLM 0.34 colultravbert.py: bidirectional EncoderOnlyAttention over "
        "text and image tokens, pooled into per-token embeddings): it keeps no KV cache across decode steps")),
}
