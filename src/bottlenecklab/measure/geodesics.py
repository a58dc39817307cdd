"""Representation geodesics of a trained leaky ResNet (paper 000).

The path `A_0 -> A_L` with its momenta `B_l` and Hamiltonian `H_l` (§1.5; `momenta`,
`layer_hamiltonian`: the formula `theory.hamiltonian` at each layer), the per-layer table
of the paper's quantities (Fig 1; `leaky_resnet_layers`, `hamiltonian_summary`), path
lengths and momentum sizes (Fig 3), the minimal-norm weights of a path (§1.3) and where the
network puts its layer steps (§3). The closed forms of the Hamiltonian system are in
`theory.geodesics`.
"""

from bottlenecklab.measure._hamiltonian import (
    COI_GAMMA_MIN,
    INPUT_PAIRED,
    RANK_H_GAMMA_MEDIAN,
    RANK_H_MEDIAN,
    LayerTable,
    hamiltonian_summary,
    layer_hamiltonian,
    layer_series,
    leaky_resnet_layers,
    momenta,
)
from bottlenecklab.measure._path_bounds import (
    B_MAX,
    BS_MAX,
    PATH_BOUNDS,
    PATH_LENGTH,
    PATH_LENGTH_CONST,
    PATH_LENGTH_PLAIN,
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
    momentum_bounds,
    path_length,
    plain_path_length,
)
from bottlenecklab.measure._portrait import (
    COI_MIDDLE_MEDIAN,
    GAP_MIDDLE_MEDIAN,
    KINETIC_MIDDLE_OVER_ENDS,
    N_MIDDLE_LAYERS,
    NEGATIVE_MASS_MIDDLE_MAX,
    PORTRAIT,
    SPREAD_RATIO,
    layer_region,
    portrait_summary,
)
from bottlenecklab.measure._steps import RHO_MIDDLE_OVER_ENDS, step_profile
from bottlenecklab.measure._weights import min_norm_weights

__all__ = [
    "BS_MAX",
    "B_MAX",
    "COI_GAMMA_MIN",
    "COI_MIDDLE_MEDIAN",
    "GAP_MIDDLE_MEDIAN",
    "INPUT_PAIRED",
    "KINETIC_MIDDLE_OVER_ENDS",
    "NEGATIVE_MASS_MIDDLE_MAX",
    "N_MIDDLE_LAYERS",
    "PATH_BOUNDS",
    "PATH_LENGTH",
    "PATH_LENGTH_CONST",
    "PATH_LENGTH_PLAIN",
    "PORTRAIT",
    "RANK_H_GAMMA_MEDIAN",
    "RANK_H_MEDIAN",
    "RHO_MIDDLE_OVER_ENDS",
    "SPREAD_RATIO",
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
    "LayerTable",
    "hamiltonian_summary",
    "layer_hamiltonian",
    "layer_region",
    "layer_series",
    "leaky_resnet_layers",
    "min_norm_weights",
    "momenta",
    "momentum_bounds",
    "path_length",
    "plain_path_length",
    "portrait_summary",
    "step_profile",
]
