"""A trained deep linear network against the closed forms of paper 001, §3 and paper 002
('Representation geodesics'): the end-to-end matrix, the excess of the parameter norm over
the representation cost, and the hidden Gram matrices against the geodesic (the formulas
are in `theory.linear`).
"""

from bottlenecklab.measure._linear_net import (
    end_to_end_matrix,
)

__all__ = [
    "end_to_end_matrix",
]
