"""Diagnostics of trained networks, by concept.

`measure` takes a trained network and data and never trains. Each concept is a module with a
curated public face; every name is also available here. A formula is defined once, in
`theory` (`cost_of_identity`, `hamiltonian`, `stable_rank`, `speed_window`, ...); `measure`
applies it to a network under a name that says so (`layer_hamiltonian`,
`fcnn_weak_balancedness`, ...). A name that one experiment area alone uses is not on this
face: that area imports it from its private module (`measure._path_bounds` for
`leaky-resnet/path-bounds`, `measure._reformulation` for `l2/*`, ...).

| module | what it measures |
|---|---|
| `measure.balance` | Balancedness at a critical point (papers 000, 001, 003) |
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
| `measure.representation` | Quantities of one layer of any network (the probe's core) |
| `measure.saddles` | Saddle-to-saddle dynamics (003) |
| `measure.sparsity` | Neuron counts: merging, pruning (004 §4) |
| `measure.spectra` | Singular values of weights, per layer and per frequency |
| `measure.stats` | Statistics of measured series and repeated trials |
"""

# Balancedness at a critical point (papers 000, 001, 003) (`measure.balance`)
from bottlenecklab.measure.balance import (
    balance_residuals,
    fcnn_balance_residuals,
    fcnn_weak_balancedness,
)

# Cost of identity of a network's layers (000 §1.4) (`measure.coi`)
from bottlenecklab.measure.coi import (
    GAMMA0,
    coi_columns,
)

# Distance to a critical point: certificate, gradient norm (`measure.convergence`)
from bottlenecklab.measure.convergence import (
    GRAD_NORM,
    LOSS,
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
    TRAIN_ACCURACY,
    accuracy,
    tripoints,
)

# Data costs and rollouts (`measure.evaluation`)
from bottlenecklab.measure.evaluation import (
    K_STAR,
    N_TRAIN,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    costs,
    data_rank,
    float64_copy,
    rollout,
    train_size,
)

# Representation geodesics of a leaky ResNet: momenta, Hamiltonian (000) (`measure.geodesics`)
from bottlenecklab.measure.geodesics import (
    COI_GAMMA_MIN,
    INPUT_PAIRED,
    N_MIDDLE_LAYERS,
    LayerTable,
    hamiltonian_summary,
    layer_hamiltonian,
    layer_region,
    layer_series,
    leaky_resnet_layers,
    min_norm_weights,
    momenta,
    path_length,
    plain_path_length,
)

# Jacobians of a fully-connected network (001) (`measure.jacobians`)
from bottlenecklab.measure.jacobians import (
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
)

# Neural tangent kernel (001 §4) (`measure.ntk`)
from bottlenecklab.measure.ntk import (
    ntk_lambda_max,
    ntk_matrix,
    ntk_trace,
    ntk_trace_terms,
)

# A measured quantity, declared once beside its code (`measure.quantity`)
from bottlenecklab.measure.quantity import Quantity

# Numerical rank of representations and weights (`measure.rank`)
from bottlenecklab.measure.rank import (
    AFFINE_RANK_RULE,
    CENTRED_REL,
    COR8_BOUND,
    CUTOFF,
    DEPTH,
    GAP,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    NORM_SQ,
    RANK_FLOOR,
    RANK_RELS,
    RANK_RULE,
    RANK_RULE_EXACT,
    RankReading,
    RankRule,
    centred_rank,
    centred_singular_values,
    layer_s_next,
    middle_median,
    middle_rank,
    precision_of,
    rank_group_fits,
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
    saddle_layers,
)

# Neuron counts: merging, pruning (004 §4) (`measure.sparsity`)
from bottlenecklab.measure.sparsity import (
    merge_chain,
)

# Singular values of weights, per layer and per frequency (`measure.spectra`)
from bottlenecklab.measure.spectra import (
    SPECTRUM_COLUMNS,
    TW_MARGIN,
    gap_at,
    largest_gap,
    layer_frequency_singular_values,
    layer_modes,
    mp_spikes,
    one_based,
    spectra_by_layer,
    spectrum_rows,
    weight_spectra,
)

# Statistics of measured series and repeated trials (`measure.stats`)
from bottlenecklab.measure.stats import (
    fit_line,
    loglog_slope,
)

# Grouped by concept module, in the order of the imports above.
__all__ = [  # noqa: RUF022
    # measure.balance
    "balance_residuals",
    "fcnn_balance_residuals",
    "fcnn_weak_balancedness",
    # measure.coi
    "GAMMA0",
    "coi_columns",
    # measure.convergence
    "GRAD_NORM",
    "LOSS",
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
    "TRAIN_ACCURACY",
    "accuracy",
    "tripoints",
    # measure.evaluation
    "K_STAR",
    "N_TRAIN",
    "TEST_COST",
    "TEST_ERROR",
    "TRAIN_COST",
    "costs",
    "data_rank",
    "float64_copy",
    "rollout",
    "train_size",
    # measure.geodesics
    "N_MIDDLE_LAYERS",
    "COI_GAMMA_MIN",
    "INPUT_PAIRED",
    "LayerTable",
    "layer_hamiltonian",
    "hamiltonian_summary",
    "layer_series",
    "layer_region",
    "leaky_resnet_layers",
    "min_norm_weights",
    "momenta",
    "path_length",
    "plain_path_length",
    # measure.jacobians
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
    # measure.ntk
    "ntk_lambda_max",
    "ntk_matrix",
    "ntk_trace",
    "ntk_trace_terms",
    # measure.quantity
    "Quantity",
    # measure.rank
    "COR8_BOUND",
    "MIDDLE_AFFINE_RANK",
    "DEPTH",
    "MIDDLE_RANK",
    "NORM_SQ",
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
    "centred_rank",
    "centred_singular_values",
    "layer_s_next",
    "middle_median",
    "middle_rank",
    "precision_of",
    "rank_group_fits",
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
    "saddle_layers",
    # measure.sparsity
    "merge_chain",
    # measure.spectra
    "SPECTRUM_COLUMNS",
    "TW_MARGIN",
    "gap_at",
    "largest_gap",
    "layer_frequency_singular_values",
    "layer_modes",
    "mp_spikes",
    "one_based",
    "spectra_by_layer",
    "spectrum_rows",
    "weight_spectra",
    # measure.stats
    "fit_line",
    "loglog_slope",
]
