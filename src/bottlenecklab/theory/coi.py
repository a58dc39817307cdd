"""The cost of identity as a measure of dimension (paper 000, §1.4).

The feature map `sigma(A) = [relu(A), 1]` (§1), the kernel norms `||M||^2_{K + gamma I}`,
the cost of identity and its lower bound, the stable rank (Prop 1, checked on random
matrices by `coi_lower_bound_sweep`), where it is finite (`coi_residual`), the
non-negativity of representations (Prop 5), and its local minima from random starts
(Prop 2). These are the library's only implementations; `measure.coi` applies them.
"""

from bottlenecklab.theory._coi import (
    KernelSVD,
    cost_of_identity,
    kernel_condition,
    kernel_norm_sq,
    kernel_norms_sq,
    kernel_norms_sq_from_grams,
    relative_gamma,
    stable_rank,
)
from bottlenecklab.theory._coi_minima import (
    RANDOM_MATRIX_KINDS,
    coi_lower_bound_sweep,
    coi_minima,
    coi_minima_summary,
    minimize_cost_of_identity,
    random_matrix,
)
from bottlenecklab.theory._coi_range import coi_residual
from bottlenecklab.theory._features import features, sigma
from bottlenecklab.theory._nonnegativity import negative_mass

__all__ = [
    "RANDOM_MATRIX_KINDS",
    "KernelSVD",
    "coi_lower_bound_sweep",
    "coi_minima",
    "coi_minima_summary",
    "coi_residual",
    "cost_of_identity",
    "features",
    "kernel_condition",
    "kernel_norm_sq",
    "kernel_norms_sq",
    "kernel_norms_sq_from_grams",
    "minimize_cost_of_identity",
    "negative_mass",
    "random_matrix",
    "relative_gamma",
    "sigma",
    "stable_rank",
]
