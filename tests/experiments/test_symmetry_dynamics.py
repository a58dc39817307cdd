"""`fcnn/symmetry-dynamics` (paper 001 Fig 2): smoke runs (API and CLI), claims that FAIL
on crafted wrong or unconverged results, and (slow) the quick preset passing."""

from __future__ import annotations

import json

import pytest

from bottlenecklab.cli import main
from bottlenecklab.experiments import PointResult, get, resolve_config, run_experiment

NAME = "fcnn/symmetry-dynamics"


def _result(**over: float) -> PointResult:
    scalars = {
        "middle_layers": 4.0,
        "middle_gap_layers": 3.0,
        "pca_layer": 3.0,
        "pca_crossings": 10.0,
        "random_crossings": 200.0,
        "gap_layer": 4.0,
        "rotation_ratio": 0.2,
        "rotation_ratio_layer2": 0.7,
        "relative_train_cost": 0.001,
    }
    scalars.update(over)
    return PointResult("x", {}, "done", "", scalars, [], [], 0, 0.0, {})


def _verdicts(**over: float) -> dict[str, bool]:
    exp = get(NAME)
    return {c.id: c.passed for c in exp.claims(resolve_config(exp, "quick"), [_result(**over)])}


def test_smoke_run(smoke_record) -> None:
    exp, _, out, record = smoke_record(NAME)
    assert record.claims and (out / "figures" / "symmetry_dynamics.png").exists()
    # 20 Adam steps: not converged, every gated claim fails
    assert not any(c.passed for c in record.claims if c.id != "layer2-rotation-ratio")


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
        ({"pca_crossings": 60.0}, "pca-paths-uncrossed"),  # 0.3 of the random ones
        ({"random_crossings": 0.0, "pca_crossings": 1.0}, "pca-paths-uncrossed"),
        ({"rotation_ratio": 0.8}, "rotation-invariant"),
        ({"rotation_ratio": float("nan")}, "rotation-invariant"),  # no layer with the gap
        ({"rotation_ratio_layer2": float("nan")}, "layer2-rotation-ratio"),
    ],
)
def test_claims_fail_on_wrong_results(over, failing) -> None:
    got = _verdicts(**over)
    assert got == {k: k != failing for k in got}


def test_claims_fail_on_an_unconverged_network() -> None:
    got = _verdicts(relative_train_cost=0.5)
    assert not any(v for k, v in got.items() if k != "layer2-rotation-ratio")


@pytest.mark.slow
def test_quick_preset_passes_every_claim(tmp_path) -> None:
    exp = get(NAME)
    record = run_experiment(
        exp, resolve_config(exp, "quick"), tmp_path / "run", preset="quick", progress=False
    )
    failed = [(c.id, c.measured) for c in record.claims if not c.passed]
    assert record.claims and not failed, failed
