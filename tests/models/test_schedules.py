"""Layer-step schedules `rho` (paper 000, §2; spec `leaky-resnets.md`, "Layer-step schedules")."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.models import adaptive_steps, layer_steps


@pytest.mark.parametrize("kind", ["equidistant", "irregular", "adaptive"])
@pytest.mark.parametrize("depth", [1, 2, 5, 6, 31])
def test_steps_are_positive_and_sum_to_one(kind, depth):
    rho = layer_steps(kind, depth)
    assert rho.shape == (depth,)
    assert rho.dtype == torch.float64
    assert bool((rho > 0).all())
    assert float(rho.sum()) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("kind", ["equidistant", "adaptive"])
@pytest.mark.parametrize("depth", [1, 4, 7])
def test_equidistant_and_adaptive_start_are_uniform(kind, depth):
    torch.testing.assert_close(layer_steps(kind, depth), torch.full((depth,), 1 / depth).double())


@pytest.mark.parametrize("depth", [4, 5, 10, 11])
@pytest.mark.parametrize("a", [0.0, 0.5, 0.9])
def test_irregular_formula(depth, a):
    """`rho_l ∝ 1/L + (a/L)(1/4 - |l/L - 1/2|)`, `l = 1..L`, renormalized."""
    raw = [1 / depth + (a / depth) * (0.25 - abs(l / depth - 0.5)) for l in range(1, depth + 1)]
    expected = torch.tensor([r / math.fsum(raw) for r in raw], dtype=torch.float64)
    torch.testing.assert_close(layer_steps("irregular", depth, a=a), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("depth", [6, 7])
def test_irregular_steps_are_larger_in_the_middle(depth):
    rho = layer_steps("irregular", depth, a=0.5)
    mid = rho[(depth - 1) // 2]
    assert mid > rho[0] and mid > rho[-1]


def test_irregular_raw_formula_sums_to_one_for_even_depth():
    """For even `L` the raw formula already sums to 1; odd `L` needs the renormalization."""
    depth, a = 8, 0.5
    raw = torch.tensor(
        [1 / depth + (a / depth) * (0.25 - abs(l / depth - 0.5)) for l in range(1, depth + 1)]
    )
    assert float(raw.sum()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "kind, depth, a, match",
    [
        ("weird", 3, 0.5, "unknown schedule"),
        ("equidistant", 0, 0.5, "depth"),
        ("irregular", 3, 1.0, "a in"),
        ("irregular", 3, -0.1, "a in"),
    ],
)
def test_bad_schedules_raise(kind, depth, a, match):
    with pytest.raises(ValueError, match=match):
        layer_steps(kind, depth, a=a)


def _hand_path():
    """`A_0 = 1` (norm 2), `A_1 = 2 * 1` (`||A_1 - A_0|| = 2`), `A_2 = A_1 + 1` (`= 2`)."""
    A0 = torch.ones(2, 2, dtype=torch.float64)  # ||A0||_F = 2
    A1 = 2 * A0  # ||A1||_F = 4, ||A1 - A0||_F = 2
    A2 = A1 + A0  # ||A2 - A1||_F = 2
    return [A0, A1, A2]


def test_adaptive_steps_on_a_hand_path():
    """`c_l = ||A_l - A_{l-1}|| / (rho_l ||A_{l-1}||)`: c = (2/(0.5*2), 2/(0.5*4)) = (2, 1),
    so `rho ∝ (1/2, 1)` = (1/3, 2/3)."""
    rho = torch.tensor([0.5, 0.5], dtype=torch.float64)
    new = adaptive_steps(_hand_path(), rho)
    torch.testing.assert_close(new, torch.tensor([1 / 3, 2 / 3], dtype=torch.float64))


@pytest.mark.parametrize("damping", [0.25, 0.5, 1.0])
def test_adaptive_steps_damping_blends(damping):
    rho = torch.tensor([0.5, 0.5], dtype=torch.float64)
    new = adaptive_steps(_hand_path(), rho, damping=damping)
    plain = torch.tensor([1 / 3, 2 / 3], dtype=torch.float64)
    torch.testing.assert_close(new, (1 - damping) * rho + damping * plain)
    assert float(new.sum()) == pytest.approx(1.0, abs=1e-15)


def test_adaptive_steps_with_uneven_current_steps():
    """`rho = (0.25, 0.75)`: c = (2/(0.25*2), 2/(0.75*4)) = (4, 2/3), rho ∝ (1/4, 3/2)."""
    rho = torch.tensor([0.25, 0.75], dtype=torch.float64)
    new = adaptive_steps(_hand_path(), rho)
    torch.testing.assert_close(new, torch.tensor([1 / 7, 6 / 7], dtype=torch.float64))


def test_adaptive_steps_keeps_dtype_and_no_grad():
    path = [A.float().requires_grad_() for A in _hand_path()]
    rho = torch.tensor([0.5, 0.5])
    new = adaptive_steps(path, rho)
    assert new.dtype == torch.float32
    assert not new.requires_grad
