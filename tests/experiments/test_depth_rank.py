"""The experiments of papers 001/002 (`depth_rank`): smoke runs (claims reported, figures),
claims that FAIL on crafted wrong results, and (slow) every claim of the quick presets."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from bottlenecklab.config import apply_overrides
from bottlenecklab.experiments import PointResult, get, resolve_config, run_experiment

LINEAR = "linear/representation-cost"

EXPECTED = {
    LINEAR: (
        (
            "remainder-slope",
            "remainder-constant",
            "optimal-factorization",
            "trained-norm",
            "trained-grams",
            "trained-balanced",
            "prop12",
            "example20",
            "example20-excess",
        ),
        ("representation_cost",),
        ("remainder_slope", "norm_gap", "gram_error_max", "balance_max", "example20_slope"),
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_smoke_run_reports_every_claim_and_figure(name, smoke_record) -> None:
    _, _, out, record = smoke_record(name)
    claims = json.loads((out / "claims.json").read_text())
    assert tuple(c["id"] for c in claims) == EXPECTED[name][0]
    assert all(isinstance(c["passed"], bool) and c["expected"] for c in claims)
    for fig in EXPECTED[name][1]:
        assert (out / "figures" / f"{fig}.png").stat().st_size > 1000
    for point in record.points:
        assert point.status == "done"
        assert set(EXPECTED[name][2]) <= set(point.scalars)


def test_smoke_run_through_the_cli(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bottlenecklab", "run", LINEAR, "--preset", "smoke"]
        + ["--out", str(tmp_path / "run"), "--jobs", "1", "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "run" / "claims.json").exists()


# ------------------------------------------------------------ linear/representation-cost


@pytest.fixture(scope="module")
def linear_good(smoke_record) -> tuple:
    exp, cfg, _, record = smoke_record(LINEAR)
    return exp, cfg, record.points[0]


def _with(point: PointResult, **scalars) -> PointResult:
    return dataclasses.replace(point, scalars={**point.scalars, **scalars})


def test_linear_closed_form_claims_pass_on_the_smoke_run(linear_good) -> None:
    exp, cfg, point = linear_good
    got = {c.id: c.passed for c in exp.claims(cfg, [point])}
    for cid in ("remainder-slope", "remainder-constant", "optimal-factorization", "prop12"):
        assert got[cid], cid
    assert got["example20"] and got["example20-excess"]


@pytest.mark.parametrize(
    "scalars, failing",
    [
        ({"remainder_slope": -2.9}, "remainder-slope"),  # e.g. the constant term left in
        ({"remainder_constant_ratio": 1.2}, "remainder-constant"),
        ({"factorization_A_error": 1e-6}, "optimal-factorization"),
        ({"norm_gap": 0.05}, "trained-norm"),
        ({"gram_error_max": 0.2}, "trained-grams"),
        ({"balance_max": 0.3}, "trained-balanced"),
        ({"prop12_norm_error": 1.0}, "prop12"),
        ({"example20_f_error": 1e-3}, "example20"),
        ({"example20_slope": -0.3}, "example20-excess"),
    ],
)
def test_linear_claims_fail_on_wrong_results(linear_good, scalars, failing) -> None:
    exp, cfg, point = linear_good
    got = {c.id: c.passed for c in exp.claims(cfg, [_with(point, **scalars)])}
    assert got[failing] is False


def test_linear_trained_claims_fail_on_an_untrained_network(tmp_path) -> None:
    """No training step: the He-initialized linear net is neither balanced nor on the
    geodesic, and its norm exceeds the cost of its matrix."""
    exp = get(LINEAR)
    cfg = apply_overrides(
        resolve_config(exp, "smoke"),
        {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)},
    )
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    got = {c.id: c.passed for c in record.claims}
    assert not got["trained-norm"] and not got["trained-grams"] and not got["trained-balanced"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_quick_preset_passes_every_claim(name, tmp_path) -> None:
    exp = get(name)
    record = run_experiment(
        exp, resolve_config(exp, "quick"), tmp_path / "run", preset="quick", progress=False
    )
    failed = [(c.id, c.measured) for c in record.claims if not c.passed]
    assert record.claims and not failed, failed
