"""Pure forms of paper 004's reformulation: the cut pseudo-inverse, the null projector, the
minimal-norm weights and the linear-net kernels, in float64."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab import theory

F64 = torch.float64


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


@pytest.mark.parametrize("shape", [(8, 13), (13, 8), (5, 5)])
def test_pinv_cut_matches_pinv(shape):
    A = _rand(*shape)
    assert torch.allclose(theory.pinv_cut(A), torch.linalg.pinv(A), atol=1e-12)


def test_null_projector_is_projector_on_kernel():
    S = _rand(8, 13)
    P = theory.null_projector(S)
    assert torch.allclose(P @ P, P, atol=1e-12)
    assert float((S @ P).abs().max()) < 1e-12
    assert round(float(P.trace())) == 13 - 8


def test_representation_weights_reproduce_and_minimize():
    S, W = _rand(8, 13), _rand(4, 13, seed=1)
    Z = S @ W.T
    Wm = theory.representation_weights(S, Z)
    assert torch.allclose(S @ Wm.T, Z, atol=1e-10)
    assert float(Wm.norm()) < float(W.norm())
    assert float(theory.representation_term(S, Z)) == pytest.approx(float(Wm.pow(2).sum()))
    assert float(theory.covariance_term(Z @ Z.T, S @ S.T)) == pytest.approx(
        float(Wm.pow(2).sum()), rel=1e-9
    )


def test_linear_kernels_ends():
    X, Z = _rand(6, 6), _rand(6, 4, seed=2)
    Ks = theory.linear_kernels(X, Z, 3)
    assert torch.allclose(Ks[-1], Z @ Z.T, atol=1e-9 * float((Z @ Z.T).abs().max()))
    assert len(Ks) == 3
