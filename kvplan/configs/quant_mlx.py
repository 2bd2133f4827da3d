"""MLX checkpoints (mlx-lm): their quantization, read from config.json, and the bytes it stores module by module.

mlx-lm writes its quantization under the top-level key "quantization" ({"group_size": 64, "bits": 4, "mode":
"affine"}, plus an entry per module quantized otherwise, keyed by the MLX module path: {"group_size", "bits"} or
false), and since its "support hf model tree" change the same dict again as "quantization_config" (mlx_lm/utils.py
quantize_model and save_config; load_model reads "quantization" first). Neither has a quant_method: read as
anything else it would pass for an unquantized checkpoint.

Which modules (mlx_lm/utils.py quantize_model, wrapped_predicate): every module with to_quantized (mlx.nn Linear
and Embedding, mlx-lm's SwitchLinear for the routed experts) whose weight's last dimension (its inputs; an
embedding's width) divides by the group size, at the module's own settings where the config names it; biases,
norms and everything else stay in the float dtype. The embeddings are quantized too (unlike the HF formats), and
a tied head is the quantized embedding (Embedding.as_linear).

The stored layout (mlx/ops.cpp quantize, mlx/nn/layers/quantized.py QuantizedLinear / QuantizedEmbedding), per
weight of a module with `in` inputs, group g, b bits:
  affine   weight uint32 [out, in x b / 32] + scales and biases [out, in / g] in the weights' float dtype
           (mlx_lm convert casts to the config's torch_dtype before quantizing): b/8 + 2 x dtype bytes / g
  mxfp4    weight uint32 + uint8 E8M0 scales per 32, no biases: 1/2 + 1/32
  mxfp8    1 + 1/32
  nvfp4    uint8 (FP8) scales per 16: 1/2 + 1/16
Read in ml-explore/mlx-lm d78bf58 (2026-08-22) and ml-explore/mlx 846d176 (2026-08-22).

Module paths are MLX's, which are the checkpoint's except the routed experts (mlx-lm stacks them as
mlp.switch_mlp.*): the families below are those whose mlx-lm model classes were read to build nn.Linear exactly
where kvplan's per-module table (configs/weight_tables/__init__.py) has a linear weight, plus the router as nn.Linear
(qwen3_moe.py Qwen3MoeSparseMoeBlock.gate, mixtral.py MixtralSparseMoeBlock.gate; mlx-lm's qwen3_moe
quant_predicate gives it 8 bits, written into the config). Other families give no figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from .quant_bytes import Unsized

# mlx_lm/models/<name>.py read: llama.py (mistral maps to it: utils.py MODEL_REMAPPING), qwen2.py, qwen3.py,
# telechat3.py (nn.Linear q/k/v/o_proj, gate/up/down_proj, nn.Embedding, lm_head nn.Linear), qwen3_moe.py and
# mixtral.py (the same, with an nn.Linear router and SwitchGLU experts), gemma2.py (nn.Linear q/k/v/o_proj and
# gate/up/down_proj without biases, nn.Embedding, the head tied: embed_tokens.as_linear; four RMSNorms a layer)
# qwen3_5.py (Qwen3.5 / 3.6 dense, the text model of model_type "qwen3_5"): nn.Linear q/k/v/o_proj (qwen3_next.py
# Qwen3NextAttention, q_proj doubled for the output gate), GatedDeltaNet's in_proj_qkv / in_proj_z / in_proj_b /
# in_proj_a / out_proj, gate/up/down_proj (Qwen3NextMLP), nn.Embedding, lm_head nn.Linear; conv1d (nn.Conv1d),
# dt_bias, A_log and the RMSNorms stay in the float dtype (A_log in the source checkpoint's: cast_predicate);
# qwen3_5_moe.py (the same Model) builds qwen3_next.py Qwen3NextSparseMoeBlock: the router mlp.gate and the
# one-output shared_expert_gate as nn.Linear (TextModel.quant_predicate gives both 8 bits, group 64, written into
# the config's entries), SwitchGLU experts, a Qwen3NextMLP shared_expert.
FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "telechat3", "qwen3_moe", "mixtral", "gemma2", "qwen3_5_text",
            "qwen3_5_moe_text")
# the MLX module path before a family's `model.` / top-level names, where mlx-lm's class wraps them: qwen3_5.py
# Model holds TextModel as `language_model` (the per-module entries read "language_model.model.layers.N...",
# "language_model.lm_head")
PATH_PREFIX = {"qwen3_5_text": "language_model.", "qwen3_5_moe_text": "language_model."}
# mlx/python/mlx/nn/layers/quantized.py _defaults_for_mode and mlx/ops.cpp fp_quantize / affine_quantize
_MODES = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}
_SETTINGS = ("group_size", "bits", "mode")


@dataclass(frozen=True)
class Setting:
    group_size: int
    bits: int
    mode: str

    def bytes_per_weight(self, float_bytes: int) -> float:
        if self.mode == "affine":  # a scale and a bias per group, in the weights' float dtype
            return self.bits / 8 + 2 * float_bytes / self.group_size
        return self.bits / 8 + 1 / self.group_size  # one uint8 scale per group

    @property
    def label(self) -> str:
        return f"{self.bits}-bit {self.mode}, group {self.group_size}"


@dataclass(frozen=True)
class MlxQuant:
    default: Setting
    overrides: dict  # MLX module path -> Setting, or None: left unquantized


def block(raw: dict) -> dict | None:
    """The MLX quantization block of a config: "quantization", else a "quantization_config" (the config's or its
    text model's) of MLX's shape (group_size and bits, no quant_method or quant_algo); None when neither."""
    for holder, key in ((raw, "quantization"), (raw, "quantization_config"),
                        (raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {},
                         "quantization_config")):
        q = holder.get(key)
        if is_mlx(q):
            return q
    return None


def is_mlx(q) -> bool:
    """Whether a quantization dict has MLX's shape: group_size and bits, and no quant_method or quant_algo."""
    return (isinstance(q, dict) and "bits" in q and "group_size" in q and "quant_method" not in q
            and "quant_algo" not in q and not isinstance(q.get("quantization"), dict))


def _setting(q: dict, default: Setting | None, where: str) -> Setting:
    mode = q.get("mode", default.mode if default else "affine")
    if mode not in _MODES:
        raise Unsized(f"MLX {where}: mode {mode!r} is not one of {', '.join(_MODES)}")
    group = q.get("group_size", default.group_size if default and default.mode == mode else _MODES[mode][0])
    bits = q.get("bits", default.bits if default and default.mode == mode else _MODES[mode][1])
    for value, what in ((group, "group_size"), (bits, "bits")):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise Unsized(f"MLX {where}: {what} is {value!r}, not a positive integer")
    if mode == "affine" and (group not in (32, 64, 128) or not 2 <= bits <= 8 or bits == 7):
        raise Unsized(f"MLX {where}: affine quantization takes group sizes 32, 64, 128 and 2-6 or 8 bits "
                      f"(mlx/ops.cpp affine_quantize), not group {group}, {bits} bits")
    if mode != "affine" and (group, bits) != _MODES[mode]:
        raise Unsized(f"MLX {where}: {mode} takes group {_MODES[mode][0]} and {_MODES[mode][1]} bits, "
                      f"not group {group}, {bits} bits")
    return Setting(group, bits, mode)


def read(q: dict) -> MlxQuant:
    default = _setting(q, None, "quantization")
    overrides = {}
    for key, value in q.items():
        if key in _SETTINGS:
            continue
        if value is False:
            overrides[key] = None
        elif value is True:
            overrides[key] = default
        elif isinstance(value, dict):
            overrides[key] = _setting(value, default, f"entry {key!r}")
        else:
            raise Unsized(f"MLX quantization entry {key!r} is {value!r}, not settings or a boolean")
    return MlxQuant(default, overrides)


@dataclass(frozen=True)
class Sized:
    stored_bytes: float
    quantized: int  # parameters stored quantized
    rates: dict  # Setting.label -> parameters quantized so
    kept: int  # parameters of quantizable modules left in the float dtype (inputs not a multiple of the group)
    # bytes each TP rank would hold whole (norms, routers: weight_tables.replicated_params), at their stored width
    whole_bytes: float = 0.0


def size(q: MlxQuant, modules: list, hidden: int, float_bytes: int, prefix: str = "") -> Sized:
    """The bytes of an MLX checkpoint of these modules (a configs/weight_tables/__init__.py table of one of FAMILIES):
    linear weights, routers and embeddings quantized as MLX does, the rest at float_bytes; prefix: the family's
    PATH_PREFIX, before the MLX module paths the config's per-module entries name."""
    from .weight_tables import ROOTS, _whole_floats

    named = dict(q.overrides)
    stored, quantized, kept, rates, whole = 0.0, 0, 0, {}, 0.0
    for m in modules:
        before = stored
        linear = m.weight > 0
        # the embeddings [vocab, hidden] and the routers [experts, hidden] (nn.Embedding / nn.Linear in MLX)
        mlx_linear = not linear and m.role in ("embeddings", "router") and m.other and m.other % hidden == 0
        params = m.weight if linear else m.other if mlx_linear else 0
        if not params:
            stored += (m.weight + m.other) * float_bytes
            whole += m.other * float_bytes if _whole_floats(m) else 0
            continue
        inputs = m.inputs if linear else hidden
        if not inputs:
            raise Unsized(f"MLX: kvplan's table does not give the input width of {m.name}")
        paths = [prefix + m.name] if m.top else [prefix + root + m.name for root in ROOTS[:1]]
        hits = [p for p in paths if p in named]
        setting = q.default
        if m.experts:  # MLX names the stacked experts mlp.switch_mlp.*, which no entry here can name
            pass
        elif hits:
            setting = named.pop(hits[0])
        if setting is None or inputs % q.default.group_size:  # wrapped_predicate: the default group must divide
            kept += params
            stored += (m.weight + m.other) * float_bytes
        else:
            rate = setting.bytes_per_weight(float_bytes)
            stored += params * rate + (m.other if linear else 0) * float_bytes
            quantized += params
            rates[setting.label] = rates.get(setting.label, 0) + params
        if _whole_floats(m):  # a router (or a whole module): held whole at its stored width
            whole += stored - before if (not linear or m.whole) else m.other * float_bytes
    if named:
        raise Unsized(f"MLX quantizes {sorted(named)[0]!r} by its own entry, a module kvplan's table does not name")
    return Sized(stored, quantized, rates, kept, whole)


def refusal(model, engine: str) -> str | None:
    """Why `engine` ("vLLM" or "SGLang") cannot serve an MLX checkpoint, in one sentence; None if not MLX."""
    if not str(getattr(model, "weight_dtype", "")).startswith("mlx-"):
        return None
    if engine == "SGLang":
        return (f"{model.name} is an MLX checkpoint (mlx-lm's packed weights, scales and biases): SGLang's CUDA "
                "runtime has no MLX weight format (only its Apple-silicon MLX backend loads such checkpoints, "
                "through mlx_lm, which kvplan does not model)")
    return (f"{model.name} is an MLX checkpoint (mlx-lm's packed weights, scales and biases): vLLM has no MLX "
            "quantization method (no quant_method: vLLM 0.34 config/model.py _verify_quantization reads it as "
            "unquantized, and the packed uint32 weights do not load)")
