"""SGLang 0.5.23's data-parallel attention: `launch_server --tp T --dp N --enable-dp-attention` (the spelling 0.5.23
deprecates for `--attn-dp-size N`, arg_groups/parallel_hook.py handle_deprecated_dp_attention: attn_dp_size = N,
dp_size = 1). The T GPUs stay one TP group; only the attention runs data parallel.

Read in the sglang 0.5.23 wheel (srt/...):
- placement: runtime_context.derive_attn_tp_size: attn_tp = T / N (attention CP 1), so kvplan plans it as N DP ranks
  of attn_tp GPUs each (capacity.hardware.Deployment dp = N, tp = T / N: T GPUs). The attention and its KV heads
  split over attn_tp (pool_configurator / kv_cache_configurator get_num_kv_heads(attn_tp_size); MLA's latent whole);
  the embedding vocab-parallel over the attention TP group (layers/vocab_parallel_embedding.py
  get_embedding_tp_kwargs: use_attn_tp_group under DP attention).
- the MoE layers over all T GPUs (runtime_context.derive_parallel_widths: moe_tp = T / ep_size): each routed expert
  split T ways, or with --ep-size T whole experts, experts / T a GPU (layers/moe/fused_moe_triton/layer.py FusedMoE
  asserts experts % ep_size == 0: refused otherwise), as vLLM's flattened TP / EP (capacity.experts). DeepSeek-V3's
  shared expert, fused into the MoE as expert 256 on CUDA without EP (deepseek_v2.py
  shared_experts_fusion_disable_reason), is split over the T GPUs either way.
- what SGLang splits over all T GPUs while vLLM splits it over one DP rank's TP ranks (capacity/experts.py full_tp_saving): the dense MLPs
  (models/deepseek_v2.py DeepseekV2DecoderLayer: parallel_group "tp" unless --moe-dense-tp-size 1,
  layer_boundary/layout.py is_dense_ffn_fully_dp), the shared experts (DeepseekV2MoE: "tp" unless an all-to-all MoE
  backend such as DeepEP replicates them) and the LM head (DeepseekV2ForCausalLM: ParallelLMHead over the whole TP
  group unless --enable-dp-lm-head). The other families read (DP_FAMILIES: Qwen2 / Qwen3 MoE, Qwen3-Next, GLM-4.5+,
  gpt-oss, MiniMax-M2, Llama 4, Qwen3-VL-MoE, Kimi-K2.5, GLM-4.5V, DeepSeek-V3.2, GLM-5) build theirs the same way, each file
  cited in the table; their vision towers as engines/sglang_dp_vision.py places them (Llama 4's refused at
  1 < attention TP < --tp).
- each DP rank runs its own scheduler and KV pool (parallel.py num_dp_ranks = dp_size x attn_dp_size), sized from
  its own GPU's memory as without DP; a given --max-running-requests is the server's, each rank taking
  max(1, requests // N) (kv_cache_configurator.resolve_max_num_reqs), so the replica serves N x one rank's.
- the memory reserved (arg_groups/memory_hook.py reserve_for_graph_mb): + cuda_graph_max_bs x N x 3 MiB, and
  x 1.5 more above a decode graph batch of 300, for the DP gather padding; the tp term of the reserve is T's.
  The gathered hidden-state buffers (layers/dp_attention.py _DpGatheredBufferWrapper) are per-forward activations
  inside that reserve, not a pool term.
- refused: tp % attn_dp_size (parallel_hook._handle_data_parallelism asserts it); an architecture outside
  DP_FAMILIES (models/llama.py and qwen2.py split the attention heads over the whole --tp).

--enable-dp-lm-head and --moe-dense-tp-size move the LM head and the dense MLPs: engines/sglang_groups.py.
Not modelled: the DP group's chunked prefill (chunked_prefill_size // N per rank, which moves no memory term),
the fused shared expert slots, EPLB's recorder and manager state.
EPLB's redundant experts (--ep-num-redundant-experts R) are modelled: capacity/eplb.py; --moe-a2a-backend:
engines/sglang_a2a.py.
"""

from __future__ import annotations

from ..errors import UsageError

GATHER_MIB_PER_GRAPH_BS = 3  # reserve_for_graph_mb: max_bs x attn_dp_size x 3 MiB
GATHER_MIB_LARGE_BS = 1.5  # and x 1.5 more when max_bs > LARGE_BS
LARGE_BS = 300


def attention_tp(tp: int, dp: int, pp: int) -> int:
    """The attention TP size of `--tp tp --dp dp --enable-dp-attention`: one line for what SGLang refuses or kvplan
    does not model."""
    if tp % dp:
        raise UsageError(f"--dp {dp} with --engine sglang: SGLang's attention DP (--attn-dp-size {dp}, formerly --dp {dp} "
                         f"--enable-dp-attention) splits the --tp {tp} GPUs "
                         f"into {dp} attention groups, and {dp} does not divide {tp}",
                         "give --tp a multiple of --dp (SGLang asserts tp_size % attn_dp_size == 0)")
    if pp > 1:
        raise UsageError(f"--dp {dp} with --pp {pp} under --engine sglang: kvplan does not model pipeline stages "
                         "with data-parallel attention", "use --dp with --tp only")
    return tp // dp


def launch_tp(dep) -> int:
    """SGLang's --tp: every GPU of the deployment's TP group (kvplan's dp x tp)."""
    return dep.tp * dep.dp


def gather_reserve_mib(graph_bs: int, dp: int) -> float:
    """What reserve_for_graph_mb adds for data-parallel attention."""
    if dp <= 1:
        return 0.0
    return graph_bs * dp * GATHER_MIB_PER_GRAPH_BS + (graph_bs * dp * GATHER_MIB_LARGE_BS if graph_bs > LARGE_BS else 0)


def per_rank_requests(max_running_requests: int | None, dep) -> int | None:
    """One DP rank's share of a given --max-running-requests (resolve_max_num_reqs: max(1, requests // N))."""
    if max_running_requests is None or dep is None or dep.dp <= 1:
        return max_running_requests
    return max(1, max_running_requests // dep.dp)


def placement_note(model, dp: int, ep: bool, tp: int, redundant: int | None = None, groups=None) -> str | None:
    """The line an SGLang plan with attention DP (or --ep) prints: how it places the model, what it leaves out;
    groups: --enable-dp-lm-head / --moe-dense-tp-size / --mm-enable-dp-encoder (engines/sglang_groups.py)."""
    from ..capacity.eplb import eplb_text
    from ..capacity.experts import is_moe

    if dp == 1 and not ep:
        return None
    gpus = dp * tp
    line = (f"SGLang --tp {gpus}" + (f" --attn-dp-size {dp}: {dp} attention groups of attention TP {tp} "
                                    f"(KV heads and the embedding split over {tp}, MLA's latent whole), each its own "
                                    "scheduler and KV pool" if dp > 1 else ""))
    if is_moe(model):
        line += ("; routed experts " + (f"whole, over EP {gpus} (--ep-size {gpus})" if ep else f"split over all {gpus} GPUs")
                 + eplb_text(model, gpus, redundant, "sglang"))
    if dp > 1:
        from .sglang_groups import dense_whole, encoder_whole, head_moves

        path, _ = DP_FAMILIES.get(model.architecture or "", ("", ""))
        dense, head = dense_whole(model, groups), head_moves(model, groups, dp)
        split = [name for name, moved in (("dense MLPs", dense), ("shared experts", False), ("the LM head", head))
                 if not moved]
        line += (f"; {', '.join(split[:-1])} and {split[-1]}" if len(split) > 1 else f"; {split[0]}")
        line += f" split over all {gpus} GPUs ({path.rpartition('/')[2]})"
        line += "; the dense MLPs whole on every GPU (--moe-dense-tp-size 1)" if dense else ""
        line += f"; the LM head over the attention TP group of {tp} (--enable-dp-lm-head)" if head else ""
        from .sglang_dp_vision import tower_note

        tower = ("the vision tower whole on every GPU (--mm-enable-dp-encoder)" if encoder_whole(model, groups)
                 else tower_note(model, tp, dp))
        line += f"; {tower}" if tower else ""
    return line + "; not counted: EPLB's recorder state, the DP groups' NCCL memory"


# The architectures whose SGLang 0.5.23 model file was read for the placement above, each with the file and
# classes read (the plan's note names them). Each builds its attention and KV heads over the attention TP group
# (parallel_group="attn_tp", num_kv_heads = kv_heads // attn_tp_size), its embedding with
# use_attn_tp_group=is_dp_attention_enabled(), and its routed experts (FusedMoE: moe_tp / moe_ep), dense MLPs, shared
# experts and LM head over the whole TP group: their linears take parallel_group "tp" (the default; layers/linear.py
# _resolve_linear_group: the TP group, all --tp GPUs), ParallelLMHead use_attn_tp_group only under
# --enable-dp-lm-head. The same rule for every family, so one table of sources; what a family adds is in its note.
# Not read or differing: models/llama.py LlamaAttention and qwen2.py Qwen2Attention split their heads over the whole
# --tp (get_parallel().tp_size) even with attention DP. The vision towers: engines/sglang_dp_vision.py.
_DSV2 = ("models/deepseek_v2.py", "DeepseekV2AttentionMLA, DeepseekV2DecoderLayer (dense MLP \"tp\" unless "
         "--moe-dense-tp-size 1), DeepseekV2MoE (shared experts \"tp\" unless an all-to-all backend), "
         "DeepseekV2ForCausalLM")
DP_FAMILIES: dict[str, tuple[str, str]] = {
    "DeepseekV2ForCausalLM": _DSV2,
    "DeepseekV3ForCausalLM": _DSV2,  # deepseek_v2.py DeepseekV3ForCausalLM(DeepseekV2ForCausalLM): pass (Kimi-K2 too)
    # deepseek_v2.py DeepseekV32ForCausalLM(DeepseekV2ForCausalLM): pass; its DSA indexer (layers/attention/dsa/
    # dsa_indexer.py Indexer: wq_b, wk, weights_proj ReplicatedLinear) whole on every GPU with or without DP
    "DeepseekV32ForCausalLM": _DSV2,
    # glm4_moe.py GlmMoeDsaForCausalLM(DeepseekV2ForCausalLM) (GLM-5)
    "GlmMoeDsaForCausalLM": _DSV2,
    "Qwen2MoeForCausalLM": ("models/qwen2_moe.py", "Qwen2MoeAttention (\"attn_tp\"), Qwen2MoeSparseMoeBlock "
                            "(shared_expert Qwen2MoeMLP \"tp\" unless an all-to-all backend), Qwen2MoeDecoderLayer "
                            "(dense Qwen2MoeMLP \"tp\"), Qwen2MoeModel, Qwen2MoeForCausalLM"),
    "Qwen3MoeForCausalLM": ("models/qwen3_moe.py", "Qwen3MoeAttention (\"attn_tp\"), Qwen3MoeSparseMoeBlock, "
                            "Qwen3MoeDecoderLayer (dense qwen2_moe.Qwen2MoeMLP \"tp\"), Qwen3MoeModel(Qwen2MoeModel), "
                            "Qwen3MoeForCausalLM"),
    "Glm4MoeForCausalLM": ("models/glm4_moe.py", "Glm4MoeAttention (\"attn_tp\"), Glm4MoeSparseMoeBlock (shared "
                           "experts \"tp\" unless an all-to-all backend), Glm4MoeDecoderLayer (dense Glm4MoeMLP \"tp\" "
                           "unless --moe-dense-tp-size 1), Glm4MoeModel, Glm4MoeForCausalLM"),
    "GptOssForCausalLM": ("models/gpt_oss.py", "GptOssAttention (\"attn_tp\", its sinks sliced by attn_tp rank), "
                          "GptOssSparseMoeBlock (no shared expert), GptOssModel, GptOssForCausalLM"),
    "MiniMaxM2ForCausalLM": ("models/minimax_m2.py", "MiniMaxM2Attention (\"attn_tp\", q/k norms over attn_tp), "
                             "MiniMaxM2MoE (no shared expert), MiniMaxM2Model, MiniMaxM2ForCausalLM (ParallelLMHead over "
                             "the TP group even with --enable-dp-lm-head)"),
    # the Gated DeltaNet layers and their state over the attention TP group too (configs/qwen3_next.py
    # mamba2_cache_params: tp_world_size=linear_attn_tp_size(), "attn_tp" unless CP-TP group sharing)
    "Qwen3NextForCausalLM": ("models/qwen3_next.py", "Qwen3GatedDeltaNet and Qwen3HybridAttentionDecoderLayer "
                             "(\"attn_tp\"), qwen2_moe.Qwen2MoeSparseMoeBlock (shared expert \"tp\" or fused into "
                             "the MoE), Qwen3NextModel, Qwen3NextForCausalLM"),
    # dense: Qwen3Model(qwen2.Qwen2Model) builds the embedding on attention TP; a tied head is that embedding
    # (Qwen3ForCausalLM: lm_head = embed_tokens, and the per-module count has no head then)
    "Qwen3ForCausalLM": ("models/qwen3.py", "Qwen3Attention (\"attn_tp\"), Qwen3DecoderLayer (Qwen3MLP = "
                         "qwen2.Qwen2MLP, \"tp\"), Qwen3Model, Qwen3ForCausalLM"),
    # mllama4.py Llama4ForConditionalGeneration builds llama4.Llama4ForCausalLM(LlamaForCausalLM: ParallelLMHead
    # use_attn_tp_group=enable_dp_lm_head); its vision tower: engines/sglang_dp_vision.py
    "Llama4ForConditionalGeneration": ("models/llama4.py", "Llama4Attention (\"attn_tp\"), Llama4MoE (shared_expert "
                                       "LlamaMLP \"tp\"), Llama4DecoderLayer (dense LlamaMLP \"tp\"), Llama4Model, "
                                       "Llama4ForCausalLM; mllama4.py Llama4ForConditionalGeneration"),
    # qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration: qwen3_moe.Qwen3MoeModel / Qwen3MoeDecoderLayer as the text
    # model, qwen3_vl.py Qwen3VLForConditionalGeneration's ParallelLMHead (use_attn_tp_group=enable_dp_lm_head)
    "Qwen3VLMoeForConditionalGeneration": ("models/qwen3_moe.py", "Qwen3MoeAttention (\"attn_tp\"), Qwen3MoeSparseMoeBlock, "
                                           "Qwen3MoeDecoderLayer, Qwen3MoeModel; qwen3_vl_moe.py Qwen3MoeLLMModel, "
                                           "qwen3_vl.py Qwen3VLForConditionalGeneration (lm_head)"),
    # kimi_k25.py KimiK25ForConditionalGeneration builds deepseek_v2.DeepseekV3ForCausalLM as its language model
    "KimiK25ForConditionalGeneration": ("models/deepseek_v2.py", _DSV2[1] + "; kimi_k25.py KimiK25ForConditionalGeneration"),
    # glm4v_moe.py Glm4vMoeForConditionalGeneration builds glm4_moe.Glm4MoeModel and a ParallelLMHead
    # (use_attn_tp_group=enable_dp_lm_head)
    "Glm4vMoeForConditionalGeneration": ("models/glm4_moe.py", "Glm4MoeAttention (\"attn_tp\"), Glm4MoeSparseMoeBlock, "
                                         "Glm4MoeDecoderLayer, Glm4MoeModel; glm4v_moe.py "
                                         "Glm4vMoeForConditionalGeneration (lm_head)"),
}
# the reason an architectures SGLang builds otherwise is refused, appended to the refusal
_REFUSED = {
    "LlamaForCausalLM": ": models/llama.py LlamaAttention splits its heads over the whole --tp (get_parallel().tp_size), "
                        "not the attention TP group",
    "Qwen2ForCausalLM": ": models/qwen2.py Qwen2Attention splits its heads over the whole --tp (get_parallel().tp_size), "
                        "not the attention TP group",
}


def dense_ep_refusal(model, gpus: int) -> None:
    """--ep for a model without routed experts under SGLang: SGLang 0.5.23 takes --ep-size for it (no check in
    arg_groups refuses it; the ones that read ep_size name a MoE runner, an a2a backend or an architecture), and it
    only sizes the MoE groups: runtime_context.py derive_parallel_widths (moe_ep_size = ep_size, moe_tp_size =
    tp_size // ep_size // moe_dp_size) and distributed/parallel_state.py initialize_model_parallel's MoE EP / TP
    groups, which only FusedMoE layers use; the dense MLPs stay on the TP group. It changes nothing kvplan plans, so
    kvplan leaves it out rather than print a split that is not there (vLLM refuses it outright:
    capacity.experts.check_placement)."""
    from ..capacity.experts import is_moe

    if not is_moe(model):
        raise UsageError(f"--ep: {model.name} has no routed experts; SGLang 0.5.23 takes --ep-size {gpus} for it but "
                         "only sizes MoE groups no layer of it uses (runtime_context.py derive_parallel_widths, "
                         "parallel_state.py initialize_model_parallel): the plan is --tp's",
                         "leave --ep out")


def check_model(model, dp: int, ep: bool = False, gpus: int = 1, pp: int = 1, redundant: int | None = None,
                encoder_whole: bool = False) -> None:
    """Refuse attention DP for an architecture whose SGLang placement kvplan has not read, and an expert-parallel
    split SGLang refuses: layers/moe/fused_moe_triton/layer.py FusedMoE asserts routed experts % ep_size == 0 (with
    redundant experts, the physical ones: capacity/eplb.py check_redundant); and --ep with --pp, which kvplan has not
    read for SGLang (attention_tp refuses --dp with --pp). A model without routed experts: refused with --ep, in
    SGLang's terms (dense_ep_refusal)."""
    if ep:
        dense_ep_refusal(model, gpus)
    if ep and pp > 1:
        raise UsageError(f"--ep with --pp {pp} under --engine sglang: kvplan does not model SGLang's pipeline stages "
                         "with expert parallelism", "use --ep with --tp only, or --engine vllm")
    routed = model.weight_routed_params if ep and redundant is None else None
    if routed is not None and routed[0] % gpus:
        raise UsageError(f"--ep with --engine sglang: SGLang's --ep-size {gpus} must divide the {routed[0]} routed "
                         "experts (FusedMoE asserts it; vLLM gives some ranks one more)",
                         "choose --tp so that it divides the experts, or use --engine vllm")
    # (fit asks with gpus 1: per split); --mm-enable-dp-encoder builds the tower at TP 1 (engines/sglang_groups.py)
    if dp > 1 and gpus >= dp and (model.architecture or "") in DP_FAMILIES and not encoder_whole:
        from .sglang_dp_vision import check_tower

        check_tower(model, gpus // dp, dp)
    if dp > 1 and (model.architecture or "") not in DP_FAMILIES:
        raise UsageError(f"--dp {dp} with --engine sglang: kvplan models SGLang's attention DP only for the "
                         f"{len(DP_FAMILIES)} architectures whose SGLang 0.5.23 model file it read (docs/sglang.md), "
                         f"not {model.architecture or model.model_type}" + _REFUSED.get(model.architecture or "", ""),
                         "plan SGLang with --tp, or use --engine vllm")
