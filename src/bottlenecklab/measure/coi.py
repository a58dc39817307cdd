"""The cost of identity of a representation (paper 000, §1.4), applied in float64.

`cost_of_identity(A, gamma)` is `||A||^2_{K + gamma I}` with `K = S S^T`, `S = sigma(A)`;
its lower bound is the stable rank `||A||_*^2 / ||A||_F^2` (Prop 1); it is finite only on
the range of `S` (`coi_residual`). Inside the bottleneck the representations become
non-negative (Prop 5, `negative_mass`). The formulas are those of `theory.coi` (same names).
"""

from bottlenecklab.measure._coi import coi_residual, cost_of_identity, kernel_norm_sq, stable_rank
from bottlenecklab.measure._nonnegativity import negative_mass
from bottlenecklab.measure._representation import GAMMA0, coi_columns

__all__ = [
    "GAMMA0",
    "coi_columns",
    "coi_residual",
    "cost_of_identity",
    "kernel_norm_sq",
    "negative_mass",
    "stable_rank",
]
