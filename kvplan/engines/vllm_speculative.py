"""Speculative decoding in vLLM's KV pool: MTP draft layers, draft tokens, separate draft checkpoints.

With `--speculative-config '{"method": "mtp", ...}'` the drafter loads the
checkpoint's multi-token-prediction module with the server's own VllmConfig
(0.11 v1/spec_decode/eagle.py EagleProposer.load_model; 0.32
llm_base_proposer.py: the draft's attention layers are the ones the static
forward context gained). gpu_model_runner.get_kv_cache_spec then registers a
KV cache spec for each of them after the target's layers, and the pool is
planned with them: one more layer per block. The drafter exists only on the
last pipeline stage (gpu_model_runner: `speculative_config and
get_pp_group().is_last_rank`).

What one MTP layer caches, per family (read in each release's model file,
0.11.0-0.33.0; each arrived with its target model). MiMo's and ERNIE's were read
in 0.11.0 and 0.34.0 (MiMoMTPModel and ErnieMTPModel are in 0.11.0's registry):
MiMoMultiTokenPredictor / ErnieMultiTokenPredictor build num_nextn_predict_layers
decoder layers, numbered after the target's, from the target's config and cache
config (config/speculative.py maps MiMoForCausalLM and ernie4_5_moe to mimo_mtp /
ernie_mtp; the dense ernie4_5 has no vLLM MTP draft). MiMo's Qwen2Attention takes
hidden_size / num_attention_heads as its head size and ERNIE's LlamaAttention
head_dim (else the same quotient), as the target's own layers do:

| family (model_type)                  | vLLM file            | draft layer                                   | layers |
|--------------------------------------|----------------------|-----------------------------------------------|--------|
| DeepSeek-V3 / R1 (deepseek_v3)       | deepseek_mtp.py      | DeepseekV2DecoderLayer: the target's MLA      | num_nextn_predict_layers |
| DeepSeek-V3.2 (deepseek_v32)         | deepseek_mtp.py      | the same, with index_topk: sparse MLA + indexer keys | num_nextn_predict_layers |
| GLM-4.5 / 4.6 / 4.7 (glm4_moe)       | glm4_moe_mtp.py      | Glm4MoeDecoderLayer: the target's GQA         | num_nextn_predict_layers |
| GLM-4.7-Flash (glm4_moe_lite)        | glm4_moe_lite_mtp.py | Glm4MoeLiteDecoderLayer: the target's MLA     | num_nextn_predict_layers |
| Qwen3-Next (qwen3_next)              | qwen3_next_mtp.py    | Qwen3NextDecoderLayer(layer_type="full_attention") | num_nextn_predict_layers, else 1 |
| Qwen3.5 / 3.6 (qwen3_5*, _text)      | qwen3_5_mtp.py       | Qwen3_5DecoderLayer(layer_type="full_attention") | mtp_num_hidden_layers, else 1 |
| LongCat-Flash (longcat_flash)        | longcat_flash_mtp.py | DeepseekV2DecoderLayer: the target's MLA      | always 1 |
| MiMo-7B (mimo)                       | mimo_mtp.py          | Qwen2DecoderLayer: the target's GQA           | num_nextn_predict_layers |
| ERNIE-4.5 MoE (ernie4_5_moe)         | ernie_mtp.py         | LlamaDecoderLayer: the target's GQA           | num_nextn_predict_layers |
| Nemotron-H (nemotron_h), 0.17.0+     | nemotron_h_mtp.py    | a NemotronHAttentionDecoderLayer (the target's attention) per '*' of mtp_hybrid_override_pattern | one step |
| MiMo-V2 (mimo_v2, mimo_v2_flash), 0.21.0+ | mimo_v2_mtp.py  | MiMoV2MTPLayer: the target's SWA attention (swa_* heads, sliding_window_size) | always 1 |
| Step-3.5 (step3p5, step3p7), modelled from 0.33.0 | step3p5_mtp.py | Step3p5DecoderLayer: full or sliding by mtp_layer_types (configs.step3p5_mtp) | num_nextn_predict_layers |

The draft layer is built from the target's config with the same cache config,
so its spec is the target's full-attention (or latent) layer's: kvplan copies
the target's last such layer (MiMo-V2: its last sliding-window layer). num_speculative_tokens does not add layers (the
module's layers are reused step by step). DeepSeek-V4's draft layer caches a
window only (vllm_dsv4.py); Inkling's depths are decoder layers with conv states,
min(depths, num_speculative_tokens) of them (vllm_inkling.with_inkling_draft); other families' MTP modules
are refused (REFUSED_MTP says why, family by family).

With two or more MTP modules and draft tokens (SpeculativeConfig.use_multi_module_mtp, 0.28+) every
sliding-window spec of the pool, target's and draft's, keeps num_speculative_tokens - 1 more tokens:
multi_module_retained, for every family; check_draft_tokens refuses draft tokens n_predict does not divide.

A separate draft checkpoint (methods eagle, eagle3 from 0.11; draft_model from
0.15) registers its own decoder layers the same way (llama_eagle3.py: prefix
layers.{i + target num_hidden_layers}), built from its own config (heads, head
dim, layer count) in the target's dtype and cache config: with_draft_model
appends them.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.model import ModelSpec
from ..core.transform import map_layers
from ..errors import UsageError

# model_type -> the layer count vLLM's MTP module builds when the config names none (its class default;
# None: the config must name it, as deepseek_mtp / glm4_moe_mtp read config.num_nextn_predict_layers)
MTP_FAMILIES: dict[str, int | None] = {
    "deepseek_v3": None, "deepseek_v32": None, "glm4_moe": None, "glm4_moe_lite": None,
    "qwen3_next": 1,
    "qwen3_5": 1, "qwen3_5_moe": 1, "qwen3_5_text": 1, "qwen3_5_moe_text": 1,
    "longcat_flash": None,  # MTP_FIXED
    "mimo": None, "ernie4_5_moe": None,  # mimo_mtp.py / ernie_mtp.py: range(num_nextn_predict_layers)
    "nemotron_h": None,  # nemotron_h_mtp.py: one step (asserted); its attention layers are mtp_attention_layers
    "mimo_v2": None, "mimo_v2_flash": None,  # MTP_FIXED
    "step3p5": None,  # step3p5_mtp.py: range(num_nextn_predict_layers), each full or sliding (MTP_BY_DEPTH)
}
# model_type -> the draft class vLLM's registry must list for its MTP draft (config/speculative.py maps the target
# to it; every other modelled family's draft class is in 0.11.0's registry): NemotronHMTPModel from 0.17.0,
# MiMoV2MTPModel from 0.21.0 (vllm_registry_data)
MTP_DRAFT_CLASSES: dict[str, str] = {"nemotron_h": "NemotronHMTPModel", "mimo_v2": "MiMoV2MTPModel",
                                     "mimo_v2_flash": "MiMoV2MTPModel", "step3p5": "Step3p5MTP"}
# model_type -> (the first release whose draft kvplan models, what was read of the releases before it)
MTP_MODELLED_FROM: dict[str, tuple[str, str]] = {
    "step3p5": ("0.33.0", "0.16.0-0.32.0 read Step-3.5 with vLLM's own Step3p5Config (from 0.20.0 it cuts "
                "layer_types to num_hidden_layers, which the draft layers' index passes; sliding layers take "
                "attention_other_setting's K/V heads and head_dim): read, not checked against their planner"),
}
# model_type -> the draft's layers are full or sliding depth by depth (ModelSpec.mtp_local_layers: the sliding ones;
# step3p5.py _get_layer_type, read in 0.33.0 and 0.34.0), each a copy of the target's last layer of that kind
MTP_BY_DEPTH = frozenset({"step3p5"})
# model_type -> the architectures whose MTP draft kvplan read (config/speculative.py maps each to its draft class)
MTP_ARCHITECTURES: dict[str, frozenset[str]] = {
    "mimo_v2": frozenset({"MiMoV2ForCausalLM", "MiMoV2OmniForCausalLM", "MiMoV2FlashForCausalLM"}),
    "mimo_v2_flash": frozenset({"MiMoV2ForCausalLM", "MiMoV2OmniForCausalLM", "MiMoV2FlashForCausalLM"}),
}
# model_type -> the draft layer copies the target's last sliding-window layer, not its last full one
# (mimo_v2_mtp.py MiMoV2MTPLayer: a MiMoV2Attention of swa_num_key_value_heads x swa_head_dim / swa_v_head_dim over
# sliding_window_size, as the target's SWA layers in mimo_v2.py; read in 0.21.0, 0.27.1 and 0.34.0)
MTP_SLIDING = frozenset({"mimo_v2", "mimo_v2_flash"})
# model_type -> the layer count vLLM's MTP module builds whatever the config says
# (longcat_flash_mtp.py LongCatMultiTokenPredictor: num_mtp_layers = 1)
# (mimo_v2_mtp.py MiMoV2MultiTokenPredictor: num_mtp_layers = 1; config/speculative.py sets n_predict 1)
MTP_FIXED: dict[str, int] = {"longcat_flash": 1, "mimo_v2": 1, "mimo_v2_flash": 1}


def is_mtp_method(method: str | None) -> bool:
    """'mtp', or a family's older name for it (deepseek_mtp, qwen3_next_mtp, ...; config/speculative.py
    MTP_MODEL_TYPES, which later releases map to 'mtp')."""
    return bool(method) and (method == "mtp" or method.endswith("_mtp"))


# model_type -> why kvplan refuses the KV cache of its MTP draft under vLLM (what was read, what is missing)
REFUSED_MTP: dict[str, str] = {
    "ernie4_5": "vLLM maps only ernie4_5_moe to its ErnieMTPModel (config/speculative.py): the dense ERNIE-4.5 has "
                "no MTP draft there",
    "qwen4_exp_text": "vLLM 0.33 / 0.34 models/qwen4_exp/nvidia/mtp.py Qwen4ExpMultiTokenPredictor builds "
                      "mtp_num_hidden_layers QSA decoder layers numbered after the target's (a ring, compressed "
                      "index keys and K/V each), and the draft tokens widen every ring to round_up(indexer_compress_"
                      "ratio + num_speculative_tokens, ratio) rows (0.34 common/qsa_indexer.py QSARawKeyCache, "
                      "0.33 qsa_cache.py: asserted to divide the block) and the Gated DeltaNet and PLE conv states by num_speculative_tokens rows; "
                      "kvplan's packed Qwen4-Exp pool (vllm_qwen4exp.py) has none of these",
}


def _check_family(model: ModelSpec, engine: str = "vLLM") -> None:
    if model.model_type not in MTP_FAMILIES and not model.mtp_layers:
        raise UsageError(f"{engine}: {model.name} ({model.model_type}) has no MTP layers (its config declares none)",
                         "drop --mtp, or give a separate draft checkpoint with --draft-model")
    if model.model_type not in MTP_FAMILIES:
        why = REFUSED_MTP.get(model.model_type)
        raise UsageError(f"{engine}: the KV cache of {model.name}'s MTP draft layers ({model.model_type}) is not "
                         "modelled" + (f": {why}" if why else ""),
                         "kvplan models the MTP layers of DeepSeek-V3/V3.2/V4, GLM-4.5-4.7, Qwen3-Next/3.5, "
                         "LongCat-Flash, MiMo-7B, ERNIE-4.5 MoE, Nemotron-H (vLLM 0.17+), MiMo-V2 (0.21+) and, "
                         "under vLLM 0.33+, Inkling and Step-3.5 (not vLLM 0.34's Nemotron3_5TranscribeMTPModel); "
                         "plan without the draft")


def draft_layer_count(model: ModelSpec, engine: str = "vLLM") -> int:
    """The MTP layers vLLM's drafter registers for `model` (DeepSeek-V4: its num_nextn_predict_layers, pooled by
    vllm_dsv4.py); a clear refusal when kvplan does not model them. engine: the name the refusal starts with
    (SGLang's NEXTN draft reads the same layers; kvplan.engines.sglang_mtp counts its own drafts of MiMo,
    ERNIE-4.5 MoE, Nemotron-H, MiMo-V2 and Step-3.5)."""
    from .vllm_family_rules import is_deepseek_v4
    from .vllm_inkling import is_inkling

    if engine == "vLLM" and is_inkling(model):  # vllm_inkling.with_inkling_draft builds its depths
        if not model.mtp_layers:
            raise UsageError(f"vLLM: {model.name}'s config has no mtp_config with num_nextn_predict_layers of 1 or "
                             "more, and vLLM refuses its MTP draft ('The Inkling checkpoint does not contain MTP "
                             "weights', config/speculative.py)", "plan without the draft")
        return model.mtp_layers
    if not is_deepseek_v4(model):
        _check_family(model, engine)
    elif not model.mtp_layers:
        raise UsageError(f"{engine}: {model.name}'s config has no MTP layers", "plan without the draft")
    if model.model_type == "nemotron_h":
        return _nemotron_h_draft(model, engine)
    if model.model_type == "step3p5" and model.mtp_layers is None:
        from ..configs.step3p5_mtp import UNREAD

        why = next((note for note in model.notes if note.startswith(UNREAD)), None)
        if why is not None:
            raise UsageError(f"{engine}: the KV cache of {model.name}'s MTP draft is not modelled: {why}",
                             "plan without the draft")
    allowed = MTP_ARCHITECTURES.get(model.model_type)
    if allowed is not None and model.architecture not in allowed:
        raise UsageError(f"{engine}: the KV cache of {model.name}'s MTP draft ({model.architecture}) is not modelled: "
                         f"kvplan read it for {', '.join(sorted(allowed))}", "plan without the draft")
    count = MTP_FIXED.get(model.model_type)
    if count is not None and model.model_type in MTP_SLIDING and not model.mtp_layers:
        raise UsageError(f"{engine}: {model.name}'s config has no MTP layers (num_nextn_predict_layers is 0 or "
                         "absent), so its checkpoint has no MTP weights for vLLM's draft", "plan without the draft")
    if count is None:
        count = model.mtp_layers if model.mtp_layers is not None else MTP_FAMILIES.get(model.model_type)
    if not count:
        raise UsageError(f"{engine}: {model.name}'s config has no MTP layers (its MTP layer count is 0 or absent), "
                         "so vLLM has no MTP draft for it", "plan without the draft")
    return count


def _nemotron_h_draft(model: ModelSpec, engine: str) -> int:
    """Nemotron-H's MTP draft layers in the pool: config/speculative.py makes a nemotron_h config with
    num_nextn_predict_layers > 0 a nemotron_h_mtp draft (NemotronHMTPModel; the Omni VLMs promote their text
    config, Nemotron-3.5-Transcribe has its own class), and NemotronHMultiTokenPredictor asserts one step and
    builds a NemotronHAttentionDecoderLayer (the target's NemotronHAttention: num_key_value_heads x head_dim,
    the config's sliding_window) per '*' of mtp_hybrid_override_pattern (read in 0.17.0 and 0.34.0)."""
    where = "vLLM 0.17.0-0.34.0 nemotron_h_mtp.py NemotronHMultiTokenPredictor"
    if model.architecture != "NemotronHForCausalLM":
        raise UsageError(f"{engine}: the KV cache of {model.name}'s MTP draft ({model.architecture}) is not modelled: "
                         "kvplan read Nemotron-H's MTP draft for NemotronHForCausalLM only (Nemotron-3.5-Transcribe "
                         "has its own Nemotron3_5TranscribeMTPModel)", "plan without the draft")
    if not model.mtp_layers:
        raise UsageError(f"{engine}: {model.name}'s config has no MTP layers (num_nextn_predict_layers is 0 or "
                         "absent), so vLLM has no MTP draft for it", "plan without the draft")
    if model.mtp_layers != 1:
        raise UsageError(f"vLLM cannot serve {model.name}'s MTP draft: num_nextn_predict_layers is "
                         f"{model.mtp_layers}, and {where} asserts 1", "plan without the draft")
    if not model.mtp_attention_layers:
        raise UsageError(f"vLLM: the KV cache of {model.name}'s MTP draft is not modelled: its MTP layers are not "
                         f"one or more attention layers and MoE layers, all {where} builds",
                         "plan without the draft")
    return model.mtp_attention_layers


def check_mtp_release(model: ModelSpec, release: str) -> None:
    """Refuse an MTP draft whose class vLLM `release` does not register (MTP_DRAFT_CLASSES), or which kvplan
    models from a later release only (MTP_MODELLED_FROM)."""
    from .vllm_release import release_key
    from .vllm_served import check

    name = MTP_DRAFT_CLASSES.get(model.model_type)
    served = check(name, release) if name is not None else None
    if served is not None and served.served is False:
        from .vllm_registry_data import REGISTRY

        first = REGISTRY[name][0][0][0]
        raise UsageError(f"vLLM {served.release} has no MTP draft for {model.name} ({model.model_type}): its "
                         f"registry lists {name} from {first} (model_executor/models/registry.py)",
                         f"use vllm@{first} or later, or plan without the draft")

    modelled = MTP_MODELLED_FROM.get(model.model_type)
    if modelled is not None and release_key(release) < release_key(modelled[0]):
        raise UsageError(f"vLLM {release}: the KV cache of {model.name}'s MTP draft is modelled from vLLM "
                         f"{modelled[0]} only ({modelled[1]})", f"use vllm@{modelled[0]} or later, or plan without "
                         "the draft")


def last_release_of(rules) -> str:
    """The newest release a rules object stands for (the last before the next object's first): what
    simulate, which knows only the rules, can check a release-bound draft against."""
    from .vllm_registry_data import RELEASES
    from .vllm_release import release_key
    from .vllm_rules import RULES

    start = release_key(rules.version)
    later = [release_key(r.version) for r in RULES if release_key(r.version) > start]
    inside = [r for r in RELEASES if start <= release_key(r) and (not later or release_key(r) < later[0])]
    return inside[-1] if inside else rules.version


def default_draft_tokens(model: ModelSpec, draft_layers: int) -> int:
    """vLLM's num_speculative_tokens when none is given: the draft's n_predict, its MTP depths (Nemotron-H:
    num_nextn_predict_layers, not its attention layers)."""
    return model.mtp_layers if model.mtp_attention_layers is not None and model.mtp_layers else draft_layers


def with_draft_layers(model: ModelSpec, count: int) -> ModelSpec:
    """`model` with `count` copies of its last attention or latent layer appended (a full-attention layer, or
    for MTP_SLIDING its last sliding-window layer): the caches the MTP draft registers, after the target's layers."""
    if count <= 0:
        return model
    _check_family(model)
    if model.model_type in MTP_BY_DEPTH:
        sliding = set(model.mtp_local_layers)
        return replace(model, layers=model.layers + tuple(_template(model, depth in sliding) for depth in range(count)))
    return replace(model, layers=model.layers + (_template(model, model.model_type in MTP_SLIDING),) * count)


def _template(model: ModelSpec, sliding: bool):
    """The target's last attention or latent layer (sliding: its last sliding-window one) for a draft layer to copy;
    MTP_BY_DEPTH families take their last full layer for a full draft layer."""
    by_depth = model.model_type in MTP_BY_DEPTH
    template = next((layer for layer in reversed(model.layers)
                     if layer.state is None and layer.shares_cache_of is None and layer.caches
                     and all(c.kind in ("attention", "latent", "indexer") for c in layer.caches)
                     and (not (sliding or by_depth)
                          or any(c.policy.window_tokens is not None for c in layer.caches) == sliding)), None)
    if template is None:
        kind = "sliding-window " if sliding else "full " if by_depth else ""
        raise UsageError(f"vLLM: {model.name} has no {kind}attention layer for its MTP draft to copy",
                         "plan without the draft")
    return template


def mtp_modules(model: ModelSpec, field: str) -> int | None:
    """The MTP module count vLLM reads from the draft config config/speculative.py hf_config_override writes
    (field: 'n_predict' or 'num_nextn_predict_layers'; None: n_predict unset). MiMo-V2: both set to 1 (its
    _MIMO_V2_*_NUM_MTP_LAYERS); Qwen3.5 / 3.6: n_predict is mtp_num_hidden_layers and num_nextn_predict_layers is
    absent (transformers' Qwen3_5 configs have no such field or alias), so getattr's default 1; Inkling: both the
    mtp_config's depths; every other family: the config's own count (num_nextn_predict_layers, ModelSpec.mtp_layers),
    default 1 for getattr and for LongCat / Nemotron-H / Step-3.5's n_predict, unset for the others."""
    if model.model_type in MTP_SLIDING:
        return 1
    if field == "num_nextn_predict_layers" and model.model_type.startswith("qwen3_5"):
        return 1
    if model.mtp_layers:
        return model.mtp_layers
    return 1 if field == "num_nextn_predict_layers" or model.model_type in _N_PREDICT_DEFAULT_ONE else None


# model_type -> n_predict defaults to 1 in hf_config_override (getattr(hf_config, "num_nextn_predict_layers", 1))
_N_PREDICT_DEFAULT_ONE = frozenset({"longcat_flash", "nemotron_h", "step3p5"})


def check_draft_tokens(model: ModelSpec, tokens: int) -> None:
    """vLLM's refusal of draft tokens above n_predict that are not a multiple of it (0.11.0-0.33.0
    config/speculative.py SpeculativeConfig.__post_init__, 0.34.0 speculator_config.py
    SpeculatorConfig.resolve_num_speculative_tokens: 'must be divisible by n_predict')."""
    n = mtp_modules(model, "n_predict")
    if n and tokens > n and tokens % n:
        raise UsageError(f"vLLM refuses num_speculative_tokens {tokens} for {model.name}'s MTP draft (n_predict {n}): "
                         f"above n_predict it must be a multiple of it ('must be divisible by n_predict')",
                         f"use --num-speculative-tokens {n} or less, or a multiple of {n}")


def multi_module_retained(model: ModelSpec, tokens: int, rules) -> int:
    """The tokens every sliding-window spec keeps below its window under vLLM's MTP draft (SlidingWindowSpec /
    SlidingWindowMLASpec.extra_retained_tokens), any family: num_speculative_tokens - 1 when
    min(MTP modules, num_speculative_tokens) > 1 (SpeculativeConfig.use_multi_module_mtp), the modules as
    rules.multi_module_mtp counts them (none before 0.28.0). tokens: the draft tokens (0: vLLM's default,
    n_predict). Chunked local attention and Mamba / GDN states are other specs and keep nothing more."""
    field = rules.multi_module_mtp
    if not field:
        return 0
    tokens = tokens or mtp_modules(model, "n_predict") or 0
    modules = mtp_modules(model, field) or 1
    return tokens - 1 if min(modules, tokens) > 1 else 0


def check_lookahead_block(model: ModelSpec, retained: int, rules, scheduler_block_tokens: int,
                          prefix_caching: bool | None) -> None:
    """vLLM's refusal of multi-module MTP with prefix caching when the scheduler's block (the LCM of the KV cache
    groups' block sizes, v1/core/kv_cache_utils.py) holds fewer tokens than the draft looks ahead: num_speculative_tokens
    (rules.mtp_lookahead_block_check: 0.33.0+ kv_cache_coordinator.py KVCacheCoordinator.__init__). retained:
    multi_module_retained's figure (num_speculative_tokens - 1 under multi-module MTP, else 0); prefix_caching
    None: vLLM's default, on."""
    if not rules.mtp_lookahead_block_check or prefix_caching is False:
        return
    lookahead = retained + 1  # num_prefill_lookahead: num_speculative_tokens under multi-module MTP, else 1
    if lookahead > 1 and scheduler_block_tokens < lookahead:
        raise UsageError(f"vLLM {rules.version} refuses {model.name}'s multi-module MTP draft with prefix caching: the "
                         f"scheduler block of {scheduler_block_tokens} tokens is below num_speculative_tokens "
                         f"{lookahead} ('Multi-module MTP with prefix caching requires scheduler_block_size >= "
                         "num_speculative_tokens', kv_cache_coordinator.py)",
                         f"use blocks of {lookahead} tokens or more (-t page:N, vLLM's --block-size), or at most "
                         f"{scheduler_block_tokens} draft tokens")


def retained_note(model: ModelSpec, retained: int, rules) -> str:
    field = rules.multi_module_mtp
    return (f"multi-module MTP (vLLM {rules.version}: min({field} {mtp_modules(model, field) or 1}, "
            f"num_speculative_tokens {retained + 1}) > 1): every sliding-window page keeps num_speculative_tokens - 1 "
            f"= {retained} more tokens (SlidingWindowSpec.extra_retained_tokens)")


def with_speculative_tokens(model: ModelSpec, tokens: int, rules=None) -> tuple[ModelSpec, list[str]]:
    """The state layers as vLLM sizes them under speculative decoding with `tokens` draft tokens (any method):
    a Gated DeltaNet conv state keeps conv_kernel - 1 + tokens rows (mamba_utils.py
    gated_delta_net_state_shape(num_spec), passed by qwen3_next.py from 0.11, qwen3_5.py from 0.17 and
    olmo_hybrid.py from 0.18: every release that serves each), and so does a Mamba-2 conv state of the model
    types rules.mamba2_speculative_conv lists (mamba2_state_shape(num_spec), from 0.17). Other state kinds are
    left as they are, with a note."""
    if tokens <= 0 or not any(layer.state is not None for layer in model.layers):
        return model, []
    mamba2_types = getattr(rules, "mamba2_speculative_conv", ())

    def widens(state) -> bool:
        if state.kind == "gated_deltanet":
            return bool(state.conv_channels)
        return (state.kind == "mamba2" and model.model_type in mamba2_types
                and None not in (state.conv_kernel, state.d_inner, state.n_groups, state.d_state))

    notes: list[str] = []
    states = [layer.state for layer in model.layers if layer.state is not None]
    other = sorted({state.kind for state in states if not widens(state)})
    if other:
        notes.append(f"not modelled: the growth of {', '.join(other)} states under speculative decoding "
                     "(vLLM widens some families' conv state by the draft tokens)")

    def grow(_i, layer):
        state = layer.state
        if state is None or not widens(state):
            return layer
        rows = state.conv_kernel - 1 + tokens
        if state.kind == "mamba2":  # shard_state re-derives the rank's rows from conv_extra_rows
            channels = state.d_inner + 2 * state.n_groups * state.d_state
            return replace(layer, state=replace(state, conv_elements=channels * rows, conv_extra_rows=tokens))
        return replace(layer, state=replace(state, conv_elements=state.conv_channels * rows))

    grown = sorted({state.kind for state in states if widens(state)})
    if grown:
        names = {"gated_deltanet": "Gated DeltaNet", "mamba2": "Mamba-2"}
        notes.append(f"speculative decoding ({tokens} draft tokens): each {' and '.join(names[k] for k in grown)} "
                     f"conv state keeps {tokens} more rows (conv_kernel - 1 + num_speculative_tokens)")
    return map_layers(model, grow), notes


def with_draft_model(model: ModelSpec, draft: ModelSpec) -> ModelSpec:
    """`model` with a separate draft checkpoint's layers appended (EAGLE / EAGLE-3 heads, a small draft LLM):
    their K/V shape is the draft config's, their storage the target's cache (vLLM builds the draft with the
    target's dtype, SpeculativeConfig's draft ModelConfig, and the server's one KV cache dtype)."""
    arch = (draft.architecture or "").lower()
    if "dflash" in arch or "dspark" in arch:
        raise UsageError(f"vLLM: a {draft.architecture} draft (DFlash / DSpark) is not modelled: "
                         f"{_block_drafter_reason(draft.architecture)}",
                         "give an EAGLE head or a small draft LLM")
    if any(layer.state is not None for layer in draft.layers):
        raise UsageError(f"vLLM: a draft model with recurrent state layers ({draft.name}) is not modelled",
                         "give an attention-only draft (an EAGLE head or a small LLM)")
    stored = next((c.storage for layer in model.layers for c in layer.caches if c.kind in ("attention", "latent")),
                  None)
    if stored is None:
        raise UsageError(f"vLLM: {model.name} has no attention cache whose dtype its draft would share",
                         "plan without the draft")
    layers = tuple(replace(layer, caches=tuple(replace(c, storage=stored) if c.kind in ("attention", "latent")
                                               else c for c in layer.caches))
                   for layer in draft.layers if layer.caches and layer.shares_cache_of is None)
    if not layers:
        raise UsageError(f"vLLM: the draft {draft.name} caches nothing", "give a draft model config with "
                         "attention layers")
    return replace(model, layers=model.layers + layers)


# Block drafters vLLM registers by name (model_executor/models/registry.py _SPECULATIVE_DECODING_MODELS) whose
# KV layout kvplan does not model, with what was read of each. 0.34.0 added the last three.
BLOCK_DRAFTERS = {
    "dflash": "qwen3_dflash.py: each draft layer is full or sliding by the draft config's layer_types / "
              "dflash_config.use_swa and non-causal unless dflash_config.causal, and its K/V for every context "
              "token is precomputed from the target's hidden states",
    "dsparkminimaxdraftmodel": "vLLM 0.34 models/minimax_m3/common/dspark.py builds the Qwen3 DSpark block drafter "
                               "from MiniMax-M3 layers (DFlash attention, partial RoPE, context K/V written by its "
                               "own kernel) beside MiniMax-M3's one uniform-type group of 128-token blocks; the "
                               "draft checkpoint's config is not read",
    "mistrallarge4dsparkmodel": "vLLM 0.34 models/mistral/mistral_large4/nvidia/dspark.py: draft layers numbered "
                                "after the target's, projecting num_target_layers hidden states, over the draft "
                                "config's dspark_block_size; its attention layout is not read",
    "dflash2ricursivedraftmodel": "vLLM 0.34 ricursive_dflash2.py: DFlash2 Qwen3 layers with NoPE on the config's "
                                  "no_rope_layers; Ricursive Ripple itself is not a family kvplan reads",
}


def _block_drafter_reason(architecture: str | None) -> str:
    arch = (architecture or "").lower()
    return BLOCK_DRAFTERS.get(arch) or BLOCK_DRAFTERS["dflash"]


# vLLM 0.34.0 dropped P-EAGLE (parallel drafting EAGLE-3): registry.py no longer lists PEagleDraftModel,
# PeagleLlamaForCausalLM or PeagleQwen3ForCausalLM, and transformers_utils/configs/speculators (algos.py
# update_peagle, base.py) raise "P-EAGLE (parallel drafting EAGLE-3) is not supported."
PEAGLE_DROPPED_FROM = (0, 34, 0)


def draft_method(draft: ModelSpec) -> str:
    """vLLM's speculative method for a draft checkpoint, by its architecture (…Eagle3 -> eagle3, …Eagle ->
    eagle, anything else -> draft_model)."""
    arch = (draft.architecture or "").lower()
    return "eagle3" if "eagle3" in arch else "eagle" if "eagle" in arch else "draft_model"


def load_draft(name: str) -> ModelSpec:
    """A draft checkpoint's config (a bundled name, a config.json or a Hub id), as kvplan reads any model."""
    from ..errors import KvplanError
    from ..sources import load_model

    try:
        return load_model(name)
    except KvplanError as exc:
        raise UsageError(f"--draft-model {name}: {exc.message}",
                         "give the draft's config.json (an EAGLE head's or a small LLM's)") from exc


def resolve_speculation(model: ModelSpec, speculation) -> tuple[int, int, ModelSpec | None]:
    """(MTP draft layers, draft tokens, draft checkpoint) for a kvplan.request.Speculation (None: none)."""
    if speculation is None:
        return 0, 0, None
    if speculation.mtp:
        layers = draft_layer_count(model)
        return layers, speculation.tokens or default_draft_tokens(model, layers), None
    return 0, speculation.tokens or 0, load_draft(speculation.draft_model)


def with_speculation(model: ModelSpec, rules, draft_layers: int = 0, draft: ModelSpec | None = None,
                     tokens: int = 0) -> tuple[ModelSpec, list[str]]:
    """`model` as vLLM's pool sees it under speculative decoding (vllm.simulate): the MTP draft's
    `draft_layers` or a draft checkpoint's layers appended, the state layers widened by the draft tokens."""
    from .vllm_release import at_least

    notes: list[str] = []
    if draft_layers:
        check_mtp_release(model, last_release_of(rules))  # the exact release is checked where it is known
        model = with_draft_layers(model, draft_layers)
        if model.model_type in MTP_BY_DEPTH:
            sliding = len([d for d in model.mtp_local_layers if d < draft_layers])
            notes.append(f"speculative decoding (mtp): {draft_layers} MTP draft layer(s), {sliding} sliding and "
                         f"{draft_layers - sliding} full by the config's MTP layer types, each caching what the "
                         "target's last layer of that kind caches")
        else:
            notes.append(f"speculative decoding (mtp): {draft_layers} MTP draft layer(s), each caching what the "
                         "target's last attention layer caches")
    if draft is not None:
        method = draft_method(draft)
        if "peagle" in (draft.architecture or "").lower() and at_least(rules.version, PEAGLE_DROPPED_FROM):
            raise UsageError(f"vLLM {rules.version} does not serve P-EAGLE drafts ({draft.architecture}): 0.34.0 "
                             "removed them from its model registry and its speculators config refuses them",
                             "use vllm@0.33 or an EAGLE-3 head")
        if method == "draft_model" and not at_least(rules.version, (0, 15, 0)):
            raise UsageError(f"vLLM {rules.version} has no draft-model speculative decoding in its v1 engine "
                             "(v1/spec_decode/draft_model.py arrived in 0.15.0)", "use vllm@0.15 or later")
        model = with_draft_model(model, draft)
        notes.append(f"speculative decoding ({method}): the draft {draft.name}'s {draft.num_layers} layer(s) join "
                     "the pool after the target's")
    if tokens:
        model, token_notes = with_speculative_tokens(model, tokens, rules)
        notes += token_notes
    return model, notes


def draft_location(draft_model: str, draft_name: str, flag: str) -> tuple[str, str | None]:
    """(what an engine's draft flag names, a note) for --draft-model: a config file's folder (the checkpoint that
    holds it), a folder or Hub id as given, a bundled name's Hub id (draft_name)."""
    import os

    if os.path.isfile(draft_model):
        where = os.path.dirname(draft_model) or "."
        return where, (f"{flag}: the draft checkpoint's folder ({where}), the one that holds "
                       f"{os.path.basename(draft_model)}")
    if draft_name != draft_model and not os.path.isdir(draft_model):  # a bundled name: the engine wants the Hub id
        return draft_name, f"{flag}: the draft's Hub id for {draft_model}"
    return draft_model, None
