"""Explicit bias-free ReLU networks with known parameter norms (paper 001): the identity on
a completely positive set (Prop 12), and a function whose optimal representations are not
uniformly Lipschitz as the depth grows (Example 20, App. D.1: `R0 = 3`, `R1 = 0`).
"""

from bottlenecklab.theory._constructions import (
    IdentityConstruction,
    identity_construction,
    non_lipschitz_excess,
    non_lipschitz_norm_sq,
    non_lipschitz_table,
    non_lipschitz_target,
    non_lipschitz_weights,
    relu_network,
)

__all__ = [
    "IdentityConstruction",
    "identity_construction",
    "non_lipschitz_excess",
    "non_lipschitz_norm_sq",
    "non_lipschitz_table",
    "non_lipschitz_target",
    "non_lipschitz_weights",
    "relu_network",
]
