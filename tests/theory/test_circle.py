"""The circle example of paper 003 (Example 1): the two speeds and Eq. 6."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.theory import (
    circle_inputs,
    circle_rank2_weights,
    circle_speed,
    circle_width1_loss,
    circle_width1_optimum,
    circle_width1_speed,
    escape_directions,
)


def test_width1_optimum():
    s, phi = circle_width1_optimum()
    assert abs(s - (math.sqrt(2) - 1)) <= 1e-12
    assert abs(math.remainder(phi, math.pi / 4)) <= 1e-4


def test_width1_solver_reaches_optimum():
    X, G = circle_inputs()
    res = escape_directions(X, G, [1, 1], restarts=32, steps=2000, seed=0)
    assert abs(float(res.speed.max()) - (math.sqrt(2) - 1)) <= 1e-3


@pytest.mark.parametrize("width", [4, 6])
def test_rank2_construction(width):
    assert abs(circle_speed(circle_rank2_weights(width)) - 0.5) <= 1e-12


def test_rank2_construction_wrong_sign_fails():
    Ws = circle_rank2_weights()
    Ws[2] = -Ws[2]  # the paper's printed W_3 = [1]
    assert abs(circle_speed(Ws) + 0.5) <= 1e-12


def test_eq6_matches_width1_loss():
    phi = torch.linspace(-7.0, 7.0, 20001, dtype=torch.float64)
    assert float((circle_width1_speed(phi) - circle_width1_loss(phi).abs()).abs().max()) <= 1e-12
    quarter = torch.arange(8, dtype=torch.float64) * math.pi / 4
    assert torch.allclose(
        circle_width1_speed(quarter),
        torch.full((8,), math.sqrt(2) - 1, dtype=torch.float64),
        atol=1e-12,
    )
    assert float(circle_width1_speed(torch.tensor([math.pi / 8], dtype=torch.float64))) <= 1e-12


def test_eq6_differs_from_a_wrong_formula():
    phi = torch.linspace(0.1, 0.7, 7, dtype=torch.float64)
    wrong = (torch.cos(phi) - torch.cos(phi - math.pi / 2)).abs()
    assert float((circle_width1_speed(phi) - wrong).abs().max()) > 1e-3


def test_circle_linear_net_cannot_escape():
    X, G = circle_inputs()
    assert float(torch.linalg.matrix_norm(G.T @ X, ord=2)) <= 1e-12
