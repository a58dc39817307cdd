"""Diagnostics of trained networks: spectra, cost of identity, momenta, Hamiltonian, path
length and Theorem 4, balancedness, minimal-norm weights, PCA of paths.

`measure` takes a trained network and data and never trains. Names match `theory` for the
same quantity (e.g. `cost_of_identity`, `hamiltonian`, `stable_rank`).
"""

from bottlenecklab.measure._balancedness import balancedness_residual
from bottlenecklab.measure._certify import (
    Certificate,
    KinkDerivatives,
    KinkMode,
    certify,
    kink_forward,
)
from bottlenecklab.measure._cnn import (
    frequency_spectra,
    layer_frequency_singular_values,
    layer_modes,
    rollout,
)
from bottlenecklab.measure._coi import (
    coi_residual,
    cost_of_identity,
    kernel_norm_sq,
    stable_rank,
)
from bottlenecklab.measure._costs import costs, float64_copy
from bottlenecklab.measure._decision import accuracy, data_box, decision_map, tripoints
from bottlenecklab.measure._fcnn_balance import fcnn_balance_residuals
from bottlenecklab.measure._fcnn_layers import (
    CENTRED_REL,
    RANK_FLOOR,
    centred_rank,
    centred_singular_values,
    layer_ranks,
    middle_layer,
    middle_rank,
    representation_bottleneck,
    weight_spectra,
)
from bottlenecklab.measure._fits import fit_line, loglog_slope
from bottlenecklab.measure._hamiltonian import (
    INPUT_PAIRED,
    LayerTable,
    clarke_critical_point_residuals,
    critical_point_residuals,
    hamiltonian,
    hamiltonian_summary,
    layer_series,
    leaky_resnet_layers,
    momenta,
)
from bottlenecklab.measure._jacobian import (
    RANK_REL,
    chain_slacks,
    function_jacobians,
    input_jacobians,
    jacobian_bounds,
    jacobian_rank_log_det,
    jacobian_singular_values,
    layer_jacobians,
    log_top_k,
    random_network_slacks,
    representation_jacobian_ranks,
    representation_jacobians,
)
from bottlenecklab.measure._l2_balance import feasible_balance
from bottlenecklab.measure._l2_reformulation import (
    fcnn_layers,
    forces,
    linear_kernels,
    loss_grad_norm,
    null_norms,
    null_step_residual,
    reformulated_losses,
)
from bottlenecklab.measure._l2_sparsity import (
    best_per_width,
    bipartite_pattern,
    merge_chain,
    merge_neurons,
    plateau_start,
    prune_one_dim,
)
from bottlenecklab.measure._l2_views import (
    count_rays,
    count_rays_2d,
    nearest_centroid_accuracy,
    uncentered_pca,
)
from bottlenecklab.measure._linear_net import (
    end_to_end_matrix,
    linear_cost_gap,
    linear_geodesic_errors,
)
from bottlenecklab.measure._nonnegativity import negative_mass
from bottlenecklab.measure._ntk import ntk_along_gd, ntk_lambda_max, ntk_matrix, ntk_trace
from bottlenecklab.measure._path_bounds import (
    RidgeLayers,
    momentum_bounds,
    path_length,
    plain_path_length,
    ridge_layers,
    theorem4,
    theorem4_constant_gamma,
    theorem4_window,
    window_summary,
)
from bottlenecklab.measure._pca import pca_paths
from bottlenecklab.measure._rank_groups import rank_depth_correlation, rank_group_fits
from bottlenecklab.measure._rank_rule import (
    GAP,
    RANK_RELS,
    RANK_RULE,
    RankReading,
    RankRule,
    precision_of,
)
from bottlenecklab.measure._representation import (
    GAMMA0,
    MAX_ROWS,
    REASONS,
    TW_MARGIN,
    RepresentationAccumulator,
    balance_residuals,
    coi_columns,
    mp_spikes,
    ntk_trace_terms,
    representation_quantities,
    weight_quantities,
)
from bottlenecklab.measure._saddle import (
    direction_gaps,
    escape_step,
    fcnn_weights,
    layer_singular_values,
    loss_drops,
    saddle_layers,
    weak_balancedness,
)
from bottlenecklab.measure._stationarity import gradient_norm, regularized_loss
from bottlenecklab.measure._steps import step_profile
from bottlenecklab.measure._symmetry import (
    curve_distances,
    haar_rotation_about,
    invariant_coordinates,
    knn_r2,
    largest_gap,
    layer_distance_map,
    layer_paths,
    path_crossings,
    pca_path_crossings,
    pca_paths2d,
    pca_states,
    random_projection_crossings,
    rotation_ratio,
    state_bijection_r2,
)
from bottlenecklab.measure._weights import min_norm_weights

__all__ = [
    "CENTRED_REL",
    "GAMMA0",
    "GAP",
    "INPUT_PAIRED",
    "MAX_ROWS",
    "RANK_FLOOR",
    "RANK_REL",
    "RANK_RELS",
    "RANK_RULE",
    "REASONS",
    "TW_MARGIN",
    "Certificate",
    "KinkDerivatives",
    "KinkMode",
    "LayerTable",
    "RankReading",
    "RankRule",
    "RepresentationAccumulator",
    "RidgeLayers",
    "accuracy",
    "balance_residuals",
    "balancedness_residual",
    "best_per_width",
    "bipartite_pattern",
    "centred_rank",
    "centred_singular_values",
    "certify",
    "chain_slacks",
    "clarke_critical_point_residuals",
    "coi_columns",
    "coi_residual",
    "cost_of_identity",
    "costs",
    "count_rays",
    "count_rays_2d",
    "critical_point_residuals",
    "curve_distances",
    "data_box",
    "decision_map",
    "direction_gaps",
    "end_to_end_matrix",
    "escape_step",
    "fcnn_balance_residuals",
    "fcnn_layers",
    "fcnn_weights",
    "feasible_balance",
    "fit_line",
    "float64_copy",
    "forces",
    "frequency_spectra",
    "function_jacobians",
    "gradient_norm",
    "haar_rotation_about",
    "hamiltonian",
    "hamiltonian_summary",
    "input_jacobians",
    "invariant_coordinates",
    "jacobian_bounds",
    "jacobian_rank_log_det",
    "jacobian_singular_values",
    "kernel_norm_sq",
    "kink_forward",
    "knn_r2",
    "largest_gap",
    "layer_distance_map",
    "layer_frequency_singular_values",
    "layer_jacobians",
    "layer_modes",
    "layer_paths",
    "layer_ranks",
    "layer_series",
    "layer_singular_values",
    "leaky_resnet_layers",
    "linear_cost_gap",
    "linear_geodesic_errors",
    "linear_kernels",
    "log_top_k",
    "loglog_slope",
    "loss_drops",
    "loss_grad_norm",
    "merge_chain",
    "merge_neurons",
    "middle_layer",
    "middle_rank",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "mp_spikes",
    "nearest_centroid_accuracy",
    "negative_mass",
    "ntk_along_gd",
    "ntk_lambda_max",
    "ntk_matrix",
    "ntk_trace",
    "ntk_trace_terms",
    "null_norms",
    "null_step_residual",
    "path_crossings",
    "path_length",
    "pca_path_crossings",
    "pca_paths",
    "pca_paths2d",
    "pca_states",
    "plain_path_length",
    "plateau_start",
    "precision_of",
    "prune_one_dim",
    "random_network_slacks",
    "random_projection_crossings",
    "rank_depth_correlation",
    "rank_group_fits",
    "reformulated_losses",
    "regularized_loss",
    "representation_bottleneck",
    "representation_jacobian_ranks",
    "representation_jacobians",
    "representation_quantities",
    "ridge_layers",
    "rollout",
    "rotation_ratio",
    "saddle_layers",
    "stable_rank",
    "state_bijection_r2",
    "step_profile",
    "theorem4",
    "theorem4_constant_gamma",
    "theorem4_window",
    "tripoints",
    "uncentered_pca",
    "weak_balancedness",
    "weight_quantities",
    "weight_spectra",
    "window_summary",
]

# Statistics of repeated trials (restarts, seeds): `measure._stats`.
from bottlenecklab.measure._stats import (  # noqa: E402
    adjacent_z,
    clopper_pearson,
    logistic_slope_z,
)

__all__ += ["adjacent_z", "clopper_pearson", "logistic_slope_z"]

# The middle representation of an FCNN (paper 001, Cor 8): `measure._fcnn_layers`.
from bottlenecklab.measure._fcnn_layers import (  # noqa: E402
    layer_s_next,
    middle_affine_rank,
    middle_median,
)

__all__ += ["layer_s_next", "middle_affine_rank", "middle_median"]
