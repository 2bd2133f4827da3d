"""Exact parameter counts from the architecture, MoE experts included.

Counts follow the module shapes of the transformers implementations (weights,
biases and norms). They give weight bytes for capacity planning; a safetensors
index, when given, overrides them. Returns (total, active per token).
"""

from __future__ import annotations

import math

from ..core.layers import LayerSpec
from ..errors import ConfigError
from .fields import Fields
from .param_parts import dense_first, embeddings, gated_mlp, mla, mlp_layer_types, moe_stack


# -- entry points named by the family records: (fields, layers, dims) -> (total, active)

def attention_decoder(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim, _ = dims
    return count_params(f, len(layers), heads, kv, head_dim)


def latent(f: Fields, layers: list, dims) -> tuple[int, int]:
    return count_latent_params(f, len(layers))


def hybrid(f: Fields, layers: list, dims) -> tuple[int, int]:
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    return _hybrid_params(f, layers, heads, kv, head_dim)




def bigcode(f: Fields, layers: list, dims) -> tuple[int, int]:
    return _bigcode_params(f, len(layers))


def _vocab_embed(f: Fields, hidden: int) -> int:
    return embeddings(f, hidden, f.model_type in _TIED_BY_DEFAULT, 0)


def embedding_params(f: Fields) -> tuple[int, int]:
    """(token embeddings, an LM head of its own: 0 when tied): the tables a quantized checkpoint keeps in its
    float dtype. Gemma 3n's per-layer input embeddings count with the token embeddings."""
    hidden = f.int("hidden_size", "n_embd")
    vocab = f.int("vocab_size", default=0, minimum=0)
    tied = f.flag("tie_word_embeddings", default=f.model_type in _TIED_BY_DEFAULT)
    embed = vocab * hidden
    if f.has("vocab_size_per_layer_input"):
        embed += (f.int("vocab_size_per_layer_input") * f.int("num_hidden_layers")
                  * f.int("hidden_size_per_layer_input", default=256))
    return embed, 0 if tied else vocab * hidden


def gpt_oss_expert_weights(f: Fields, num_layers: int) -> int:
    """gpt-oss's routed experts' weight matrices (gate_up and down, biases apart): what MXFP4 stores."""
    return num_layers * f.int("num_local_experts") * 3 * f.int("hidden_size") * f.int("intermediate_size")


# the model types whose config class ties the LM head to the embeddings when a config is silent (transformers 5.25
# configuration_*.py: `tie_word_embeddings: bool = True`, e.g. Ernie4_5Config, Cohere2Config, Starcoder2Config,
# Qwen3VLMoeTextConfig; checked for every type kvplan knows by tests/test_tied_defaults.py); save_pretrained leaves
# a value equal to the class default out of config.json, so a silent config means the class default (Mamba2Config's
# is False: Mamba-Codestral states it)
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gpt_bigcode", "mamba",
                    "falcon", "ernie4_5", "gemma4", "gemma4_text",
                    "aya_vision", "biogpt", "bloom", "cohere", "cohere2", "cohere2_moe", "cohere2_vision",
                    "cohere_compass", "cohere_compass_text", "ctrl", "ernie4_5_moe", "ernie4_5_vl_moe",
                    "ernie4_5_vl_moe_text", "falcon_mamba", "gemma4_unified", "gemma4_unified_text", "gpt-sw3", "gpt2",
                    "gpt_neo", "gpt_neox_japanese", "granite_docling", "granite_docling_text", "granite_swa",
                    "hunyuan_vl", "hunyuan_vl_text", "jetmoe", "lfm2", "lfm2_moe", "lfm2_vl", "lfm3", "lfm3_vl",
                    "minicpm3", "modernbert-decoder", "mpt", "opt", "paddleocr_vl", "paddleocr_vl_text", "paligemma",
                    "param2moe", "qwen2_5_omni", "qwen2_5_omni_text", "qwen2_5_omni_thinker", "qwen3_asr",
                    "qwen3_vl_moe", "qwen3_vl_moe_text", "recurrent_gemma", "shieldgemma2", "smollm3", "starcoder2",
                    "vaultgemma", "xglm", "youtu", "zamba", "zamba2", "zaya",
                    # wrappers whose text config ties by default (BLIP-2 and InstructBLIP: OPT; GOT-OCR2, PP-Chart2Table: Qwen2)
                    "blip-2", "fun_asr_nano", "got_ocr2", "instructblip", "instructblipvideo", "kosmos-2", "kosmos-2.5",
                    "kosmos_2_5_text_model", "kosmos_2_text_model", "lara_mini", "pp_chart2table"}




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


def mamba1_block(hidden: int, d_inner: int, d_state: int, d_conv: int, dt_rank: int, jamba: bool) -> int:
    n = hidden * 2 * d_inner  # in_proj
    n += d_inner * d_conv + d_inner  # conv1d with bias
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
                kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
                kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
                kernel = f.int("linear_conv_kernel_dim", default=4)
                key_dim, value_dim = kh * kd, vh * vd
                block += hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * vh
                block += (2 * key_dim + value_dim) * kernel + 2 * vh + vd + value_dim * hidden
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




def _bigcode_params(f: Fields, num_layers: int) -> tuple[int, int]:
    hidden = f.int("n_embd", "hidden_size")
    heads = f.int("n_head", "num_attention_heads")
    inner = f.int("n_inner", default=4 * hidden)
    kv_width = (hidden // heads) * (1 if f.flag("multi_query", default=True) else heads)
    per_layer = hidden * (hidden + 2 * kv_width) + hidden + 2 * kv_width  # c_attn
    per_layer += hidden * hidden + hidden  # c_proj
    per_layer += hidden * inner + inner + inner * hidden + hidden  # mlp
    per_layer += 4 * hidden  # ln_1, ln_2
    n = _vocab_embed(f, hidden) + f.int("n_positions", default=0, minimum=0) * hidden + 2 * hidden
    n += num_layers * per_layer
    return n, n


# -- family counters: each names what its model's layers hold (transformers 5.23 modeling code) ---------------





def _kinds_of(layers: list[LayerSpec]) -> list[str]:
    """'attention', 'state' or 'none' per layer, from what it caches."""
    return ["attention" if layer.caches else "state" if layer.state is not None else "none" for layer in layers]


def _switch(f: Fields, value) -> bool:
    """A fixed flag, or (config field, default) read from the config (attention_bias, mlp_bias)."""
    return f.flag(value[0], default=value[1]) if isinstance(value, tuple) else value


def decoder(*, mlp: str = "gated", qkv_bias=False, o_bias=False, mlp_bias=False,
            norm_bias: bool = True, norms: int = 2, positions: str | None = None, position_offset: int = 0,
            embed_norm: bool = False, head_bias: bool = False, qk_norm_bias: bool | None = None,
            tied: bool = True, inter: tuple[str, ...] = ("intermediate_size",), expansion: str | None = None,
            final_norm: bool = True, layer_extra: int = 0):
    """A dense decoder described by its parts (GPT-2, GPT-J, OPT, BLOOM, MPT, ...).

    mlp 'gated' (three matrices) or 'plain' (up and down); biases on the QKV, output and MLP
    projections (True / False, or a (config field, default) pair); `norms` LayerNorms per layer
    (1 for parallel blocks, 0 for parameterless norms), with bias or weight only, and a final one
    unless final_norm is False; learned `positions` (a field naming their count, plus
    `position_offset`: OPT keeps two more); a LayerNorm on the embeddings (BLOOM); per-head q/k norms
    (with bias: Persimmon; weight only: False); the default of tie_word_embeddings in the family's
    config class; `inter` the MLP width field (default 4 x hidden) or `expansion` a ratio field (MPT);
    `layer_extra` scalars a layer (Apertus' xIELU alphas).
    """
    def count(f: Fields, layers: list, dims) -> tuple[int, int]:
        heads, kv, head_dim, _ = dims
        hidden = f.int("hidden_size")
        width = f.int(*inter, default=None, maximum=10**8) if inter else None
        if width is None:
            width = int(f.number(expansion, default=4)) * hidden if expansion else 4 * hidden
        q_width, kv_width = heads * head_dim, kv * head_dim
        attn = hidden * (q_width + 2 * kv_width) + q_width * hidden
        attn += (q_width + 2 * kv_width if _switch(f, qkv_bias) else 0) + (hidden if _switch(f, o_bias) else 0)
        if qk_norm_bias is not None:
            attn += 2 * head_dim * (2 if qk_norm_bias else 1)
        ffn = (3 if mlp == "gated" else 2) * hidden * width
        if _switch(f, mlp_bias):
            ffn += (2 if mlp == "gated" else 1) * width + hidden
        norm = hidden * (2 if norm_bias else 1)
        per_layer = attn + ffn + norms * norm + layer_extra
        n = embeddings(f, hidden, tied, 0, head_bias=head_bias) + (norm if final_norm else 0) + len(layers) * per_layer
        if positions:
            n += (f.int(positions) + position_offset) * hidden
        if embed_norm:
            n += norm
        return n, n
    return count


def _ffn_moe(hidden: int, experts: int, top_k: int, inter: int, *, matrices: int = 3, router_bias: int = 0,
             shared: int = 0) -> tuple[int, int]:
    """(total, active) of a routed MoE block: experts of `matrices` hidden x inter matrices, a router
    (hidden x experts, plus `router_bias` extra vectors such as e_score_correction_bias), and `shared`
    parameters that every token uses."""
    per_expert = matrices * hidden * inter
    router = hidden * experts + router_bias
    return experts * per_expert + router + shared, top_k * per_expert + router + shared


def _gdn_block(f: Fields, hidden: int) -> int:
    """Gated DeltaNet mixer (Qwen3-Next, Qwen3.5): qkv, z, b, a projections, conv, dt_bias, A_log, gated norm, out."""
    kh, vh = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    kd, vd = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    kernel = f.int("linear_conv_kernel_dim", default=4)
    key_dim, value_dim = kh * kd, vh * vd
    n = hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * vh
    return n + (2 * key_dim + value_dim) * kernel + 2 * vh + vd + value_dim * hidden


def qwen3_5(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Qwen3.5 text model: Gated DeltaNet or gated attention (q_proj doubled for the output gate when
    attn_output_gate, q/k norms), then a dense SwiGLU MLP (qwen3_5_text) or a MoE block with a gated
    shared expert (qwen3_5_moe_text) on every layer. The MTP module and vision tower are not counted."""
    heads, kv, head_dim = dims[:3] if dims else (0, 0, 0)
    hidden = f.int("hidden_size")
    attn = hidden * heads * head_dim * (2 if f.flag("attn_output_gate", default=True) else 1)
    attn += 2 * hidden * kv * head_dim + heads * head_dim * hidden + 2 * head_dim
    experts = f.int("num_experts", default=0, minimum=0)
    if experts:
        shared_inter = f.int("shared_expert_intermediate_size", default=0, minimum=0)
        ffn_t, ffn_a = _ffn_moe(hidden, experts, f.int("num_experts_per_tok"), f.int("moe_intermediate_size"),
                                shared=3 * hidden * shared_inter + hidden if shared_inter else 0)
    else:
        ffn_t = ffn_a = gated_mlp(hidden, f.int("intermediate_size"))
    total = active = embeddings(f, hidden, False, 0) + hidden
    gdn = None
    for kind in _kinds_of(layers):
        if kind == "attention":
            mixer = attn
        else:
            gdn = _gdn_block(f, hidden) if gdn is None else gdn
            mixer = gdn
        total += mixer + 2 * hidden + ffn_t
        active += mixer + 2 * hidden + ffn_a
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


def _attention_plain(hidden: int, heads: int, kv: int, head_dim: int) -> int:
    return hidden * heads * head_dim + 2 * hidden * kv * head_dim + heads * head_dim * hidden


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
    n = hidden * 2 * d_inner + d_inner * d_conv + (d_inner if f.flag("mamba_conv_bias", default=True) else 0)
    n += d_inner * (dt_rank + 2 * d_state) + d_inner * dt_rank + d_inner
    n += d_inner * d_state + d_inner + d_inner * hidden
    return n


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


def dbrx(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DBRX: fused Wqkv and out_proj (no biases), two bias-free LayerNorms, and a MoE of
    ffn_config.moe_num_experts GLU experts (w1, v1, w2 of ffn_hidden_size) with a router."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    ffn = f.sub("ffn_config")
    experts = ffn.int("moe_num_experts", default=4)
    moe = _ffn_moe(hidden, experts, ffn.int("moe_top_k", default=1), ffn.int("ffn_hidden_size", default=3584))
    attn = _attention_plain(hidden, heads, kv, head_dim)
    total = active = embeddings(f, hidden, False, 0) + hidden
    total += len(layers) * (attn + 2 * hidden + moe[0])
    active += len(layers) * (attn + 2 * hidden + moe[1])
    return total, active


def llama4_moe_layers(f: Fields, n: int) -> set[int]:
    """Llama 4's MoE layers: moe_layers, else every interleave_moe_layer_step-th from step - 1."""
    step = f.int("interleave_moe_layer_step", default=1)
    moe_layers = f.int_list("moe_layers", None, maximum=n - 1)
    return set(moe_layers) if moe_layers is not None else set(range(step - 1, n, step))


def llama4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Llama 4 text model: MoE on the layers moe_layers lists (by default every interleave_moe_layer_step-th,
    from step - 1), each a router, num_local_experts experts of intermediate_size and one shared expert of
    the same width; the other layers a dense MLP of intermediate_size_mlp. The qk norm has no weights."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    n = len(layers)
    moe_set = llama4_moe_layers(f, n)
    inter = f.int("intermediate_size", default=8192)
    moe = _ffn_moe(hidden, f.int("num_local_experts", default=16), f.int("num_experts_per_tok", default=1), inter,
                   shared=3 * hidden * inter)
    dense = gated_mlp(hidden, f.int("intermediate_size_mlp", default=16384))
    base = _attention_plain(hidden, heads, kv, head_dim) + 2 * hidden
    total = active = embeddings(f, hidden, False, 0) + hidden
    for i in range(n):
        t, a = moe if i in moe_set else (dense, dense)
        total += base + t
        active += base + a
    return total, active


def _mla(f: Fields, hidden: int, v_dim: int | None = None) -> int:
    """One MLA attention (DeepSeek-V2 layout) with its q_a / kv_a norms."""
    heads = f.int("num_attention_heads")
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    rank = f.int("kv_lora_rank")
    rope, nope = f.int("qk_rope_head_dim"), f.int("qk_nope_head_dim")
    return mla(hidden, heads, q_lora or None, rank, rope, nope, v_dim or f.int("v_head_dim"))






def minimax(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniMax-Text-01 / M1: softmax attention or lightning attention (fused qkv of heads x head_dim,
    an output gate, an RMSNorm over heads x head_dim, out_proj), then a MoE of num_local_experts SwiGLU
    experts with a router on every layer."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    width = heads * head_dim
    softmax = _attention_plain(hidden, heads, kv, head_dim)
    lightning = 3 * hidden * width + width * hidden + hidden * width + width
    moe = _ffn_moe(hidden, f.int("num_local_experts"), f.int("num_experts_per_tok", default=2),
                   f.int("intermediate_size"))
    total = active = embeddings(f, hidden, False, 0) + hidden
    for layer in layers:
        mixer = softmax if layer.state is None else lightning
        total += mixer + 2 * hidden + moe[0]
        active += mixer + 2 * hidden + moe[1]
    return total, active


def lfm2_dense_width(f: Fields) -> int:
    """LFM2's dense MLP width: intermediate_size (or block_ff_dim), which LFM2 (no experts) shrinks to 2/3 and
    rounds up to block_multiple_of when block_auto_adjust_ff_dim; LFM2-MoE's dense layers use it as it is."""
    inter = f.int("intermediate_size", "block_ff_dim", default=12288, maximum=10**8)
    if not f.int("num_experts", default=0, minimum=0) and f.flag("block_auto_adjust_ff_dim", default=True):
        inter = int(2 * inter / 3)
        if f.get("block_ffn_dim_multiplier", default=1.0) is not None:
            inter = int(f.number("block_ffn_dim_multiplier", default=1.0) * inter)
            step = f.int("block_multiple_of", default=256)
            inter = step * ((inter + step - 1) // step)
    return inter


def lfm2(f: Fields, layers: list, dims) -> tuple[int, int]:
    """LFM2 / LFM2-MoE: a short-conv operator (in_proj to 3 x hidden, depthwise conv of conv_L_cache,
    out_proj) or GQA attention with q/k RMSNorms; then a SwiGLU MLP (LFM2: intermediate_size, shrunk to
    2/3 and rounded up to block_multiple_of when block_auto_adjust_ff_dim) or, after num_dense_layers,
    a MoE with an expert_bias; two RMSNorms a layer; embeddings tied by default."""
    heads, kv, head_dim, _ = dims
    hidden = f.int("hidden_size")
    bias = f.flag("conv_bias")
    conv = 3 * hidden * hidden + hidden * f.int("conv_L_cache", default=3) + hidden * hidden
    conv += (3 * hidden + hidden + hidden) if bias else 0
    attn = _attention_plain(hidden, heads, kv, head_dim) + 2 * head_dim
    experts = f.int("num_experts", default=0, minimum=0)
    dense = gated_mlp(hidden, lfm2_dense_width(f))
    first_dense = f.int("num_dense_layers", default=2, minimum=0) if experts else len(layers)
    moe = (_ffn_moe(hidden, experts, f.int("num_experts_per_tok", default=4), f.int("moe_intermediate_size"),
                    router_bias=experts if f.flag("use_expert_bias", default=True) else 0) if experts else None)
    total = active = embeddings(f, hidden, True, 0) + hidden
    for i, layer in enumerate(layers):
        base = (attn if layer.caches else conv) + 2 * hidden
        t, a = (dense, dense) if i < first_dense else moe
        total += base + t
        active += base + a
    return total, active


def gemma3n_fields(f: Fields, n: int) -> tuple[int, list[int], int, int, int, int]:
    """(hidden_size, the n layers' MLP widths (a list or one width), hidden_size_per_layer_input, altup_num_inputs,
    laurel_rank, num_kv_shared_layers) as Gemma 3n's count reads them (its per-module table, weight_tables/wrap.py,
    reads them here too)."""
    if isinstance(f.get("intermediate_size"), list):
        inters = f.int_list("intermediate_size", n, minimum=1, maximum=10**8)
    else:
        inters = [f.int("intermediate_size")] * n
    return (f.int("hidden_size"), inters, f.int("hidden_size_per_layer_input", default=256),
            f.int("altup_num_inputs", default=4), f.int("laurel_rank", default=64),
            f.int("num_kv_shared_layers", default=0, minimum=0, maximum=n))


def gemma3n(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Gemma 3n text model: besides attention (q/k norms; the last num_kv_shared_layers have no k/v
    projections) and a GeGLU MLP of the layer's width, each layer holds LAuReL (a rank-laurel_rank
    residual), AltUp (coefficients, router, norms) and a per-layer-input gate and projection; the model
    holds a second embedding table of hidden_size_per_layer_input per layer (vocab_size_per_layer_input
    rows), its projection from the hidden state, and the AltUp (un)embedding projections."""
    heads, kv, head_dim, _ = dims
    n = len(layers)
    hidden, inters, per_input, altup, rank, shared = gemma3n_fields(f, n)
    total = embeddings(f, hidden, True, 0) + hidden
    total += f.int("vocab_size_per_layer_input", default=262144) * n * per_input + hidden * n * per_input + per_input
    total += 2 * (altup - 1) * hidden * hidden
    for i in range(n):
        layer = hidden * heads * head_dim + head_dim + heads * head_dim * hidden
        if i < n - shared:
            layer += 2 * hidden * kv * head_dim + head_dim
        layer += 3 * hidden * int(inters[i]) + 4 * hidden
        layer += 2 * hidden * rank + hidden
        layer += hidden + altup * altup + altup ** 3 + hidden * altup + hidden
        layer += 2 * hidden * per_input + hidden
        total += layer
    return total, total


def minicpm3(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniCPM3: MLA projections (v_head_dim defaults to hidden / heads), a SwiGLU MLP and two norms a
    layer; embeddings tied by default. (The cache is read decompressed, as vLLM keeps it; the weights
    are the compressed projections.) Biases as transformers 5.25 modeling_minicpm3.py builds them:
    attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj, mlp_bias on the three MLP projections."""
    hidden = f.int("hidden_size")
    heads, inter = f.int("num_attention_heads"), f.int("intermediate_size")
    v_dim = f.int("v_head_dim", default=hidden // heads)
    q_lora = f.int("q_lora_rank", default=0, minimum=0)
    attention = mla(hidden, heads, q_lora or None, f.int("kv_lora_rank"), f.int("qk_rope_head_dim"),
                    f.int("qk_nope_head_dim"), v_dim, f.flag("attention_bias"))
    mlp_bias = 2 * inter + hidden if f.flag("mlp_bias") else 0
    per_layer = attention + gated_mlp(hidden, inter) + mlp_bias + 2 * hidden
    n = embeddings(f, hidden, True, 0) + hidden + len(layers) * per_layer
    return n, n


def deepseek_v4_hashed(f: Fields, n: int) -> list[bool]:
    """Whether each layer is routed by token hash (DeepseekV4HashRouter: no e_score_correction_bias):
    mlp_layer_types' 'hash_moe' entries, else the first num_hash_layers (default 3), as transformers 5.25
    configuration_deepseek_v4.py __post_init__ reads them."""
    if f.has("mlp_layer_types"):
        kinds = f.list("mlp_layer_types")
        return [i < len(kinds) and kinds[i] == "hash_moe" for i in range(n)]
    first = f.int("num_hash_layers", default=3, minimum=0)
    return [i < first for i in range(n)]


def deepseek_v4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """DeepSeek-V4 as transformers 5.25 builds it (modeling_deepseek_v4.py; 284,332,240,471 for
    V4-Flash, 1,572,997,201,763 for V4-Pro: the published 284B and 1.6T without the MTP layer).
    Every layer: low-rank q (q_a, q_a_norm, q_b), one shared K/V projection and its norm, the grouped
    output projection (o_a over o_groups, o_b), attention sinks, a MoE block (routed experts, one shared
    expert, the router), two hyper-connection mixers (attn_hc, ffn_hc) and two norms. Compressed layers
    add their compressor (kv and gate projections to coff x head_dim, position bias, norm; coff = 2 on
    CSA's overlapping windows); CSA adds the indexer (its own compressor at index_head_dim, q_b and the
    head-weight projection). The router's float32 e_score_correction_bias (the checkpoint's ffn.gate.bias; a
    buffer in transformers, counted as for DeepSeek-V3) sits on the layers that are not hash-routed
    (deepseek_v4_hashed: mlp_layer_types, else the first num_hash_layers, 3); hash-routed layers hold the
    tid2eid buffer instead, an integer table, not counted."""

    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, top_k = f.int("n_routed_experts"), f.int("num_experts_per_tok")
    inter, shared = f.int("moe_intermediate_size"), f.int("n_shared_experts", default=1, minimum=0)
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=64)
    per_expert = 3 * hidden * inter
    mixer = (2 + hc) * hc * (hc * hidden + 1) + 3  # hc fn, base and scale
    layer = (hidden * q_rank + q_rank + q_rank * heads * head + hidden * head + head
             + heads * head // groups * o_rank * groups + groups * o_rank * hidden + heads
             + experts * per_expert + shared * per_expert + experts * hidden + 2 * mixer + 2 * hidden)

    def compressor(width: int, coff: int, ratio: int) -> int:
        return 2 * hidden * coff * width + ratio * coff * width + width

    total = f.int("vocab_size") * hidden * (1 if f.flag("tie_word_embeddings") else 2)
    total += hc * hc * hidden + hc + 1 + hidden  # hc_head and the final norm
    for spec, by_hash in zip(layers, deepseek_v4_hashed(f, len(layers))):
        total += layer + (0 if by_hash else experts)
        ratio = next((c.policy.compress_ratio for c in spec.caches if c.policy.compress_ratio), None)
        if ratio is None:
            continue
        if any(c.kind == "indexer" for c in spec.caches):  # CSA
            total += compressor(head, 2, ratio) + compressor(index, 2, ratio)
            total += q_rank * index_heads * index + hidden * index_heads
        else:
            total += compressor(head, 1, ratio)
    active = total - len(layers) * (experts - top_k) * per_expert
    return total, active


def deepseek_v41_parts(f: Fields, layers: list) -> dict[str, int]:
    """DeepSeek-V4.1's text-model parameters by the dtype vLLM 0.33 holds them in (models/deepseek_v41:
    nvidia/model.py DeepseekV4DecoderLayer, attention.py, compressor.py, common/engram.py; the MoE of
    models/deepseek_v4/nvidia/model.py): {"experts": routed experts (expert_dtype), "fp8": the quantized
    linears, "bf16", "fp32"}. Every layer has V4's attention (low-rank q, one shared K/V projection, the
    grouped output projection, sinks), a MoE (routed experts, one shared expert, the router and its two
    float32 biases: e_score_correction_bias and the image-token bias_vl), two hyper-connection mixers and
    two norms. A KV source adds its compressor (kv projection, and at ratio 2 the gate, to head_dim; a
    norm; no positional bias); an index source its indexer's q_b and head weights, and a KV source that
    owns the index keys their projection from the latent and its norm; an Engram layer its key/value
    projection and two gate vectors. Not counted: the Engram n-gram tables (kept in pinned host memory by
    default), the DSpark drafter under mtp.* (loaded only for speculative decoding) and the vision tower;
    V4.1 has no hc_head."""
    hidden, heads, head = f.int("hidden_size"), f.int("num_attention_heads"), f.int("head_dim")
    q_rank, o_rank, groups = f.int("q_lora_rank"), f.int("o_lora_rank"), f.int("o_groups")
    experts, inter = f.int("n_routed_experts"), f.int("moe_intermediate_size")
    shared = f.int("n_shared_experts", default=1, minimum=0)
    hc = f.int("hc_mult", default=4)
    index, index_heads = f.int("index_head_dim"), f.int("index_n_heads", default=32)
    per_expert = 3 * hidden * inter
    mixer = (2 + hc) * hc * (hc * hidden + 1) + 3  # hc fn, base and scale, float32
    n = len(layers)
    parts = {"experts": n * experts * per_expert,
             "fp8": n * (hidden * (q_rank + head) + q_rank * heads * head + heads * head // groups * o_rank * groups
                         + groups * o_rank * hidden + shared * per_expert),
             "bf16": n * (q_rank + head + experts * hidden + 2 * hidden),
             "fp32": n * (heads + 2 * experts + 2 * mixer)}
    for spec in layers:
        main = spec.caches[0] if spec.caches and not spec.borrows else None
        ratio = main.policy.compress_ratio if main is not None else None
        if ratio:  # a KV source: its compressor, and the index keys it owns
            parts["bf16"] += hidden * head * (2 if ratio > 1 else 1) + head + index * head + index
        if any(c.kind == "indexer" for c in spec.caches + spec.borrows):  # an index source
            parts["fp8"] += q_rank * index_heads * index
            parts["bf16"] += hidden * index_heads
    engram = f.list("engram_layer_ids") if f.has("engram_layer_ids") else []
    if engram:
        ngram, e_heads = f.int("engram_max_ngram_size", minimum=2), f.int("engram_n_heads", minimum=1)
        e_dim = f.int("engram_head_dim", minimum=1)
        parts["fp8"] += len(engram) * (ngram - 1) * e_heads * e_dim * (hc + 1) * hidden
        parts["bf16"] += len(engram) * 2 * hc * hidden
    parts["bf16"] += f.int("vocab_size") * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    return parts


def deepseek_v41(f: Fields, layers: list, dims) -> tuple[int, int]:
    """deepseek_v41_parts summed (551,880,835,184 for V4.1-Flash: its published 552B backbone less the
    0.49B vision tower); active: the routed experts but num_experts_per_tok of them a layer."""
    total = sum(deepseek_v41_parts(f, layers).values())
    idle = f.int("n_routed_experts") - f.int("num_experts_per_tok")
    return total, total - len(layers) * idle * 3 * f.int("hidden_size") * f.int("moe_intermediate_size")


def glm5_next_kda_widths(f: Fields) -> tuple[int, int, int]:
    """(heads, head_dim, conv kernel) of GLM-5-Next's KDA as transformers 5.25 reads them
    (configuration_glm5_next.py Glm5NextTextConfig: linear_attn_config's num_heads / head_dim /
    short_conv_kernel_size where the config has one, else linear_num_heads / linear_head_dim /
    linear_conv_kernel_dim, defaulting to 64 / 128 / 4; vLLM 0.34 kda.py reads the same attributes)."""
    return (f.int("linear_attn_config.num_heads", "linear_num_heads", default=64),
            f.int("linear_attn_config.head_dim", "linear_head_dim", default=128),
            f.int("linear_attn_config.short_conv_kernel_size", "linear_conv_kernel_dim", default=4))


def glm5_next(f: Fields, layers: list, dims) -> tuple[int, int]:
    """GLM-5-Next's text model as transformers 5.23 builds it (modeling_glm5_next.py: Glm5NextTextModel and the
    untied lm_head; the router's e_score_correction_bias is a buffer). Every layer: two norms and two
    hyper-connection mixers ((2 + hc) x hc x (hc x hidden + 1) + 3 each). A KDA layer: q, k, v and o projections
    of heads x head_dim, the conv over q, k and v (kernel taps), the forget gate (dt_bias, A_log, a low-rank
    hidden -> head_dim -> heads x head_dim) and the output gate (the same low rank), b_proj (one per head) and
    o_norm. A DSA layer: MLA (q_a, its norm, q_b to qk_head_dim per head, kv_a to kv_lora_rank +
    qk_rope_head_dim, its norm, kv_b to qk_nope_head_dim + v_head_dim per head, o) and the indexer (its pool's
    positional table and gate, wq_b, wk, k_norm with bias, weights_proj). The MLP: mlp_layer_types 'dense' a
    SwiGLU of intermediate_size, 'sparse' the routed and shared experts, the router and its
    e_score_correction_bias (one a routed expert: a buffer in transformers, a tensor of the checkpoints, which vLLM
    0.34 glm5next/common/model.py Glm5NextMoE loads under topk_method noaux_tc, as DeepSeek-V3's count holds it).
    The MTP layer and the vision tower are not counted."""
    hidden, heads = f.int("hidden_size"), f.int("num_attention_heads")
    lin_heads, lin_dim, kernel = glm5_next_kda_widths(f)
    qkv = lin_heads * lin_dim
    kda = (4 * hidden * qkv + 3 * qkv * kernel + qkv + lin_heads + 2 * (hidden * lin_dim + lin_dim * qkv)
           + hidden * lin_heads + lin_dim)
    q_rank, kv_rank = f.int("q_lora_rank"), f.int("kv_lora_rank")
    rope = f.int("qk_rope_head_dim", default=0, minimum=0)
    nope, v_dim = f.int("qk_nope_head_dim"), f.int("v_head_dim")
    index, index_heads, kpool = f.int("index_head_dim"), f.int("index_n_heads"), f.int("index_kpool", default=16)
    latent = mla(hidden, heads, q_rank or None, kv_rank, rope, nope, v_dim)
    indexer = kpool * index + index * hidden + q_rank * index_heads * index + index * hidden + 2 * index \
        + index_heads * hidden
    hc = f.int("hc_mult", default=4)
    common = 2 * hidden + 2 * ((2 + hc) * hc * (hc * hidden + 1) + 3)
    experts, top_k = f.int("n_routed_experts"), f.int("num_experts_per_tok")
    per_expert = 3 * hidden * f.int("moe_intermediate_size")
    sparse_mlp = (experts * per_expert + f.int("n_shared_experts", default=1, minimum=0) * per_expert
                  + experts * hidden + experts)
    dense_mlp = 3 * hidden * f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=0, minimum=0)))
    ends = 2 * f.int("vocab_size") * hidden + hidden  # embeddings and lm_head (untied), the final norm
    bases = [common + ((latent + indexer) if spec.caches else kda) for spec in layers]
    return moe_stack(ends, bases, kinds, sparse_mlp, dense_mlp, (experts - top_k) * per_expert)




def _is_prime(value: int) -> bool:
    if value < 2 or value % 2 == 0:
        return value == 2
    return all(value % d for d in range(3, math.isqrt(value) + 1, 2))


def _ngram_rows(f: Fields, ple_index: int) -> int:
    """Rows of a PLE layer's n-gram table: one prime-sized vocabulary per n-gram head, the next primes above
    ngram_vocab_size_base for this PLE layer's heads, summed and padded to make_ngram_vocab_size_divisible_by
    (Qwen4ExpTextNGramEmbedding)."""
    heads = (f.int("ngram_size", default=3, minimum=2) - 1) * f.int("heads_per_ngram", default=8)
    base = f.int("ngram_vocab_size_base", default=20_000_000, maximum=10**9)
    prime, sizes = base - 1, []
    for _ in range((ple_index + 1) * heads):  # the primes of earlier PLE layers' heads come first
        prime += 1
        while not _is_prime(prime):
            prime += 1
        sizes.append(prime)
    divisor = f.int("make_ngram_vocab_size_divisible_by", default=128)
    return -(-sum(sizes[-heads:]) // divisor) * divisor


def qwen4_exp(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Qwen4-Exp's text model as transformers 5.25 builds it (Qwen4ExpTextModel, no vision tower, no MTP layer),
    plus the untied lm_head: hyper-connected residuals (hc_count streams: two gated residuals a layer and a final
    mixer, each an RMSNorm over hc_count x hidden, a low-rank mix and an injection to the streams), a MoE on every
    layer (router, routed experts, a gated shared expert), Gated DeltaNet or gated attention (with the QSA
    indexer's joint q/k projection and norms), and on each ple_layer_ids layer the PLE: an n-gram embedding table,
    key and value projections, three norms and a depthwise conv."""
    if f.flag("attention_bias"):
        raise ConfigError(f"{f.source}: attention_bias is set, whose biases kvplan's Qwen4-Exp count has not read")
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    streams = f.int("hc_count", default=4, minimum=2) * hidden
    low = f.int("hc_lowrank")
    residual = streams + 2 * low * streams  # hc_norm, input_mix_weight_down / up
    experts, top_k = f.int("num_experts"), f.int("num_experts_per_tok")
    inter, shared = f.int("moe_intermediate_size"), f.int("shared_expert_intermediate_size")
    moe = experts * hidden + experts * 3 * hidden * inter + 3 * hidden * shared + hidden
    k_heads, v_heads = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    k_dim, v_dim = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    channels = 2 * k_heads * k_dim + v_heads * v_dim
    gdn = (2 * v_heads + channels * f.int("linear_conv_kernel_dim", default=4) + v_dim + hidden * v_heads * v_dim
           + channels * hidden + v_heads * v_dim * hidden + 2 * v_heads * hidden)
    heads, kv, head = f.int("num_attention_heads"), f.int("num_key_value_heads"), f.int("head_dim")
    attention = 2 * heads * head * hidden + 2 * kv * head * hidden + heads * head * hidden + 2 * head
    if f.get("indexer_n_heads") is not None:
        index = f.int("indexer_head_dim")
        attention += (f.int("indexer_n_heads") + f.int("indexer_kv_heads")) * index * hidden + 2 * index
    width = f.int("ple_embed_dim", default=hidden)
    ngram_heads = (f.int("ngram_size", default=3, minimum=2) - 1) * f.int("heads_per_ngram", default=8)
    ple_ids = sorted(set(f.int_list("ple_layer_ids") or []))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + residual  # + the final mixer
    for i, layer in enumerate(layers):
        total += 2 * (residual + f.int("hc_count", default=4) * streams) + moe
        total += attention if layer.caches else gdn
        if i + 1 in ple_ids:
            rows = _ngram_rows(f, ple_ids.index(i + 1))
            total += (rows * (width // ngram_heads) + width * streams + width * hidden + 3 * streams
                      + streams * f.int("ple_conv_kernel_size", default=4))
    return total, total - len(layers) * (experts - top_k) * 3 * hidden * inter




def ergo(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Ergo as transformers 5.25 builds it: fused qkv, q/k norms, four norms and two residual gates a layer;
    two-matrix MLPs (up, down): a dense one on the dense layers, else routed experts each with its own output
    norm, a router with its e_score_correction_bias (ErgoTopKRouter: a buffer of num_experts, the checkpoints'
    feed_forward.router_bias) and a normed shared expert."""
    heads, kv, head_dim, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = (heads + 2 * kv) * head_dim * hidden + heads * head_dim * hidden + 2 * head_dim + 6 * hidden
    experts, top_k = f.int("num_experts"), f.int("num_experts_per_tok")
    expert = 2 * hidden * f.int("moe_intermediate_size") + hidden  # up, down and its post-expert norm
    sparse = experts * expert + experts * hidden + experts + 2 * hidden * f.int("shared_intermediate_size") + hidden
    dense = 2 * hidden * f.int("first_dense_intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("num_dense_blocks", default=1, minimum=0)))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    total += sum(attention + (dense if k == "dense" else sparse) for k in kinds)
    return total, total - kinds.count("sparse") * (experts - top_k) * expert


def minicpm5_moe(f: Fields, layers: list, dims) -> tuple[int, int]:
    """MiniCPM5-MoE as transformers 5.25 builds it (modeling_minicpm5_moe.py): gated attention (q_gate_proj: query
    and gate), GQA K/V, all four projections biased with attention_bias, two norms a layer; gated MLPs: a dense one
    on the dense layers, else routed experts, a router with its e_score_correction_bias (MiniCPM5MoeTopkRouter: a
    buffer of n_routed_experts, which the checkpoints hold) and n_shared_experts shared experts."""
    heads, kv, head_dim, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = 2 * heads * head_dim * hidden + 2 * kv * head_dim * hidden + heads * head_dim * hidden + 2 * hidden
    if f.flag("attention_bias"):
        attention += 2 * heads * head_dim + 2 * kv * head_dim + hidden
    experts, top_k, inter = f.int("n_routed_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    sparse = (experts * 3 * hidden * inter + experts * hidden + experts
              + f.int("n_shared_experts", default=1) * 3 * hidden * inter)
    dense = 3 * hidden * f.int("intermediate_size")
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    total += sum(attention + (dense if k == "dense" else sparse) for k in kinds)
    return total, total - kinds.count("sparse") * (experts - top_k) * 3 * hidden * inter


def dory(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Dory as transformers 5.25 builds it (the loops share their weights): per attention+MLP layer gated attention
    (q, k, v, o and a gate projection, the sqk and s_gate scales), a gated MLP with its suv_gate / suv_up scales,
    and two residual lambdas; the embedding, the head and its per-token logit scale. A physical layout's "mlp"
    entries pair with its attention entries, so the attention entries count the layers."""
    heads, kv, head, _ = dims
    hidden, vocab, inter = f.int("hidden_size"), f.int("vocab_size"), f.int("intermediate_size")
    q = heads * head
    attention = 3 * hidden * q + 2 * hidden * kv * head + 2 * q
    if f.flag("attention_bias"):
        attention += q + 2 * kv * head + hidden
    mlp = 3 * hidden * inter + 2 * inter + (2 * inter + hidden if f.flag("mlp_bias") else 0)
    count = sum(1 for layer in layers if layer.caches)
    total = count * (attention + mlp + 2 * hidden) + vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + vocab
    return total, total


def kolibri_dense_layers(f: Fields, n: int) -> set[int]:
    """Kolibri 1.1's layers with a dense MLP: mlp_only_layers, else (absent or null) layers 0 and 1
    (Kolibri1_1Config.__post_init__)."""
    written = f.int_list("mlp_only_layers", minimum=0)
    return set(written) if written is not None else {i for i in (0, 1) if i < n}


def kolibri1_1(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Kolibri 1.1 as transformers 5.25 builds it: q and o projections and a q norm on every layer, k and v
    projections and a k norm only on layers that keep their own K/V; four norms a layer; a dense MLP on
    mlp_only_layers, else routed experts, a router (with its e_score_correction_bias, one value an expert, which
    the checkpoint holds) and a shared expert."""
    heads, kv, head, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    # Kolibri1_1Config.attribute_map reads num_experts as num_local_experts: a file may write either
    experts = f.int("num_local_experts", "num_experts")
    top_k, inter = f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    dense_layers = kolibri_dense_layers(f, len(layers))
    moe = experts * 3 * hidden * inter + experts * hidden + experts + 3 * hidden * f.int("shared_expert_intermediate_size")
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden
    moe_layers = 0
    for i, layer in enumerate(layers):
        total += 2 * heads * head * hidden + head + 4 * hidden
        if layer.shares_cache_of is None:
            total += 2 * kv * head * hidden + head
        if i in dense_layers:
            total += 3 * hidden * f.int("mlp_only_intermediate_size")
        else:
            total, moe_layers = total + moe, moe_layers + 1
    return total, total - moe_layers * (experts - top_k) * 3 * hidden * inter


def lara_mini(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Lara mini as transformers 5.25 builds it: plain GQA with q/k norms on the full and sliding layers, the Gated
    DeltaNet of Qwen3-Next on the linear ones, a MoE (routed experts, router, a shared expert) and two norms on
    every layer."""
    heads, kv, head, _ = dims
    hidden, vocab = f.int("hidden_size"), f.int("vocab_size")
    attention = 2 * heads * head * hidden + 2 * kv * head * hidden + 2 * head
    k_heads, v_heads = f.int("linear_num_key_heads"), f.int("linear_num_value_heads")
    k_dim, v_dim = f.int("linear_key_head_dim"), f.int("linear_value_head_dim")
    channels = 2 * k_heads * k_dim + v_heads * v_dim
    gdn = (channels * hidden + 2 * v_heads * v_dim * hidden + 2 * v_heads * hidden
           + channels * f.int("linear_conv_kernel_dim", default=4) + 2 * v_heads + v_dim)
    experts, top_k, inter = f.int("num_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    moe = experts * 3 * hidden * inter + experts * hidden + 3 * hidden * f.int("shared_expert_intermediate_size")
    total = vocab * hidden * (1 if f.flag("tie_word_embeddings", default=True) else 2) + hidden
    for layer in layers:
        total += moe + 2 * hidden + (attention if layer.caches else gdn)
    return total, total - len(layers) * (experts - top_k) * 3 * hidden * inter


def hy_v4(f: Fields, layers: list, dims) -> tuple[int, int]:
    """HY-V4 as transformers 5.25 builds it (HYV4ForCausalLM): MLA with low-rank q (attention_bias on q_a_proj,
    kv_a_proj_with_mqa and o_proj), an output gate and per-head sinks; the indexer (q from the q latent, one key
    projection with a LayerNorm, head weights) only on layers that keep index keys; two hyper-connections a layer
    (hc_mult streams) and the head's; a dense MLP on the mlp_layer_types "dense" layers (absent: layer 0), else
    routed experts with a router (and its e_score_correction_bias, which the checkpoint holds), and shared experts."""
    hidden, vocab, heads = f.int("hidden_size"), f.int("vocab_size"), f.int("num_attention_heads")
    q, r = f.int("q_lora_rank"), f.int("kv_lora_rank")
    nope, rope, v = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim"), f.int("v_head_dim")
    attention = (hidden * q + q + q * heads * (nope + rope) + hidden * (r + rope) + r + r * heads * (nope + v)
                 + 2 * heads * v * hidden + heads)
    if f.flag("attention_bias"):  # HYV4Attention: biases on q_a_proj, kv_a_proj_with_mqa and o_proj
        attention += q + r + rope + hidden
    index_heads, index = f.int("index_n_heads", default=16), f.int("index_head_dim", default=128)
    indexer = q * index_heads * index + hidden * index + 2 * index + hidden * index_heads
    hc = f.int("hc_mult", default=4)
    residual = 2 * (2 * hc * hc * hidden + 2 * hc + 2)
    experts, top_k, inter = f.int("n_routed_experts"), f.int("num_experts_per_tok"), f.int("moe_intermediate_size")
    sparse = 3 * experts * hidden * inter + experts * hidden + experts + 3 * hidden * inter * f.int("n_shared_experts",
                                                                                                     default=1)
    kinds = mlp_layer_types(f, len(layers), dense_first(f.int("first_k_dense_replace", default=1, minimum=0)))
    ends = vocab * hidden * (1 if f.flag("tie_word_embeddings") else 2) + hidden + hc * hc * hidden + hc + 1
    bases = [attention + 2 * hidden + residual + (indexer if any(c.kind == "indexer" for c in layer.caches) else 0)
             for layer in layers]
    return moe_stack(ends, bases, kinds, sparse, 3 * hidden * f.int("intermediate_size"),
                     (experts - top_k) * 3 * hidden * inter)


# Decoders of the generic-rule family records whose modules are not llama's (their parameter counts, checked against
# transformers' modules by tests/parity/test_param_parity.py)
_PLAIN_DECODERS = {
    "apertus": decoder(mlp="plain", norm_bias=False, qk_norm_bias=False, tied=False, layer_extra=2),
    "arcee": decoder(mlp="plain", mlp_bias=("mlp_bias", False), norm_bias=False, tied=False),
    "nanochat": decoder(mlp="plain", norms=0, final_norm=False, tied=False),
    "jais2": decoder(mlp="plain", qkv_bias=("attention_bias", True), o_bias=("attention_bias", True),
                     mlp_bias=("mlp_bias", True), tied=False),
    "nemotron": decoder(mlp="plain", qkv_bias=("attention_bias", False), o_bias=("attention_bias", False),
                        mlp_bias=("mlp_bias", False), tied=False),
    "biogpt": decoder(mlp="plain", qkv_bias=True, o_bias=True, mlp_bias=True, positions="max_position_embeddings",
                      position_offset=2),
    "starcoder2": decoder(mlp="plain", qkv_bias=("use_bias", True), o_bias=("use_bias", True),
                          mlp_bias=("use_bias", True)),
    # phi: params_dense_more.py (its q/k layernorms)
}


def apertus1p5_text(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Apertus1p5TextForCausalLM (transformers 5.25 modeling_apertus1p5.py; vLLM 0.34 registers no Apertus 1.5
    model): Apertus' decoder (Apertus1p5TextMLP is up_proj and down_proj, no gate, with xIELU's two scalars; q_norm
    and k_norm; attention_layernorm and feedforward_layernorm; untied by default), whose lm_head holds
    output_vocab_size rows where the config prunes the head (None or vocab_size: every row). A tied head is the
    embedding matrix itself, counted once."""
    total = _PLAIN_DECODERS["apertus"](f, layers, dims)[0]
    vocab, hidden = f.int("vocab_size"), f.int("hidden_size")
    rows = f.int("output_vocab_size", default=None, minimum=1)
    if rows is not None and not f.flag("tie_word_embeddings", default=False):
        total += (rows - vocab) * hidden
    return total, total


_PLAIN_DECODERS["apertus1p5_text"] = apertus1p5_text


def by_type(f: Fields, layers: list, dims) -> tuple[int, int]:
    """The model_type's own counter (its modules as transformers builds them: params_moe, params_mla, the plain
    decoders above) where a family record holds types whose modules differ, else attention_decoder."""
    from . import params_dense, params_dense_more, params_hybrid, params_mla, params_moe

    counters = {**_PLAIN_DECODERS, **params_moe.COUNTERS, **params_mla.COUNTERS, **params_dense.COUNTERS,
                **params_hybrid.COUNTERS}
    counters.update(params_dense_more.COUNTERS)  # dense_more: Cohere, OLMo, OLMo 2, Seed-OSS, Phi
    return counters.get(f.model_type, attention_decoder)(f, layers, dims)


def iquest_loop(f: Fields, layers: list, dims) -> tuple[int, int]:
    """IQuest-Coder-V1-Loop as vLLM 0.33 builds it (iquest_loopcoder.py; transformers has no loop model): a Llama
    decoder (the loops share its weights) plus one gate projection a layer (head_dim -> heads, with a bias)."""
    heads, _, head_dim, _ = dims
    total, active = attention_decoder(f, layers, dims)
    gates = len(layers) * (head_dim * heads + heads)
    return total + gates, active + gates


def nemotron_nas(f: Fields, layers: list, dims) -> tuple[int, int]:
    """Nemotron-NAS as its remote code (DeciLMDecoderLayer) and vLLM's nemotron_nas.py build it, layer by layer
    from block_configs (kvplan.configs.nemotron_nas): an attention that is not no_op has its norm and either
    Llama GQA q, k, v, o (biases with attention_bias) or one hidden x hidden linear (no bias); an MLP that is
    not no_op has its norm and either a gated MLP of its own width (biases with mlp_bias) or one hidden x
    hidden linear (no bias). Then the embeddings, the final norm and the LM head (untied by default)."""
    from .nemotron_nas import blocks, dims as nas_dims

    heads, _, head_dim, _ = nas_dims(f)
    hidden = f.int("hidden_size")
    attention_bias, mlp_bias = f.flag("attention_bias"), f.flag("mlp_bias")
    q = heads * head_dim
    total = embeddings(f, hidden, tied_default=False) + hidden
    for b in blocks(f, f.int("num_hidden_layers"))[:len(layers)]:
        if b.attention == "attention":
            kv = b.kv_heads * head_dim
            total += hidden * (q + 2 * kv) + q * hidden + ((q + 2 * kv + hidden) if attention_bias else 0)
        elif b.attention == "linear":
            total += hidden * hidden
        if b.ffn == "mlp":
            total += gated_mlp(hidden, b.intermediate, mlp_bias)
        elif b.ffn == "linear":
            total += hidden * hidden
        total += hidden * ((b.attention != "none") + (b.ffn != "none"))  # input / post-attention RMSNorm
    return total, total
