"""Where an engine's flags place weights otherwise than the split kvplan's weights follow (vLLM 0.34's: capacity/
weights.py stage_weight_bytes, capacity/experts.py placement_saving's routed experts): the hooks capacity asks, so
that capacity never imports the engine layer (tests/test_layering.py). The engine layer implements them
(engines/sglang_placement.py: SGLang 0.5.23's tower split and group flags; engines/vllm_encoder_dp.py: vLLM's
--mm-encoder-tp-mode data), request.py and fit/flags.py (split_placement) pick one (Deployment.placement); the default adds nothing.
"""

from __future__ import annotations


class Placement:
    """vLLM 0.34's own split, which kvplan's weights follow: nothing moves, nothing more a stage."""

    def moved(self, model, weights, tp: int, dp: int) -> tuple[int, int]:
        """(bytes kept out of the split over all dp x tp GPUs of attention DP, bytes one GPU holds whole more than
        kvplan's split over tp gives it): capacity/experts.py placement_saving."""
        return 0, 0

    def dp_tower_saving(self, model, weights, tp: int, dp: int) -> int:
        """Bytes of the vision tower one GPU holds less than kvplan's split over tp gives it under attention DP
        (Deployment.dense_over_all; negative: more): capacity/experts.py placement_saving."""
        return 0

    def stage_delta(self, model, weights, tp: int, pp: int, dp: int) -> list[int] | None:
        """Bytes one GPU of each pipeline stage holds beyond stage_weight_bytes' split; None where nothing differs:
        capacity/weights.py engine_stage_delta."""
        return None


VLLM_SPLIT = Placement()  # the default of Deployment.placement
