"""The circle example of paper 003 (Example 1, Sec 4, App C.1): `N = 8` points on the
circle, alternating `G_j = (-1)^j`, depth 3, one output."""

from __future__ import annotations

import math

import torch

from bottlenecklab.theory._escape import localized_loss

__all__ = [
    "circle_inputs",
    "circle_rank2_weights",
    "circle_speed",
    "circle_width1_loss",
    "circle_width1_optimum",
    "circle_width1_speed",
]


def circle_inputs(n: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """`x_j = (sin(2 pi j/n), cos(2 pi j/n))`, `G_j = (-1)^j`, `j = 1..n` (spec decision:
    `G` given directly). Returns `X` `[n, 2]`, `G` `[n, 1]` (float64)."""
    j = torch.arange(1, n + 1, dtype=torch.float64)
    X = torch.stack([torch.sin(2 * math.pi * j / n), torch.cos(2 * math.pi * j / n)], dim=1)
    G = torch.where(j.remainder(2) == 0, 1.0, -1.0).to(torch.float64)[:, None]
    return X, G


def circle_width1_loss(phi: torch.Tensor) -> torch.Tensor:
    """`sum_j G_j relu(w_phi . x_j)`, `w_phi = (cos phi, sin phi)`: `L_0` of the width-1
    net `W_1 = w_phi`, `W_2 = [1]`, `W_3 = [1]` (paper 003, Example 1). `phi` `[K]` -> `[K]`."""
    X, G = circle_inputs()
    w = torch.stack([torch.cos(phi), torch.sin(phi)], dim=-1).to(torch.float64)  # [K, 2]
    return (torch.relu(w @ X.T) * G[:, 0]).sum(-1)


def circle_width1_speed(phi: torch.Tensor) -> torch.Tensor:
    """The speed `|L_0|` of the width-1 net on the circle in closed form (paper 003, Eq. 6):
    `|cos(xi + pi/4) - cos xi + cos(xi - pi/4) - cos(xi - pi/2)|`, `xi = phi mod pi/4`;
    equals `|circle_width1_loss(phi)|`. `phi` `[K]` -> `[K]`."""
    xi = torch.remainder(phi.to(torch.float64), math.pi / 4)
    q = math.pi / 4
    return (torch.cos(xi + q) - torch.cos(xi) + torch.cos(xi - q) - torch.cos(xi - 2 * q)).abs()


def circle_width1_optimum(points: int = 100_001) -> tuple[float, float]:
    """Best width-1 speed `max_phi |circle_width1_loss(phi)|` on a uniform grid of
    `[0, 2 pi)` and its angle (paper 003, Example 1: `sqrt(2) - 1` at multiples of `pi/4`).

    The sign of `W_3 = [+-1]` makes `L_0 = -|.|`; the layers have unit norm, so this is the
    speed on the `||theta||^2 = 3` sphere. Returns `(s, phi)`.
    """
    phi = torch.linspace(0, 2 * math.pi, points, dtype=torch.float64)[:-1]
    v = circle_width1_loss(phi).abs()
    i = int(torch.argmax(v))
    return float(v[i]), float(phi[i])


def circle_rank2_weights(width: int = 4) -> list[torch.Tensor]:
    """The rank-2 construction (paper 003, Sec 4; spec decision `W_3 = [-1]`), speed 1/2.

    `W_1 = 1/2 [[1,0],[0,1],[-1,0],[0,-1]]`, `W_2 = 1/2 [1,-1,1,-1]`, `W_3 = [-1]`; extra
    hidden neurons (`width > 4`) are zero. Returns `[width, 2]`, `[1, width]`, `[1, 1]`.
    """
    if width < 4:
        raise ValueError(f"the rank-2 construction needs width >= 4, got {width}")
    W1 = torch.zeros(width, 2, dtype=torch.float64)
    W1[:4] = 0.5 * torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    W2 = torch.zeros(1, width, dtype=torch.float64)
    W2[0, :4] = 0.5 * torch.tensor([1.0, -1.0, 1.0, -1.0])
    W3 = torch.tensor([[-1.0]], dtype=torch.float64)
    return [W1, W2, W3]


def circle_speed(Ws: list[torch.Tensor]) -> float:
    """`-L_0` of unbatched circle weights."""
    X, G = circle_inputs()
    return float(-localized_loss(X, G, Ws))
