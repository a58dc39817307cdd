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

import torch

from bottlenecklab.theory._features import sigma
from bottlenecklab.theory._rk4 import rk4

__all__ = ["geodesic_weights", "hamiltonian", "hamiltonian_flow", "shoot", "vector_field"]


def hamiltonian(A: torch.Tensor, B: torch.Tensor, leak: float) -> torch.Tensor:
    """`H = (L~/2) ||B^T sigma(A)||_F^2 - L~ <B, A>` (paper 000, §1.5), a 0-d tensor.

    Args:
        A: representation `[N, w]`; B: momentum `[N, w]`; leak: effective depth `L~`.
    """
    BS = B.transpose(-1, -2) @ sigma(A)  # [w, w+1]
    return 0.5 * leak * BS.pow(2).sum() - leak * (B * A).sum()


def vector_field(
    A: torch.Tensor, B: torch.Tensor, leak: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """`(dA/dp, dB/dp) = (dH/dB, -dH/dA)` (paper 000, §1.5), each `[N, w]`.

    `dA/dp = L~ (K B - A)` and `dB/dp = -L~ (relu'(A) * (B B^T relu(A)) - B)`, where
    `relu'(A)` is the 0/1 mask of `A > 0`.
    """
    S = sigma(A)  # [N, w+1]
    dA = leak * (S @ (S.T @ B) - A)  # K B - A, [N, w]
    R = torch.relu(A)
    mask = (A > 0).to(A.dtype)
    dB = -leak * (mask * (B @ (B.T @ R)) - B)  # [N, w]
    return dA, dB


def hamiltonian_flow(
    A0: torch.Tensor, B0: torch.Tensor, leak: float, *, steps: int, p_end: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integrate the Hamiltonian system from `(A0, B0)` over `[0, p_end]` with RK4.

    Args:
        A0, B0: initial state, `[N, w]` each; leak: `L~`; steps: RK4 steps.
    Returns:
        `A` and `B`, each `[steps + 1, N, w]`, at `p_i = i p_end / steps`.
    """
    states = rk4(lambda p, y: vector_field(y[0], y[1], leak), (A0, B0), 0.0, p_end, steps)
    return torch.stack([s[0] for s in states]), torch.stack([s[1] for s in states])


def shoot(
    X: torch.Tensor, pin: torch.Tensor, B0: torch.Tensor, leak: float, *, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """A geodesic from the lifted inputs `A_0 = X Pin^T` with initial momentum `B0`.

    Args:
        X: inputs `[N, d_in]`; pin: lift `[w, d_in]`; B0: `[N, w]`; leak: `L~`.
    Returns:
        `A`, `B` as in `hamiltonian_flow`, over `p in [0, 1]`.
    """
    return hamiltonian_flow(X @ pin.T, B0, leak, steps=steps)


def geodesic_weights(A: torch.Tensor, B: torch.Tensor, leak: float) -> torch.Tensor:
    """Weights of a geodesic, `W_p = L~ B_p^T sigma(A_p)` (paper 000, §1.5).

    Args:
        A, B: `[..., N, w]`. Returns `[..., w, w+1]`.
    """
    return leak * B.transpose(-1, -2) @ sigma(A)
