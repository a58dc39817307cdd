"""Continuation in the weight decay: solve at a large `lambda`, then warm-start down a
geometric path of phases to the target `lambda`.

At a small `lambda` (paper 000: 0.002) the regularization force `lambda grad R` is tiny,
so a network that fits the data drifts toward the regularized optimum very slowly; at a
large `lambda` the optimum is reached in a few thousand steps, and each step down the path
starts close to the next optimum (the path of optima is continuous where it is unique).
"""

from __future__ import annotations

import dataclasses

from bottlenecklab.config import ConfigError
from bottlenecklab.training._config import PhaseConfig

__all__ = ["continuation"]


def continuation(
    lam_start: float, lam_end: float, stages: int, phase: PhaseConfig
) -> tuple[PhaseConfig, ...]:
    """`stages` copies of `phase` at geometrically spaced weight decays.

    Stage `i = 0 .. stages-1` trains at `lam_i = lam_start (lam_end / lam_start)^(i /
    (stages - 1))` (`PhaseConfig.lam`), for `phase.steps` steps each; the first is exactly
    `lam_start`, the last exactly `lam_end`. Each stage builds its optimizer afresh (an
    L-BFGS history belongs to one objective) from the previous stage's parameters.

    Args:
        lam_start: the weight decay of the first stage, `> 0`.
        lam_end: that of the last stage, `> 0` (usually `TrainConfig.lam`, or end the
            path with a phase at `TrainConfig.lam`, e.g. Newton).
        stages: the number of stages, `>= 2`.
        phase: what every stage runs (optimizer, steps, lr, ...); its own `lam` is ignored.
    Returns:
        The `stages` phases, in order (splice them into `TrainConfig.phases`).
    """
    if stages < 2:
        raise ConfigError(f"continuation needs >= 2 stages, got {stages}")
    if not (lam_start > 0 and lam_end > 0):
        raise ConfigError(
            f"continuation needs lam_start, lam_end > 0 (a geometric path), got "
            f"{lam_start:g}, {lam_end:g}"
        )
    ratio = lam_end / lam_start
    lams = [lam_start * ratio ** (i / (stages - 1)) for i in range(stages - 1)] + [lam_end]
    return tuple(dataclasses.replace(phase, lam=lam) for lam in lams)
