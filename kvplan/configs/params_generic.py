"""The generic counters most family records use: count_params (attention decoders: Llama-like, their MoE
variants, Gemma, Phi-3, gpt-oss) and count_latent_params (DeepSeek-V2/V3 MLA with dense first layers and routed +
shared experts), with the per-model-type rules they read (which types bias q/k/v, carry q/k norms, bias the MLP,
which layers are MoE). Counts follow the module shapes of the transformers implementations (weights, biases and
norms; transformers 5.25 and vLLM 0.34 cited at each rule). attention_decoder and latent are the entry points the
family records name: (fields, layers, dims) -> (total, active per token).
"""

from __future__ import annotations

from ..errors import ConfigError
from .fields import Fields
from .param_embeddings import _vocab_embed
from .param_parts import gated_mlp, mlp_layer_types


def attention_decoder(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim, _ = dims
    return count_params(f, len(layers), heads, kv, head_dim)


def latent(f: Fields, layers: list, dims) -> tuple[int, int]:
    return count_latent_params(f, len(layers))


def gpt_oss_expert_weights(f: Fields, num_layers: int) -> int:
    """gpt-oss's routed experts' weight matrices (gate_up and down, biases apart): what MXFP4 stores."""
    return num_layers * f.int("num_local_experts") * 3 * f.int("hidden_size") * f.int("intermediate_size")


def _attention(f: Fields, hidden: int, heads: int, kv: int, head_dim: int) -> int:
    # the text model's type: a flat MiniCPM-V 2.6 / MiniCPM-o 2.6 builds Qwen2 attention (q/k/v biases), a flat
    # MiniCPM-V 4.5 / MiniCPM-o 4.5 / Isaac Qwen3 attention (q/k norms), whatever the wrapper's model_type
    kind = f.text_type
    qkv_bias = f.flag("attention_bias") or kind in _QKV_BIAS_ONLY
    # GLM-4-MoE's, GLM-4's and GLM-4-0414's o_proj has no bias whatever attention_bias says (transformers 5.25
    # modeling_glm4_moe.py Glm4MoeAttention, modeling_glm.py GlmAttention, modeling_glm4.py Glm4Attention:
    # nn.Linear(..., bias=False); vLLM 0.34 glm4_moe.py, glm4.py: RowParallelLinear bias=False)
    o_bias = f.flag("attention_bias") and kind not in _QKV_BIAS_ONLY + GLM4_MOE + GLM_DENSE + GLM_VL
    n = hidden * heads * head_dim + 2 * hidden * kv * head_dim + heads * head_dim * hidden
    if qkv_bias:
        n += heads * head_dim + 2 * kv * head_dim
    if o_bias:
        n += hidden
    if kind in _QK_NORM or (kind in GLM4_MOE and f.flag("use_qk_norm")):
        n += 2 * head_dim  # q_norm and k_norm
    if f.model_type == "minimax_m2":  # MiniMaxM2Attention: q_norm and k_norm over all heads' queries and keys
        n += (heads + kv) * head_dim
    if kind == "olmo3":  # Olmo3Attention: q_norm over heads x head_dim, k_norm over kv heads x head_dim
        n += (heads + kv) * head_dim  # (transformers 5.25 modeling_olmo3.py)
    if kind == "muse_glimmer_text":  # MuseGlimmerTextAttention's output gate: gate_proj hidden -> heads x head_dim
        n += hidden * heads * head_dim  # (transformers 5.25 modeling_muse_glimmer.py; its q/k norms have no weight)
    return n


# the counter's types whose dense MLP biases gate/up/down_proj under mlp_bias (transformers 5.25: LlamaMLP,
# GraniteMLP, GraniteSWAMLP, SmolLM3MLP, HeliumMLP, CwmMLP, HyperCLOVAXMLP, Emu3MLP, GraniteDoclingTextMLP:
# nn.Linear(..., bias=config.mlp_bias); IQuest-Coder and EXAONE 3 build LlamaForCausalLM, ExaoneConfig has
# mlp_bias; vLLM 0.34 llama.py LlamaMLP, granite.py GraniteMLP, hyperclovax.py, exaone.py ExaoneGatedMLP:
# bias=mlp_bias). granite-3b-code-instruct-128k (a llama config with mlp_bias: true) ships
# mlp.{gate,up,down}_proj.bias on all 32 layers.
_MLP_BIAS = ("llama", "granite", "granite_swa", "smollm3", "helium", "cwm", "hyperclovax", "emu3_text_model",
             "granite_docling_text", "iquestcoder", "exaone")


def dense_mlp_bias(f: Fields) -> bool:
    """Whether count_params' dense gated MLP (and weight_tables._gqa's) carries biases: mlp_bias, for the types
    whose MLP reads it."""
    return f.text_type in _MLP_BIAS and f.flag("mlp_bias")


GLM_DENSE = ("glm", "glm4")  # GLM-4-9B-chat-hf (GlmForCausalLM), GLM-4-0414 (Glm4ForCausalLM)


GLM4_MOE = ("glm4_moe", "param2moe",  # Param2 runs transformers' GLM-4-MoE model (Sarvam-MoE: configs/sarvam.py)
            # GLM-4.5V's text model: transformers 5.25 modeling_glm4v_moe.py Glm4vMoeTextDecoderLayer (a dense MLP
            # below first_k_dense_replace), Glm4vMoeTextAttention (o_proj without bias); vLLM 0.34 glm4_1v.py runs
            # it as Glm4MoeForCausalLM
            "glm4v_moe_text")


# q/k/v projections biased, o_proj not (dots_ocr: a flat Qwen2Config, vLLM 0.33 dots_ocr.py runs Qwen2ForCausalLM)
# Kimi-Audio: a flat Qwen2Config, run as Qwen2ForCausalLM (vLLM 0.33 kimi_audio.py)
_QKV_BIAS_ONLY = ("qwen2", "qwen2_moe", "qwen2_5_vl", "qwen2_5_vl_text", "dots_ocr", "qwen2_5_omni_text", "kimi_audio",
                  "moonshot_kimia")


_QK_NORM = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "gemma3n_text", "gemma3n", "qwen3_next",
            "qwen3_vl_text", "qwen3_vl_moe_text", "qwen3_omni_moe_text", "qwen3_asr_text",
            "exaone4")  # per-head RMSNorm on q and k (exaone4: transformers 5.25 modeling_exaone4.py Exaone4Attention)


# Qwen2-VL's text model (a flat qwen2_vl config reads as qwen2_vl_text) is Qwen2's attention (transformers 5.25
# modeling_qwen2_vl.py Qwen2VLAttention: q/k/v bias=True, o_proj bias=False); so is GLM-4.1V's (modeling_glm4v.py
# Glm4vTextAttention)
_QKV_BIAS_ONLY += ("qwen2_vl", "qwen2_vl_text", "glm4v_text")


# GLM-4.1V's and GLM-OCR's text models: four RMSNorms a layer and no o_proj bias, as GLM-4-0414's (transformers 5.25
# modeling_glm4v.py Glm4vTextDecoderLayer, modeling_glm_ocr.py GlmOcrTextDecoderLayer; configs/weight_tables/vl_more.py)
GLM_VL = ("glm4v_text", "glm_ocr_text")


def _moe(f: Fields, hidden: int) -> tuple[int, int]:
    """(total, active) params of one MoE block, or (0, 0) when not MoE."""
    experts = f.int("num_local_experts", "num_experts", "n_routed_experts", default=0, minimum=0)
    if not experts and f.model_type in _DEEPSEEK_MOE and not f.has("n_routed_experts"):
        # a DeepSeek config with no expert count reads two ways: transformers' DeepseekV2Config / V3Config take
        # 64 / 256 routed experts, DeepSeek's own configuration_deepseek.py (trust_remote_code) None, a dense MLP
        raise ConfigError(f"{f.source}: 'n_routed_experts' is not set, and transformers' config class (64 or 256 "
                          f"routed experts) and DeepSeek's remote code (none) read that differently "
                          f"(model_type {f.model_type!r})", "add it (--set-new n_routed_experts=N), or give --weights")
    if not experts:
        return 0, 0
    top_k = f.int("num_experts_per_tok", "experts_per_token", default=2)
    inter = f.int("moe_intermediate_size", "intermediate_size")
    per_expert = 3 * hidden * inter
    router = hidden * experts
    shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
    shared = 0
    if shared_inter:
        shared = 3 * hidden * shared_inter + hidden  # shared expert + its sigmoid gate
    n_shared = f.int("n_shared_experts", default=0, minimum=0)
    if n_shared:
        shared = n_shared * per_expert
    extra = experts if f.model_type in ("deepseek_v3", "deepseek_v32", "kimi_k2", "sarvam_mla", "minimax_m2") + GLM4_MOE else 0  # e_score_correction_bias
    if "topk_method" in f.raw and f.raw["topk_method"] != "noaux_tc":  # vLLM's DeepseekV2MoE builds it for noaux_tc only
        extra = 0  # (Mistral Large 3's adapted params.json says None)
    total = experts * per_expert + router + shared + extra
    active = top_k * per_expert + router + shared + extra
    return total, active


_DEEPSEEK_MOE = ("deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2")


def _is_moe_layer(f: Fields, i: int) -> bool:
    mt = f.model_type
    if mt in ("deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "sarvam_mla") + GLM4_MOE:
        k = f.int("first_k_dense_replace", default=0, minimum=0)
        freq = f.int("moe_layer_freq", default=1)
        return i >= k and i % freq == 0
    # Qwen3-VL-MoE's text model reads mlp_only_layers and decoder_sparse_step as Qwen3-MoE does (transformers 5.25
    # modeling_qwen3_vl_moe.py Qwen3VLMoeTextDecoderLayer; vLLM 0.34 qwen3_moe.py Qwen3MoeDecoderLayer, which
    # qwen3_vl_moe.py builds), and so does Qwen3-Omni's thinker (modeling_qwen3_omni_moe.py
    # Qwen3OmniMoeThinkerTextDecoderLayer; qwen3_omni_moe_thinker.py builds Qwen3MoeLLMForCausalLM)
    if mt in ("qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_vl_moe_text", "qwen3_omni_moe_text"):
        if i in (f.int_list("mlp_only_layers", minimum=0, maximum=10**6) or []):
            return False
        step = f.int("decoder_sparse_step", default=1)
        return (i + 1) % step == 0
    if mt == "mistral4":  # transformers 5.25 modeling_mistral4.py Mistral4DecoderLayer: a MoE from
        return i >= f.int("first_k_dense_replace", default=0, minimum=0)  # first_k_dense_replace on (no freq)
    # DeepSeek-OCR-2's text model in transformers 5.25's format: DeepseekOcr2TextDecoderLayer builds the MoE where
    # mlp_layer_types says "sparse" (modeling_deepseek_ocr2.py; the config class sets no default)
    if mt == "deepseek_ocr2_text" and f.has("mlp_layer_types"):
        return mlp_layer_types(f, i + 1, lambda _: "sparse")[i] == "sparse"
    if mt == "jamba":
        period = f.int("expert_layer_period", default=2)
        offset = f.int("expert_layer_offset", default=1, minimum=0)
        return i % period == offset
    return True


def count_params(f: Fields, num_layers: int, heads: int, kv: int, head_dim: int) -> tuple[int, int]:
    """Attention decoders (llama-like, MoE variants, gemma, phi3, gpt-oss)."""
    mt = f.model_type
    hidden = f.int("hidden_size", "n_embd")
    if isinstance(f.get("intermediate_size", "n_inner"), list):  # one width per layer (Gemma 3n)
        inters = f.int_list("intermediate_size", num_layers, minimum=1, maximum=10**8)
    else:
        inters = [f.int("intermediate_size", "n_inner", default=4 * hidden, maximum=10**8)] * num_layers
    attn = _attention(f, hidden, heads, kv, head_dim)
    # Gemma 2 / 3: input, post_attention, pre_ and post_feedforward_layernorm; GLM-4-0414 (transformers 5.25
    # modeling_glm4.py Glm4DecoderLayer): input, post_attention, post_self_attn and post_mlp_layernorm
    norms = (4 if mt in ("gemma2", "gemma3", "gemma3_text", "glm4", "muse_glimmer_text") + GLM_VL else 2) * hidden
    if mt == "hyperclovax" and f.flag("use_post_norm", default=True):  # transformers 5.25 modeling_hyperclovax.py
        norms += 2 * hidden  # HyperCLOVAXDecoderLayer's post_norm1 / post_norm2
    if mt == "gpt_oss":
        attn += heads  # attention sinks (the q/k/v/o biases come with attention_bias: true)
    total = active = _vocab_embed(f, hidden) + hidden  # embeddings (+ head) and final norm
    for i in range(num_layers):
        moe_total, moe_active = _moe(f, hidden) if _is_moe_layer(f, i) else (0, 0)
        if mt == "gpt_oss" and moe_total:
            experts = f.int("num_local_experts")
            top_k = f.int("num_experts_per_tok", "experts_per_token")
            per_expert = 3 * hidden * int(inters[i]) + 2 * int(inters[i]) + hidden  # gate_up and down, with biases
            moe_total = experts * per_expert + hidden * experts + experts
            moe_active = top_k * per_expert + hidden * experts + experts
        if moe_total:
            total += attn + norms + moe_total
            active += attn + norms + moe_active
        else:
            dense = gated_mlp(hidden, int(inters[i]), dense_mlp_bias(f))
            total += attn + norms + dense
            active += attn + norms + dense
    return total, active


def count_latent_params(f: Fields, num_layers: int) -> tuple[int, int]:
    """DeepSeek-V2/V3 style: MLA projections, dense first layers, routed + shared experts.

    The multi-token-prediction module (num_nextn_predict_layers) is not counted:
    it is not used for ordinary decoding.
    """
    hidden = f.int("hidden_size")
    heads = f.int("num_attention_heads")
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    rank = f.int("kv_lora_rank")
    rope = f.int("qk_rope_head_dim")
    nope = f.int("qk_nope_head_dim")
    v_dim = f.int("v_head_dim")
    q_head = nope + rope
    if q_lora:
        q = hidden * q_lora + q_lora + q_lora * heads * q_head
    else:
        q = hidden * heads * q_head
    attn = q + hidden * (rank + rope) + rank + rank * heads * (nope + v_dim) + heads * v_dim * hidden
    if f.has("index_head_dim"):
        ih, nh = f.int("index_head_dim"), f.int("index_n_heads")
        attn += q_lora * nh * ih + hidden * ih + 2 * ih + hidden * nh  # wq_b, wk, k_norm (w+b), weights_proj
    inter = f.int("intermediate_size")
    total = active = _vocab_embed(f, hidden) + hidden
    for i in range(num_layers):
        base = attn + 2 * hidden
        if _is_moe_layer(f, i):
            t, a = _moe(f, hidden)
        else:
            t = a = gated_mlp(hidden, inter)
        total += base + t
        active += base + a
    return total, active
