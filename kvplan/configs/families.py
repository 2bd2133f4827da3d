"""The family table: one record per model_type kvplan reads exactly.

Each record is data: field aliases and defaults (as in transformers'
configuration_<family>.py), the layer kinds the family can have, the markers it
writes, and the rule that derives kinds when a config lists none. The rows live
in modules by kind (families_decoders, families_remote, families_multimodal, families_attention,
families_hybrid, with what they share in family_common; the refusals by name in
families_refused, and the two newest engine-led groups in vllm_own and
vllm34_text); this module joins them. Every row has
a golden test (tests/test_golden_models.py, tests/test_families.py) and, where
transformers 5 can build the model, a parity test against its cache
(tests/parity/).
"""

from __future__ import annotations

from . import kinds as K
from . import rnj1, vl_wrappers, vllm_own, vllm34_text
from .family import Family
from .family_common import GEMMA3_TEXT_DEFAULTS, GENERIC
from .families_attention import ROWS as _ATTENTION_ROWS
from .families_decoders import GENERIC_RULE_ROWS, MHA_ROWS
from .families_hybrid import ROWS as _HYBRID_ROWS
from .families_multimodal import ROWS as _MULTIMODAL_ROWS, SPEECH_V034_ROWS
from .families_refused import PARAMS_OFF, REFUSED, REFUSED_ARCHITECTURES
from .families_remote import ROWS as _REMOTE_ROWS
from .markers import pattern_default


# the records in the order the row modules list them (FAMILIES keeps it): decoders (the generic rule's, the remote-code
# Llama-likes, MHA), multimodal wrappers, other KV-head rules and MLA, hybrids, vLLM 0.34's own config classes and new
# text architectures, then the speech wrappers
_ROWS: list[Family] = [*GENERIC_RULE_ROWS, *_REMOTE_ROWS, *MHA_ROWS, *_MULTIMODAL_ROWS, *_ATTENTION_ROWS, *_HYBRID_ROWS,
                       *vllm_own.ROWS, *vllm34_text.ROWS, *SPEECH_V034_ROWS]


def _table(rows: list[Family]) -> dict[str, Family]:
    table: dict[str, Family] = {}
    for row in rows:
        for name in row.types:
            if name in table:
                raise ValueError(f"model_type {name!r} has two family records")
            table[name] = row
    return table


FAMILIES: dict[str, Family] = _table(_ROWS)

# Families vLLM picks by architecture under another family's model_type: (model_type, architectures[0]) -> record
BY_ARCHITECTURE: dict[tuple[str, str], Family] = {
    # a Mistral-format params.json with a vision encoder, as vLLM 0.33 adapts it (configs/mistral_params.py)
    ("pixtral", "PixtralForConditionalGeneration"): Family(
        ("pixtral",), text="mistral", text_rule=vl_wrappers.nested_only("text_config", "pixtral"),
        rules=("Pixtral in Mistral format (vLLM 0.33 configs/mistral.py _remap_mistral_vision_args): the params.json "
               "text fields, adapted as for a text model, become text_config (mistral, or deepseek_v3 for Mistral "
               "Large 3), which pixtral.py PixtralForConditionalGeneration builds; parameters: the text model only "
               "(vision encoder and adapter not counted)",)),
    ("gemma3_text", "Rnj1ForCausalLM"): Family(
        ("rnj1",), kinds=frozenset({K.FULL, K.SLIDING, K.CHUNKED}), defaults=GEMMA3_TEXT_DEFAULTS,
        markers=("sliding_window_pattern",), derive=pattern_default(6), refine=rnj1.rnj1_kinds,
        params=rnj1.rnj1_params,
        rules=("vLLM 0.33 rnj1.py Rnj1Attention (a gemma3_text config naming Rnj1ForCausalLM): K/V of "
               "num_key_value_heads x head_dim on every layer; only a chunked_attention layer keeps a window "
               "(sliding_window tokens: chunks of sliding_window / 2 with one chunk of lookback); sliding_attention "
               "and full_attention layers cache every token",)),
}

__all__ = ["BY_ARCHITECTURE", "FAMILIES", "GENERIC", "PARAMS_OFF", "REFUSED", "REFUSED_ARCHITECTURES"]
