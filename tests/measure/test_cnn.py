"""The circular CNN's per-frequency spectra in the run's long format."""

from __future__ import annotations

import numpy as np

from bottlenecklab.measure import layer_frequency_singular_values, layer_modes, rollout
from bottlenecklab.measure._frequency import MODE_RULE, ball_rollout, frequency_spectra, mode_table
from bottlenecklab.models import CircularCNNConfig
from bottlenecklab.tasks import BallGravityConfig
from bottlenecklab.theory import frequency_order


def test_frequency_spectra_lists_every_singular_value_with_its_order() -> None:
    """One row per layer, frequency `(w1, w2)` and index `i`, with the value of
    `layer_frequency_singular_values` and the order of `theory.frequency_order`."""
    net = CircularCNNConfig(depth=2, channels=3, size=4).build(2 * 16, 16, seed=0)
    rows = frequency_spectra(net)
    spectra = layer_frequency_singular_values(net)
    assert len(rows) == sum(s.numel() for s in spectra)
    order = frequency_order(4)
    for row in rows[:: max(1, len(rows) // 50)]:
        w1, w2 = map(int, str(row["matrix"]).split(","))
        s = spectra[int(row["layer"]) - 1][w1, w2]
        assert row["value"] == float(s[int(row["index"]) - 1])
        assert row["order"] == int(order[w1, w2])
    indices = {r["index"] for r in rows}  # 1-based
    assert indices == set(range(1, max(s.shape[-1] for s in spectra) + 1))


def test_mode_table_counts_each_layers_modes() -> None:
    net = CircularCNNConfig(depth=3, channels=2, size=4).build(2 * 16, 16, seed=0)
    modes, layers = mode_table(net, 0.1)
    found = layer_modes(net, 0.1)
    assert [r["modes"] for r in layers] == [len(f) for f in found]
    assert len(modes) == sum(len(f) for f in found)
    for row, f in zip(layers, found):
        assert row["max_order"] == max((m["order"] for m in f), default=0)


def test_modes_are_counted_by_the_mode_rule() -> None:
    """`mode_table` counts at `MODE_RULE`'s cutoff (relative 0.1 of the layer's largest
    `s_(omega, i)`): each counted mode is at least that, each other one below it."""
    net = CircularCNNConfig(depth=3, channels=2, size=4).build(2 * 16, 16, seed=1)
    assert (MODE_RULE.kind, MODE_RULE.cutoff) == ("relative", 0.1)
    assert mode_table(net) == mode_table(net, MODE_RULE.cutoff)
    for s, found in zip(layer_frequency_singular_values(net), layer_modes(net, MODE_RULE.cutoff)):
        cut = MODE_RULE.cutoff * float(s.max())
        assert all(m["value"] >= cut for m in found)
        counted = {(m["w1"], m["w2"], m["i"]) for m in found}
        n = s.shape[0]
        for w1 in range(n):
            for w2 in range(n):
                if (w1, w2) > ((-w1) % n, (-w2) % n):  # each conjugate pair once
                    continue
                for i, v in enumerate(s[w1, w2].tolist()):
                    assert ((w1, w2, i) in counted) == (v >= cut)


def test_ball_rollout_truth_starts_at_the_recorded_next_frame() -> None:
    """The first true frame is the task's own target: the closed-form trajectory agrees
    with `tasks.ball_gravity`; the prediction is `rollout`'s."""
    cfg = BallGravityConfig(size=8, sigma=1.0, n_train=8, n_test=4)
    data = cfg.build(seed=0)
    net = CircularCNNConfig(depth=2, channels=2, size=8).build(data.d_in, data.d_out, seed=0)
    truth, pred = ball_rollout(net, data, 3, 2, cfg.gravity, cfg.sigma)
    assert truth.shape == pred.shape == (2, 3, 8, 8)
    np.testing.assert_allclose(truth[:, 0].reshape(2, -1), data.y_test[:2], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(pred, rollout(net, data.x_test[:2], 3, 8))
