"""Value stability (spec `convergence.md` item 3 and its fourth review): the state a claim's
values are compared with exists however the last phase ends, is never a state of an
optimizer that had already stopped, and with a certification extension comes from an
optimizer that can still move."""

from __future__ import annotations

import pytest
import torch

import bottlenecklab.training._phases as phases_module
from bottlenecklab.experiments import get, resolve_config, run_experiment
from bottlenecklab.experiments.leaky_resnet.hamiltonian_vs_depth import RANK_H_MEDIAN, TEST_ERROR

NAME = "leaky-resnet/hamiltonian-vs-depth"
ADAM = {"optimizer": "adam", "steps": 60, "lr": 1e-2}
LAST = {"optimizer": "trust_region", "steps": 400, "lr": 1.0}


def _fail_after(n: int, monkeypatch) -> None:
    """Every trust-region phase reports failure at its `n`-th iteration."""
    real = phases_module.trust_region_step
    calls = {}

    def step(loss_fn, params, state):
        calls[id(state)] = calls.get(id(state), 0) + 1
        loss, stopped = real(loss_fn, params, state)
        return loss, stopped or calls[id(state)] >= n

    monkeypatch.setattr(phases_module, "trust_region_step", step)


def _run(tmp_path, overrides):
    exp = get(NAME)
    base = {
        "train.phases": (ADAM, LAST),
        "train.dtype": "float64",
        "train.log_every": 200,
        "leaks": (2.0,),
    }
    cfg = resolve_config(exp, "smoke", {**base, **overrides})
    return run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)


@pytest.mark.filterwarnings("ignore")
def test_a_last_phase_stopping_at_iteration_10_still_has_an_earlier_state(tmp_path, monkeypatch):
    """The trust region fails at iteration 10 of 400, before the earlier step (200): no
    logged row lies between it and the end; the earlier state is where the last phase
    began (step 60), not the stopped state, and no claim reads "no earlier value"."""
    _fail_after(10, monkeypatch)
    record = _run(tmp_path, {"certify.earlier": 0.5, "certify.extension": ()})
    (point,) = record.points
    assert point.steps == 460 and point.earlier.step == 60
    assert point.earlier[RANK_H_MEDIAN] != point.value(RANK_H_MEDIAN)
    assert not any("no earlier value" in (c.certificate or {}).get("reason", "")
                   for c in record.claims)  # fmt: skip


@pytest.mark.filterwarnings("ignore")
def test_a_stalled_phase_does_not_count_as_stable(tmp_path):
    """A last phase that runs all its steps without moving (a trust region of radius
    1e-12): between two of its states the values cannot change, which says nothing. The
    extension (Adam, which can still move there) changes them: stability is read there."""
    stalled = {**LAST, "lr": 1e-12}
    plain = _run(tmp_path / "a", {"train.phases": (ADAM, stalled), "certify.extension": ()})
    ext = ({"optimizer": "adam", "steps": 30, "lr": 1e-2},)
    moved = _run(tmp_path / "b", {"train.phases": (ADAM, stalled), "certify.extension": ext})
    a, b = plain.points[0], moved.points[0]
    assert a.value(RANK_H_MEDIAN) == b.value(RANK_H_MEDIAN)  # the same trained network
    err_a, err_b = a.value(TEST_ERROR), b.value(TEST_ERROR)
    assert abs(a.earlier[TEST_ERROR] - err_a) <= 1e-9 * abs(err_a)
    assert abs(b.earlier[TEST_ERROR] - err_b) > 1e-4 * abs(err_b)
    assert a.extension is None and b.extension.move > 1e-3


@pytest.mark.filterwarnings("ignore")
def test_the_extension_moves_from_the_final_state(tmp_path, monkeypatch):
    """With a certification extension, the compared state is the end of the extension:
    it moved (a stalled trust region would not have), its cost and loss change are
    recorded, and the trained network the claims read is not changed by it."""
    _fail_after(10, monkeypatch)
    ext = ({"optimizer": "adam", "steps": 30, "lr": 1e-3},)
    record = _run(tmp_path, {"certify.extension": ext})
    (point,) = record.points
    e = point.extension
    assert e.steps == 30 and e.wall_s > 0 and e.move > 0
    assert point.earlier.step == 460 + 30
    assert point.certificate is not None and point.certificate.stationarity >= 0
    again = _run(tmp_path, {"certify.extension": ext})  # cached: the same numbers
    assert again.points[0].value(RANK_H_MEDIAN) == point.value(RANK_H_MEDIAN)
    assert torch.isfinite(torch.tensor(e.loss_change))


@pytest.mark.parametrize(
    "overrides",
    [
        {"certify.extension": ({"optimizer": "lbfgs", "steps": 5, "smooth": 1e3},)},
        {"certify.extension": ({"optimizer": "adam", "steps": 0},)},
        {"certify.earlier": 1.5},
    ],
)
def test_a_wrong_gate_is_refused_before_training(overrides) -> None:
    """A smoothed last extension phase, an extension without steps, an earlier state
    outside the last phase: refused when the config is resolved (one-line ConfigError),
    not after the training."""
    from bottlenecklab.config import ConfigError

    with pytest.raises(ConfigError):
        resolve_config(get(NAME), "smoke", overrides)
