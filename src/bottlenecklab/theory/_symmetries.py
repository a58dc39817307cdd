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

Weights = Callable[[float], torch.Tensor]


def leaky_ode(
    A0: torch.Tensor, W: Weights, leak: float, *, p_end: float = 1.0, steps: int = 200
) -> torch.Tensor:
    """Integrate `dA/dp = -L~ A + sigma(A) W(p)^T` on `[0, p_end]` with RK4 (paper 000, §1.1).

    Args:
        A0: `[N, w]`
        W: `p -> [w, w+1]`
        leak: `L~`
        steps: RK4 steps.
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


def linear_weights(Wa: torch.Tensor, Wb: torch.Tensor) -> Weights:
    """Smooth weights `W_p = Wa + p Wb` (`[w, w+1]` each)."""
    return lambda p: Wa + p * Wb


def random_linear_weights(
    w: int, gen: torch.Generator, dtype: torch.dtype = torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """`(Wa, Wb)`, `[w, w+1]` each, i.i.d. `N(0, 1/w)` entries (operator norm `O(1)`)."""
    Wa = torch.randn(w, w + 1, generator=gen, dtype=dtype) / math.sqrt(w)
    Wb = torch.randn(w, w + 1, generator=gen, dtype=dtype) / math.sqrt(w)
    return Wa, Wb


def linear_weight_norm(Wa: torch.Tensor, Wb: torch.Tensor) -> float:
    """Closed form `int_0^1 ||Wa + p Wb||_F^2 dp = ||Wa||^2 + <Wa, Wb> + ||Wb||^2 / 3`."""
    return float(Wa.pow(2).sum() + (Wa * Wb).sum() + Wb.pow(2).sum() / 3)


def bias_free(W: Weights) -> Weights:
    """`W` with its last (bias) column set to zero."""

    def W0(p: float) -> torch.Tensor:
        out = W(p).clone()
        out[..., -1] = 0.0
        return out

    return W0


def symmetry_errors(
    A0: torch.Tensor,
    Wa: torch.Tensor,
    Wb: torch.Tensor,
    leak: float,
    *,
    stretch: float,
    shift: float,
    steps: int,
    stretch_fn: Callable[[Weights, float], Weights] = stretch_range,
    scale_fn: Callable[[torch.Tensor, float], torch.Tensor] = output_scaled_path,
) -> dict[str, float]:
    """Relative errors of the two symmetries of §1.2 for `W_p = Wa + p Wb` (paper 000).

    - `range_path_error`: `max |A'_{q} - A_{q/c}| / max |A|`, the path of `stretch_fn(W, c)`
      on `[0, c]` with leak `L~/c` at `2 steps` RK4 steps (every other point) against the
      path of `W` on `[0, 1]` at `steps`: independent grids, so the error is RK4's, not 0.
    - `range_norm_error`: Simpson's rule for `int_0^c ||W'_q||^2 dq` on `[0, c]` against the
      closed form `(1/c) int_0^1 ||W_p||^2 dp` (`linear_weight_norm`); Simpson is exact on
      the quadratic integrand, so the error is round-off for the right stretch and `O(1)`
      for a wrong one.
    - `scaling_path_error`: bias-free weights at leak `L~ + shift` against `scale_fn` of the
      path at leak `L~`: `max |A' - exp(-c p) A| / max |A'|`.

    Args:
        A0: start `[N, w]`.
        Wa: `[w, w+1]`, the constant part of `W_p = Wa + p Wb`.
        Wb: `[w, w+1]`, the slope of `W_p`.
        leak: `L~`.
        stretch: `c > 0` of the range symmetry.
        shift: `c` of the output scaling.
        steps: RK4 steps on `[0, 1]`.
        stretch_fn: the range-symmetry map (tests pass wrong ones).
        scale_fn: the output-scaling map (tests pass wrong ones).
    """
    W = linear_weights(Wa, Wb)
    c = stretch
    base = leaky_ode(A0, W, leak, steps=steps)
    stretched = leaky_ode(A0, stretch_fn(W, c), leak / c, p_end=c, steps=2 * steps)[::2]
    range_err = float((stretched - base).abs().max() / base.abs().max())
    exact = linear_weight_norm(Wa, Wb) / c
    quad = weight_norm_integral(stretch_fn(W, c), p_end=c, steps=steps)
    W0 = bias_free(W)
    plain = leaky_ode(A0, W0, leak, steps=steps)
    shifted = leaky_ode(A0, W0, leak + shift, steps=steps)
    scale_err = float((shifted - scale_fn(plain, shift)).abs().max() / shifted.abs().max())
    return {
        "range_path_error": range_err,
        "range_norm_error": abs(quad - exact) / abs(exact),
        "scaling_path_error": scale_err,
    }
