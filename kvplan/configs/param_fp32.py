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

The families of configs/weight_tables/moe_more.py, vl_more.py and hybrid_more.py, each model file read in the wheel
of every release of engines/vllm_registry_data.py RELEASES from its first to 0.34.0:

- EXAONE MoE: exaone_moe.py ExaoneMoe's e_score_correction_bias from 0.14.0 (the file's first release); its gate in
  the model dtype in every release;
- AFMoE: afmoe.py AfmoeMoE's router (the checkpoint's mlp.router.gate: nn.Linear dtype float32, GateLinear
  params_dtype float32 from 0.31) and expert_bias, from 0.11.1 (its first release);
- Hunyuan 3: hy_v3.py HYV3MoEFused's gate (GateLinear params_dtype float32) from 0.20.0 (its first release) and its
  expert_bias from 0.26.0 (0.20.0-0.25.1 in the model dtype); from 0.30.0 its q_norm / k_norm are float32 where the
  optional HPC rope kernel runs (HpcRopeNorm.support: only with --attention-backend HPC_ATTN, never a default, and
  a head layout it takes), which kvplan's default-backend profile does not plan: not added (2 x head_dim a layer);
- Param2: param2moe.py Param2MoEMoEBlock's gate.e_score_correction_bias (the checkpoint's mlp.gate.expert_bias;
  with moe_router_enable_expert_bias true or left out) from 0.20.0 (its first release), and its gate from 0.31.0
  (GateLinear params_dtype float32; an nn.Linear in the model dtype before);
- Beam: vllm/models/beam/nvidia/moe.py BeamSparseMoeBlock's gate and gate.e_score_correction_bias from 0.33.0
  (the first release with vllm/models/beam);
- MiniMax-M3's text model: vllm/models/minimax_m3/nvidia/model.py MiniMaxM3MoE's router (GateLinear params_dtype
  float32), from 0.24.0 (the first release with vllm/models/minimax_m3), and its e_score_correction_bias, built with
  use_routing_bias in 0.24.0-0.33.0 and always from 0.34.0;
- Ling / Ring 2.0 (bailing_moe): bailing_moe.py BailingMoE, the same in every release from 0.11.0: the router where
  router_dtype is "fp32" and gate.expert_bias with moe_router_enable_expert_bias true (False where left out);
- Sarvam-MoE: bailing_moe.py BailingMoE (sarvam.py SarvamMoEForCausalLM, from 0.18.0): the router where
  router_dtype is "fp32" (nn.Linear dtype=, GateLinear params_dtype= from 0.31) and gate.expert_bias with
  moe_router_enable_expert_bias true;
- dots.llm1, Solar Open, MiniCPM5-MoE on the Transformers backend: the HF gate's e_score_correction_bias, a buffer
  that transformers/base.py keep_in_fp32 keeps in float32 from 0.28.0 (the HF classes' _keep_in_fp32_modules_strict,
  transformers 5.25), and that the newest transformers builds in float32 in 0.24.0-0.27.1 (no keep_in_fp32 there:
  the buffer keeps the installed class's dtype; FP32_RULES below); dots1.py (0.11.0-0.23.0) built it in the model
  dtype;
- Inkling's text model: vllm/models/inkling/nvidia/moe.py InklingGate's bias (the table's
  mlp.gate.e_score_correction_bias) and global_scale, each only with the config's use_gate_bias / use_global_scale,
  from 0.26.0 (the first release with vllm/models/inkling);
- GLM-5-Next, Qwen4-Exp and Bamba: see FP32_RULES below (GLM-5-Next's hyper-connections only with mhc true).

Searched in 0.34 (float32 parameters, buffers and params_dtype, GateLinear's arguments) and found in the model
dtype: Llama (and InternLM3), Mistral, Qwen2 / 2.5-VL, Qwen3 (MoE, VL, Next, 3.5), Mixtral, Llama 4, Gemma 2 / 3 /
4 / 4 Unified, gpt-oss (its sinks: make_attention_sink in the default dtype), Phi-3, ERNIE-4.5 dense, MiMo, Granite,
Cohere2, EXAONE 4, GLM-4, LFM2, MiniCPM3, and the Mamba families but for their mixers' A (above); Gemma, GLM and
OLMo 3 vLLM 0.34 serves through its Transformers backend (registry.py), not read. Read in every release from the
model file's first and found in the model dtype: Cohere2-MoE (cohere2_moe.py, 0.21.0+: Cohere2Moe's GateLinear
without params_dtype), HunYuan-MoE (hunyuan_v1.py up to 0.28.0; from 0.29.0 the Transformers backend, whose
ReplicatedLinear for the HF gate.wg, an nn.Linear of dtype float32 in transformers, takes the model dtype, and whose
keep_in_fp32 has nothing to keep: HunYuanMoEV1's class names no _keep_in_fp32_modules_strict), Qwen4-Exp but for its
Gated DeltaNet A_log (hyper-connections in bfloat16 whatever the checkpoint's dtype). ZAYA1: zaya.py ZayaRouter's
balancing_biases is a float32 buffer (num_experts + 1 a MoE layer, whole) that no checkpoint tensor fills and
kvplan's table does not count: not added.
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
Granite 4.0-H), Gated DeltaNet's A_log (Qwen3-Next; Qwen3.5 from 0.5.23), Ling 3.0's router (router_dtype "fp32")
and expert_bias, and Ling / Ring 2.5's LM head (bailing_moe_linear.py
ParallelLMHead params_dtype float32; vLLM builds it in the model dtype). Both SGLang releases read a config field
vLLM 0.34 ignores for LongCat-Flash: its router is float32 only where rounter_params_dtype is "float32" or left out
(longcat_flash.py LongcatFlashMoE, bfloat16 otherwise); MiMo-V2's gate follows moe_router_dtype in 0.5.23 as in
vLLM, and is float32 whatever it says in 0.5.9 (mimo_v2_flash.py MoEGate). The same everywhere else read:
LongCat-Flash, LFM2-MoE, MiniMax-M2, DeepSeek's noaux_tc bias and DSA indexer k_norm, Ling / Ring 2.5's router and
expert_bias. For the families of
weight_tables/moe_more.py, vl_more.py and hybrid_more.py: EXAONE MoE's score bias (exaone_moe.py, both releases; its
gate in the model dtype), AFMoE's expert_bias (afmoe.py, both; the gate, which vLLM holds in float32, in the model
dtype), Hunyuan 3's gate and expert_bias (hunyuan_v3.py, 0.5.23), Beam's gate and score bias (beam.py, 0.5.23),
MiniMax-M3's score bias only with use_routing_bias and its router in bfloat16 under SGLANG_OPT_USE_BF16_ROUTER_GEMM
(minimax_m3.py, 0.5.23: on by default, so not added), Sarvam-MoE as Ling 2.0 (sarvam_moe.py, 0.5.23), Inkling's gate
bias and global_scale with their flags (inkling_common/moe.py, 0.5.23), GLM-5-Next's hyper-connections, score bias
and KDA parameters (glm5_next.py, 0.5.23; its indexer not read); for Param2, dots.llm1, Solar Open and MiniCPM5-MoE
SGLang has no model file of its own (its Transformers fallback not read); HunYuan-MoE's gate (hunyuan.py) and
Cohere2-MoE's (cohere2_moe.py) in the model dtype. Step-3.5, Step-5, Muse Spark's text model and vLLM's own Inkling
config (inkling_model) have their rules below the table's others (their tables came last). Not covered: the float32
routers and biases of families kvplan has no per-module table for (grok.py, llada2.py, iquest_q1.py); ROCm builds
(aiter keeps some of these in bf16); and the MTP / NextN drafters.
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
        from ..core.releases import at_least

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
    # Ling / Ring 2.0: vLLM (bailing_moe.py BailingMoE, the same in every release 0.11.0-0.34.0): the gate (nn.Linear,
    # GateLinear from 0.2x) in float32 where router_dtype is "fp32" (bfloat16 where it names another, the model dtype
    # where left out), its expert_bias float32 where moe_router_enable_expert_bias is true (False where left out)
    "bailing_moe": (_rules((0, 11, 0), "bailing_moe.py BailingMoE (router_dtype)", "mlp.gate",
                           only_if=("router_dtype", "fp32"), sglang=SGLANG_BOTH,
                           sglang_source="bailing_moe.py BailingMoEGate (router_dtype)")
                    + _rules((0, 11, 0), "bailing_moe.py BailingMoE (gate.expert_bias float32)", "mlp.gate.expert_bias",
                             only_if=("moe_router_enable_expert_bias", True), sglang=SGLANG_BOTH,
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
# Both engines build the hc_* only where the config's mhc is true (vLLM's Glm5NextDecoderLayer reads config.mhc, which
# transformers 5.25's config lacks; SGLang's Glm5NextTextConfig defaults it to false), so the rule asks for it.
# SGLang 0.5.23 glm5_next.py (0.5.9 has no GLM-5-Next): Glm5NextDecoderLayer's hc_* (float32 nn.Parameters),
# Glm5NextMoE (deepseek_v2.py DeepseekV2MoE: MoEGate's e_score_correction_bias float32 under noaux_tc),
# Glm5NextLinearAttention's dt_bias, A_log and qkv_conv1d (MergedColumnParallelLinear params_dtype float32: the
# checkpoint's q/k/v_conv1d), split over TP; its indexer (DeepseekV2AttentionMLA's) not read for them
_GLM5N = "glm5next/common/"
_SG_GLM5N = "glm5_next.py Glm5NextDecoderLayer / Glm5NextMoE / Glm5NextLinearAttention"
FP32_RULES["glm5_next_text"] = (
    _rules((0, 33, 0), f"{_GLM5N}model.py Glm5NextDecoderLayer", *(f"hc_{h}_{p}" for h in ("attn", "ffn")
                                                                    for p in ("fn", "base", "scale")),
           only_if=("mhc", True), sglang=SGLANG_NEW, sglang_source=_SG_GLM5N)
    + _rules((0, 33, 0), f"{_GLM5N}model.py Glm5NextMoE", "mlp.gate.e_score_correction_bias", sglang=SGLANG_NEW,
             sglang_source=_SG_GLM5N)
    + _rules((0, 33, 0), f"{_GLM5N}attention.py Indexer", "indexer.index_kpool_compress_ape", "indexer.k_norm")
    + _rules((0, 33, 0), f"{_GLM5N}kda.py Glm5NextLinearAttention", "self_attn.dt_bias", "self_attn.A_log",
             "self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d", sglang=SGLANG_NEW,
             sglang_source=_SG_GLM5N))

# configs/weight_tables/moe_more.py and vl_more.py families, bisected in the wheels of every release of
# engines/vllm_registry_data.py RELEASES (each model file read from its first release to 0.34.0)
# EXAONE MoE: exaone_moe.py ExaoneMoe builds e_score_correction_bias (nn.Parameter dtype=torch.float32) from 0.14.0,
# the file's first release; its gate (ReplicatedLinear up to 0.30, GateLinear from 0.31, no params_dtype) in the
# model dtype throughout. SGLang 0.5.9 and 0.5.23 exaone_moe.py ExaoneMoeSparseMoeBlock the same (bias only)
FP32_RULES["exaone_moe"] = _rules((0, 14, 0), "exaone_moe.py ExaoneMoe (its gate in the model dtype)",
                                  "mlp.e_score_correction_bias", sglang=SGLANG_BOTH,
                                  sglang_source="exaone_moe.py (e_score_correction_bias float32; the gate in the "
                                  "model dtype)")
# AFMoE (Arcee Trinity): afmoe.py AfmoeMoE from 0.11.1, its first release: the router (nn.Linear dtype=torch.float32
# up to 0.30, GateLinear params_dtype=torch.float32 from 0.31; the checkpoint's mlp.router.gate) and expert_bias
# (float32). SGLang 0.5.9 / 0.5.23 afmoe.py: expert_bias float32, the gate (ReplicatedLinear) in the model dtype
_AFMOE = "afmoe.py AfmoeMoE"
FP32_RULES["afmoe"] = (_rules((0, 11, 1), f"{_AFMOE} (gate: nn.Linear / GateLinear float32)", "mlp.router.gate")
                       + _rules((0, 11, 1), _AFMOE, "mlp.expert_bias", sglang=SGLANG_BOTH,
                                sglang_source="afmoe.py (expert_bias float32; the gate in the model dtype)"))
# Hunyuan 3: hy_v3.py HYV3MoEFused's gate (GateLinear params_dtype=torch.float32) from 0.20.0, the file's first
# release; its expert_bias in the model dtype 0.20.0-0.25.1 (torch.empty without a dtype), float32 from 0.26.0.
# Not a default: from 0.30.0 HYV3Attention builds q_norm / k_norm in float32 only where HpcRopeNorm.support() holds
# (layers/hpc/rope_norm.py, read in 0.30.0, 0.31.0, 0.32.0, 0.33.0 and 0.34.0): first of all
# attention_config.backend == HPC_ATTN, which only --attention-backend HPC_ATTN sets (no platform's priority list
# names it: HPC_ATTN appears only in v1/attention/backends/registry.py and hpc_attn.py; no model's
# verify_and_update_config picks it), then head_dim 128, 4 or 8 query heads per KV head and an fp8_e4m3 / auto /
# bfloat16 KV cache. kvplan's vLLM profile plans the default backend, on every GPU, so the norms stay in the model
# dtype (with the flag: 2 x head_dim a layer more, e.g. 256 parameters, 512 B). SGLang 0.5.23 hunyuan_v3.py HYV3MoEFused: both
# gate (ReplicatedLinear params_dtype float32) and expert_bias float32 (0.5.9 has no Hunyuan 3 model)
_HYV3 = "hy_v3.py HYV3MoEFused"
_SG_HYV3 = "hunyuan_v3.py HYV3MoEFused (gate params_dtype float32, expert_bias float32)"
FP32_RULES["hy_v3"] = (_rules((0, 20, 0), f"{_HYV3} (GateLinear params_dtype float32)", "mlp.router.gate",
                              sglang=SGLANG_NEW, sglang_source=_SG_HYV3)
                       + _rules((0, 26, 0), f"{_HYV3} (expert_bias float32; model dtype 0.20-0.25)",
                                "mlp.expert_bias", sglang=SGLANG_NEW, sglang_source=_SG_HYV3))
# Param2: param2moe.py Param2MoEMoEBlock builds gate.e_score_correction_bias (the checkpoint's mlp.gate.expert_bias)
# in float32 from 0.20.0, the file's first release, where the config's moe_router_enable_expert_bias is true or left
# out; its gate an nn.Linear in the model dtype 0.20.0-0.30.0 (cast to float32 in forward), GateLinear
# params_dtype=torch.float32 from 0.31.0. SGLang 0.5.9 / 0.5.23 have no Param2 model
_P2 = "param2moe.py Param2MoEMoEBlock"
FP32_RULES["param2moe"] = (_rules((0, 31, 0), f"{_P2} (GateLinear params_dtype float32; nn.Linear 0.20-0.30)",
                                  "mlp.gate")
                           + _rules((0, 20, 0), f"{_P2} (gate.e_score_correction_bias)", "mlp.gate.expert_bias",
                                    only_if=("moe_router_enable_expert_bias", (None, True))))
# Beam: vllm/models/beam/nvidia/moe.py BeamSparseMoeBlock, the gate (GateLinear params_dtype=torch.float32) and
# gate.e_score_correction_bias (float32), from 0.33.0, the first release with vllm/models/beam. SGLang 0.5.23 beam.py
# the same (ReplicatedLinear params_dtype float32, the bias float32; 0.5.9 has no Beam model)
FP32_RULES["beam"] = _rules((0, 33, 0), "models/beam/nvidia/moe.py BeamSparseMoeBlock", "mlp.gate",
                            "mlp.gate.e_score_correction_bias", sglang=SGLANG_NEW,
                            sglang_source="beam.py (gate params_dtype float32, e_score_correction_bias float32)")
# MiniMax-M3's text model: vllm/models/minimax_m3/nvidia/model.py MiniMaxM3MoE (CUDA), the router (GateLinear
# params_dtype=torch.float32) from 0.24.0, the first release with vllm/models/minimax_m3 (read in 0.24.0 to 0.34.0),
# and e_score_correction_bias in float32, built where the config's use_routing_bias is true in 0.24.0-0.33.0 and
# always from 0.34.0 (torch.zeros where the checkpoint has none; read in the 0.24.0, 0.30.0, 0.33.0 and 0.34.0
# wheels); its norms in the model dtype. SGLang 0.5.23
# minimax_m3.py MiniMaxM3MoE: the bias float32 only with the config's use_routing_bias; the router float32 only with
# SGLANG_OPT_USE_BF16_ROUTER_GEMM off (environ.py: on by default, so bfloat16: not added); 0.5.9 has no MiniMax-M3
_M3 = "models/minimax_m3/nvidia/model.py MiniMaxM3MoE"
FP32_RULES["minimax_m3_vl_text"] = (
    _rules((0, 24, 0), _M3, "block_sparse_moe.gate")
    + _rules((0, 24, 0), f"{_M3} (use_routing_bias)", "block_sparse_moe.e_score_correction_bias",
             only_if=("use_routing_bias", True))
    + _rules((0, 34, 0), f"{_M3} (always)", "block_sparse_moe.e_score_correction_bias")
    + _rules(None, _NONE, "block_sparse_moe.e_score_correction_bias", only_if=("use_routing_bias", True),
             sglang=SGLANG_NEW, sglang_source="minimax_m3.py MiniMaxM3MoE (use_routing_bias)"))

# Sarvam-MoE (Ling's table, configs/weight_tables/moe_more.py): vLLM's SarvamMoEForCausalLM is bailing_moe.py's
# BailingMoeForCausalLM (sarvam.py, from 0.18.0, its first release): BailingMoE builds the router in the config's
# router_dtype (nn.Linear dtype=router_dtype up to 0.30, GateLinear params_dtype=router_dtype from 0.31: float32 only
# where it is "fp32"; left out: the model dtype) and gate.expert_bias in float32, built only where the config says
# moe_router_enable_expert_bias true (getattr(config, ..., False): transformers 5.25's SarvamMoeConfig has no such
# field, so a config.json that leaves it out gets none in vLLM, whatever kvplan's table counts). SGLang 0.5.23
# sarvam_moe.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoEForCausalLM, whose BailingMoESparseMoeBlock /
# BailingMoEGate build the same router and expert_bias (the same two conditions); 0.5.9 has no Sarvam-MoE model
_SARVAM = "bailing_moe.py BailingMoE (sarvam.py SarvamMoEForCausalLM)"
FP32_RULES["sarvam_moe"] = (
    _rules((0, 18, 0), f"{_SARVAM} (router_dtype)", "mlp.gate", only_if=("router_dtype", "fp32"),
           sglang=SGLANG_NEW, sglang_source="bailing_moe.py BailingMoEGate (router_dtype; sarvam_moe.py)")
    + _rules((0, 18, 0), f"{_SARVAM} (gate.expert_bias float32)", "mlp.gate.expert_bias",
             only_if=("moe_router_enable_expert_bias", True), sglang=SGLANG_NEW,
             sglang_source="bailing_moe.py BailingMoEGate (expert_bias; sarvam_moe.py)"))

# dots.llm1, Solar Open, MiniCPM5-MoE: vLLM runs them on its Transformers backend (dots1.py, 0.11.0-0.23.0, built
# the score bias in the model dtype: torch.empty without a dtype; 0.24+ has no dots1.py). From 0.28.0 transformers/
# base.py TransformersBase.keep_in_fp32 upcasts every tensor without a weight_loader whose name matches the HF
# class's _keep_in_fp32_modules_strict (transformers 5.25's modeling_dots1 / solar_open / minicpm5_moe name
# "e_score_correction_bias" and "gate.weight"): fusers/moe.py MoEBlockFuser.gate keeps the HF score bias as a
# buffer of the GateLinear, so it is float32, while the gate's weight (a vLLM parameter) stays in the model dtype.
# 0.24.0-0.27.1 have no keep_in_fp32: the HF gate's buffer keeps the dtype the installed transformers' class builds it
# in (0.24.0-0.26.0 leave the HF gate as it is; 0.27.x MoEBlockFuser.gate re-registers the same buffer), and
# AutoModel.from_config(dtype=the model dtype) makes the default dtype the model's while it builds. Those releases
# require transformers>=5.5.3 (0.29.0 and 0.30.0 >=5.10.4) with no upper bound (the wheels' METADATA), so the newest
# transformers is what installs, as kvplan assumes for 0.34 (the newest it accepts: engines/vllm_served.py). Read
# in transformers 5.5.3, 5.8.0, 5.10.4, 5.12.1, 5.13.1, 5.14.1, 5.15.1, 5.16.1, 5.18.0, 5.20.2, 5.21.1, 5.22.2, 5.23.0,
# 5.24.0 and 5.25.0: Solar Open's buffer is torch.zeros(..., dtype=torch.float32) in all of them; dots1's is
# torch.zeros(n) (the model dtype under from_config) up to 5.23.0 and dtype=torch.float32 from 5.24.0; minicpm5_moe
# exists only in 5.25.0 (float32). So all three are float32 from 0.24.0 with the newest transformers (dots1 with
# transformers < 5.24 in 0.24-0.27: the model dtype, not modelled). Not modelled either: from 5.24.0 the classes'
# _keep_in_fp32_modules_strict also name "gate.weight", which 0.28.0-0.30.0 (unbounded) would then keep in float32
# where the gate is not a vLLM layer; 0.31+ cap transformers below 5.24 (0.34: < 5.23.0). SGLang 0.5.9 / 0.5.23 have
# none of these models
_TF_KEEP = ("transformers/base.py keep_in_fp32, fusers/moe.py MoEBlockFuser.gate (the HF score bias; 0.24-0.27: "
            "the HF class's float32 buffer)")
FP32_RULES.update(dict.fromkeys(("dots1", "solar_open", "minicpm5_moe"),
                                _rules((0, 24, 0), _TF_KEEP, "mlp.gate.e_score_correction_bias")))
# Inkling's text model: vllm/models/inkling/nvidia/moe.py InklingGate builds its score bias (the table's
# mlp.gate.e_score_correction_bias) and global_scale in float32 where the config's use_gate_bias / use_global_scale
# are true (vLLM's own InklingModelConfig: false by default, and then it builds neither), from 0.26.0, the first
# release with vllm/models/inkling; the gate weight and the dense MLP's global_scale in the model dtype. SGLang 0.5.23
# inkling_common/moe.py InklingGate the same (0.5.9 has no Inkling)
_INK = "models/inkling/nvidia/moe.py InklingGate"
_SG_INK = "inkling_common/moe.py InklingGate (use_gate_bias / use_global_scale)"
FP32_RULES["inkling_text"] = (
    _rules((0, 26, 0), f"{_INK} (bias)", "mlp.gate.e_score_correction_bias", only_if=("use_gate_bias", True),
           sglang=SGLANG_NEW, sglang_source=_SG_INK)
    + _rules((0, 26, 0), f"{_INK} (global_scale)", "mlp.gate.global_scale", only_if=("use_global_scale", True),
             sglang=SGLANG_NEW, sglang_source=_SG_INK))

# vLLM's own Inkling config (inkling_model, the TML checkpoints' names: configs/weight_tables/step_more.py): the same
# InklingGate as inkling_text's, its bias named mlp.gate.bias
FP32_RULES["inkling_model"] = (
    _rules((0, 26, 0), f"{_INK} (bias)", "mlp.gate.bias", only_if=("use_gate_bias", True), sglang=SGLANG_NEW,
           sglang_source=_SG_INK)
    + _rules((0, 26, 0), f"{_INK} (global_scale)", "mlp.gate.global_scale", only_if=("use_global_scale", True),
             sglang=SGLANG_NEW, sglang_source=_SG_INK))

# Step-3.5 (step3p5; Step-3.7's text model): vLLM step3p5.py's MoE block (FusedMoEBlock; 0.15.1, the file's first
# release, its own float32 gate class) builds the router with params_dtype float32 and router_bias an nn.Parameter of
# moe_num_experts in float32 (read in the 0.15.1, 0.16.0, 0.32.0 wheels and 0.34.0; need_fp32_gate and
# use_moe_router_bias are asserted true). SGLang 0.5.9 / 0.5.23 step3p5.py Step3p5MoEMLP: the gate a ReplicatedLinear
# in the model dtype, router_bias float32 where use_moe_router_bias is true
_S35 = "step3p5.py FusedMoEBlock (router GateLinear params_dtype float32, router_bias float32)"
FP32_RULES["step3p5"] = (
    _rules((0, 15, 1), _S35, "moe.gate")
    + _rules((0, 15, 1), _S35, "moe.router_bias", only_if=("use_moe_router_bias", True), sglang=SGLANG_BOTH,
             sglang_source="step3p5.py Step3p5MoEMLP (router_bias float32; the gate in the model dtype)"))
# Step-5: vllm/models/step5/nvidia/model.py Step5MoE, the router (GateLinear params_dtype float32) and router_bias
# (float32), from 0.33.0, the first release with vllm/models/step5 (read in 0.33.0 and 0.34.0); SGLang has no Step-5
FP32_RULES["step5"] = _rules((0, 33, 0), "models/step5/nvidia/model.py Step5MoE (router and router_bias float32)",
                             "moe.gate", "moe.router_bias")
# Muse Spark's text model: vllm/models/muse_spark/nvidia/model.py MuseSparkMoE, the router (GateLinear params_dtype
# float32) and its expert_bias (a float32 buffer; the checkpoint's mlp.gate.e_score_correction_bias), from 0.33.0, the
# first release with vllm/models/muse_spark (read in 0.33.0 and 0.34.0); SGLang 0.5.23 muse_spark.py the same
# (router_in_fp32, e_score_correction_bias float32), 0.5.9 has no Muse Spark
FP32_RULES["muse_spark_text"] = _rules(
    (0, 33, 0), "models/muse_spark/nvidia/model.py MuseSparkMoE (router float32, expert_bias float32)", "mlp.gate",
    "mlp.gate.e_score_correction_bias", sglang=SGLANG_NEW,
    sglang_source="muse_spark.py (router_in_fp32; e_score_correction_bias float32)")

# Mistral Large 4's text model: vllm/models/mistral/nvidia/indexer.py MistralIndexer builds k_norm as a LayerNorm of
# dtype torch.float32 (weight and bias), from 0.34.0, the first release with vllm/models/mistral (0.33.0 has none);
# SGLang not read for it. Its wk_weights_proj is built unquantized (quant_config=None), a load-time difference for a
# quantized checkpoint that is not modelled
FP32_RULES["mistral_large4_text"] = _rules(
    (0, 34, 0), "models/mistral/nvidia/indexer.py MistralIndexer (k_norm LayerNorm dtype float32)", "indexer.k_norm")

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
    """The first rule (in FP32_RULES' order) whose suffix ends m's name, or None. A module may have two rules, a
    conditional one from an earlier release listed before an unconditional one from a later release (MiMo-V2's and
    MiniMax-M3's score biases): where the config meets the first's condition (live), it wins."""
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
