"""`fcnn/symmetry-dynamics` (paper 001 Fig 2): smoke runs (API and CLI), claims that FAIL
on crafted wrong or unconverged results, and (slow) the quick preset passing."""

from __future__ import annotations

import json

import pytest

from bottlenecklab.cli import main
from bottlenecklab.experiments import PointResult, get, resolve_config

NAME = "fcnn/symmetry-dynamics"


def _result(**over: float) -> PointResult:
    scalars = {
        "middle_layers": 4.0,
        "middle_gap_layers": 3.0,
        "pca_layer": 3.0,
        "state_r2": 0.95,
        "state_r2_init": -0.1,
        "far_crossings": 1.0,
        "far_crossings_init": 60.0,
        "far_crossing_ratio": 1.0 / 60.0,
        "pca_crossings": 90.0,
        "pca_crossings_init": 95.0,
        "u_crossings": 3.0,
        "random_crossings": 40.0,
        "step_r2": 0.9,
        "gap_layer": 4.0,
        "rotation_ratio": 0.2,
        "rotation_ratio_layer2": 0.7,
        "relative_train_cost": 0.001,
    }
    scalars.update(over)
    layers = [{"layer": 1.0, "gap_index": 3, "gap": 1.5, "state_r2": 0.9, "state_r2_init": 0.1}]
    return PointResult("x", {}, "done", "", scalars, layers, [], 0, 0.0, {})


def _verdicts(**over: float) -> dict[str, bool]:
    exp = get(NAME)
    cfg = resolve_config(exp, "quick")
    return {c.id: c.passed for c in exp.claims(cfg, [_result(**over)]) if c.asserted}


def test_smoke_run(smoke_record) -> None:
    exp, _, out, record = smoke_record(NAME)
    assert record.claims and (out / "figures" / "symmetry_dynamics.png").exists()
    # 20 Adam steps: the certificate fails every asserted claim
    assert {c.state for c in record.claims if c.asserted} == {"not-converged"}
    assert {c.state for c in record.claims if not c.asserted} == {"reported"}


def test_smoke_run_through_the_cli(tmp_path) -> None:
    out = tmp_path / "run"
    args = ["run", NAME, "--preset", "smoke", "--out", str(out), "--jobs", "1", "--threads", "1"]
    assert main(args) == 0
    assert json.loads((out / "claims.json").read_text())


def test_claims_pass_on_good_results() -> None:
    assert all(_verdicts().values())


@pytest.mark.parametrize(
    "over, failing",
    [
        ({"middle_gap_layers": 2.0}, "middle-gap-at-2"),  # 2 of 4 is no majority
        ({"state_r2": 0.7}, "state-is-u"),
        # the metric cannot tell an untrained net apart: the claim says nothing
        ({"state_r2_init": 0.85}, "state-is-u"),
        ({"far_crossing_ratio": 0.2}, "paths-uncrossed"),
        ({"far_crossing_ratio": float("nan")}, "paths-uncrossed"),  # no untrained crossings
        ({"rotation_ratio": 0.8}, "rotation-invariant"),
        ({"rotation_ratio": float("nan")}, "rotation-invariant"),  # no layer with the gap
    ],
)
def test_claims_fail_on_wrong_results(over, failing) -> None:
    got = _verdicts(**over)
    assert got == {k: k != failing for k in got}


def test_claims_fail_on_the_untrained_networks_own_metrics() -> None:
    """Trained = untrained (no training): both 2-D state claims fail on their criteria."""
    got = _verdicts(state_r2=-0.1, far_crossings=60.0, far_crossing_ratio=1.0)
    assert not got["state-is-u"] and not got["paths-uncrossed"]
