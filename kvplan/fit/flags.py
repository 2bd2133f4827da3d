"""`kvplan estimate`'s deployment flags in `kvplan fit`: parsed once by request.py's own functions, then resolved for
each candidate split, so a search plans the settings the serving engineer will launch with.

- --all2all-backend (vLLM) / --moe-a2a-backend (SGLang): the all-to-all backend of --dp-ep's DP + EP candidates
  (an engine uses one only with expert parallelism and DP: engines/vllm_a2a.py check_backend, engines/sglang_a2a.py
  check_backend); the TP-only candidates run without one. A split the backend refuses (DeepEP's EP rank rule, an
  RDMA buffer across nodes) is refused with that line; --gpus-per-node places the EP ranks (engines/ep_nodes.py).
- --enable-dp-lm-head, --moe-dense-tp-size, --mm-enable-dp-encoder (SGLang's group flags, engines/sglang_groups.py
  parse): checked against each candidate's SGLang --tp (dp x tp under attention DP) and pp, as estimate checks them.
- --mm-encoder-tp-mode (vLLM's, engines/vllm_encoder_dp.py parse).
- --redundant-experts (EPLB): R (or vLLM's default for each EP size, auto) on the DP + EP candidates, each EP size
  checked as estimate checks it (capacity/eplb.py check_redundant: experts + R must divide over dp x tp).
Each lands in the candidate's Deployment fields (capacity/hardware.py), and its placement (request.py placement_of).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..capacity.hardware import split_engine_of
from ..errors import UsageError
from ..request import EngineRequest, _a2a_backend, _sglang_groups, _sglang_replicates_shared, _vllm_encoder_mode, \
    check_gpus_per_node, engine_family
from ..units import check_number


@dataclass(frozen=True)
class FitFlags:
    all2all_backend: str | None = None  # vLLM's --all2all-backend as given
    moe_a2a_backend: str | None = None  # SGLang's --moe-a2a-backend as given
    gpus_per_node: int = 8
    enable_dp_lm_head: bool = False
    moe_dense_tp_size: int | None = None
    mm_enable_dp_encoder: bool = False
    mm_encoder_tp_mode: str | None = None  # checked: weights | data
    redundant_experts: str | None = None  # --redundant-experts as given: an integer or auto (capacity/eplb.py)

    def argv(self) -> list[str]:
        """The flags as `kvplan estimate` takes them (fit's check command)."""
        return ((["--all2all-backend", self.all2all_backend] if self.all2all_backend is not None else [])
                + (["--moe-a2a-backend", self.moe_a2a_backend] if self.moe_a2a_backend is not None else [])
                + (["--gpus-per-node", str(self.gpus_per_node)] if self.gpus_per_node != 8 else [])
                + (["--enable-dp-lm-head"] if self.enable_dp_lm_head else [])
                + (["--moe-dense-tp-size", str(self.moe_dense_tp_size)] if self.moe_dense_tp_size is not None else [])
                + (["--mm-enable-dp-encoder"] if self.mm_enable_dp_encoder else [])
                + (["--mm-encoder-tp-mode", self.mm_encoder_tp_mode] if self.mm_encoder_tp_mode is not None else [])
                + (["--redundant-experts", self.redundant_experts] if self.redundant_experts is not None else []))


NO_FLAGS = FitFlags()


def _engine(engine: str) -> EngineRequest:
    """The engine searched, as request.py's checks read it (fit emits nothing: --emit is estimate's)."""
    return EngineRequest(engine_family(engine))


def parse(engine: str, dp_ep: bool, *, all2all_backend=None, moe_a2a_backend=None, gpus_per_node: int = 8,
          enable_dp_lm_head: bool = False, moe_dense_tp_size=None, mm_enable_dp_encoder: bool = False,
          mm_encoder_tp_mode=None, redundant_experts=None) -> FitFlags:
    """The flags checked once, before the search, by estimate's functions (the wrong engine, a name the engine does
    not take: one line); what depends on the split is checked per candidate (settings)."""
    eng = _engine(engine)
    check_gpus_per_node(gpus_per_node)
    check_number(moe_dense_tp_size, "--moe-dense-tp-size", minimum=1, maximum=2**31 - 1)
    from types import SimpleNamespace

    from ..capacity.eplb import check_redundant, parse_redundant

    redundant, auto = parse_redundant(redundant_experts, eng.name, None)
    # R's own checks (a negative R); the experts and the EP size of each candidate later
    check_redundant(SimpleNamespace(weight_routed_params=None), redundant, True, 2, eng.name)
    for flag, value in (("--all2all-backend", all2all_backend), ("--moe-a2a-backend", moe_a2a_backend),
                        ("--redundant-experts", redundant_experts)):
        if value is not None and not dp_ep:
            raise UsageError(f"{flag} applies to the data-parallel + expert-parallel splits: it needs --dp-ep",
                             "add --dp-ep, or leave it out")
    # the engine and the name, on the smallest DP + EP split (2 ranks of 1 GPU, in one node): what depends on the
    # split (DeepEP's rank and node rules) is checked again for each candidate
    _a2a_backend(all2all_backend, moe_a2a_backend, eng, 2, True, tp=1, pp=1, gpus_per_node=2)
    # the engine; the value against each candidate's --tp later (SGLang takes 1 or --tp)
    _sglang_groups(enable_dp_lm_head, moe_dense_tp_size, mm_enable_dp_encoder, eng, moe_dense_tp_size or 1, 1)
    mode = _vllm_encoder_mode(mm_encoder_tp_mode, eng)
    return FitFlags(all2all_backend, moe_a2a_backend, gpus_per_node, enable_dp_lm_head, moe_dense_tp_size,
                    mm_enable_dp_encoder, mode, None if redundant_experts is None else
                    "auto" if auto else str(redundant))


def settings(flags: FitFlags, engine: str, model, *, tp: int, pp: int, dp: int, ep: bool,
             dense_over_all: bool) -> dict:
    """The Deployment fields of one candidate split (capacity/hardware.py Deployment: a2a, replicated_shared,
    sglang_groups, mm_encoder_tp_mode, gpus_per_node, redundant_experts, eplb_default); raises UsageError with the engine's refusal where the split
    cannot take a flag. tp: the candidate's (attention) TP; SGLang's --tp is dp x tp under attention DP."""
    eng = _engine(engine)
    a2a = redundant = None
    if dp > 1:  # the backends and EPLB apply to the DP + EP splits only (parse)
        a2a = _a2a_backend(flags.all2all_backend, flags.moe_a2a_backend, eng, dp, ep, tp=tp, pp=pp,
                           gpus_per_node=flags.gpus_per_node)
        redundant = _redundant(flags, eng.name, model, tp * dp, ep)
    groups = _sglang_groups(flags.enable_dp_lm_head, flags.moe_dense_tp_size, flags.mm_enable_dp_encoder, eng,
                            tp * dp if dense_over_all else tp, pp)
    return dict(a2a=a2a, replicated_shared=flags.moe_a2a_backend is not None and _sglang_replicates_shared(a2a),
                sglang_groups=groups, mm_encoder_tp_mode=flags.mm_encoder_tp_mode, gpus_per_node=flags.gpus_per_node,
                redundant_experts=redundant, eplb_default=flags.redundant_experts == "auto" and redundant is not None)


def _redundant(flags: FitFlags, engine: str, model, ep_size: int, ep: bool) -> int | None:
    """EPLB's R on a DP + EP split of ep_size GPUs (SGLang's --tp under attention DP), checked as estimate checks it
    (workflows.py: vLLM's default R for auto, then capacity/eplb.py check_redundant)."""
    if flags.redundant_experts is None:
        return None
    from ..capacity.eplb import check_redundant, vllm_default_redundant

    redundant = (vllm_default_redundant(model, ep_size) if flags.redundant_experts == "auto"
                 else int(flags.redundant_experts))
    check_redundant(model, redundant, ep, ep_size, engine)
    return redundant


def split_flags(req, engine: str, model, tp: int, pp: int, dp: int, ep: bool) -> dict:
    """The Deployment fields estimate's flags give this split (fit/flags.py settings); raises UsageError where the
    split cannot take one."""
    return settings(req.flags, engine, model, tp=tp, pp=pp, dp=dp, ep=ep, dense_over_all=dp > 1 and engine == "sglang")


def split_placement(engine: str, flags: dict):
    """Deployment.placement of a candidate (request.py placement_of, from the split engine and the flags)."""
    from ..request import placement_of

    return placement_of(split_engine_of(engine, None), flags.get("sglang_groups"), flags.get("mm_encoder_tp_mode"))


__all__ = ["FitFlags", "NO_FLAGS", "parse", "settings", "split_flags", "split_placement"]
