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

# Appended (leaky-theory, issue 8): conservation, symmetry and COI studies of paper 000.
from bottlenecklab.theory._coi_minima import (  # noqa: E402
    RANDOM_MATRIX_KINDS,
    coi_minima,
    prop1_sweep,
    random_matrix,
)
from bottlenecklab.theory._coi_range import coi_residual  # noqa: E402
from bottlenecklab.theory._conservation import (  # noqa: E402
    drift_refinement,
    generic_start,
    hamiltonian_drift,
    kink_free_start,
    sign_crossings,
)
from bottlenecklab.theory._hamiltonian_flow import Field, lifted_inputs  # noqa: E402
from bottlenecklab.theory._nonnegativity import negative_mass  # noqa: E402
from bottlenecklab.theory._symmetries import (  # noqa: E402
    bias_free,
    linear_weight_norm,
    linear_weights,
    random_linear_weights,
    symmetry_errors,
)

__all__ += [
    "RANDOM_MATRIX_KINDS",
    "Field",
    "bias_free",
    "coi_minima",
    "coi_residual",
    "drift_refinement",
    "generic_start",
    "hamiltonian_drift",
    "kink_free_start",
    "lifted_inputs",
    "linear_weight_norm",
    "linear_weights",
    "negative_mass",
    "prop1_sweep",
    "random_linear_weights",
    "random_matrix",
    "sign_crossings",
    "symmetry_errors",
]
from bottlenecklab.theory._kink_events import hamiltonian_flow_located  # noqa: E402
from bottlenecklab.theory._rk4 import rk4_step  # noqa: E402

__all__ += ["hamiltonian_flow_located", "rk4_step"]
