"""Compositional teacher tasks (paper 000, App. B) and the data cost."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import Standardizer, TeacherConfig, compositional_teacher, data_cost


@pytest.mark.parametrize("kind", ["mlp", "resnet"])
@pytest.mark.parametrize("dims, k_star", [((6, 2, 6), 2), ((8, 4, 3, 8), 3), ((5, 7), 5)])
def test_shapes_and_k_star(kind, dims, k_star):
    cfg = TeacherConfig(dims=dims, kind=kind, hidden=10, n_train=30, n_test=12)
    data = compositional_teacher(cfg, seed=0)
    assert data.x_train.shape == (30, dims[0]) and data.y_train.shape == (30, dims[-1])
    assert data.x_test.shape == (12, dims[0]) and data.y_test.shape == (12, dims[-1])
    assert data.k_star == k_star == cfg.k_star
    assert data.x_train.dtype == np.float64
    assert (data.d_in, data.d_out) == (dims[0], dims[-1])


@pytest.mark.parametrize("kind", ["mlp", "resnet"])
def test_train_split_is_standardized(kind):
    data = TeacherConfig(dims=(5, 2, 4), kind=kind, hidden=10, n_train=200, n_test=50).build(0)
    for M in (data.x_train, data.y_train):
        np.testing.assert_allclose(M.mean(axis=0), 0.0, atol=1e-12)
        np.testing.assert_allclose(M.std(axis=0), 1.0, atol=1e-12)
    # the test split uses the training transform: close to, not exactly, standardized
    assert np.abs(data.x_test.mean(axis=0)).max() > 1e-6


def test_seeds():
    cfg = TeacherConfig(dims=(4, 2, 4), hidden=8, n_train=20, n_test=5)
    a, b, c = cfg.build(seed=0), cfg.build(seed=0), cfg.build(seed=1)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    assert not np.allclose(a.x_train, c.x_train)


def test_teacher_seed_fixes_the_function_across_sample_seeds():
    """Same `teacher_seed`, same inputs => same outputs; `None` ties the teacher to `seed`."""
    fixed = TeacherConfig(dims=(3, 2, 3), hidden=8, n_train=50, n_test=5, teacher_seed=7)
    free = TeacherConfig(dims=(3, 2, 3), hidden=8, n_train=50, n_test=5, teacher_seed=None)
    assert fixed.build(seed=0).info == fixed.build(seed=1).info
    a, b = free.build(seed=0), free.build(seed=1)
    assert not np.allclose(a.y_train, b.y_train)
    # teacher_seed=None with seed s equals teacher_seed=s
    same = TeacherConfig(dims=(3, 2, 3), hidden=8, n_train=50, n_test=5, teacher_seed=1)
    np.testing.assert_array_equal(b.y_train, same.build(seed=1).y_train)


def test_standardizer_handles_constant_columns():
    x = np.array([[1.0, 5.0], [3.0, 5.0]])
    z = Standardizer.fit(x)(x)
    np.testing.assert_allclose(z, [[-1.0, 0.0], [1.0, 0.0]])


def test_data_cost_is_summed_over_outputs_and_averaged_over_samples():
    Y = torch.tensor([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    Y_hat = torch.zeros_like(Y)
    assert float(data_cost(Y_hat, Y)) == pytest.approx(5.0 / 2)
    mse = torch.nn.functional.mse_loss(Y_hat, Y)
    assert float(data_cost(Y_hat, Y)) == pytest.approx(float(mse) * Y.shape[1])


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"dims": (5,)}, "task.dims"),
        ({"dims": (5, 0, 5)}, "task.dims"),
        ({"hidden": 0}, "task.hidden"),
        ({"n_train": 1}, "task.n_train"),
        ({"n_test": 0}, "task.n_train"),
    ],
)
def test_config_rejects_out_of_range(kw, field):
    with pytest.raises(ConfigError, match=field):
        TeacherConfig(**kw)
