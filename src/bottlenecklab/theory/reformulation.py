"""Representation and covariance forms of the L2-regularized loss (paper 004, §3, Prop 1
and 3; App B), the attraction and repulsion forces on a hidden representation and its
feasible directions (§3.1, Fig 1), and the counterexample of Prop 19 (App C.1): a local
minimum in weights that is not one of the covariance form.
"""

from bottlenecklab.theory._forces import (
    column_basis,
    constraint_reaction,
    feasible_directions,
    forces,
    project_feasible,
    ridge,
    ridge_eps,
)
from bottlenecklab.theory._reformulation import (
    R_CUTOFF,
    covariance_term,
    linear_kernels,
    null_projector,
    pinv_cut,
    reformulated_losses,
    representation_term,
    representation_weights,
)
from bottlenecklab.theory._sparsity import (
    counterexample_loss,
    counterexample_values,
    counterexample_weights,
)

__all__ = [
    "R_CUTOFF",
    "column_basis",
    "constraint_reaction",
    "counterexample_loss",
    "counterexample_values",
    "counterexample_weights",
    "covariance_term",
    "feasible_directions",
    "forces",
    "linear_kernels",
    "null_projector",
    "pinv_cut",
    "project_feasible",
    "reformulated_losses",
    "representation_term",
    "representation_weights",
    "ridge",
    "ridge_eps",
]
