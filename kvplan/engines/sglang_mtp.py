"""SGLang 0.5.23's own MTP drafts of MiMo-7B, ERNIE-4.5 MoE, Nemotron-H and MiMo-V2 (`--engine sglang --mtp`).

Read in the 0.5.23 wheel (python/sglang/srt/...; PyPI has no sdist of it); 0.5.9's are not read, so
`--engine sglang@0.5.9 --mtp` refuses these families (Rules.mtp_targets).

- The draft class: configs/model_config.ModelConfig._config_draft_model renames the target's architecture for
  the draft worker: MiMoForCausalLM -> MiMoMTP (models/mimo_mtp.py), Ernie4_5_MoeForCausalLM ->
  Ernie4_5_MoeForCausalLMMTP (ernie4_eagle.py), NemotronHForCausalLM / NemotronHPuzzleForCausalLM ->
  NemotronHForCausalLMMTP (nemotron_h_mtp.py), MiMoV2ForCausalLM / MiMoV2FlashForCausalLM -> MiMoV2MTP
  (mimo_v2_nextn.py). All four are in 0.5.23's registry (sglang_registry_data).
- What each builds: MiMoMTP one Qwen2DecoderLayer (map_model_name_to_mtp_param_name folds every
  model.mtp_layers.N into it), Ernie4_5_MoeForCausalLMMTP one Ernie4DecoderLayer(is_mtp=True) (a dense
  LlamaAttention + DeepseekV2MLP, mtp_layer_id 0), NemotronHForCausalLMMTP one step of
  mtp_hybrid_override_pattern; MiMoV2MTP one MiMoV2MTPLayer, and MiMo-V2 runs multi-layer EAGLE
  (arg_groups/model_overrides/mimo_v2.py sets enable_multi_layer_eagle), so the draft worker holds one MiMoV2MTP
  per speculative step (managers/tp_worker._init_multi_layer_eagle_model_runners: speculative_num_steps runners,
  runner i the checkpoint's MTP layer i).
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
  bias from use_bias).
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
}
MULTI_LAYER = frozenset({"mimo_v2", "mimo_v2_flash"})  # one draft module per speculative step


def is_sglang_mtp(model: ModelSpec) -> bool:
    return model.model_type in DRAFTS


def draft_layers(model: ModelSpec) -> int:
    """The draft layers SGLang 0.5.23 prices into the target's cell: the target's num_nextn_predict_layers
    (eagle_draft_num_layers); a refusal where the architecture is not one it renames or the config names none."""
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
    return model.mtp_layers


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


__all__ = ["DRAFTS", "draft_layers", "is_sglang_mtp", "local_draft_layers", "module_weights"]
