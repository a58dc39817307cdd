"""Closed forms, constructions and bounds of the papers (no training, no measurement).

Paper 000: the Hamiltonian system of representation geodesics (`hamiltonian`,
`vector_field`, `hamiltonian_flow`, `shoot`), an RK4 integrator, the two symmetries of
§1.2, the cost of identity and its Prop 1 bound, and COI minimization (Prop 2). Names match
`measure` for the same quantity (`hamiltonian`, `cost_of_identity`, `stable_rank`).
"""

from bottlenecklab.theory._coi import cost_of_identity, kernel_norm_sq, relative_gamma, stable_rank
from bottlenecklab.theory._coi_minima import minimize_cost_of_identity
from bottlenecklab.theory._features import features, sigma
from bottlenecklab.theory._hamiltonian_flow import (
    geodesic_weights,
    hamiltonian,
    hamiltonian_flow,
    shoot,
    vector_field,
)
from bottlenecklab.theory._rk4 import grid, rk4
from bottlenecklab.theory._spectral import numerical_rank
from bottlenecklab.theory._symmetries import (
    Weights,
    leaky_ode,
    output_scaled_path,
    stretch_range,
    weight_norm_integral,
)

__all__ = [
    "Weights",
    "cost_of_identity",
    "features",
    "geodesic_weights",
    "grid",
    "hamiltonian",
    "hamiltonian_flow",
    "kernel_norm_sq",
    "leaky_ode",
    "minimize_cost_of_identity",
    "numerical_rank",
    "output_scaled_path",
    "relative_gamma",
    "rk4",
    "shoot",
    "sigma",
    "stable_rank",
    "stretch_range",
    "vector_field",
    "weight_norm_integral",
]
