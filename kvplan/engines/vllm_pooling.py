"""vLLM's pooling runner (embedding, classification and reward models) in the memory profile.

Read in the 0.29.0-0.32.0 wheels and the 0.33.0 and 0.34.0 sdists; the same in all six where not said.

Which runner a model gets (config/model.py ModelConfig._get_default_runner_type, `--runner auto`): for each of
the config's architectures in order, a registered one runs "pooling" when its class is a pooling model
(model_executor/models/registry.py is_pooling_model) and "generate" otherwise; an unregistered one takes its
suffix's runner (_SUFFIX_TO_DEFAULTS: ...ForSequenceClassification, ...ForTokenClassification, ...EmbeddingModel,
...RewardModel, a bare ...Model: pooling; kvplan.engines.vllm_served reads the same table). The registered pooling
classes are those of registry.py's _EMBEDDING_MODELS, _LATE_INTERACTION_MODELS, _REWARD_MODELS,
_TOKEN_CLASSIFICATION_MODELS and _SEQUENCE_CLASSIFICATION_MODELS that are not generation classes listed there for
conversion (LlamaModel, Qwen2Model, Qwen2ForCausalLM, Gemma2Model ... load the generation class and run
"generate" unless converted): EMBED_ARCHS and CLASSIFY_ARCHS below, by the table they sit in. Not seen by
kvplan: a Sentence Transformers checkpoint whose *ForCausalLM config ships a modules.json (get_pooling_config:
"pooling"), and an explicit --runner / --convert.

What the profile does for a pooling model (Model Runner V2, every model's runner from 0.29.0:
v1/worker/gpu/model_runner.py; the pooling models are not among _get_v2_model_runner_unsupported_features):

- load_model builds no Sampler (`if self.is_last_pp_rank and not self.is_pooling_model`), so there is no
  sampler warm-up and no PenaltiesState (no penalty bin counts kept after the profile);
- profile_run calls `_dummy_pooler_run(hidden_states)` instead of `_dummy_sampler_run`: gpu/pool/pooling_runner.py
  dummy_pooler_run runs each supported task once, one after the other (each output dropped), over all the
  max_num_batched_tokens hidden states split into min(tokens, max_num_seqs) requests;
- the poolers (model_executor/layers/pooler) work in the head dtype, float32 for the pooling runner
  (config/model.py _get_head_dtype). An embedding conversion (models/adapters.py as_embedding_model ->
  DispatchPooler.for_embedding: token_embed and embed) peaks in token_embed: beside the model-dtype hidden states
  (2 B a value, alive) 0.34's batched TokenEmbeddingPoolerHead.forward_batched holds their fp32 copy (_project)
  and F.normalize's fp32 result (_finish) at once, 2 + 4 + 4 B a value; the per-request path (0.29-0.33, and 0.34
  with chunked prefill) holds less (the outputs and one request's copy). A classification conversion
  (as_seq_cls_model -> for_seq_cls: token_classify and classify) and the reward models (token_classify) copy one
  request's rows to fp32 at a time: 2 B x hidden x tokens + 4 B x hidden x the largest request's rows (the fp32
  logits, num_labels wide, left out: 64 KiB at 8,192 tokens and 2 labels). The sequence tasks (embed, classify)
  keep one row a request, below either;
- CUDA graphs: PIECEWISE only (config/vllm.py: "Pooling models do not support full cudagraphs");
- the sampler warm-up after capture (gpu_worker.py compile_or_warm_up_model) is skipped for pooling models;
- the weights: a generation class converted by models/adapters.py (_create_pooling_model_cls) is built without its
  lm_head (no_init_weights over ParallelLMHead and LogitsProcessor), and a classification conversion adds a
  float32 score head. A checkpoint's tensors already say so (a converted checkpoint stores score.weight, no
  lm_head); kvplan's config-sized count does the same for every plan (configs/pooling_heads.py, read by
  configs/module_counts.py counted_params), and the profile adds only the score's float32 upcast.

Both pooler peaks are below the forward pass kvplan models (26 B per token per hidden unit, vllm_profile), so the
forward decides the activation term of a pooling model; what changes is that the sampler's peak and its buffers
are gone. Before 0.29 the pooling path is not read: kvplan keeps the sampler there and says so.
"""

from __future__ import annotations

import math

from .._record import record
from .vllm_release import at_least, release_key

POOLING_READ_FROM = (0, 29, 0)  # the releases whose pooling path was read (module doc): 0.29.0-0.34.0

# registry.py's pooling classes (module doc), by the table they sit in; 0.29.0-0.34.0 union (ClefOmni and
# EmbeddingGemma2 from 0.32, ClefFlash, ColUltraVBert, D3, Lfm2Bidirectional, ModernVBert from 0.33, UltraVBert
# from 0.34): whether a release registers one is the registry table's (vllm_registry_data), read per release
EMBED_ARCHS = frozenset({
    "BertForMaskedLM", "BertModel", "BertSpladeSparseEmbeddingModel", "BgeM3EmbeddingModel", "CLIPModel",
    "ColBERTJinaRobertaModel", "ColBERTLfm2Model", "ColBERTModernBertModel", "ColModernVBertForRetrieval",
    "ColPaliForRetrieval", "ColQwen3", "ColQwen3_5", "ColUltraVBertForRetrieval", "EmbeddingGemma2Model",
    "Gemma3TextModel", "GteModel", "GteNewModel", "HF_ColBERT", "JinaEmbeddingsV5Model", "JinaForRanking",
    "Lfm2BidirectionalModel", "LlamaBidirectionalModel", "LlamaNemotronVLModel", "ModernBertModel",
    "ModernVBertModel", "NomicBertModel", "OpsColQwen3Model", "Qwen3VLNemotronEmbedModel", "RobertaForMaskedLM",
    "RobertaModel", "SiglipModel", "Terratorch", "UltraVBertModel", "VoyageQwen3BidirectionalEmbedModel",
    "XLMRobertaModel",
})
CLASSIFY_ARCHS = frozenset({
    "BertForSequenceClassification", "BertForTokenClassification", "ClefFlashForJointSchema",
    "ClefOmniForJointSchema", "D3ForSequenceClassification", "GPT2ForSequenceClassification",
    "GteNewForSequenceClassification", "InternLM2ForRewardModel", "JambaForSequenceClassification",
    "JinaVLForRanking", "LlamaBidirectionalForSequenceClassification", "LlamaNemotronVLForSequenceClassification",
    "ModernBertForSequenceClassification", "ModernBertForTokenClassification",
    "OpenAIPrivacyFilterForTokenClassification", "Qwen2ForProcessRewardModel", "Qwen2ForRewardModel",
    "Qwen3ASRForcedAlignerForTokenClassification", "RobertaForSequenceClassification",
    "RobertaForTokenClassification", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
})

HIDDEN_BYTES = 2  # the model-dtype hidden states the runner hands the pooler (bf16/fp16)
HEAD_BYTES = 4  # the pooling runner's head dtype, float32
EMBED_BYTES_PER_TOKEN_PER_HIDDEN = HIDDEN_BYTES + 2 * HEAD_BYTES  # hidden states + fp32 copy + fp32 normalized


@record
class Pooling:
    kind: str  # "embed" (token_embed + embed) | "classify" (token_classify [+ classify])
    architecture: str
    how: str  # why the runner is "pooling" (registered class or suffix)
    converted: bool = False  # a generation class converted by models/adapters.py (an unregistered name's suffix)


def pooling_of(architectures, release) -> Pooling | None:
    """The pooling runner vLLM `release` gives a config's `architectures` by default (module doc), else None
    (a generate model, an unreadable release)."""
    from .vllm_served import _check_one, _match

    if release_key(release) is None:
        return None
    # a config's architectures may be anything (a bool, a dict): only its names are looked up
    names = [architectures] if isinstance(architectures, str) else (
        list(architectures) if isinstance(architectures, (list, tuple)) else [])
    for name in names:
        if not name or not isinstance(name, str):
            continue
        if _check_one(name, str(release)).served:
            kind = "embed" if name in EMBED_ARCHS else "classify" if name in CLASSIFY_ARCHS else None
            if kind is None:
                return None  # a registered generation class
            return Pooling(kind, name, f"registered pooling class {name} (model_executor/models/registry.py)")
        match = _match(name)
        if match is not None:
            runner, convert = match[1]
            if runner != "pooling":
                return None
            return Pooling("embed" if convert == "embed" else "classify", name,
                           f"{name} is not registered; its suffix {match[0]!r} sets --runner pooling --convert "
                           f"{convert} (config/model.py _SUFFIX_TO_DEFAULTS)", True)
    return None


def pooler_peak_bytes(kind: str, tokens: int, hidden_size: int, max_num_seqs: int) -> int:
    """The pooler's dummy-run peak over `tokens` hidden states of `hidden_size` (module doc): the hidden states
    themselves included."""
    if kind == "embed":
        return tokens * hidden_size * EMBED_BYTES_PER_TOKEN_PER_HIDDEN
    reqs = max(min(tokens, max_num_seqs), 1)
    return tokens * hidden_size * HIDDEN_BYTES + math.ceil(tokens / reqs) * hidden_size * HEAD_BYTES


def profiles_pooler(release) -> bool:
    """Whether kvplan models `release`'s pooling profile (read from 0.29.0); before, the sampler is kept."""
    return at_least(release, POOLING_READ_FROM)


__all__ = ["Pooling", "pooling_of", "pooler_peak_bytes", "profiles_pooler", "POOLING_READ_FROM", "EMBED_ARCHS",
           "CLASSIFY_ARCHS", "EMBED_BYTES_PER_TOKEN_PER_HIDDEN"]
