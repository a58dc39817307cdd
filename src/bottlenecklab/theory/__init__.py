"""Closed forms, constructions and bounds of the papers (no training, no measurement).

Paper 000: the Hamiltonian system of representation geodesics (`hamiltonian`,
`vector_field`, `hamiltonian_flow`, `shoot`), an RK4 integrator, the two symmetries of
§1.2, the cost of identity and its Prop 1 bound, COI minimization (Prop 2), and the
conservation studies behind the `hamiltonian-flow` experiment. Names match `measure` for
the same quantity (`hamiltonian`, `cost_of_identity`, `stable_rank`, `negative_mass`).
"""

from bottlenecklab.theory._coi import cost_of_identity, kernel_norm_sq, relative_gamma, stable_rank
from bottlenecklab.theory._coi_minima import (
    RANDOM_MATRIX_KINDS,
    coi_minima,
    minimize_cost_of_identity,
    prop1_sweep,
    random_matrix,
)
from bottlenecklab.theory._coi_range import coi_residual
from bottlenecklab.theory._conservation import (
    drift_refinement,
    generic_start,
    hamiltonian_drift,
    kink_free_start,
    sign_crossings,
)
from bottlenecklab.theory._features import features, sigma
from bottlenecklab.theory._hamiltonian_flow import (
    Field,
    geodesic_weights,
    hamiltonian,
    hamiltonian_flow,
    lifted_inputs,
    shoot,
    vector_field,
)
from bottlenecklab.theory._kink_events import hamiltonian_flow_located
from bottlenecklab.theory._l2_forces import forces, ridge
from bottlenecklab.theory._l2_merging import MERGE_COSINE, merge_layer, prune_one_dim
from bottlenecklab.theory._l2_reformulation import (
    R_CUTOFF,
    covariance_term,
    linear_kernels,
    null_projector,
    pinv_cut,
    reformulated_losses,
    representation_term,
    representation_weights,
)
from bottlenecklab.theory._l2_sparsity import (
    bipartite_target,
    bipartite_wide_optimum,
    counterexample_loss,
    counterexample_values,
    counterexample_weights,
    pair_directions,
    remark23_weights,
)
from bottlenecklab.theory._nonnegativity import negative_mass
from bottlenecklab.theory._rk4 import grid, rk4, rk4_step
from bottlenecklab.theory._spectral import numerical_rank
from bottlenecklab.theory._symmetries import (
    Weights,
    bias_free,
    leaky_ode,
    linear_weight_norm,
    linear_weights,
    output_scaled_path,
    random_linear_weights,
    stretch_range,
    symmetry_errors,
    weight_norm_integral,
)

__all__ = [
    "MERGE_COSINE",
    "RANDOM_MATRIX_KINDS",
    "R_CUTOFF",
    "Field",
    "Weights",
    "bias_free",
    "bipartite_target",
    "bipartite_wide_optimum",
    "coi_minima",
    "coi_residual",
    "cost_of_identity",
    "counterexample_loss",
    "counterexample_values",
    "counterexample_weights",
    "covariance_term",
    "drift_refinement",
    "features",
    "forces",
    "generic_start",
    "geodesic_weights",
    "grid",
    "hamiltonian",
    "hamiltonian_drift",
    "hamiltonian_flow",
    "hamiltonian_flow_located",
    "kernel_norm_sq",
    "kink_free_start",
    "leaky_ode",
    "lifted_inputs",
    "linear_kernels",
    "linear_weight_norm",
    "linear_weights",
    "merge_layer",
    "minimize_cost_of_identity",
    "negative_mass",
    "null_projector",
    "numerical_rank",
    "output_scaled_path",
    "pair_directions",
    "pinv_cut",
    "prop1_sweep",
    "prune_one_dim",
    "random_linear_weights",
    "random_matrix",
    "reformulated_losses",
    "relative_gamma",
    "remark23_weights",
    "representation_term",
    "representation_weights",
    "ridge",
    "rk4",
    "rk4_step",
    "shoot",
    "sigma",
    "sign_crossings",
    "stable_rank",
    "stretch_range",
    "symmetry_errors",
    "vector_field",
    "weight_norm_integral",
]
