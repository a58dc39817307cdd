"""The Hamiltonian system of paper 000, §1.5, in code orientation."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.theory import (
    geodesic_weights,
    hamiltonian,
    hamiltonian_flow,
    shoot,
    vector_field,
)

LEAK = 2.0


def _state(seed: int, N: int = 9, w: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(N, w, generator=g, dtype=torch.float64)
    B = 0.3 * torch.randn(N, w, generator=g, dtype=torch.float64)
    return A, B


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vector_field_is_hamiltonian_gradient(seed: int) -> None:
    A, B = _state(seed)
    A.requires_grad_(True)
    B.requires_grad_(True)
    dH_dA, dH_dB = torch.autograd.grad(hamiltonian(A, B, LEAK), (A, B))
    dA, dB = vector_field(A.detach(), B.detach(), LEAK)
    torch.testing.assert_close(dA, dH_dB, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(dB, -dH_dA, rtol=1e-12, atol=1e-12)


def _kink_free_drift(steps: int) -> float:
    g = torch.Generator().manual_seed(0)
    A0 = torch.randn(12, 6, generator=g, dtype=torch.float64).abs() + 0.5
    B0 = 3e-3 * torch.randn(12, 6, generator=g, dtype=torch.float64).abs()
    A, B = hamiltonian_flow(A0, B0, LEAK, steps=steps)
    assert bool((A > 0).all()), "the test path must cross no ReLU kink"
    H = torch.stack([hamiltonian(a, b, LEAK) for a, b in zip(A, B)])
    return float((H - H[0]).abs().max() / H[0].abs())


def test_conservation_at_rk4_order_without_kinks() -> None:
    ratio = _kink_free_drift(40) / _kink_free_drift(80)
    assert 12 < ratio < 20  # RK4: 2^4 = 16


def test_conservation_with_kinks_shrinks_with_the_step() -> None:
    A0, B0 = _state(3, N=20, w=8)
    B0 = 0.02 * B0
    drifts = []
    for steps in (50, 800):
        A, B = hamiltonian_flow(A0, B0, LEAK, steps=steps)
        H = torch.stack([hamiltonian(a, b, LEAK) for a, b in zip(A, B)])
        drifts.append(float((H - H[0]).abs().max() / H[0].abs()))
    assert drifts[1] < drifts[0]
    assert drifts[1] < 1e-3


def test_shoot_starts_at_lifted_inputs_and_weights_reproduce_the_flow() -> None:
    g = torch.Generator().manual_seed(4)
    X = torch.randn(10, 3, generator=g, dtype=torch.float64)
    pin = torch.linalg.qr(torch.randn(6, 3, generator=g, dtype=torch.float64))[0]
    B0 = 0.05 * torch.randn(10, 6, generator=g, dtype=torch.float64)
    A, B = shoot(X, pin, B0, LEAK, steps=20)
    assert A.shape == (21, 10, 6) and B.shape == (21, 10, 6)
    torch.testing.assert_close(A[0], X @ pin.T)
    # dA/dp = -L~ A + sigma(A) W^T with W = L~ B^T sigma(A) (paper 000, §1.5).
    W = geodesic_weights(A[5], B[5], LEAK)
    dA, _ = vector_field(A[5], B[5], LEAK)
    S = torch.cat([torch.relu(A[5]), torch.ones(10, 1, dtype=torch.float64)], 1)
    torch.testing.assert_close(dA, -LEAK * A[5] + S @ W.T)
