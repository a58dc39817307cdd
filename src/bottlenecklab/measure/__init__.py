"""Diagnostics of trained networks: spectra, cost of identity, momenta, Hamiltonian, path
length and Theorem 4, balancedness, minimal-norm weights, PCA of paths.

`measure` takes a trained network and data and never trains. Names match `theory` for the
same quantity (e.g. `cost_of_identity`, `hamiltonian`, `stable_rank`).
"""

from bottlenecklab.measure._balancedness import balancedness_residual
from bottlenecklab.measure._cnn import layer_frequency_singular_values, layer_modes, rollout
from bottlenecklab.measure._coi import (
    coi_residual,
    cost_of_identity,
    features,
    kernel_norm_sq,
    stable_rank,
)
from bottlenecklab.measure._costs import costs, float64_copy
from bottlenecklab.measure._decision import accuracy, data_box, decision_map, tripoints
from bottlenecklab.measure._fits import fit_line, loglog_slope
from bottlenecklab.measure._hamiltonian import (
    INPUT_PAIRED,
    LayerTable,
    hamiltonian,
    hamiltonian_summary,
    layer_series,
    leaky_resnet_layers,
    momenta,
)
from bottlenecklab.measure._nonnegativity import negative_mass
from bottlenecklab.measure._path_bounds import (
    momentum_bounds,
    path_length,
    theorem4,
    theorem4_constant_gamma,
)
from bottlenecklab.measure._pca import pca_paths
from bottlenecklab.measure._stationarity import gradient_norm
from bottlenecklab.measure._steps import step_profile
from bottlenecklab.measure._symmetry import (
    haar_rotation_about,
    largest_gap,
    layer_distance_map,
    layer_paths,
    path_crossings,
    pca_path_crossings,
    pca_paths2d,
    random_projection_crossings,
    rotation_ratio,
)
from bottlenecklab.measure._weights import min_norm_weights
from bottlenecklab.theory import numerical_rank

__all__ = [
    "INPUT_PAIRED",
    "LayerTable",
    "accuracy",
    "balancedness_residual",
    "coi_residual",
    "cost_of_identity",
    "costs",
    "data_box",
    "decision_map",
    "features",
    "fit_line",
    "float64_copy",
    "gradient_norm",
    "haar_rotation_about",
    "hamiltonian",
    "hamiltonian_summary",
    "kernel_norm_sq",
    "largest_gap",
    "layer_distance_map",
    "layer_frequency_singular_values",
    "layer_modes",
    "layer_paths",
    "layer_series",
    "leaky_resnet_layers",
    "loglog_slope",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "negative_mass",
    "numerical_rank",
    "path_crossings",
    "path_length",
    "pca_path_crossings",
    "pca_paths",
    "pca_paths2d",
    "random_projection_crossings",
    "rollout",
    "rotation_ratio",
    "stable_rank",
    "step_profile",
    "theorem4",
    "theorem4_constant_gamma",
    "tripoints",
]
