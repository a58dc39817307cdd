"""The two symmetries of paper 000, §1.2, for the continuous leaky ResNet.

The forward ODE with weights `W_p` `[w, w+1]` is `dA/dp = -L~ A + sigma(A) W_p^T` (rows are
samples). *Integration range*: `W'_q = W_{q/c} / c` on `[0, c]` with leak `L~/c` gives
`A'_q = A_{q/c}` and `int_0^c ||W'||^2 = (1/c) int_0^1 ||W||^2`. *Output scaling*: for
bias-free weights, leak `L~ + c` gives `A'_p = exp(-c p) A_p`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from bottlenecklab.theory._features import sigma
from bottlenecklab.theory._rk4 import rk4

__all__ = [
    "Weights",
    "leaky_ode",
    "output_scaled_path",
    "stretch_range",
    "weight_norm_integral",
]

Weights = Callable[[float], torch.Tensor]


def leaky_ode(
    A0: torch.Tensor, W: Weights, leak: float, *, p_end: float = 1.0, steps: int = 200
) -> torch.Tensor:
    """Integrate `dA/dp = -L~ A + sigma(A) W(p)^T` on `[0, p_end]` with RK4 (paper 000, §1.1).

    Args:
        A0: `[N, w]`; W: `p -> [w, w+1]`; leak: `L~`; steps: RK4 steps.
    Returns:
        `[steps + 1, N, w]`, the path at `p_i = i p_end / steps`.
    """

    def f(p: float, y: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        return (-leak * y[0] + sigma(y[0]) @ W(p).T,)

    return torch.stack([s[0] for s in rk4(f, (A0,), 0.0, p_end, steps)])


def stretch_range(W: Weights, c: float) -> Weights:
    """Weights on `[0, c]` equivalent to `W` on `[0, 1]`: `W'_q = W_{q/c} / c` (§1.2)."""
    return lambda q: W(q / c) / c


def weight_norm_integral(W: Weights, *, p_end: float = 1.0, steps: int = 200) -> float:
    """`int_0^{p_end} ||W_p||_F^2 dp` by Simpson's rule on `steps` (even) intervals."""
    steps += steps % 2
    h = p_end / steps
    vals = [float(W(i * h).pow(2).sum()) for i in range(steps + 1)]
    odd, even = sum(vals[1:-1:2]), sum(vals[2:-1:2])
    return h / 3 * (vals[0] + vals[-1] + 4 * odd + 2 * even)


def output_scaled_path(path: torch.Tensor, c: float, *, p_end: float = 1.0) -> torch.Tensor:
    """The path predicted for leak `L~ + c` from the path `[n+1, N, w]` at leak `L~`:
    `exp(-c p) A_p` at `p_i = i p_end / n` (bias-free weights only, §1.2)."""
    n = path.shape[0] - 1
    scale = torch.tensor([math.exp(-c * i * p_end / n) for i in range(n + 1)], dtype=path.dtype)
    return scale[:, None, None] * path
