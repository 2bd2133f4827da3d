"""SGLang 0.5.23's launch flags that build a module on another group than its default: `--enable-dp-lm-head` (the LM
head over the attention TP group), `--moe-dense-tp-size 1` (a MoE model's dense MLP layers whole on every GPU) and
`--mm-enable-dp-encoder` (the vision tower whole on every GPU). Each flag's rule is here; capacity/experts.py
placement_saving applies the first two, engines/sglang_report.py record_tower the third (Deployment.sglang_groups).

Read in the sglang 0.5.23 wheel (srt/...):
- `--enable-dp-lm-head` (arg_groups/fields/parallel.py enable_dp_lm_head, default False): the families' LM head is
  `ParallelLMHead(..., use_attn_tp_group=get_parallel().enable_dp_lm_head)` (deepseek_v2.py DeepseekV2ForCausalLM,
  qwen2_moe.py, qwen3_moe.py, glm4_moe.py, gpt_oss.py, qwen3_next.py, qwen3.py, llama.py LlamaForCausalLM (Llama 4),
  qwen3_vl.py, glm4v_moe.py); layers/vocab_parallel_embedding.py VocabParallelEmbedding.__init__ then takes
  tp_size = attn_tp_size instead of the whole --tp. Without it (engines/sglang_dp.py) the head is split over every
  --tp GPU. minimax_m2.py MiniMaxM2ForCausalLM builds its ParallelLMHead without use_attn_tp_group: nothing moves.
  A tied head is the embedding (`lm_head = self.model.embed_tokens`), already on the attention TP group
  (get_embedding_tp_kwargs): nothing moves (kvplan's per-module count has no head then). The input embedding does
  not read the flag. Its rows: pad_vocab_size(vocab, 64), the padding x attn_tp where attn_tp does not divide that
  (VocabParallelEmbedding.__init__); kvplan splits the checkpoint's head bytes, the padding not counted.
  Checks: arg_groups/overrides.py _data_parallelism_defaults resets it to False where dp_size x attn_dp_size == 1
  (no DP at all: a note, nothing moves), and _dp_lm_head_validation asserts attention DP where DP is on; kvplan's
  SGLang --dp is always attention DP, so only the first applies.
- `--moe-dense-tp-size` (fields/parallel.py moe_dense_tp_size, default None): arg_groups/validation_hook.py asserts
  it is None, 1 or tp_size ("moe_dense_tp_size only supports None, 1, or tp_size currently"): refused otherwise.
  layers/layer_boundary/layout.py is_dense_ffn_fully_dp() is `moe_dense_tp_size == 1`, and the decoder layers of
  DENSE_FULLY_DP build their dense (non-MoE) MLP with parallel_group "replicated" then, else "tp"
  (deepseek_v2.py DeepseekV2DecoderLayer, glm4_moe.py Glm4MoeDecoderLayer, glm4_moe_lite.py, mimo_v2.py,
  bailing_moe.py): whole on every GPU, with or without attention DP. The shared experts do not read it
  (DeepseekV2MoE: "replicated" only under an all-to-all backend). tp_size, the whole --tp, is the default group:
  nothing moves. Other families (qwen2_moe.py, qwen3_moe.py, llama4.py ...) never read it: a note. The files
  of DENSE_FULLY_DP_UNMODELLED read it as well (grep of srt/models for is_dense_ffn_fully_dp): noted, not sized.
- `--mm-enable-dp-encoder` (arg_groups/fields/mm.py mm_enable_dp_encoder, default None -> False; no check refuses it,
  arg_groups/parallel_hook.py handle_data_parallelism only warns at TP 1): qwen2_5_vl.py
  Qwen2_5_VLForConditionalGeneration and qwen3_vl.py Qwen3VLForConditionalGeneration (whose __init__ Qwen3-VL-MoE,
  Qwen3.5 and Qwen3.5-MoE call: qwen3_vl_moe.py, qwen3_5.py) pass use_data_parallel = get_mm().mm_enable_dp_encoder
  to their tower, and every tower linear then takes parallel_group "replicated" (qwen2_5_vl.py Qwen2_5_VLMLP,
  Qwen2_5_VisionPatchMerger; qwen3_vl.py _resolve_vision_parallel_group; layers/attention/vision.py VisionAttention:
  tp_size 1, qkv_proj / proj "replicated"), Qwen3-VL's pos_embed enable_tp=False: the tower as SGLang builds it at
  TP 1 on every GPU (engines/sglang_tower.py whole_tower), with or without attention DP, and no vision heads to
  divide (the refusals of engines/sglang_vision_refusal.py and sglang_dp_vision.check_tower do not apply). Other
  families read it too (glm4v.py, kimi_vl.py, internvl.py, mimo_vl.py, ...): not read here, a note.
Not modelled: --moe-dense-tp-size 1 with --pp (the dense layers' stage), the head's vocab padding.
"""

from __future__ import annotations

from .._record import record
from ..errors import UsageError
from .sglang_dp import DP_FAMILIES

# the architectures whose LM head reads enable_dp_lm_head (sglang_dp.DP_FAMILIES, each file read; not MiniMax-M2)
HEAD_ON_ATTN_TP = frozenset(DP_FAMILIES) - {"MiniMaxM2ForCausalLM"}
# the architectures whose decoder layers build the dense MLP "replicated" under is_dense_ffn_fully_dp()
DENSE_FULLY_DP = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",  # deepseek_v2.py
    "GlmMoeDsaForCausalLM", "KimiK25ForConditionalGeneration",  # deepseek_v2.py subclass, its language model
    "Glm4MoeForCausalLM", "Glm4vMoeForConditionalGeneration",  # glm4_moe.py Glm4MoeDecoderLayer
    "Glm4MoeLiteForCausalLM", "MiMoV2FlashForCausalLM",  # glm4_moe_lite.py, mimo_v2.py
    "MiMoV2ForCausalLM",  # mimo_v2.py MiMoV2DecoderLayer, the base of MiMoV2FlashForCausalLM (EntryClass both)
    "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",  # bailing_moe.py
    "BailingMoEForCausalLM",  # bailing_moe.py, the base BailingMoeForCausalLM derives (EntryClass)
})
# architectures whose model file builds its dense MLPs "replicated" under is_dense_ffn_fully_dp() too, kvplan not
# sizing the move (their layer layouts not read for it): a note says so, never "does not read it"
DENSE_FULLY_DP_UNMODELLED = {
    "BailingMoeV3ForCausalLM": "bailing_moe_v3.py", "Ernie4_5_MoeForCausalLM": "ernie4.py",
    "Ernie4_5_ForCausalLM": "ernie4.py", "Glm5NextForConditionalGeneration": "glm5_next.py",
    "MiniMaxM3SparseForCausalLM": "minimax_m3.py", "SarvamMLAForCausalLM": "sarvam_moe.py",
    "SarvamMoEForCausalLM": "sarvam_moe.py", "LLaDA2MoeModelLM": "llada2.py", "XllmForCausalLM": "xllm.py",
    "K2HorizonForCausalLM": "xllm.py",
}
# the architectures whose tower reads mm_enable_dp_encoder, each file read (qwen2_5_vl.py; qwen3_vl.py and its callers)
ENCODER_DP = frozenset({"Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
                        "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
                        "Qwen3_5MoeForConditionalGeneration"})


@record
class GroupFlags:
    """The two flags as given (Deployment.sglang_groups)."""
    dp_lm_head: bool = False
    moe_dense_tp: int | None = None
    dp_encoder: bool = False

    def argv(self) -> list[str]:
        """The flags in `launch_server`'s spelling, as given."""
        return ((["--enable-dp-lm-head"] if self.dp_lm_head else [])
                + (["--moe-dense-tp-size", str(self.moe_dense_tp)] if self.moe_dense_tp is not None else [])
                + (["--mm-enable-dp-encoder"] if self.dp_encoder else []))


def parse(dp_lm_head: bool, moe_dense_tp: int | None, engines: tuple, tp: int, pp: int,
          dp_encoder: bool = False) -> GroupFlags | None:
    """The flags checked against the engines planned / emitted and SGLang's own checks (one line each); tp: kvplan's
    --tp, every GPU of SGLang's TP group. None where none is given."""
    if not dp_lm_head and moe_dense_tp is None and not dp_encoder:
        return None
    given = " and ".join(f for f, on in (("--enable-dp-lm-head", dp_lm_head),
                                         ("--moe-dense-tp-size", moe_dense_tp is not None),
                                         ("--mm-enable-dp-encoder", dp_encoder)) if on)
    from .flag_owner import require

    require(given, "sglang", engines)
    if moe_dense_tp is not None and moe_dense_tp not in (1, tp):
        raise UsageError(f"--moe-dense-tp-size {moe_dense_tp}: SGLang 0.5.23 takes only 1 or the --tp size ({tp}) "
                         "(validation_hook.py: \"moe_dense_tp_size only supports None, 1, or tp_size currently\")")
    if moe_dense_tp == 1 and pp > 1:
        raise UsageError(f"--moe-dense-tp-size 1 with --pp {pp}: kvplan does not model the dense layers' stage",
                         "use --tp only")
    return GroupFlags(dp_lm_head, moe_dense_tp, dp_encoder)


def head_moves(model, flags: GroupFlags | None, dp: int) -> bool:
    """Whether the LM head is split over the attention TP group instead of every GPU."""
    return bool(flags and flags.dp_lm_head and dp > 1 and (model.architecture or "") in HEAD_ON_ATTN_TP)


def dense_whole(model, flags: GroupFlags | None) -> bool:
    """Whether the dense MLP layers are whole on every GPU."""
    return bool(flags and flags.moe_dense_tp == 1 and (model.architecture or "") in DENSE_FULLY_DP)


def encoder_whole(model, flags: GroupFlags | None) -> bool:
    """Whether the vision tower is built whole on every GPU (sglang_tower.whole_tower)."""
    return bool(flags and flags.dp_encoder and (model.architecture or "") in ENCODER_DP)


def moved(model, weights, tp: int, dp: int, flags: GroupFlags | None) -> tuple[int, int]:
    """(bytes kept out of the split over all dp x tp GPUs of attention DP, bytes one GPU holds whole more than
    kvplan's split over tp gives it). Unknown bytes (a size given, no per-module count) move nothing: notes say so."""
    from ..capacity.experts import dense_mlp_bytes, head_bytes
    from ..capacity.shard import _ceil_div

    head = (head_bytes(model, weights) or 0) if head_moves(model, flags, dp) else 0
    dense = (dense_mlp_bytes(model, weights) or 0) if dense_whole(model, flags) else 0
    return head + dense, dense - _ceil_div(dense, tp)


def notes(model, weights, dep) -> list[str]:
    """What the flags do to the plan, or why they do nothing."""
    from ..capacity.experts import dense_mlp_bytes, head_bytes
    from ..capacity.shard import _ceil_div
    from ..units import GIB

    flags = getattr(dep, "sglang_groups", None)
    if flags is None:
        return []
    out, gpus, arch = [], dep.tp * dep.dp, model.architecture or model.model_type
    if flags.dp_lm_head:
        head = head_bytes(model, weights) if weights is not None else None
        if dep.dp <= 1:
            out.append("--enable-dp-lm-head changes nothing: SGLang resets it without data parallelism "
                       "(overrides.py _data_parallelism_defaults)")
        elif not head_moves(model, flags, dep.dp):
            out.append(f"--enable-dp-lm-head changes nothing for {arch}: its LM head does not read it "
                       "(built over the whole TP group)")
        elif not head:
            out.append("--enable-dp-lm-head: the LM head split over the attention TP group "
                       f"({dep.tp}); not counted: " + ("the head is tied to the embedding, already on that group"
                                                       if head == 0 else "its bytes are not known"))
        else:
            more = _ceil_div(head, dep.tp) - _ceil_div(head, gpus)
            out.append(f"--enable-dp-lm-head: the LM head split over the attention TP group ({dep.tp}) instead of all "
                       f"{gpus} GPUs (vocab_parallel_embedding.py use_attn_tp_group): + {more / GIB:.2f} GiB a GPU")
    if flags.moe_dense_tp is not None:
        dense = dense_mlp_bytes(model, weights) if weights is not None else None
        if flags.moe_dense_tp != 1:
            out.append(f"--moe-dense-tp-size {flags.moe_dense_tp} changes nothing: the whole --tp is the default group")
        elif (model.architecture or "") in DENSE_FULLY_DP_UNMODELLED:
            out.append(f"--moe-dense-tp-size 1: not modelled for {arch}: "
                       f"{DENSE_FULLY_DP_UNMODELLED[model.architecture]} builds its dense MLPs whole on every GPU "
                       "under it too (is_dense_ffn_fully_dp), not sized here: the plan keeps them split over TP")
        elif not dense_whole(model, flags):
            out.append(f"--moe-dense-tp-size 1 changes nothing for {arch}: its model file does not read it "
                       "(layer_boundary/layout.py is_dense_ffn_fully_dp)")
        elif dense is None:
            out.append("--moe-dense-tp-size 1: the dense MLP layers whole on every GPU; not counted: their bytes are "
                       "not known")
        else:
            split = gpus if dep.dense_over_all else dep.tp
            out.append(f"--moe-dense-tp-size 1: the dense MLP layers whole on every GPU (parallel_group "
                       f"\"replicated\"), not split over {split}: + {(dense - _ceil_div(dense, split)) / GIB:.2f} GiB "
                       "a GPU")
    if flags.dp_encoder and not encoder_whole(model, flags):
        out.append(f"--mm-enable-dp-encoder: not modelled for {arch} (its model file was not read for it, or it "
                   "has no vision tower): the tower as SGLang splits it without the flag")
    return out
