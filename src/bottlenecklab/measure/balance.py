"""Balancedness at a critical point of the regularized loss.

Prop 10 of paper 000 for leaky ResNets (`||W_p||^2` grows by `L~ ||b_p||^2`), the per-neuron
rescaling balance of paper 001, §2 for fully-connected networks and any chain of weights
(incoming norm = outgoing norm), and the weak balancedness that small-initialization
training conserves (paper 003, Sec 5; the formula is `theory.escape.weak_balancedness`).
"""

from bottlenecklab.measure._balance import (
    fcnn_balance_residuals,
)
from bottlenecklab.measure._representation import (
    balance_residuals,
)
from bottlenecklab.measure._saddles import (
    fcnn_weak_balancedness,
)

__all__ = [
    "balance_residuals",
    "fcnn_balance_residuals",
    "fcnn_weak_balancedness",
]
