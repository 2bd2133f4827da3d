"""model_types that vLLM 0.34 reads with config classes of its own (vllm/transformers_utils/configs/*.py,
vllm/models/*/configs.py, registered in transformers_utils/config.py _CONFIG_REGISTRY) and that no other
kvplan module covers: read exactly where vLLM generates from them, refused by name where it does not. The same
classes are in vLLM 0.33.

Read:
- Fun-Audio-Chat (funaudiochat; FunAudioChatForConditionalGeneration): configs/funaudiochat.py
  FunAudioChatConfig builds text_config as CONFIG_MAPPING[its model_type] (qwen2 when it names none; Qwen2Config()
  when the file has none), and funaudiochat.py builds it with init_vllm_registered_model(architectures=
  ["Qwen3ForCausalLM"]): the text model is the only cache; the continuous (Whisper-style) and discrete audio
  encoders run once per audio item and keep none.
- Falcon's original layout (RefinedWebModel, RefinedWeb): registry aliases for configs/falcon.py RWConfig, whose
  defaults and falcon-40b hack differ from transformers' FalconConfig (falcon-40b's RefinedWeb file names no
  new_decoder_architecture: read as falcon, 1 KV head instead of 8).
- Kimi K3.1 (kimi_k31): an alias vLLM 0.34 adds to _CONFIG_REGISTRY for KimiK3Config, read as kimi_k3 (one with a
  dsa_config, its sparse attention, is refused: configs/vllm34_text.py).
- Inkling's own layout (inkling_model, InklingForCausalLM; also as the text_config of inkling_mm_model, which the
  public checkpoints write): models/inkling/configs.py InklingModelConfig and nvidia/model.py (amd/model.py is the
  same): local_layer_ids are the sliding layers (absent: none, every layer full; layer_types is not read), each
  layer keeps K/V of its heads (swa_* on local layers, which default to the full layers' values) and four short
  convolutions (K, V and the attention- and MLP-output streams, sconv_kernel_size, else conv_kernel_size, else 4).

Refused: the three ColQwen3 retrieval types (pooling models), sub-configs no checkpoint uses as its top-level
model_type (mimovl, moondream3_text), UltraBERT (an encoder) and the dashed spelling of Unlimited-OCR.
Vision and audio sub-configs (funaudiochat_audio_encoder, inkling_audio_model, inkling_vision_model,
moondream3_vision, ...) are never a checkpoint's top-level model_type and need nothing here.
"""

from __future__ import annotations

from . import kinds as K
from .attention import falcon_kv_heads
from .family import Family
from .fields import Fields
from .hybrid import inkling_mtp, inkling_short_convs
from .param_parts import moe_stack
from .params_dense import falcon
from .vl_wrappers import nested_only

# vLLM 0.34 models/inkling/configs.py InklingModelConfig.__init__ defaults (a field it derives from another is
# derived in the functions below: head_dim, the swa_* sizes, the kernel, the padded vocabulary)
INKLING_MODEL_DEFAULTS = {"vocab_size": 201024, "hidden_size": 1536, "intermediate_size": 768,
                          "num_hidden_layers": 16, "num_attention_heads": 12, "num_key_value_heads": 4,
                          "d_rel": 16, "rel_extent": 1024, "sliding_window_size": 512, "dense_mlp_idx": 0,
                          "n_routed_experts": 0, "n_shared_experts": 0, "num_experts_per_tok": 1}


def _inkling_head_dim(f: Fields) -> int:
    """head_dim, else hidden_size // num_attention_heads (InklingModelConfig)."""
    return f.int("head_dim", default=f.int("hidden_size") // f.int("num_attention_heads"))


def inkling_model_sizes(f: Fields, local: bool) -> tuple[int, int, int]:
    """(attention heads, KV heads, head width) of a full or a local layer; the swa_* sizes default to the full
    layers' (InklingModelConfig: swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim None -> the
    full ones)."""
    heads, kv, head_dim = f.int("num_attention_heads"), f.int("num_key_value_heads"), _inkling_head_dim(f)
    if not local:
        return heads, kv, head_dim
    return (f.int("swa_num_attention_heads", default=heads), f.int("swa_num_key_value_heads", default=kv),
            f.int("swa_head_dim", default=head_dim))


def _kernel(f: Fields) -> int:
    """sconv_kernel_size, else the transformers name conv_kernel_size, else 4 (InklingModelConfig)."""
    return f.int("sconv_kernel_size", default=f.int("conv_kernel_size", default=4))


def _local_ids(f: Fields, n: int) -> set[int]:
    return set(f.int_list("local_layer_ids", minimum=0, maximum=n - 1) or ())


def inkling_model_kinds(f: Fields, n: int, *_ignored) -> list[str]:
    """vLLM 0.34 nvidia/model.py InklingModel: layer i is local (sliding) iff i is in local_layer_ids (default
    []: every layer full); layer_types is not read, so a config's layer_types is overridden (as refine)."""
    local = _local_ids(f, n)
    return [K.HYBRID_SLIDING if i in local else K.HYBRID for i in range(n)]


def inkling_model_dims(f: Fields) -> tuple[int, int, int, int]:
    heads, kv, head_dim = inkling_model_sizes(f, False)
    return heads, kv, head_dim, head_dim  # the K/V cache is head_dim wide for both (v_head_dim is not cached)


def inkling_model_layer(f: Fields, index: int, kind: str) -> dict:
    if kind != K.HYBRID_SLIDING:
        return {}
    _, kv, head_dim = inkling_model_sizes(f, True)
    return {"num_key_value_heads": kv, "head_dim": head_dim}


def inkling_model_state(f: Fields, kind: str):
    """nvidia/sconv_swa_attn.py InklingConvState: one per layer, the layer's KV heads x head width for the K and
    V streams and hidden_size for the two output streams (vLLM pages it as a sliding window of the kernel's
    tokens, the packed head width padded to a power of two; kvplan keeps kernel - 1 columns, as for every
    short conv)."""
    _, kv, head_dim = inkling_model_sizes(f, kind == K.HYBRID_SLIDING)
    return inkling_short_convs(f, kv, head_dim, _kernel(f))


def inkling_model_widths(f: Fields) -> tuple[int, int]:
    """(an expert's intermediate width, the dense MLP's): intermediate_size and dense_intermediate_size (else
    intermediate_size); a checkpoint in transformers' naming (moe_intermediate_size with intermediate_size) is
    converted as InklingModelConfig converts it (the dense width intermediate_size, the experts' moe_intermediate_size)."""
    inter = f.int("intermediate_size")
    dense_inter = f.opt_int("dense_intermediate_size")
    moe_inter = f.opt_int("moe_intermediate_size")
    if moe_inter is not None and dense_inter is None:
        dense_inter, inter = inter, moe_inter
    return inter, inter if dense_inter is None else dense_inter


def inkling_model_params(f: Fields, layers: list, dims) -> tuple[int, int]:
    """The text model as vLLM 0.34 builds it (nvidia/model.py _TmlForCausalLMBase._build, InklingModel,
    InklingDecoderLayer; attention.py; mlp.py; moe.py): embed_tokens and an untied lm_head of padded_vocab_size
    rows (else vocab_size), embed_norm when use_embed_norm, the final norm; per layer attn_norm and mlp_norm,
    attn_sconv and mlp_sconv (depthwise over hidden_size, the kernel wide), and
    - InklingAttention with the layer's sizes (swa_* on local layers): qkvr (q, k, v and d_rel per head; a bias
      when q_bias), wo_ud (a bias when o_bias), rel_logits_proj (d_rel x rel_extent, sliding_window_size on
      local layers), q_norm and k_norm (head_dim), k_sconv and v_sconv (depthwise over KV heads x head_dim);
    - layer i < dense_mlp_idx: InklingDenseMLP (gate_up and down of dense_intermediate_size, else
      intermediate_size), with a global_scale when use_global_scale; else InklingMoE: the gate over routed +
      shared experts (the checkpoint's rows; vLLM pads them to a multiple of 8 on the GPU), its global_scale
      and a bias over the routed experts when use_global_scale / use_gate_bias, the routed experts and the
      n_shared_experts sink experts (gate, up, down of intermediate_size). A checkpoint in transformers' naming
      (moe_intermediate_size with intermediate_size) is converted as InklingModelConfig converts it."""
    hidden, kernel, d_rel = f.int("hidden_size"), _kernel(f), f.int("d_rel")
    n = len(layers)
    local = _local_ids(f, max(n, f.int("num_hidden_layers")))
    inter, dense_inter = inkling_model_widths(f)

    def attention(is_local: bool) -> int:
        heads, kv, head_dim = inkling_model_sizes(f, is_local)
        qkvr = heads * head_dim + 2 * kv * head_dim + d_rel * heads
        extent = f.int("sliding_window_size") if is_local else f.int("rel_extent")
        return (hidden * qkvr + (qkvr if f.flag("q_bias") else 0) + heads * head_dim * hidden
                + (hidden if f.flag("o_bias") else 0) + d_rel * extent + 2 * head_dim + 2 * kv * head_dim * kernel)

    routed, shared = f.int("n_routed_experts", minimum=0), f.int("n_shared_experts", minimum=0)
    scale = 1 if f.flag("use_global_scale") else 0
    per_expert = 3 * hidden * inter
    moe = ((routed + shared) * hidden + scale + (routed if f.flag("use_gate_bias") else 0)
           + (routed + shared) * per_expert)
    dense = 3 * hidden * dense_inter + scale
    vocab = f.int("padded_vocab_size", default=f.int("vocab_size"))
    ends = 2 * vocab * hidden + hidden + (hidden if f.flag("use_embed_norm") else 0)
    bases = [attention(i in local) + 2 * hidden + 2 * hidden * kernel for i in range(n)]
    kinds = ["dense" if i < f.int("dense_mlp_idx", minimum=0) else "sparse" for i in range(n)]
    idle = max(routed - f.int("num_experts_per_tok"), 0) * per_expert
    return moe_stack(ends, bases, kinds, moe, dense, idle)


# vLLM 0.34 transformers_utils/configs/falcon.py RWConfig.__init__ defaults (tiiuae/falcon-7b / falcon-40b's original
# remote-code config, registered for model_types RefinedWebModel and RefinedWeb)
RW_DEFAULTS = {"vocab_size": 250880, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8}
RW_NAMES = {"num_hidden_layers": ("n_layer",), "num_attention_heads": ("n_head",), "hidden_size": ("n_embed",)}


def rw_fields(f: Fields) -> Fields:
    """The fields as RWConfig fills them, for the falcon rules (falcon.py FalconAttention reads the same names):
    n_head_kv None -> 1; parallel_attn False and multi_query True by default; new_decoder_architecture forced true
    when hidden_size is 8192 (RWConfig's falcon-40b hack, whatever the file says)."""
    raw = dict(f.raw)
    hidden = f.int("hidden_size")
    raw["new_decoder_architecture"] = f.flag("new_decoder_architecture") or hidden == 8192
    if f.get("num_kv_heads", "n_head_kv") is None:
        raw["n_head_kv"] = 1
    raw.setdefault("parallel_attn", False)
    raw.setdefault("multi_query", True)
    return Fields(raw, f.source, f.defaults, f.aliases, f.model_type)


ROWS: list[Family] = [
    Family(("RefinedWebModel", "RefinedWeb"), kinds=frozenset({K.FULL}), aliases=RW_NAMES, defaults=RW_DEFAULTS,
           kv_rule=lambda f, heads: falcon_kv_heads(rw_fields(f), heads),
           params=lambda f, layers, dims: falcon(rw_fields(f), layers, dims),
           rules=("Falcon's original remote-code layout (tiiuae/falcon-7b: RefinedWebModel, falcon-40b: RefinedWeb), "
                  "read as vLLM 0.34 reads it with configs/falcon.py RWConfig and builds falcon.py FalconAttention: "
                  "K/V of n_head_kv heads (absent: 1) with new_decoder_architecture (forced on at hidden_size "
                  "8192), else one head with multi_query (the default), else n_head; head width hidden_size / "
                  "n_head, every layer, no window; parameters: falcon.py's modules (vLLM 0.29 and later no longer "
                  "register RWForCausalLM: --engine vllm says so)",)),
    # vLLM 0.34 transformers_utils/config.py _CONFIG_REGISTRY: kimi_k31="KimiK3Config" (new in 0.34), the class
    # of kimi_k3 (configs/kimi_k3.py); registry.py serves the same KimiK3ForConditionalGeneration. A K3.1 text
    # model with DeepSeek sparse attention (dsa_config) adds indexer keys packed beside the MLA pages, which the
    # kimi_linear row refuses (configs/vllm34_text.py KIMI_DSA_REFUSED); without it the layout is K3's
    Family(("kimi_k31",), text="kimi_linear",
           rules=("Kimi K3.1 (vLLM 0.34 reads model_type kimi_k31 with KimiK3Config, Kimi K3's class): as kimi_k3, "
                  "its text model (kimi_linear) in text_config; one with a dsa_config (sparse attention on the "
                  "dsa_layers) is refused",)),
    Family(("funaudiochat",), text="qwen2", text_rule=nested_only("text_config", "funaudiochat"),
           rules=("Fun-Audio-Chat (vLLM 0.34 configs/funaudiochat.py FunAudioChatConfig): text_config read by its "
                  "model_type (qwen2 when it names none; the checkpoints' is qwen3), which funaudiochat.py builds as "
                  "Qwen3ForCausalLM: K/V of num_key_value_heads x head_dim (else hidden_size / heads) on every "
                  "layer, the only cache (the continuous and discrete audio encoders keep none); a file without "
                  "text_config is refused (the class would build Qwen2Config's defaults); parameters: the text "
                  "model as its model_type's family counts it (a qwen2 text_config is built with Qwen3's q/k norms "
                  "and no q/k/v biases, which that count does not follow), audio encoders not counted",)),
    Family(("inkling_model",), kinds=frozenset({K.HYBRID, K.HYBRID_SLIDING}), defaults=INKLING_MODEL_DEFAULTS,
           dims=inkling_model_dims, derive=inkling_model_kinds, refine=lambda f, kinds: inkling_model_kinds(f, len(kinds)),
           window=lambda f: f.int("sliding_window_size"), per_layer=inkling_model_layer,
           kind_state=inkling_model_state, params=inkling_model_params, mtp=inkling_mtp,
           rules=("Inkling as vLLM 0.34 reads it (models/inkling/configs.py InklingModelConfig, nvidia/model.py "
                  "InklingForCausalLM; the text_config of the public inkling_mm_model checkpoints): layers in "
                  "local_layer_ids keep K/V of swa_num_key_value_heads x swa_head_dim over sliding_window_size "
                  "(512) tokens, the others (every layer when local_layer_ids is absent; layer_types is not read) "
                  "K/V of num_key_value_heads (4) x head_dim (else hidden_size / heads); the swa_* sizes default "
                  "to the full ones; every layer also keeps four short-conv states (K, V and twice hidden_size), "
                  "sconv_kernel_size (else conv_kernel_size, else 4) - 1 columns each",)),
]

_POOLING = ("{name} (vLLM 0.34 configs/colqwen3.py {cls}, a Qwen3VLConfig; registry.py runs {arch} as colqwen3.py "
            "ColQwen3Model): a multi-vector retrieval model (is_pooling_model, token_embed pooling, default "
            "CLS / ALL), served by the pooling runner: each request is one forward pass over its prompt with no "
            "decode steps, and with CLS pooling vLLM turns off chunked prefill and prefix caching (config/model.py "
            "is_chunked_prefill_supported, is_prefix_caching_supported), so the KV pool holds a request's K/V only "
            "while its single pass runs; there is no per-sequence cache to plan (plan its text_config as "
            "qwen3_vl_text for the memory of one pass)")
_UNLIMITED_OCR = ("Unlimited-OCR: its 'reference_sliding_attention' layers keep the whole prompt plus a ring window "
                  "of generated tokens (vLLM 0.34 rswa_attention.py RSWAAttention, RSWASpec: the prompt plus "
                  "rswa_window tokens), a policy kvplan cannot size yet")

REFUSED: dict[str, str] = {
    "colqwen3": _POOLING.format(name="ColQwen3 (TomoroAI tomoro-colqwen3-embed)", cls="ColQwen3Config",
                                arch="ColQwen3"),
    "ops_colqwen3": _POOLING.format(name="Ops-ColQwen3 (OpenSearch-AI Ops-Colqwen3)", cls="OpsColQwen3Config",
                                    arch="OpsColQwen3Model"),
    "qwen3_vl_nemotron_embed": _POOLING.format(name="Nemotron ColEmbed VL (nvidia nemotron-colembed-vl)",
                                               cls="Qwen3VLNemotronEmbedConfig", arch="Qwen3VLNemotronEmbedModel"),
    "mimovl": ("MiMo-V2-Omni's vision encoder config (vLLM 0.34 configs/mimo_v2_omni.py Mimo_VLVisionConfig, "
               "base_config_key vision_config, read by mimo_v2_omni.py MiMoV2OmniForCausalLM from the checkpoint's "
               "vision_config), not a model: vLLM does not load it as a top-level config; plan the checkpoint's "
               "own config.json (model_type mimo_v2)"),
    "moondream3_text": ("Moondream 3's text sub-config (vLLM 0.34 configs/moondream3.py Moondream3TextConfig, built by "
                        "Moondream3Config from config.text), not a model vLLM loads on its own (it is not in "
                        "_CONFIG_REGISTRY); plan the checkpoint's config.json (model_type moondream3)"),
    "ultrabert": ("UltraBERT, a bidirectional encoder (transformers 5.25 modeling_ultrabert.py: is_causal False; "
                  "masked-LM and classification heads); vLLM 0.34 builds it only as the text tower of ColUltraVBERT "
                  "(configs/colultravbert.py UltraBertConfig inside ColUltraVBertConfig, a pooling retrieval "
                  "model); nobody serves it with a KV cache"),
    # the public checkpoints (baidu/Unlimited-OCR, Unlimited-OCR-2) write the dashed spelling, which vLLM 0.34's
    # UnlimitedOCRConfig registers beside transformers 5.25's unlimited_ocr; unlimited_ocr_text is 5.25's text model
    "unlimited-ocr": _UNLIMITED_OCR,
    "unlimited_ocr": _UNLIMITED_OCR,
    "unlimited_ocr_text": _UNLIMITED_OCR,
}
