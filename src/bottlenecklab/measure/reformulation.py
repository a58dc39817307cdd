"""Paper 004's reformulations of the L2-regularized loss, on a trained fully-connected
network (§3, Prop 1 and 3; App B): the loss in weight, representation, covariance and
null-space form, the attraction and repulsion forces on each hidden representation and
their balance on its feasible directions (§3.1), and the hidden kernels of a deep linear
network. The formulas are in `theory.reformulation`.
"""

from bottlenecklab.measure._forces import feasible_balance
from bottlenecklab.measure._reformulation import (
    fcnn_forces,
    fcnn_layers,
    fcnn_linear_kernels,
    fcnn_reformulated_losses,
    null_norms,
    null_step_residual,
)

__all__ = [
    "fcnn_forces",
    "fcnn_layers",
    "fcnn_linear_kernels",
    "fcnn_reformulated_losses",
    "feasible_balance",
    "null_norms",
    "null_step_residual",
]
