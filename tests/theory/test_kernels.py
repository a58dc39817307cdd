"""Laplace kernel, GP draws and kernel ridge regression (paper 002, opening slides)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.theory import (
    gp_regression_error,
    gp_sample,
    kernel_ridge_regression,
    kernel_test_error,
    laplace_kernel,
)

EPS = torch.finfo(torch.float64).eps


@given(st.integers(1, 4), st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_laplace_kernel_is_a_symmetric_psd_exponential(d: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(12, d, generator=gen, dtype=torch.float64)
    K = laplace_kernel(X, X, 0.5)
    assert torch.allclose(K, K.T, atol=10 * EPS)
    assert torch.allclose(torch.diagonal(K), torch.ones(12, dtype=torch.float64))
    assert float(torch.linalg.eigvalsh(K).min()) > -1e3 * EPS
    r = torch.linalg.norm(X[0] - X[1])
    assert float(K[0, 1]) == pytest.approx(math.exp(-float(r) / 0.5), rel=1e3 * EPS)


def test_krr_interpolates_with_a_tiny_ridge():
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(30, 2, generator=gen, dtype=torch.float64)
    y = torch.randn(30, 1, generator=gen, dtype=torch.float64)
    pred = kernel_ridge_regression(X, y, X, ridge=1e-12)
    assert torch.allclose(pred, y, atol=1e-6)


def test_gp_sample_has_the_kernel_covariance():
    """Empirical covariance of 4000 draws at 3 points matches `k` to sampling error."""
    gen = torch.Generator().manual_seed(1)
    X = torch.tensor([[0.0], [0.2], [0.9]], dtype=torch.float64)
    draws = torch.stack([gp_sample(X, gen) for _ in range(4000)])  # [4000, 3]
    cov = draws.T @ draws / len(draws)
    assert torch.allclose(cov, laplace_kernel(X, X), atol=0.1)


def test_kernel_test_error_of_the_truth_is_zero_and_of_zero_is_the_power():
    gen = torch.Generator().manual_seed(2)
    X = torch.rand(40, 1, generator=gen, dtype=torch.float64)
    y = torch.sin(6 * X)
    assert kernel_test_error(X, y, X, y, ridge=1e-12) < 1e-10
    far = kernel_test_error(X, torch.zeros_like(y), X, y)
    assert far == pytest.approx(float(y.pow(2).mean()), rel=1e-12)


@pytest.mark.parametrize("d", [1, 2])
def test_gp_error_falls_with_n(d: int):
    small = [gp_regression_error(d, 32, 400, torch.Generator().manual_seed(s)) for s in range(3)]
    large = [gp_regression_error(d, 512, 400, torch.Generator().manual_seed(s)) for s in range(3)]
    assert sum(large) < sum(small) / 2
