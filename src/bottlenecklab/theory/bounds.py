"""The papers' inequalities as formulas.

- Paper 000, Thm 4 (2) per layer, in the form its proof supports: the window around a
  layer's speed `||dA_p/dp||_(K + gamma I)` (`speed_window`).
- Paper 001, Thm 15 and Cor 8: the distance of a weight matrix to the rank-`k` partial
  isometries and the bound on the representation bottleneck.
- Paper 003, Thm 3.1 and Prop 3.4: low rank at escape directions (`escape_low_rank_*`),
  with the per-layer measures they bound (`tail_energy`, `singular_ratio`,
  `nonlinearity_ratio`, `layer_profile`).
"""

from bottlenecklab.theory._bottleneck_bounds import (
    partial_isometry_distance_sq,
    representation_bottleneck_bound,
)
from bottlenecklab.theory._saddle_bounds import (
    escape_low_rank_bound,
    escape_low_rank_budget,
    escape_low_rank_constant,
    layer_profile,
    nonlinearity_ratio,
    singular_ratio,
    tail_energy,
)
from bottlenecklab.theory._speed_window import SpeedWindow, speed_window

__all__ = [
    "SpeedWindow",
    "escape_low_rank_bound",
    "escape_low_rank_budget",
    "escape_low_rank_constant",
    "layer_profile",
    "nonlinearity_ratio",
    "partial_isometry_distance_sq",
    "representation_bottleneck_bound",
    "singular_ratio",
    "speed_window",
    "tail_energy",
]
