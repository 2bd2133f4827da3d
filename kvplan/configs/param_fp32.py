"""The parameters vLLM builds in float32 whatever the checkpoint's dtype: MoE routers and their score-correction
biases, and one indexer norm. kvplan's plan sizes them as the checkpoint stores them (its float width); vLLM loads
each into a float32 parameter, so its weights hold (4 - width) B more per parameter (engines/vllm_fp32.py adds
them to vLLM's profile).

One rule per module, by the end of its name in kvplan's per-module table (configs/weight_tables/__init__.py), with the first
vLLM release that holds it in float32, bisected in the released sdists (0.11.0, 0.11.1, 0.12.0, 0.13.0, 0.14.0,
0.16.0, 0.17.0, 0.18.0, 0.20.0, 0.20.1, 0.20.2, 0.21.0, 0.22.0, 0.23.0, 0.24.0, 0.25.0, 0.26.0, 0.27.0, 0.30.0,
0.31.0, 0.32.0, 0.33.0, 0.34.0; each rule in the releases its bisection needed; where a family's model file
first appears with the rule, that release is given). What vLLM 0.34 builds in float32 (model_executor/models/*.py,
vllm/models/*):

- ERNIE-4.5-MoE: ernie45_moe.py Ernie4_5_MoeMoE, gate (GateLinear params_dtype=torch.float32) and
  gate.e_score_correction_bias (the checkpoint's moe_statics) from 0.11.1 (0.11.0: both in the model dtype);
- LongCat-Flash: longcat_flash.py LongcatMoe router_params_dtype = torch.float32 for LongcatRouter's classifier and
  e_score_correction_bias (0.32+ whatever the config says; 0.11-0.31, read in 0.27.0, 0.30.0 and 0.31.0: the
  config's router_dtype, "float32" by default in vLLM's own LongcatFlashConfig, so a config naming another dtype is
  over-counted there);
- ERNIE-4.5-VL's text model: ernie45_vl_moe.py Ernie4_5_VLMoeMoE, the text and vision routers (ReplicatedLinear
  params_dtype=torch.float32) and the [2, E] e_score_correction_bias, from 0.11.1 (0.11.0: the model dtype);
- LFM2-MoE: lfm2_moe.py Lfm2MoeSparseMoeBlock gate.e_score_correction_bias (the checkpoint's expert_bias), from its
  first release (0.11.1); the gate itself in the model dtype;
- GLM-4.5 / 4.6 / 4.7 and GLM-4.7-Flash: glm4_moe.py Glm4MoE gate (params_dtype float32; an nn.Linear of dtype
  float32 in 0.11) and gate.e_score_correction_bias; glm4_moe_lite.py Glm4MoeLite inherits it
  (from 0.15.0, the file's first release: 0.14.0 lacks it; read in the 0.15.0 wheel and 0.16.0);
- MiniMax-M2: minimax_m2.py MiniMaxM2MoE gate (params_dtype float32) and e_score_correction_bias (built only with
  use_routing_bias), from 0.11.1;
- Laguna: laguna.py LagunaMoE's e_score_correction_bias (float32 "regardless of model dtype"), from its first
  release, 0.21.0 (0.20.2 has no laguna.py);
- MiMo-V2-Flash / MiMo-V2.x: mimo_v2.py MiMoV2MoE (mimo_v2_flash.py up to 0.20; from 0.14.0, its first release)
  builds the gate (an nn.Linear up to 0.30, GateLinear from 0.31) in the config's moe_router_dtype, float32 where
  the config leaves it out, and its e_score_correction_bias in the gate's dtype up to 0.30, in float32 whatever
  moe_router_dtype says from 0.31.0 (read in the 0.14.0, 0.20.0, 0.21.0, 0.26.0, 0.30.0, 0.31.0 wheels and 0.34.0);
- DeepSeek-V3, Kimi-K2, DeepSeek-V3.2, GLM-5: deepseek_v2.py DeepseekV2MoE gate.e_score_correction_bias, built only
  where the config's topk_method is "noaux_tc" (0.11.0); the DSA indexer's k_norm (a LayerNorm, weight and bias)
  from 0.32.0 (deepseek_v32/attention.py DeepseekV32Indexer, deepseek_v2.py Indexer: LayerNorm(dtype=float32));
- Kimi-Linear: vllm/models/kimi_k3/nvidia/model.py's MoE gate.e_score_correction_bias from 0.27.0 (0.26.0's
  kimi_linear.py built it in the model dtype);
- Nemotron-H: nemotron_h.py NemotronHMoE gate.e_score_correction_bias from 0.11.1; its gate in float32 in
  0.11.1-0.16 (params_dtype float32), and from 0.17.0 GateLinear(force_fp32_compute=True), which keeps it in the
  model dtype where its own kernels run (CUDA capability 9.0 or 10.x, no bias: fused_moe/router/gate_linear.py
  GateLinear.__init__, the same in 0.17.0, 0.20.0 and 0.34.0) and in float32 on other GPUs;
- the Mamba mixers' A (the checkpoints' A_log, loaded as -exp(A_log)): layers/mamba/mamba_mixer.py MambaMixer
  ([inner, state]: Mamba, Falcon-Mamba, Jamba) and mamba_mixer2.py MambaMixer2 (one a head: Mamba-2, Nemotron-H,
  Granite 4.0-H, Falcon-H1, Zamba2) build it with dtype=torch.float32, split over TP; read in 0.11.0, 0.33.0 and
  0.34.0; Gated DeltaNet's A_log (Qwen3-Next, Qwen3.5) likewise from 0.19.0 (layers/mamba/gdn_linear_attn.py, from
  0.22.0 gdn/qwen_gdn_linear_attn.py; in the model dtype 0.11.1-0.18.1; read in the wheels of 0.11.0 to 0.32.0).

Searched in 0.34 (float32 parameters, buffers and params_dtype, GateLinear's arguments) and found in the model
dtype: Llama (and InternLM3), Mistral, Qwen2 / 2.5-VL, Qwen3 (MoE, VL, Next, 3.5), Mixtral, Llama 4, Gemma 2 / 3 /
4 / 4 Unified, gpt-oss (its sinks: make_attention_sink in the default dtype), Phi-3, ERNIE-4.5 dense, MiMo, Granite,
Cohere2, EXAONE 4, GLM-4, LFM2, MiniCPM3, and the Mamba families but for their mixers' A (above); Gemma, GLM and
OLMo 3 vLLM 0.34 serves through its Transformers backend (registry.py), not read.
Not covered: the MTP drafters (engines/vllm_draft_weights.py), whose MoE layers reuse these classes. DeepSeek-V4's
float32 parameters are stored in float32 by its checkpoint and sized by configs/compressed.py.

SGLang (engines/sglang_fp32.py; read in the 0.5.23 wheel and the 0.5.9 sdist, python/sglang/srt): each rule also
says which SGLang releases hold that module in float32 (Fp32Rule.sglang), and rules for the modules SGLang alone
holds so are here too (first None). Where SGLang differs from vLLM 0.34: ERNIE-4.5-MoE's gate and bias, and
Kimi-Linear's score bias, in the model dtype (ernie4.py MoEGate, kimi_linear.py); DeepSeek's gate in the model
dtype as in vLLM (MoEGate: float32 only with the config's router_fp32, which no DeepSeek checkpoint sets); GLM-4.5's
gate float32 from 0.5.23 only (0.5.9: the bias alone); Nemotron-H's gate float32 in 0.5.9 only (0.5.23:
ReplicatedLinear in the model dtype, on every GPU); Laguna's gate float32 as well as its bias; and, beyond vLLM's
rules, Kimi-Linear's KDA conv1d, dt_bias and A_log, the Mamba-2 mixers' A (MambaMixer2: Nemotron-H, Falcon-H1,
Granite 4.0-H), Gated DeltaNet's A_log (Qwen3-Next; Qwen3.5 from 0.5.23), and Ling's router (router_dtype "fp32") and expert_bias, and Ling / Ring 2.5's LM head (bailing_moe_linear.py
ParallelLMHead params_dtype float32; vLLM builds it in the model dtype). Both SGLang releases read a config field
vLLM 0.34 ignores for LongCat-Flash: its router is float32 only where rounter_params_dtype is "float32" or left out
(longcat_flash.py LongcatFlashMoE, bfloat16 otherwise); MiMo-V2's gate follows moe_router_dtype in 0.5.23 as in
vLLM, and is float32 whatever it says in 0.5.9 (mimo_v2_flash.py MoEGate). The same everywhere else read:
LongCat-Flash, LFM2-MoE, MiniMax-M2, DeepSeek's noaux_tc bias and DSA indexer k_norm, Ling / Ring 2.5's router and
expert_bias. Not covered: the float32
routers and biases of families kvplan has no per-module table for (grok.py, step3p5.py, llada2.py, minimax_m3.py,
ernie45_moe_vl.py, iquest_q1.py), and of those whose tables (configs/weight_tables/moe_more.py) came without a
rule: exaone_moe.py, afmoe.py, hy_v3.py, param2moe.py and vllm/models/beam, which vLLM 0.34 builds in float32 (read
in 0.34 only, not bisected, so not added); ROCm builds (aiter keeps some of these in bf16); and the MTP / NextN
drafters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .fields import Fields


# the SGLang releases kvplan models (engines/sglang_rules.py)
SGLANG_BOTH = ("0.5.9", "0.5.23")
SGLANG_NEW = ("0.5.23",)


@dataclass(frozen=True)
class Fp32Rule:
    """A module vLLM (from release `first`) or SGLang (in the releases `sglang`) builds in float32 (weight and
    `other`) whatever the checkpoint's dtype. One record per module, whichever engines hold it so: where SGLang's
    choice is vLLM's, the same record says both (SGLANG_FP32 below)."""

    suffix: str  # the end of the module's name in the table ("mlp.gate" matches "layers.3.mlp.gate")
    # the first vLLM release that builds it in float32; None: kvplan's vLLM profile adds nothing for it (vLLM 0.34
    # builds it in the model dtype, or kvplan has not read vLLM's class: `source` says which)
    first: tuple[int, int, int] | None
    source: str  # the vLLM file and class that build it so (0.34)
    # the engines build it only where the config's field has this value, or one of these values when a tuple (a
    # field the config leaves out reads None) (DeepseekV2MoE: topk_method "noaux_tc"; MiniMaxM2MoE:
    # use_routing_bias true); None: always
    only_if: tuple[str, object] | None = None
    # only for configs whose architectures[0] is `arch`, or is not `arch_not` (one model_type, two model files:
    # bailing_hybrid's Ling 2.5 and Ling 3.0); None: any
    arch: str | None = None
    arch_not: str | None = None
    # from this release float32 only on GPUs without GateLinear's own router kernels: not CUDA capability 9.0 nor
    # 10.x (GateLinear(force_fp32_compute=True), fused_moe/router/gate_linear.py); None: on every GPU
    gpu_dependent_from: tuple[int, int, int] | None = None
    # the engine field: the SGLang releases modelled (SGLANG_BOTH) whose CUDA build holds it in float32, () where
    # SGLang builds it in the model dtype; and the SGLang file and class that do (0.5.23's python/sglang/srt/models,
    # 0.5.9's where it differs)
    sglang: tuple[str, ...] = ()
    sglang_source: str = ""

    def held(self, version, capability: tuple[int, int] | None) -> bool | None:
        """Whether vLLM `version` (None: the newest release read, 0.34) holds it in float32 on a GPU of this CUDA
        capability; None where that depends on the GPU and the capability is not known."""
        from ..engines.vllm_release import at_least

        if self.first is None:
            return False
        if version is not None and not at_least(version, self.first):
            return False
        if self.gpu_dependent_from is None or (version is not None and not at_least(version,
                                                                                    self.gpu_dependent_from)):
            return True
        if capability is None:
            return None
        return not (capability == (9, 0) or capability[0] == 10)

    def held_by_sglang(self, release: str) -> bool:
        """Whether SGLang `release` ("0.5.9", "0.5.23") holds it in float32 (on CUDA)."""
        return release in self.sglang


def _rules(first: tuple[int, int, int] | None, source: str, *suffixes: str, **kw) -> tuple[Fp32Rule, ...]:
    return tuple(Fp32Rule(s, first, source, **kw) for s in suffixes)


# Ling / Ring 2.5 (bailing_hybrid with BailingMoeV2_5ForCausalLM): vLLM 0.17.0-0.34.0 bailing_moe_linear.py
# BailingMoeV25 builds the router (GateLinear params_dtype router_dtype: float32 when the config's router_dtype is
# absent or "fp32") and gate.expert_bias in float32, its ParallelLMHead in the model dtype (0.16.0 has no
# bailing_moe_linear.py); SGLang 0.5.9 and 0.5.23 models/bailing_moe_linear.py the same router (BailingMoE
# router_dtype, BailingMoEGate) and expert_bias, and also the LM head (BailingMoELinearForCausalLM: ParallelLMHead
# params_dtype=torch.float32, split over TP by vocabulary rows). The expert_bias only where the config says
# moe_router_enable_expert_bias true: SGLang 0.5.23's BailingHybridConfig defaults it to false (0.5.9's to true)
_LING25 = "BailingMoeV2_5ForCausalLM"
_V25_FILE = "bailing_moe_linear.py BailingMoeV25"
_SG_V25 = "bailing_moe_linear.py"
_LING25_RULES = (
    _rules((0, 17, 0), f"{_V25_FILE} (router_dtype)", "mlp.gate", only_if=("router_dtype", (None, "fp32")),
           sglang=SGLANG_BOTH, sglang_source=f"{_SG_V25} BailingMoE / BailingMoEGate (router_dtype)", arch=_LING25)
    + _rules((0, 17, 0), _V25_FILE, "mlp.gate.expert_bias", only_if=("moe_router_enable_expert_bias", True),
             sglang=SGLANG_BOTH, sglang_source=f"{_SG_V25} BailingMoEGate (expert_bias)", arch=_LING25)
    + _rules(None, "bailing_moe_linear.py BailingMoeV25ForCausalLM (its ParallelLMHead in the model dtype)",
             "lm_head", sglang=SGLANG_BOTH,
             sglang_source=f"{_SG_V25} BailingMoELinearForCausalLM (ParallelLMHead params_dtype float32)",
             arch=_LING25))
_SG_DS = "deepseek_v2.py MoEGate (noaux_tc: e_score_correction_bias float32; its weight in the model dtype)"
# SGLang: glm4_moe.py Glm4MoeGate / glm4_moe_lite.py Glm4MoeLiteGate, the weight in float32 from 0.5.23 (0.5.9 built
# it in the model dtype, the bias in float32)
_SG_GLM = "glm4_moe.py Glm4MoeGate, glm4_moe_lite.py Glm4MoeLiteGate"
_GLM = (_rules((0, 11, 0), "glm4_moe.py Glm4MoE (glm4_moe_lite.py Glm4MoeLite inherits it)", "mlp.gate",
               sglang=SGLANG_NEW, sglang_source=_SG_GLM)
        + _rules((0, 11, 0), "glm4_moe.py Glm4MoE (glm4_moe_lite.py Glm4MoeLite inherits it)",
                 "mlp.gate.e_score_correction_bias", sglang=SGLANG_BOTH, sglang_source=_SG_GLM))
_DEEPSEEK = (_rules((0, 11, 0), "deepseek_v2.py DeepseekV2MoE", "mlp.gate.e_score_correction_bias",
                    only_if=("topk_method", "noaux_tc"), sglang=SGLANG_BOTH, sglang_source=_SG_DS)
             + _rules((0, 32, 0), "deepseek_v32/attention.py DeepseekV32Indexer, deepseek_v2.py Indexer",
                      "indexer.k_norm", sglang=SGLANG_BOTH,
                      sglang_source="layers/attention/dsa/dsa_indexer.py Indexer (LayerNorm float32 on CUDA; "
                      "RMSNorm in the model dtype where index_k_norm_type is \"rms\"; 0.5.9 nsa/nsa_indexer.py)"))
_MAMBA2 = "layers/attention/mamba/mamba.py MambaMixer2 (A, loaded from A_log: float32, split by heads)"
_NONE = "kvplan's vLLM profile adds nothing for it (vLLM's class not checked for it here)"
# Gated DeltaNet's A_log (Qwen3-Next, Qwen3.5): float32, split by value heads, from 0.19.0 (layers/mamba/
# gdn_linear_attn.py GatedDeltaNetAttention; gdn/qwen_gdn_linear_attn.py QwenGatedDeltaNetAttention from 0.22.0);
# 0.11.1-0.18.1 qwen3_next.py Qwen3NextGatedDeltaNet (Qwen3.5's base up to 0.18) built it in the model dtype. 0.11.0
# built it in float32 too, which this rule leaves out (Qwen3-Next-80B: 36 layers x 32 heads x 2 B, 2,304 B)
_VLLM_GDN = "layers/mamba/gdn/qwen_gdn_linear_attn.py QwenGatedDeltaNetAttention (A_log float32, split by heads)"
_MIMO = "mimo_v2.py MiMoV2MoE (mimo_v2_flash.py MiMoV2FlashMoE up to 0.20): the gate in moe_router_dtype"
# a config's moe_router_dtype that leaves the router in float32 (left out: float32)
_ROUTER_FP32 = ("moe_router_dtype", (None, "float32"))

# the Mamba mixers' A (the checkpoints' A_log, loaded as -exp(A_log)): vLLM's layers/mamba/mamba_mixer.py MambaMixer
# and mamba_mixer2.py MambaMixer2 build it with dtype=torch.float32 (0.11.0, 0.33.0, 0.34.0), split over TP
_MAMBA1_A = _rules((0, 11, 0), "layers/mamba/mamba_mixer.py MambaMixer (A)", "A_log")
_MAMBA2_A = _rules((0, 11, 0), "layers/mamba/mamba_mixer2.py MambaMixer2 (A)", "A_log")
_VLLM_MAMBA2 = "layers/mamba/mamba_mixer2.py MambaMixer2 (A)"

# model_type (as kvplan's tables are keyed) -> its rules, for either engine
FP32_RULES: dict[str, tuple[Fp32Rule, ...]] = {
    # SGLang's ernie4.py MoEGate builds both in the model dtype (0.5.9, 0.5.23)
    "ernie4_5_moe": _rules((0, 11, 1), "ernie45_moe.py Ernie4_5_MoeMoE", "mlp.gate",
                           "mlp.moe_statics.e_score_correction_bias"),
    # vLLM: float32 whatever the config says (LongcatMoe sets router_params_dtype = torch.float32). SGLang 0.5.9 and
    # 0.5.23: its LongcatFlashMoE reads the config's rounter_params_dtype (its own LongcatFlashConfig's default
    # "float32"): float32 where it is "float32" or left out, bfloat16 otherwise
    "longcat_flash": (_rules((0, 11, 0), "longcat_flash.py LongcatMoe / LongcatRouter", "router.classifier",
                             "router.e_score_correction_bias")
                      + _rules(None, _NONE, "router.classifier", "router.e_score_correction_bias",
                               only_if=("rounter_params_dtype", (None, "float32")), sglang=SGLANG_BOTH,
                               sglang_source="longcat_flash.py LongcatFlashRouter (rounter_params_dtype)")),
    # ERNIE-4.5-VL's text model: vLLM from 0.11.1 (0.11.0 in the model dtype) and SGLang 0.5.9 / 0.5.23 build the
    # text and vision routers (text_experts_gate / vision_experts_gate: ReplicatedLinear params_dtype float32; the
    # checkpoint's gate.weight and gate.weight_1, one module in the table) and the [2, E] e_score_correction_bias
    # (the checkpoint's moe_statics) in float32
    "ernie4_5_vl_moe_text": _rules((0, 11, 1), "ernie45_vl_moe.py Ernie4_5_VLMoeMoE", "mlp.gate",
                                   "mlp.moe_statics.e_score_correction_bias", sglang=SGLANG_BOTH,
                                   sglang_source="ernie45_moe_vl.py Ernie4_5_VLMoeMoE (routers and score bias)"),
    "lfm2_moe": _rules((0, 11, 1), "lfm2_moe.py Lfm2MoeSparseMoeBlock", "feed_forward.expert_bias",
                       sglang=SGLANG_BOTH, sglang_source="lfm2_moe.py Lfm2MoeSparseMoeBlock (use_expert_bias)"),
    "glm4_moe": _GLM,
    "glm4_moe_lite": _GLM,
    "minimax_m2": (_rules((0, 11, 1), "minimax_m2.py MiniMaxM2MoE", "block_sparse_moe.gate", sglang=SGLANG_BOTH,
                          sglang_source="minimax_m2.py MiniMaxM2MoE (ReplicatedLinear params_dtype float32)")
                   + _rules((0, 11, 1), "minimax_m2.py MiniMaxM2MoE", "block_sparse_moe.e_score_correction_bias",
                            only_if=("use_routing_bias", True), sglang=SGLANG_BOTH,
                            sglang_source="minimax_m2.py MiniMaxM2MoE")),
    # SGLang 0.5.23 laguna.py LagunaMoEGate: the gate too (0.5.9 has no laguna.py)
    "laguna": (_rules((0, 21, 0), "laguna.py LagunaMoE", "mlp.experts.e_score_correction_bias",
                      sglang=SGLANG_NEW, sglang_source="laguna.py LagunaMoEGate")
               + _rules(None, "laguna.py LagunaMoE (its gate in the model dtype)", "mlp.gate", sglang=SGLANG_NEW,
                        sglang_source="laguna.py LagunaMoEGate")),
    "deepseek_v3": _DEEPSEEK,
    "kimi_k2": _DEEPSEEK,
    "deepseek_v32": _DEEPSEEK,
    "glm_moe_dsa": _DEEPSEEK,
    # SGLang's kimi_linear.py builds the score bias in the model dtype (0.5.9, 0.5.23), but KDA's conv1d (0.5.9
    # q/k/v_conv1d, 0.5.23 one fused qkv_conv1d), dt_bias and A_log in float32, split over TP
    "kimi_linear": (_rules((0, 27, 0), "models/kimi_k3/nvidia/model.py (MoE gate)", "gate.e_score_correction_bias")
                    + _rules(None, _NONE, "self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d",
                             "self_attn.dt_bias", "self_attn.A_log", sglang=SGLANG_BOTH,
                             sglang_source="kimi_linear.py KimiDeltaAttention")),
    "nemotron_h": (_rules((0, 11, 1), "nemotron_h.py NemotronHMoE", "gate.e_score_correction_bias",
                          sglang=SGLANG_BOTH, sglang_source="nemotron_h.py NemotronHMoE")
                   + _rules((0, 11, 1), "nemotron_h.py NemotronHMoE, fused_moe/router/gate_linear.py GateLinear",
                            "gate", gpu_dependent_from=(0, 17, 0), sglang=("0.5.9",),
                            sglang_source="nemotron_h.py NemotronHMoE (0.5.9 ReplicatedLinear params_dtype "
                            "float32; 0.5.23 the model dtype)")
                   + _rules((0, 11, 0), _VLLM_MAMBA2, "mixer.A_log", sglang=SGLANG_BOTH, sglang_source=_MAMBA2)),
    "falcon_h1": _rules((0, 11, 0), _VLLM_MAMBA2, "mamba.A_log", sglang=SGLANG_BOTH, sglang_source=_MAMBA2),
    "granitemoehybrid": _rules((0, 11, 0), _VLLM_MAMBA2, "mamba.A_log", sglang=SGLANG_BOTH, sglang_source=_MAMBA2),
    "qwen3_next": _rules((0, 19, 0), _VLLM_GDN, "linear_attn.A_log", sglang=SGLANG_BOTH,
                         sglang_source="qwen3_next.py Qwen3GatedDeltaNet (A_log float32, split by heads)"),
    "qwen3_5_text": _rules((0, 19, 0), _VLLM_GDN, "linear_attn.A_log", sglang=SGLANG_NEW,
                           sglang_source="qwen3_5.py Qwen3_5GatedDeltaNet (0.5.9: the model dtype)"),
    "qwen3_5_moe_text": _rules((0, 19, 0), _VLLM_GDN, "linear_attn.A_log", sglang=SGLANG_NEW,
                               sglang_source="qwen3_5.py Qwen3_5GatedDeltaNet (0.5.9: the model dtype)"),
    # MiMo-V2: vLLM from 0.14.0 (mimo_v2_flash.py; mimo_v2.py from 0.21.0) builds the gate in the config's
    # moe_router_dtype, float32 where it is left out, and its e_score_correction_bias in the gate's dtype, from 0.31.0
    # in GateLinear's out_dtype float32 whatever moe_router_dtype says. SGLang 0.5.23 mimo_v2.py MoEGate: the gate in
    # moe_router_dtype (float32 where left out); 0.5.9 mimo_v2_flash.py MoEGate: float32 always; both the bias
    # (noaux_tc) in float32
    "mimo_v2": (_rules((0, 14, 0), _MIMO, "mlp.gate", only_if=_ROUTER_FP32, sglang=SGLANG_NEW,
                       sglang_source="mimo_v2.py MoEGate (moe_router_dtype)")
                + _rules(None, _NONE, "mlp.gate", sglang=("0.5.9",),
                         sglang_source="mimo_v2_flash.py MoEGate (float32 whatever moe_router_dtype says)")
                + _rules((0, 14, 0), f"{_MIMO} (its e_score_correction_bias in the gate's dtype)",
                         "mlp.gate.e_score_correction_bias", only_if=_ROUTER_FP32)
                + _rules((0, 31, 0), "mimo_v2.py MiMoV2MoE (e_score_correction_bias in GateLinear's out_dtype "
                         "float32)", "mlp.gate.e_score_correction_bias")
                + _rules(None, _NONE, "mlp.gate.e_score_correction_bias", only_if=("topk_method", "noaux_tc"),
                         sglang=SGLANG_BOTH, sglang_source="mimo_v2.py MoEGate")),
    # Ling / Ring 2.0 and 3.0: the router in float32 where router_dtype is "fp32", its expert_bias always
    "bailing_moe": (_rules(None, _NONE, "mlp.gate", only_if=("router_dtype", "fp32"), sglang=SGLANG_BOTH,
                           sglang_source="bailing_moe.py BailingMoEGate (router_dtype)")
                    + _rules(None, _NONE, "mlp.gate.expert_bias", sglang=SGLANG_BOTH,
                             sglang_source="bailing_moe.py BailingMoEGate (moe_router_enable_expert_bias)")),
    # Ling 3.0 (BailingMoeV3ForCausalLM, or no architecture)
    "bailing_hybrid": (_rules(None, _NONE, "mlp.gate", only_if=("router_dtype", "fp32"), sglang=SGLANG_NEW,
                              sglang_source="bailing_moe_v3.py BailingMoEGate (router_dtype)", arch_not=_LING25)
                       + _rules(None, _NONE, "mlp.gate.expert_bias", sglang=SGLANG_NEW,
                                only_if=("moe_router_enable_expert_bias", True),
                                sglang_source="bailing_moe_v3.py BailingMoEGate", arch_not=_LING25)
                       + _LING25_RULES),
}
FP32_RULES["mimo_v2_flash"] = FP32_RULES["mimo_v2"]
# vLLM only (SGLang not read for these): mamba.py, jamba.py (MambaMixer); mamba2.py, zamba2.py (MambaMixer2)
FP32_RULES.update({"mamba": _MAMBA1_A, "falcon_mamba": _MAMBA1_A, "jamba": _MAMBA1_A, "mamba2": _MAMBA2_A,
                   "zamba2": _MAMBA2_A})
# configs/weight_tables/hybrid_more.py (vLLM only): Bamba's MambaMixer2 A (read in 0.23.0, the last release with
# bamba.py: the same float32 A as 0.11.0 and 0.34.0); Qwen4-Exp's Gated DeltaNet A_log, which
# layers/mamba/gdn/qwen_gdn_linear_attn.py QwenGatedDeltaNetAttention builds with dtype=torch.float32, split by value
# heads (0.33.0, the first release with models/qwen4_exp, and 0.34.0)
_QWEN4_A = _rules((0, 33, 0), "layers/mamba/gdn/qwen_gdn_linear_attn.py QwenGatedDeltaNetAttention (A_log)",
                  "linear_attn.A_log")
FP32_RULES.update({"bamba": _rules((0, 11, 0), _VLLM_MAMBA2, "mamba.A_log"), "qwen4_exp_text": _QWEN4_A,
                   "qwen3_8_flash_next_text": _QWEN4_A})
# GLM-5-Next (vLLM 0.33.0, the first release with models/glm5next, and 0.34.0): glm5next/common/model.py
# Glm5NextDecoderLayer's hyper-connection fn / base / scale and Glm5NextMoE's e_score_correction_bias (whole);
# attention.py Indexer's index_kpool_compress_ape and k_norm (LayerNorm dtype float32; whole); kda.py
# Glm5NextLinearAttention's dt_bias, A_log and q/k/v convolutions (split by heads)
_GLM5N = "glm5next/common/"
FP32_RULES["glm5_next_text"] = (
    _rules((0, 33, 0), f"{_GLM5N}model.py Glm5NextDecoderLayer", *(f"hc_{h}_{p}" for h in ("attn", "ffn")
                                                                    for p in ("fn", "base", "scale")))
    + _rules((0, 33, 0), f"{_GLM5N}model.py Glm5NextMoE", "mlp.gate.e_score_correction_bias")
    + _rules((0, 33, 0), f"{_GLM5N}attention.py Indexer", "indexer.index_kpool_compress_ape", "indexer.k_norm")
    + _rules((0, 33, 0), f"{_GLM5N}kda.py Glm5NextLinearAttention", "self_attn.dt_bias", "self_attn.A_log",
             "self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d"))

# what vLLM builds in float32 (engines/vllm_fp32.py) and what SGLang does (engines/sglang_fp32.py)
VLLM_FP32: dict[str, tuple[Fp32Rule, ...]] = {
    t: tuple(r for r in rules if r.first is not None) for t, rules in FP32_RULES.items()
    if any(r.first is not None for r in rules)}
SGLANG_FP32: dict[str, tuple[Fp32Rule, ...]] = {
    t: tuple(r for r in rules if r.sglang) for t, rules in FP32_RULES.items() if any(r.sglang for r in rules)}


def live(f: Fields, rules) -> list:
    """The rules whose config conditions (only_if, arch, arch_not) the config meets."""
    names = f.raw.get("architectures")
    first = names[0].strip() if isinstance(names, list) and names and isinstance(names[0], str) else None
    return [r for r in rules if _meets(f.raw.get(r.only_if[0]) if r.only_if else None, r.only_if)
            and (r.arch is None or first == r.arch) and (r.arch_not is None or first != r.arch_not)]


def _meets(value, only_if) -> bool:
    if only_if is None:
        return True
    wanted = only_if[1]
    return value in wanted if isinstance(wanted, tuple) else value == wanted


def matching(m, rules: list):
    """The rule whose suffix ends m's name, or None."""
    return next((r for r in rules if m.name == r.suffix or m.name.endswith("." + r.suffix)), None)


def mark(f: Fields, modules: list) -> list:
    """The table with Module.vllm_fp32 set on the modules vLLM builds in float32 (VLLM_FP32)."""
    rules = VLLM_FP32.get(f.model_type)
    if not rules or not modules:
        return modules
    rules = live(f, rules)
    out = []
    for m in modules:
        rule = matching(m, rules)
        out.append(replace(m, vllm_fp32=rule) if rule else m)
    return out
