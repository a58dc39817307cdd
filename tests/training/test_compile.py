"""`TrainConfig.compile`: the compiled training forward gives the eager run's numbers to
round-off (float64), and training falls back to eager, with a warning, without a compiler."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train


def _net(data):
    cfg = LeakyResNetConfig(width=5, depth=4, leak=1.0)
    return cfg.build(data.d_in, data.d_out, seed=1, dtype=torch.float64)


def _cfg(compile: bool) -> TrainConfig:
    phases = (PhaseConfig("adam", 20, 1e-2), PhaseConfig("sgd", 10, 1e-2))
    return TrainConfig(lam=0.01, phases=phases, dtype="float64", log_every=5, compile=compile)


@pytest.mark.slow
def test_compiled_training_equals_eager_to_round_off(tiny_data):
    eager, compiled = _net(tiny_data), _net(tiny_data)
    ref = train(eager, tiny_data, _cfg(False), progress=False)
    got = train(compiled, tiny_data, _cfg(True), progress=False)
    for k, v in eager.state_dict().items():
        torch.testing.assert_close(compiled.state_dict()[k], v, rtol=1e-10, atol=1e-12)
    for a, b in zip(ref.metrics, got.metrics):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-10)


def test_without_a_compiler_training_warns_and_runs_eagerly(tiny_data, monkeypatch):
    def no_compiler(*args, **kwargs):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(torch, "compile", no_compiler)
    eager, fallback = _net(tiny_data), _net(tiny_data)
    ref = train(eager, tiny_data, _cfg(False), progress=False)
    with pytest.warns(UserWarning, match="torch.compile unavailable"):
        got = train(fallback, tiny_data, _cfg(True), progress=False)
    for k, v in eager.state_dict().items():
        assert torch.equal(fallback.state_dict()[k], v)
    assert [r["loss"] for r in got.metrics] == [r["loss"] for r in ref.metrics]
