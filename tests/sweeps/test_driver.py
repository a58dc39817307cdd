"""The sweep driver's time left (`_Clock`): built from the finished runs' measured times,
scaled against the expected times when the sweep has them (the queue runs the longest
first, so the first finished runs are the longest and their mean is no estimate)."""

from __future__ import annotations

import pytest

from bottlenecklab.sweeps import RunRequest
from bottlenecklab.sweeps._driver import _Clock

EXPECTED = {"long": 100.0, "b": 10.0, "c": 10.0, "d": 10.0}


def _req(run_id: str, experiment: str = "e") -> RunRequest:
    return RunRequest(run_id, {"seed": 0}, payload={"experiment": experiment})


def _cost(r: RunRequest) -> float | None:
    return EXPECTED.get(r.run_id)


def test_time_left_is_unknown_before_a_run_finished() -> None:
    clock = _Clock(2, _cost)
    assert clock.left_s([_req("b")], {}) is None


def test_expected_times_scaled_by_the_finished_runs() -> None:
    """The long run took twice its expected time: the three short ones left cost 20 s
    each, 60 s of work on 2 workers, so 30 s (the mean of the finished runs would say
    3 x 200 / 2 = 300 s)."""
    clock = _Clock(2, _cost)
    clock.measured(_req("long"), 200.0)
    todo = [_req(i) for i in "bcd"]
    assert clock.left_s(todo, {}) == pytest.approx(30.0)
    assert _Clock(2).left_s(todo, {}) is None  # no finished run, no cost
    without = _Clock(2)
    without.measured(_req("long"), 200.0)
    assert without.left_s(todo, {}) == pytest.approx(300.0)


def test_a_running_run_costs_what_it_has_left_and_the_longest_bounds_it() -> None:
    clock = _Clock(2, _cost)
    clock.measured(_req("b"), 20.0)  # scale 2
    todo = [_req("long"), _req("c")]
    # long: 200 - 50 run = 150; c: 20; spread 85 s, but one run alone needs 150 s
    assert clock.left_s(todo, {"long": 50.0}) == pytest.approx(150.0)


def test_runs_without_an_expected_time_cost_their_experiments_mean() -> None:
    clock = _Clock(1, _cost)
    clock.measured(_req("x1", "other"), 40.0)  # no expectation: does not set the scale
    clock.measured(_req("b"), 5.0)  # scale 0.5
    todo = [_req("x2", "other"), _req("y", "new"), _req("c")]
    # x2: its experiment's mean 40; y: the mean of all finished runs 22.5; c: 10 x 0.5
    assert clock.left_s(todo, {}) == pytest.approx(40.0 + 22.5 + 5.0)
