"""How close a trained network is to a critical point of its regularized loss.

The convergence certificate at ReLU kinks (`certify`; spec `convergence.md`), the norm of
the gradient of the regularized loss (`gradient_norm`, `regularized_loss`; the columns
`GRAD_NORM` and `LOSS`), and the
critical-point residuals `||W_l - L~ B_l^T S_{l-1}|| / ||W_l||` of a leaky ResNet, plain and
in their Clarke form (paper 000, §1.1).
"""

from bottlenecklab.measure._certify import (
    Certificate,
    KinkDerivatives,
    KinkMode,
    certify,
    kink_forward,
)
from bottlenecklab.measure._hamiltonian import (
    clarke_critical_point_residuals,
    critical_point_residuals,
)
from bottlenecklab.measure._stationarity import GRAD_NORM, LOSS, gradient_norm, regularized_loss

__all__ = [
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
]
