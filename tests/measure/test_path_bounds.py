"""Path length, momentum sizes and Theorem 4 (paper 000) on a trained smoke network."""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest
import torch

from bottlenecklab import measure, theory
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train

LAM = 0.02
LEAK = 2.0


@pytest.fixture(scope="module")
def trained():
    """A small leaky ResNet trained for a few seconds (float64), with its data."""
    data = TeacherConfig(dims=(6, 2, 6), hidden=16, n_train=40, n_test=20).build(seed=0)
    model = LeakyResNetConfig(width=10, depth=12, leak=LEAK, schedule="adaptive").build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    cfg = TrainConfig(
        lam=LAM,
        dtype="float64",
        phases=(
            PhaseConfig("adam", 300, 3e-3, schedule="cosine"),
            PhaseConfig("lbfgs", 200, 1.0),
        ),
        log_every=100,
        checkpoint_every=1000,
    )
    train(model, data, cfg, progress=False)
    return model, data


@pytest.fixture(scope="module")
def table(trained):
    model, data = trained
    return measure.leaky_resnet_layers(model, data.x_train, data.y_train, LAM, gamma0=1e-3)


def test_path_length_is_the_weighted_sum_of_velocities(table) -> None:
    expected = sum(r["rho"] * r["V_norm"] for r in table.rows)
    assert math.isclose(measure.path_length(table), expected, rel_tol=1e-12)
    b = measure.momentum_bounds(table)
    assert b["B_max"] == max(r["B_norm"] for r in table.rows)
    assert b["BS_max"] == max(r["BS_norm"] for r in table.rows)


def test_theorem4_inequalities_hold(trained, table) -> None:
    model, _ = trained
    t = measure.theorem4(table, model.leak)
    assert t["thm4_middle"] <= t["thm4_upper"]
    assert t["thm4_lower"] <= t["thm4_middle"]
    assert t["thm4_lower_corrected"] <= t["thm4_middle"]
    # The corrected form uses sqrt(gamma) c >= gamma c when gamma <= 1.
    assert t["thm4_sgc"] > 0 and t["thm4_gc"] > 0


def test_theorem4_per_layer_fails_exactly_where_its_square_root_argument_is_negative(
    table,
) -> None:
    """(2) read with its argument clipped at 0 differs from the plain reading only at the
    layers where `COI_gamma + (2/L~)H < 0`; a layer pushed below 0 is counted there."""
    t = measure.theorem4(table, LEAK)
    assert (
        t["thm4_per_layer_frac"] + t["thm4_per_layer_negative_arg"]
        >= t["thm4_per_layer_frac_clipped"] - 1e-12
    )
    rank_h = statistics.median(r["rank_H"] for r in table.rows)
    low = dataclasses.replace(
        table,
        rows=[r | {"coi_gamma": rank_h - 0.1} if i == 3 else r for i, r in enumerate(table.rows)],
    )
    u = measure.theorem4(low, LEAK)
    assert u["thm4_per_layer_negative_arg"] >= 1 / len(table.rows)
    assert u["thm4_per_layer_arg_min"] <= -0.1 + 1e-9
    assert u["thm4_per_layer_arg_floor"] <= 0.0


def test_theorem4_identity_at_every_layer(table) -> None:
    """-(2/L~)H_gamma relation: kinetic and COI rebuild the stable Hamiltonian exactly."""
    for r in table.rows:
        assert math.isclose(
            r["rank_H_gamma"],
            r["coi_gamma"] - r["V_norm"] ** 2 / LEAK**2,
            rel_tol=1e-9,
            abs_tol=1e-9,
        )


def test_measured_hamiltonian_matches_theory(trained, table) -> None:
    model, data = trained
    H = measure.hamiltonian(model, data.x_train, data.y_train, LAM)
    path, B = measure.momenta(model, data.x_train, data.y_train, LAM)
    expected = [float(theory.hamiltonian(path[l - 1], B[l - 1], model.leak)) for l in range(1, 13)]
    np.testing.assert_allclose(H, expected, rtol=1e-10)
    np.testing.assert_allclose(H, table.column("H"), rtol=1e-10)


def test_min_norm_weights_reproduce_the_path(trained) -> None:
    model, data = trained
    X = torch.as_tensor(data.x_train)
    with torch.no_grad():
        path = model.forward_path(X)
    W = measure.min_norm_weights(path, model.rho, model.leak)
    assert W.shape == model.weights.shape
    twin = LeakyResNetConfig(width=10, depth=12, leak=LEAK, schedule="adaptive").build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    twin.load_state_dict(model.state_dict())
    with torch.no_grad():
        twin.weights.copy_(W)
        again = twin.forward_path(X)
    torch.testing.assert_close(again[-1], path[-1], rtol=1e-8, atol=1e-8)
    norms = W.pow(2).sum(dim=(1, 2))
    assert bool((norms <= model.weights.detach().pow(2).sum(dim=(1, 2)) + 1e-9).all())


def test_balancedness_residual_has_one_entry_per_layer(trained, table) -> None:
    model, _ = trained
    res = measure.balancedness_residual(table, model.leak)
    assert res.shape == (12,) and res[0] == 0.0 and np.isfinite(res).all()
