"""Closed forms, constructions and bounds of the papers (no training, no measurement),
by concept.

Each concept is a module with a curated public face; every name is also available here.
Names match `measure` for the same quantity (`hamiltonian`, `cost_of_identity`,
`stable_rank`, `negative_mass`, `speed_window`, ...).

| module | what it holds |
|---|---|
| `theory.bounds` | The papers' inequalities as formulas (000, 001, 003) |
| `theory.coi` | Cost of identity, its bound and its minima (000 §1.4) |
| `theory.constructions` | Explicit networks with known norms (001) |
| `theory.decision` | Tripoints of a labelled grid (002) |
| `theory.escape` | Escape from the saddle at the origin (003) |
| `theory.geodesics` | The Hamiltonian system of representation geodesics (000 §1.5) |
| `theory.kernels` | Kernel methods against depth (002) |
| `theory.linear` | Deep linear networks (001 §3) |
| `theory.reformulation` | Reformulations of the L2-regularized loss, forces (004 §3) |
| `theory.sparsity` | Sparsity of L2-regularized networks (004 §4) |
| `theory.spectra` | Numerical rank, spectra per frequency (002) |
| `theory.symmetries` | Symmetries of the leaky ResNet (000 §1.2) |
"""

import warnings
from typing import Any

# The papers' inequalities as formulas (000, 001, 003) (`theory.bounds`)
from bottlenecklab.theory.bounds import (
    SpeedWindow,
    escape_low_rank_bound,
    escape_low_rank_budget,
    escape_low_rank_constant,
    layer_profile,
    nonlinearity_ratio,
    partial_isometry_distance_sq,
    representation_bottleneck_bound,
    singular_ratio,
    speed_window,
    tail_energy,
)

# Cost of identity, its bound and its minima (000 §1.4) (`theory.coi`)
from bottlenecklab.theory.coi import (
    RANDOM_MATRIX_KINDS,
    KernelSVD,
    coi_lower_bound_sweep,
    coi_minima,
    coi_minima_summary,
    coi_residual,
    cost_of_identity,
    features,
    kernel_condition,
    kernel_norm_sq,
    kernel_norms_sq,
    kernel_norms_sq_from_grams,
    minimize_cost_of_identity,
    negative_mass,
    random_matrix,
    relative_gamma,
    sigma,
    stable_rank,
)

# Explicit networks with known norms (001) (`theory.constructions`)
from bottlenecklab.theory.constructions import (
    IdentityConstruction,
    identity_construction,
    non_lipschitz_excess,
    non_lipschitz_norm_sq,
    non_lipschitz_table,
    non_lipschitz_target,
    non_lipschitz_weights,
    relu_network,
)

# Tripoints of a labelled grid (002) (`theory.decision`)
from bottlenecklab.theory.decision import (
    tripoint_blocks,
)

# Escape from the saddle at the origin (003) (`theory.escape`)
from bottlenecklab.theory.escape import (
    EscapeResult,
    circle_inputs,
    circle_rank2_weights,
    circle_speed,
    circle_width1_loss,
    circle_width1_optimum,
    circle_width1_speed,
    cost_gradient_at_zero,
    escape_blowup_time,
    escape_directions,
    escape_norm,
    escape_rate,
    escape_time_to_norm,
    extend_depth,
    forward_batched,
    linear_escape_speed,
    localized_loss,
    weak_balancedness,
)

# The Hamiltonian system of representation geodesics (000 §1.5) (`theory.geodesics`)
from bottlenecklab.theory.geodesics import (
    Field,
    critical_point_residual,
    drift_ratios,
    drift_refinement,
    generic_start,
    geodesic_weights,
    grid,
    hamiltonian,
    hamiltonian_drift,
    hamiltonian_flow,
    hamiltonian_flow_located,
    kink_free_start,
    lifted_inputs,
    refinement_study,
    rk4,
    rk4_step,
    shoot,
    sign_crossings,
    vector_field,
)

# Kernel methods against depth (002) (`theory.kernels`)
from bottlenecklab.theory.kernels import (
    gp_regression_error,
    gp_sample,
    kernel_ridge_regression,
    kernel_test_error,
    laplace_kernel,
)

# Deep linear networks (001 §3) (`theory.linear`)
from bottlenecklab.theory.linear import (
    factorization_errors,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_cost_remainders,
    linear_geodesic_grams,
    linear_representation_cost,
    nonzero_singular_values,
    optimal_linear_weights,
)

# Reformulations of the L2-regularized loss, forces (004 §3) (`theory.reformulation`)
from bottlenecklab.theory.reformulation import (
    R_CUTOFF,
    column_basis,
    constraint_reaction,
    counterexample_loss,
    counterexample_values,
    counterexample_weights,
    covariance_term,
    feasible_directions,
    forces,
    linear_kernels,
    null_projector,
    pinv_cut,
    project_feasible,
    reformulated_losses,
    representation_term,
    representation_weights,
    ridge,
    ridge_eps,
)

# Sparsity of L2-regularized networks (004 §4) (`theory.sparsity`)
from bottlenecklab.theory.sparsity import (
    MERGE_COSINE,
    bipartite_full_width_weights,
    bipartite_target,
    bipartite_wide_optimum,
    merge_layer,
    pair_directions,
    prune_one_dim,
)

# Numerical rank, spectra per frequency (002) (`theory.spectra`)
from bottlenecklab.theory.spectra import (
    frequency_order,
    frequency_singular_values,
    numerical_rank,
    significant_modes,
)

# Symmetries of the leaky ResNet (000 §1.2) (`theory.symmetries`)
from bottlenecklab.theory.symmetries import (
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

# Grouped by concept module, in the order of the imports above.
__all__ = [  # noqa: RUF022
    # theory.bounds
    "SpeedWindow",
    "escape_low_rank_bound",
    "escape_low_rank_budget",
    "escape_low_rank_constant",
    "layer_profile",
    "nonlinearity_ratio",
    "partial_isometry_distance_sq",
    "representation_bottleneck_bound",
    "singular_ratio",
    "speed_window",
    "tail_energy",
    # theory.coi
    "RANDOM_MATRIX_KINDS",
    "KernelSVD",
    "coi_lower_bound_sweep",
    "coi_minima",
    "coi_minima_summary",
    "coi_residual",
    "cost_of_identity",
    "features",
    "kernel_condition",
    "kernel_norm_sq",
    "kernel_norms_sq",
    "kernel_norms_sq_from_grams",
    "minimize_cost_of_identity",
    "negative_mass",
    "random_matrix",
    "relative_gamma",
    "sigma",
    "stable_rank",
    # theory.constructions
    "IdentityConstruction",
    "identity_construction",
    "non_lipschitz_excess",
    "non_lipschitz_norm_sq",
    "non_lipschitz_table",
    "non_lipschitz_target",
    "non_lipschitz_weights",
    "relu_network",
    # theory.decision
    "tripoint_blocks",
    # theory.escape
    "EscapeResult",
    "circle_inputs",
    "circle_rank2_weights",
    "circle_speed",
    "circle_width1_loss",
    "circle_width1_optimum",
    "circle_width1_speed",
    "cost_gradient_at_zero",
    "escape_blowup_time",
    "escape_directions",
    "escape_norm",
    "escape_rate",
    "escape_time_to_norm",
    "extend_depth",
    "forward_batched",
    "linear_escape_speed",
    "localized_loss",
    "weak_balancedness",
    # theory.geodesics
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
    "refinement_study",
    "lifted_inputs",
    "rk4",
    "rk4_step",
    "shoot",
    "sign_crossings",
    "vector_field",
    # theory.kernels
    "gp_regression_error",
    "gp_sample",
    "kernel_ridge_regression",
    "kernel_test_error",
    "laplace_kernel",
    # theory.linear
    "factorization_errors",
    "linear_cost_expansion",
    "linear_cost_remainder_constant",
    "linear_cost_remainders",
    "linear_geodesic_grams",
    "linear_representation_cost",
    "nonzero_singular_values",
    "optimal_linear_weights",
    # theory.reformulation
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
    # theory.sparsity
    "MERGE_COSINE",
    "bipartite_full_width_weights",
    "bipartite_target",
    "bipartite_wide_optimum",
    "merge_layer",
    "pair_directions",
    "prune_one_dim",
    # theory.spectra
    "frequency_order",
    "frequency_singular_values",
    "numerical_rank",
    "significant_modes",
    # theory.symmetries
    "Weights",
    "bias_free",
    "leaky_ode",
    "linear_weight_norm",
    "linear_weights",
    "output_scaled_path",
    "random_linear_weights",
    "stretch_range",
    "symmetry_errors",
    "weight_norm_integral",
]

# Old names that dated records (lab notes, changelog) still use: deprecated aliases.
_DEPRECATED = {"thm4_layer_window": "speed_window"}  # rename-concepts: keep


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"bottlenecklab.theory.{name} is deprecated, use bottlenecklab.theory.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
