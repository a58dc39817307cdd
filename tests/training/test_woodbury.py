"""The Woodbury inverse of `diag(d + shift) + J^T diag(w) J` against the dense inverse;
the output Jacobian against autograd's; the regularizer's diagonal Hessian against the
leaky ResNet's closed form."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.training import SmoothReLU
from bottlenecklab.training._woodbury import Woodbury, output_jacobian, regularization_diagonal

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _problem(uniform: bool):
    g = torch.Generator().manual_seed(0)
    m, P = 7, 20  # fewer rows than parameters: J^T J is singular, M is not
    J = torch.randn(m, P, generator=g, dtype=F64)
    d = (
        torch.full((P,), 1e-3, dtype=F64)
        if uniform
        else 1e-3 + torch.rand(P, generator=g, dtype=F64)
    )
    w = 0.5 + torch.rand(m, generator=g, dtype=F64)
    v = torch.randn(P, generator=g, dtype=F64)
    return d, J, w, v


def _dense(d, J, w, shift):
    return torch.diag(d + shift) + J.T @ torch.diag(w) @ J


@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("shift", [0.0, 0.25])
def test_solve_is_the_dense_inverse_to_dtype_tolerance(uniform, shift):
    """`M^{-1} v` equal to a dense solve, to the backward error of a solve at `M`'s
    condition number (`P eps cond`), and `M (M^{-1} v) = v` likewise."""
    d, J, w, v = _problem(uniform)
    M = _dense(d, J, w, shift)
    x = Woodbury(d, J, w, shift=shift).solve(v)
    exact = torch.linalg.solve(M, v)
    bound = v.numel() * EPS * float(torch.linalg.cond(M))
    assert float((x - exact).norm() / exact.norm()) <= bound
    assert float((M @ x - v).norm() / v.norm()) <= bound


@pytest.mark.parametrize("uniform", [True, False])
def test_damped_equals_a_fresh_factorization(uniform):
    d, J, w, v = _problem(uniform)
    base = Woodbury(d, J, w)
    fresh = Woodbury(d, J, w, shift=0.5)
    bound = v.numel() * EPS * float(torch.linalg.cond(_dense(d, J, w, 0.5)))
    got, want = base.damped(0.5).solve(v), fresh.solve(v)
    assert float((got - want).norm() / want.norm()) <= bound


def test_matvec_columns_and_scipy_operator_agree_with_the_dense_matrix():
    d, J, w, v = _problem(False)
    W = Woodbury(d, J, w)
    M = _dense(d, J, w, 0.0)
    assert torch.allclose(W.matvec(v), M @ v, rtol=0, atol=100 * EPS * float(M.norm() * v.norm()))
    V = torch.stack([v, 2 * v + 1], dim=1)
    assert torch.allclose(W.solve(V)[:, 1], W.solve(V[:, 1]), rtol=1e-12, atol=0)
    op = W.operator()
    assert np.allclose(op.matvec(v.numpy()), W.solve(v).numpy(), rtol=1e-14, atol=0)


@pytest.mark.parametrize("bad", ["d", "w"])
def test_a_non_positive_diagonal_or_weight_is_refused(bad):
    d, J, w, _ = _problem(False)
    if bad == "d":
        d = d.clone()
        d[3] = -1.0
    else:
        w = w.clone()
        w[0] = 0.0
    with pytest.raises(ValueError, match="> 0"):
        Woodbury(d, J, w)


@pytest.mark.parametrize("beta", [0.0, 10.0])
def test_output_jacobian_is_autograds(tiny_net, tiny_data, beta):
    """Rows `i d_out + k` of the vmapped Jacobian equal autograd's full Jacobian of the
    outputs (exact and softplus-smoothed forward), to round-off."""
    X = torch.as_tensor(tiny_data.x_train, dtype=F64)
    mode = (lambda: SmoothReLU(beta)) if beta else None
    J = output_jacobian(tiny_net, X, forward="forward_twice_differentiable", mode=mode)
    weights = tiny_net.weights

    def outputs(W):
        with torch.nn.utils.stateless._reparametrize_module(tiny_net, {"weights": W}):
            if beta:
                with SmoothReLU(beta):
                    return tiny_net.forward_twice_differentiable(X)
            return tiny_net.forward_twice_differentiable(X)

    full = torch.autograd.functional.jacobian(outputs, weights.detach())  # [N, d_out, *W]
    expected = full.reshape(J.shape)
    assert J.shape == (X.shape[0] * tiny_data.d_out, weights.numel())
    assert float((J - expected).abs().max()) <= 100 * EPS * float(expected.abs().max())


def test_regularization_diagonal_is_lam_rho_over_leak(tiny_net):
    """`(lam/(2 L~)) sum rho_l ||W_l||^2` has the diagonal Hessian `lam rho_l / L~` (an
    irregular schedule: a different value per layer)."""
    lam = 0.05
    params = [p for p in tiny_net.parameters() if p.requires_grad]
    d = regularization_diagonal(lambda: tiny_net.regularization(lam), params)
    per_layer = lam * tiny_net.rho / tiny_net.leak
    expected = per_layer[:, None, None].expand_as(tiny_net.weights).reshape(-1)
    assert torch.allclose(d, expected, rtol=10 * EPS, atol=0)


def test_a_non_diagonal_regularizer_is_refused():
    x = torch.nn.Parameter(torch.ones(3, dtype=F64))
    with pytest.raises(ValueError, match="not diagonal"):
        regularization_diagonal(lambda: x.sum() ** 2, [x])
