"""SGLang 0.5.23's placement of weights where it differs from vLLM 0.34's split, which kvplan's weights follow: the
hooks of capacity/placement.py Placement for kvplan's own plan under --engine / --emit sglang (Deployment.placement,
request.py placement_of) and for SGLang's report (engines/sglang_report.py _stage_weights). Each rule is in its own
module; this one only routes to them, each loaded on first use:
- moved: --enable-dp-lm-head / --moe-dense-tp-size 1 (engines/sglang_groups.py moved);
- dp_tower_saving: the vision tower under attention DP (engines/sglang_dp_vision.py tower_saving), nothing where
  --mm-enable-dp-encoder builds it whole (sglang_groups.encoder_whole: stage_delta holds it);
- stage_delta: the vision tower as SGLang splits it, or whole under --mm-enable-dp-encoder, on the first stage
  (engines/sglang_report.py record_tower -> sglang_tower.py tower_delta / whole_tower).
"""

from __future__ import annotations

from .._record import record
from ..capacity.placement import Placement


@record
class SglangPlacement(Placement):
    groups: object = None  # the group flags as given (Deployment.sglang_groups: sglang_groups.GroupFlags)

    def moved(self, model, weights, tp: int, dp: int) -> tuple[int, int]:
        if self.groups is None:
            return 0, 0
        from .sglang_groups import moved

        return moved(model, weights, tp, dp, self.groups)

    def dp_tower_saving(self, model, weights, tp: int, dp: int) -> int:
        from .sglang_dp_vision import tower_saving
        from .sglang_groups import encoder_whole

        return 0 if encoder_whole(model, self.groups) else tower_saving(model, weights, tp, dp)

    def stage_delta(self, model, weights, tp: int, pp: int, dp: int) -> list[int] | None:
        from .sglang_report import record_tower

        got = record_tower(model, weights, tp, pp, dp, self.groups)
        return None if got is None else list(got.stage_bytes)
