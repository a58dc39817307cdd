"""Deep linear networks (paper 001, §1.1 and §3): the representation cost `R(A; L)`, its
expansion `L R0 + R1 + R2 / L`, a minimal-norm factorization and its hidden Gram matrices
(the linear representation geodesic).
"""

from bottlenecklab.theory._linear_cost import (
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_geodesic_grams,
    linear_representation_cost,
    nonzero_singular_values,
    optimal_linear_weights,
)

__all__ = [
    "linear_cost_expansion",
    "linear_cost_remainder_constant",
    "linear_geodesic_grams",
    "linear_representation_cost",
    "nonzero_singular_values",
    "optimal_linear_weights",
]
