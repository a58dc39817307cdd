"""Saddle-to-saddle dynamics of small-initialization training (paper 003): the plateaus
and drops of a loss curve, the end of the first plateau, the gap between training paths of
`theta / ||theta||`, and the per-layer low-rank measures of a trained bias-free network
(Thm 3.1; the formulas are in `theory.bounds`).
"""

from bottlenecklab.measure._saddles import (
    direction_gaps,
    escape_step,
    fcnn_weights,
    saddle_layers,
)

__all__ = [
    "direction_gaps",
    "escape_step",
    "fcnn_weights",
    "saddle_layers",
]
