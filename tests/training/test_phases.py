"""The phase registry: every configurable optimizer has a kind; only elementwise kinds may
be trained as an ensemble; a new kind plugs in without touching the loop."""

from __future__ import annotations

import typing

import torch

from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.training import PHASES, PhaseConfig, PhaseKind, TrainConfig, train


def test_every_configurable_optimizer_has_a_phase_kind():
    names = typing.get_args(typing.get_type_hints(PhaseConfig)["optimizer"])
    assert set(names) == set(PHASES)


def test_only_elementwise_kinds_are_batchable():
    assert {n for n, k in PHASES.items() if k.batchable} == {"adam", "sgd"}


class _Halve(PhaseKind):
    """A toy kind: every step halves the parameters (state: a step counter)."""

    def make(self, phase, params, lr):
        return torch.optim.SGD(params, lr=lr)

    def step(self, obj, phase, opt, book):
        loss = obj.loss().detach()
        with torch.no_grad():
            for p in obj.params:
                p.mul_(0.5)
        return loss, 1


def test_a_registered_kind_runs_in_the_loop(tiny_data, monkeypatch):
    monkeypatch.setitem(PHASES, "adam", _Halve())
    net = LeakyResNetConfig(width=5, depth=4, leak=1.0).build(
        tiny_data.d_in, tiny_data.d_out, seed=1, dtype=torch.float64
    )
    before = net.weights.detach().clone()
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 3, 1e-2),), dtype="float64")
    rows = []
    res = train(net, tiny_data, cfg, progress=False, on_log=rows.append)
    assert res.steps == 3 and rows == res.metrics
    torch.testing.assert_close(net.weights.detach(), before / 8)
    assert res.metrics[-1]["step"] == 3
