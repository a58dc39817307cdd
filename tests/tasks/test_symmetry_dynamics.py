"""`symmetry_dynamics` (paper 001 §5): GD paths, costs, starts, the rotation symmetry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import (
    SymmetryDynamicsConfig,
    gd_path,
    symmetry_cost,
    symmetry_start,
)


def _w(d: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.standard_normal(d)
    return w / np.linalg.norm(w)


def test_gd_path_follows_the_gradient_of_the_cost():
    """One step equals `v - eta * grad C(v)` with the gradient by finite differences."""
    rng = np.random.default_rng(0)
    w, A = _w(5, rng), rng.standard_normal((5, 5))
    E = 0.1 * (A + A.T)
    v = rng.standard_normal((1, 5))
    step = gd_path(v, w, E, 0.01, 1)[0, 1]
    h = 1e-6
    grad = np.array(
        [
            (symmetry_cost(v[0] + h * e, w, E) - symmetry_cost(v[0] - h * e, w, E)) / (2 * h)
            for e in np.eye(5)
        ]
    )
    assert np.allclose(step, v[0] - 0.01 * grad, atol=1e-7)


def test_the_cost_falls_along_the_path():
    data = SymmetryDynamicsConfig(n_train=200, n_test=10).build(seed=0)
    assert np.all(np.diff(data.y_train, axis=1) <= 1e-12)
    assert data.y_train.shape == (200, 11) and data.k_star == 2
    assert {"w", "E", "eta", "steps", "e_norm", "r_range"} <= set(data.info)
    assert np.linalg.norm(np.array(data.info["E"])) == pytest.approx(0.01)


def test_starts_lie_in_the_stated_range():
    rng = np.random.default_rng(1)
    w = _w(6, rng)
    V = symmetry_start(500, w, rng, (0.3, 1.5))
    r = np.linalg.norm(V, axis=1)
    assert r.min() >= 0.3 - 1e-12 and r.max() <= 1.5 + 1e-12
    cos_phi = V @ w / r
    assert cos_phi.min() < -0.9 and cos_phi.max() > 0.9  # phi spans [0, pi]


@given(st.integers(0, 10_000))
@settings(max_examples=20, deadline=None)
def test_without_e_the_targets_are_invariant_to_rotations_about_w(seed):
    rng = np.random.default_rng(seed)
    d = 6
    w = _w(d, rng)
    U = np.linalg.qr(np.column_stack([w, rng.standard_normal((d, d - 1))]))[0][:, 1:]
    O = np.linalg.qr(rng.standard_normal((d - 1, d - 1)))[0]
    Q = np.outer(w, w) + U @ O @ U.T
    V = symmetry_start(4, w, rng, (0.3, 1.5))
    E = np.zeros((d, d))
    a = symmetry_cost(gd_path(V, w, E, 0.02, 5), w, E)
    b = symmetry_cost(gd_path(V @ Q.T, w, E, 0.02, 5), w, E)
    assert np.allclose(a, b, atol=1e-12)


def test_bad_config():
    with pytest.raises(ConfigError):
        SymmetryDynamicsConfig(r_min=2.0, r_max=1.0)
