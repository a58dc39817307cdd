"""Closed forms of paper 004's sparsity section: B_N's spectrum and R = N^2, Remark 23's
width-N fit, Prop 19's two values and the +eps descent path, Prop 15's pruning rule."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab import theory

F64 = torch.float64


@pytest.mark.parametrize("N", [4, 8, 12])
def test_bipartite_spectrum_and_cost(N):
    B = theory.bipartite_target(N)
    mu = torch.linalg.eigvalsh(B)
    expect = torch.tensor(sorted([0.0] + [N / 2] * (N - 2) + [float(N)]), dtype=F64)
    assert torch.allclose(mu, expect, atol=1e-12 * N)
    E = torch.zeros(N * N // 4, N, dtype=F64)  # incidence matrix of K_{N/2,N/2}
    for k, (i, j) in enumerate((i, j) for i in range(N // 2) for j in range(N // 2, N)):
        E[k, i] = E[k, j] = 1.0
    assert torch.allclose(E.T @ E, B)
    # R = 2 ||Y||_* = N^2 (B_N PSD, so (Y Y^T)^{1/2} = B_N)
    assert float(2 * torch.linalg.svdvals(B).sum()) == pytest.approx(N * N, rel=1e-12)


@pytest.mark.parametrize("N", [4, 8])
def test_remark23_fits_with_norm(N):
    W1, W2 = theory.bipartite_full_width_weights(N)
    X = torch.eye(N, dtype=F64)
    out = torch.relu(X @ W1.T) @ W2.T
    assert torch.allclose(out, theory.bipartite_target(N), atol=1e-12 * N)
    assert float(W1.pow(2).sum() + W2.pow(2).sum()) == pytest.approx(N * N + N, rel=1e-12)


def test_pair_directions():
    D = theory.pair_directions(8)
    assert D.shape == (16, 8)
    assert torch.allclose(D.norm(dim=1), torch.ones(16, dtype=F64))


@pytest.mark.parametrize("summed", [True, False])
@pytest.mark.parametrize("lam", [0.1, 0.3])
def test_prop19_values(summed, lam):
    fam, glob = theory.counterexample_values(lam, summed=summed)
    for angle in (0.3, 0.8, 1.2):
        W1, W2 = theory.counterexample_weights(lam, angle, summed=summed)
        assert float(theory.counterexample_loss(W1, W2, lam, summed=summed)) == pytest.approx(
            fam, abs=1e-12
        )
    W1, W2 = theory.counterexample_weights(lam, summed=summed, kind="global")
    assert float(theory.counterexample_loss(W1, W2, lam, summed=summed)) == pytest.approx(
        glob, abs=1e-12
    )
    assert glob < fam


@pytest.mark.parametrize("eps", [1e-2, 1e-3])
def test_prop19_escape_path(eps):
    lam = 0.1
    base = theory.counterexample_loss(*theory.counterexample_weights(lam, 0.0), lam)
    moved = theory.counterexample_loss(
        *theory.counterexample_weights(lam, kind="escape", eps=eps), lam
    )
    expect = -2 * (1 - lam) * eps**2 + eps**4
    assert float(moved - base) == pytest.approx(expect, rel=1e-6)
    # 004's printed -eps on W_2 raises the loss instead
    W1, W2 = theory.counterexample_weights(lam, kind="escape", eps=eps)
    wrong = theory.counterexample_loss(W1, -W2.abs(), lam)
    assert float(wrong - base) > 0


def test_prop19_family_local_min():
    lam = 0.1
    W1, W2 = theory.counterexample_weights(lam, 0.7)
    base = theory.counterexample_loss(W1, W2, lam)
    g = torch.Generator().manual_seed(0)
    d1 = 1e-3 * torch.randn(5000, 2, generator=g, dtype=F64)
    d2 = 1e-3 * torch.randn(5000, 2, generator=g, dtype=F64)
    change = theory.counterexample_loss(W1 + d1, W2 + d2, lam) - base
    assert float(change.min()) >= -1e-12


def _shallow(n=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(n, generator=g, dtype=F64) for _ in range(3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prune_one_dim_rule(seed):
    a, c, b = _shallow(seed=seed)
    x = torch.linspace(-1, 1, 6, dtype=F64)
    a2, c2, b2 = theory.prune_one_dim(a, c, b, x)
    f = lambda a, c, b: torch.relu(x[:, None] * c + b) @ a  # noqa: E731
    assert torch.allclose(f(a2, c2, b2), f(a, c, b), atol=1e-12)
    assert a2.numel() <= 2 * (2 * 6 - 1)
    before = float(a.pow(2).sum() + c.pow(2).sum() + b.pow(2).sum())
    after = float(a2.pow(2).sum() + c2.pow(2).sum() + b2.pow(2).sum())
    assert after <= before * (1 + 1e-12)
    assert torch.allclose(a2.pow(2), c2.pow(2) + b2.pow(2))  # balanced


def test_prune_one_dim_rule_needs_same_sign():
    """Merging opposite signs of a (a wrong rule) would change the outputs: the sign matters."""
    x = torch.linspace(-1, 1, 5, dtype=F64)
    a = torch.tensor([1.0, -0.5], dtype=F64)
    c = torch.tensor([1.0, 2.0], dtype=F64)
    b = torch.tensor([0.5, 0.5], dtype=F64)
    a2, _, _ = theory.prune_one_dim(a, c, b, x)
    assert a2.numel() == 2
    assert math.isfinite(float(a2.sum()))
