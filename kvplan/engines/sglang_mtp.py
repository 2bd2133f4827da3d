"""SGLang 0.5.23's own MTP drafts of MiMo-7B, ERNIE-4.5 MoE, Nemotron-H, MiMo-V2 and Step-3.5
(`--engine sglang --mtp`).

Read in the 0.5.23 wheel (python/sglang/srt/...; PyPI has no sdist of it); 0.5.9's are not read, so
`--engine sglang@0.5.9 --mtp` refuses these families (Rules.mtp_targets).

- The draft class: configs/model_config.ModelConfig._config_draft_model renames the target's architecture for
  the draft worker: MiMoForCausalLM -> MiMoMTP (models/mimo_mtp.py), Ernie4_5_MoeForCausalLM ->
  Ernie4_5_MoeForCausalLMMTP (ernie4_eagle.py), NemotronHForCausalLM / NemotronHPuzzleForCausalLM ->
  NemotronHForCausalLMMTP (nemotron_h_mtp.py), MiMoV2ForCausalLM / MiMoV2FlashForCausalLM -> MiMoV2MTP
  (mimo_v2_nextn.py), Step3p5ForCausalLM -> Step3p5MTP (step3p5_mtp.py). All five are in 0.5.23's registry
  (sglang_registry_data).
- What each builds: MiMoMTP one Qwen2DecoderLayer (map_model_name_to_mtp_param_name folds every
  model.mtp_layers.N into it), Ernie4_5_MoeForCausalLMMTP one Ernie4DecoderLayer(is_mtp=True) (a dense
  LlamaAttention + DeepseekV2MLP, mtp_layer_id 0), NemotronHForCausalLMMTP one step of
  mtp_hybrid_override_pattern; MiMoV2MTP one MiMoV2MTPLayer, and MiMo-V2 runs multi-layer EAGLE
  (arg_groups/model_overrides/mimo_v2.py sets enable_multi_layer_eagle), so the draft worker holds one MiMoV2MTP
  per speculative step (managers/tp_worker._init_multi_layer_eagle_model_runners: speculative_num_steps runners,
  runner i the checkpoint's MTP layer i). Step3p5MTP likewise: one Step3p5DecoderLayer (`mtp_block`) per module,
  and Step-3.5 runs multi-layer EAGLE too (arg_groups/overrides.py _step3p_overrides), runner i loading checkpoint
  layer num_hidden_layers + i; but the block is built as config layer 45 whatever the config says
  (step3p5_mtp.py `layer_id = 45  # FIXME`): its kind is layer_types[45] (sliding: attention_other_setting's
  heads), its MLP MoE where 45 is in moe_layers_enum, and its attention's pool layer id 45 - num_hidden_layers.
  kvplan models the 45-layer shape only, and sizes that block without the checkpoint's quantization (it is built
  without quant_config).
- The pool prices the draft from the TARGET config: model_runner_components/spec_aux_hidden_state.
  _resolve_eagle_aux_hidden_state gives a path-less draft eagle_draft_num_layers = the target's
  num_nextn_predict_layers (absent: no draft layer priced), whatever the draft builds. DefaultPoolConfigurator
  adds int(cell x that / the target's KV layers) (Nemotron-H: its attention layers); MiMo-V2's
  HybridSWAPoolConfigurator prices min(that, the target's sliding layers) of them as sliding layers
  (eagle_draft_swa_num_layers), in the sliding cell x swa_full_tokens_ratio; a config with mtp_local_layer_ids
  prices those of the draft's layer ids as sliding layers at the full token count and the rest as full layers.
- The weights: the draft worker loads before the target's pool is sized (scheduler.init_model_worker) and takes
  the target's embedding and head only after (EAGLEWorkerV2 / MultiLayerEagleWorkerV2.alloc_memory_pool ->
  init_lm_head -> set_embed_and_head), so each module's own VocabParallelEmbedding and ParallelLMHead (/ TP;
  allocated even where the config ties them, Ernie4_5_MoeForCausalLMMTP excepted, whose head is then its
  embedding) count, beside the layer / TP and the projection joining embedding and hidden state (nn.Linear,
  whole, in MiMo / ERNIE / MiMo-V2; Nemotron-H's eh_proj a ColumnParallelLinear / TP). The layers are sized
  from the config (kvplan.weights.mtp, whose shapes were read in vLLM; SGLang's layers above have the same
  parameters: Nemotron-H's router a ReplicatedLinear without quant_config and its float32
  e_score_correction_bias, latent projections ReplicatedLinear; ERNIE's attention and mtp_linear_proj take their
  bias from use_bias). Step3p5MTP keeps its own embedding and head for good (set_embed_and_head does nothing).
"""

from __future__ import annotations

from ..core.model import ModelSpec
from ..errors import UsageError

# model_type -> (SGLang 0.5.23's draft class, the target architectures _config_draft_model renames to it)
DRAFTS: dict[str, tuple[str, frozenset[str]]] = {
    "mimo": ("MiMoMTP", frozenset({"MiMoForCausalLM"})),
    "ernie4_5_moe": ("Ernie4_5_MoeForCausalLMMTP", frozenset({"Ernie4_5_MoeForCausalLM"})),
    "nemotron_h": ("NemotronHForCausalLMMTP", frozenset({"NemotronHForCausalLM"})),
    "mimo_v2": ("MiMoV2MTP", frozenset({"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM"})),
    "mimo_v2_flash": ("MiMoV2MTP", frozenset({"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM"})),
    "step3p5": ("Step3p5MTP", frozenset({"Step3p5ForCausalLM"})),
}
MULTI_LAYER = frozenset({"mimo_v2", "mimo_v2_flash", "step3p5"})  # one draft module per speculative step
STEP3P5_LAYER = 45  # step3p5_mtp.py Step3p5AMultiTokenPredictor: `layer_id = 45  # FIXME`


def is_sglang_mtp(model: ModelSpec) -> bool:
    return model.model_type in DRAFTS


def draft_layers(model: ModelSpec, raw: dict | None = None) -> int:
    """The draft layers SGLang 0.5.23 prices into the target's cell: the target's num_nextn_predict_layers
    (eagle_draft_num_layers); a refusal where the architecture is not one it renames or the config names none,
    or (Step-3.5, raw: its config) where its layer-45 draft block does not fit the config."""
    name, targets = DRAFTS[model.model_type]
    if model.architecture not in targets:
        raise UsageError(f"SGLang: {model.name}'s MTP draft ({model.architecture or 'no architectures in its config'}) "
                         f"is not modelled: kvplan read "
                         f"0.5.23's {name} draft for {', '.join(sorted(targets))} (model_config._config_draft_model)",
                         "plan without the draft")
    if not model.mtp_layers:
        raise UsageError(f"SGLang: {model.name}'s config has no num_nextn_predict_layers, so SGLang 0.5.23 would "
                         "load no MTP weights for its draft and price no draft layer in the pool "
                         "(spec_aux_hidden_state._resolve_eagle_aux_hidden_state)", "plan without the draft")
    if model.model_type == "step3p5":
        _step3p5_block(model, raw)
    return model.mtp_layers


def _step3p5_block(model: ModelSpec, raw: dict | None) -> tuple[bool, dict]:
    """(sliding, the text config) of the block Step3p5MTP builds as config layer 45; a refusal where SGLang 0.5.23
    would build it from a config it does not fit."""
    from .sglang_rules import hf_text_config

    text = hf_text_config(raw or {})
    layers, types = text.get("num_hidden_layers"), text.get("layer_types")
    if not raw:
        raise UsageError(f"SGLang: {model.name}'s config fields are not at hand, and SGLang 0.5.23's Step3p5MTP "
                         "builds its draft block from them (layer_types, attention_other_setting, moe_layers_enum)",
                         "plan from the model's config.json, or without the draft")
    if layers != STEP3P5_LAYER:
        raise UsageError(f"SGLang: {model.name} has {layers} layers, but SGLang 0.5.23's Step3p5MTP builds its draft "
                         f"block as layer {STEP3P5_LAYER} whatever the config says (step3p5_mtp.py: layer_id = 45, "
                         f"a FIXME; its pool layer id 45 - num_hidden_layers), so kvplan models the 45-layer "
                         "Step-3.5 shape only", "plan without the draft, or use --engine vllm")
    if not isinstance(types, list) or len(types) <= STEP3P5_LAYER or types[STEP3P5_LAYER] not in (
            "full_attention", "sliding_attention"):
        raise UsageError(f"SGLang: {model.name}'s layer_types has no full_attention / sliding_attention entry for "
                         f"layer {STEP3P5_LAYER}, which SGLang 0.5.23's Step3p5MTP builds its draft block from "
                         "(Step3p5DecoderLayer reads layer_types[45]; the hub's config lists 48 entries)",
                         "plan without the draft, or use --engine vllm")
    sliding = types[STEP3P5_LAYER] == "sliding_attention"
    other = text.get("attention_other_setting")
    if sliding and not (isinstance(other, dict) and all(isinstance(other.get(key), int) and other[key] > 0
                                                         for key in ("num_attention_heads", "num_attention_groups"))):
        raise UsageError(f"SGLang: {model.name}'s layer {STEP3P5_LAYER} is sliding, but attention_other_setting "
                         "gives no num_attention_heads / num_attention_groups, which SGLang 0.5.23's "
                         "Step3p5DecoderLayer takes a sliding layer's heads from", "fix the config")
    return sliding, text


def local_draft_layers(model: ModelSpec, raw: dict | None, layers: int) -> int | None:
    """How many of the draft's layer ids 0..layers-1 the config's mtp_local_layer_ids lists (HybridSWAPoolConfigurator
    prices those as sliding layers at the full pool's tokens, the rest as full layers); None where it lists none."""
    from .sglang_rules import hf_text_config

    local = hf_text_config(raw or {}).get("mtp_local_layer_ids")
    if local is None:
        return None
    if not isinstance(local, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in local):
        raise UsageError(f"{model.name}'s mtp_local_layer_ids {local!r} is not a list of layer numbers",
                         "fix the config")
    return sum(i in set(local) for i in range(layers))


def module_weights(model: ModelSpec, raw: dict | None, tp: int, steps: int, release: str) -> tuple[int, str | None]:
    """(bytes on each GPU, how) of the draft modules SGLang 0.5.23 holds when it sizes the target's pool,
    estimated from the config; (0, why) where a piece is not sized."""
    from ..weights.mtp import _vocab, mtp_module
    from .sglang_rules import hf_text_config

    tp = max(tp, 1)
    if model.model_type == "step3p5":
        return _step3p5_weights(model, raw, tp, steps, release)
    text = hf_text_config(raw or {})
    name = DRAFTS[model.model_type][0]
    ernie = model.model_type == "ernie4_5_moe"
    bias = bool(text.get("use_bias")) if ernie else False
    if ernie:  # Ernie4DecoderLayer(is_mtp=True): LlamaAttention with bias=use_bias, DeepseekV2MLP without bias
        raw = {**(raw or {}), "attention_bias": bias, "bias": bias, "qkv_bias": bias, "mlp_bias": False}
    module = mtp_module(model, raw, 1)  # one layer (one step) per module, as each class builds it
    modules = steps if model.model_type in MULTI_LAYER else 1
    if module is None:
        return 0, (f"{model.name}'s {name} module could not be sized from its config: the draft's weights are not "
                   "subtracted, so the pool is high by their size on each GPU")
    plain = 4 if model.float_dtype in ("float32", "fp32") else 2  # unquantized tensors
    # one vocabulary x hidden matrix, unquantized (Nemotron-H's layout has none in vLLM, so it is not in copy_bytes)
    copy = module.copy_bytes or (_vocab(raw) or 0) * model.hidden_size * plain
    if not copy:
        return 0, (f"{model.name}'s vocabulary size is not in its config: {name}'s own embedding and head are not "
                   "subtracted, so the pool is high by their size on each GPU")
    # Ernie4_5_MoeConfig ties them unless the config says otherwise (transformers: tie_word_embeddings = True)
    copies = 1 if ernie and bool(text.get("tie_word_embeddings", (raw or {}).get("tie_word_embeddings", True))) else 2
    proj = module.proj_bytes + (model.hidden_size * plain if bias else 0)  # mtp_linear_proj's bias with use_bias
    if model.model_type == "nemotron_h":
        proj = -(-module.proj_bytes // tp)  # eh_proj: a ColumnParallelLinear
    one = -(-module.decoder_bytes // tp) + proj + module.norm_bytes + module.whole_bytes + copies * -(-copy // tp)
    return modules * one, (f"{module.how}; SGLang {release} builds {name} with its own embedding"
                           + ("" if copies == 1 else " and head") + " (vocabulary-parallel), replaced by the target's "
                           "only after the pool is sized" + (f", one module per speculative step ({modules})"
                                                              if model.model_type in MULTI_LAYER else ""))


def _step3p5_weights(model: ModelSpec, raw: dict | None, tp: int, steps: int, release: str) -> tuple[int, str | None]:
    """Step3p5MTP's modules (one per speculative step) as 0.5.23 builds them: Step3p5AMultiTokenPredictor's own
    VocabParallelEmbedding and SharedHead ParallelLMHead (vocab x hidden / TP each, kept: set_embed_and_head does
    nothing), enorm, hnorm and shared_head.norm (hidden each), eh_proj (nn.Linear 2 x hidden -> hidden, no bias,
    whole) and mtp_block, a Step3p5DecoderLayer built as layer 45 without quant_config: Step3p5Attention's qkv_proj
    (heads + 2 x K/V heads) x head_dim x hidden, o_proj heads x head_dim x hidden, no bias, q_norm and k_norm of
    head_dim, g_proj hidden x heads with use_head_wise_attn_gate (sliding: attention_other_setting's heads and
    groups), a dense Step3p5MLP of intermediate_size (gate_up 2 x, down 1 x hidden x it), two norms; / TP.
    Unquantized tensors at 2 B (4 in a float32 checkpoint)."""
    sliding, text = _step3p5_block(model, raw)
    name = DRAFTS[model.model_type][0]
    plain = 4 if model.float_dtype in ("float32", "fp32") else 2
    hidden, inter, vocab = (text.get(key) for key in ("hidden_size", "intermediate_size", "vocab_size"))
    other = text.get("attention_other_setting") if sliding else text
    heads, groups = (other.get(key) for key in ("num_attention_heads", "num_attention_groups"))
    head_dim = text.get("head_dim") or (hidden // heads if isinstance(hidden, int) and heads else None)
    enum = text.get("moe_layers_enum")
    moe = str(STEP3P5_LAYER) in [item.strip() for item in enum.split(",")] if isinstance(enum, str) else None
    fields = (hidden, inter, vocab, heads, groups, head_dim)
    if moe is not False or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in fields):
        why = ("layer 45 is a MoE layer (moe_layers_enum), whose block kvplan does not size" if moe else
               "moe_layers_enum is not a comma-separated string" if moe is None else
               "hidden_size, intermediate_size, vocab_size, the heads or head_dim are missing")
        return 0, (f"{model.name}'s {name} module is not sized ({why}): the draft's weights are not subtracted, so "
                   "the pool is high by their size on each GPU")
    gate = hidden * heads if text.get("use_head_wise_attn_gate") else 0
    layer = (hidden * (heads + 2 * groups) * head_dim + heads * head_dim * hidden + 2 * head_dim + gate
             + 3 * hidden * inter + 2 * hidden)
    one = (-(-layer * plain // tp) + 2 * hidden * hidden * plain + 3 * hidden * plain
           + 2 * -(-vocab * hidden * plain // tp))
    return steps * one, (f"{name} estimated from the config: a {'sliding' if sliding else 'full'}-attention, dense "
                         f"Step3p5DecoderLayer of {layer:,} parameters built as layer 45 without quant_config, eh_proj "
                         f"and three norms whole, and its own embedding and head (vocabulary-parallel, kept), all at "
                         f"{plain} B, one module per speculative step ({steps}); SGLang {release}")


__all__ = ["DRAFTS", "draft_layers", "is_sglang_mtp", "local_draft_layers", "module_weights"]
