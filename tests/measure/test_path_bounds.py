"""Path length, momentum sizes and Theorem 4 (paper 000) on a trained smoke network."""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest
import torch

from bottlenecklab import measure, theory
from bottlenecklab.measure._balance import balancedness_residual
from bottlenecklab.measure._path_bounds import (
    hamiltonian_bounds,
    hamiltonian_bounds_constant_gamma,
    layer_speed_window,
    momentum_bounds,
    ridge_layers,
    speed_window_columns,
)
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
    b = momentum_bounds(table)
    assert b["B_max"] == max(r["B_norm"] for r in table.rows)
    assert b["BS_max"] == max(r["BS_norm"] for r in table.rows)


def test_theorem4_inequalities_hold(trained, table) -> None:
    model, _ = trained
    t = hamiltonian_bounds(table, model.leak)
    assert t["thm4_middle"] <= t["thm4_upper"]
    assert t["thm4_lower"] <= t["thm4_middle"]
    assert t["thm4_lower_corrected"] <= t["thm4_middle"]
    # The corrected form uses sqrt(gamma) c >= gamma c when gamma <= 1.
    assert t["thm4_sgc"] > 0 and t["thm4_gc"] > 0


def test_plain_path_length_is_the_weighted_sum_of_frobenius_velocities(table) -> None:
    """App B's path length has no kernel metric; `||V||_(K+gamma I) <= ||V||_F / sqrt(gamma)`
    (since `(K + gamma I)^{-1} <= gamma^{-1} I`)."""
    expected = sum(r["rho"] * r["V_frob"] for r in table.rows)
    assert math.isclose(measure.plain_path_length(table), expected, rel_tol=1e-12)
    for r in table.rows:
        assert r["V_norm"] <= r["V_frob"] / math.sqrt(r["gamma"]) * (1 + 1e-9)


def test_theorem4_window_applies_the_theory_to_the_table(table) -> None:
    """Each layer with its own `gamma_l` and `||B_l||`, `H` the median; the summary keys."""
    w = layer_speed_window(table, LEAK)
    rank_h = statistics.median(r["rank_H"] for r in table.rows)
    expected = theory.speed_window(
        table.column("V_norm"),
        table.column("coi_gamma"),
        rank_h,
        table.column("gamma"),
        table.column("B_norm"),
        LEAK,
    )
    np.testing.assert_array_equal(w.used, expected.used)
    np.testing.assert_allclose(
        w.lower, -LEAK * np.sqrt(table.column("gamma")) * table.column("B_norm")
    )
    t = hamiltonian_bounds(table, LEAK)
    assert t["thm4_window_used_max"] == float(np.abs(w.used).max())
    assert t["thm4_window_holds"] == float(w.holds.mean())
    assert t["thm4_arg_negative"] == float((w.arg < 0).sum())


def _exceed(rows: list[dict], i: int, leak: float, rank_h: float) -> list[dict]:
    """`rows` with layer `i`'s velocity scaled to 1.5 times its window's upper end above
    `L~ sqrt((a_i)_+)`."""
    r = rows[i]
    a = max(r["coi_gamma"] - rank_h, 0.0)
    top = 2 * leak * math.sqrt(r["gamma"]) * r["B_norm"]
    return [
        q | {"V_norm": leak * math.sqrt(a) + 1.5 * top} if k == i else q for k, q in enumerate(rows)
    ]


def test_theorem4_per_layer_fails_at_a_layer_whose_velocity_exceeds_its_window(table) -> None:
    """Counter-case: one layer's `||V||` scaled past its window fails (2) there; the other
    layers keep their used fractions."""
    rank_h = statistics.median(r["rank_H"] for r in table.rows)
    bad = dataclasses.replace(table, rows=_exceed(table.rows, 4, LEAK, rank_h))
    w, w0 = layer_speed_window(bad, LEAK), layer_speed_window(table, LEAK)
    assert not w.holds[4] and w.used[4] == pytest.approx(1.5)
    np.testing.assert_array_equal(np.delete(w.used, 4), np.delete(w0.used, 4))
    t = hamiltonian_bounds(bad, LEAK)
    assert t["thm4_window_used_max"] == pytest.approx(1.5)
    assert t["thm4_window_holds"] == pytest.approx(np.delete(w0.holds, 4).sum() / len(table.rows))


def test_ridge_layers_at_one_gamma(trained, table) -> None:
    """`ridge_layers` at `gamma = 1/L~`: the same momenta and Hamiltonians as the table,
    (1)'s path length, and the window's counter-case at that ridge."""
    model, data = trained
    gamma = 1.0 / LEAK
    r = ridge_layers(model, data.x_train, data.y_train, LAM, gamma)
    np.testing.assert_allclose(r.rank_h, table.column("rank_H"), rtol=1e-10)
    np.testing.assert_allclose(r.b_norm, table.column("B_norm"), rtol=1e-10)
    t = hamiltonian_bounds_constant_gamma(model, data.x_train, data.y_train, LAM, gamma)
    assert t["path_length_const"] == pytest.approx(r.path_length(), rel=1e-12)
    assert t["thm4_window_used_max_const"] == float(np.abs(r.window(LEAK).used).max())
    w = r.window(LEAK)
    top = 2 * LEAK * math.sqrt(gamma) * r.b_norm[2]
    v = r.v_norm.copy()
    v[2] = LEAK * math.sqrt(max(w.arg[2], 0.0)) + 1.5 * top
    bad = dataclasses.replace(r, v_norm=v).window(LEAK)
    assert not bad.holds[2] and bad.used[2] == pytest.approx(1.5)


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
    H = measure.layer_hamiltonian(model, data.x_train, data.y_train, LAM)
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
    res = balancedness_residual(table, model.leak)
    assert res.shape == (12,) and res[0] == 0.0 and np.isfinite(res).all()


def test_speed_window_columns_join_each_windows_arg_and_used_to_its_layer() -> None:
    def window(arg, used):
        z = np.zeros(len(arg))
        return theory.SpeedWindow(
            arg=np.array(arg), excess=z, lower=z, upper=z, used=np.array(used)
        )

    rows = [{"layer": 1}, {"layer": 2}]
    out = speed_window_columns(
        rows, {"": window([0.5, -1.0], [0.1, 2.0]), "_c": window([3.0, 4.0], [0.0, -0.5])}
    )
    assert out[0] == {
        "layer": 1,
        "thm4_arg": 0.5,
        "thm4_used": 0.1,
        "thm4_arg_c": 3.0,
        "thm4_used_c": 0.0,
    }
    assert out[1]["thm4_used"] == 2.0 and out[1]["thm4_used_c"] == -0.5
    assert rows == [{"layer": 1}, {"layer": 2}]  # the input rows are not changed
