"""Smoke runs of the paper-000 experiments: claim ids, figures and measured scalars."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bottlenecklab.experiments import PointResult, get, resolve_config, run_experiment
from bottlenecklab.experiments._spec import KINK_THRESHOLD
from bottlenecklab.experiments._verdicts import judge
from bottlenecklab.experiments.leaky_resnet import _coi, _flow
from bottlenecklab.experiments.leaky_resnet import coi_minima as cm
from bottlenecklab.experiments.leaky_resnet import discretization as disc
from bottlenecklab.experiments.leaky_resnet import hamiltonian_flow as hf
from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth as hvd
from bottlenecklab.experiments.leaky_resnet import layer_portrait as portrait
from bottlenecklab.experiments.leaky_resnet import path_bounds as pb
from bottlenecklab.experiments.leaky_resnet._overhead import (
    ADAPT_AA_SPREAD,
    ADAPT_LOAD,
    ADAPT_OVERHEAD,
)
from bottlenecklab.measure import COI_GAMMA_MIN, TEST_ERROR
from bottlenecklab.measure._hamiltonian import RANK_H_GAMMA_MEDIAN, RANK_H_MEDIAN
from bottlenecklab.measure._portrait import PORTRAIT
from bottlenecklab.measure._steps import RHO_MIDDLE_OVER_ENDS

# name -> (claim ids in order, figure files, scalars every point must measure)
EXPECTED = {
    hvd.EXPERIMENT.name: (
        tuple(c.id for c in hvd.EXPERIMENT.claims),
        ("hamiltonian_vs_leak", "layer_portrait"),
        tuple(str(q) for q in (RANK_H_MEDIAN, RANK_H_GAMMA_MEDIAN, COI_GAMMA_MIN, TEST_ERROR))
        + ("cp_residual_median",),
    ),
    portrait.EXPERIMENT.name: (
        tuple(c.id for c in portrait.EXPERIMENT.claims),
        ("layer_portrait",),
        tuple(q.name for q in PORTRAIT) + ("spread_H",),
    ),
    disc.EXPERIMENT.name: (
        (
            disc.ADAPTIVE_BEATS_EQUIDISTANT.id,
            disc.ADAPTIVE_STEPS_MIDDLE.id,
            disc.ADAPTIVE_OVERHEAD.id,
        ),
        ("error_vs_depth", "discretization_spectra", "pca_paths"),
        (TEST_ERROR.name, RHO_MIDDLE_OVER_ENDS.name, "pca_explained"),
    ),
    pb.EXPERIMENT.name: (
        (
            pb.PATH_LENGTH_SUBLINEAR.id,
            pb.PATH_LENGTH_CONSTANT.id,
            pb.PATH_LENGTH_METRIC_SLOPES.id,
            pb.B_BOUNDED.id,
            pb.BS_BOUNDED.id,
            pb.THM4_UPPER_CLAIM.id,
            pb.THM4_LOWER_CLAIM.id,
            pb.THM4_LOWER_CORRECTED_CLAIM.id,
            pb.THM4_PER_LAYER.id,
            pb.THM4_PER_LAYER_PAPER_FORM.id,
            pb.THM4_PER_LAYER_NEGATIVE_ARG.id,
            pb.THM4_CONSTANT_GAMMA.id,
        ),
        ("path_bounds", "layer_portrait"),
        (
            "path_length",
            "path_length_plain",
            "path_length_const",
            "thm4_window_used_max",
            "thm4_window_used_max_const",
            "B_max",
            "BS_max",
            "thm4_middle",
            "thm4_upper",
            "thm4_lower",
            "balancedness_max",
        ),
    ),
    hf.EXPERIMENT.name: (
        tuple(c.id for c in hf.CLAIMS),
        ("hamiltonian_flow",),
        ("order_ratio_smooth", "drift_kinked_20")  # the refinement's summary (not declared)
        + tuple(q.name for q in _flow.FLOW.quantities),
    ),
    cm.EXPERIMENT.name: (
        tuple(c.id for c in cm.CLAIMS),
        ("coi_minima",),
        tuple(q.name for q in _coi.COI_MINIMA.quantities),
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_claim_is_reported(name, smoke_record) -> None:
    _, _, out, _ = smoke_record(name)
    claims = json.loads((out / "claims.json").read_text())
    assert tuple(c["id"] for c in claims) == EXPECTED[name][0]
    assert all(isinstance(c["passed"], bool) and c["expected"] for c in claims)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_figures_and_summary(name, smoke_record) -> None:
    _, _, out, _ = smoke_record(name)
    for fig in EXPECTED[name][1]:
        assert (out / "figures" / f"{fig}.png").stat().st_size > 1000
    assert name in (out / "summary.md").read_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_measured_scalars(name, smoke_record) -> None:
    *_, record = smoke_record(name)
    assert record.points
    for point in record.points:
        assert point.status == "done"
        assert set(EXPECTED[name][2]) <= set(point.scalars)


TRAINED = (
    disc.EXPERIMENT.name,
    "leaky-resnet/hamiltonian-vs-depth",
    "leaky-resnet/layer-portrait",
    pb.EXPERIMENT.name,
)
UNTRAINED = {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)}


@pytest.mark.parametrize("name", TRAINED)
def test_every_claim_fails_on_an_untrained_network(name, tmp_path) -> None:
    """Claims about trained networks are gated by the convergence certificate: an untrained
    network (no training step at all) leaves every one of them `not-converged`, with the
    stationarity far above the threshold; only reported numbers and declared-ungated
    claims (a timing) escape the gate."""
    exp = get(name)
    cfg = resolve_config(exp, "smoke", UNTRAINED)
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    assert record.claims and all(p.steps == 0 for p in record.points)
    gated = [c for c in record.claims if c.asserted and not exp.is_ungated(c.id)]
    assert gated and not any(c.passed for c in gated)
    assert {c.state for c in gated} == {"not-converged"}
    assert all(c.certificate["stationarity"] > cfg.certify.threshold for c in gated)


REPORTED = {
    pb.B_BOUNDED.id,
    pb.BS_BOUNDED.id,
    pb.THM4_UPPER_CLAIM.id,
    disc.ADAPTIVE_OVERHEAD.id,
    hvd.ESTIMATOR_SPREAD.id,
    portrait.KINETIC_MIDDLE.id,
    portrait.NON_NEGATIVE.id,
    pb.PATH_LENGTH_METRIC_SLOPES.id,
    pb.THM4_PER_LAYER_PAPER_FORM.id,
    pb.THM4_PER_LAYER_NEGATIVE_ARG.id,
}


@pytest.mark.parametrize(
    "name, cid",
    [(n, c) for n in TRAINED for c in EXPECTED[n][0] if c not in REPORTED],
)
def test_every_asserted_trained_claim_is_read_or_declared_ungated(name, cid) -> None:
    exp = get(name)
    assert (exp.reads_of(cid) is not None) != exp.is_ungated(cid)


def _point(leak: float, **scalars) -> PointResult:
    return PointResult(f"p{leak:g}", {"model.leak": leak}, "done", "", scalars, [], [], 100, 1.0)


def _certified(scalars: dict, stationarity: float, moved: float = 0.0) -> dict:
    """A point's scalars with its certificate (`cert_stationarity`) and earlier values
    (`prev_*`, each `moved` away from the final one)."""
    prev = {f"prev_{k}": v - moved for k, v in scalars.items()}
    return {**scalars, **prev, "cert_stationarity": stationarity, "prev_step": 5000.0}


def _flagship_points(
    stationarity: float = 0.1, medians=(3.2, 4.1, 4.6), coi=(5.5, 5.0, 4.8), moved=0.0
):
    return [
        _point(
            leak,
            **_certified(
                {RANK_H_MEDIAN.name: m, COI_GAMMA_MIN.name: c, TEST_ERROR.name: 0.3},
                stationarity,
                moved,
            ),
        )
        for leak, m, c in zip((6.0, 12.0, 24.0), medians, coi)
    ]


def _states(name: str, points: list[PointResult]) -> dict[str, str]:
    exp = get(name)
    cfg = resolve_config(exp, "quick")
    return {c.id: c.state for c in judge(exp, cfg, exp.evaluate(cfg, points), points)}


FLAGSHIP = hvd.EXPERIMENT.name
SPREAD, TOP = hvd.ESTIMATOR_SPREAD, hvd.RANK_AT_LARGEST_LEAK
BELOW, COI = hvd.FROM_BELOW, hvd.COI_FROM_ABOVE


CERTIFIED = 0.5 * KINK_THRESHOLD  # a stationarity every gate accepts


def test_flagship_claims_pass_when_certified_and_not_converged_above_the_threshold() -> None:
    threshold = resolve_config(get(FLAGSHIP), "quick").certify.threshold
    got = _states(FLAGSHIP, _flagship_points(CERTIFIED))
    assert got.pop(SPREAD.id) == "reported"
    assert set(got.values()) == {"passed"}
    # the median claims read -(2/L~)H, discontinuous at kinks: the tight gate
    got = _states(FLAGSHIP, _flagship_points(KINK_THRESHOLD * (1 + 1e-6)))
    assert got.pop(SPREAD.id) == "reported" and got.pop(hvd.TEST_ERROR_CLAIM.id) == "passed"
    assert set(got.values()) == {"not-converged"}
    got = _states(FLAGSHIP, _flagship_points(threshold * (1 + 1e-6)))
    assert got.pop(SPREAD.id) == "reported"
    assert set(got.values()) == {"not-converged"}


def test_flagship_claims_not_converged_when_the_median_moved_in_the_last_phase() -> None:
    """`from-below` reads the medians with window 0.5: a move of 0.2 > 0.5/4 over the
    last phase leaves it not-converged even with a certified stationarity."""
    got = _states(FLAGSHIP, _flagship_points(CERTIFIED, moved=0.2))
    assert got[BELOW.id] == "not-converged"
    assert got[TOP.id] == "passed"  # window 1.5: 0.2 <= 0.375


@pytest.mark.parametrize(
    "medians, coi, moved, failing",
    [
        ((3.2, 4.1, 3.7), (5.5, 5.0, 4.8), 0.0, BELOW),  # a dip of 0.4 > 0.1
        ((3.2, 5.8, 4.6), (6.5, 6.0, 4.8), 0.0, BELOW),  # above k* + 0.5 on the way
        ((3.2, 4.1, 6.0), (5.5, 5.0, 6.5), 0.0, TOP),  # overshoots k*
        ((3.2, 4.1, 4.6), (5.5, 3.5, 4.8), 0.0, COI),  # COI below H by 0.6
        # the untrained net's values (vacuity audit): COI far above, out of k*'s window
        ((3.2, 4.1, 4.6), (5.5, 5.0, 9357.0), 0.0, COI),
        ((3.2, 4.1, 4.6), (5.5, 5.0, 5.6), 0.0, COI),  # above k* + 0.5
        # median 4.1 inside [4, 5.5], but +- its spread 0.11 reaches below 4
        ((3.2, 4.0, 4.1), (5.5, 5.0, 4.8), 0.11, TOP),
    ],
)
def test_flagship_claims_fail_on_wrong_converged_results(medians, coi, moved, failing) -> None:
    got = _states(FLAGSHIP, _flagship_points(CERTIFIED, medians, coi, moved))
    assert got[failing.id] == "failed"


def test_flagship_estimator_spread_is_the_last_phase_change_at_the_largest_leak() -> None:
    exp = get(FLAGSHIP)
    claims = exp.evaluate(resolve_config(exp, "quick"), _flagship_points(CERTIFIED, moved=0.05))
    spread = {c.id: c for c in claims}[SPREAD.id]
    assert spread.asserted is False
    assert spread.measured == pytest.approx(0.05)


_THM4_KEYS = (
    "thm4_upper thm4_middle thm4_lower thm4_lower_corrected thm4_per_layer_frac "
    "thm4_arg_negative thm4_arg_min thm4_arg_min_const thm4_upper_const thm4_middle_const "
    "thm4_lower_const"
).split()


def _path_points(path_length, used=(0.5, 0.5), leaks=(6.0, 12.0, 24.0), metric=None):
    """Certified points with the plain path length `path_length(L~)` (the kernel-metric
    lengths `metric(L~)`, default the same), and the largest used fractions of Thm 4 (2)'s
    window at the layer ridges and at `1/L~` (`used`: two numbers for every point, or one
    pair per point)."""
    metric = metric or path_length
    per_point = used if isinstance(used[0], tuple) else (used,) * len(leaks)
    thm4 = {k: 0.0 for k in _THM4_KEYS}
    return [
        _point(
            leak,
            **_certified(
                {
                    "path_length_plain": path_length(leak),
                    "path_length": metric(leak),
                    "path_length_const": metric(leak),
                    "rho_leak_max": 0.4,
                    "B_max": 3.0,
                    "BS_max": 1.0 + 0.01 * leak,
                    "thm4_window_used_max": u[0],
                    "thm4_window_used_max_const": u[1],
                }
                | thm4,
                CERTIFIED,
            ),
        )
        for leak, u in zip(leaks, per_point)
    ]


PATH = pb.EXPERIMENT.name


@pytest.mark.parametrize(
    "path_length, sublinear, constant",
    [
        (lambda L: 20.0 * L**0.34, "passed", "failed"),  # growth like the old l_gamma
        (lambda L: 30.0 + 1e-3 * L, "passed", "passed"),  # flat
        (lambda L: 2.0 * L**0.6, "failed", "failed"),  # l/L~ falls, slope 0.6 > 1/2
        (lambda L: 3.0 * L, "failed", "failed"),  # linear: l/L~ constant, not falling
    ],
)
def test_path_length_sublinear_and_constant(path_length, sublinear, constant) -> None:
    got = _states(PATH, _path_points(path_length))
    assert got[pb.PATH_LENGTH_SUBLINEAR.id] == sublinear
    assert got[pb.PATH_LENGTH_CONSTANT.id] == constant
    assert got[pb.B_BOUNDED.id] == got[pb.BS_BOUNDED.id] == "reported"  # vacuous as bounds (V6)


def test_path_length_constant_reads_the_plain_length_and_sublinear_the_kernel_one() -> None:
    """The paper's "relatively constant" (App B: no kernel metric) is judged on the plain
    length, Thm 4's sublinearity on l_gamma: a flat plain length with a growing l_gamma
    passes the first, a growing plain length with a flat l_gamma fails it."""
    flat, growing = (lambda L: 30.0), (lambda L: 20.0 * L**0.34)
    got = _states(PATH, _path_points(flat, metric=lambda L: 3.0 * L))
    assert got[pb.PATH_LENGTH_CONSTANT.id] == "passed"
    assert got[pb.PATH_LENGTH_SUBLINEAR.id] == "failed"
    got = _states(PATH, _path_points(growing, metric=flat))
    assert got[pb.PATH_LENGTH_CONSTANT.id] == "failed"
    assert got[pb.PATH_LENGTH_SUBLINEAR.id] == "passed"
    assert got[pb.PATH_LENGTH_METRIC_SLOPES.id] == "reported"


@pytest.mark.parametrize(
    "used, state",
    [
        ((0.5, 0.9), "passed"),
        ((-0.99, 1.0), "passed"),  # used values are |excess| / window end
        ((1.2, 0.5), "failed"),  # one layer beyond its window at the layer ridge
        ((0.5, 1.01), "failed"),  # ... at gamma = 1/L~
        (((0.5, 0.5), (0.5, 0.5), (3.0, 0.5)), "failed"),  # only at the largest L~
    ],
)
def test_thm4_per_layer_fails_when_one_layer_leaves_its_window(used, state) -> None:
    got = _states(PATH, _path_points(lambda L: 30.0, used=used))
    assert got[pb.THM4_PER_LAYER.id] == state
    assert got[pb.THM4_UPPER_CLAIM.id] == "reported"  # holds on untrained nets (V7)
    assert (
        got[pb.THM4_PER_LAYER_PAPER_FORM.id] == got[pb.THM4_PER_LAYER_NEGATIVE_ARG.id] == "reported"
    )


def test_thm4_per_layer_not_converged_when_the_used_fraction_moved() -> None:
    """Value stability reads the used fractions with the window's scale (1): a move of
    0.3 > 1/4 leaves the claim not-converged."""
    points = _path_points(lambda L: 30.0)
    points[-1].earlier.values["thm4_window_used_max"] = 0.5 - 0.3
    assert _states(PATH, points)[pb.THM4_PER_LAYER.id] == "not-converged"


DISC = disc.EXPERIMENT.name


def _disc_points(overhead: float, aa: float) -> list[PointResult]:
    out = []
    for depth in (6, 10):
        for schedule, err in (("equidistant", 0.5), ("adaptive", 0.4)):
            scalars = {TEST_ERROR.name: err, RHO_MIDDLE_OVER_ENDS.name: 1.3}
            if schedule == "adaptive":
                scalars |= {
                    ADAPT_OVERHEAD.name: overhead,
                    ADAPT_AA_SPREAD.name: aa,
                    ADAPT_LOAD.name: 0.5,
                }
            out.append(
                PointResult(
                    f"{schedule}{depth}",
                    {"model.depth": depth, "model.schedule": schedule},
                    "done",
                    "",
                    _certified(scalars, 0.1),
                    [],
                    [],
                    100,
                    1.0,
                )
            )
    return out


def test_adaptive_beats_equidistant_fails_on_ties() -> None:
    """At init the two schedules are one network: equal test errors at every depth are no
    win (vacuity audit V8), so the claim fails there."""
    exp = get(DISC)
    cfg = resolve_config(exp, "quick")
    points = [
        dataclasses.replace(p, scalars={**p.scalars, TEST_ERROR.name: 0.5})
        for p in _disc_points(0.0, 0.0)
    ]
    claims = {c.id: c for c in exp.evaluate(cfg, points)}
    assert claims[disc.ADAPTIVE_BEATS_EQUIDISTANT.id].passed is False
    assert claims[disc.ADAPTIVE_BEATS_EQUIDISTANT.id].measured == 0


@pytest.mark.parametrize("overhead", [-0.046, 0.02, 0.078])
def test_adaptive_overhead_is_reported_beside_its_aa_spread(overhead) -> None:
    """In the experiment the overhead is a reported number with its A/A control (a
    negative overhead, measured on a shared machine, is noise): never passed or failed."""
    exp = get(DISC)
    cfg = resolve_config(exp, "quick")
    points = _disc_points(overhead, 0.013)
    claims = {c.id: c for c in judge(exp, cfg, exp.evaluate(cfg, points), points)}
    c = claims[disc.ADAPTIVE_OVERHEAD.id]
    assert c.state == "reported" and c.asserted is False
    assert c.measured == pytest.approx(overhead)
    assert "A/A 1.3 %" in c.statement and "make bench" in c.statement
    assert claims[disc.ADAPTIVE_BEATS_EQUIDISTANT.id].state == "passed"


def _timing(adaptive: float, fixed_a: float, fixed_b: float, load: float, cpus: int = 2):
    from bottlenecklab.experiments.leaky_resnet._overhead import OverheadTiming

    return OverheadTiming(adaptive, fixed_a, fixed_b, load, cpus, blocks=10, steps=20)


def test_overhead_timing_quantities() -> None:
    t = _timing(1.03, 0.99, 1.01, load=1.5, cpus=2)
    assert t.overhead == pytest.approx(0.03)
    assert t.aa_spread == pytest.approx(0.02 / 0.99)
    assert t.other_load == pytest.approx(0.25)
    assert _timing(1.0, 1.0, 1.0, load=0.3).other_load == 0.0


@pytest.mark.parametrize(
    "timing, verdict",
    [
        (_timing(1.02, 1.0, 1.005, load=1.2), "passed"),  # 1.75 % with a quiet A/A pair
        (_timing(1.05, 1.0, 1.005, load=1.2), "failed"),  # 4.75 % > 3 %
        (_timing(1.02, 1.0, 1.02, load=1.2), "not-measured"),  # A/A differ by 2 % > 1 %
        (_timing(1.05, 1.0, 1.02, load=1.2), "not-measured"),  # ... even where it would fail
        (_timing(1.02, 1.0, 1.005, load=6.0), "not-measured"),  # loaded: 2.5 per core
        (_timing(0.95, 1.0, 1.0, load=6.0), "not-measured"),  # a negative overhead, loaded
    ],
)
def test_overhead_verdict_is_not_measured_when_the_aa_control_or_the_load_says_noise(
    timing, verdict
) -> None:
    from bottlenecklab.experiments.leaky_resnet._overhead import overhead_verdict

    cfg = resolve_config(get(DISC), "paper")
    assert (cfg.overhead_bound, cfg.aa_limit, cfg.load_limit) == (0.03, 0.01, 0.25)
    assert overhead_verdict(timing, cfg.overhead_bound, cfg.aa_limit, cfg.load_limit) == verdict


def test_overhead_with_control_times_three_arms_and_needs_adaptive_steps() -> None:
    import torch

    from bottlenecklab.experiments.leaky_resnet._overhead import overhead_with_control
    from bottlenecklab.models import LeakyResNetConfig
    from bottlenecklab.tasks import TeacherConfig
    from bottlenecklab.training import TrainConfig

    data = TeacherConfig(dims=(4, 2, 4), hidden=8, n_train=16, n_test=8).build(seed=0)
    net = LeakyResNetConfig(width=6, depth=4, leak=1.0, schedule="adaptive").build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    rho = net.rho.detach().clone()
    t = overhead_with_control(net, data, TrainConfig(dtype="float64"), blocks=3)
    assert t.blocks == 3 and t.steps == 2 * net.adapt_every
    assert min(t.adaptive_s, t.fixed_a_s, t.fixed_b_s) > 0 and t.cpus >= 1
    torch.testing.assert_close(net.rho, rho)  # the copies are timed, not the model
    fixed = LeakyResNetConfig(width=6, depth=4, leak=1.0).build(data.d_in, data.d_out, seed=1)
    with pytest.raises(ValueError, match="adaptive"):
        overhead_with_control(fixed, data, TrainConfig())


def test_path_length_constant_is_the_registered_finding() -> None:
    """The re-measured finding (plain length, slope 0.70 at a fixed rho L~) stays
    registered on `path-length-constant`: a failing plain length carries it."""
    exp, points = get(PATH), _path_points(lambda L: 200.0 * L**0.7)
    cfg = resolve_config(exp, "quick")
    claims = {c.id: c for c in judge(exp, cfg, exp.evaluate(cfg, points), points)}
    assert claims[pb.PATH_LENGTH_CONSTANT.id].state == "failed"
    assert claims[pb.PATH_LENGTH_CONSTANT.id].finding == f"{PATH}:{pb.PATH_LENGTH_CONSTANT.id}"
    assert claims[pb.PATH_LENGTH_SUBLINEAR.id].finding is None
