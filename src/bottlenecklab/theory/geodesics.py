"""The Hamiltonian system of representation geodesics (paper 000, §1.5).

The Hamiltonian `H(A, B) = (L~/2) ||B^T sigma(A)||_F^2 - L~ <B, A>`, its vector field and
RK4 flow (fixed steps, or cut at every ReLU kink), shooting from the lifted inputs, the
weights of a geodesic and the critical-point residual, and the conservation of `H` along
integrated paths (the `hamiltonian-flow` experiment). `measure.geodesics` measures the same
quantities on trained networks.
"""

from bottlenecklab.theory._conservation import (
    drift_ratios,
    drift_refinement,
    generic_start,
    hamiltonian_drift,
    kink_free_start,
    refinement_study,
    sign_crossings,
)
from bottlenecklab.theory._hamiltonian_flow import (
    Field,
    critical_point_residual,
    geodesic_weights,
    hamiltonian,
    hamiltonian_flow,
    lifted_inputs,
    shoot,
    vector_field,
)
from bottlenecklab.theory._kink_events import hamiltonian_flow_located
from bottlenecklab.theory._rk4 import grid, rk4, rk4_step

__all__ = [
    "Field",
    "critical_point_residual",
    "drift_ratios",
    "drift_refinement",
    "generic_start",
    "geodesic_weights",
    "grid",
    "hamiltonian",
    "hamiltonian_drift",
    "hamiltonian_flow",
    "hamiltonian_flow_located",
    "kink_free_start",
    "lifted_inputs",
    "refinement_study",
    "rk4",
    "rk4_step",
    "shoot",
    "sign_crossings",
    "vector_field",
]
