"""Both sides of the papers' inequalities, measured on a trained network.

- Paper 000, Thm 4: the Hamiltonian against the minimal cost of identity, bounded by the
  path length (`hamiltonian_bounds`, with a ridge per layer or one for all), and the window
  that (2) puts around each layer's speed `||dA_p/dp||` (`layer_speed_window`, `theory.speed_window`
  at each layer of a table).
- Paper 001, proof of Thm 3 and Thm 15: the Jacobian chain and the distance of the weights
  to partial isometries (`jacobian_bounds`, `chain_slacks`).
- Paper 001, Cor 8: the representation bottleneck `s_{k+1}(a~_l(X) / sqrt N)` against its
  bound (`representation_bottleneck`).
"""

from bottlenecklab.measure._path_bounds import (
    RidgeLayers,
    speed_window_summary,
)

__all__ = [
    "RidgeLayers",
    "speed_window_summary",
]
