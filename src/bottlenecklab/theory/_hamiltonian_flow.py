"""The Hamiltonian system of representation geodesics, in code orientation (paper 000, §1.5).

Rows are samples: `A`, `B` are `[N, w]`, `S = sigma(A) = [relu(A), 1]` is `[N, w+1]` and
`K = S S^T` is `[N, N]` (never formed: `K B = S (S^T B)`). With the effective depth `L~`:

    H(A, B)  = (L~/2) ||B^T S||_F^2 - L~ <B, A>
    dA/dp    =  dH/dB = L~ (K B - A)
    -dB/dp   =  dH/dA = L~ (relu'(A) * (B B^T relu(A)) - B)

`H` is conserved along the flow. At a critical point of the regularized loss
`W_p = L~ B_p^T S_p` (spec `leaky-resnets.md`), so a shot path comes with its weights.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from bottlenecklab.theory._features import sigma
from bottlenecklab.theory._rk4 import rk4

__all__ = [
    "Field",
    "critical_point_residual",
    "geodesic_weights",
    "hamiltonian",
    "hamiltonian_flow",
    "lifted_inputs",
    "shoot",
    "vector_field",
]

Field = Callable[..., tuple[torch.Tensor, torch.Tensor]]
"""A vector field `(A, B, L~, mask=None) -> (dA/dp, dB/dp)` like `vector_field` (or a
deliberately wrong one in tests: the experiments take it as a parameter so that their
claims can be shown to fail)."""


def hamiltonian(
    A: torch.Tensor, B: torch.Tensor, leak: float, *, BS: torch.Tensor | None = None
) -> torch.Tensor:
    """`H = (L~/2) ||B^T sigma(A)||_F^2 - L~ <B, A>` (paper 000, §1.5).

    Args:
        A: representation `[..., N, w]`
        B: momentum `[..., N, w]`
        leak: effective depth `L~`.
        BS: `B^T sigma(A)` `[..., w, w+1]` when the caller has it (saves the product).
    Returns:
        `[...]`: a 0-d tensor for one state, one value per state for a path `[n, N, w]`.
    """
    if BS is None:
        BS = B.transpose(-1, -2) @ sigma(A)  # [..., w, w+1]
    return 0.5 * leak * BS.pow(2).sum((-2, -1)) - leak * (B * A).sum((-2, -1))


def critical_point_residual(
    W: torch.Tensor,
    A_prev: torch.Tensor,
    B: torch.Tensor,
    leak: float,
    *,
    BS: torch.Tensor | None = None,
) -> torch.Tensor:
    """`||W_l - L~ B_l^T sigma(A_{l-1})||_F / ||W_l||_F`: 0 at a critical point of the
    regularized loss, where `W_l = L~ B_l^T S_{l-1}` (paper 000, §1.1; spec "Momenta").

    Args:
        W: layer weights `[..., w, w+1]` (bias last)
        A_prev: its input `[..., N, w]`
        B: the momentum `B_l` `[..., N, w]`
        leak: `L~`.
        BS: `B_l^T sigma(A_{l-1})` `[..., w, w+1]` when the caller has it.
    Returns:
        `[...]` (one value per layer for stacked layers).
    """
    if BS is None:
        BS = B.transpose(-1, -2) @ sigma(A_prev)  # [..., w, w+1]
    return (W - leak * BS).norm(dim=(-2, -1)) / W.norm(dim=(-2, -1)).clamp_min(1e-300)


def vector_field(
    A: torch.Tensor, B: torch.Tensor, leak: float, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """`(dA/dp, dB/dp) = (dH/dB, -dH/dA)` (paper 000, §1.5), each `[N, w]`.

    `dA/dp = L~ (K B - A)` and `dB/dp = -L~ (relu'(A) * (B B^T relu(A)) - B)`, where
    `relu'(A)` is the 0/1 mask of `A > 0`.

    Args:
        A: representation `[N, w]`.
        B: momentum `[N, w]`.
        leak: `L~`.
        mask: a frozen ReLU pattern `[N, w]` (0/1): `relu(A)` is then `mask * A` and
            `relu'(A)` is `mask`, the smooth field of one linear piece (used by
            `hamiltonian_flow_located`); `None` uses the pattern of `A`.
    """
    if mask is None:
        S = sigma(A)  # [N, w+1]
        R, mask = S[..., :-1], (A > 0).to(A.dtype)
    else:  # the linear piece of sigma on the pattern `mask`: [mask * A, 1]
        R = mask * A
        S = torch.cat([R, torch.ones_like(A[..., :1])], dim=-1)
    dA = leak * (S @ (S.transpose(-1, -2) @ B) - A)  # K B - A, [N, w]
    dB = -leak * (mask * (B @ (B.transpose(-1, -2) @ R)) - B)  # [N, w]
    return dA, dB


def hamiltonian_flow(
    A0: torch.Tensor,
    B0: torch.Tensor,
    leak: float,
    *,
    steps: int,
    p_end: float = 1.0,
    field: Field = vector_field,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integrate the Hamiltonian system from `(A0, B0)` over `[0, p_end]` with RK4.

    Fixed steps: fourth order while no entry of `A` changes sign; a step that crosses a
    ReLU kink (the `dB/dp` field jumps there) is first order (see `hamiltonian_drift`).

    Args:
        A0: initial representation `[N, w]`.
        B0: initial momentum `[N, w]`.
        leak: `L~`.
        steps: RK4 steps.
        field: the vector field (`vector_field`; tests pass wrong ones).
    Returns:
        `A` and `B`, each `[steps + 1, N, w]`, at `p_i = i p_end / steps`.
    """
    states = rk4(lambda p, y: field(y[0], y[1], leak), (A0, B0), 0.0, p_end, steps)
    return torch.stack([s[0] for s in states]), torch.stack([s[1] for s in states])


def lifted_inputs(X: torch.Tensor, pin: torch.Tensor) -> torch.Tensor:
    """The input representation of a leaky ResNet, `A_0 = X Pin^T` (spec `leaky-resnets.md`).

    Args:
        X: inputs `[N, d_in]`
        pin: lift `[w, d_in]` (e.g. a `LeakyResNet`'s `pin`).
    Returns:
        `[N, w]`, in the dtype of `pin`.
    """
    return torch.as_tensor(X, dtype=pin.dtype, device=pin.device) @ pin.transpose(-1, -2)


def shoot(
    X: torch.Tensor, pin: torch.Tensor, B0: torch.Tensor, leak: float, *, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """A geodesic from the lifted inputs `A_0 = X Pin^T` with initial momentum `B0`.

    Args:
        X: inputs `[N, d_in]`
        pin: lift `[w, d_in]`
        B0: `[N, w]`
        leak: `L~`.
    Returns:
        `A`, `B` as in `hamiltonian_flow`, over `p in [0, 1]`.
    """
    return hamiltonian_flow(lifted_inputs(X, pin), B0, leak, steps=steps)


def geodesic_weights(A: torch.Tensor, B: torch.Tensor, leak: float) -> torch.Tensor:
    """Weights of a geodesic, `W_p = L~ B_p^T sigma(A_p)` (paper 000, §1.5).

    Args:
        A: representations `[..., N, w]`.
        B: momenta `[..., N, w]`.
        leak: `L~`.

    Returns:
        `[..., w, w+1]`.
    """
    return leak * B.transpose(-1, -2) @ sigma(A)
