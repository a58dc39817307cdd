"""Tasks of paper 004: shapes, determinism, the bipartite target, the digits subset."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import theory
from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import BipartiteTask, DigitsTask, ReluTeacherTask, SineTask


def test_sine_task():
    d = SineTask(n_train=10).build()
    assert d.x_train.shape == (10, 1) and d.x_train[0, 0] == -1.0
    np.testing.assert_allclose(d.y_train, np.sin(3 * d.x_train))


def test_bipartite_task_matches_theory():
    d = BipartiteTask(N=8).build()
    np.testing.assert_array_equal(d.x_train, np.eye(8))
    np.testing.assert_allclose(d.y_train, theory.bipartite_target(8).numpy())
    with pytest.raises(ConfigError):
        BipartiteTask(N=7)


def test_relu_teacher_fixed_data_across_seeds():
    t = ReluTeacherTask(dims=(5, 3, 2), n_train=20, n_test=10)
    a, b = t.build(seed=0), t.build(seed=7)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    assert a.y_train.shape == (20, 2) and a.x_test.shape == (10, 5)


def test_digits_task():
    d = DigitsTask(classes=(7, 8, 9), per_class=14).build()
    assert d.x_train.shape == (42, 64) and d.y_train.shape == (42, 3)
    assert d.x_train.max() <= 1.0
    np.testing.assert_array_equal(d.y_train.sum(0), [14, 14, 14])
    assert torch.as_tensor(d.y_test).sum() == d.x_test.shape[0]
