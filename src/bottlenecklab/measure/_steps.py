"""Where a leaky ResNet puts its layer steps (paper 000, §3: adaptive steps)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bottlenecklab.measure._quantity import Quantity

__all__ = ["RHO_MIDDLE_OVER_ENDS", "step_profile"]


def step_profile(rho: Sequence[float]) -> dict[str, float]:
    """Mean layer step in the middle third over that in the outer thirds, and the means
    of the first and last thirds (`rho` `[L]`; thirds of the layer index, at least one
    layer each).

    Returns: `rho_middle_over_ends`, `rho_first_third`, `rho_last_third`.
    """
    r = np.asarray(rho, dtype=float)
    L = len(r)
    third = max(1, L // 3)
    outer = np.concatenate([r[:third], r[L - third :]])
    middle = r[third : L - third] if L - 2 * third > 0 else r[third : third + 1]
    return {
        "rho_middle_over_ends": float(middle.mean() / outer.mean()),
        "rho_first_third": float(r[:third].mean()),
        "rho_last_third": float(r[L - third :].mean()),
    }


RHO_MIDDLE_OVER_ENDS = Quantity(
    "rho_middle_over_ends",
    "mean layer step rho_l in the middle third of the layers over that in the outer thirds "
    "(paper 000, §3: adaptive steps are larger in the bottleneck)",
    function=step_profile,
    over="the layer steps of a trained leaky ResNet (thirds of the layer index)",
    units="ratio",
)
