"""Parameters vLLM holds of a module beyond what the checkpoint stores, or fewer: vLLM builds the module otherwise
than the checkpoint's layout. kvplan's plan counts the checkpoint (configs/weight_tables/__init__.py tables mirror the
counters); vLLM's profile (engines/vllm_load_delta.py) adds or takes away these, at the checkpoint's float width,
held as the module is (whole on every TP rank, split, or one KV head a rank above the KV heads).

- Gemma 4 (and Gemma 4 Unified, whose text model vLLM builds as gemma4.py's Gemma4ForCausalLM): on the full
  attention layers of a config with attention_k_eq_v the checkpoint stores k_proj and no v_proj (transformers
  5.25 modeling_gemma4.py Gemma4TextAttention: v_proj None where use_alternative_attention), and vLLM builds a
  QKVParallelLinear over q, k and v (gemma4.py Gemma4Attention) and loads k_proj into both its K and V shards
  (0.34 _gemma4_layer_weights_mapper: ("k", ["k", "v"]); 0.19.0 Gemma4ForCausalLM.load_weights duplicates k_proj as
  v_proj). So vLLM holds a second copy of each such k_proj (weight and bias), split by KV head as the keys are.
  Read in 0.19.0 (the first release whose registry has Gemma4ForConditionalGeneration), 0.25.0, 0.27.0, 0.33.0
  and 0.34.0. Not covered: before 0.34's mapper the KV-shared layers (num_kv_shared_layers) also built a
  QKVParallelLinear (0.19.0 Gemma4Attention builds qkv_proj on every layer), which kvplan's table, as
  transformers, gives no k/v weights.
- LongCat-Flash with router_bias: transformers 5.25 modeling_longcat_flash.py LongcatFlashTopkRouter builds
  classifier = nn.Linear(..., bias=router_bias), so such a checkpoint stores classifier.bias (n_routed_experts +
  zero_expert_num); vLLM from 0.32.0 builds LongcatRouter's classifier as GateLinear(bias=False) and its
  load_weights skips a ".bias" it has no parameter for, so it holds none of it (read in 0.32.0, 0.33.0, 0.34.0;
  0.19.0, 0.25.0, 0.27.0, 0.30.0 and 0.31.0 build ReplicatedLinear(bias=config.router_bias), which holds it).
- GPTBigCode (StarCoder): from 0.25.0 vLLM runs it on its Transformers backend (registry.py
  _TRANSFORMERS_SUPPORTED_MODELS; kvplan.engines.vllm_registry_data), which has no tensor-parallel plan for it
  (transformers 5.25 GPTBigCodeConfig has no base_model_tp_plan): transformers/base.py _recursive_replace makes every
  nn.Linear no fuser claims a ReplicatedLinear (tp_plan.get(pattern, "replicate")), and no fuser matches the plain
  c_fc -> act -> c_proj MLP (fusers/glu.py wants act(gate(x)) * up(x); merged_column.py two projections of one
  input), so every rank holds the MLP whole, and the attention too without multi_query (the packed-QKV fuser
  matches only the split into one query and two KV widths). Its own gpt_bigcode.py before 0.25 and SGLang 0.5.23's
  split them (ColumnParallelLinear c_fc, RowParallelLinear c_proj), as kvplan's plan does. Read in source, not run.
- CTRL, BioGPT and ModernBERT-decoder: vLLM 0.34 registers none of them and falls back to its Transformers backend
  (engines/vllm_served.py), whose transformers 5.22.2 config classes have no base_model_tp_plan either. transformers/
  base.py recursive_replace then only warns at TP > 1 ("does not define a tensor parallel plan ... replicate the
  rest"): it refuses nothing, every nn.Linear no fuser claims becomes a ReplicatedLinear, and the fusers (fuser.py
  FUSERS) match on a trace of each module's forward (fx_utils.py trace, the _AllLeafTracer; what they find was
  checked by running vLLM 0.34's trace on transformers 5.22.2's modules on the meta device). CTRL's
  MultiHeadAttention takes q, k and v as three inputs (its trace ends at q.shape before any projection), so
  QKVFuser (three linears of one input) finds nothing and Wq, Wk, Wv, dense, and the ffn Sequential's two linears
  are all whole. BioGPT's attention traces its key_value_states branch (is_cross_attention is a Python test on a
  proxy), so k_proj and v_proj read one input and MergedColumnParallelFuser (merged_column.py) merges and splits
  them, while q_proj and out_proj stay whole; fc1 and fc2 (plain MLP) are whole. ModernBERT-decoder's q/k/v are
  fused into a QKVParallelLinear and Wo made rowwise (qkv.py QKVFuser, o_name from returned_linear), but its MLP's
  single Wi (chunked in two) matches neither GLUFuser (act(gate(x)) * up(x) of two linears) nor a merge, so Wi and
  mlp.Wo are whole. Only the 0.34 fallback is modelled (from 0.34.0).
  Where an attention's output projection is held whole while vLLM's attention layer is built for heads / TP (CTRL,
  BioGPT, GPTBigCode without multi_query), layers/attention/attention.py Attention.forward returns heads / TP heads'
  width (output_shape from self.num_heads) into a ReplicatedLinear built for all heads: at TP > 1 the first forward
  (the start-up profile run) raises a shape error (LoadDelta.breaks_tp).
- Inkling (vLLM's own inkling_model config): vllm/models/inkling/nvidia/moe.py InklingGate builds its weight with
  n_routed_experts + n_shared_experts rows rounded up to a multiple of 8 (padded_experts; _load_weight zeroes the
  parameter and copies the checkpoint's rows into the first ones), in the model dtype, whole on every TP rank as the
  router is: (-(routed + shared) % 8) x hidden_size more parameters a MoE layer. Read in 0.26.0 (the first release
  with vllm/models/inkling), 0.27.0, 0.27.1, 0.28.0, 0.29.0, 0.30.0, 0.31.0, 0.32.0, 0.33.0 and 0.34.0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoadDelta:
    """`params` more (negative: fewer) parameters vLLM holds of a module from release `first`."""

    params: int
    first: tuple[int, int, int]
    source: str  # the vLLM file and class (0.34) that build it so
    weight: bool = False  # of the module's weight (stored in a quantized format where the format quantizes the
    # module), else of its float parameters (`other`: a bias)
    # vLLM holds these `params` whole on every TP rank where the checkpoint's layout (and kvplan's plan) splits
    # them: the same parameters, more bytes a GPU under TP
    whole_from_split: bool = False
    # an attention output projection vLLM holds whole while its attention layer keeps heads / TP: at TP > 1 vLLM
    # fails at start-up (module doc)
    breaks_tp: bool = False

    def held(self, version) -> bool:
        """Whether vLLM `version` (None: the newest release read, 0.34) builds it so."""
        from ..core.releases import at_least

        return version is None or at_least(version, self.first)


GEMMA4_K_EQ_V_FIRST = (0, 19, 0)
LONGCAT_ROUTER_BIAS_DROPPED_FROM = (0, 32, 0)
BIGCODE_TRANSFORMERS_BACKEND_FROM = (0, 25, 0)
# the model types whose linears vLLM's Transformers backend, without a tensor-parallel plan, may hold whole: the first
# release modelled for each (module doc)
TRANSFORMERS_BACKEND_FROM = {"gpt_bigcode": BIGCODE_TRANSFORMERS_BACKEND_FROM, "ctrl": (0, 34, 0),
                             "biogpt": (0, 34, 0), "modernbert-decoder": (0, 34, 0)}


def gemma4_v_copy(k_proj_weight: int, k_proj_bias: int) -> list[LoadDelta]:
    """The V shard vLLM fills with a k_eq_v layer's keys: a second k_proj, its weight and its bias."""
    source = "gemma4.py Gemma4Attention (QKVParallelLinear; k_proj loaded into the K and V shards)"
    out = [LoadDelta(k_proj_weight, GEMMA4_K_EQ_V_FIRST, source, weight=True)]
    if k_proj_bias:
        out.append(LoadDelta(k_proj_bias, GEMMA4_K_EQ_V_FIRST, source))
    return out


def longcat_router_bias(routed: int) -> LoadDelta:
    """The router classifier's bias a router_bias checkpoint stores and vLLM does not build."""
    return LoadDelta(-routed, LONGCAT_ROUTER_BIAS_DROPPED_FROM, "longcat_flash.py LongcatRouter "
                     "(GateLinear(bias=False); load_weights skips the checkpoint's .bias)")


INKLING_GATE_PAD_FROM = (0, 26, 0)


def inkling_gate_rows(experts: int, hidden: int) -> tuple[LoadDelta, ...]:
    """The zero rows vLLM adds to an Inkling gate of `experts` rows (routed + shared) to reach a multiple of 8."""
    pad = -experts % 8
    if not pad:
        return ()
    return (LoadDelta(pad * hidden, INKLING_GATE_PAD_FROM,
                      "models/inkling/nvidia/moe.py InklingGate (rows padded to a multiple of 8)"),)


_NAMES = {"gpt_bigcode": "GPTBigCode", "ctrl": "CTRL", "biogpt": "BioGPT", "modernbert-decoder": "ModernBERT-decoder"}


def replicated_by_transformers_backend(weight: int, bias: int, model_type: str = "gpt_bigcode",
                                       breaks_tp: bool = False) -> tuple[LoadDelta, ...]:
    """A linear layer of `model_type` that vLLM's Transformers backend builds as a ReplicatedLinear (its weight, and
    its bias where split), from the release TRANSFORMERS_BACKEND_FROM gives."""
    first = TRANSFORMERS_BACKEND_FROM[model_type]
    source = f"transformers/base.py _recursive_replace ({_NAMES[model_type]}: no tensor-parallel plan, ReplicatedLinear)"
    out = (LoadDelta(weight, first, source, weight=True, whole_from_split=True, breaks_tp=breaks_tp),)
    if bias:
        out += (LoadDelta(bias, first, source, whole_from_split=True),)
    return out


__all__ = ["LoadDelta", "gemma4_v_copy", "longcat_router_bias", "replicated_by_transformers_backend",
           "inkling_gate_rows"]
