"""Experiments of paper 002 (`talk/*`): smoke runs (API and CLI), claims that FAIL on
crafted wrong results, and (slow) every claim of the quick presets passing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bottlenecklab.cli import main
from bottlenecklab.experiments import PointResult, get, resolve_config, run_experiment
from bottlenecklab.experiments.talk import _classify as classify
from bottlenecklab.experiments.talk import _cnn as modes
from bottlenecklab.experiments.talk import _rates as rates
from bottlenecklab.experiments.talk import kernel_vs_depth as kvd
from bottlenecklab.experiments.talk import newtonian_cnn as cnn
from bottlenecklab.experiments.talk import tripoints as tp
from bottlenecklab.measure import MIDDLE_AFFINE_RANK, MIDDLE_RANK, N_TRAIN, TEST_COST
from bottlenecklab.measure._decision import TRIPOINTS

NAMES = ("talk/kernel-vs-depth", "talk/tripoints", "talk/newtonian-cnn")


def _point(
    point: dict[str, Any], values: dict[Any, float] | None = None, **scalars: float
) -> PointResult:
    """A finished point with `values` (quantity -> value) among its scalars."""
    named = {str(q): v for q, v in (values or {}).items()}
    return PointResult("x", point, "done", "", {**named, **scalars}, [], [], 0, 0.0, {})


@pytest.mark.parametrize("name", NAMES)
def test_smoke_run_writes_claims_and_figures(smoke_record, name) -> None:
    exp, _, out, record = smoke_record(name)
    assert record.claims and (out / "claims.json").exists()
    assert all(p.status == "done" for p in record.points)
    for fig in exp.figures:
        assert (out / "figures" / f"{fig}.png").exists()


@pytest.mark.parametrize("name", NAMES)
def test_smoke_run_through_the_cli(name, tmp_path) -> None:
    out = tmp_path / "run"
    args = ["run", name, "--preset", "smoke", "--out", str(out), "--jobs", "1", "--threads", "1"]
    assert main(args) == 0
    assert json.loads((out / "claims.json").read_text())


# ---------------------------------------------------------------- kernel-vs-depth


def _kernel_points(slope1: float, slope2: float) -> list[PointResult]:
    """Errors `N^slope` for the GP targets, a flat error for the composition."""
    return [
        _point(
            {"task.n_train": n, "seed": s},
            {
                N_TRAIN: float(n),
                rates.GP_ERROR.at(1): float(n) ** slope1,
                rates.GP_ERROR.at(2): float(n) ** slope2,
                rates.KERNEL_TEST_ERROR: 1.0,
                TEST_COST: 0.5,
            },
        )
        for n in (32, 64, 128, 256, 512, 1024)
        for s in (0, 1)
    ]


@pytest.mark.parametrize(
    "slopes, verdicts",
    [
        ((-1.0, -0.5), (True, True)),
        ((-0.5, -0.5), (False, True)),  # d = 1 too slow
        ((-1.0, -1.0), (True, False)),  # no curse in d = 2
        ((-1.3, -0.35), (False, False)),
    ],
)
def test_kernel_claims(slopes, verdicts) -> None:
    exp = get("talk/kernel-vs-depth")
    got = {
        c.id: c.passed for c in exp.evaluate(resolve_config(exp, "quick"), _kernel_points(*slopes))
    }
    assert (got[kvd.GP_SLOPE[1].id], got[kvd.GP_SLOPE[2].id]) == verdicts
    assert got[kvd.KERNEL_COMPOSITION_SLOPE.id] and got[kvd.NET_COMPOSITION_SLOPE.id]


def test_kernel_claims_fail_without_points() -> None:
    exp = get("talk/kernel-vs-depth")
    assert not any(c.passed for c in exp.evaluate(resolve_config(exp, "quick"), []))


# ---------------------------------------------------------------- tripoints


def _tri_points(deep_ranks, deep_tri, shallow_tri, shallow_ranks=(2, 2, 2)) -> list[PointResult]:
    """Crafted runs: per seed the deep net's middle affine rank and tripoint counts (both
    resolutions) and the shallow net's."""
    out = []
    for s, (rank, dt, st, srank) in enumerate(
        zip(deep_ranks, deep_tri, shallow_tri, shallow_ranks)
    ):
        for arch, r, t in (("deep", rank, dt), ("shallow", srank, st)):
            out.append(
                _point(
                    {"arch": arch, "seed": s},
                    {
                        MIDDLE_AFFINE_RANK: float(r),
                        classify.MIDDLE_AFFINE_RATIO: 0.05 if r == 1 else 0.6,
                        MIDDLE_RANK: float(r + 1),  # the weight rank counts the offset
                        TRIPOINTS.at(256): float(t[0]),
                        TRIPOINTS.at(512): float(t[1]),
                    },
                )
            )
    return out


GOOD = ((1, 1, 2), ((0, 0), (0, 0), (1, 0)), ((2, 2), (1, 1), (0, 0)))


@pytest.mark.parametrize(
    "ranks, deep_tri, shallow_tri, failing",
    [
        (*GOOD, None),
        ((2, 1, 2), *GOOD[1:], tp.DEEP_AFFINE_RANK_1.id),  # only one seed at rank 1
        (GOOD[0], ((0, 0), (0, 1), (1, 0)), GOOD[2], tp.RANK1_NO_TRIPOINT.id),  # one res suffices
    ],
)
def test_tripoint_claims(ranks, deep_tri, shallow_tri, failing) -> None:
    exp = get("talk/tripoints")
    cfg = resolve_config(exp, "quick")
    claims = exp.evaluate(cfg, _tri_points(ranks, deep_tri, shallow_tri))
    got = {c.id: c.passed for c in claims if c.asserted}
    assert got == {k: k != failing for k in got}
    assert set(got) == {tp.RANK1_NO_TRIPOINT.id, tp.DEEP_AFFINE_RANK_1.id}
    shallow = next(c for c in claims if c.id == tp.SHALLOW_TRIPOINT.id)  # a premise: reported
    assert not shallow.asserted and shallow.measured == 2


def test_a_flat_shallow_net_with_a_tripoint_fails_the_slide() -> None:
    """The statement covers every 1-D affine net, shallow ones too (planted counter-case)."""
    exp = get("talk/tripoints")
    pts = _tri_points(*GOOD, shallow_ranks=(2, 1, 2))  # seed 1's shallow net: flat, 1 tripoint
    got = {c.id: c for c in exp.evaluate(resolve_config(exp, "quick"), pts)}
    assert not got[tp.RANK1_NO_TRIPOINT.id].passed
    assert got[tp.RANK1_NO_TRIPOINT.id].measured == 1


def test_the_slide_is_not_measured_without_a_flat_net() -> None:
    exp = get("talk/tripoints")
    pts = _tri_points((2, 2, 2), *GOOD[1:])
    got = {c.id: c for c in exp.evaluate(resolve_config(exp, "quick"), pts)}
    assert got[tp.RANK1_NO_TRIPOINT.id].state == "not-measured"
    assert not got[tp.DEEP_AFFINE_RANK_1.id].passed


def test_the_finding_is_the_figure_and_the_conditional_stays_asserted() -> None:
    """Spec `depth-and-rank.md`, Findings: the finding is that the slide's figure is not
    reproduced (no deep net rank 1); the slide's conditional "a rank-1 classifier has no
    tripoints" is its own asserted claim, not-measured while no net is rank 1."""
    from bottlenecklab.experiments import expected_states
    from bottlenecklab.experiments._findings import finding_of
    from bottlenecklab.experiments._verdicts import judge

    name, deep, cond = tp.EXPERIMENT.name, tp.DEEP_AFFINE_RANK_1.id, tp.RANK1_NO_TRIPOINT.id
    f = finding_of(name, deep)
    assert f is not None and f.spec == "depth-and-rank.md, Findings"
    assert "not reproduced on the layouts tried" in f.measured
    assert "0.382" in f.measured and "0.640" in f.measured
    assert f.conditional == (cond,)
    assert finding_of(name, cond) is None
    assert expected_states(name, cond) == ("not-measured", "passed")
    assert expected_states(name, deep) == ("failed",)
    exp = get(name)
    cfg = resolve_config(exp, "quick")
    claims = {c.id: c for c in exp.evaluate(cfg, _tri_points((2, 2, 2), *GOOD[1:]))}
    assert claims[cond].asserted
    assert "the slide's figure" in claims[deep].statement
    # the runner marks the finding's claim; the conditional stays not-measured
    judged = {c.id: c for c in judge(exp, cfg, list(claims.values()), [])}
    assert judged[deep].finding == f.key
    assert judged[cond].state == "not-measured"


# ---------------------------------------------------------------- newtonian-cnn


def _cnn(over: dict[Any, float]) -> list[PointResult]:
    values = {
        modes.MIDDLE_LAYERS: 3.0,
        modes.MIDDLE_LOW_MODE_LAYERS: 2.0,
        modes.BASELINE_TEST_COST: 0.35,
        modes.RELATIVE_TEST_COST: 0.1,
    }
    return [_point({}, {**values, **over})]


@pytest.mark.parametrize(
    "over, verdicts",
    [
        ({}, (True, True)),
        ({modes.RELATIVE_TEST_COST: 0.3}, (False, True)),
        ({modes.MIDDLE_LOW_MODE_LAYERS: 1.0}, (True, False)),
    ],
)
def test_newtonian_claims(over, verdicts) -> None:
    exp = get("talk/newtonian-cnn")
    got = {c.id: c.passed for c in exp.evaluate(resolve_config(exp, "quick"), _cnn(over))}
    assert got == dict(zip((cnn.NEXT_STEP.id, cnn.MIDDLE_LOW_MODES.id), verdicts))


# ---------------------------------------------------------------- untrained networks

UNTRAINED = {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)}
TRAINED_CLAIMS = {
    "talk/tripoints": (tp.DEEP_AFFINE_RANK_1.id, tp.RANK1_NO_TRIPOINT.id),
    "talk/newtonian-cnn": (cnn.NEXT_STEP.id, cnn.MIDDLE_LOW_MODES.id),
}


@pytest.mark.parametrize("name", sorted(TRAINED_CLAIMS))
def test_every_trained_claim_is_not_converged_on_an_untrained_network(name, tmp_path) -> None:
    """Claims about trained networks go through the certificate: no training step at all
    leaves every one of them `not-converged` (the slide's statement on 1-D affine nets may
    instead be `not-measured`: a random net's middle representation is not 1-D)."""
    exp = get(name)
    cfg = resolve_config(exp, "smoke", UNTRAINED)
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    assert record.claims and all(p.steps == 0 for p in record.points)
    states = {c.id: c.state for c in record.claims}
    for cid in TRAINED_CLAIMS[name]:
        conditional = cid == tp.RANK1_NO_TRIPOINT.id
        ok = {"not-converged", "not-measured"} if conditional else {"not-converged"}
        assert states[cid] in ok, (cid, states[cid])
    certs = [c.certificate for c in record.claims if c.state == "not-converged"]
    assert certs and all(c["stationarity"] > c["threshold"] for c in certs)


def test_kernel_claims_are_ungated() -> None:
    """The asserted kernel claims are closed-form estimators: declared `ungated`, no reads."""
    exp = get("talk/kernel-vs-depth")
    assert not exp.reads
    assert all(exp.is_ungated(c.id) for c in kvd.GP_SLOPE.values())


# ---------------------------------------------------------------- quick presets


OK = ("passed", "reported")
