"""Local minima of the cost of identity reached from random starts (paper 000, §1.4, Prop 2)."""

from __future__ import annotations

import torch

from bottlenecklab.theory._coi import cost_of_identity, relative_gamma

__all__ = ["minimize_cost_of_identity"]


def minimize_cost_of_identity(
    A0: torch.Tensor,
    *,
    gamma0: float = 1e-4,
    steps: int = 2000,
    lr: float = 0.02,
    bias: bool = True,
) -> tuple[torch.Tensor, list[float]]:
    """Minimize the relaxed cost of identity `||A||^2_{K + gamma I}` from `A0` with Adam.

    `gamma = gamma0 ||K||_op` is held fixed within each step (no gradient through it). The
    Frobenius norm is held at `||A0||_F` (`A = r U / ||U||_F`): with the ridge, the relaxed
    COI would otherwise shrink every representation to zero, the trivial minimum, whereas
    Prop 2 concerns the scale-free structure (the sign pattern and the rank).

    Args:
        A0: start `[N, w]` (float64 recommended); gamma0: relative ridge; steps, lr: Adam.
        bias: minimize the COI with bias (`S = [relu(A), 1]`, Prop 2) or without.
    Returns:
        The final `A` `[N, w]` (detached) and the COI after every step (`[steps]`).
    """
    r = A0.norm()
    U = A0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([U], lr=lr)
    history: list[float] = []
    for _ in range(steps):
        A = r * U / U.norm()
        gamma = relative_gamma(A.detach(), gamma0, bias=bias)
        coi = cost_of_identity(A, gamma=gamma, bias=bias)
        opt.zero_grad()
        coi.backward()
        opt.step()
        history.append(float(coi.detach()))
    return (r * U / U.norm()).detach(), history
