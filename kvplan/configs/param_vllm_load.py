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

    def held(self, version) -> bool:
        """Whether vLLM `version` (None: the newest release read, 0.34) builds it so."""
        from ..engines.vllm_release import at_least

        return version is None or at_least(version, self.first)


GEMMA4_K_EQ_V_FIRST = (0, 19, 0)
LONGCAT_ROUTER_BIAS_DROPPED_FROM = (0, 32, 0)
BIGCODE_TRANSFORMERS_BACKEND_FROM = (0, 25, 0)


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


def replicated_by_transformers_backend(weight: int, bias: int) -> tuple[LoadDelta, ...]:
    """A GPTBigCode linear layer vLLM 0.25+ builds as a ReplicatedLinear (its weight, and its bias where split)."""
    source = "transformers/base.py _recursive_replace (GPTBigCode: no tensor-parallel plan, ReplicatedLinear)"
    out = (LoadDelta(weight, BIGCODE_TRANSFORMERS_BACKEND_FROM, source, weight=True, whole_from_split=True),)
    if bias:
        out += (LoadDelta(bias, BIGCODE_TRANSFORMERS_BACKEND_FROM, source, whole_from_split=True),)
    return out


__all__ = ["LoadDelta", "gemma4_v_copy", "longcat_router_bias", "replicated_by_transformers_backend"]
