"""The rotary cos/sin tables vLLM keeps on the GPU beside the weights.

vLLM's rotary embedding (model_executor/layers/rotary_embedding: `get_rope` and the
classes it builds; one file up to 0.9, a package after, read in 0.6.4, 0.10.2, 0.11.0,
0.19.0, 0.27.1 and 0.33.0) computes a cos/sin table when the model is built and registers
it as a non-persistent buffer, on the GPU, in the serving dtype (`cache.to(dtype)`, dtype
= the model's unless the family passes one). It is built inside the load, so vLLM's
"Model loading took" / "Loading model weights took" counts it, and it is whole on every
TP rank. `get_rope` caches one instance per distinct argument set, so a model holds one
table per distinct rope, not one per layer.

    table bytes = rows x rotary_dim x dtype bytes   (cos and sin halves, rotary_dim / 2 each)

rows, by the rope type `get_rope` dispatches on:
- default, llama3: max_position (the family passes max_position_embeddings);
- linear: max_position x factor (LinearScalingRotaryEmbedding);
- yarn, deepseek_yarn: original_max_position_embeddings x factor (YaRN / Deepseek
  scaling classes build `arange(max_position_embeddings x scaling_factor)` with the
  original length passed in);
- dynamic and longrope changed between releases (Phi-3's LongRoPE kept three tables up to
  0.6.x, one later) and M-RoPE takes positions factors: not modelled (None).

The families whose own `get_rope` call was read (models/<family>.py in the releases above):
llama (and Mistral, served by llama.py), qwen2, qwen3, qwen3_moe, qwen3_next (partial
rotary factor), mixtral: head_dim, max_position_embeddings, the config's rope; gemma3: two
ropes, the sliding layers' with rope_local_base_freq and no scaling, the global layers'
with the config's rope_scaling (Gemma 3 4B: 1,048,576 + 131,072 rows of 256, 0.56 GiB);
gpt_oss: yarn in float32 (dtype=torch.float32 in gpt_oss.py); deepseek_v2/v3 (MLA): the
rope part of the head, qk_rope_head_dim, with deepseek_yarn. Other families: None.

Checked against logged loads: Llama-3.1-8B on 0.6.4 logs 14.9888 GiB, its parameters are
14.9575 GiB and its table 32 MiB (131,072 x 128 x 2 B); Meta-Llama-3-8B on 0.6.6 logs
14.9595 GiB with a 2 MiB table (8,192 rows); gemma-3-4b-it (PR #21489) logs 8.58 GiB for
8.01 GiB of parameters and 0.56 GiB of tables.
"""

from __future__ import annotations

from dataclasses import dataclass

# model_types whose vLLM model file passes (head_dim, max_position_embeddings, the config's rope)
PLAIN_FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "qwen3_next", "mixtral")
MLA_FAMILIES = ("deepseek_v2", "deepseek_v3")
GEMMA3_FAMILIES = ("gemma3", "gemma3_text")
FP32_FAMILIES = ("gpt_oss",)  # gpt_oss.py: get_rope(..., dtype=torch.float32)
ROW_RULES = ("default", "llama3", "linear", "yarn", "deepseek_yarn")


@dataclass(frozen=True)
class RopeTable:
    rows: int
    rotary_dim: int
    dtype_bytes: int

    @property
    def bytes(self) -> int:
        return self.rows * self.rotary_dim * self.dtype_bytes


def _rope(fields, layer_type: str = "full_attention") -> dict:
    """The config's rope scaling as a flat dict with a rope_type (rope_scaling, or rope_parameters,
    which transformers 5 may key by layer type; old configs say "type")."""
    for name in ("rope_scaling", "rope_parameters"):
        value = fields.get(name)
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            value = value.get(layer_type)
        if isinstance(value, dict):
            if "rope_type" not in value and "type" in value:
                value = {**value, "rope_type": value["type"]}
            return value
    return {"rope_type": "default"}


def _rows(rope: dict, max_position: int) -> int | None:
    kind = rope.get("rope_type") or "default"
    if kind not in ROW_RULES or "mrope_section" in rope:
        return None
    if kind in ("default", "llama3"):
        return max_position
    factor = rope.get("factor")
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 0:
        return None
    if kind == "linear":
        return int(max_position * factor)
    original = rope.get("original_max_position_embeddings")
    if not isinstance(original, int) or isinstance(original, bool) or original <= 0:
        return None
    # arange(original x factor): ceil of a float end
    end = original * factor
    return int(end) if float(end).is_integer() else int(end) + 1


def rope_tables(fields, dtype_bytes: int = 2) -> tuple[RopeTable, ...] | None:
    """The distinct tables vLLM builds for a config (kvplan.configs Fields, family defaults filled),
    or None where this module has not read the family's rope or the config lacks a field it needs."""
    from ..errors import ConfigError

    if fields.model_type not in PLAIN_FAMILIES + FP32_FAMILIES + MLA_FAMILIES + GEMMA3_FAMILIES:
        return None
    try:
        return _tables(fields, dtype_bytes)
    except ConfigError:
        return None


def _tables(fields, dtype_bytes: int) -> tuple[RopeTable, ...] | None:
    model_type = fields.model_type
    if model_type in MLA_FAMILIES:
        rope = _rope(fields)
        if rope.get("rope_type") == "yarn":
            rope = {**rope, "rope_type": "deepseek_yarn"}  # vLLM's DeepSeek config rewrites it
        rows = _rows(rope, fields.int("max_position_embeddings"))
        return None if rows is None else (RopeTable(rows, fields.int("qk_rope_head_dim"), dtype_bytes),)
    head_dim = fields.opt_int("head_dim") or (fields.int("hidden_size") // fields.int("num_attention_heads"))
    max_position = fields.int("max_position_embeddings")
    if model_type in GEMMA3_FAMILIES:
        scaled = _rows(_rope(fields), max_position)
        return None if scaled is None else (RopeTable(max_position, head_dim, dtype_bytes),
                                            RopeTable(scaled, head_dim, dtype_bytes))
    factor = fields.number("partial_rotary_factor", default=1.0)
    rotary_dim = int(head_dim * factor) if 0 < factor <= 1 else head_dim
    rows = _rows(_rope(fields), max_position)
    if rows is None:
        return None
    return (RopeTable(rows, rotary_dim, 4 if model_type in FP32_FAMILIES else dtype_bytes),)


def rope_cache_bytes(fields, dtype_bytes: int = 2) -> int | None:
    tables = rope_tables(fields, dtype_bytes)
    if tables is None:
        return None
    return sum(t.bytes for t in tables)


__all__ = ["RopeTable", "rope_tables", "rope_cache_bytes", "PLAIN_FAMILIES", "MLA_FAMILIES",
           "GEMMA3_FAMILIES", "FP32_FAMILIES"]
