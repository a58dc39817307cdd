"""Paper 000, Thm 4 (2) per layer (`theory.speed_window`): the proof's identity, the
window on layers at a critical point, the bottleneck layer where the paper's square root
is undefined, and layers whose velocity leaves the window."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import theory

LEAK = 3.0
EPS = float(torch.finfo(torch.float64).eps)


def _critical_layer(seed: int, *, N: int = 12, w: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """A random representation `A` `[N, w]` and momentum `B` `[N, w]`."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(N, w, generator=g, dtype=torch.float64)
    return A, torch.randn(N, w, generator=g, dtype=torch.float64)


def _slow_layer(seed: int, *, N: int = 12, w: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """A non-negative `A` and the `B` with `K B = A`: the velocity of a critical layer,
    `V = L~ (K B - A)`, is then exactly 0 (a layer inside the bottleneck)."""
    g = torch.Generator().manual_seed(seed)
    A = torch.rand(N, w, generator=g, dtype=torch.float64)
    S = theory.features(A)  # [A, 1]
    E = torch.eye(w + 1, w, dtype=torch.float64)  # S E = A
    return A, S @ torch.linalg.solve(S.T @ S, E)


def _window(A: torch.Tensor, B: torch.Tensor, gamma: float, v_scale: float = 1.0):
    """Thm 4 (2) at one layer with the velocity of a critical point, `V = L~ (K B - A)`
    (times `v_scale`), and the layer's own Hamiltonian."""
    S = theory.features(A)
    V = v_scale * LEAK * (S @ (S.T @ B) - A)
    rank_h = -2.0 / LEAK * float(theory.hamiltonian(A, B, LEAK))
    coi, v2 = theory.kernel_norms_sq((A, V), S, gamma).tolist()
    return theory.speed_window(
        np.array([v2**0.5]), np.array([coi]), rank_h, gamma, np.array([float(B.norm())]), LEAK
    )


@pytest.mark.parametrize("gamma", [1e-3, 1e-1, 1.0])
@pytest.mark.parametrize("seed", range(5))
def test_proof_identity(seed: int, gamma: float) -> None:
    """`a + gamma ||B||^2 = ||V/L~ + gamma B||^2_(K + gamma I)` at a critical layer."""
    A, B = _critical_layer(seed)
    S = theory.features(A)
    V = LEAK * (S @ (S.T @ B) - A)
    a = _window(A, B, gamma).arg[0]
    rhs = float(theory.kernel_norm_sq(V / LEAK + gamma * B, S, gamma))
    scale = rhs + gamma * float(B.pow(2).sum())
    assert abs(a + gamma * float(B.pow(2).sum()) - rhs) <= 1e3 * EPS * scale / gamma


@pytest.mark.parametrize("gamma", [1e-3, 1e-1, 1.0])
@pytest.mark.parametrize("seed", range(20))
def test_window_holds_at_a_critical_layer(seed: int, gamma: float) -> None:
    w = _window(*_critical_layer(seed), gamma)
    assert w.holds.all() and abs(w.used[0]) <= 1.0
    assert w.lower[0] < 0 < w.upper[0] and w.upper[0] == pytest.approx(-2 * w.lower[0])


def test_the_papers_gamma_c_form_fails_where_the_sqrt_gamma_form_holds() -> None:
    """The proof bounds `||gamma B||_(K + gamma I)` by `sqrt(gamma) ||B||`, not by
    `gamma ||B||`: at `gamma = 1e-3` the paper's window is too narrow for most critical
    layers (the corrected one holds at all, `test_window_holds_at_a_critical_layer`)."""
    gamma, fails = 1e-3, 0
    for seed in range(20):
        A, B = _critical_layer(seed)
        w = _window(A, B, gamma)
        gc = LEAK * gamma * float(B.norm())
        fails += not (-gc <= w.excess[0] <= 2 * gc)
    assert fails >= 10


@pytest.mark.parametrize("gamma", [1e-3, 1.0 / LEAK])
def test_slow_layer_has_a_negative_argument_and_holds_with_it_clipped(gamma: float) -> None:
    """Inside the bottleneck (`V = 0`) `a = ||gamma B||^2_(K+gamma I) - gamma ||B||^2 < 0`:
    the paper's `sqrt(a)` is undefined there, the clipped form holds with no excess."""
    A, B = _slow_layer(0)
    w = _window(A, B, gamma)
    S = theory.features(A)
    expected = float(theory.kernel_norm_sq(gamma * B, S, gamma)) - gamma * float(B.pow(2).sum())
    assert w.arg[0] < 0 and w.arg[0] == pytest.approx(expected, rel=1e-8)
    assert abs(w.excess[0]) <= 1e-6 * LEAK * float(B.norm()) and w.holds.all()


@pytest.mark.parametrize("gamma", [1e-3, 1.0 / LEAK])
@pytest.mark.parametrize("seed", range(5))
def test_a_velocity_twice_too_large_leaves_the_window(seed: int, gamma: float) -> None:
    """Counter-case: the same layer with its velocity doubled (the momentum, COI and
    Hamiltonian kept) uses more than its whole window."""
    w = _window(*_critical_layer(seed), gamma, v_scale=2.0)
    assert not w.holds.any() and w.used[0] > 1.0


def test_used_fraction_is_signed_and_one_at_the_window_ends() -> None:
    v = np.array([5.0, 5.0, 5.0, 5.0])
    coi = np.array([1.0, 1.0, 1.0, -3.0])  # a = 0, 0, 0 and -4 (clipped to 0)
    gamma, b = np.array([1.0, 1.0, 0.25, 1.0]), np.array([1.0, 2.0, 1.0, 1.0])
    w = theory.speed_window(v, coi, 1.0, gamma, b, 1.0)
    np.testing.assert_allclose(w.excess, 5.0)
    np.testing.assert_allclose(w.upper, [2.0, 4.0, 1.0, 2.0])
    np.testing.assert_allclose(w.used, [2.5, 1.25, 5.0, 2.5])
    low = theory.speed_window(np.array([0.0, 1.0]), np.array([5.0, 5.0]), 1.0, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(low.used, [-2.0, -1.0])  # excess -2 and -1, lower end -1
    assert low.holds.tolist() == [False, True]
