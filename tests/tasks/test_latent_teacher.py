"""The latent teacher of paper 001, App. E."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import LatentTeacherConfig


@pytest.fixture(scope="module")
def data():
    return LatentTeacherConfig(n_train=300, n_test=100).build(seed=1)


def test_shapes_and_constants(data):
    assert data.x_train.shape == (300, 20) and data.y_test.shape == (100, 20)
    assert data.k_star == 2
    assert data.info["g_jacobian_rank_min"] == 8
    assert data.info["g_jacobian_smin"] > 0


def test_outputs_centred_with_unit_total_variance(data):
    np.testing.assert_allclose(data.y_train.mean(axis=0), 0.0, atol=1e-12)
    assert np.sum(data.y_train**2) / 300 == pytest.approx(1.0, rel=1e-12)


def test_seeded(data):
    again = LatentTeacherConfig(n_train=300, n_test=100).build(seed=1)
    np.testing.assert_array_equal(again.x_train, data.x_train)
    other = LatentTeacherConfig(n_train=300, n_test=100).build(seed=2)
    assert not np.allclose(other.x_train, data.x_train)


def test_bad_config():
    with pytest.raises(ConfigError):
        LatentTeacherConfig(k_star=9)
