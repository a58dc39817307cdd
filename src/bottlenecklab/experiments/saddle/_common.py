"""What the experiments of paper 003 share: the escape-direction solver's base config, the
certificate reasons of its claims (none trains to a critical point) and a run's logged
loss curve.

The area has no shared smoke or quick recipe: each experiment's presets change its own
sweep (widths, depths, init scales), with the reasons beside them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bottlenecklab.experiments._spec import PointResult

__all__ = [
    "RANK1",
    "SOLVER",
    "SolverConfig",
    "curve",
    "dynamics",
]

RANK1 = math.sqrt(2) - 1  # the circle's width-1 optimum (003 Example 1)

SOLVER = (
    "escape directions of projected GD on the sphere ||theta||^2 = L (no network trained; "
    "the KKT residual is reported per restart and is ~1 at kink optima): certified by the "
    "speed against the known optima."
)


def dynamics(what: str) -> str:
    """The reason a claim on the training path from small init is `Ungated`: `what` it
    reads off the trajectory (no critical point is reached or claimed)."""
    return (
        f"a claim about the training dynamics from small init ({what}), read off the "
        "trajectory: no critical point is reached or claimed."
    )


@dataclass(frozen=True)
class SolverConfig:
    """The escape-direction solver (`theory.escape_directions`: projected GD on the sphere
    `||theta||^2 = L`, step `lr` decaying geometrically to `lr_end` over `steps`).

    Args:
        steps, lr, lr_end: the solver's schedule.
        optimum_tol: a known optimum (`sqrt(2) - 1`, `1/2`) is reached within this.
        floor: floor of the singular-value ratios.
    """

    steps: int = 4000
    lr: float = 0.05
    lr_end: float = 1e-3
    optimum_tol: float = 1e-3
    floor: float = 1e-10
    seed: int = 0


def curve(r: PointResult) -> tuple[list[float], list[float]]:
    """A run's logged `(steps, losses)` from step 0 (scalar `loss0`, then its log)."""
    rows = sorted(r.metrics, key=lambda m: m["step"])
    steps = [0.0] + [float(m["step"]) for m in rows]
    return steps, [r.scalars.get("loss0", math.nan)] + [float(m["loss"]) for m in rows]
