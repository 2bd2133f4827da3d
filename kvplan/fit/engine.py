"""The engine's own accounting in the `kvplan fit` screen (EngineAccounting): vLLM's or SGLang's max concurrency
for a plan on a deployment, the card refusals (a card below SM 8.0) and the KV dtype the engine serves, each cached
per (plan, split, GPU kind) so a grid reuses them."""

from __future__ import annotations

import os
from types import SimpleNamespace

from ..capacity.gpus import Gpu
from ..capacity.hardware import Deployment
from ..errors import KvplanError, UsageError


class EngineAccounting:
    """vLLM's accounting for the screen, cached per (plan, split, batched tokens)."""

    def __init__(self, engine: str, tokens: int, speculation=None, mem_fraction_static: float | None = None,
                 need: int = 1):
        from ..engines.vllm_rules import parse_engine
        from ..request import _sglang_release, engine_family

        if engine_family(engine) == "sglang":
            self.name, self.rules, self.note = "sglang", None, None
            self.release = _sglang_release(engine)
        else:
            self.name, self.rules, self.note = parse_engine(engine)
            self.release = self.rules.version if self.rules is not None else None
        self.mem_fraction_static = mem_fraction_static  # SGLang's, when --mem-util was given
        if speculation is not None and self.name not in ("vllm", "sglang"):
            raise UsageError(f"{speculation.flag} is a vLLM setting: it needs --engine vllm (or vllm@VERSION)")
        self.speculation = speculation
        self.drafted = (0, 0, None)  # (MTP layers, draft tokens, draft checkpoint), resolved once per search
        self.sglang_spec = None  # SGLang's reading of the speculation (engines.sglang.Speculation), once
        # vLLM's PP check (engines.vllm_pp), once per search: why pp > 1 is left out, or a note where not known
        self.pp_refused: str | None = None
        self.pp_note: str | None = None
        self.tokens = tokens
        # --batch (default --concurrency): a pure state-space model's SGLang token pool is sized for those requests,
        # as `kvplan estimate --batch N --emit sglang` sizes it (the check command fit prints)
        self.need = need
        self.last_kv_dtype: str | None = None  # the KV dtype of the pool the last concurrency() read
        self.allow_long = os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").lower() in ("1", "true")
        self._card_refusals: dict[tuple[str, str | None, bool], str | None] = {}
        self._pools: dict = {}
        self._memory: dict = {}

    @property
    def on(self) -> bool:
        """vLLM's accounting."""
        return self.name == "vllm"

    def served_kv_dtype(self, model, gpu: Gpu, kv_dtype: str) -> str | None:
        """The dtype vLLM serves `kv_dtype` in on `gpu` where the name says otherwise (engines/vllm_sm7.py); None
        under another engine (SGLang keeps bfloat16 below SM 8.0: engines/sglang_sm7.py), and where a KV quantizer
        technique stores the cache in its own dtype (the plan's `model` is passed to vLLM with another
        --kv-cache-dtype than auto: engines/vllm.py served_kv_cache)."""
        if not self.on:
            return None
        from ..engines.vllm import served_kv_cache
        from ..engines.vllm_rules import LATEST
        from ..engines.vllm_sm7 import served_kv_dtype

        if served_kv_cache(model, self.rules or LATEST)[0] != "auto":
            return None

        return served_kv_dtype(gpu.cuda_capability, self.release, kv_dtype)

    def card_refusal(self, model, gpu: Gpu, kv_dtype: str) -> str | None:
        """Why the engine refuses this model with this KV dtype on `gpu` whatever the split (a card below SM 8.0:
        engines/pre_ampere.py check_card), else None; once per card and KV dtype, for every candidate, so a
        candidate the planner fails is not offered as the closest when the engine refuses it."""
        if not self.checks or gpu.cuda_capability is None or gpu.cuda_capability >= (8, 0):
            return None
        from ..engines.vllm import served_kv_cache
        from ..engines.vllm_rules import LATEST

        # vLLM reads the cache's own dtype: a KV quantizer technique (--allow fp8) stores it in fp8 under "kv bf16"
        key = (gpu.name, kv_dtype if self.name == "sglang" else served_kv_cache(model, self.rules or LATEST))
        if key not in self._card_refusals:
            from ..engines.pre_ampere import check_card

            try:
                check_card(model, gpu.cuda_capability, self.name, self.release, self.rules, kv_dtype)
                self._card_refusals[key] = None
            except KvplanError as exc:
                self._card_refusals[key] = f"{self.label} would not start: {exc.message}"
        return self._card_refusals[key]

    @property
    def checks(self) -> bool:
        """An engine's own accounting checks the candidates (vLLM's or SGLang's)."""
        return self.name in ("vllm", "sglang")

    @property
    def label(self) -> str:
        return "SGLang" if self.name == "sglang" else "vLLM"

    def concurrency(self, plan, deployment: Deployment, key) -> float:
        """The engine's max concurrency for `plan` on `deployment` (raises KvplanError when it would refuse)."""
        if self.name == "sglang":
            return self._sglang_concurrency(plan, deployment, key)
        from ..engines.vllm import default_max_num_batched_tokens, simulate
        from ..engines.vllm_encoder_dp import tower_whole
        from ..engines.vllm_report import kv_memory_of

        mnbt = default_max_num_batched_tokens(deployment.gpu, self.rules)
        if deployment.dp > 1 and deployment.ep:  # DeepEP low-latency / NIXL EP: vLLM's batched-DP default (256)
            from ..engines.vllm_a2a import default_tokens

            mnbt = default_tokens(deployment.a2a) or mnbt
        # vLLM's profile sees the model's shape and the weights, not the KV techniques: one per GPU and split
        memory_key = (deployment.gpu.name, deployment.tp, deployment.pp, deployment.dp, mnbt)
        kv_memory = self._memory.get(memory_key)
        if kv_memory is None:
            drafts, tokens, draft = self.drafted  # the profile subtracts the drafter's weights too
            kv_memory = kv_memory_of(SimpleNamespace(deployment=deployment, plan=plan, capacity=None), self.rules,
                                     mnbt, draft_layers=drafts, draft=draft, draft_tokens=tokens).bytes
            self._memory[memory_key] = kv_memory
        pool_key = (key, mnbt, deployment.gpu.name)  # the GPU picks DeepSeek-V4.1's layout
        pool = self._pools.get(pool_key)
        if pool is None:
            drafts, tokens, draft = self.drafted
            pool = self._pools[pool_key] = simulate(
                plan.model, kv_memory_bytes=kv_memory, max_model_len=self.tokens, block_tokens=plan.block_size,
                tp=deployment.tp, pp=deployment.pp, max_num_batched_tokens=mnbt,
                hybrid_manager=plan.offload is None, rules=self.rules, allow_long_max_model_len=self.allow_long,
                max_num_seqs=self.rules.max_num_seqs(deployment.gpu.memory_bytes, deployment.gpu.name),
                draft_layers=drafts, num_speculative_tokens=tokens, draft_model=draft, gpu=deployment.gpu.name,
                dp=deployment.dp, ep=deployment.ep, a2a=deployment.a2a,
                encoder_data=tower_whole(plan.model, deployment.mm_encoder_tp_mode))
        if not pool.fits and pool.estimated_max_model_len is None:
            # a start refusal that is not about memory (a model with Mamba layers whose max_num_seqs exceeds the
            # blocks, 0.20+): the planner refuses the candidate, so the screen does too
            raise UsageError(pool.refusal or "vLLM would refuse to start")
        self.last_kv_dtype = getattr(pool, "kv_cache_dtype", None)
        return (kv_memory // pool.bytes_per_block) / pool.blocks_per_request

    def _sglang_concurrency(self, plan, deployment: Deployment, key) -> float:
        """SGLang's requests of the context its pool holds (kvplan.engines.sglang), the pool sized as
        `kvplan estimate --engine sglang` sizes it."""
        from ..engines.sglang_report import (check_context, chunked_prefill_of, draft_weights, memory_of, nsa_fp8,
                                             refuse_unread, resolve_speculation, ssm_bytes_of, stage_pool,
                                             state_model_pool, state_model_tokens)
        from ..engines.sglang_rules import rules_for

        rules = rules_for(self.release)
        refuse_unread(plan.model, deployment, rules)
        check_context(plan.model, self.tokens)  # a --context-length above the model's: SGLang refuses to start
        if self.sglang_spec is None and self.speculation is not None:  # once per search
            self.sglang_spec = resolve_speculation(plan.model, self.speculation)
        spec = self.sglang_spec
        result = SimpleNamespace(deployment=deployment, plan=plan, weights=deployment.weights)
        # attention DP adds its gather padding to the reserve (sglang_dp.gather_reserve_mib): one memory per dp
        memory_key = (deployment.gpu.name, deployment.tp, deployment.pp, deployment.dp, deployment.ep)
        rest = self._memory.get(memory_key)
        if rest is None:
            rest, _, _ = memory_of(result, self.mem_fraction_static, spec.algorithm if spec else None, rules,
                                   draft=draft_weights(result, spec, rules))
            self._memory[memory_key] = rest
        pool_key = (key, deployment.gpu.name)  # the pool is what the GPU's memory leaves, so one per GPU kind
        got = self._pools.get(pool_key)
        if got is None:
            kwargs = dict(tp=deployment.tp, page_size=plan.block_size or 1, ssm_bytes=ssm_bytes_of(plan.model)[0],
                          nsa_fp8=nsa_fp8(deployment), speculation=spec,
                          chunked_prefill_size=chunked_prefill_of(deployment, rules))
            got = stage_pool(result, rest, self.tokens, rules, **kwargs)[0]
            if state_model_tokens(got, self.need) is not None:  # the --max-total-tokens --emit sglang sets
                got = state_model_pool(result, rest, self.tokens, rules, self.need, **kwargs)[0]
            self._pools[pool_key] = got
        self.last_kv_dtype = got.kv_cache_dtype
        return got.max_concurrency


__all__ = ["EngineAccounting"]
