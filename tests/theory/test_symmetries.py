"""The two symmetries of paper 000, §1.2, and the RK4 integrator."""

from __future__ import annotations

import math

import torch

from bottlenecklab.theory import (
    bias_free,
    leaky_ode,
    linear_weight_norm,
    linear_weights,
    output_scaled_path,
    random_linear_weights,
    rk4,
    stretch_range,
    symmetry_errors,
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


def _errors(**kw) -> dict[str, float]:
    g = torch.Generator().manual_seed(5)
    Wa, Wb = random_linear_weights(4, g)
    return symmetry_errors(_A0(), Wa, Wb, 2.0, stretch=3.0, shift=1.5, steps=100, **kw)


def test_linear_weight_norm_is_the_integral() -> None:
    Wa, Wb = random_linear_weights(5, torch.Generator().manual_seed(3))
    exact = linear_weight_norm(Wa, Wb)
    assert math.isclose(weight_norm_integral(linear_weights(Wa, Wb), steps=2), exact, rel_tol=1e-12)
    # A midpoint sum on a fine grid: an independent quadrature, error O(h^2).
    W = linear_weights(Wa, Wb)
    mid = sum(float(W((i + 0.5) / 1000).pow(2).sum()) for i in range(1000)) / 1000
    assert math.isclose(mid, exact, rel_tol=1e-5)


def test_bias_free_zeroes_the_last_column_only() -> None:
    Wa, Wb = random_linear_weights(3, torch.Generator().manual_seed(3))
    W0 = bias_free(linear_weights(Wa, Wb))(0.5)
    assert bool((W0[:, -1] == 0).all())
    torch.testing.assert_close(W0[:, :-1], (Wa + 0.5 * Wb)[:, :-1])


def test_symmetry_errors_are_small_for_the_paper_maps() -> None:
    err = _errors()
    assert err["range_path_error"] < 1e-6
    assert err["range_norm_error"] < 1e-12
    assert err["scaling_path_error"] < 1e-6


def test_a_wrong_stretch_breaks_the_range_symmetry() -> None:
    # W'_q = W_{q/c} without the 1/c: the path and the norm both change.
    err = _errors(stretch_fn=lambda W, c: lambda q: W(q / c))
    assert err["range_path_error"] > 1e-2
    assert err["range_norm_error"] > 1.0


def test_a_wrong_leak_shift_breaks_the_output_scaling() -> None:
    err = _errors(scale_fn=lambda path, c: output_scaled_path(path, 0.9 * c))
    assert err["scaling_path_error"] > 1e-2
