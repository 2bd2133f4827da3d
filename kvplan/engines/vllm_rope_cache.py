"""The rotary cos/sin tables vLLM keeps on the GPU beside the weights.

vLLM's rotary embedding (model_executor/layers/rotary_embedding: `get_rope` and the
classes it builds; one file up to 0.9, a package after, read in 0.6.4, 0.6.6.post1, 0.7.0,
0.8.0, 0.10.2, 0.11.0, 0.19.0-0.22.0, 0.26.0, 0.27.1, 0.31.0, 0.33.0 and 0.34.0) computes a cos/sin
table when the model is built and registers it as a non-persistent buffer, on the GPU, in
the serving dtype (`cache.to(dtype)`, dtype = the model's unless the family passes one). It
is built inside the load, so vLLM's "Model loading took" / "Loading model weights took"
counts it, and it is whole on every TP rank. `get_rope` caches one instance per distinct
argument set, so a model holds one table per distinct rope, not one per layer.

    table bytes = rows x rotary_dim x dtype bytes   (cos and sin halves, rotary_dim / 2 each)

rotary_dim = head size x the partial rotary factor (the config's partial_rotary_factor /
rotary_pct, which vLLM folds into the rope parameters, unless the family's file fixes it).
rows, by the rope type `get_rope` dispatches on:
- default, llama3: max_position (what the family passes: max_position_embeddings mostly);
- linear: max_position x factor (LinearScalingRotaryEmbedding);
- yarn, deepseek_yarn: original_max_position_embeddings x factor (YaRN / Deepseek
  scaling classes build `arange(max_position_embeddings x scaling_factor)` with the
  original length passed in);
- dynamic (DynamicNTKScalingRotaryEmbedding): max_position x factor up to 0.21.0
  (`arange(max_position_embeddings x scaling_factor)`), max_position from 0.22.0;
- longrope (Phi3LongRoPEScaledRotaryEmbedding): three buffers up to 0.6.6.post1 (short:
  original rows, long: max_position rows, and their concatenation), only the
  concatenation (original + max_position rows) from 0.7.0;
- M-RoPE (mrope_section, MRotaryEmbedding): max_position rows up to 0.7.1, x 4 from 0.7.2;
  from 0.32.0 Qwen3-VL and Qwen3.5 pass x 1 unless video pruning is on (qwen3_vl.py
  mrope_positions_factor; kvplan takes it as off). M-RoPE with a scaled rope: None.
A release-dependent answer needs the release: without one it is None. Where vLLM serves a
family with its Transformers backend, HF's rotary embedding keeps no table: 0 bytes.
Not modelled: from 0.14.0 DeepseekScalingRotaryEmbedding keeps its table in float32 when
FlashInfer is installed and the rotary custom op is on (not by default under torch.compile;
on with enforce_eager), which doubles the MLA tables; vision towers' own tables (Llama 4's
577 x 44, Qwen-VL's 8,192 x 40) are under 1 MiB.

FAMILY_RULES below holds one rule per model_type, each naming the vLLM file(s) whose
`get_rope` call was read (0.33.0 and at least one older release, or the releases that
served a family vLLM has since dropped). Families with no rotary embedding at all
(learned positions, ALiBi, pure state-space models, NoPE attention) hold 0 bytes; a
model_type not in the table, or whose rule is unread, returns None.

Checked against logged loads: Llama-3.1-8B on 0.6.4 logs 14.9888 GiB, its parameters are
14.9575 GiB and its table 32 MiB (131,072 x 128 x 2 B); Meta-Llama-3-8B on 0.6.6 logs
14.9595 GiB with a 2 MiB table (8,192 rows); gemma-3-4b-it (PR #21489) logs 8.58 GiB for
8.01 GiB of parameters and 0.56 GiB of tables; a merged Phi-4-mini on 0.7.3 logs 7.1694 GiB
for 7.1451 GiB of parameters and its one LongRoPE buffer (135,168 x 96 x 2 B), 7.1693.
The large ones: Llama 4 Scout's 10,485,760 positions make 2.5 GiB on every rank, MiniMax-
Text-01's float32 table 2.44 GiB at its 10,240,000 positions (less at a shorter
max_model_len, which its file passes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..errors import ConfigError
from .vllm_release import release_key

ROW_RULES = ("default", "llama3", "linear", "yarn", "deepseek_yarn", "deepseek_llama_scaling", "dynamic",
             "longrope")
DYNAMIC_ROWS_UNSCALED_FROM = (0, 22, 0)  # dynamic_ntk_scaling_rope.py: arange(max_position) from 0.22.0
LONGROPE_ONE_BUFFER_FROM = (0, 7, 0)  # Phi3LongRoPEScaledRotaryEmbedding: one concatenated buffer from 0.7.0
MROPE_X4_FROM = (0, 7, 2)  # MRotaryEmbedding: max_position x 4 rows from 0.7.2 (x 1 up to 0.7.1)
PARTIAL_NAMES = ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction")  # patch_rope_parameters


@dataclass(frozen=True)
class RopeTable:
    rows: int
    rotary_dim: int
    dtype_bytes: int

    @property
    def bytes(self) -> int:
        return self.rows * self.rotary_dim * self.dtype_bytes


@dataclass(frozen=True)
class Rule:
    """How one family's vLLM file calls get_rope.

    read: the vLLM file(s) and releases the call was read in.
    kind: "attention" (head size x factor), "mla" (qk_rope_head_dim, the DeepSeek rope rewrite),
      "none" (no rotary embedding: 0 bytes; `read` says why), "unread" (None; `read` says why).
    positions: config fields the file passes as max_position, first present wins; else `positions_default`
      (the file's or transformers' default).
    head: "head_dim" (head_dim, else hidden / heads), "hidden" (hidden / heads: the file ignores head_dim),
      or another config field holding the head size (Zamba2's attention_head_dim).
    rotary: None: the config's partial factor (default `partial_default`); a float: fixed by the file;
      a field name: the config field holding the rotary width (the file passes width / head size).
    layer_ropes: sliding and full layers each build their rope (the sliding one unscaled, with `local_theta`,
      default the global theta); distinct ropes are distinct tables.
    uses_rope: when given, a config without it has no rotary embedding (0 bytes).
    backend_from: the release from which vLLM serves the family with its Transformers backend, whose HF
      rotary embedding keeps no cos/sin table (0 bytes).
    local_theta_default: the sliding layers' theta when the config omits `local_theta` (the config class's).
    deepseek_rewrite: the MLA file turns any scaled rope into deepseek_yarn (rows: original x factor).
    max_model_len: "max" / "min": the file compares max_position with the served max_model_len.
    indexer_rope_from: the release from which the DSA indexer builds its own (neox) rope: a second table.
    mrope_unit_from: the release from which the file passes M-RoPE positions_factor 1 (x 4 only with
      video pruning, a serving option kvplan takes as off).
    """

    read: str
    kind: str = "attention"
    positions: tuple[str, ...] = ("max_position_embeddings",)
    positions_default: int | None = None
    head: str = "head_dim"
    rotary: float | str | None = None
    partial_default: float = 1.0
    fp32: bool = False
    layer_ropes: bool = False
    local_theta: str | None = None
    uses_rope: Callable | None = None
    backend_from: tuple[int, ...] | None = None
    local_theta_default: float | None = None
    deepseek_rewrite: bool = True
    max_model_len: str | None = None
    indexer_rope_from: tuple[int, ...] | None = None
    mrope_unit_from: tuple[int, ...] | None = None


FAMILY_RULES: dict[str, Rule] = {
    # -- head_dim (else hidden / heads) x the config's partial factor, max_position_embeddings rows
    "llama": Rule("llama.py (0.6.4, 0.10.2, 0.19.0, 0.33.0)"),
    "mistral": Rule("llama.py (0.10.2); mistral.py inherits llama.py's rope (0.19.0, 0.33.0)"),
    "internlm3": Rule("llama.py (InternLM3ForCausalLM, 0.10.2, 0.19.0, 0.33.0); dynamic rope"),
    "nemotron-nas": Rule("nemotron_nas.py (one snapshot of vLLM main, commit 00bd149): DeciLMAttention, a "
                         "LlamaAttention, calls get_rope(head size, max_position_embeddings, the config's rope) "
                         "in _init_rotary_emb; one table for all its layers"),
    "phi3": Rule("phi3.py subclasses llama.py (0.10.2, 0.19.0, 0.33.0); longrope for the 128k configs"),
    "mllama_text_model": Rule("mllama.py's self-attention layers are llama.py's (0.6.4, 0.10.2; dropped "
                                "later); cross-attention layers have no rope"),
    "qwen2": Rule("qwen2.py (0.10.2, 0.19.0, 0.33.0)"),
    "qwen3": Rule("qwen3.py (0.10.2, 0.19.0, 0.33.0)"),
    "qwen3_moe": Rule("qwen3_moe.py (0.10.2, 0.19.0, 0.33.0)"),
    "qwen3_next": Rule("qwen3_next.py (0.10.2, 0.19.0, 0.33.0): partial_rotary_factor"),
    "mixtral": Rule("mixtral.py (0.10.2, 0.19.0, 0.33.0)"),
    "gpt_oss": Rule("gpt_oss.py (0.10.2, 0.19.0, 0.33.0): dtype=torch.float32", fp32=True),
    "qwen2_moe": Rule("qwen2_moe.py (0.19.0, 0.33.0)", head="hidden"),
    "exaone4": Rule("exaone4.py (0.19.0, 0.33.0): one rope for sliding and full layers"),
    "gemma": Rule("gemma.py (0.19.0, 0.33.0); the Transformers backend from 0.34.0 (registry.py, gemma.py "
                  "removed)", backend_from=(0, 34, 0)),
    "gemma2": Rule("gemma2.py (0.19.0, 0.33.0)"),
    "cohere2": Rule("commandr.py (0.19.0, 0.33.0): model_max_length, else max_position_embeddings",
                    positions=("model_max_length", "max_position_embeddings"), positions_default=8192),
    "stablelm": Rule("stablelm.py (0.19.0, 0.33.0): hidden / heads x partial_rotary_factor; the Transformers "
                     "backend from 0.34.0 (registry.py, stablelm.py removed)", head="hidden", partial_default=0.25,
                     backend_from=(0, 34, 0)),
    "persimmon": Rule("persimmon.py (0.10.2, 0.19.0; dropped in 0.25.0)", head="hidden", partial_default=0.5),
    "gpt_neox": Rule("gpt_neox.py (0.10.2, 0.19.0, 0.31.0): hidden / heads x rotary_pct; the Transformers "
                     "backend from 0.32.0 (registry.py)", head="hidden", partial_default=0.25,
                     backend_from=(0, 32, 0)),
    "glm": Rule("glm.py (0.19.0, 0.31.0) sets partial_rotary_factor 0.5 on llama.py; the Transformers backend "
                "from 0.32.0 (registry.py)", rotary=0.5, backend_from=(0, 32, 0)),
    "glm4": Rule("glm4.py (0.19.0, 0.33.0): partial_rotary_factor, 0.5 when absent", partial_default=0.5),
    "glm4_moe": Rule("glm4_moe.py (0.19.0, 0.33.0): partial_rotary_factor, 0.5 when absent",
                     partial_default=0.5, positions_default=131072),
    "chatglm": Rule("chatglm.py (0.19.0, 0.33.0): seq_length rows, half the head rotated",
                    positions=("seq_length",), positions_default=8192, head="hidden", rotary=0.5),
    "gptj": Rule("gpt_j.py (0.19.0, 0.33.0): rotary_dim of hidden / heads", positions=("n_positions",
                 "max_position_embeddings"), positions_default=2048, head="hidden", rotary="rotary_dim"),
    "dbrx": Rule("dbrx.py (0.19.0, 0.33.0): max_seq_len rows, d_model / n_heads",
                 positions=("max_seq_len",), head="hidden"),
    "falcon": Rule("falcon.py (0.19.0, 0.33.0): rotary unless alibi (FalconConfig: 2,048 positions)",
                   positions_default=2048, head="hidden",
                   uses_rope=lambda f: not f.flag("alibi") and f.flag("rotary", default=True)),
    "baichuan": Rule("baichuan.py (0.10.2, 0.19.0; dropped in 0.23.0): BaichuanForCausalLM is rope at "
                     "hidden_size 4096 (7B), ALiBi otherwise (13B)", head="hidden",
                     uses_rope=lambda f: f.int("hidden_size") == 4096),
    "internlm2": Rule("internlm2.py (0.19.0, 0.33.0): hidden / heads; dynamic rope", head="hidden"),
    "lfm2": Rule("lfm2.py (0.19.0, 0.33.0): hidden / heads", head="hidden"),
    "lfm2_moe": Rule("lfm2_moe.py (0.19.0, 0.33.0): hidden / heads", head="hidden"),
    "falcon_h1": Rule("falcon_h1.py (0.19.0, 0.33.0): attn_rotary_emb of the head, else all of it",
                      rotary="attn_rotary_emb"),
    "bamba": Rule("bamba.py (0.10.2, 0.19.0; dropped in 0.23.0): attn_rotary_emb of hidden / heads",
                  head="hidden", rotary="attn_rotary_emb", positions_default=262144),
    "granitemoehybrid": Rule("granitemoehybrid.py (0.19.0, 0.33.0): a rope only with position_embedding_type "
                             "'rope' (default None: NoPE)", head="hidden",
                             uses_rope=lambda f: f.get("position_embedding_type") == "rope"),
    "zamba2": Rule("zamba2.py (0.19.0, 0.33.0): a rope only with use_mem_rope (default false)",
                   head="attention_head_dim", uses_rope=lambda f: f.flag("use_mem_rope")),
    "llama4_text": Rule("llama4.py (0.10.2, 0.19.0, 0.33.0): one rope for the rope layers, none on the NoPE "
                        "layers (the vision tower's 577 x 44 table is left out)"),
    "minimax_m2": Rule("minimax_m2.py (0.19.0, 0.33.0): rotary_dim of head_dim; rows the larger of "
                       "max_position_embeddings and the served max_model_len", rotary="rotary_dim",
                       max_model_len="max"),
    "minimax_text_01": Rule("minimax_text_01.py (0.10.2, 0.19.0; dropped in 0.23.0): rotary_dim of head_dim, "
                            "dtype=torch.float32; rows the smaller of max_position_embeddings and the served "
                            "max_model_len", rotary="rotary_dim", fp32=True, max_model_len="min"),
    # -- sliding and full layers each with their rope
    "gemma3_text": Rule("gemma3.py (0.10.2, 0.19.0, 0.33.0): sliding layers rope_local_base_freq, unscaled",
                        layer_ropes=True, local_theta="rope_local_base_freq", local_theta_default=10000.0),
    "gemma3n_text": Rule("gemma3n.py (0.19.0, 0.33.0): per layer type; sliding rope_local_base_freq",
                         layer_ropes=True, local_theta="rope_local_base_freq", local_theta_default=10000.0),
    "olmo3": Rule("olmo2.py (0.19.0: sliding layers unscaled), olmo3.py (0.26.0, 0.27.1: rope per layer type); "
                  "the Transformers backend from 0.29.0 (registry.py)", head="hidden", layer_ropes=True,
                  backend_from=(0, 29, 0)),
    # -- MLA: the rope part of the head
    "deepseek_v2": Rule("deepseek_v2.py (0.6.4, 0.10.2, 0.19.0, 0.33.0)", kind="mla"),
    "deepseek_v3": Rule("deepseek_v2.py (0.10.2, 0.19.0, 0.33.0)", kind="mla"),
    "kimi_k2": Rule("deepseek_v2.py (DeepseekV3ForCausalLM, 0.10.2, 0.19.0, 0.33.0)", kind="mla"),
    "glm4_moe_lite": Rule("glm4_moe_lite.py builds deepseek_v2.py's MLA attention (0.19.0, 0.33.0)", kind="mla"),
    "longcat_flash": Rule("longcat_flash.py builds deepseek_v2.py's MLA attention (0.19.0, 0.33.0)", kind="mla"),
    "minicpm3": Rule("minicpm3.py (0.19.0, 0.33.0): get_rope(qk_rope_head_dim, max_position_embeddings)",
                     kind="mla", deepseek_rewrite=False),
    "deepseek_v32": Rule("deepseek_v2.py (0.11.0: the indexer shares the MLA rope; 0.12.0-0.33.0: its own, neox "
                         "unless indexer_rope_interleave, so a second table)", kind="mla",
                         indexer_rope_from=(0, 12, 0)),
    "glm_moe_dsa": Rule("GlmMoeDsaForCausalLM: deepseek_v2.py DeepseekV2MLAAttention (0.16.0, 0.20.0, 0.24.0, 0.26.0), "
                        "models/deepseek_v32/attention.py (0.33.0, 0.34.0 on CUDA): the MLA rope (is_neox_style "
                        "False) and the indexer's indexer_rope_emb (is_neox_style = not indexer_rope_interleave), "
                        "one get_rope instance when the flag is true, a second table otherwise", kind="mla",
                        indexer_rope_from=(0, 16, 0)),
    # -- no rotary embedding
    "gpt2": Rule("gpt2.py (0.10.2, 0.19.0, 0.33.0): learned positions", kind="none"),
    "opt": Rule("opt.py (0.10.2, 0.19.0, 0.33.0): learned positions", kind="none"),
    "gpt_bigcode": Rule("gpt_bigcode.py (0.10.2, 0.19.0): learned positions; the Transformers backend later",
                        kind="none"),
    "bloom": Rule("bloom.py (0.10.2, 0.19.0, 0.33.0): ALiBi", kind="none"),
    "mpt": Rule("mpt.py (0.10.2, 0.19.0; dropped in 0.28.0): ALiBi", kind="none"),
    "mamba": Rule("mamba.py (0.10.2, 0.19.0, 0.33.0; falcon_mamba too): no attention", kind="none"),
    "falcon_mamba": Rule("mamba.py (0.10.2, 0.19.0, 0.33.0): no attention", kind="none"),
    "mamba2": Rule("mamba2.py (0.10.2, 0.19.0, 0.33.0): no attention", kind="none"),
    "jamba": Rule("jamba.py (0.10.2, 0.19.0, 0.33.0): attention without positions", kind="none"),
    "nemotron_h": Rule("nemotron_h.py (0.10.2, 0.19.0, 0.33.0): attention without positions", kind="none"),
    "kimi_linear": Rule("kimi_linear.py (0.19.0: MLA with rotary_emb=None); models/kimi_k3/nvidia/mla.py "
                        "(0.33.0: use_rope is off but for the DSpark draft)", kind="none"),
    # -- not modelled
    "olmo_hybrid": Rule("olmo_hybrid.py (0.19.0, 0.33.0) builds a rope only when rope_parameters has a theta; "
                        "a config's null rope_parameters is filled or not by the transformers release",
                        kind="unread"),
    "gemma4_text": Rule("gemma4.py (0.19.0, 0.33.0): per-layer-type heads and 'proportional' rope, not read "
                        "through", kind="unread"),
    # -- M-RoPE (mrope_section): max_position rows up to 0.7.1, x 4 from 0.7.2 (MRotaryEmbedding); the vision
    # tower's own 8,192-row get_rope table (under 1 MiB, and absent when no modality is enabled) is left out
    **{name: Rule("qwen2_5_vl.py / qwen2_vl.py build qwen2.py's model (0.19.0, 0.33.0): M-RoPE x 4")
       for name in ("qwen2_vl", "qwen2_5_vl")},
    **{name: Rule("qwen3_vl.py (Qwen3 attention), qwen3_5.py (Qwen3-Next attention), 0.19.0, 0.31.0: M-RoPE x 4; "
                  "0.32.0, 0.33.0: mrope_positions_factor 1 unless video pruning", mrope_unit_from=(0, 32, 0))
       for name in ("qwen3_vl_text", "qwen3_vl_moe_text", "qwen3_5_text", "qwen3_5_moe_text")},
    **{name: Rule("no vLLM model file (registry.py of 0.6.4, 0.10.2, 0.19.0, 0.33.0)", kind="unread")
       for name in ("gpt_neo", "xglm", "rwkv", "zamba", "recurrent_gemma")},
}
# Multimodal wrappers resolve to their text model's type (mistral3 -> mistral, llava -> llama, gemma3 ->
# gemma3_text, llama4 -> llama4_text, mllama -> mllama_text_model); gemma3 configs may say "gemma3".
FAMILY_RULES["gemma3"] = FAMILY_RULES["gemma3_text"]
FAMILY_RULES["minimax"] = FAMILY_RULES["minimax_m1"] = FAMILY_RULES["minimax_text_01"]  # MiniMaxText01ForCausalLM

# kept for callers that list the families by kind
PLAIN_FAMILIES = tuple(k for k, r in FAMILY_RULES.items() if r.kind == "attention" and not r.layer_ropes)
MLA_FAMILIES = tuple(k for k, r in FAMILY_RULES.items() if r.kind == "mla")
GEMMA3_FAMILIES = ("gemma3", "gemma3_text")
FP32_FAMILIES = tuple(k for k, r in FAMILY_RULES.items() if r.fp32)
NO_ROPE_FAMILIES = tuple(k for k, r in FAMILY_RULES.items() if r.kind == "none")


def _rope(fields, layer_type: str = "full_attention") -> dict:
    """The config's rope scaling as a flat dict with a rope_type (rope_scaling, or rope_parameters,
    which transformers 5 may key by layer type; old configs say "type"; Phi-3 keeps the original
    length at the top level)."""
    for name in ("rope_scaling", "rope_parameters"):
        value = fields.get(name)
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            value = value.get(layer_type)
        if isinstance(value, dict):
            if "rope_type" not in value and "type" in value:
                value = {**value, "rope_type": value["type"]}
            original = fields.raw.get("original_max_position_embeddings")
            if "original_max_position_embeddings" not in value and original is not None:
                # llama.py (0.7.0) and patch_rope_parameters (0.19.0) copy the top-level field in
                value = {**value, "original_max_position_embeddings": original}
            return value
    return {"rope_type": "default"}


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


# no rope scaling makes a table longer than this (a 2**32-row cos/sin table would hold 1 TiB at head dim 128)
MAX_ROPE_ROWS = 2**32


def _scaled(positions: int, factor: float) -> float:
    """positions x factor, refused in one line when a config's factor makes it no context length at all."""
    end = positions * factor
    if not math.isfinite(end) or end > MAX_ROPE_ROWS:
        raise ConfigError(f"rope_scaling.factor {factor!r} x {positions:,} positions is not a context length "
                          f"(more than {MAX_ROPE_ROWS:,})", "fix rope_scaling.factor in the config")
    return end


def _ceil(end: float) -> int:
    """len(torch.arange(end)) for a float end."""
    return int(end) if float(end).is_integer() else int(end) + 1


def _rows(rope: dict, max_position: int, version, mrope_unit_from=None) -> tuple[int, ...] | None:
    """Rows of each buffer the rope builds; None where not modelled or the release decides."""
    kind = rope.get("rope_type") or "default"
    key = release_key(version)
    if "mrope_section" in rope:
        if kind != "default" or key is None:
            return None
        unit = key < MROPE_X4_FROM or (mrope_unit_from is not None and key >= mrope_unit_from)
        return (max_position if unit else max_position * 4,)
    if kind not in ROW_RULES:
        return None
    if kind in ("default", "llama3"):
        return (max_position,)
    if kind == "longrope":
        original = rope.get("original_max_position_embeddings")
        if not isinstance(original, int) or isinstance(original, bool) or original <= 0 or key is None:
            return None
        if key >= LONGROPE_ONE_BUFFER_FROM:
            return (original + max_position,)
        return (original, max_position, original + max_position)
    factor = rope.get("factor")
    if not _positive(factor):
        return None
    if kind == "dynamic":
        if "alpha" in rope or key is None:
            return None
        return (max_position,) if key >= DYNAMIC_ROWS_UNSCALED_FROM else (_ceil(_scaled(max_position, factor)),)
    if kind == "linear":
        return (int(_scaled(max_position, factor)),)
    original = rope.get("original_max_position_embeddings")
    if not isinstance(original, int) or isinstance(original, bool) or original <= 0:
        return None
    return (_ceil(_scaled(original, factor)),)


def _raw(fields, name: str):
    """A config value by its own name (no family alias), else the family default."""
    node = fields.raw
    for part in name.split("."):
        if not isinstance(node, dict) or node.get(part) is None:
            return fields.defaults.get(name)
        node = node[part]
    return node


def _max_position(fields, rule: Rule, max_model_len: int | None) -> int | None:
    value = next((v for v in (_raw(fields, n) for n in rule.positions) if v is not None), rule.positions_default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    if rule.max_model_len and max_model_len:  # the model copies the served max_model_len into its config
        value = max(value, max_model_len) if rule.max_model_len == "max" else min(value, max_model_len)
    return value


def _head(fields, rule: Rule) -> int:
    if rule.head not in ("head_dim", "hidden"):
        return fields.int(rule.head)
    explicit = fields.opt_int("head_dim") if rule.head == "head_dim" else None
    return explicit or fields.int("hidden_size") // fields.int("num_attention_heads")


def _rotary_dim(fields, rule: Rule, head: int, rope: dict) -> int | None:
    if isinstance(rule.rotary, float):
        factor = rule.rotary
    elif isinstance(rule.rotary, str):
        width = fields.get(rule.rotary)
        if width is None:
            return head
        if not isinstance(width, int) or isinstance(width, bool) or not 0 < width <= head:
            return None
        return width
    else:
        factor = rope.get("partial_rotary_factor")
        for name in PARTIAL_NAMES:
            if factor is None:
                factor = _raw(fields, name)
        if factor is None:
            factor = rule.partial_default
    if not _positive(factor) or factor > 1:
        return None
    return int(head * factor)


def rope_tables(fields, dtype_bytes: int = 2, version=None,
                max_model_len: int | None = None) -> tuple[RopeTable, ...] | None:
    """The distinct tables vLLM builds for a config (kvplan.configs Fields, family defaults filled) on
    release `version` (needed only where the rows changed between releases) serving `max_model_len`
    (None: vLLM's default, max_position_embeddings; only the MiniMax files read it), or None where this
    module has not read the family's rope, the release decides and is not given, or the config lacks a
    field."""
    rule = FAMILY_RULES.get(fields.model_type)
    if rule is None or rule.kind == "unread":
        return None
    if rule.kind == "none":
        return ()
    try:
        if rule.uses_rope is not None and not rule.uses_rope(fields):
            return ()
        if rule.backend_from is not None:
            key = release_key(version)
            if key is None:
                return None
            if key >= rule.backend_from:
                return ()
        return _tables(fields, rule, 4 if rule.fp32 else dtype_bytes, version, max_model_len)
    except ConfigError:
        return None


def _tables(fields, rule: Rule, dtype_bytes: int, version, max_model_len) -> tuple[RopeTable, ...] | None:
    max_position = _max_position(fields, rule, max_model_len)
    if max_position is None:
        return None
    if rule.kind == "mla":
        rope = _rope(fields)
        if rule.deepseek_rewrite and rope.get("rope_type") not in (None, "default"):
            rope = {**rope, "rope_type": "deepseek_yarn"}  # DeepseekV2 MLA attention rewrites it
        rows = _rows(rope, max_position, version)
        if rows is None:
            return None
        width = fields.int("qk_rope_head_dim")
        count = 1
        if rule.indexer_rope_from is not None:
            key = release_key(version)
            if key is None:
                return None
            if key >= rule.indexer_rope_from and not fields.flag("indexer_rope_interleave"):
                count = 2  # the indexer's rope differs only in is_neox_style: its own table
        return tuple(RopeTable(r, width, dtype_bytes) for r in rows) * count
    head = _head(fields, rule)
    tables: list[RopeTable] = []
    seen: list[tuple] = []
    for rope in _layer_ropes(fields, rule) if rule.layer_ropes else [_rope(fields)]:
        key = tuple(sorted((k, repr(v)) for k, v in rope.items() if k != "type"))
        if key in seen:
            continue  # get_rope hands the same instance back
        seen.append(key)
        rows = _rows(rope, max_position, version, rule.mrope_unit_from)
        width = _rotary_dim(fields, rule, head, rope)
        if rows is None or width is None:
            return None
        tables.extend(RopeTable(r, width, dtype_bytes) for r in rows)
    return tuple(tables)


def _layer_ropes(fields, rule: Rule) -> list[dict]:
    """The sliding layers' rope and the full layers' rope: from rope_parameters keyed by layer type where
    the config (transformers 5) keys it so; else the sliding one unscaled with the local theta."""
    for name in ("rope_parameters", "rope_scaling"):
        value = fields.get(name)
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            return [_rope(fields, "sliding_attention"), _rope(fields, "full_attention")]
    theta = _raw(fields, "rope_theta")
    full = {**_rope(fields), "rope_theta": _rope(fields).get("rope_theta", theta)}
    local = _raw(fields, rule.local_theta) if rule.local_theta else None
    if rule.local_theta and local is None:
        local = rule.local_theta_default
    return [{"rope_type": "default", "rope_theta": local if local is not None else full["rope_theta"]}, full]


def rope_cache_bytes(fields, dtype_bytes: int = 2, version=None, max_model_len: int | None = None) -> int | None:
    tables = rope_tables(fields, dtype_bytes, version, max_model_len)
    if tables is None:
        return None
    return sum(t.bytes for t in tables)


__all__ = ["RopeTable", "Rule", "FAMILY_RULES", "rope_tables", "rope_cache_bytes", "PLAIN_FAMILIES",
           "MLA_FAMILIES", "GEMMA3_FAMILIES", "FP32_FAMILIES", "NO_ROPE_FAMILIES"]
