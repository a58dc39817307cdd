"""Cost of identity (paper 000, §1.4): Prop 1 as a property, Prop 2 from random starts."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab import measure
from bottlenecklab.theory import (
    cost_of_identity,
    minimize_cost_of_identity,
    relative_gamma,
    stable_rank,
)


@st.composite
def wide_matrices(draw) -> torch.Tensor:
    """`[N, w]` with `N <= w`, so that the bias-free COI is generically finite."""
    N = draw(st.integers(2, 8))
    w = draw(st.integers(N, 2 * N))
    seed = draw(st.integers(0, 2**31 - 1))
    sparsity = draw(st.sampled_from([0.0, 0.5]))
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(N, w, generator=g, dtype=torch.float64)
    return A * (torch.rand(N, w, generator=g, dtype=torch.float64) >= sparsity)


@settings(max_examples=60, deadline=None)
@given(wide_matrices())
def test_prop1_coi_bar_at_least_stable_rank(A: torch.Tensor) -> None:
    if measure.coi_residual(A, bias=False) > 1e-8 or A.abs().sum() == 0:
        return  # infinite COI: the bound holds trivially
    coi = float(cost_of_identity(A, bias=False))
    assert coi >= float(stable_rank(A)) - 1e-8


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_non_negative_coi_equals_rank(k: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    A = torch.rand(8, k, generator=g, dtype=torch.float64) @ torch.rand(
        k, 10, generator=g, dtype=torch.float64
    )
    rank = int(torch.linalg.matrix_rank(A))
    assert math.isclose(float(cost_of_identity(A, bias=False)), rank, abs_tol=1e-6)


@pytest.mark.parametrize("gamma", [0.0, 1e-2, 1.0])
@pytest.mark.parametrize("bias", [True, False])
def test_theory_and_measure_agree(gamma: float, bias: bool) -> None:
    A = torch.randn(6, 9, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    got = float(cost_of_identity(A, gamma=gamma, bias=bias))
    assert math.isclose(got, measure.cost_of_identity(A, gamma=gamma, bias=bias), rel_tol=1e-8)
    assert math.isclose(float(stable_rank(A)), measure.stable_rank(A), rel_tol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_prop2_minima_are_non_negative_with_coi_equal_rank(seed: int) -> None:
    A0 = torch.randn(8, 10, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    A, hist = minimize_cost_of_identity(A0, gamma0=1e-4, steps=2500, lr=0.02)
    assert hist[-1] < hist[0]
    assert measure.negative_mass(A) < 1e-4
    s = torch.linalg.svdvals(A)
    rank = int((s > 1e-2 * s[0]).sum())
    coi = float(cost_of_identity(A, gamma=relative_gamma(A, 1e-4)))
    coi_bar = float(cost_of_identity(A, gamma=relative_gamma(A, 1e-4, bias=False), bias=False))
    assert abs(coi - rank) < 0.05
    assert abs(coi_bar - rank) < 0.05
