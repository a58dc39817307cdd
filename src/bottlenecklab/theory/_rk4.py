"""A classical fourth-order Runge-Kutta integrator for states that are tuples of tensors."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

__all__ = ["State", "grid", "rk4", "rk4_step"]

State = tuple[torch.Tensor, ...]


def _axpy(y: State, h: float, k: State) -> State:
    return tuple(a + h * b for a, b in zip(y, k))


def rk4_step(
    f: Callable[[float, State], State], p: float, y: State, h: float, k1: State | None = None
) -> State:
    """One classical RK4 step of length `h` from `(p, y)`; `k1 = f(p, y)` if already known."""
    k1 = f(p, y) if k1 is None else k1
    k2 = f(p + h / 2, _axpy(y, h / 2, k1))
    k3 = f(p + h / 2, _axpy(y, h / 2, k2))
    k4 = f(p + h, _axpy(y, h, k3))
    return tuple(
        a + (h / 6) * (b1 + 2 * b2 + 2 * b3 + b4) for a, b1, b2, b3, b4 in zip(y, k1, k2, k3, k4)
    )


def rk4(
    f: Callable[[float, State], State], y0: State, p0: float, p1: float, steps: int
) -> list[State]:
    """Integrate `dy/dp = f(p, y)` from `p0` to `p1` with `steps` equal RK4 steps.

    Global error `O(h^4)` for smooth `f`, `h = (p1 - p0) / steps`; a vector field with a
    kink (ReLU) drops to first order on the steps that cross it.

    Args:
        f: vector field, `(p, state) -> derivative` with the state's shapes.
        y0: initial state, a tuple of tensors.
        p0: start of the integration range.
        p1: end of the integration range.
        steps: number of steps (`>= 1`).
    Returns:
        The states at `p0 + i h`, `i = 0..steps` (`steps + 1` tuples).
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    h = (p1 - p0) / steps
    ys: list[State] = [tuple(y0)]
    y = tuple(y0)
    for i in range(steps):
        y = rk4_step(f, p0 + i * h, y, h)
        ys.append(y)
    return ys


def grid(p0: float, p1: float, steps: int) -> Sequence[float]:
    """The `steps + 1` points `p0 + i (p1 - p0) / steps` where `rk4` returns states."""
    return [p0 + i * (p1 - p0) / steps for i in range(steps + 1)]
