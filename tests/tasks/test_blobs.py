"""Gaussian blobs (paper 002, 'Implications: Classification')."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.config import ConfigError
from bottlenecklab.tasks import BlobsConfig


def test_one_hot_balanced_and_centred_on_the_centres():
    data = BlobsConfig(n_per_class=500).build(seed=0)
    assert data.x_train.shape == (2000, 2) and data.y_train.shape == (2000, 4)
    assert np.array_equal(data.y_train.sum(axis=0), [500] * 4)
    labels = data.y_train.argmax(axis=1)
    for k, c in enumerate(BlobsConfig().centers):
        pts = data.x_train[labels == k]
        assert np.allclose(pts.mean(axis=0), c, atol=0.05)
        assert pts.std(axis=0) == pytest.approx([0.3, 0.3], abs=0.03)


def test_seeded_and_bad_config():
    cfg = BlobsConfig(n_per_class=3)
    assert np.array_equal(cfg.build(seed=1).x_train, cfg.build(seed=1).x_train)
    assert not np.array_equal(cfg.build(seed=1).x_train, cfg.build(seed=2).x_train)
    with pytest.raises(ConfigError):
        BlobsConfig(centers=((0.0, 0.0), (1.0,)))
