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
from bottlenecklab.measure._nonnegativity import negative_mass
from bottlenecklab.measure._path_bounds import (
    momentum_bounds,
    path_length,
    theorem4,
    theorem4_constant_gamma,
)
from bottlenecklab.measure._pca import pca_paths
from bottlenecklab.measure._saddle import (
    escape_step,
    fcnn_weights,
    layer_singular_values,
    loss_drops,
    saddle_layers,
    weak_balancedness,
)
from bottlenecklab.measure._steps import step_profile
from bottlenecklab.measure._weights import min_norm_weights
from bottlenecklab.theory import numerical_rank

__all__ = [
    "INPUT_PAIRED",
    "LayerTable",
    "balancedness_residual",
    "coi_residual",
    "cost_of_identity",
    "costs",
    "escape_step",
    "fcnn_weights",
    "features",
    "fit_line",
    "float64_copy",
    "hamiltonian",
    "hamiltonian_summary",
    "layer_series",
    "layer_singular_values",
    "kernel_norm_sq",
    "leaky_resnet_layers",
    "loglog_slope",
    "loss_drops",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "negative_mass",
    "numerical_rank",
    "path_length",
    "pca_paths",
    "saddle_layers",
    "stable_rank",
    "step_profile",
    "theorem4",
    "theorem4_constant_gamma",
    "weak_balancedness",
]
