"""Smoothed ReLUs for a training phase: `PhaseConfig.smooth = beta` trains on the loss
whose ReLU and leaky-ReLU calls are replaced by softplus of sharpness `beta`.

Why: at an L2-regularized ReLU optimum many pre-activations sit exactly at 0 (spec
`convergence.md`); L-BFGS and trust-region Newton stall there before the loss reaches a
nonsmooth critical point. The softplus loss is smooth, so second-order methods converge
on it; as `beta` grows its critical points approach the ReLU loss's Clarke-critical ones,
with the derivative `sigmoid(beta z)` in `(0, 1)` on the entries near the kink (the
choice the certificate makes on its kink set). A continuation `beta = 1e3, 1e4, ...`
followed by an exact phase is the recipe (measured in `docs/lab-notes/fcnn.md`).

Like the certificate (`measure.certify`), the nonlinearities are found by intercepting
`torch.relu`, `F.relu`, `Tensor.relu` and `F.leaky_relu` calls with a `TorchFunctionMode`,
so every model whose kinks come from those calls is smoothed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

__all__ = ["SmoothReLU", "check_smoothable", "smooth_leaky_relu"]

_RELUS = {torch.relu, F.relu, torch.Tensor.relu}
_LEAKY = {F.leaky_relu}
_INPLACE = {torch.relu_, torch.Tensor.relu_, F.relu_, F.leaky_relu_}


def smooth_leaky_relu(z: torch.Tensor, beta: float, slope: float = 0.0) -> torch.Tensor:
    """`slope z + (1 - slope) softplus_beta(z)`, `softplus_beta(z) = log(1 + e^{beta z}) / beta`.

    Elementwise (any shape); within `(1 - slope) log(2) / beta` of `leaky_relu(z, slope)`
    everywhere, equal to it away from 0 up to `e^{-beta |z|} / beta`; `slope = 0`: ReLU.
    """
    soft = F.softplus(z, beta=beta, threshold=20.0)
    return soft if slope == 0 else slope * z + (1 - slope) * soft


class SmoothReLU(TorchFunctionMode):
    """Inside `with SmoothReLU(beta):`, ReLU and leaky-ReLU calls compute
    `smooth_leaky_relu(z, beta, slope)`; `calls` counts the calls replaced.

    In-place ReLUs (`relu_`, `leaky_relu_`) are refused: they would smooth nothing silently.
    """

    def __init__(self, beta: float) -> None:
        super().__init__()
        if not beta > 0:
            raise ValueError(f"beta must be > 0, got {beta}")
        self.beta, self.calls = float(beta), 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _RELUS:
            self.calls += 1
            return smooth_leaky_relu(args[0], self.beta)
        if func in _LEAKY:
            self.calls += 1
            slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
            return smooth_leaky_relu(args[0], self.beta, float(slope))
        if func in _INPLACE:
            raise RuntimeError(f"{func.__name__}: an in-place ReLU cannot be smoothed")
        return func(*args, **kwargs)


def check_smoothable(model: torch.nn.Module, X: torch.Tensor, phases) -> None:
    """Raise `ConfigError` (one line) when a smoothed phase of `phases` would smooth
    nothing: the forward it trains through (the model's `forward_twice_differentiable`
    where it has one, else the model itself) makes no ReLU call on the inputs `X`."""
    from bottlenecklab.config import ConfigError

    for i, phase in enumerate(phases):
        if not phase.smooth:
            continue
        forward = getattr(model, "forward_twice_differentiable", None)
        with torch.no_grad(), SmoothReLU(phase.smooth) as mode:
            (forward or model)(X)
        if not mode.calls:
            raise ConfigError(
                f"train.phases[{i}].smooth = {phase.smooth:g}: {type(model).__name__} "
                "makes no relu/leaky_relu call to smooth; use 0"
            )
