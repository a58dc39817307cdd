"""Decision maps, tripoints, accuracy and the gradient norm of trained classifiers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.measure import gradient_norm, tripoints
from bottlenecklab.measure._decision import (
    TRIPOINTS,
    accuracy,
    data_box,
    decision_map,
    tripoint_table,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import BlobsConfig


def _linear(W: list[list[float]]) -> torch.nn.Module:
    """A depth-1 FCNN (no bias) with the given weight `[C, 2]`."""
    net = FCNNConfig(depth=1, width=1, bias_scale=0.0).build(2, len(W), dtype=torch.float64)
    with torch.no_grad():
        net.weights[0].copy_(torch.tensor(W, dtype=torch.float64))
    return net


def test_decision_map_orientation():
    net = _linear([[1.0, 0.0], [-1.0, 0.0]])  # class 0 where x0 > 0
    xs, ys, labels = decision_map(net, (-1.0, -1.0), (1.0, 1.0), 11)
    assert labels.shape == (11, 11)
    assert torch.equal(labels[xs > 0], torch.zeros_like(labels[xs > 0]))
    assert torch.equal(labels[xs < 0], torch.ones_like(labels[xs < 0]))


def test_three_linear_classes_meet_at_the_origin():
    """Logits `<w_k, x>` with three directions 120 degrees apart meet at 0 only."""
    W = [[np.cos(a), np.sin(a)] for a in (0.0, 2 * np.pi / 3, 4 * np.pi / 3)]
    centres = tripoints(_linear(W), (-1.0, -1.0), (1.0, 1.0), 64)
    assert len(centres) >= 1
    assert float(centres.abs().max()) <= 2 * 2 / 63


def test_a_function_of_one_projection_has_no_tripoint():
    """Logits `c_k * t + d_k` of one scalar `t = x0 + 2 x1`: classes meet in pairs only."""
    W = [[c, 2 * c] for c in (-3.0, -1.0, 1.0, 3.0)]
    net = _linear(W)
    for res in (64, 128):
        assert len(tripoints(net, (-2.0, -2.0), (2.0, 2.0), res)) == 0


def test_data_box_and_accuracy():
    data = BlobsConfig().build(seed=0)
    lo, hi = data_box(data.x_train, 0.5)
    assert lo[0] == pytest.approx(data.x_train[:, 0].min() - 0.5)
    assert hi[1] == pytest.approx(data.x_train[:, 1].max() + 0.5)
    # the logits x0 + x1, -x0 + x1, -x0 - x1, x0 - x1 pick the nearest centre
    net = _linear([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    assert accuracy(net, data.x_train, data.y_train) >= 0.99
    assert accuracy(net, data.x_train, data.y_train[:, ::-1]) <= 0.01


def test_gradient_norm_zero_at_a_minimum_and_positive_elsewhere():
    data = BlobsConfig(n_per_class=5, n_test_per_class=1).build(seed=0)
    net = FCNNConfig(depth=2, width=4).build(2, 4, seed=0, dtype=torch.float64)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
    # at theta = 0 the cross-entropy gradient vanishes for balanced classes: a critical point
    assert gradient_norm(net, data.x_train, data.y_train, 1e-3, "cross_entropy") < 1e-12
    net = FCNNConfig(depth=2, width=4).build(2, 4, seed=0, dtype=torch.float64)
    assert gradient_norm(net, data.x_train, data.y_train, 1e-3, "cross_entropy") > 1e-3


def test_tripoint_table_counts_and_lists_every_resolution():
    W = [[np.cos(a), np.sin(a)] for a in (0.0, 2 * np.pi / 3, 4 * np.pi / 3)]
    net = _linear(W)
    counts, rows = tripoint_table(net, (-1.0, -1.0), (1.0, 1.0), (32, 64))
    assert set(counts) == {TRIPOINTS.at(32).name, TRIPOINTS.at(64).name}
    assert TRIPOINTS.at(64).name == "tripoints_64"  # the column older runs hold
    for res in (32, 64):
        here = [r for r in rows if r["resolution"] == res]
        count = counts[TRIPOINTS.at(res).name]
        assert count == len(here) == len(tripoints(net, (-1, -1), (1, 1), res))
        assert len(here) >= 1
    one_projection = _linear([[c, 2 * c] for c in (-3.0, -1.0, 1.0, 3.0)])
    assert tripoint_table(one_projection, (-2.0, -2.0), (2.0, 2.0), (64,)) == (
        {TRIPOINTS.at(64).name: 0.0},
        [],
    )
