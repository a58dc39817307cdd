"""Deep linear representation cost: closed form vs its large-depth expansion, the optimal
factorization and the geodesic Grams (paper 001, §3; paper 002)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.theory import (
    factorization_errors,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_cost_remainders,
    linear_geodesic_grams,
    linear_representation_cost,
    optimal_linear_weights,
)


def _matrix(s: tuple[float, ...], shape=(5, 4), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((shape[0], shape[0])))
    V, _ = np.linalg.qr(rng.standard_normal((shape[1], shape[1])))
    S = np.zeros(shape)
    S[np.arange(len(s)), np.arange(len(s))] = s
    return U @ S @ V.T


A = _matrix((3.0, 1.5, 0.4, 0.0))  # sum (log s)^3 != 0


@pytest.mark.parametrize("depth", [1, 2, 3, 7, 50])
def test_closed_form_is_the_naive_sum(depth):
    s = np.array([3.0, 1.5, 0.4])
    assert linear_representation_cost(A, depth) == pytest.approx(
        depth * np.sum(s ** (2.0 / depth)), rel=1e-12
    )


def test_torch_input_matches_numpy():
    assert linear_representation_cost(torch.tensor(A), 8) == linear_representation_cost(A, 8)


def test_expansion_values():
    r0, r1, r2 = linear_cost_expansion(A)
    logs = np.log([3.0, 1.5, 0.4])
    assert r0 == 3
    assert r1 == pytest.approx(2 * logs.sum(), rel=1e-12)
    assert r2 == pytest.approx(2 * np.sum(logs**2), rel=1e-12)
    assert linear_cost_remainder_constant(A) == pytest.approx(4 / 3 * np.sum(logs**3), rel=1e-12)


@pytest.mark.parametrize("depth", [64, 128, 256, 512])
def test_remainder_is_the_constant_over_L_squared(depth):
    r0, r1, r2 = linear_cost_expansion(A)
    rem = linear_representation_cost(A, depth) - (depth * r0 + r1 + r2 / depth)
    const = linear_cost_remainder_constant(A)
    # next term (2/3) sum (log s)^4 / L^3: relative size ~ 1/L
    assert depth**2 * rem == pytest.approx(const, rel=4.0 / depth)


def test_remainder_slope_is_minus_two():
    depths = np.array([16, 32, 64, 128, 256])
    r0, r1, r2 = linear_cost_expansion(A)
    rem = [abs(linear_representation_cost(A, L) - (L * r0 + r1 + r2 / L)) for L in depths]
    slope = np.polyfit(np.log(depths), np.log(rem), 1)[0]
    assert -2.1 <= slope <= -1.9


@pytest.mark.parametrize("depth,width", [(2, None), (5, None), (6, 8)])
def test_optimal_factorization(depth, width):
    Ws = optimal_linear_weights(A, depth, width, seed=1)
    prod = Ws[0]
    for W in Ws[1:]:
        prod = W @ prod
    np.testing.assert_allclose(prod, A, atol=1e-12)
    norm = sum(np.sum(W**2) for W in Ws)
    assert norm == pytest.approx(linear_representation_cost(A, depth), rel=1e-12)


@pytest.mark.parametrize("depth", [3, 6])
def test_geodesic_grams_are_those_of_the_optimal_factorization(depth):
    X = np.random.default_rng(2).standard_normal((10, 4))
    Ws = optimal_linear_weights(A, depth, 7, seed=3)
    grams = linear_geodesic_grams(A, X, depth)
    a = X
    for W, G in zip(Ws[:-1], grams):
        a = a @ W.T
        np.testing.assert_allclose(a @ a.T, G, atol=1e-10)


def test_remainders_shrink_like_inverse_depth_squared():
    A = _matrix((3.0, 1.5, 0.4, 0.0))
    rows = linear_cost_remainders(A, [16, 64, 256])
    assert [r["depth"] for r in rows] == [16, 64, 256]
    assert rows[0]["cost"] == linear_representation_cost(A, 16)
    # L^2 remainder tends to the closed-form constant
    top = rows[-1]["depth"] ** 2 * rows[-1]["remainder"]
    assert top == pytest.approx(linear_cost_remainder_constant(A), rel=0.05)


def test_factorization_errors_are_round_off_and_see_a_wrong_matrix():
    A = _matrix((3.0, 1.5, 0.4, 0.0))
    X = np.random.default_rng(1).standard_normal((16, 4))
    err = factorization_errors(A, X, 6, 7)
    eps = np.finfo(np.float64).eps
    assert set(err) == {"A", "norm", "gram"} and max(err.values()) < 1e4 * eps
    # against a different matrix's factorization the product error is of order one
    Ws = optimal_linear_weights(A, 6, 7, seed=2)
    assert np.linalg.norm(np.linalg.multi_dot(Ws[::-1]) - 2 * A) / np.linalg.norm(2 * A) > 0.4
