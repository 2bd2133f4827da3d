"""vLLM's default runner by an architecture's suffix (vLLM 0.34 config/model.py _SUFFIX_TO_DEFAULTS and
try_match_architecture_defaults), read by kvplan.engines.vllm_served (conversions, vllm_pooling) and by the
config-sized weight count (configs/pooling_heads.py), which must not load the engines for a causal LM."""

from __future__ import annotations

# an architecture's suffix -> (runner, convert), in vLLM's order
SUFFIX_DEFAULTS = (("ForCausalLM", ("generate", "none")), ("ForConditionalGeneration", ("generate", "none")),
                   ("ChatModel", ("generate", "none")), ("LMHeadModel", ("generate", "none")),
                   ("ForTextEncoding", ("pooling", "embed")), ("EmbeddingModel", ("pooling", "embed")),
                   ("ForSequenceClassification", ("pooling", "classify")),
                   ("ForTokenClassification", ("pooling", "classify")),
                   ("ForAudioClassification", ("pooling", "classify")),
                   ("ForImageClassification", ("pooling", "classify")),
                   ("ForVideoClassification", ("pooling", "classify")),
                   ("ClassificationModel", ("pooling", "classify")), ("ForRewardModeling", ("pooling", "embed")),
                   ("RewardModel", ("pooling", "embed")), ("Model", ("pooling", "embed")))


def match(name: str, runner=None, convert=None):
    """config/model.py try_match_architecture_defaults: the first suffix of `name` (with those defaults)."""
    return next(((suffix, rc) for suffix, rc in SUFFIX_DEFAULTS if (runner is None or rc[0] == runner)
                 and (convert is None or rc[1] == convert) and name.endswith(suffix)), None)


__all__ = ["SUFFIX_DEFAULTS", "match"]
