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
    LayerTable,
    hamiltonian_summary,
    layer_hamiltonian,
    layer_series,
    leaky_resnet_layers,
    momenta,
)
from bottlenecklab.measure._path_bounds import (
    path_length,
    plain_path_length,
)
from bottlenecklab.measure._portrait import (
    N_MIDDLE_LAYERS,
    layer_region,
)
from bottlenecklab.measure._weights import (
    min_norm_weights,
)

__all__ = [
    "COI_GAMMA_MIN",
    "INPUT_PAIRED",
    "N_MIDDLE_LAYERS",
    "LayerTable",
    "hamiltonian_summary",
    "layer_hamiltonian",
    "layer_region",
    "layer_series",
    "leaky_resnet_layers",
    "min_norm_weights",
    "momenta",
    "path_length",
    "plain_path_length",
]
