"""A 25th experiment is copy-and-fill: the module of `docs/add-an-experiment.md`, written
as is into a temporary package, runs through the real runner (smoke preset) and its
claims come out as declared; a diverged training makes every claim `not-measured`."""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
from pathlib import Path

import pytest

from bottlenecklab.experiments import (
    EXPERIMENTS,
    PointResult,
    register,
    resolve_config,
    run_experiment,
)
from bottlenecklab.experiments._checks import at_most, reported
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Measurement, Reads, Ungated
from bottlenecklab.experiments.leaky_resnet._common import LAYERS
from bottlenecklab.measure import TEST_ERROR

DOC = Path(__file__).parents[2] / "docs" / "add-an-experiment.md"


def _doc_module() -> str:
    """The first Python block of the how-to."""
    match = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert match, "docs/add-an-experiment.md has no python block"
    return match.group(1)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The how-to's module, imported from a temporary package and registered."""
    pkg = tmp_path / "toy_area"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""A toy area."""\n')
    (pkg / "my_figure.py").write_text(_doc_module())
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_area.my_figure")
    exp = module.EXPERIMENT
    register(exp)
    yield exp
    EXPERIMENTS.unregister(exp.name)
    for name in ("toy_area.my_figure", "toy_area"):
        sys.modules.pop(name, None)


def test_the_how_to_module_is_an_experiment_with_its_claims(toy):
    module = sys.modules["toy_area.my_figure"]
    error, rank = module.TEST_ERROR_CLAIM, module.TEACHER_RANK
    assert isinstance(toy, Experiment) and toy.specs == (error, rank)
    assert toy.reads_of(error.id) == Reads((TEST_ERROR,), window=0.5)
    assert toy.is_ungated(rank.id) and toy.reads_of(rank.id) is None
    assert toy.quantities == (TEST_ERROR,) and toy.measure is LAYERS
    assert toy.figures == ("hamiltonian_vs_leak",)


def test_the_toy_runs_through_the_runner_and_its_claims_are_judged(toy, tmp_path):
    module = sys.modules["toy_area.my_figure"]
    cfg = resolve_config(toy, "smoke")
    record = run_experiment(toy, cfg, tmp_path / "run", preset="smoke", progress=False)
    claims = {c.id: c for c in record.claims}
    assert list(claims) == [module.TEST_ERROR_CLAIM.id, module.TEACHER_RANK.id]
    rank = claims[module.TEACHER_RANK.id]
    k = cfg.task.k_star
    assert rank.state == "passed" and rank.certificate is None
    assert (
        rank.source == "000 App B" and rank.statement == f"the teacher has bottleneck rank k* = {k}"
    )
    assert rank.expected == f"in [{k:g}, {k:g}]"
    err = claims[module.TEST_ERROR_CLAIM.id]
    assert err.source == "000 Fig N" and err.statement.endswith("worst over L~ (1, 2)")
    assert err.expected == "<= 0.5" and isinstance(err.measured, float)
    # a smoke training is far from a critical point: the certificate refuses the claim
    assert err.certificate is not None and err.state == "not-converged"
    assert (tmp_path / "run" / "figures").exists() is False  # figures: `render_run`


def test_a_diverged_training_makes_every_claim_not_measured(toy, tmp_path):
    cfg = resolve_config(
        toy, "smoke", {"train.phases.0.lr": "1e30", "leaks": "1.0", "train.dtype": "float32"}
    )
    record = run_experiment(toy, cfg, tmp_path / "run", preset="smoke", progress=False)
    assert [p.status for p in record.points] == ["diverged"]
    for c in record.claims:
        assert c.state == "not-measured" and not c.passed, c.id
        assert str(c.measured).startswith("not measured: 1 of 1 trainings diverged: "), c.id


def _pt(status: str, x: float) -> PointResult:
    msg = "loss became nan" if status == "diverged" else ""
    return PointResult(f"p{x}", {"k": x}, status, msg, {"x": x}, [], [], 1, 0.0)


def _specs(partial: bool) -> list[ClaimSpec]:
    return [
        ClaimSpec(
            "small",
            "largest x over {n} points",
            Reads(("x",), window=1.0),
            lambda cfg, pts: at_most(max(pts.values("x")), 5.0, n=len(pts)),
            partial=partial,
        ),
        ClaimSpec("count", "points", Ungated("a count"), lambda c, p: reported(len(p))),
    ]


def _toy(specs: list[ClaimSpec]) -> Experiment:
    return Experiment(
        name="toy/unit",
        source="000 Fig 0",
        title="t",
        config=None,
        presets={},
        grid={"k": "ks"},
        measure=lambda m, d, c: Measurement({}),
        claims=specs,
    )


def test_one_diverged_point_of_two_makes_every_claim_not_measured():
    exp = _toy(_specs(partial=False))
    claims = exp.evaluate(None, [_pt("done", 1.0), _pt("diverged", 2.0)])
    assert [c.state for c in claims] == ["not-measured", "not-measured"]
    assert claims[0].measured == "not measured: 1 of 2 trainings diverged: loss became nan"
    assert claims[0].statement == "largest x over ? points"  # no outcome: unknown facts
    done = exp.evaluate(None, [_pt("done", 1.0), _pt("done", 6.0)])
    assert [(c.passed, c.measured) for c in done] == [(False, 6.0), (True, 2.0)]
    assert done[0].statement == "largest x over 2 points"


def test_a_partial_claim_reads_the_finished_points():
    exp = _toy(_specs(partial=True))
    claims = exp.evaluate(None, [_pt("done", 1.0), _pt("diverged", 9.0)])
    assert claims[0].passed and claims[0].measured == 1.0
    assert claims[1].state == "not-measured"  # the other claim is not partial
    none = exp.evaluate(None, [_pt("diverged", 1.0)])
    assert none[0].state == "not-measured"


def test_a_declaration_error_is_refused():
    specs = _specs(partial=False)
    with pytest.raises(ValueError, match="declared twice"):
        _toy([*specs, specs[0]])
    with pytest.raises(ValueError, match="reads"):  # derived from the claims, never given
        dataclasses.replace(_toy(specs), reads={"small": Reads(("y",), 1.0)})
    with pytest.raises(ValueError, match="nothing trains"):
        dataclasses.replace(_toy(specs), trains=False)
    with pytest.raises(ValueError, match="figure"):
        _toy([dataclasses.replace(specs[0], figure="nowhere")])


def test_a_claim_without_gate_is_only_reported():
    from bottlenecklab.experiments._verdicts import verdicts

    spread = ClaimSpec("spread", "x", None, lambda c, p: reported(p.last.scalars["x"]))
    exp = _toy([*_specs(partial=False), spread])
    fine = verdicts(exp, None, [_pt("done", 1.0)])
    assert [c.state for c in fine] == ["not-converged", "reported", "reported"]
    diverged = verdicts(exp, None, [_pt("diverged", 1.0)])
    assert {c.state for c in diverged} == {"not-measured"}
    asserted = dataclasses.replace(spread, check=lambda c, p: at_most(1.0, 2.0))
    with pytest.raises(ValueError, match="declares no gate"):
        verdicts(_toy([asserted]), None, [_pt("done", 1.0)])


def test_a_statement_that_is_no_template_is_refused_at_declaration():
    bad = dataclasses.replace(_specs(partial=False)[0], statement="x in {0, 1")
    with pytest.raises(ValueError, match="statement"):
        _toy([bad])
    braces = dataclasses.replace(_specs(partial=False)[1], statement="x in {{0, 1}}")
    assert _toy([braces]).evaluate(None, [_pt("done", 1.0)])[0].statement == "x in {0, 1}"
