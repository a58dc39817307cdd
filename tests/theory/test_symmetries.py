"""The two symmetries of paper 000, §1.2, and the RK4 integrator."""

from __future__ import annotations

import math

import torch

from bottlenecklab.theory import (
    leaky_ode,
    output_scaled_path,
    rk4,
    stretch_range,
    weight_norm_integral,
)


def _weights(w: int, bias: bool = True):
    g = torch.Generator().manual_seed(0)
    Wa = torch.randn(w, w + 1, generator=g, dtype=torch.float64) / math.sqrt(w)
    Wb = torch.randn(w, w + 1, generator=g, dtype=torch.float64) / math.sqrt(w)
    if not bias:
        Wa[:, w], Wb[:, w] = 0.0, 0.0
    return lambda p: Wa + p * Wb


def _A0() -> torch.Tensor:
    return torch.randn(7, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def test_rk4_is_exact_order_four_on_exponential() -> None:
    errs = []
    for n in (10, 20):
        y = rk4(lambda p, s: (s[0],), (torch.ones(1, dtype=torch.float64),), 0.0, 1.0, n)
        errs.append(abs(float(y[-1][0]) - math.e))
    assert 14 < errs[0] / errs[1] < 17


def test_integration_range_symmetry() -> None:
    W, c, leak = _weights(4), 2.5, 3.0
    base = leaky_ode(_A0(), W, leak, steps=100)
    stretched = leaky_ode(_A0(), stretch_range(W, c), leak / c, p_end=c, steps=100)
    torch.testing.assert_close(stretched, base, rtol=1e-10, atol=1e-10)
    norm = weight_norm_integral(W)
    assert math.isclose(weight_norm_integral(stretch_range(W, c), p_end=c), norm / c, rel_tol=1e-12)


def test_output_scaling_symmetry() -> None:
    W, c, leak = _weights(4, bias=False), 1.5, 1.0
    plain = leaky_ode(_A0(), W, leak, steps=400)
    shifted = leaky_ode(_A0(), W, leak + c, steps=400)
    torch.testing.assert_close(shifted, output_scaled_path(plain, c), rtol=1e-7, atol=1e-9)
