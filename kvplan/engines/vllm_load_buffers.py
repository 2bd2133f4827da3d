"""Buffers vLLM allocates while it builds a model, counted in its load ("Model loading took") beside the weights.

DeepSeek sparse attention (DSA) models reserve one top-k indices buffer that every indexer layer writes and the
sparse MLA backend reads: a plain `torch.empty(max_num_batched_tokens, index_topk, dtype=torch.int32)` in the
model's `__init__`, so it is allocated inside the load, whole on every TP rank and on every PP stage (each stage
builds the model class). Its rows are the scheduler's max_num_batched_tokens, the figure the profile already uses.

    buffer bytes = rows x columns x 4 B        (int32)

BUFFERS below holds one entry per model_type: the vLLM file and function that allocate it, the first release that
does (each family's first vLLM release: vllm_registry_data.py), and its columns (and rows where they differ).
Releases read: 0.11.0 (DeepSeek-V3.2's arrival), 0.16.0, 0.20.0, 0.24.0, 0.26.0, 0.27.0-0.30.0, 0.33.0, 0.34.0.
A model_type not in BUFFERS allocates none (a grep of 0.34.0 for `topk_indices_buffer = torch.empty` finds these
families' files, their MTP / DSpark drafters (MTP_BUFFER_FROM below), glm4_moe_lite.py (only for a config with
index_topk, which GLM-4.7-Flash's has not) and models/kimi_k3 (only with a dsa_config, which kvplan refuses:
configs/vllm34_text.py)); an "unread" entry returns None (its width is not read through).

Speculative decoding by MTP: each MTP layer vLLM builds (config num_nextn_predict_layers) allocates a buffer of the
target's shape of its own, not shared with the target's, inside the same load (gpu_model_runner.py / v1/worker/gpu/
model_runner.py load_model measure the drafter with the model): deepseek_mtp.py DeepSeekMultiTokenPredictorLayer.
__init__ (`if self.is_v32`: hasattr(config, "index_topk")), read in 0.11.0, 0.16.0, 0.26.0, 0.30.0, 0.33.0 and
0.34.0 (config/speculative.py hf_config_override sends deepseek_v32 and glm_moe_dsa there: 0.16.0, 0.34.0), and from
0.33.0 models/deepseek_v32/nvidia/mtp.py (use_v32_mtp for the same two); mtp_topk_bytes. The MTP layer's own sparse MLA index group (0.30+) is not modelled.

From 0.30.0 the sparse MLA layers of DeepSeek-V3.2, GLM-5 and Mistral Large 4 also join a
SparseMLAIndexGroupBuilder (v1/attention/backends/mla/index_group.py) while they are built: each index-producing
layer's group allocates `physical_topk_indices` (max_decode_rows + 1, index_topk) int32 and `valid_topk_counts`
(max_decode_rows + 1) int32, with max_decode_rows = min(max_num_batched_tokens, max_num_seqs x the widest decode
query) (get_sparse_mla_index_group_max_rows): 1 without speculative decoding, 1 + num_speculative_tokens with an MTP
drafter (0.30.0: 1 + k x (2 with parallel_drafting, off by default); 0.33.0 and 0.34.0 v1/attention/backend.py
max_decode_query_len: 1 + k + max_num_new_slots_for_drafting, which only a draft model's input raises); see
index_group_bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import ConfigError
from .vllm_release import release_key

INT32_BYTES = 4


@dataclass(frozen=True)
class Buffer:
    """One family's top-k indices buffer.

    read: the vLLM file(s) and function that allocate it, and the releases read.
    first: the first release that allocates it.
    columns: the config -> its columns (index_topk by default; None: this config allocates none).
    index_heads: MiniMax-M3's leading dimension, the index heads each TP rank holds (None: none).
    row_multiple: the rows are max_num_batched_tokens rounded up to this.
    unread: the width is not read through: the buffer is not sized (None).
    """

    read: str
    first: tuple[int, ...]
    columns: Callable | None = None
    index_heads: Callable | None = None
    row_multiple: int = 1
    unread: bool = False


def _topk(default: int | None):
    """index_topk, else the config class's default (None: a config without it allocates none)."""
    def columns(f):
        if f.get("index_topk") is None:
            return default
        return f.int("index_topk")
    return columns


def _minimax_heads(f, tp: int) -> int:
    from ..configs.block_sparse import setting

    return max(1, setting(f, "index_n_heads") // max(tp, 1))


def _minimax_columns(f):
    from ..configs import kinds as K
    from ..configs.block_sparse import minimax_m3_kinds, setting

    layer_types = f.get("layer_types")
    sparse = (any(t == "minimax_m3_sparse" for t in layer_types) if isinstance(layer_types, list)
              else K.BLOCK_SPARSE in minimax_m3_kinds(f, f.int("num_hidden_layers")))
    return setting(f, "index_topk_blocks") if sparse else None


_V32 = ("model_executor/models/deepseek_v2.py DeepseekV2Model.__init__ when the config has index_topk (0.11.0, "
        "0.16.0, 0.20.0, 0.24.0, 0.26.0: registry.py sends both architectures there); models/deepseek_v32/nvidia/"
        "model.py DeepseekV32Model.__init__, where 0.33.0 and 0.34.0 send them on CUDA")
_MINIMAX = Buffer("models/minimax_m3/nvidia/model.py MiniMaxM3Model.__init__ (0.24.0, 0.27.0-0.30.0, 0.33.0, "
                  "0.34.0): max(1, index heads // TP) x max_num_batched_tokens rounded up to 4 x topk blocks, head-"
                  "major in 0.24.0, token-major in 0.33.0 and 0.34.0 (the same bytes); allocated when the config has "
                  "sparse_attention_config (0.24.0-0.33.0) or a minimax_m3_sparse layer (0.34.0), which kvplan "
                  "takes as: some layer is sparse", (0, 24, 0),
                  columns=_minimax_columns, index_heads=_minimax_heads, row_multiple=4)

BUFFERS: dict[str, Buffer] = {
    "deepseek_v32": Buffer(_V32, (0, 11, 0), columns=_topk(2048)),
    "glm_moe_dsa": Buffer(_V32 + " (GlmMoeDsaForCausalLM from 0.16.0)", (0, 16, 0), columns=_topk(2048)),
    "deepseek_v4": Buffer("model_executor/models/deepseek_v4.py (0.20.0), models/deepseek_v4/nvidia/model.py "
                          "(0.24.0, 0.27.0-0.30.0, 0.33.0, 0.34.0) DeepseekV4Model.__init__", (0, 20, 0),
                          columns=_topk(512)),
    "deepseek_v41_text": Buffer("models/deepseek_v41/nvidia/model.py DeepseekV4Model.__init__ (0.30.0, 0.33.0, "
                                "0.34.0)", (0, 30, 0), columns=_topk(None)),
    "dots3_note_text": Buffer("models/dots3_note/nvidia/model.py Dots3NoteModel.__init__ (0.28.0-0.30.0, 0.33.0, "
                              "0.34.0)", (0, 28, 0), columns=_topk(2048)),
    "hy_v4": Buffer("models/hy_v4/nvidia/model.py HYV4Model.__init__ when the config has index_topk (0.29.0, "
                    "0.30.0, 0.33.0, 0.34.0; vLLM's HYV4Config defaults it to 2048)", (0, 29, 0),
                    columns=_topk(2048)),
    "mistral_large4_text": Buffer("models/mistral/mistral_large4/nvidia/model.py MistralLarge4Model.__init__ when "
                                  "index_topk is not None (0.34.0)", (0, 34, 0), columns=_topk(2048)),
    **{name: _MINIMAX for name in ("minimax_m3", "minimax_m3_text", "minimax_m3_vl_text")},
    "glm5_next_text": Buffer("models/glm5next: the width is index_topk + index_kpool - 1 rounded to a tile that "
                             "changed between 0.30.0 (nvidia/model.py) and 0.34.0 (common/model.py "
                             "get_sparse_topk_buffer_width); not read through", (0, 30, 0), unread=True),
    "qwen4_exp_text": Buffer("models/qwen4_exp/nvidia/model.py (0.34.0: indexer_budget + indexer_compress_ratio "
                             "columns when QSA layers exist); absent in 0.29.0 and 0.30.0, its first release not "
                             "bisected", (0, 34, 0), unread=True),
}
BUFFERS["hy_v4_vl_text"] = BUFFERS["hy_v4"]


# -- the sparse MLA index groups (v1/attention/backends/mla/index_group.py SparseMLAIndexGroupBuilder.register_layer,
# 0.30.0-0.34.0): the model passes one builder to every sparse MLA layer; each layer with an indexer (and the first
# layer when it has none) opens a group, which allocates physical_topk_indices (rows + 1, index_topk) and
# valid_topk_counts (rows + 1) int32 (0.30.x also request_ids (rows,) int32), rows = get_sparse_mla_index_group_max_
# rows: min(max_num_batched_tokens, max_num_seqs x the widest decode query, 1 without speculative decoding).
INDEX_GROUP_FROM = (0, 30, 0)
INDEX_GROUP_REQUEST_IDS = ((0, 30, 0), (0, 31, 0))  # request_ids: 0.30.x only (gone in 0.31.0)
# the families whose model passes its builder to every layer (0.30.0-0.32.0 deepseek_v2.py DeepseekV2Model, 0.33.0 and
# 0.34.0 models/deepseek_v32/nvidia/model.py DeepseekV32Model, 0.34.0 mistral_large4/nvidia/model.py)
SHARED_GROUP_TYPES = {"deepseek_v32": (0, 30, 0), "glm_moe_dsa": (0, 30, 0), "mistral_large4_text": (0, 34, 0)}
# sparse MLA layers built without a builder, each opening its own group sized by the top-k buffer's rows
# (sparse_mla_attention.py SparseMLACommonImpl.__init__'s fallback): not read through per backend
PER_LAYER_GROUP_TYPES = ("dots3_note_text", "hy_v4", "hy_v4_vl_text")


def index_group_bytes(model_type: str, groups: int, index_topk: int, max_num_batched_tokens: int,
                      max_num_seqs: int, version=None, decode_width: int = 1) -> int | None:
    """The index groups' workspaces one GPU allocates in the load: 0 where the family or release has none, None
    where they are not modelled (a release-dependent family without a release, or per-layer builders).
    decode_width: the widest decode query (module doc; 1 + num_speculative_tokens under MTP)."""
    key = release_key(version)
    if model_type in PER_LAYER_GROUP_TYPES:
        return None if key is None or key >= INDEX_GROUP_FROM else 0
    first = SHARED_GROUP_TYPES.get(model_type)
    if first is None or groups <= 0:
        return 0
    if key is None:
        return None
    if key < first:
        return 0
    rows = min(max_num_batched_tokens, max_num_seqs * max(decode_width, 1))
    per_group = (rows + 1) * index_topk * INT32_BYTES + (rows + 1) * INT32_BYTES
    if INDEX_GROUP_REQUEST_IDS[0] <= key < INDEX_GROUP_REQUEST_IDS[1]:
        per_group += rows * INT32_BYTES
    return groups * per_group


@dataclass(frozen=True)
class LoadBuffer:
    rows: int
    columns: int
    index_heads: int = 1
    dtype_bytes: int = INT32_BYTES

    @property
    def bytes(self) -> int:
        return self.index_heads * self.rows * self.columns * self.dtype_bytes

    def describe(self) -> str:
        heads = f"{self.index_heads:,} x " if self.index_heads > 1 else ""
        return f"{heads}{self.rows:,} x {self.columns:,} x {self.dtype_bytes} B"


# the families whose MTP layers allocate their own top-k indices buffer (module doc): the first release (the family's)
MTP_BUFFER_FROM = {"deepseek_v32": (0, 11, 0), "glm_moe_dsa": (0, 16, 0)}


def mtp_topk_bytes(fields, columns: int, max_num_batched_tokens: int, version=None) -> int | None:
    """The top-k indices buffers of the MTP layers vLLM `version` builds for speculative decoding by MTP, on each
    last-stage GPU: num_nextn_predict_layers x max_num_batched_tokens x `columns` (the target's) x 4 B; 0 for a
    family without them, None where the config does not say how many MTP layers."""
    first = MTP_BUFFER_FROM.get(fields.model_type)
    key = release_key(version)
    if first is None or columns <= 0 or (key is not None and key < first):
        return 0
    try:
        layers = fields.int("num_nextn_predict_layers", minimum=0)
    except ConfigError:
        return None
    return layers * max_num_batched_tokens * columns * INT32_BYTES


def topk_buffer(fields, max_num_batched_tokens: int, version=None, tp: int = 1) -> LoadBuffer | None:
    """The top-k indices buffer vLLM `version` (None: any release that serves the family) builds for a config
    (kvplan.configs Fields) at `max_num_batched_tokens`, per GPU; a LoadBuffer of 0 columns where it builds none,
    None where the family's buffer is not read through or the config lacks what sizes it."""
    rule = BUFFERS.get(fields.model_type)
    key = release_key(version)
    if rule is None or (key is not None and key < rule.first):
        return LoadBuffer(max_num_batched_tokens, 0)
    if rule.unread:
        return None
    try:
        columns = rule.columns(fields)
        if columns is None:
            return LoadBuffer(max_num_batched_tokens, 0)
        heads = rule.index_heads(fields, tp) if rule.index_heads else 1
    except ConfigError:
        return None
    m = rule.row_multiple
    return LoadBuffer(-(-max_num_batched_tokens // m) * m, columns, heads)


__all__ = ["Buffer", "BUFFERS", "LoadBuffer", "topk_buffer", "mtp_topk_bytes", "MTP_BUFFER_FROM", "INT32_BYTES", "index_group_bytes", "INDEX_GROUP_FROM",
           "SHARED_GROUP_TYPES", "PER_LAYER_GROUP_TYPES"]
