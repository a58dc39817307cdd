"""The falling-ball frames of paper 002 ('Learning Newtonian Mechanics')."""

from __future__ import annotations

import numpy as np
import pytest

from bottlenecklab.tasks import BallGravityConfig, ball_frames


def test_frame_peaks_at_the_ball_and_wraps_around():
    f = ball_frames(np.array([0.0, 15.0]), 16, 1.5)
    assert f.shape == (16, 16) and f[0, 15] == pytest.approx(1.0)
    assert f[15, 15] == pytest.approx(f[1, 15])  # torus distance 1 either way
    assert f[0, 0] == pytest.approx(np.exp(-1 / (2 * 1.5**2)))


def test_dataset_layout_scale_and_dynamics():
    cfg = BallGravityConfig(n_train=300, n_test=5)
    data = cfg.build(seed=0)
    n2 = 16 * 16
    assert data.x_train.shape == (300, 2 * n2) and data.y_train.shape == (300, n2)
    assert data.y_train.var(axis=0).sum() == pytest.approx(1.0)
    p, v = np.array(data.info["test_p"]), np.array(data.info["test_v"])
    s = data.info["scale"]
    assert np.allclose(data.x_test[:, n2:], s * ball_frames(p, 16, 1.5).reshape(5, -1))
    assert np.allclose(data.x_test[:, :n2], s * ball_frames(p - v, 16, 1.5).reshape(5, -1))
    nxt = s * ball_frames(p + v + np.array([0.2, 0.0]), 16, 1.5).reshape(5, -1)
    assert np.allclose(data.y_test, nxt)
