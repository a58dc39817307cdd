"""Feasible directions of a hidden representation (paper 004, Prop 1, §3.1; spec Decision
"the forces balance on feasible directions"): the constraints, the reaction's
orthogonality at any weights, and planted forces that do and do not balance on `T_l`."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab import theory
from bottlenecklab.measure._forces import _layer_grads
from bottlenecklab.measure._reformulation import fcnn_layers
from bottlenecklab.models import FCNNConfig

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _layer(l: int, N: int = 12, width: int = 8, seed: int = 0):
    """Bases, `sigma'`, `W^_{l+1}`, gradients of hidden layer `l` of a random ReLU net with
    `N > width + 1` (rank-deficient `Zs`: the constraints bite)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, 5, generator=g, dtype=F64)
    Y = torch.randn(N, 3, generator=g, dtype=F64)
    net = FCNNConfig(depth=3, width=width).build(5, 3, seed=seed + 1, dtype=F64)
    with torch.no_grad():
        Zs, Z, W = fcnn_layers(net, X)
    grads = _layer_grads(net, Z, W, Y, "mse")
    ds = (Z[l - 1] > 0).to(F64)
    U_prev = theory.column_basis(Zs[l - 1], theory.ridge_eps(Zs[l - 1] @ Zs[l - 1].T))
    U = theory.column_basis(Zs[l], theory.ridge_eps(Zs[l] @ Zs[l].T))
    W_next = W[l][:, : Z[l - 1].shape[1]]
    return U_prev, U, ds, W_next, grads[l - 1], grads[l], Z[l - 1]


@pytest.mark.parametrize("l", [1, 2])
def test_feasible_directions_satisfy_the_constraints(l):
    U_prev, U, ds, W_next, *_, Z = _layer(l)
    V = theory.feasible_directions(U_prev, U, ds, W_next)
    assert 0 < V.shape[1] < V.shape[0]
    r = torch.randn(Z.shape, generator=torch.Generator().manual_seed(2), dtype=F64)
    d = theory.project_feasible(r, U_prev, V)
    tol = 1e3 * EPS * float(d.norm())
    assert float((d - U_prev @ (U_prev.T @ d)).norm()) <= tol
    out = (d * ds) @ W_next.T
    assert float((out - U @ (U.T @ out)).norm()) <= tol * float(W_next.norm())
    # a projector: idempotent
    assert torch.allclose(theory.project_feasible(d, U_prev, V), d, atol=tol)


@pytest.mark.parametrize("l", [1, 2])
@pytest.mark.parametrize("seed", [0, 1])
def test_reaction_is_orthogonal_to_the_feasible_directions(l, seed):
    """`N_l` is orthogonal to `T_l` at any weights (the spec measured 3e-15)."""
    U_prev, U, ds, W_next, g, g_next, _ = _layer(l, seed=seed)
    V = theory.feasible_directions(U_prev, U, ds, W_next)
    N = theory.constraint_reaction(g, g_next, W_next, ds, U_prev, U)
    assert float(N.norm()) > 0
    assert float(theory.project_feasible(N, U_prev, V).norm()) <= 1e3 * EPS * float(N.norm())


def _cos(a, b):
    return float((a * b).sum() / (a.norm() * b.norm()))


@pytest.mark.parametrize("l", [1, 2])
def test_planted_forces_balance_only_when_the_imbalance_is_infeasible(l):
    """`R = -A + N` with `N` orthogonal to `T` balances on `T` (cosine -1) though not in
    full; `R = -A + t` with `t` in `T` does not (the claim's bound -0.95 fails)."""
    U_prev, U, ds, W_next, g, g_next, Z = _layer(l)
    V = theory.feasible_directions(U_prev, U, ds, W_next)
    A = torch.randn(Z.shape, generator=torch.Generator().manual_seed(3), dtype=F64)
    N = theory.constraint_reaction(g, g_next, W_next, ds, U_prev, U)
    N = 3 * float(A.norm()) * N / N.norm()
    PA = theory.project_feasible(A, U_prev, V)
    balanced = theory.project_feasible(-A + N, U_prev, V)
    assert _cos(PA, balanced) == pytest.approx(-1.0, abs=1e-10)
    assert _cos(A, -A + N) > -0.95  # unprojected: no balance
    r = torch.randn(Z.shape, generator=torch.Generator().manual_seed(4), dtype=F64)
    t = theory.project_feasible(r, U_prev, V)
    t = 2 * float(PA.norm()) * t / t.norm()
    assert _cos(PA, theory.project_feasible(-A + t, U_prev, V)) > -0.95


def test_column_basis_cuts_at_c_eps():
    U0, _ = torch.linalg.qr(
        torch.randn(6, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    )
    Zs = U0 @ torch.diag(torch.tensor([1.0, 1e-2, 1e-4], dtype=F64))  # s^2 = 1, 1e-4, 1e-8
    assert theory.column_basis(Zs, eps=2e-5, c=3.0).shape == (6, 2)  # 1e-4 > 6e-5
    assert theory.column_basis(Zs, eps=2e-5, c=10.0).shape == (6, 1)  # 1e-4 < 2e-4
    assert theory.column_basis(Zs, eps=1e-9, c=3.0).shape == (6, 3)
