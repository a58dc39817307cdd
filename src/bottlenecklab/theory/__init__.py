"""Closed forms, constructions and bounds of the papers (no training, no measurement).

Paper 000: the Hamiltonian system of representation geodesics (`hamiltonian`,
`vector_field`, `hamiltonian_flow`, `shoot`), an RK4 integrator, the two symmetries of
§1.2, the cost of identity and its Prop 1 bound, COI minimization (Prop 2), the
conservation studies behind the `hamiltonian-flow` experiment, and Thm 4 (2) per layer
(`thm4_layer_window`). Names match `measure` for the same quantity (`hamiltonian`,
`cost_of_identity`, `stable_rank`, `negative_mass`).
Paper 003: the localized loss and escape directions at the origin (batched solver, circle
example, depth extension, norm growth) and the low-rank bounds at escape directions.
"""

from bottlenecklab.theory._bottleneck_bounds import (
    partial_isometry_distance_sq,
    representation_bottleneck_bound,
)
from bottlenecklab.theory._circle import (
    circle_inputs,
    circle_rank2_weights,
    circle_speed,
    circle_width1_loss,
    circle_width1_optimum,
    eq6,
)
from bottlenecklab.theory._coi import (
    KernelSVD,
    cost_of_identity,
    kernel_condition,
    kernel_norm_sq,
    kernel_norms_sq,
    kernel_norms_sq_from_grams,
    relative_gamma,
    stable_rank,
)
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
from bottlenecklab.theory._constructions import (
    IdentityConstruction,
    example20_excess,
    example20_norm_sq,
    example20_target,
    example20_weights,
    identity_construction,
    relu_network,
)
from bottlenecklab.theory._depth_extension import extend_depth
from bottlenecklab.theory._escape import (
    EscapeResult,
    cost_gradient_at_zero,
    escape_directions,
    forward_batched,
    linear_escape_speed,
    localized_loss,
)
from bottlenecklab.theory._escape_norm import (
    escape_blowup_time,
    escape_norm,
    escape_rate,
    escape_time_to_norm,
)
from bottlenecklab.theory._features import features, sigma
from bottlenecklab.theory._frequency import (
    frequency_order,
    frequency_singular_values,
    significant_modes,
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
from bottlenecklab.theory._kernels import (
    gp_regression_error,
    gp_sample,
    kernel_ridge_regression,
    kernel_test_error,
    laplace_kernel,
)
from bottlenecklab.theory._kink_events import hamiltonian_flow_located
from bottlenecklab.theory._l2_forces import (
    column_basis,
    constraint_reaction,
    feasible_directions,
    forces,
    project_feasible,
    ridge,
    ridge_eps,
)
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
from bottlenecklab.theory._linear_cost import (
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_geodesic_grams,
    linear_representation_cost,
    nonzero_singular_values,
    optimal_linear_weights,
)
from bottlenecklab.theory._nonnegativity import negative_mass
from bottlenecklab.theory._rk4 import grid, rk4, rk4_step
from bottlenecklab.theory._saddle_bounds import (
    layer_profile,
    nonlinearity_ratio,
    prop34_terms,
    singular_ratio,
    tail_energy,
    thm31_bound,
    thm31_constant,
    weak_balancedness,
)
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
from bottlenecklab.theory._thm4 import Thm4Window, thm4_layer_window
from bottlenecklab.theory._tripoints import tripoint_blocks

__all__ = [
    "MERGE_COSINE",
    "RANDOM_MATRIX_KINDS",
    "R_CUTOFF",
    "EscapeResult",
    "Field",
    "IdentityConstruction",
    "KernelSVD",
    "Thm4Window",
    "Weights",
    "bias_free",
    "bipartite_target",
    "bipartite_wide_optimum",
    "circle_inputs",
    "circle_rank2_weights",
    "circle_speed",
    "circle_width1_loss",
    "circle_width1_optimum",
    "coi_minima",
    "coi_residual",
    "column_basis",
    "constraint_reaction",
    "cost_gradient_at_zero",
    "cost_of_identity",
    "counterexample_loss",
    "counterexample_values",
    "counterexample_weights",
    "covariance_term",
    "critical_point_residual",
    "drift_refinement",
    "eq6",
    "escape_blowup_time",
    "escape_directions",
    "escape_norm",
    "escape_rate",
    "escape_time_to_norm",
    "example20_excess",
    "example20_norm_sq",
    "example20_target",
    "example20_weights",
    "extend_depth",
    "feasible_directions",
    "features",
    "forces",
    "forward_batched",
    "frequency_order",
    "frequency_singular_values",
    "generic_start",
    "geodesic_weights",
    "gp_regression_error",
    "gp_sample",
    "grid",
    "hamiltonian",
    "hamiltonian_drift",
    "hamiltonian_flow",
    "hamiltonian_flow_located",
    "identity_construction",
    "kernel_condition",
    "kernel_norm_sq",
    "kernel_norms_sq",
    "kernel_norms_sq_from_grams",
    "kernel_ridge_regression",
    "kernel_test_error",
    "kink_free_start",
    "laplace_kernel",
    "layer_profile",
    "leaky_ode",
    "lifted_inputs",
    "linear_cost_expansion",
    "linear_cost_remainder_constant",
    "linear_escape_speed",
    "linear_geodesic_grams",
    "linear_kernels",
    "linear_representation_cost",
    "linear_weight_norm",
    "linear_weights",
    "localized_loss",
    "merge_layer",
    "minimize_cost_of_identity",
    "negative_mass",
    "nonlinearity_ratio",
    "nonzero_singular_values",
    "null_projector",
    "numerical_rank",
    "optimal_linear_weights",
    "output_scaled_path",
    "pair_directions",
    "partial_isometry_distance_sq",
    "pinv_cut",
    "project_feasible",
    "prop1_sweep",
    "prop34_terms",
    "prune_one_dim",
    "random_linear_weights",
    "random_matrix",
    "reformulated_losses",
    "relative_gamma",
    "relu_network",
    "remark23_weights",
    "representation_bottleneck_bound",
    "representation_term",
    "representation_weights",
    "ridge",
    "ridge_eps",
    "rk4",
    "rk4_step",
    "shoot",
    "sigma",
    "sign_crossings",
    "significant_modes",
    "singular_ratio",
    "stable_rank",
    "stretch_range",
    "symmetry_errors",
    "tail_energy",
    "thm4_layer_window",
    "thm31_bound",
    "thm31_constant",
    "tripoint_blocks",
    "vector_field",
    "weak_balancedness",
    "weight_norm_integral",
]
