"""Diagnostics of trained networks: spectra, cost of identity, momenta, Hamiltonian.

`measure` takes a trained network and data and never trains. Names match `theory` for the
same quantity (e.g. `cost_of_identity`).
"""

from bottlenecklab.measure._coi import (
    coi_residual,
    cost_of_identity,
    features,
    kernel_norm_sq,
    stable_rank,
)
from bottlenecklab.measure._hamiltonian import (
    LayerTable,
    hamiltonian_summary,
    leaky_resnet_layers,
    momenta,
)

__all__ = [
    "LayerTable",
    "coi_residual",
    "cost_of_identity",
    "features",
    "hamiltonian_summary",
    "kernel_norm_sq",
    "leaky_resnet_layers",
    "momenta",
    "stable_rank",
]
