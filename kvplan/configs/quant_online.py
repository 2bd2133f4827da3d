"""Online quantization: an engine's `--quantization fp8` on a float (BF16 / FP16) checkpoint, which the engine
quantizes while it loads it. Its resident bytes are those of a checkpoint stored in the same layout, so the rule
names that layout as a quantization_config and configs/quant_bytes.py sizes it module by module
(configs/weight_tables: linear layers and routed experts quantized; embeddings, LM head, norms, biases and
routers kept at 2 B) like any quantized config.

vLLM 0.34.0 (the rules read; model_executor/model_loader/weight_utils.py get_quant_config, config/quantization.py
_ONLINE_SHORTHANDS, layers/quantization/online/fp8.py):
  fp8             deprecated alias of fp8_per_tensor ("--quantization fp8 is deprecated for online quantization";
                  Fp8Config itself refuses a float checkpoint)
  fp8_per_tensor  Fp8PerTensorOnlineLinearMethod: every LinearBase's weight in FP8 with one float32 weight_scale
                  per module (fused qkv_proj / gate_up_proj: one); Fp8PerTensorOnlineMoEMethod: the routed experts
                  in FP8 with float32 w13 / w2 scales per expert (_EXPERT_SCALES, counted so). kvplan counts 4 B
                  per checkpoint tensor of the linear layers (q, k, v apart): a few KB more than vLLM holds (the
                  fused modules are the model class's packed_modules_mapping, not one place in kvplan)
  fp8_per_channel Fp8PtpcOnlineLinearMethod / Fp8PtpcOnlineMoEMethod: FP8 with a float32 scale per output row
                  ([out, 1]); a row-parallel module's rows are whole, so its scales sit whole on each TP rank
  fp8_per_block   Fp8PerBlockOnlineLinearMethod / MoEMethod: FP8 with a float32 scale per 128 x 128 block (the
                  MoE method pads hidden and intermediate sizes to 128: not counted)
  experts_int8    experts_int8.py ExpertsInt8Config: LinearBase unquantized, the routed experts
                  (Int8OnlineMoEMethod, online/int8.py _quantize_weights) int8 with float32 w13_scale / w2_scale
                  [experts, rows]: a scale per output row of each expert
  Not quantized: VocabParallelEmbedding and ParallelLMHead (not LinearBase: base_config.py resolve_quant_method),
  norms, and MoE routers but those of VLLM_QUANTIZED_ROUTERS (a GateLinear built with the quant_config is a
  LinearBase like any other: fp8 schemes quantize it; experts_int8 leaves every LinearBase unquantized).
  The load: OnlineLinearBase creates each weight on the meta device and reload/layerwise.py
  _layerwise_process materializes one module in the checkpoint's dtype, loads it, quantizes it and frees the
  16-bit copy, so the load's peak is the FP8 weights plus one module in BF16; "Model loading took" counts what is
  allocated after the load (utils/mem_utils.py DeviceMemoryProfiler) and the profile starts after empty_cache, so
  neither the KV budget nor the weights term holds the transient; the start check (gpu_worker.py init_device,
  request_memory: free memory against gpu_memory_utilization) runs before the load, and DeviceMemoryProfiler's
  get_current_memory_usage (platforms/cuda.py) resets the peak before it reads, so nothing vLLM checks sees it:
  a note, not a term (only a CUDA out-of-memory during the load, one module's bf16 copy beyond what the FP8
  weights leave of the GPU, could fail on it; the planner leaves (1 - mem_util) x memory + reserve).
  Refused: a checkpoint whose config names another quant_method ("Quantization method specified in the model
  config (X) does not match ...": config/model.py _verify_quantization); a checkpoint already "fp8" with
  --quantization fp8, and those whose method's override_quantization_method ignores the user's value (ModelOpt,
  auto-round, gpt-oss's mxfp4, DeepSeek-V4 / V4.1's fp8: _vllm_keeps), are served as stored (no online step).
  An empty `quantization_config: {}` is a config that names no method (configs/checkpoint_dtype.py
  checkpoint_quantization_config, the one reading of where it sits): refused, "(None) does not match".
  Minimum capability 75 (OnlineQuantizationConfig), 80 for experts_int8 (ExpertsInt8Config.get_min_capability):
  refused below it as vLLM refuses the start (engines/vllm_sm7.py, the catalog's T4 and V100 cards).

SGLang 0.5.23 (srt/layers/quantization/fp8.py, srt/model_loader/loader.py):
  fp8             Fp8Config with is_checkpoint_fp8_serialized False: Fp8LinearMethod.create_weights builds the
                  weights in the checkpoint's dtype, and after the whole model has loaded
                  (DefaultModelLoader.load_weights_and_postprocess: load_weights_only, then postprocess_weights)
                  process_weights_after_loading quantizes each module: per output row (per_token_group_quant_fp8
                  with the whole row a group, a float32 scale a row) where CUTLASS FP8 or Marlin runs (CUDA), the
                  routed experts (Fp8MoEMethod) with one float32 scale per expert for w13 and for w2
                  (_EXPERT_SCALES); routers kept (qwen3_moe.py, mixtral.py build the gate without quant_config).
                  The load holds the whole model in BF16 first (its share on each GPU), then the FP8 weights:
                  estimate warns and fit drops the splits where a GPU's share does not fit (sglang_load_excess).
  Refused as vLLM does (model_config.py _verify_quantization: the same message; an empty quantization_config
  passes that check, the flag taken as its method, and fails in Fp8Config.from_config, which finds no
  quant_method; fp8 with a "fp8" checkpoint is served as stored, and so is a ModelOpt FP8 / FP4 / mixed NVFP4
  one, whose override ignores the flag: _sglang_keeps). Minimum capability 80 (Fp8Config.get_min_capability):
  refused below it as SGLang refuses the load (engines/sglang_sm7.py, the catalog's T4 and V100 cards).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from .quant_bytes import QuantBytes

# model_types whose MoE router vLLM 0.34 builds with the quant_config, so that its online FP8 quantizes the router like
# any LinearBase (online/base.py OnlineQuantizationConfig.resolve_quant_method_cls: every LinearBase not ignored):
# qwen3_moe.py Qwen3MoeSparseMoeBlock (GateLinear(..., quant_config=quant_config); qwen3_vl_moe.py's text layers are
# Qwen3MoeDecoderLayer) and lfm2_moe.py Lfm2MoeSparseMoeBlock. Every other family kvplan sizes builds its GateLinear
# without one (mixtral.py, qwen2_moe.py, qwen3_next.py, deepseek_v2.py, glm4_moe.py, minimax_m2.py, gemma4.py's
# Gemma4Router.proj ...) and keeps it in the float dtype; k2_horizon.py passes it too (kvplan has no table of it)
VLLM_QUANTIZED_ROUTERS = ("qwen3_moe", "qwen3_vl_moe_text", "lfm2_moe")
# the image-text wrappers whose vision tower and projector linears the engine builds as LinearBase with the model's
# quant_config, so that its online FP8 quantizes them like the text model's (configs/vision_count.py Tower.linears).
# vLLM 0.34: gemma3_mm.py (SiglipVisionModel; siglip.py SiglipMLP leaves fc1 / fc2 without it where the sizes are not
# multiples of 64, Gemma 3's 1,152 / 4,304; the projector's mm_input_projection_weight is an nn.Parameter),
# llava.py / llava_next.py (CLIP or SigLIP, LlavaMultiModalProjector), mistral3.py (PixtralHFVisionModel, linear_1 /
# linear_2; the patch merger's nn.Linear not), qwen2_5_vl.py, qwen3_vl.py / qwen3_vl_moe.py / qwen3_5.py
# (Qwen2_5_VisionTransformer, Qwen3_VisionTransformer with its mergers); internvl.py / h2ovl.py / nvlm_d.py /
# skyworkr1v.py _init_vision_model (intern_vit.py InternVisionModel: qkv, proj, fc1 / fc2; InternVL's mlp1 is nn.Linear,
# Skywork-R1V's two ReplicatedLinears built with it: whole and quantized), interns1.py
# (interns1_vit.py: fc1 / fc2; its attention is nn.Linear), glm4_1v.py (Glm4vVisionTransformer, its merger too),
# phi3v.py (_init_img_processor: CLIPVisionModel; img_projection is nn.Linear), qwen2_5_omni_thinker.py and
# qwen3_omni_moe_thinker.py (visual; their audio_tower is built without it: vision_count.py _audio_layers),
# minicpmv.py / minicpmo.py (init_vision_module: Idefics2VisionTransformer, fc1 / fc2 too; init_resampler: the
# resampler's kv_proj, a ReplicatedLinear, whole and quantized; its nn.MultiheadAttention and proj stay float; the
# MiniCPM-o apm and audio projection are plain nn modules).
# Not: mllama4.py (Llama4VisionModel and its
# projector built with quant_config=None), kimi_vl.py (moonvit.py MoonVitPretrainedModel and the projector take
# none), phi4mm.py (get_navit_vision_model builds the Idefics2VisionTransformer without it), gemma4_mm.py (_get_tower_quant_config: a size rule on a transformers tower
# kvplan counts as whole modules, not read further). SGLang 0.5.23: gemma3_mm.py (its siglip.py passes the
# quant_config to every linear, fc1 / fc2 too), qwen2_5_vl.py and glm4v.py / glm4v_moe.py (Glm4vVisionModel with it:
# VisionAttention, the MLPs, the merger, whose proj is a ReplicatedLinear there); its qwen3_vl.py builds the tower
# with quant_config=None, as internvl.py its InternVisionModel (InternMLP's fc1 / fc2 quant_config=None), and the
# others are not read (their towers kept in the float dtype)
VLLM_QUANTIZED_TOWERS = ("gemma3", "llava", "llava_next", "mistral3", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe",
                         "qwen3_5", "qwen3_5_moe", "internvl_chat", "internvl", "NVLM_D", "h2ovl_chat", "skywork_chat",
                         "glm4v", "glm4v_moe", "phi3_v", "qwen2_5_omni", "qwen3_omni_moe", "minicpmv", "minicpmo")
SGLANG_QUANTIZED_TOWERS = ("gemma3", "qwen2_5_vl", "glm4v", "glm4v_moe")
# one float32 scale for each routed expert's fused w13 and one for its w2: vLLM 0.34 online/fp8.py
# Fp8PerTensorOnlineMoEMethod.process_weights_after_loading (w13_scale / w2_scale [local_num_experts]) and SGLang
# 0.5.23 fp8.py Fp8MoEMethod.process_weights_after_loading on a float checkpoint (w13_weight_scale re-made
# [num_local_experts], w2_weight_scale [num_experts]); under TP every rank holds every expert's
_EXPERT_SCALES = 2 * 4

_PER_TENSOR = {"quant_method": "fp8", "activation_scheme": "dynamic"}
_PER_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
# one float32 scale per output row of every linear layer and expert (compressed-tensors' float "channel" layout,
# which configs/quant_bytes.py reads); the LM head kept, as neither engine quantizes it
_PER_CHANNEL = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
                "config_groups": {"online": {"targets": ["Linear"],
                                             "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}

# the routed experts only, int8 with a float32 scale per output row; every other module (linear layers, routers,
# shared experts) unquantized (OnlineLayout.routed_experts_only): found by the per-module count's routed-expert entries
# (Module.experts), as names do not tell them (Granite MoE's block_sparse_moe.input_linear / output_linear are routed
# experts)
_EXPERTS_INT8 = {"quant_method": "compressed-tensors", "format": "int-quantized", "ignore": ["lm_head"],
                 "config_groups": {"online": {"targets": ["Linear"],
                                              "weights": {"num_bits": 8, "type": "int", "strategy": "channel"}}}}


@dataclass(frozen=True)
class OnlineLayout:
    """What an engine's online layout holds beyond the checkpoint format that stands for its bytes (Scheme.config),
    applied by configs/weight_format.py to the QuantBytes that format reads to."""
    expert_scale_bytes: int | None = None  # QuantBytes.expert_scale_bytes: the scales of each routed expert
    quantized_router_families: tuple[str, ...] = ()  # QuantBytes.quantized_router_families
    routed_experts_only: bool = False  # the routed experts quantized, every other module kept (experts_int8)
    quantized_towers: tuple[str, ...] = ()  # wrapper model_types whose vision tower linears it quantizes
    tower_unaligned: bool = False  # also the tower linears vLLM's SigLIP MLP leaves out (SGLang quantizes them)

    def applied(self, q: QuantBytes) -> QuantBytes:
        """The format's QuantBytes with this layout's additions."""
        q = replace(q, expert_scale_bytes=self.expert_scale_bytes,
                    quantized_router_families=self.quantized_router_families)
        if self.routed_experts_only:  # whatever the format's own list says (quant_exclude.ROUTED_EXPERTS_ONLY)
            from .quant_exclude import ROUTED_EXPERTS_ONLY

            q = replace(q, exclusions=(ROUTED_EXPERTS_ONLY, ()))
        return q


@dataclass(frozen=True)
class Scheme:
    name: str  # what the engine runs: fp8_per_tensor ...
    config: dict  # a checkpoint quantization_config stored in the layout the engine holds
    label: str  # the weights in words
    layout: OnlineLayout = OnlineLayout()  # what it holds beyond that format


_VLLM_LAYOUT = OnlineLayout(quantized_router_families=VLLM_QUANTIZED_ROUTERS, quantized_towers=VLLM_QUANTIZED_TOWERS)
_VLLM = {
    "fp8_per_tensor": Scheme("fp8_per_tensor", _PER_TENSOR, "FP8 per-tensor",
                             replace(_VLLM_LAYOUT, expert_scale_bytes=_EXPERT_SCALES)),
    "fp8_per_channel": Scheme("fp8_per_channel", _PER_CHANNEL, "FP8 per-channel", _VLLM_LAYOUT),
    "fp8_per_block": Scheme("fp8_per_block", _PER_BLOCK, "FP8 block-scaled 128x128", _VLLM_LAYOUT),
    "experts_int8": Scheme("experts_int8", _EXPERTS_INT8, "int8 routed experts (per-channel), the rest unquantized",
                           OnlineLayout(routed_experts_only=True)),
}
_VLLM_ALIASES = {"fp8": "fp8_per_tensor"}  # vLLM 0.34 weight_utils.py get_quant_config
# SGLang 0.5.23: per-channel linears, one scale per expert per projection; its routers stay in the float dtype
# (qwen3_moe.py: the gate's quant_config is None but for modelslim; mixtral.py quant_config=None)
_SGLANG = {"fp8": Scheme("fp8 (per-channel linears)", _PER_CHANNEL, "FP8 per-channel",
                         OnlineLayout(expert_scale_bytes=_EXPERT_SCALES, quantized_towers=SGLANG_QUANTIZED_TOWERS,
                                      tower_unaligned=True))}

ENGINES = {"vllm": "vLLM 0.34", "sglang": "SGLang 0.5.23"}
READ_RELEASES = {"vllm": "0.34.0", "sglang": "0.5.23"}  # the releases whose online quantization was read


def values(engine: str) -> tuple[str, ...]:
    """The --quantization values kvplan sizes for this engine ("vllm", "sglang")."""
    return tuple(sorted(_SGLANG)) if engine == "sglang" else tuple(sorted({*_VLLM, *_VLLM_ALIASES}))


def check(value: str, engine: str) -> str:
    """The value, lower-cased (as both engines read it), or UsageError in one line."""
    text = str(value).strip().lower()
    if text == "bitsandbytes" and engine == "vllm":  # engines/vllm_quant_support.py BITSANDBYTES_REMOVED_IN
        raise UsageError("--quantization bitsandbytes: vLLM 0.34 has none (removed in 0.28.0: 'Unknown quantization "
                         "method: bitsandbytes')", f"its online methods are {', '.join(values(engine))}")
    if text not in values(engine):
        raise UsageError(f"--quantization {value!r}: kvplan sizes {ENGINES[engine]}'s online "
                         f"{', '.join(values(engine))} on a float checkpoint",
                         "leave it out to serve the checkpoint as stored")
    return text


def scheme(value: str, engine: str) -> Scheme:
    if engine == "sglang":
        return _SGLANG[value]
    return _VLLM[_VLLM_ALIASES.get(value, value)]


def _method(q: dict) -> str:
    """The config's quant_method, lower-cased; "" where it names none (an empty `quantization_config: {}`)."""
    method = str(q.get("quant_method") or "").lower()
    if not method and isinstance(q.get("quantization"), dict):  # hf_quant_config.json's layout: ModelOpt's
        method = "modelopt"
    return method


# the model types whose fp8 checkpoint vLLM 0.34 claims as deepseek_v4_fp8 on CUDA: get_quantization_config takes the
# V4.1 class there (layers/quantization/__init__.py), models/deepseek_v41/quant_config.py override_quantization_method
_DEEPSEEK_V4_TYPES = frozenset({"deepseek_v4", "deepseek_v4_text", "deepseek_v41", "deepseek_v41_text"})


def _vllm_keeps(q: dict, method: str, model_type: str) -> str | None:
    """The method vLLM 0.34 serves this checkpoint with whatever --quantization says: the overrides that do not read
    the user's value (config/model.py _verify_quantization runs override_quantization_method and takes its answer):
    modelopt.py ModelOpt{Fp8,NvFp4,MxFp8,MixedPrecision}Config (by quant_algo), inc.py INCConfig (auto-round),
    mxfp4.py GptOssMxfp4Config (gpt-oss's mxfp4), models/deepseek_v41/quant_config.py (DeepSeek-V4 / V4.1's fp8)."""
    if method.startswith("modelopt"):
        inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
        algo = str(inner.get("quant_algo") or "").upper()
        if algo in ("FP8", "MIXED_PRECISION") or "FP4" in algo or "MXFP8" in algo:
            return f"modelopt ({algo})"
    if method == "auto-round":
        return "inc"
    if method in ("mxfp4", "gpt_oss_mxfp4") and model_type == "gpt_oss":
        return "gpt_oss_mxfp4"
    if method in ("fp8", "deepseek_v4_fp8") and model_type in _DEEPSEEK_V4_TYPES:
        return "deepseek_v4_fp8"
    return None


# vLLM 0.34 layers/quantization/modelopt.py: the ModelOpt config whose override_quantization_method claims a quant_algo
# (ModelOptFp8Config "FP8", ModelOptNvFp4Config "NVFP4" / "FP4", ModelOptMxFp8Config "MXFP8", ModelOptMixedPrecision
# "MIXED_PRECISION"), in the order get_quantization_config tries them
_VLLM_MODELOPT_NAMES = (("MXFP8", "modelopt_mxfp8"), ("FP4", "modelopt_fp4"))


def vllm_method(q: dict | None, model_type: str) -> str | None:
    """The name of the QuantizationConfig vLLM 0.34 builds for a checkpoint's quantization_config (its
    get_quantization_config key after override_quantization_method: AWQ as auto_awq, gpt-oss's mxfp4 as
    gpt_oss_mxfp4, ModelOpt by quant_algo, auto-round as inc); None for no config or one naming no method."""
    if not isinstance(q, dict):
        return None
    method = _method(q)
    if not method:
        return None
    if method.startswith("modelopt"):
        inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
        algo = str(inner.get("quant_algo") or "").upper()
        if algo == "MIXED_PRECISION":
            return "modelopt_mixed"
        return next((name for key, name in _VLLM_MODELOPT_NAMES if key in algo), "modelopt")
    if method == "awq":  # auto_awq.py AutoAWQConfig.override_quantization_method
        return "auto_awq"
    kept = _vllm_keeps(q, method, model_type)
    return kept or method


def _sglang_keeps(q: dict, method: str) -> str | None:
    """The method SGLang 0.5.23 serves this checkpoint with whatever --quantization fp8 says: a ModelOpt checkpoint,
    which configs/model_config.py _parse_modelopt_quant_config names modelopt_fp8 (quant_algo FP8), modelopt_fp4
    (FP4 / NVFP4) or modelopt_mixed (MIXED_PRECISION with NVFP4 layers), and whose override takes that name
    (layers/quantization/base_config.py _modelopt_override_quantization_method, modelopt_quant.py
    ModelOptMixedPrecisionConfig.override_quantization_method; _verify_quantization then takes its answer)."""
    if method in ("modelopt_fp8", "modelopt_fp4", "modelopt_mixed"):
        return method
    if method != "modelopt":
        return None
    inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
    algo = str(inner.get("quant_algo") or "").upper()
    if algo == "FP8":
        return "modelopt_fp8"
    if "FP4" in algo:
        return "modelopt_fp4"
    layers = inner.get("quantized_layers") if isinstance(inner.get("quantized_layers"), dict) else {}
    if algo == "MIXED_PRECISION" and any(isinstance(v, dict) and str(v.get("quant_algo") or "").upper()
                                         in ("NVFP4", "W4A16_NVFP4") for v in layers.values()):
        return "modelopt_mixed"
    return None


def sglang_method_below_sm80(q: dict | None, model_type: str = "") -> str | None:
    """The QUANTIZATION_METHODS key SGLang 0.5.23 serves a checkpoint's quantization_config with on a card below SM
    8.0 (configs/model_config.py _verify_quantization after override_quantization_method): ModelOpt by its algo
    (_sglang_keeps), else the config's quant_method. AWQ and GPTQ keep their names there: AWQMarlinConfig /
    GPTQMarlinConfig claim them only where Marlin runs, SM 8.0 on (marlin_utils.py query_marlin_supported_quant_types
    returns no type below 80). None for no config or one naming no method. model_type: unused (no SGLang override
    reads it), for the shape vllm_method has."""
    if not isinstance(q, dict):
        return None
    method = _method(q)
    return (_sglang_keeps(q, method) or method) if method else None


def apply(raw: dict, value: str, engine: str) -> tuple[dict | None, Scheme | None, str]:
    """(the config with the quantization_config the engine's online layout amounts to, or None where the checkpoint
    is served as stored; the scheme; a note). UsageError where the engine refuses the flag for this checkpoint."""
    from .checkpoint_dtype import checkpoint_quantization_config

    name = ENGINES[engine]
    q = checkpoint_quantization_config(raw)
    if q is not None:
        stored = _method(q)
        if not stored:  # no method named (`quantization_config: {}`): build.checkpoint_quantization_config
            why = ("'Quantization method specified in the model config (None) does not match the quantization "
                   f"method specified in the `quantization` argument ({value})' (config/model.py "
                   "_verify_quantization)" if engine == "vllm" else
                   "'Cannot find any of ['quant_method'] in the model's quantization config' (fp8.py "
                   "Fp8Config.from_config)")
            raise UsageError(f"--quantization {value}: {name} refuses this checkpoint, whose quantization_config "
                             f"names no quant_method: {why}", "remove the empty quantization_config from "
                             "config.json for online quantization")
        if stored == value:  # e.g. an FP8 checkpoint with --quantization fp8: loaded as stored, nothing online
            return None, None, (f"--quantization {value}: the checkpoint is {stored} already, and {name} loads it as "
                                "stored (no online quantization)")
        kept = (_vllm_keeps(q, stored, str(raw.get("model_type") or "")) if engine == "vllm" else
                _sglang_keeps(q, stored))
        if kept is not None:
            return None, None, (f"--quantization {value}: {name} serves this {stored} checkpoint as {kept} whatever the "
                                "flag says (its override of the method), as stored: no online quantization")
        raise UsageError(f"--quantization {value}: {name} refuses this checkpoint: 'Quantization method specified in "
                         f"the model config ({stored}) does not match the quantization method specified in the "
                         f"`quantization` argument ({value})'", "online quantization needs a float checkpoint")
    s = scheme(value, engine)
    return {**raw, "quantization_config": dict(s.config)}, s, ""


def quantized_tower(raw: dict, layout: OnlineLayout | None):
    """(the QuantBytes of the engine's online layout, whether it also quantizes the linears vLLM's SigLIP MLP leaves
    out) where the engine's online quantization (the quantization_config apply() names) quantizes this wrapper's vision
    tower linears (VLLM_QUANTIZED_TOWERS, SGLANG_QUANTIZED_TOWERS); None for a checkpoint's own quantization, which is
    taken to keep its tower in the float dtype, for experts_int8 (LinearBase unquantized) and for other wrappers."""
    from .quant_bytes import read

    q = raw.get("quantization_config")
    if layout is None or not isinstance(q, dict) or raw.get("model_type") not in layout.quantized_towers:
        return None
    return layout.applied(read(q, str(raw.get("model_type")))), layout.tower_unaligned


def served_float32_as(engine: str, raw: dict) -> str:
    """The 16-bit dtype the engine's dtype "auto" serves a float32 checkpoint in, which it then quantizes: vLLM 0.34
    config/model.py _get_and_verify_dtype downcasts float32 to the platform's preferred dtype (bfloat16 on the
    catalog's CUDA cards); SGLang 0.5.23 configs/model_config.py _get_and_verify_dtype (on hf_text_config) to float16,
    bfloat16 for a model_type starting with "gemma"."""
    from .resolve_family import nested_text

    if engine != "sglang":
        return "bfloat16"
    text = nested_text(raw) or raw
    return "bfloat16" if str(text.get("model_type") or "").startswith("gemma") else "float16"


def load_note(engine: str, held_bytes: int, dtype: str) -> str:
    """What the load holds beside the resident weights, in words (held_bytes: the checkpoint in the dtype the engine
    serves it in, `dtype`)."""
    if engine == "sglang":
        return (f"it loads the whole checkpoint in {dtype} ({held_bytes / 2**30:,.2f} GiB, each GPU its "
                "TP / PP share) before it quantizes (loader.py load_weights_and_postprocess): each GPU must hold that "
                "share at load")
    return ("it quantizes module by module as the tensors arrive (online/fp8.py OnlineLinearBase on the meta device, "
            f"reload/layerwise.py): the load's peak is the quantized weights plus one module in {dtype}, which "
            "'Model loading took' and the profile do not count")


def sglang_load_excess(model, gpu, tp: int, pp: int) -> int | None:
    """SGLang 0.5.23 holds the whole float checkpoint before it quantizes (load_note): a GPU's share of it (its
    bytes in the 16-bit dtype SGLang serves it in, over TP x PP) where that is more than the GPU's memory, so the
    load runs out of memory; None where it fits, or without --quantization. The one rule `estimate` warns by and
    `fit` screens by."""
    if not model.online_quantization or not model.online_float_bytes:
        return None
    share = model.online_float_bytes // (tp * pp)
    return share if share > gpu.usable_bytes else None


def sglang_load_refusal(model, gpu, tp: int, pp: int) -> str | None:
    """Why SGLang 0.5.23's load runs out of memory on this split (sglang_load_excess), in words; None where not."""
    share = sglang_load_excess(model, gpu, tp, pp)
    if share is None:
        return None
    return (f"SGLang 0.5.23 would run out of memory loading with --quantization {model.online_quantization}: "
            f"it holds the {model.weight_dtype.rpartition(' + ')[2]} checkpoint before quantizing it, "
            f"{share / 2**30:,.2f} GiB a GPU at TP {tp} x PP {pp}, more than the {gpu.name}'s "
            f"{gpu.usable_bytes / 2**30:,.2f} GiB (loader.py DefaultModelLoader.load_weights_and_postprocess)")


def sglang_load_warning(model, deployment) -> str | None:
    """estimate's warning line where SGLang 0.5.23's load of the float checkpoint does not fit (sglang_load_refusal);
    None where it fits, or without --quantization or a GPU."""
    gpu = getattr(deployment, "gpu", None)
    line = None if gpu is None else sglang_load_refusal(model, gpu, deployment.tp, deployment.pp)
    if line is None:
        return None
    return (f"warning: {line}; use more GPUs, vLLM (which quantizes module by module), or an FP8 checkpoint")


__all__ = ["Scheme", "ENGINES", "READ_RELEASES", "values", "check", "scheme", "apply", "quantized_tower",
           "served_float32_as", "load_note", "sglang_load_excess", "sglang_load_refusal", "sglang_load_warning"]
