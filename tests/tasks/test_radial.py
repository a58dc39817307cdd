"""The compositional `h o g` task of paper 002's opening slides."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import RadialCompositionConfig


def test_shapes_and_normalization():
    data = RadialCompositionConfig(n_train=2000, n_test=100).build(seed=0)
    assert data.x_train.shape == (2000, 8) and data.y_test.shape == (100, 1)
    assert data.x_train.min() >= 0 and data.x_train.max() <= 1
    assert abs(float(data.y_train.mean())) < 0.1
    assert float(data.y_train.std()) == pytest.approx(1.0, abs=0.1)
    assert data.k_star == 1


def test_seeded():
    cfg = RadialCompositionConfig(n_train=20, n_test=10)
    assert np.array_equal(cfg.build(seed=1).y_train, cfg.build(seed=1).y_train)
    assert not np.array_equal(cfg.build(seed=1).y_train, cfg.build(seed=2).y_train)


def test_bad_sizes_fail():
    with pytest.raises(ConfigError):
        RadialCompositionConfig(n_train=1)
