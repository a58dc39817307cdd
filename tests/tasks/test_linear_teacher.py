"""The whitened linear teacher of the deep linear checks."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import LinearTeacherConfig, teacher_matrix


def test_whitened_inputs_and_teacher():
    cfg = LinearTeacherConfig()
    d = cfg.build(seed=3)
    np.testing.assert_allclose(d.x_train.T @ d.x_train / 64, np.eye(6), atol=1e-12)
    A = np.array(d.info["A"])
    np.testing.assert_allclose(np.linalg.svd(A, compute_uv=False)[:3], [3.0, 1.5, 0.4])
    np.testing.assert_allclose(d.y_train, d.x_train @ A.T)
    np.testing.assert_allclose(A, teacher_matrix(cfg))
    assert d.k_star == 3


def test_bad_config():
    with pytest.raises(ConfigError):
        LinearTeacherConfig(singular_values=(1.0,) * 6)
