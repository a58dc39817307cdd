"""Paper 004's reformulations of the L2-regularized loss, on a trained fully-connected
network (§3, Prop 1 and 3; App B): the loss in weight, representation, covariance and
null-space form, the attraction and repulsion forces on each hidden representation and
their balance on its feasible directions (§3.1), and the hidden kernels of a deep linear
network. The formulas are in `theory.reformulation`.
"""

from bottlenecklab.measure._forces import feasible_balance
from bottlenecklab.measure._reformulation import (
    fcnn_layers,
    forces,
    linear_kernels,
    null_norms,
    null_step_residual,
    reformulated_losses,
)

__all__ = [
    "fcnn_layers",
    "feasible_balance",
    "forces",
    "linear_kernels",
    "null_norms",
    "null_step_residual",
    "reformulated_losses",
]
