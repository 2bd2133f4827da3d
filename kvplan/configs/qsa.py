"""Qwen4-Exp (Qwen3.8-Flash-Next): Gated DeltaNet layers, Qwen sparse attention (QSA) and a PLE conv.

Read from vLLM 0.33.0's models/qwen4_exp (nvidia/model.py Qwen4ExpDecoderLayer, nvidia/qsa.py
Qwen4ExpQSAAttention, nvidia/indexer_qsa.py QSAIndexer, common/qsa_cache.py QSAKeyStateCache and
QSACompressedKeyCache, nvidia/ple_layer.py Qwen4ExpPLELayer) and transformers' Qwen4ExpTextConfig,
which derives layer_types as (3 x linear_attention, 1 x indexed_attention) per full_attention_interval
and writes "full_attention" as "indexed_attention"; vLLM 0.34.0 keeps the same (common/qsa_indexer.py
QSARawKeyCache, QSAKeyStateCache renamed, and QSACompressedKeyCache; nvidia/qsa_indexer.py). Each layer keeps:

- linear_attention: a Gated DeltaNet state (conv over q, k and v in the model dtype; the recurrent
  state in mamba_ssm_dtype, float32 in the checkpoint), as Qwen3-Next's;
- indexed attention (QSA): K and V of num_key_value_heads x head_dim for every token; the indexer's
  compressed keys, one row of indexer_head_dim per complete group of indexer_compress_ratio tokens,
  in bf16 (vLLM's indexer_kv_dtype "auto"; fp8 is opt-in, without scales); and a ring of the open
  group's raw index keys: indexer_compress_ratio rows (more with speculative tokens, not modelled)
  of indexer_head_dim bf16, plus the three int64 MRoPE positions (12 bf16 columns) when the served
  architecture uses MRoPE (the VL architecture, unless served with --language-model-only), held per
  request;
- a layer in ple_layer_ids (one-based): also the PLE's short conv, hc_count x hidden_size channels
  of (ple_conv_kernel_size - 1) x ngram_size past inputs (a dilated conv) in the model dtype, whole
  on every TP rank (tp_replicated).
A decode step scores every compressed key, reads the K/V of the tokens of the top indexer_budget /
indexer_compress_ratio complete groups plus the open group's tokens, the ring, and the states.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.layers import LayerSpec, RecurrentState, TokenCache
from ..core.storage import BF16
from ..errors import ConfigError
from . import kinds as K
from .attention import topk_pages_with_keys
from .fields import Fields
from .hybrid import gated_deltanet_state, model_storage

MROPE_POSITIONS = 3  # t, h, w positions, int64 each: 4 bf16 columns apiece (qsa_cache.py; 0.34 qsa_indexer.py)


def _uses_mrope(f: Fields) -> bool:
    """vLLM keeps MRoPE for the VL architecture (Qwen4ExpForConditionalGeneration) and strips it for the text
    one (model_executor/models/config.py); `vllm serve --language-model-only` strips it too, which a config
    cannot say."""
    names = f.get("architectures")
    text_only = isinstance(names, list) and bool(names) and str(names[0]).endswith("ForCausalLM")
    return f.has("rope_parameters.mrope_section") and not text_only


def _ple_layers(f: Fields, n: int) -> set[int]:
    ids = f.list("ple_layer_ids", default=[])
    out = set()
    for i, value in enumerate(ids):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
            raise ConfigError(f"{f.source}: ple_layer_ids[{i}] is {value!r}, not a one-based layer number up to {n} "
                              f"(model_type {f.model_type!r})", "fix the config's ple_layer_ids")
        out.add(value - 1)
    return out


def _ple_state(f: Fields) -> RecurrentState:
    channels = f.int("hc_count", default=4) * f.int("hidden_size")
    kernel = f.int("ple_conv_kernel_size", default=4, minimum=2)
    rows = (kernel - 1) * f.int("ngram_size", default=3)
    return RecurrentState("short_conv", rows * channels, 0, model_storage(f), model_storage(f),
                          conv_channels=channels, tp_replicated=True)


QSA_FIELDS = ("indexer_n_heads", "indexer_kv_heads", "indexer_head_dim", "indexer_budget", "indexer_compress_ratio")


def _attention(f: Fields) -> tuple[TokenCache, ...]:
    """Without the QSA fields (transformers' defaults) a full layer is plain full attention (vLLM:
    Qwen3NextAttention); with all of them, QSA."""
    given = [name for name in QSA_FIELDS if f.get(name) is not None]
    heads, head = f.int("num_key_value_heads"), f.int("head_dim")
    if not given:
        return (TokenCache(kind="attention", heads=heads, key_dim=head, value_dim=head),)
    if len(given) < len(QSA_FIELDS):
        missing = [name for name in QSA_FIELDS if name not in given]
        raise ConfigError(f"{f.source}: the QSA config sets {', '.join(given)} but not {', '.join(missing)} "
                          f"(model_type {f.model_type!r})", "give all five indexer_* fields, or none")
    ratio = f.int("indexer_compress_ratio", minimum=1)
    budget = f.int("indexer_budget", minimum=1)
    if budget % ratio:
        raise ConfigError(f"{f.source}: indexer_budget {budget} is not a multiple of indexer_compress_ratio {ratio} "
                          f"(model_type {f.model_type!r})", "fix the config's indexer_budget")
    if f.int("indexer_kv_heads", default=1) != 1:
        raise ConfigError(f"{f.source}: indexer_kv_heads {f.int('indexer_kv_heads')}: vLLM's QSA cache holds one "
                          "index key per group", "fix the config (indexer_kv_heads 1)")
    index = f.int("indexer_head_dim", minimum=1)
    groups = budget // ratio
    return topk_pages_with_keys(heads, head, ratio, groups, index, BF16, "group", f"compressed index keys 1/{ratio}")


def _ring(f: Fields) -> RecurrentState:
    ratio, index = f.int("indexer_compress_ratio", minimum=1), f.int("indexer_head_dim", minimum=1)
    # the positions start at the key rounded up to whole int64s (4 bf16); without them the row is the key alone
    width = -(-index // 4) * 4 + 4 * MROPE_POSITIONS if _uses_mrope(f) else index
    return RecurrentState("ring", 0, ratio * width, ssm_storage=BF16, tp_replicated=True)


def layers(f: Fields, n: int, kinds: list[str]) -> list[LayerSpec]:
    """The n layers: Gated DeltaNet states and full (QSA) layers, with the PLE conv where ple_layer_ids says."""
    caches = _attention(f)
    qsa = LayerSpec(caches=caches, state=_ring(f) if len(caches) > 1 else None)
    gdn = LayerSpec(state=gated_deltanet_state(f))
    ple = _ple_layers(f, n)
    out = []
    for i, kind in enumerate(kinds):
        spec = gdn if kind == K.LINEAR else qsa
        if i in ple and spec.state is None:
            spec = replace(spec, state=_ple_state(f))
        elif i in ple:
            spec = replace(spec, state=replace(spec.state, also=spec.state.also + (_ple_state(f),)))
        out.append(spec)
    return out
