"""What the experiments of paper 003 share: the escape-direction solver's base config, the
certificate reasons of its claims (none trains to a critical point), the losses a trained
run measures at its ends (`LOSS0`, `FINAL_LOSS`) and its logged loss curve.

The area has no shared smoke or quick recipe: each experiment's presets change its own
sweep (widths, depths, init scales), with the reasons beside them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab.experiments._spec import PointResult
from bottlenecklab.measure import Quantity

__all__ = [
    "ENDS",
    "FINAL_LOSS",
    "LOSS0",
    "RANK1",
    "SOLVER",
    "SolverConfig",
    "curve",
    "dynamics",
    "end_losses",
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


def end_losses(
    model: torch.nn.Module,
    data: Any,
    cfg: Any,
    cost: Callable[[torch.nn.Module, Any], float],
    dtype: torch.dtype = torch.float32,
) -> dict[str, float]:
    """The training cost `cost(net, data)` at both ends of a run: `C(0)` of its init (the
    net `cfg.model` builds with run_point's seed `cfg.seed + 1` in `dtype`) and of the
    trained `model` (`LOSS0`, `FINAL_LOSS`)."""
    init = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
    return {LOSS0.name: cost(init, data), FINAL_LOSS.name: cost(model, data)}


_RUN = "the training set, at the run's two ends"
LOSS0 = Quantity(
    "loss0",
    "C(0), the training cost of the initialization (paper 003, Fig 1: the plateau's level)",
    function=end_losses,
    over=_RUN + ": the init (run_point's seed)",
    units="the cost's units",
)
FINAL_LOSS = Quantity(
    "final_loss",
    "the training cost of the trained network",
    function=end_losses,
    over=_RUN + ": the end of training",
    units="the cost's units",
)
ENDS = (LOSS0, FINAL_LOSS)  # what `end_losses` writes


def curve(r: PointResult) -> tuple[list[float], list[float]]:
    """A run's logged `(steps, losses)` from step 0 (`LOSS0`, then its log)."""
    rows = sorted(r.metrics, key=lambda m: m["step"])
    steps = [0.0] + [float(m["step"]) for m in rows]
    return steps, [r.get(LOSS0)] + [float(m["loss"]) for m in rows]
