"""Option aliases shared by commands (one definition, one help text)."""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

ModelArg = Annotated[str, typer.Argument(help="Bundled name or HF id (see 'kvplan models'), a config.json (or a Mistral params.json), a model folder, a .gguf file, or a Hub repo id.")]
ContextOpt = Annotated[str, typer.Option("--context", "-c", help="Tokens per sequence: 4096, 128k, 1m (k = 1024); at most 2^40, a warning above the model's maximum.")]
# estimate's: without it, 4,096 tokens or the model's maximum if that is shorter (what vLLM would accept)
ContextOrDefaultOpt = Annotated[Optional[str], typer.Option("--context", "-c", help="Tokens per sequence: 4096, 128k, 1m (k = 1024); at most 2^40, a warning above the model's maximum. Default: 4096, or the model's maximum if shorter.")]
BatchOpt = Annotated[str, typer.Option("--batch", "-b", help="Concurrent sequences.")]
KvDtypeOpt = Annotated[str, typer.Option("--kv-dtype", help="KV storage: auto (the model's dtype), bf16, fp16, fp32, fp8, int8, int4, int2.")]
TechniqueOpt = Annotated[Optional[List[str]], typer.Option("--technique", "-t", help="A technique spec, repeatable, applied in order (see 'kvplan techniques').")]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", help="GPU kind from the catalog (see 'kvplan gpus').")]
GpuMemoryOpt = Annotated[Optional[str], typer.Option("--gpu-memory", help="Memory per GPU, e.g. 80GiB (overrides the catalog).")]
HbmOpt = Annotated[Optional[float], typer.Option("--hbm-gbps", help="HBM bandwidth in GB/s, > 0 (overrides the catalog).")]
TpOpt = Annotated[int, typer.Option("--tp", help="Tensor-parallel GPUs.")]
PpOpt = Annotated[int, typer.Option("--pp", help="Pipeline-parallel stages.")]
DpOpt = Annotated[int, typer.Option("--dp", help="Data-parallel attention ranks (vLLM's --data-parallel-size), each --tp GPUs with its own KV pool and requests; a MoE model's routed experts are split over the dp x tp GPUs. Under --engine sglang, SGLang's attention DP (--attn-dp-size dp): --tp GPUs in all, attention TP tp / dp (the families engines/sglang_dp.py lists). With --pp under vLLM only (each stage's experts over its dp x tp GPUs).")]
RedundantExpertsOpt = Annotated[Optional[str], typer.Option("--redundant-experts", help="EPLB's redundant experts (with --ep): experts + R physical experts over the EP GPUs, (experts + R) / EP a GPU, which must divide. vLLM's --enable-eplb --eplb-config '{\"num_redundant_experts\": R}' (MixtureOfExperts model classes), SGLang's --ep-num-redundant-experts R. 'auto': vLLM's --enable-eplb alone, whose default R is the least that makes experts + R divide by EP. In fit: applies to its --dp-ep candidates (needs --dp-ep).")]
EpOpt = Annotated[bool, typer.Option("--ep", "--enable-expert-parallel", help="Split a MoE model's routed experts by expert over the dp x tp GPUs (vLLM's --enable-expert-parallel; SGLang's --ep-size). With --pp under vLLM only.")]
All2AllOpt = Annotated[Optional[str], typer.Option("--all2all-backend", help="With --ep, --dp > 1 and --engine / --emit vllm: vLLM's MoE all-to-all backend (default allgather_reducescatter); the DeepEP backends' buffers are taken from the KV cache, and --emit vllm prints the flag.")]
GpusPerNodeOpt = Annotated[int, typer.Option("--gpus-per-node", help="GPUs a node (host) has (default 8): with --all2all-backend / --moe-a2a-backend, which EP ranks share a node (the ranks fill nodes in order), so whether DeepEP takes an RDMA buffer.")]
DpLmHeadOpt = Annotated[bool, typer.Option("--enable-dp-lm-head", help="With --dp and --engine / --emit sglang: SGLang's LM head split over the attention TP group (--tp / --dp GPUs) instead of all --tp GPUs.")]
MoeDenseTpOpt = Annotated[Optional[int], typer.Option("--moe-dense-tp-size", help="With --engine / --emit sglang: SGLang's TP size for a MoE model's dense MLP layers, 1 (whole on every GPU) or --tp.")]
DpEncoderOpt = Annotated[bool, typer.Option("--mm-enable-dp-encoder", help="With --engine / --emit sglang: SGLang's vision encoder data parallel, the tower whole on every GPU (Qwen2.5-VL, Qwen3-VL, Qwen3.5).")]
EncoderTpModeOpt = Annotated[Optional[str], typer.Option("--mm-encoder-tp-mode", help="With --engine / --emit vllm: vLLM's vision encoder TP mode, weights (its default: the tower split over --tp) or data (the tower whole on every GPU, for the classes that support it: Qwen2.5-VL, Qwen3-VL, Qwen3.5, GLM-4.1V / 4.5V).")]
MoeA2AOpt = Annotated[Optional[str], typer.Option("--moe-a2a-backend", help="With --ep and --engine / --emit sglang: SGLang's MoE all-to-all backend (none, deepep, ...); deepep reserves 2 GiB more (mem_fraction_static) and holds the shared experts whole on every GPU.")]
MemUtilOpt = Annotated[float, typer.Option("--mem-util", help="Fraction of GPU memory the engine may use.")]
ReserveOpt = Annotated[str, typer.Option("--reserve", help="Activation/CUDA-graph reserve per GPU.")]
QuantizationOpt = Annotated[Optional[str], typer.Option("--quantization", help="The engine's online quantization of a float checkpoint, as its own flag names it: vLLM 0.34 fp8 (= fp8_per_tensor), fp8_per_tensor, fp8_per_channel, fp8_per_block, experts_int8; SGLang 0.5.23 fp8 (docs/weights.md). The weights are sized as the engine holds them, and --emit passes the flag on.")]
WeightsOpt = Annotated[str, typer.Option("--weights", help="Weight bytes: auto (read from the checkpoint, else parameter count x dtype), a size such as 140GB, or a path: safetensors file or folder, model.safetensors.index.json, .gguf.")]
KvMemoryOpt = Annotated[Optional[str], typer.Option("--kv-memory", help="KV pool per GPU given directly (vLLM's 'Available KV cache memory').")]
EngineOpt = Annotated[str, typer.Option("--engine", help="Accounting: ideal (the formula), vllm (vLLM's own, newest modelled release) or vllm@VERSION (any release 0.11-0.34, e.g. vllm@0.24); estimate and fit also take sglang (SGLang's token pool, newest modelled release 0.5.23) or sglang@0.5.9.")]
MaxModelLenOpt = Annotated[Optional[str], typer.Option("--max-model-len", help="The engine's max model length (default: --context); with --engine or --emit.")]
MaxNumSeqsOpt = Annotated[Optional[int], typer.Option("--max-num-seqs", help="With --engine vllm: vLLM's --max-num-seqs (default: the release's for the GPU); sizes the profile's sampler run, the CUDA graphs and the Mamba start check. With --engine sglang: SGLang's --max-running-requests.")]
EnforceEagerOpt = Annotated[bool, typer.Option("--enforce-eager", help="With --engine vllm: vLLM's --enforce-eager (no CUDA graphs: no graph estimate, no Mamba start check).")]
MtpOpt = Annotated[bool, typer.Option("--mtp", help="With --engine vllm: speculative decoding with the checkpoint's MTP layers (vLLM's --speculative-config method mtp): the draft's KV cache joins the pool; --emit vllm prints the flag.")]
SpecTokensOpt = Annotated[Optional[int], typer.Option("--num-speculative-tokens", help="With --mtp or --draft-model: draft tokens per step (vLLM's num_speculative_tokens; --mtp's default: the MTP layers). Hybrid models keep that many more state pages per request and conv-state rows.")]
DraftModelOpt = Annotated[Optional[str], typer.Option("--draft-model", help="With --engine vllm: speculative decoding with a separate draft checkpoint (an EAGLE / EAGLE-3 head or a small LLM; a bundled name, a config.json or a Hub id): its layers join the KV pool. Needs --num-speculative-tokens.")]
SetOpt = Annotated[Optional[List[str]], typer.Option("--set", help="Override a config field the config has: key=value (repeatable); recorded in the output.")]
SetNewOpt = Annotated[Optional[List[str]], typer.Option("--set-new", help="Add a field the config lacks: key=value (repeatable); recorded in the output.")]
RevisionOpt = Annotated[Optional[str], typer.Option("--revision", help="Hub revision (branch, tag or commit).")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="Output: table, json, csv (one tidy table, raw numbers), ndjson (its rows as JSON lines), markdown.")]
