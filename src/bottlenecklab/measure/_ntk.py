"""Neural tangent kernel of a fully-connected network from its layer Jacobians, without the
`[N d_out, P]` parameter Jacobian (paper 001, §4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._jacobian import layer_jacobians
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.measure._representation import ntk_trace_terms

__all__ = [
    "NTK_LAMBDA_ETA",
    "NTK_LAMBDA_ETA_AMPLITUDE",
    "NTK_ORBIT",
    "NTK_SCALE",
    "ntk_along_gd",
    "ntk_lambda_max",
    "ntk_matrix",
    "ntk_orbit_summary",
    "ntk_trace",
]


def _paths(model: Any, X: torch.Tensor | np.ndarray):
    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    jacs, acts = layer_jacobians(net, X64)
    return jacs, acts, float(net.cfg.bias_scale)


def ntk_trace(model: Any, X: torch.Tensor | np.ndarray) -> torch.Tensor:
    """`Tr Theta(x_i, x_i) = sum_l (||a_{l-1}(x_i)||^2 + beta^2) ||J_l(x_i)||_F^2`, float64.

    `J_l = d f / d a~_l` (`J_L = I`), `a_0 = x`; the `beta^2` term is the bias gradient
    (paper 001, §4; spec `depth-and-rank.md`).

    Args:
        model: an `FCNN`
        X: inputs `[N, d_in]`.
    Returns:
        `[N]`.
    """
    jacs, acts, beta = _paths(model, X)
    return ntk_trace_terms(jacs, acts, [beta] * len(jacs))


def ntk_matrix(model: Any, X: torch.Tensor | np.ndarray) -> torch.Tensor:
    """The full NTK Gram `Theta(X, X)` with rows `(i, c)` (sample-major), float64.

    `Theta((i,c),(j,c')) = sum_l (a_{l-1}(x_i) . a_{l-1}(x_j) + beta^2) <J_l(x_i)_c,
    J_l(x_j)_c'>` (row `c` of `J_l`).

    Args:
        model: an `FCNN`
        X: `[N, d_in]`.
    Returns:
        `[N d_out, N d_out]`.
    """
    jacs, acts, beta = _paths(model, X)
    N, d_out = jacs[0].shape[:2]
    theta = torch.zeros(N * d_out, N * d_out, dtype=torch.float64)
    for J, a in zip(jacs, acts):
        K = a @ a.T + beta**2  # [N, N]
        M = J.reshape(N * d_out, -1)  # [N d_out, n_l]
        theta += torch.kron(K, torch.ones(d_out, d_out, dtype=torch.float64)) * (M @ M.T)
    return theta


def ntk_lambda_max(model: Any, X: torch.Tensor | np.ndarray) -> float:
    """`lambda_max(Theta(X, X)) / N`: GD on `(1/N)||Y - f||^2` with step `eta` can only
    settle where this is `<= 1/eta` (paper 001, §4).

    Args:
        model: an `FCNN`
        X: `[N, d_in]`.
    """
    theta = ntk_matrix(model, X)
    N = torch.as_tensor(X).shape[0]
    return float(torch.linalg.eigvalsh(theta)[-1]) / N


def ntk_along_gd(
    model: Any,
    X: torch.Tensor | np.ndarray,
    Y: torch.Tensor | np.ndarray,
    lam: float,
    eta: float,
    steps: int,
    cost: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> tuple[np.ndarray, np.ndarray]:
    """`lambda_max(Theta(X, X)) / N` and `Tr Theta(X, X) / N` along the orbit of GD at step
    `eta` on `cost(f(X), Y) + model.regularization(lam)`, from the model's parameters
    (float64 copy; the model itself is left as it is).

    GD at a fixed step ends at the edge of stability, where the sharpness oscillates
    around `2 / eta` from one step to the next: a single state is one phase of that
    oscillation, the orbit's mean and spread describe where GD settles (paper 001, §4).

    Args:
        model: an `FCNN`
        X: `[N, d_in]`
        Y: `[N, d_out]`
        lam: the weight decay of the training loss
        eta: the GD step
        steps: GD steps (the orbit has `steps + 1` states)
        cost: the data cost (`tasks.COSTS`).
    Returns:
        `[steps + 1]` values of `lambda_max / N` and of `Tr Theta / N`.
    """
    import scipy.sparse.linalg

    net = float64_copy(model)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    Y64 = torch.as_tensor(Y, dtype=torch.float64)
    N = X64.shape[0]
    params = [p for p in net.parameters() if p.requires_grad]
    lam_max, trace = [], []
    for t in range(steps + 1):
        theta = ntk_matrix(net, X64)
        top = scipy.sparse.linalg.eigsh(theta.numpy(), k=1, which="LA", tol=1e-10)[0][0]
        lam_max.append(float(top) / N)
        trace.append(float(torch.diagonal(theta).sum()) / N)
        if t < steps:
            loss = cost(net(X64), Y64) + net.regularization(lam)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= eta * g
    return np.array(lam_max), np.array(trace)


def ntk_orbit_summary(
    lam_max: np.ndarray, trace: np.ndarray, eta: float, depth: int
) -> dict[str, float]:
    """`ntk_along_gd`'s series `[steps + 1]` (`lambda_max / N`, `Tr Theta / N`) read over
    the edge-of-stability oscillation of GD at step `eta` (paper 001, §4): `ntk_scale`
    `Tr Theta / (N L)` and `ntk_lambda_eta` `lambda_max eta / N`, means over the orbit,
    the half range of the latter (`ntk_lambda_eta_amplitude`) and its value at the
    trained state itself (`ntk_lambda_eta_final`)."""
    return {
        "ntk_scale": float(np.mean(trace)) / depth,
        "ntk_lambda_eta": float(np.mean(lam_max)) * eta,
        "ntk_lambda_eta_amplitude": float(np.ptp(lam_max)) * eta / 2,
        "ntk_lambda_eta_final": float(lam_max[0]) * eta,
    }


_ORBIT = "a trained FCNN along further GD steps at eta (`ntk_along_gd`)"
NTK_SCALE = Quantity(
    "ntk_scale",
    "Tr Theta(X, X) / (N L), mean over the GD orbit (paper 001, §4)",
    function=ntk_orbit_summary,
    over=_ORBIT,
    units="kernel units per layer",
)
NTK_LAMBDA_ETA = Quantity(
    "ntk_lambda_eta",
    "lambda_max(Theta(X, X)) / N times eta, mean over the GD orbit (paper 001, §4)",
    function=ntk_orbit_summary,
    over=_ORBIT,
    units="dimensionless (GD is stable below 2)",
)
NTK_LAMBDA_ETA_AMPLITUDE = Quantity(
    "ntk_lambda_eta_amplitude",
    "half the range of lambda_max eta over the GD orbit",
    function=ntk_orbit_summary,
    over=_ORBIT,
    units="dimensionless",
)
NTK_ORBIT = (
    NTK_SCALE,
    NTK_LAMBDA_ETA,
    NTK_LAMBDA_ETA_AMPLITUDE,
)  # what `ntk_orbit_summary` writes (declared)
