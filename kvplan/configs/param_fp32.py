"""The parameters vLLM builds in float32 whatever the checkpoint's dtype: MoE routers and their score-correction
biases, and one indexer norm. kvplan's plan sizes them as the checkpoint stores them (its float width); vLLM loads
each into a float32 parameter, so its weights hold (4 - width) B more per parameter (engines/vllm_fp32.py adds
them to vLLM's profile).

One rule per module, by the end of its name in kvplan's per-module table (configs/param_modules.py), with the first
vLLM release that holds it in float32, bisected in the released sdists (0.11.0, 0.11.1, 0.12.0, 0.13.0, 0.14.0,
0.16.0, 0.17.0, 0.18.0, 0.20.0, 0.20.1, 0.20.2, 0.21.0, 0.22.0, 0.23.0, 0.24.0, 0.25.0, 0.26.0, 0.27.0, 0.30.0,
0.31.0, 0.32.0, 0.33.0, 0.34.0; each rule in the releases its bisection needed; where a family's model file
first appears with the rule, that release is given). What vLLM 0.34 builds in float32 (model_executor/models/*.py,
vllm/models/*):

- ERNIE-4.5-MoE: ernie45_moe.py Ernie4_5_MoeMoE, gate (GateLinear params_dtype=torch.float32) and
  gate.e_score_correction_bias (the checkpoint's moe_statics) from 0.11.1 (0.11.0: both in the model dtype);
- LongCat-Flash: longcat_flash.py LongcatMoe router_params_dtype = torch.float32 for LongcatRouter's classifier and
  e_score_correction_bias (0.11-0.33: when the config's router_dtype is "float32", the default of vLLM's own
  LongcatFlashConfig);
- LFM2-MoE: lfm2_moe.py Lfm2MoeSparseMoeBlock gate.e_score_correction_bias (the checkpoint's expert_bias), from its
  first release (0.11.1); the gate itself in the model dtype;
- GLM-4.5 / 4.6 / 4.7 and GLM-4.7-Flash: glm4_moe.py Glm4MoE gate (params_dtype float32; an nn.Linear of dtype
  float32 in 0.11) and gate.e_score_correction_bias; glm4_moe_lite.py Glm4MoeLite inherits it
  (in 0.16.0, the first release read that has the file: 0.14.0 lacks it, 0.15 has no sdist);
- MiniMax-M2: minimax_m2.py MiniMaxM2MoE gate (params_dtype float32) and e_score_correction_bias (built only with
  use_routing_bias), from 0.11.1;
- Laguna: laguna.py LagunaMoE's e_score_correction_bias (float32 "regardless of model dtype"), from its first
  release, 0.21.0 (0.20.2 has no laguna.py);
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
  0.34.0.

Searched in 0.34 (float32 parameters, buffers and params_dtype, GateLinear's arguments) and found in the model
dtype: Llama (and InternLM3), Mistral, Qwen2 / 2.5-VL, Qwen3 (MoE, VL, Next, 3.5), Mixtral, Llama 4, Gemma 2 / 3 /
4 / 4 Unified, gpt-oss (its sinks: make_attention_sink in the default dtype), Phi-3, ERNIE-4.5 dense, MiMo, Granite,
Cohere2, EXAONE 4, GLM-4, LFM2, MiniCPM3, and the Mamba families but for their mixers' A (below); Gemma, GLM and
OLMo 3 vLLM 0.34 serves through its Transformers backend (registry.py), not read.
Not covered: the MTP drafters (engines/vllm_draft_weights.py), whose MoE layers reuse these classes. DeepSeek-V4's
float32 parameters are stored in float32 by its checkpoint and sized by configs/compressed.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .fields import Fields


@dataclass(frozen=True)
class Fp32Rule:
    """A module vLLM builds in float32 (weight and `other`), from release `first`."""

    suffix: str  # the end of the module's name in the table ("mlp.gate" matches "layers.3.mlp.gate")
    first: tuple[int, int, int]  # the first vLLM release that builds it in float32
    source: str  # the vLLM file and class that build it so (0.34)
    # vLLM builds it only where the config's field has this value (DeepseekV2MoE: topk_method "noaux_tc";
    # MiniMaxM2MoE: use_routing_bias true); None: always
    only_if: tuple[str, object] | None = None
    # from this release float32 only on GPUs without GateLinear's own router kernels: not CUDA capability 9.0 nor
    # 10.x (GateLinear(force_fp32_compute=True), fused_moe/router/gate_linear.py); None: on every GPU
    gpu_dependent_from: tuple[int, int, int] | None = None

    def held(self, version, capability: tuple[int, int] | None) -> bool | None:
        """Whether vLLM `version` (None: the newest release read, 0.34) holds it in float32 on a GPU of this CUDA
        capability; None where that depends on the GPU and the capability is not known."""
        from ..engines.vllm_release import at_least

        if version is not None and not at_least(version, self.first):
            return False
        if self.gpu_dependent_from is None or (version is not None and not at_least(version,
                                                                                    self.gpu_dependent_from)):
            return True
        if capability is None:
            return None
        return not (capability == (9, 0) or capability[0] == 10)


def _rules(first: tuple[int, int, int], source: str, *suffixes: str, **kw) -> tuple[Fp32Rule, ...]:
    return tuple(Fp32Rule(s, first, source, **kw) for s in suffixes)


_GLM = _rules((0, 11, 0), "glm4_moe.py Glm4MoE (glm4_moe_lite.py Glm4MoeLite inherits it)", "mlp.gate",
              "mlp.gate.e_score_correction_bias")
_DEEPSEEK = (_rules((0, 11, 0), "deepseek_v2.py DeepseekV2MoE", "mlp.gate.e_score_correction_bias",
                    only_if=("topk_method", "noaux_tc"))
             + _rules((0, 32, 0), "deepseek_v32/attention.py DeepseekV32Indexer, deepseek_v2.py Indexer",
                      "indexer.k_norm"))

# the Mamba mixers' A (the checkpoints' A_log, loaded as -exp(A_log)): layers/mamba/mamba_mixer.py MambaMixer and
# mamba_mixer2.py MambaMixer2 build it with dtype=torch.float32 (0.11.0, 0.33.0, 0.34.0), split over TP
_MAMBA1_A = _rules((0, 11, 0), "layers/mamba/mamba_mixer.py MambaMixer (A)", "A_log")
_MAMBA2_A = _rules((0, 11, 0), "layers/mamba/mamba_mixer2.py MambaMixer2 (A)", "A_log")

# model_type (as kvplan's tables are keyed) -> its rules
VLLM_FP32: dict[str, tuple[Fp32Rule, ...]] = {
    "ernie4_5_moe": _rules((0, 11, 1), "ernie45_moe.py Ernie4_5_MoeMoE", "mlp.gate",
                           "mlp.moe_statics.e_score_correction_bias"),
    "longcat_flash": _rules((0, 11, 0), "longcat_flash.py LongcatMoe / LongcatRouter", "router.classifier",
                            "router.e_score_correction_bias"),
    "lfm2_moe": _rules((0, 11, 1), "lfm2_moe.py Lfm2MoeSparseMoeBlock", "feed_forward.expert_bias"),
    "glm4_moe": _GLM,
    "glm4_moe_lite": _GLM,
    "minimax_m2": (_rules((0, 11, 1), "minimax_m2.py MiniMaxM2MoE", "block_sparse_moe.gate")
                   + _rules((0, 11, 1), "minimax_m2.py MiniMaxM2MoE", "block_sparse_moe.e_score_correction_bias",
                            only_if=("use_routing_bias", True))),
    "laguna": _rules((0, 21, 0), "laguna.py LagunaMoE", "mlp.experts.e_score_correction_bias"),
    "deepseek_v3": _DEEPSEEK,
    "kimi_k2": _DEEPSEEK,
    "deepseek_v32": _DEEPSEEK,
    "glm_moe_dsa": _DEEPSEEK,
    "kimi_linear": _rules((0, 27, 0), "models/kimi_k3/nvidia/model.py (MoE gate)", "gate.e_score_correction_bias"),
    "nemotron_h": (_rules((0, 11, 1), "nemotron_h.py NemotronHMoE", "gate.e_score_correction_bias")
                   + _rules((0, 11, 1), "nemotron_h.py NemotronHMoE, fused_moe/router/gate_linear.py GateLinear",
                            "gate", gpu_dependent_from=(0, 17, 0))),
}
VLLM_FP32.update({"mamba": _MAMBA1_A, "falcon_mamba": _MAMBA1_A, "jamba": _MAMBA1_A,  # mamba.py, jamba.py
                  "mamba2": _MAMBA2_A, "granitemoehybrid": _MAMBA2_A, "falcon_h1": _MAMBA2_A, "zamba2": _MAMBA2_A})
VLLM_FP32["nemotron_h"] += _MAMBA2_A


def mark(f: Fields, modules: list) -> list:
    """The table with Module.vllm_fp32 set on the modules vLLM builds in float32 (VLLM_FP32)."""
    rules = VLLM_FP32.get(f.model_type)
    if not rules or not modules:
        return modules
    live = [r for r in rules if r.only_if is None or f.raw.get(r.only_if[0]) == r.only_if[1]]
    out = []
    for m in modules:
        rule = next((r for r in live if m.name == r.suffix or m.name.endswith("." + r.suffix)), None)
        out.append(replace(m, vllm_fp32=rule) if rule else m)
    return out
