"""The cost of identity as a measure of dimension (paper 000, §1.4): Prop 1 on random
matrices (`coi_lower_bound_sweep`) and local minima reached from random starts (Prop 2,
`minimize_cost_of_identity`, `coi_minima`).

The COI function and the minimizer are parameters, so that tests can feed wrong ones
through an experiment and see its claims fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from bottlenecklab.theory._coi import cost_of_identity, relative_gamma, stable_rank
from bottlenecklab.theory._coi_range import coi_residual
from bottlenecklab.theory._nonnegativity import negative_mass
from bottlenecklab.theory._spectral import numerical_rank

__all__ = [
    "RANDOM_MATRIX_KINDS",
    "CoiFn",
    "coi_lower_bound_sweep",
    "coi_minima",
    "coi_minima_summary",
    "minimize_cost_of_identity",
    "random_matrix",
]

CoiFn = Callable[..., torch.Tensor]
"""`(A, *, gamma=0.0, bias=True) -> 0-d tensor`, like `cost_of_identity`."""

RANDOM_MATRIX_KINDS = ("gaussian", "sparse", "low_rank", "nonneg_low_rank")


def minimize_cost_of_identity(
    A0: torch.Tensor,
    *,
    gamma0: float = 1e-4,
    steps: int = 2000,
    lr: float = 0.02,
    bias: bool = True,
    coi: CoiFn = cost_of_identity,
) -> tuple[torch.Tensor, list[float]]:
    """Minimize the relaxed cost of identity `||A||^2_{K + gamma I}` from `A0` with Adam.

    `gamma = gamma0 ||K||_op` is held fixed within each step (no gradient through it). The
    Frobenius norm is held at `||A0||_F` (`A = r U / ||U||_F`): with the ridge, the relaxed
    COI would otherwise shrink every representation to zero, the trivial minimum, whereas
    Prop 2 concerns the scale-free structure (the sign pattern and the rank).

    Args:
        A0: start `[N, w]` (float64 recommended)
        gamma0: relative ridge; steps, lr: Adam.
        bias: minimize the COI with bias (`S = [relu(A), 1]`, Prop 2) or without.
        coi: the objective (`cost_of_identity`; tests pass wrong ones).
    Returns:
        The final `A` `[N, w]` (detached) and the COI after every step (`[steps]`).
    """
    r = A0.norm()
    U = A0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([U], lr=lr)
    history: list[float] = []
    for _ in range(steps):
        A = r * U / U.norm()
        gamma = relative_gamma(A.detach(), gamma0, bias=bias)
        value = coi(A, gamma=gamma, bias=bias)
        opt.zero_grad()
        value.backward()
        opt.step()
        history.append(float(value.detach()))
    return (r * U / U.norm()).detach(), history


def random_matrix(kind: str, gen: torch.Generator, max_n: int) -> torch.Tensor:
    """One random float64 `[N, w]` matrix, `2 <= N <= max_n`, `N <= w <= 2N` (so that the
    bias-free COI is generically finite).

    Kinds (`RANDOM_MATRIX_KINDS`): `gaussian`; `sparse` (Gaussian, 30 % of the entries
    kept); `low_rank` (`U V`, inner dimension `k` uniform in `1..N`); `nonneg_low_rank`
    (`|U| |V|`, non-negative, rank `k`).
    """
    if kind not in RANDOM_MATRIX_KINDS:
        raise ValueError(f"kind must be one of {RANDOM_MATRIX_KINDS}, got {kind!r}")
    N = int(torch.randint(2, max_n + 1, (1,), generator=gen))
    w = int(torch.randint(N, 2 * N + 1, (1,), generator=gen))
    g = torch.randn(N, w, generator=gen, dtype=torch.float64)
    if kind == "sparse":
        return g * (torch.rand(N, w, generator=gen, dtype=torch.float64) < 0.3)
    if kind in ("low_rank", "nonneg_low_rank"):
        k = int(torch.randint(1, N + 1, (1,), generator=gen))
        U = torch.randn(N, k, generator=gen, dtype=torch.float64)
        V = torch.randn(k, w, generator=gen, dtype=torch.float64)
        return U.abs() @ V.abs() if kind == "nonneg_low_rank" else U @ V
    return g


def coi_lower_bound_sweep(
    n_matrices: int,
    max_n: int,
    gen: torch.Generator,
    *,
    finite_tol: float = 1e-8,
    rank_rel: float = 1e-8,
    kinds: tuple[str, ...] = RANDOM_MATRIX_KINDS,
    coi: CoiFn = cost_of_identity,
) -> list[dict[str, Any]]:
    """The stable-rank lower bound of the bias-free cost of identity on random matrices
    (paper 000, §1.4, Prop 1): `||A||^2_{K-bar} >= ||A||_*^2 / ||A||_F^2`.

    The bias-free COI is evaluated only where it is finite (`coi_residual <= finite_tol`);
    elsewhere it is infinite and the bound trivial (`coi` is then `nan`).

    Args:
        n_matrices: matrices per kind
        max_n: largest `N` (see `random_matrix`).
        gen: seeded generator
        finite_tol: residual below which the COI counts as finite.
        rank_rel: relative cut-off of `numerical_rank`
        kinds: which `random_matrix` kinds.
        coi: the COI function (`cost_of_identity`; tests pass wrong ones).
    Returns:
        One row per matrix: `{"kind": str, "index": int, "n": int, "w": int,
        "finite": bool, "coi": float, "stable_rank": float, "rank": int}`.
    """
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        for i in range(n_matrices):
            A = random_matrix(kind, gen, max_n)
            finite = float(coi_residual(A, bias=False)) <= finite_tol
            rows.append(
                {
                    "kind": kind,
                    "index": i,
                    "n": int(A.shape[0]),
                    "w": int(A.shape[1]),
                    "finite": finite,
                    "coi": float(coi(A, bias=False)) if finite else math.nan,
                    "stable_rank": float(stable_rank(A)),
                    "rank": numerical_rank(A, rank_rel),
                }
            )
    return rows


def coi_minima(
    n_starts: int,
    n: int,
    w: int,
    gen: torch.Generator,
    *,
    gamma0: float,
    steps: int,
    lr: float,
    history_points: int = 100,
    rank_rel: float | None = None,
    minimize: Callable[..., tuple[torch.Tensor, list[float]]] = minimize_cost_of_identity,
    coi: CoiFn = cost_of_identity,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Prop 2 (paper 000, §1.4): minimize the relaxed COI with bias from Gaussian starts.

    At each end point `A` the rank is `numerical_rank(A, rank_rel)`, by default
    `rank_rel = sqrt(gamma0)` (the singular values the ridge `gamma = gamma0 ||K||_op`
    resolves), and both relaxed COIs are evaluated with their own `relative_gamma`.

    Args:
        n_starts: random starts `A0 ~ N(0, 1)` of shape `[n, w]`
        gen: seeded generator.
        gamma0: passed to `minimize_cost_of_identity`.
        steps: passed to `minimize_cost_of_identity`.
        lr: passed to `minimize_cost_of_identity`.
        history_points: about this many points of each COI history are kept.
        rank_rel: relative cut-off of the end points' `numerical_rank` (None: `sqrt(gamma0)`).
        minimize: the minimizer (tests pass wrong ones).
        coi: the COI function (tests pass wrong ones).
    Returns:
        `ends`: one row per start, `{"start": int, "rank": int, "coi": float,
        "coi_bar": float, "negative_mass": float}`;
        `history`: `{"start": int, "step": int, "coi": float}` rows (step from 1).
    """
    ends: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    every = max(1, steps // history_points)
    cut = math.sqrt(gamma0) if rank_rel is None else rank_rel
    for s in range(n_starts):
        A0 = torch.randn(n, w, generator=gen, dtype=torch.float64)
        A, hist = minimize(A0, gamma0=gamma0, steps=steps, lr=lr)
        g, g_bar = relative_gamma(A, gamma0), relative_gamma(A, gamma0, bias=False)
        ends.append(
            {
                "start": s,
                "rank": numerical_rank(A, cut),
                "coi": float(coi(A, gamma=g)),
                "coi_bar": float(coi(A, gamma=g_bar, bias=False)),
                "negative_mass": float(negative_mass(A)),
            }
        )
        history.extend(
            {"start": s, "step": t + 1, "coi": v}
            for t, v in enumerate(hist)
            if t % every == 0 or t == len(hist) - 1
        )
    return ends, history


def coi_minima_summary(prop1: list[dict[str, Any]], ends: list[dict[str, Any]]) -> dict[str, float]:
    """The numbers of paper 000's Props 1-2 from `coi_lower_bound_sweep`'s rows `prop1`
    and `coi_minima`'s end rows `ends`: how many matrices and how many with a finite COI,
    the smallest `COI - stable rank` among those (Prop 1: `>= 0`), and at the minima the
    largest negative mass, the largest `|COI - rank|` and the mean rank (Prop 2). `nan`
    where there are no rows."""
    finite = [r for r in prop1 if r["finite"]]
    return {
        "prop1_total": float(len(prop1)),
        "prop1_finite": float(len(finite)),
        "prop1_min_gap": min((r["coi"] - r["stable_rank"] for r in finite), default=math.nan),
        "prop2_max_negative_mass": max((r["negative_mass"] for r in ends), default=math.nan),
        "prop2_max_rank_error": max((abs(r["coi"] - r["rank"]) for r in ends), default=math.nan),
        "prop2_mean_rank": sum(r["rank"] for r in ends) / max(1, len(ends)),
    }
