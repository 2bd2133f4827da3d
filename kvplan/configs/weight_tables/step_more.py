"""Per-module parameter tables (configs/weight_tables/__init__.py) of StepFun's text models: Step-3.5 / Step-3.7's
text model (step3p5), mirroring its counter (params_step.step3p5) term by term.

Names: the checkpoints' (Step-3.5-Flash; Step-3.7-Flash keeps the same names under its wrapper, conversion_mapping.py
"step3p7"), which transformers 5.25 renames on load: the routed experts stacked per layer as moe.gate_proj /
moe.up_proj / moe.down_proj (one [experts, out, in] tensor each, concatenated into mlp.experts.gate_up_proj and
renamed mlp.experts.down_proj), the router moe.gate (mlp.gate) and its moe.router_bias
(mlp.gate.e_score_correction_bias), the shared expert share_expert.* (mlp.shared_experts.*). vLLM 0.34 step3p5.py
Step3p5Model.load_weights reads the same packed names (expert_params_mapping), and also a per-expert form
(moe.experts.N.gate_proj, which LLM Compressor writes); the table names the packed form, so an exclusion list that
names single experts of the per-expert form is not matched by it.

What vLLM 0.34 holds whole on every TP rank (step3p5.py), besides the embeddings and head it splits by vocab:
- the GemmaRMSNorms: input_layernorm, post_attention_layernorm, the final norm, and q_norm / k_norm of head_dim
  (Step3p5Attention: whole, as the q / k it normalizes are per head);
- the router: FusedMoEBlock.gate, a GateLinear (fused_moe/router/gate_linear.py, a ReplicatedLinear) built with
  params_dtype float32 and no quant_config, and router_bias, an nn.Parameter of moe_num_experts in float32; both
  whole (kvplan sizes them at the checkpoint's dtype unless configs/param_fp32.py holds a rule for them).
Split: q/k/v_proj (QKVParallelLinear: k / v by KV head), o_proj (RowParallelLinear, bias=False whatever
attention_bias says), g_proj (ColumnParallelLinear over the heads), the dense MLP and the shared expert
(Step3p5MLP: MergedColumnParallelLinear + RowParallelLinear), the routed experts (FusedMoE).
Where transformers and vLLM differ: transformers builds q/k/v/o biases with attention_bias and MLP biases with
mlp_bias, vLLM builds neither o_proj's nor the MLPs' bias (no released config sets either flag); transformers builds
g_proj always (gating, a class attribute, True: one gate a head), vLLM only with use_head_wise_attn_gate (which the
released configs set): the table and the counter follow the checkpoint as transformers reads it, and leave g_proj
out where a config writes use_head_wise_attn_gate false.
"""

from __future__ import annotations

from ..fields import Fields
from ..params_step import step3p5_fields
from . import Module, _ends, _float, _linear, _mlp


def _step3p5(f: Fields, layers: list, dims) -> list:
    s = step3p5_fields(f, len(layers))
    hidden, bias = s.hidden, s.attention_bias
    out = _ends(f, hidden, False, 128815)
    for i, layer in enumerate(s.layers):
        a, hd = f"layers.{i}.self_attn", layer.head_dim
        out += [_linear(f"{a}.q_proj", hidden, layer.heads * hd, "attention", bias),
                _linear(f"{a}.k_proj", hidden, layer.kv * hd, "attention", bias, kv_heads=layer.kv),
                _linear(f"{a}.v_proj", hidden, layer.kv * hd, "attention", bias, kv_heads=layer.kv),
                _linear(f"{a}.o_proj", layer.heads * hd, hidden, "attention", bias, row=True),
                _float(f"{a}.q_norm", hd), _float(f"{a}.k_norm", hd)]
        if layer.gate_outputs:
            out.append(_linear(f"{a}.g_proj", hidden, layer.gate_outputs, "attention"))
        out += [_float(f"layers.{i}.input_layernorm", hidden), _float(f"layers.{i}.post_attention_layernorm", hidden)]
        if layer.sparse:
            m, e = f"layers.{i}.moe", s.experts
            # one stacked tensor per projection for all the experts (no "{e}" in the name: every expert's is it)
            out += [Module(f"{m}.gate_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.up_proj", e * hidden * s.moe_inter, 0, "experts", e, inputs=hidden),
                    Module(f"{m}.down_proj", e * s.moe_inter * hidden, 0, "experts", e, inputs=s.moe_inter),
                    _float(f"{m}.gate", hidden * e, "router"), _float(f"{m}.router_bias", e, "router")]
            out += _mlp(f"layers.{i}.share_expert", hidden, s.shared_inter, "shared experts", s.mlp_bias)
        else:
            out += _mlp(f"layers.{i}.mlp", hidden, s.inter, "mlp", s.mlp_bias)
    return out


STEP_MORE = {"step3p5": _step3p5}
