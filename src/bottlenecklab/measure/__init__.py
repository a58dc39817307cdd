"""Diagnostics of trained networks: spectra, cost of identity, momenta, Hamiltonian, path
length and Theorem 4, balancedness, minimal-norm weights, PCA of paths.

`measure` takes a trained network and data and never trains. Names match `theory` for the
same quantity (e.g. `cost_of_identity`, `hamiltonian`, `stable_rank`).
"""

from bottlenecklab.measure._balancedness import balancedness_residual
from bottlenecklab.measure._coi import (
    coi_residual,
    cost_of_identity,
    features,
    kernel_norm_sq,
    stable_rank,
)
from bottlenecklab.measure._costs import costs, float64_copy
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
    merge_neurons,
    plateau_start,
    prune_one_dim,
)
from bottlenecklab.measure._l2_views import count_rays, nearest_centroid_accuracy, uncentered_pca
from bottlenecklab.measure._nonnegativity import negative_mass
from bottlenecklab.measure._path_bounds import (
    momentum_bounds,
    path_length,
    theorem4,
    theorem4_constant_gamma,
)
from bottlenecklab.measure._pca import pca_paths
from bottlenecklab.measure._steps import step_profile
from bottlenecklab.measure._weights import min_norm_weights
from bottlenecklab.theory import numerical_rank

__all__ = [
    "INPUT_PAIRED",
    "LayerTable",
    "balancedness_residual",
    "best_per_width",
    "bipartite_pattern",
    "coi_residual",
    "cost_of_identity",
    "costs",
    "count_rays",
    "fcnn_layers",
    "features",
    "fit_line",
    "float64_copy",
    "forces",
    "hamiltonian",
    "hamiltonian_summary",
    "layer_series",
    "kernel_norm_sq",
    "leaky_resnet_layers",
    "linear_kernels",
    "loglog_slope",
    "loss_grad_norm",
    "merge_neurons",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "nearest_centroid_accuracy",
    "negative_mass",
    "null_norms",
    "null_step_residual",
    "numerical_rank",
    "path_length",
    "pca_paths",
    "plateau_start",
    "prune_one_dim",
    "reformulated_losses",
    "stable_rank",
    "step_profile",
    "theorem4",
    "theorem4_constant_gamma",
    "uncentered_pca",
]
