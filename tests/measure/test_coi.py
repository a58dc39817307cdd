"""Cost of identity, its residual and the stable rank (paper 000, §1.4, Prop 1) against the
direct `N x N` formulas on small float64 matrices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.measure import (
    coi_residual,
    cost_of_identity,
    kernel_norm_sq,
    stable_rank,
)
from bottlenecklab.theory import features

# (N, w): tall (K rank-deficient, generic A outside range(S)), square-ish, wide (K invertible)
SHAPES = [(12, 3), (8, 7), (4, 6)]


def _S(A: np.ndarray, bias: bool) -> np.ndarray:
    R = np.maximum(A, 0.0)
    return np.hstack([R, np.ones((A.shape[0], 1))]) if bias else R


def _pinv_coi(A: np.ndarray, bias: bool) -> float:
    """`Tr[A^T K^+ A]`, `K = S S^T`, with a pseudo-inverse that drops the numerically zero
    eigenvalues of the rank-deficient `N x N` kernel."""
    S = _S(A, bias)
    K = S @ S.T
    return float(np.trace(A.T @ np.linalg.pinv(K, rcond=1e-10, hermitian=True) @ A))


def _ridge_norm(M: np.ndarray, S: np.ndarray, gamma: float) -> float:
    """`Tr[M^T (K + gamma I)^{-1} M]` by the direct `N x N` inverse."""
    K = S @ S.T
    return float(np.trace(M.T @ np.linalg.inv(K + gamma * np.eye(K.shape[0])) @ M))


def _generic(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("sign", ["generic", "nonnegative"])
def test_gamma_zero_equals_pseudo_inverse_formula(rng, shape, bias, sign):
    A = _generic(rng, shape)
    if sign == "nonnegative":
        A = np.abs(A)
    assert cost_of_identity(A, gamma=0.0, bias=bias) == pytest.approx(_pinv_coi(A, bias), rel=1e-8)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("gamma", [1e-3, 0.1, 10.0])
def test_woodbury_equals_direct_inverse(rng, shape, bias, gamma):
    A = _generic(rng, shape)
    expected = _ridge_norm(A, _S(A, bias), gamma)
    assert cost_of_identity(A, gamma=gamma, bias=bias) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("gamma", [0.0, 1e-2, 3.0])
def test_kernel_norm_of_another_matrix(rng, gamma):
    """`||M||^2_{K+gamma I}` with `M != A` (the velocity term of the kinetic energy)."""
    S = np.abs(rng.standard_normal((10, 4)))
    M = S @ rng.standard_normal((4, 3)) if gamma == 0 else rng.standard_normal((10, 3))
    if gamma == 0:
        K = S @ S.T
        expected = float(np.trace(M.T @ np.linalg.pinv(K, rcond=1e-10, hermitian=True) @ M))
    else:
        expected = _ridge_norm(M, S, gamma)
    assert kernel_norm_sq(M, S, gamma) == pytest.approx(expected, rel=1e-8)


def test_kernel_norm_rejects_negative_gamma(rng):
    with pytest.raises(ValueError, match="gamma"):
        kernel_norm_sq(rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), -1.0)


@pytest.mark.parametrize("gamma", [0.0, 0.5])
@pytest.mark.parametrize("bias", [True, False])
def test_numpy_and_torch_inputs_agree(rng, gamma, bias):
    A = _generic(rng, (9, 3))
    ref = cost_of_identity(A, gamma=gamma, bias=bias)
    for B in (
        torch.tensor(A),
        torch.tensor(A, dtype=torch.float32),
        torch.tensor(A, requires_grad=True),
    ):
        got = cost_of_identity(B, gamma=gamma, bias=bias)
        assert isinstance(got, float)
        assert got == pytest.approx(ref, rel=1e-5 if B.dtype == torch.float32 else 1e-12)
    assert cost_of_identity(A.tolist(), gamma=gamma, bias=bias) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("bias", [True, False])
def test_features(bias):
    A = torch.tensor([[-1.0, 2.0], [0.5, -3.0]], dtype=torch.float64)
    torch.testing.assert_close(features(A, bias), torch.tensor(_S(A.numpy(), bias)))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_residual_is_zero_for_nonnegative_representations(rng, shape, bias):
    A = np.abs(_generic(rng, shape))
    assert coi_residual(A, bias=bias) < 1e-12


@pytest.mark.parametrize("bias", [True, False])
def test_residual_is_positive_for_generic_representations(rng, bias):
    """`N > w + 1`: the negative parts of a Gaussian `A` are outside the range of `S`."""
    A = _generic(rng, (20, 3))
    S = _S(A, bias)
    expected = np.linalg.norm(A - S @ np.linalg.pinv(S) @ A) / np.linalg.norm(A)
    got = coi_residual(A, bias=bias)
    assert got > 0.1
    assert got == pytest.approx(expected, rel=1e-8)


def test_nonnegative_full_column_rank_coi_is_the_rank(rng):
    """`A >= 0` with `S = relu(A) = A` of full column rank: `||A^+ A||_F^2 = rank = w`."""
    A = np.abs(_generic(rng, (15, 4)))
    assert cost_of_identity(A, bias=False) == pytest.approx(4.0, rel=1e-10)


@pytest.mark.parametrize("shape", [(10, 4), (4, 10), (7, 7)])
def test_stable_rank_matches_numpy(rng, shape):
    A = _generic(rng, shape)
    s = np.linalg.svd(A, compute_uv=False)
    assert stable_rank(A) == pytest.approx(s.sum() ** 2 / (s**2).sum(), rel=1e-12)
    assert stable_rank(torch.tensor(A)) == pytest.approx(stable_rank(A), rel=1e-12)


@pytest.mark.parametrize("rank", [1, 2, 5])
@pytest.mark.parametrize("value", [0.1, 3.0])
def test_stable_rank_of_equal_singular_values_is_the_rank(rng, rank, value):
    U, _ = np.linalg.qr(rng.standard_normal((12, rank)))
    V, _ = np.linalg.qr(rng.standard_normal((6, rank)))
    A = value * U @ V.T
    assert stable_rank(A) == pytest.approx(rank, rel=1e-10)


def test_stable_rank_lower_bounds_the_bias_free_coi(rng):
    """Paper 000, Prop 1: `||A||_*^2 / ||A||_F^2 <= ||A||^2_{K-bar}` (finite when `A >= 0`)."""
    A = np.abs(_generic(rng, (15, 5))) @ np.abs(_generic(rng, (5, 5)))
    assert stable_rank(A) <= cost_of_identity(A, bias=False) + 1e-9


def test_stable_rank_of_zero_is_zero():
    assert stable_rank(np.zeros((3, 2))) == 0.0
