"""Integrating the Hamiltonian system across ReLU kinks without losing order (paper 000, §1.5).

The field is smooth on each linear piece of `relu` (a fixed sign pattern of `A`) and `H` is
conserved by each piece's flow and continuous across the switching surfaces `A_ij = 0`.
`hamiltonian_flow_located` integrates one piece at a time with RK4: a step that would change
the sign pattern is cut at the first crossing (located on the cubic Hermite interpolant of
the step), the entry is set to 0 and its pattern bit flipped. The error is then RK4's on
smooth pieces, which shows that the first-order drift of the fixed-step `hamiltonian_flow`
on generic paths comes from the kinks alone (not from the field or round-off).
"""

from __future__ import annotations

import torch

from bottlenecklab.theory._hamiltonian_flow import Field, vector_field
from bottlenecklab.theory._rk4 import rk4_step

__all__ = ["hamiltonian_flow_located"]


def _hermite_root(
    a0: torch.Tensor, d0: torch.Tensor, a1: torch.Tensor, d1: torch.Tensor, h: float
) -> torch.Tensor:
    """Zero in `[0, 1]` of the cubic Hermite interpolant of each entry that changes sign over
    the step (values `a0, a1`, slopes `d0, d1`), as a fraction of the step `h`: Newton from
    the secant guess, clamped to `[0, 1]`. Shapes `[k]`."""
    c0, c1 = a0, h * d0
    c2 = 3 * (a1 - a0) - h * (2 * d0 + d1)
    c3 = 2 * (a0 - a1) + h * (d0 + d1)
    s = (a0 / (a0 - a1)).clamp(0.0, 1.0)
    for _ in range(8):
        value = ((c3 * s + c2) * s + c1) * s + c0
        slope = (3 * c3 * s + 2 * c2) * s + c1
        s = (s - value / slope).clamp(0.0, 1.0)
    return s


def hamiltonian_flow_located(
    A0: torch.Tensor,
    B0: torch.Tensor,
    leak: float,
    *,
    steps: int,
    p_end: float = 1.0,
    field: Field = vector_field,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Integrate the Hamiltonian system with RK4, stopping at every sign change of `A`.

    An entry that crosses zero twice inside one step is not seen (its sign is the same at
    both ends): the step must be fine enough to resolve each crossing.

    Args:
        A0: initial representation `[N, w]`.
        B0: initial momentum `[N, w]`.
        leak: `L~`.
        steps: grid steps on `[0, p_end]`.
        field: `(A, B, leak, mask) -> (dA, dB)` (`vector_field`; tests pass wrong ones).
    Returns:
        `A`, `B` at the grid points `p_i = i p_end / steps` (`[steps + 1, N, w]` each) and
        the number of crossings located.
    """
    h = p_end / steps
    A, B = A0.clone(), B0.clone()
    mask = (A > 0).to(A.dtype)

    def f(p: float, y: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        return field(y[0], y[1], leak, mask)

    As, Bs, events = [A], [B], 0
    for _ in range(steps):
        left = h
        while True:
            k1 = f(0.0, (A, B))
            A1, B1 = rk4_step(f, 0.0, (A, B), left, k1)
            flip = (A1 > 0).to(A.dtype) != mask
            if not bool(flip.any()):
                A, B = A1, B1
                break
            idx = flip.nonzero(as_tuple=True)
            d1 = f(0.0, (A1, B1))[0]
            s = _hermite_root(A[idx], k1[0][idx], A1[idx], d1[idx], left)
            j = int(s.argmin())
            frac = float(s[j])
            A, B = rk4_step(f, 0.0, (A, B), frac * left, k1)
            r, c = int(idx[0][j]), int(idx[1][j])
            A = A.clone()
            A[r, c] = 0.0
            mask = mask.clone()
            mask[r, c] = 1.0 - mask[r, c]
            events += 1
            left *= 1.0 - frac
        As.append(A)
        Bs.append(B)
    return torch.stack(As), torch.stack(Bs), events
