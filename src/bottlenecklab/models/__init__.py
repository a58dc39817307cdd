"""Networks of the papers: leaky ResNets (paper 000) and deep fully-connected nets (001-004).

Both expose `forward_path` (per-layer representations for the measurements),
`regularization(lam)` (each paper's own weight-decay term) and `depth`.
"""

from bottlenecklab.models._circular_cnn import CircularCNN, CircularCNNConfig
from bottlenecklab.models._fcnn import (
    FCNN,
    FCNNConfig,
    GivenFCNNConfig,
    NormedFCNNConfig,
    leaky_relu,
)
from bottlenecklab.models._leaky_resnet import LeakyResNet, LeakyResNetConfig, sigma
from bottlenecklab.models._schedules import adaptive_steps, adaptive_steps_from_norms, layer_steps

__all__ = [
    "FCNN",
    "CircularCNN",
    "CircularCNNConfig",
    "FCNNConfig",
    "GivenFCNNConfig",
    "LeakyResNet",
    "LeakyResNetConfig",
    "NormedFCNNConfig",
    "adaptive_steps",
    "adaptive_steps_from_norms",
    "layer_steps",
    "leaky_relu",
    "sigma",
]
