"""Cost of identity (paper 000, §1.4): Prop 1 as a property, Prop 2 from random starts, and
the formulas (`cost_of_identity`, `kernel_norm_sq`, `coi_residual`, `stable_rank`,
`negative_mass`) against the direct `N x N` ones on small float64 matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bottlenecklab import theory
from bottlenecklab.theory import (
    RANDOM_MATRIX_KINDS,
    coi_lower_bound_sweep,
    coi_minima,
    coi_minima_summary,
    cost_of_identity,
    minimize_cost_of_identity,
    numerical_rank,
    random_matrix,
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
    if float(theory.coi_residual(A, bias=False)) > 1e-8 or A.abs().sum() == 0:
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


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_prop2_minima_are_non_negative_with_coi_equal_rank(seed: int) -> None:
    A0 = torch.randn(8, 10, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    A, hist = minimize_cost_of_identity(A0, gamma0=1e-4, steps=2500, lr=0.02)
    assert hist[-1] < hist[0]
    assert float(theory.negative_mass(A)) < 1e-4
    rank = numerical_rank(A, 1e-2)
    coi = float(cost_of_identity(A, gamma=relative_gamma(A, 1e-4)))
    coi_bar = float(cost_of_identity(A, gamma=relative_gamma(A, 1e-4, bias=False), bias=False))
    assert abs(coi - rank) < 0.05
    assert abs(coi_bar - rank) < 0.05


def _half_coi(A, **kw):
    """A wrong COI: half the right one."""
    return 0.5 * cost_of_identity(A, **kw)


@pytest.mark.parametrize("kind", RANDOM_MATRIX_KINDS)
def test_random_matrix_kinds(kind: str) -> None:
    g = torch.Generator().manual_seed(0)
    for _ in range(10):
        A = random_matrix(kind, g, 8)
        N, w = A.shape
        assert 2 <= N <= 8 and N <= w <= 2 * N and A.dtype == torch.float64
        if kind == "nonneg_low_rank":
            assert bool((A >= 0).all())


def test_random_matrix_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="kind"):
        random_matrix("dense", torch.Generator(), 4)


def test_coi_residual_and_negative_mass_vanish_on_non_negative_matrices() -> None:
    A = torch.randn(6, 9, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    assert float(theory.negative_mass(A.abs())) == 0.0
    assert float(theory.coi_residual(A.abs(), bias=False)) < 1e-10


def test_prop1_sweep_rows_hold_the_bound_and_fail_with_a_wrong_coi() -> None:
    rows = coi_lower_bound_sweep(6, 6, torch.Generator().manual_seed(1))
    assert len(rows) == 6 * len(RANDOM_MATRIX_KINDS)
    assert set(rows[0]) == {"kind", "index", "n", "w", "finite", "coi", "stable_rank", "rank"}
    finite = [r for r in rows if r["finite"]]
    assert finite and all(r["coi"] >= r["stable_rank"] - 1e-8 for r in finite)
    assert all(math.isnan(r["coi"]) for r in rows if not r["finite"])
    for r in finite:
        if r["kind"] == "nonneg_low_rank":
            assert math.isclose(r["coi"], r["rank"], abs_tol=1e-6)
    wrong = coi_lower_bound_sweep(6, 6, torch.Generator().manual_seed(1), coi=_half_coi)
    assert any(r["coi"] < r["stable_rank"] - 1e-3 for r in wrong if r["finite"])


def test_coi_minima_rows_and_a_minimizer_that_does_not_move() -> None:
    ends, history = coi_minima(
        2, 5, 6, torch.Generator().manual_seed(0), gamma0=1e-4, steps=20, lr=0.02
    )
    assert [r["start"] for r in ends] == [0, 1]
    assert set(ends[0]) == {"start", "rank", "coi", "coi_bar", "negative_mass"}
    assert {r["step"] for r in history} >= {1, 20}

    def still(A0, **kw):
        return A0, [0.0]

    ends, _ = coi_minima(
        2, 5, 6, torch.Generator().manual_seed(0), gamma0=1e-4, steps=20, lr=0.02, minimize=still
    )
    assert all(r["negative_mass"] > 0.2 for r in ends)  # Gaussian starts: half negative


def test_kernel_norm_never_nan_on_singular_kernels() -> None:
    """A dead (all-zero) representation and a ridge below round-off: finite, non-negative
    relaxed values, and the condition number says how bad the kernel is."""
    from bottlenecklab.theory import kernel_condition, kernel_norm_sq, relative_gamma

    A = torch.zeros(10, 4, dtype=torch.float64)
    dead = cost_of_identity(A, gamma=relative_gamma(A, 1e-3, bias=False), bias=False)
    assert float(dead) == 0.0
    g = torch.Generator().manual_seed(0)
    S = torch.randn(10, 3, generator=g, dtype=torch.float64) @ torch.randn(
        3, 6, generator=g, dtype=torch.float64
    )  # rank 3 of 6 columns
    M = torch.randn(10, 5, generator=g, dtype=torch.float64)
    tiny = kernel_norm_sq(M, S, 1e-300)
    assert torch.isfinite(tiny) and float(tiny) >= 0
    assert float(kernel_condition(S, 1e-300)) > 1e10
    assert float(kernel_condition(S, 1.0)) < 1e3


@st.composite
def feature_matrices(draw) -> torch.Tensor:
    """`[N, m]` features with dead (zero) columns, repeated columns or `N < m`: the
    rank-deficient cases where the pseudo-inverse cut-off matters."""
    N = draw(st.integers(2, 30))
    m = draw(st.integers(2, 30))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    S = torch.relu(torch.randn(N, m, generator=g, dtype=torch.float64))
    S[:, : draw(st.integers(0, m // 2))] = 0.0  # dead neurons
    if draw(st.booleans()) and m >= 3:
        S[:, 1] = 2.0 * S[:, 2]  # two proportional neurons
    return torch.cat([S, torch.ones(N, 1, dtype=torch.float64)], dim=1)  # the bias column


def _pinv_values(M: torch.Tensor, S: torch.Tensor) -> tuple[float, float]:
    """`(||S^+ M||^2, ||M - S S^+ M|| / ||M||)` straight from `torch.linalg.pinv`."""
    P = torch.linalg.pinv(S) @ M
    return float(P.pow(2).sum()), float((M - S @ P).norm() / M.norm())


@settings(max_examples=80, deadline=None)
@given(feature_matrices(), st.integers(1, 12))
def test_kernel_svd_matches_the_pseudo_inverse(S: torch.Tensor, w: int) -> None:
    """The shared factorization gives the pseudo-inverse norm and range residual of `S`
    and of its leading columns (the bias-free features), to round-off of float64."""
    g = torch.Generator().manual_seed(w)
    M = torch.randn(S.shape[0], w, generator=g, dtype=torch.float64)
    svd = theory.KernelSVD.of(S)
    j = S.shape[1] - 1
    for F in (S, S[:, :j]):  # only well-separated cut-offs: a singular value near the
        # pseudo-inverse cut-off may fall on either side of it on another machine
        sv = torch.linalg.svdvals(F)
        cut = torch.finfo(sv.dtype).eps * max(F.shape) * sv[0]
        assume(bool(((sv >= 1e-6 * sv[0]) | (sv <= cut / 4)).all()))
    (norm, res), (norm_j, res_j) = svd.nested_norm_sq_and_residual(M, j)
    eps = torch.finfo(torch.float64).eps
    for (got_norm, got_res), F in (((norm, res), S), ((norm_j, res_j), S[:, :j])):
        want_norm, want_res = _pinv_values(M, F)
        # Backward-stable SVDs move each singular value by ~eps s_1 and the singular
        # vectors by ~eps s_1 / gap: the norm (a sum of 1 / s_i^2 terms) agrees to
        # ~eps kappa^2, the range residual to ~eps kappa, kappa over the kept values.
        sv = torch.linalg.svdvals(F)
        kept = sv[sv > torch.finfo(sv.dtype).eps * max(F.shape) * sv[0]]
        kappa = float(kept[0] / kept[-1]) if len(kept) else 1.0  # all columns dead: 0
        assert float(got_norm) == pytest.approx(want_norm, rel=100 * eps * kappa**2, abs=1e-12)
        assert float(got_res) == pytest.approx(want_res, abs=100 * eps * kappa)
    assert float(svd.norm_sq_and_residual(M)[0]) == pytest.approx(float(norm), rel=1e-12)
    assert float(svd.leading(j).norm_sq(M)) == pytest.approx(float(norm_j), rel=1e-12)
    s = torch.linalg.svdvals(S)
    assert float(svd.op_norm_sq()) == pytest.approx(float(s[0] ** 2), rel=1e-12)
    assert float(svd.condition(0.1)) == pytest.approx(
        float(theory.kernel_condition(S, 0.1)), rel=1e-10
    )


def test_kernel_norms_sq_equal_the_single_norms() -> None:
    """One factorization for several matrices gives each one's own relaxed norm, and a
    wrong pairing (the sum, or swapped matrices) does not."""
    g = torch.Generator().manual_seed(3)
    S = torch.randn(40, 7, generator=g, dtype=torch.float64)
    M1 = torch.randn(40, 5, generator=g, dtype=torch.float64)
    M2 = 10.0 * torch.randn(40, 2, generator=g, dtype=torch.float64)
    for gamma in (0.0, 0.3):
        both = theory.kernel_norms_sq((M1, M2), S, gamma)
        one = [float(theory.kernel_norm_sq(M, S, gamma)) for M in (M1, M2)]
        assert both.tolist() == pytest.approx(one, rel=1e-12)
        assert float(both[0]) != pytest.approx(one[1], rel=1e-3)


def test_hamiltonian_and_residual_take_the_product_they_would_compute() -> None:
    """Passing `B^T sigma(A)` gives the same values; a wrong product changes them."""
    g = torch.Generator().manual_seed(4)
    A = torch.randn(30, 6, generator=g, dtype=torch.float64)
    B = torch.randn(30, 6, generator=g, dtype=torch.float64)
    W = torch.randn(6, 7, generator=g, dtype=torch.float64)
    BS = B.T @ theory.sigma(A)
    # the same product computed twice: equal to round-off (BLAS may block it differently)
    H = float(theory.hamiltonian(A, B, 3.0))
    assert float(theory.hamiltonian(A, B, 3.0, BS=BS)) == pytest.approx(H, rel=1e-12)
    cp = float(theory.critical_point_residual(W, A, B, 3.0))
    assert float(theory.critical_point_residual(W, A, B, 3.0, BS=BS)) == pytest.approx(
        cp, rel=1e-12
    )
    assert float(theory.critical_point_residual(W, A, B, 3.0, BS=2 * BS)) != pytest.approx(cp)


def test_coi_minima_summary_reads_both_propositions() -> None:
    prop1 = [
        {"finite": True, "coi": 2.5, "stable_rank": 2.0},
        {"finite": True, "coi": 1.0, "stable_rank": 1.2},
        {"finite": False, "coi": math.inf, "stable_rank": 3.0},
    ]
    ends = [
        {"negative_mass": 1e-7, "coi": 2.02, "rank": 2},
        {"negative_mass": 3e-7, "coi": 2.9, "rank": 3},
    ]
    s = coi_minima_summary(prop1, ends)
    assert s["prop1_total"] == 3 and s["prop1_finite"] == 2
    assert s["prop1_min_gap"] == pytest.approx(-0.2)  # a violation of Prop 1 shows
    assert s["prop2_max_negative_mass"] == 3e-7
    assert s["prop2_max_rank_error"] == pytest.approx(0.1)
    assert s["prop2_mean_rank"] == 2.5
    empty = coi_minima_summary([], [])
    assert math.isnan(empty["prop1_min_gap"]) and math.isnan(empty["prop2_max_rank_error"])


# ------------------------------------------- against the direct N x N formulas (float64)
# The formulas on small float64 matrices, `numpy` references; `_f(A)` is the float64 tensor.


def _f(A) -> torch.Tensor:
    return torch.as_tensor(np.asarray(A, dtype=np.float64))


def _cost_of_identity(A, **kw) -> float:
    return float(cost_of_identity(_f(A), **kw))


def _coi_residual(A, **kw) -> float:
    return float(theory.coi_residual(_f(A), **kw))


def _kernel_norm_sq(M, S, gamma) -> float:
    return float(theory.kernel_norm_sq(_f(M), _f(S), gamma))


def _stable_rank(A) -> float:
    return float(stable_rank(_f(A)))


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
    assert _cost_of_identity(A, gamma=0.0, bias=bias) == pytest.approx(_pinv_coi(A, bias), rel=1e-8)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("gamma", [1e-3, 0.1, 10.0])
def test_woodbury_equals_direct_inverse(rng, shape, bias, gamma):
    A = _generic(rng, shape)
    expected = _ridge_norm(A, _S(A, bias), gamma)
    assert _cost_of_identity(A, gamma=gamma, bias=bias) == pytest.approx(expected, rel=1e-8)


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
    assert _kernel_norm_sq(M, S, gamma) == pytest.approx(expected, rel=1e-8)


def test_kernel_norm_rejects_negative_gamma(rng):
    with pytest.raises(ValueError, match="gamma"):
        _kernel_norm_sq(rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), -1.0)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_residual_is_zero_for_nonnegative_representations(rng, shape, bias):
    A = np.abs(_generic(rng, shape))
    assert _coi_residual(A, bias=bias) < 1e-12


@pytest.mark.parametrize("bias", [True, False])
def test_residual_is_positive_for_generic_representations(rng, bias):
    """`N > w + 1`: the negative parts of a Gaussian `A` are outside the range of `S`."""
    A = _generic(rng, (20, 3))
    S = _S(A, bias)
    expected = np.linalg.norm(A - S @ np.linalg.pinv(S) @ A) / np.linalg.norm(A)
    got = _coi_residual(A, bias=bias)
    assert got > 0.1
    assert got == pytest.approx(expected, rel=1e-8)


def test_nonnegative_full_column_rank_coi_is_the_rank(rng):
    """`A >= 0` with `S = relu(A) = A` of full column rank: `||A^+ A||_F^2 = rank = w`."""
    A = np.abs(_generic(rng, (15, 4)))
    assert _cost_of_identity(A, bias=False) == pytest.approx(4.0, rel=1e-10)


@pytest.mark.parametrize("shape", [(10, 4), (4, 10), (7, 7)])
def test_stable_rank_matches_numpy(rng, shape):
    A = _generic(rng, shape)
    s = np.linalg.svd(A, compute_uv=False)
    assert _stable_rank(A) == pytest.approx(s.sum() ** 2 / (s**2).sum(), rel=1e-12)
    assert _stable_rank(torch.tensor(A)) == pytest.approx(_stable_rank(A), rel=1e-12)


@pytest.mark.parametrize("rank", [1, 2, 5])
@pytest.mark.parametrize("value", [0.1, 3.0])
def test_stable_rank_of_equal_singular_values_is_the_rank(rng, rank, value):
    U, _ = np.linalg.qr(rng.standard_normal((12, rank)))
    V, _ = np.linalg.qr(rng.standard_normal((6, rank)))
    A = value * U @ V.T
    assert _stable_rank(A) == pytest.approx(rank, rel=1e-10)


def test_stable_rank_lower_bounds_the_bias_free_coi(rng):
    """Paper 000, Prop 1: `||A||_*^2 / ||A||_F^2 <= ||A||^2_{K-bar}` (finite when `A >= 0`)."""
    A = np.abs(_generic(rng, (15, 5))) @ np.abs(_generic(rng, (5, 5)))
    assert _stable_rank(A) <= _cost_of_identity(A, bias=False) + 1e-9


def test_stable_rank_of_zero_is_zero():
    assert _stable_rank(np.zeros((3, 2))) == 0.0


@pytest.mark.parametrize("bias", [True, False])
def test_features(bias):
    A = torch.tensor([[-1.0, 2.0], [0.5, -3.0]], dtype=torch.float64)
    torch.testing.assert_close(theory.features(A, bias), torch.tensor(_S(A.numpy(), bias)))


def test_negative_mass() -> None:
    """Prop 5's measure of the negative part: 0 on `A >= 0`, 1/2 on `[1, -1]`."""
    assert float(theory.negative_mass(torch.ones(3, 2, dtype=torch.float64))) == 0.0
    A = torch.tensor([[1.0, -1.0]], dtype=torch.float64)
    assert math.isclose(float(theory.negative_mass(A)), 0.5)
