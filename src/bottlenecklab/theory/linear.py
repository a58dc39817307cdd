"""Deep linear networks (paper 001, §1.1 and §3): the representation cost `R(A; L)`, its
expansion `L R0 + R1 + R2 / L`, a minimal-norm factorization and its hidden Gram matrices
(the linear representation geodesic), and the errors of both against their closed forms.
"""

from bottlenecklab.theory._linear_cost import (
    factorization_errors,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_cost_remainders,
    linear_geodesic_grams,
    linear_representation_cost,
    nonzero_singular_values,
    optimal_linear_weights,
)

__all__ = [
    "factorization_errors",
    "linear_cost_expansion",
    "linear_cost_remainder_constant",
    "linear_cost_remainders",
    "linear_geodesic_grams",
    "linear_representation_cost",
    "nonzero_singular_values",
    "optimal_linear_weights",
]
