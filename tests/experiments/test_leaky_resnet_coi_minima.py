"""Smoke run of `leaky-resnet/coi-minima` (paper 000) with its report page."""

from __future__ import annotations

import json

import pytest

from bottlenecklab.experiments import get, resolve_config, run_experiment
from bottlenecklab.report import render_run

NAME = "leaky-resnet/coi-minima"
CLAIMS = (
    "prop1-bound",
    "nonneg-coi-is-rank",
    "minima-non-negative",
    "minima-coi-is-rank",
    "minima-coi-bar-is-rank",
)
FIGURES = ("coi_minima",)
SCALARS = (
    "prop1_min_gap",
    "prop2_max_negative_mass",
    "prop2_max_rank_error",
)


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    exp = get(NAME)
    cfg = resolve_config(exp, "smoke")
    out = tmp_path_factory.mktemp("coi_minima")
    rec = run_experiment(exp, cfg, out, preset="smoke", progress=False)
    render_run(rec)
    return rec


def test_every_claim_is_reported(record) -> None:
    claims = json.loads((record.out / "claims.json").read_text())
    assert tuple(c["id"] for c in claims) == CLAIMS
    assert all(isinstance(c["passed"], bool) and c["expected"] for c in claims)


def test_figures_and_summary(record) -> None:
    for name in FIGURES:
        assert (record.out / "figures" / f"{name}.png").stat().st_size > 1000
    assert NAME in (record.out / "summary.md").read_text()


def test_measured_scalars(record) -> None:
    for point in record.points:
        assert point.status == "done"
        for key in SCALARS:
            assert key in point.scalars
