"""Cost of identity (paper 000, §1.4): Prop 1 as a property, Prop 2 from random starts."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bottlenecklab import measure, theory
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


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_prop2_minima_are_non_negative_with_coi_equal_rank(seed: int) -> None:
    A0 = torch.randn(8, 10, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    A, hist = minimize_cost_of_identity(A0, gamma0=1e-4, steps=2500, lr=0.02)
    assert hist[-1] < hist[0]
    assert measure.negative_mass(A) < 1e-4
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


def test_theory_coi_residual_and_negative_mass_match_measure() -> None:
    A = torch.randn(6, 9, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for bias in (True, False):
        got = float(theory.coi_residual(A, bias=bias))
        assert math.isclose(got, measure.coi_residual(A, bias=bias), rel_tol=1e-10, abs_tol=1e-14)
    assert math.isclose(float(theory.negative_mass(A)), measure.negative_mass(A), rel_tol=1e-12)
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
