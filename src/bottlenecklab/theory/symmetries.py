"""The two symmetries of the leaky-ResNet ODE (paper 000, §1.2): stretching the layer
range and shifting the leak, with the ODE integrator and smooth test weights.
"""

from bottlenecklab.theory._escape import Weights
from bottlenecklab.theory._symmetries import (
    bias_free,
    leaky_ode,
    linear_weight_norm,
    linear_weights,
    output_scaled_path,
    random_linear_weights,
    stretch_range,
    symmetry_errors,
    weight_norm_integral,
)

__all__ = [
    "Weights",
    "bias_free",
    "leaky_ode",
    "linear_weight_norm",
    "linear_weights",
    "output_scaled_path",
    "random_linear_weights",
    "stretch_range",
    "symmetry_errors",
    "weight_norm_integral",
]
