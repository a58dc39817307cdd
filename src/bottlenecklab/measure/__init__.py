"""Diagnostics of trained networks, by concept.

`measure` takes a trained network and data and never trains. Each concept is a module with a
curated public face; every name is also available here. A formula is defined once, in
`theory` (`cost_of_identity`, `hamiltonian`, `stable_rank`, `speed_window`, ...); `measure`
applies it to a network under a name that says so (`layer_hamiltonian`, `layer_speed_window`,
`fcnn_forces`, ...).

| module | what it measures |
|---|---|
| `measure.balance` | Balancedness at a critical point (papers 000, 001, 003) |
| `measure.bounds` | Both sides of the papers' inequalities (000 Thm 4; 001 Thm 15, Cor 8) |
| `measure.coi` | Cost of identity of a network's layers (000 §1.4) |
| `measure.convergence` | Distance to a critical point: certificate, gradient norm |
| `measure.decision` | Decision maps and tripoints (002) |
| `measure.evaluation` | Data costs and rollouts |
| `measure.geodesics` | Representation geodesics of a leaky ResNet: momenta, Hamiltonian (000) |
| `measure.jacobians` | Jacobians of a fully-connected network (001) |
| `measure.linear` | Deep linear networks against their closed forms (001, 002) |
| `measure.ntk` | Neural tangent kernel (001 §4) |
| `measure.quantity` | A measured quantity, declared once beside its code |
| `measure.rank` | Numerical rank of representations and weights |
| `measure.reformulation` | Reformulations of the L2-regularized loss, forces (004 §3) |
| `measure.representation` | Quantities of one layer of any network (the probe's core) |
| `measure.saddles` | Saddle-to-saddle dynamics (003) |
| `measure.sparsity` | Neuron counts: merging, pruning (004 §4) |
| `measure.spectra` | Singular values of weights, per layer and per frequency |
| `measure.stats` | Statistics of measured series and repeated trials |
| `measure.symmetry` | Symmetry learning (001 §5) |
| `measure.views` | Low-dimensional views of representations (000, 004) |
"""

# Balancedness at a critical point (papers 000, 001, 003) (`measure.balance`)
from bottlenecklab.measure.balance import (
    balance_residuals,
    balancedness_residual,
    fcnn_balance_residuals,
    fcnn_weak_balancedness,
)

# Both sides of the papers' inequalities (000 Thm 4; 001 Thm 15, Cor 8) (`measure.bounds`)
from bottlenecklab.measure.bounds import (
    BOUND_SLACKS,
    RANDOM_CHAIN_SLACK,
    RANDOM_THM15_SLACK,
    TRAINED_CHAIN_SLACK,
    TRAINED_THM15_SLACK,
    RidgeLayers,
    chain_slacks,
    hamiltonian_bounds,
    hamiltonian_bounds_constant_gamma,
    jacobian_bounds,
    layer_speed_window,
    random_network_slacks,
    representation_bottleneck,
    ridge_layers,
    speed_window_columns,
    speed_window_summary,
)

# Cost of identity of a network's layers (000 §1.4) (`measure.coi`)
from bottlenecklab.measure.coi import (
    GAMMA0,
    coi_columns,
)

# Distance to a critical point: certificate, gradient norm (`measure.convergence`)
from bottlenecklab.measure.convergence import (
    Certificate,
    KinkDerivatives,
    KinkMode,
    certify,
    clarke_critical_point_residuals,
    critical_point_residuals,
    gradient_norm,
    kink_forward,
    regularized_loss,
)

# Decision maps and tripoints (002) (`measure.decision`)
from bottlenecklab.measure.decision import (
    accuracy,
    data_box,
    decision_map,
    tripoint_table,
    tripoints,
)

# Data costs and rollouts (`measure.evaluation`)
from bottlenecklab.measure.evaluation import (
    DATA_COSTS,
    K_STAR,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    ball_rollout,
    costs,
    data_rank,
    float64_copy,
    rollout,
)

# Representation geodesics of a leaky ResNet: momenta, Hamiltonian (000) (`measure.geodesics`)
from bottlenecklab.measure.geodesics import (
    B_MAX,
    BS_MAX,
    COI_GAMMA_MIN,
    COI_MIDDLE_MEDIAN,
    GAP_MIDDLE_MEDIAN,
    INPUT_PAIRED,
    KINETIC_MIDDLE_OVER_ENDS,
    N_MIDDLE_LAYERS,
    NEGATIVE_MASS_MIDDLE_MAX,
    PATH_BOUNDS,
    PATH_LENGTH,
    PATH_LENGTH_CONST,
    PATH_LENGTH_PLAIN,
    PORTRAIT,
    RANK_H_GAMMA_MEDIAN,
    RANK_H_MEDIAN,
    RHO_MIDDLE_OVER_ENDS,
    SPREAD_RATIO,
    THM4_ARG_NEGATIVE,
    THM4_LOWER,
    THM4_LOWER_CONST,
    THM4_LOWER_CORRECTED,
    THM4_MIDDLE,
    THM4_MIDDLE_CONST,
    THM4_PER_LAYER_FRAC,
    THM4_UPPER,
    THM4_UPPER_CONST,
    THM4_WINDOW_USED_MAX,
    THM4_WINDOW_USED_MAX_CONST,
    LayerTable,
    hamiltonian_summary,
    layer_hamiltonian,
    layer_region,
    layer_series,
    leaky_resnet_layers,
    min_norm_weights,
    momenta,
    momentum_bounds,
    path_length,
    plain_path_length,
    portrait_summary,
    step_profile,
)

# Jacobians of a fully-connected network (001) (`measure.jacobians`)
from bottlenecklab.measure.jacobians import (
    JACOBIAN_RANK_RULE,
    RANK_REL,
    function_jacobians,
    input_jacobians,
    jacobian_rank_log_det,
    jacobian_singular_values,
    layer_jacobians,
    log_top_k,
    representation_jacobian_ranks,
    representation_jacobians,
)

# Deep linear networks against their closed forms (001, 002) (`measure.linear`)
from bottlenecklab.measure.linear import (
    end_to_end_matrix,
    linear_cost_gap,
    linear_geodesic_errors,
)

# Neural tangent kernel (001 §4) (`measure.ntk`)
from bottlenecklab.measure.ntk import (
    NTK_LAMBDA_ETA,
    NTK_LAMBDA_ETA_AMPLITUDE,
    NTK_ORBIT,
    NTK_SCALE,
    ntk_along_gd,
    ntk_lambda_max,
    ntk_matrix,
    ntk_orbit_summary,
    ntk_trace,
    ntk_trace_terms,
)

# A measured quantity, declared once beside its code (`measure.quantity`)
from bottlenecklab.measure.quantity import Quantity

# Numerical rank of representations and weights (`measure.rank`)
from bottlenecklab.measure.rank import (
    AFFINE_RANK_RULE,
    CENTRED_REL,
    COR8,
    COR8_BOUND,
    COR8_MIDDLE_MAX,
    COR8_MIDDLE_MEDIAN,
    COR8_MIDDLE_MEDIAN_INIT,
    COR8_MIDDLE_MEDIAN_RANDOM,
    COR8_RANDOM_BELOW,
    CUTOFF,
    DEPTH,
    GAP,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    NORM_SQ,
    OFF_RANK_LAYERS,
    RANK_FLOOR,
    RANK_RELS,
    RANK_RULE,
    RANK_RULE_EXACT,
    RankReading,
    RankRule,
    affine_profile,
    centred_rank,
    centred_singular_values,
    collapse_margin,
    cor8_summary,
    largest_depth_share,
    layer_ranks,
    layer_s_next,
    middle_affine_rank,
    middle_layer,
    middle_median,
    middle_rank,
    precision_of,
    random_middle_medians,
    rank_depth_correlation,
    rank_group_fits,
    rank_summary,
)

# Reformulations of the L2-regularized loss, forces (004 §3) (`measure.reformulation`)
from bottlenecklab.measure.reformulation import (
    fcnn_forces,
    fcnn_layers,
    fcnn_linear_kernels,
    fcnn_reformulated_losses,
    feasible_balance,
    null_norms,
    null_step_residual,
)

# Quantities of one layer of any network (the probe's core) (`measure.representation`)
from bottlenecklab.measure.representation import (
    MAX_ROWS,
    REASONS,
    RepresentationAccumulator,
    representation_quantities,
    weight_quantities,
)

# Saddle-to-saddle dynamics (003) (`measure.saddles`)
from bottlenecklab.measure.saddles import (
    direction_gaps,
    escape_step,
    fcnn_weights,
    loss_drops,
    saddle_layers,
)

# Neuron counts: merging, pruning (004 §4) (`measure.sparsity`)
from bottlenecklab.measure.sparsity import (
    KERNEL_RANK_RULE,
    best_per_width,
    bipartite_pattern,
    count_rays,
    count_rays_2d,
    kernel_rank,
    merge_chain,
    merge_neurons,
    plateau_start,
    prune_fcnn_one_dim,
)

# Singular values of weights, per layer and per frequency (`measure.spectra`)
from bottlenecklab.measure.spectra import (
    SPECTRUM_COLUMNS,
    TW_MARGIN,
    frequency_spectra,
    gap_at,
    largest_gap,
    layer_frequency_singular_values,
    layer_modes,
    matrix_spectra,
    mode_table,
    mp_spikes,
    one_based,
    spectra_by_layer,
    spectrum_rows,
    weight_spectra,
)

# Statistics of measured series and repeated trials (`measure.stats`)
from bottlenecklab.measure.stats import (
    adjacent_z,
    clopper_pearson,
    fit_line,
    logistic_slope_z,
    loglog_slope,
)

# Symmetry learning (001 §5) (`measure.symmetry`)
from bottlenecklab.measure.symmetry import (
    crossing_counts,
    curve_distances,
    gap_rank_rows,
    haar_rotation_about,
    invariant_coordinates,
    knn_r2,
    layer_distance_map,
    layer_paths,
    layer_state_r2,
    path_crossings,
    pca_path_crossings,
    pca_paths2d,
    pca_states,
    random_projection_crossings,
    rotation_ratio,
    state_bijection_r2,
    step_r2,
)

# Low-dimensional views of representations (000, 004) (`measure.views`)
from bottlenecklab.measure.views import (
    nearest_centroid_accuracy,
    pca_paths,
    uncentered_pca,
)

# Grouped by concept module, in the order of the imports above.
__all__ = [  # noqa: RUF022
    # measure.balance
    "balance_residuals",
    "balancedness_residual",
    "fcnn_balance_residuals",
    "fcnn_weak_balancedness",
    # measure.bounds
    "BOUND_SLACKS",
    "RANDOM_CHAIN_SLACK",
    "RANDOM_THM15_SLACK",
    "TRAINED_CHAIN_SLACK",
    "TRAINED_THM15_SLACK",
    "RidgeLayers",
    "chain_slacks",
    "hamiltonian_bounds",
    "hamiltonian_bounds_constant_gamma",
    "jacobian_bounds",
    "random_network_slacks",
    "representation_bottleneck",
    "ridge_layers",
    "layer_speed_window",
    "speed_window_columns",
    "speed_window_summary",
    # measure.coi
    "GAMMA0",
    "coi_columns",
    # measure.convergence
    "Certificate",
    "KinkDerivatives",
    "KinkMode",
    "certify",
    "clarke_critical_point_residuals",
    "critical_point_residuals",
    "gradient_norm",
    "kink_forward",
    "regularized_loss",
    # measure.decision
    "accuracy",
    "data_box",
    "decision_map",
    "tripoint_table",
    "tripoints",
    # measure.evaluation
    "DATA_COSTS",
    "K_STAR",
    "TEST_COST",
    "TEST_ERROR",
    "TRAIN_COST",
    "ball_rollout",
    "costs",
    "data_rank",
    "float64_copy",
    "rollout",
    # measure.geodesics
    "RHO_MIDDLE_OVER_ENDS",
    "B_MAX",
    "BS_MAX",
    "PATH_BOUNDS",
    "PATH_LENGTH",
    "PATH_LENGTH_CONST",
    "PATH_LENGTH_PLAIN",
    "THM4_ARG_NEGATIVE",
    "THM4_LOWER",
    "THM4_LOWER_CONST",
    "THM4_LOWER_CORRECTED",
    "THM4_MIDDLE",
    "THM4_MIDDLE_CONST",
    "THM4_PER_LAYER_FRAC",
    "THM4_UPPER",
    "THM4_UPPER_CONST",
    "THM4_WINDOW_USED_MAX",
    "THM4_WINDOW_USED_MAX_CONST",
    "COI_MIDDLE_MEDIAN",
    "GAP_MIDDLE_MEDIAN",
    "KINETIC_MIDDLE_OVER_ENDS",
    "NEGATIVE_MASS_MIDDLE_MAX",
    "N_MIDDLE_LAYERS",
    "PORTRAIT",
    "SPREAD_RATIO",
    "COI_GAMMA_MIN",
    "INPUT_PAIRED",
    "RANK_H_GAMMA_MEDIAN",
    "RANK_H_MEDIAN",
    "LayerTable",
    "layer_hamiltonian",
    "hamiltonian_summary",
    "layer_series",
    "layer_region",
    "leaky_resnet_layers",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "path_length",
    "plain_path_length",
    "portrait_summary",
    "step_profile",
    # measure.jacobians
    "JACOBIAN_RANK_RULE",
    "RANK_REL",
    "function_jacobians",
    "input_jacobians",
    "jacobian_rank_log_det",
    "jacobian_singular_values",
    "layer_jacobians",
    "log_top_k",
    "representation_jacobian_ranks",
    "representation_jacobians",
    # measure.linear
    "end_to_end_matrix",
    "linear_cost_gap",
    "linear_geodesic_errors",
    # measure.ntk
    "NTK_ORBIT",
    "NTK_LAMBDA_ETA",
    "NTK_LAMBDA_ETA_AMPLITUDE",
    "NTK_SCALE",
    "ntk_along_gd",
    "ntk_lambda_max",
    "ntk_matrix",
    "ntk_orbit_summary",
    "ntk_trace",
    "ntk_trace_terms",
    # measure.quantity
    "Quantity",
    # measure.rank
    "COR8",
    "COR8_BOUND",
    "COR8_MIDDLE_MAX",
    "COR8_MIDDLE_MEDIAN",
    "COR8_MIDDLE_MEDIAN_INIT",
    "COR8_MIDDLE_MEDIAN_RANDOM",
    "COR8_RANDOM_BELOW",
    "MIDDLE_AFFINE_RANK",
    "DEPTH",
    "MIDDLE_RANK",
    "NORM_SQ",
    "OFF_RANK_LAYERS",
    "AFFINE_RANK_RULE",
    "CENTRED_REL",
    "CUTOFF",
    "GAP",
    "RANK_FLOOR",
    "RANK_RELS",
    "RANK_RULE",
    "RANK_RULE_EXACT",
    "RankReading",
    "RankRule",
    "affine_profile",
    "centred_rank",
    "centred_singular_values",
    "collapse_margin",
    "cor8_summary",
    "largest_depth_share",
    "layer_ranks",
    "layer_s_next",
    "middle_affine_rank",
    "middle_layer",
    "middle_median",
    "middle_rank",
    "precision_of",
    "random_middle_medians",
    "rank_summary",
    "rank_depth_correlation",
    "rank_group_fits",
    # measure.reformulation
    "fcnn_layers",
    "feasible_balance",
    "fcnn_forces",
    "fcnn_linear_kernels",
    "null_norms",
    "null_step_residual",
    "fcnn_reformulated_losses",
    # measure.representation
    "MAX_ROWS",
    "REASONS",
    "RepresentationAccumulator",
    "representation_quantities",
    "weight_quantities",
    # measure.saddles
    "direction_gaps",
    "escape_step",
    "fcnn_weights",
    "loss_drops",
    "saddle_layers",
    # measure.sparsity
    "KERNEL_RANK_RULE",
    "best_per_width",
    "bipartite_pattern",
    "count_rays",
    "count_rays_2d",
    "kernel_rank",
    "merge_chain",
    "merge_neurons",
    "plateau_start",
    "prune_fcnn_one_dim",
    # measure.spectra
    "SPECTRUM_COLUMNS",
    "TW_MARGIN",
    "frequency_spectra",
    "gap_at",
    "largest_gap",
    "layer_frequency_singular_values",
    "layer_modes",
    "matrix_spectra",
    "mode_table",
    "mp_spikes",
    "one_based",
    "spectra_by_layer",
    "spectrum_rows",
    "weight_spectra",
    # measure.stats
    "fit_line",
    "loglog_slope",
    "adjacent_z",
    "clopper_pearson",
    "logistic_slope_z",
    # measure.symmetry
    "crossing_counts",
    "curve_distances",
    "gap_rank_rows",
    "haar_rotation_about",
    "invariant_coordinates",
    "knn_r2",
    "layer_distance_map",
    "layer_paths",
    "layer_state_r2",
    "path_crossings",
    "pca_path_crossings",
    "pca_paths2d",
    "pca_states",
    "random_projection_crossings",
    "rotation_ratio",
    "state_bijection_r2",
    "step_r2",
    # measure.views
    "nearest_centroid_accuracy",
    "pca_paths",
    "uncentered_pca",
]
