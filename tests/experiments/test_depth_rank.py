"""The experiments of papers 001/002 (`depth_rank`): smoke runs (claims reported, figures),
claims that FAIL on crafted wrong results, and (slow) every claim of the quick presets."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import scipy.stats
import torch

from bottlenecklab.config import apply_overrides
from bottlenecklab.experiments import (
    PointResult,
    get,
    point_requests,
    resolve_config,
    run_experiment,
)
from bottlenecklab.experiments.fcnn import bottleneck_bounds as bb
from bottlenecklab.experiments.fcnn import rank_vs_depth as rvd
from bottlenecklab.experiments.fcnn import symmetry_dynamics as sd
from bottlenecklab.experiments.linear import _representation as lq
from bottlenecklab.experiments.linear import representation_cost as rc
from bottlenecklab.measure import (
    COR8_BOUND,
    DEPTH,
    K_STAR,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    NORM_SQ,
    TRAIN_COST,
    Quantity,
)
from bottlenecklab.measure._jacobian import (
    RANDOM_CHAIN_SLACK,
    RANDOM_THM15_SLACK,
    TRAINED_CHAIN_SLACK,
    TRAINED_THM15_SLACK,
)
from bottlenecklab.measure._layer_ranks import (
    COR8_MIDDLE_MAX,
    COR8_MIDDLE_MEDIAN,
    COR8_MIDDLE_MEDIAN_INIT,
    COR8_MIDDLE_MEDIAN_RANDOM,
    COR8_RANDOM_BELOW,
    OFF_RANK_LAYERS,
)
from bottlenecklab.measure._ntk import NTK_LAMBDA_ETA, NTK_LAMBDA_ETA_AMPLITUDE, NTK_SCALE

LINEAR = rc.EXPERIMENT.name
CLOSED_FORMS = {q.name for q in lq.CLOSED_FORMS}

EXPECTED = {
    bb.EXPERIMENT.name: (
        (
            bb.CHAIN_RANDOM.id,
            bb.CHAIN_TRAINED.id,
            bb.THM15_RANDOM.id,
            bb.THM15_TRAINED.id,
            bb.COR8_CLAIM.id,
            bb.COR8_SLACK.id,
            bb.COR8_RANDOM_RANK.id,
            bb.COR8_SLOPE.id,
            bb.NTK_STABILITY.id,
            bb.NTK_SCALE_CLAIM.id,
        ),
        ("bottleneck_bounds",),
        (
            RANDOM_CHAIN_SLACK.name,
            TRAINED_THM15_SLACK.name,
            COR8_BOUND.name,
            COR8_MIDDLE_MEDIAN.name,
            "cor8_middle_median_random_min",
            COR8_RANDOM_BELOW.name,
            NTK_LAMBDA_ETA.name,
        ),
    ),
    rvd.EXPERIMENT.name: (
        (
            rvd.RANK_FALLS.id,
            rvd.K_STAR_REACHED.id,
            rvd.SLOPE_IS_RANK.id,
            rvd.ONLY_MIDDLE_GROWS.id,
            rvd.COLLAPSE_ABOVE.id,
        ),
        ("rank_vs_depth", "depth_spectra"),
        tuple(q.name for q in (NORM_SQ, MIDDLE_RANK, OFF_RANK_LAYERS, TRAIN_COST)),
    ),
    LINEAR: (
        tuple(c.id for c in rc.CLAIMS),
        ("representation_cost",),
        tuple(q.name for q in (*lq.TRAINED, *lq.CLOSED_FORMS)),
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
        assert set(EXPECTED[name][2]) - CLOSED_FORMS <= set(point.scalars)
    # the closed forms (pure theory) are computed once, at the grid's first depth
    assert any(CLOSED_FORMS & set(EXPECTED[name][2]) <= set(p.scalars) for p in record.points)


def test_smoke_run_through_the_cli(tmp_path, capsys) -> None:
    """`bottlenecklab run` (`cli.main`, in this process) on the smoke preset."""
    from bottlenecklab.cli import main

    args = ["run", LINEAR, "--preset", "smoke", "--out", str(tmp_path / "run")]
    assert main([*args, "--jobs", "1", "--threads", "1"]) == 0, capsys.readouterr().err
    assert (tmp_path / "run" / "claims.json").exists()


# ------------------------------------------------------------ linear/representation-cost


@pytest.fixture(scope="module")
def linear_good(smoke_record) -> tuple:
    exp, cfg, _, record = smoke_record(LINEAR)
    return exp, cfg, record.points[0]


def _with(point: PointResult, values: dict[Quantity, float]) -> PointResult:
    return dataclasses.replace(
        point, scalars={**point.scalars, **{q.name: v for q, v in values.items()}}
    )


TRAINED_LINEAR = (rc.TRAINED_NORM, rc.TRAINED_GRAMS, rc.TRAINED_BALANCED)


def test_linear_closed_form_claims_pass_on_the_smoke_run(linear_good) -> None:
    exp, cfg, point = linear_good
    got = {c.id: c.passed for c in exp.evaluate(cfg, [point])}
    for spec in rc.CLAIMS:
        if spec not in TRAINED_LINEAR:
            assert got[spec.id], spec.id


@pytest.mark.parametrize(
    "values, failing",
    [
        ({lq.REMAINDER_SLOPE: -2.9}, rc.REMAINDER_SLOPE_CLAIM),  # e.g. the constant term left in
        ({lq.REMAINDER_CONSTANT_RATIO: 1.2}, rc.REMAINDER_CONSTANT_CLAIM),
        ({lq.FACTORIZATION_ERRORS[0]: 1e-6}, rc.OPTIMAL_FACTORIZATION),
        ({lq.NORM_GAP: 0.05}, rc.TRAINED_NORM),
        ({lq.GRAM_ERROR_MAX: 0.2}, rc.TRAINED_GRAMS),
        ({lq.BALANCE_MAX: 0.3}, rc.TRAINED_BALANCED),
        ({lq.PROP12_NORM_ERROR: 1.0}, rc.PROP12),
        ({lq.EXAMPLE20_F_ERROR: 1e-3}, rc.EXAMPLE20),
        ({lq.EXAMPLE20_SLOPE: -0.3}, rc.EXAMPLE20_EXCESS),
    ],
    ids=lambda x: x.id if hasattr(x, "id") else None,
)
def test_linear_claims_fail_on_wrong_results(linear_good, values, failing) -> None:
    exp, cfg, point = linear_good
    got = {c.id: c.passed for c in exp.evaluate(cfg, [_with(point, values)])}
    assert got[failing.id] is False


def test_linear_trained_claims_fail_on_an_untrained_network(tmp_path) -> None:
    """No training step: the He-initialized linear net is neither balanced nor on the
    geodesic, and its norm exceeds the cost of its matrix."""
    exp = get(LINEAR)
    cfg = apply_overrides(
        resolve_config(exp, "smoke"),
        {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)},
    )
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    states = {c.id: c.state for c in record.claims}
    trained = {c.id for c in TRAINED_LINEAR}
    assert {states[c] for c in trained} == {"not-converged"}
    # and on their own criteria too
    by_id = {c.id: c for c in record.claims}
    assert all(by_id[c].certificate["stationarity"] > 1 for c in trained)
    # the closed forms do not depend on training
    assert all(states[c] == "passed" for c in states if c not in trained)


# ------------------------------------------------------------------ fcnn/rank-vs-depth

RANK = rvd.EXPERIMENT.name


def _rank_points(
    norm=lambda L, k: k * L + 10.0,
    rank=lambda L: 3 if L <= 6 else 2,
    cost=lambda L: 0.01 if L <= 20 else 0.5,
    off=lambda L, k: 3.0,
) -> list[PointResult]:
    out = []
    for L in (4, 6, 8, 12, 16, 20, 24):
        for seed in (0, 1, 2):
            k = rank(L)
            scalars = {
                DEPTH.name: float(L),
                NORM_SQ.name: norm(L, k) + 0.1 * seed,
                MIDDLE_RANK.name: float(k),
                OFF_RANK_LAYERS.name: off(L, k),
                TRAIN_COST.name: cost(L),
                K_STAR.name: 2.0,
            }
            out.append(
                PointResult(
                    "id", {"model.depth": L, "seed": seed}, "done", "", scalars, [], [], 1, 1.0
                )
            )
    return out


def _rank_verdicts(points, preset: str = "quick") -> dict[str, bool]:
    """The asserted claims' verdicts (the quick preset reports `collapse-above`)."""
    exp = get(RANK)
    return {c.id: c.passed for c in exp.evaluate(resolve_config(exp, preset), points) if c.asserted}


def test_rank_claims_pass_on_fig1_like_results() -> None:
    assert all(_rank_verdicts(_rank_points()).values())


@pytest.mark.parametrize(
    "kwargs, failing",
    [
        ({"rank": lambda L: 2 if L <= 6 else 3}, rvd.RANK_FALLS.id),
        ({"rank": lambda L: 5 if L <= 6 else 4}, rvd.K_STAR_REACHED.id),
        ({"norm": lambda L, k: 1.5 * k * L + 10.0}, rvd.SLOPE_IS_RANK.id),
        ({"off": lambda L, k: float(L) / 2}, rvd.ONLY_MIDDLE_GROWS.id),
    ],
)
def test_rank_claims_fail_on_wrong_results(kwargs, failing) -> None:
    assert _rank_verdicts(_rank_points(**kwargs))[failing] is False


def test_collapse_is_asserted_on_the_full_range_and_fails_below_an_all_fit_depth() -> None:
    """The paper preset's grid reaches the collapse: a net that stops fitting at L = 8
    below depths where every seed fits fails the claim."""
    assert _rank_verdicts(_rank_points(), "paper")[rvd.COLLAPSE_ABOVE.id] is True
    bad = _rank_points(cost=lambda L: 0.5 if L == 8 else 0.01)
    assert _rank_verdicts(bad, "paper")[rvd.COLLAPSE_ABOVE.id] is False


def test_collapse_is_reported_on_the_cut_quick_grid() -> None:
    """The quick grid is cut to the depths that certify: every net fits there, so the
    claim could not fail; it is reported (spec, fourth review)."""
    exp = get(RANK)
    cfg = resolve_config(exp, "quick")
    claims = {c.id: c for c in exp.evaluate(cfg, _rank_points())}
    assert not claims[rvd.COLLAPSE_ABOVE.id].asserted
    assert "cut to the depths that certify" in claims[rvd.COLLAPSE_ABOVE.id].statement
    assert max(cfg.depths) < max(resolve_config(exp, "paper").depths)


@pytest.mark.parametrize("preset", ["quick", "paper"])
def test_every_depth_starts_from_its_own_random_init(preset) -> None:
    """No state crosses depths (spec, fourth review): a point's resolved config and run
    id, hence its random init (`model.build(seed + 1)`), are the same whichever other
    depths the grid holds, and differ between seeds."""
    exp = get(RANK)
    cfg = resolve_config(exp, preset)
    L = cfg.depths[len(cfg.depths) // 2]
    full = {(r.labels["model.depth"], r.labels["seed"]): r for r in point_requests(exp, cfg)}
    alone = point_requests(exp, apply_overrides(cfg, {"depths": (L,)}))
    for r in alone:
        twin = full[(L, r.labels["seed"])]
        assert r.config == twin.config and r.run_id == twin.run_id
        assert r.payload == twin.payload
    assert len({r.run_id for r in alone}) == len(cfg.seeds)


def test_rank_claims_fail_when_nothing_fits() -> None:
    assert not any(_rank_verdicts(_rank_points(cost=lambda L: 0.5)).values())


UNTRAINED = {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)}


@pytest.mark.parametrize("name", [RANK, sd.EXPERIMENT.name])
def test_every_trained_claim_is_not_converged_on_an_untrained_network(name, tmp_path) -> None:
    """No training step: the certificate fails every claim about the trained networks."""
    exp = get(name)
    cfg = resolve_config(exp, "smoke", UNTRAINED)
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    gated = [c for c in record.claims if c.asserted]
    assert gated and all(exp.reads_of(c.id) is not None for c in gated)
    assert {c.state for c in gated} == {"not-converged"}
    assert all(c.certificate["stationarity"] > 1 for c in gated)


# -------------------------------------------------------------- fcnn/bottleneck-bounds

BOUNDS = bb.EXPERIMENT.name


# middle medians of s_(k+1): trained, the own init, the smallest and median of the
# untrained draws (the shape of the quick preset's numbers, lab notes)
MEDIANS = {6: (0.30, 1.17, 0.87, 1.10), 10: (0.20, 0.61, 0.41, 0.63), 16: (0.12, 0.30, 0.18, 0.31)}


def _bounds_points(**over) -> list[PointResult]:
    out = []
    for L, mid in ((6, 3.0), (10, 2.0), (16, 2.0)):
        med, init, rmin, rmed = MEDIANS[L]
        scalars = {
            "depth": float(L),
            bb.RANDOM_NETS.name: 34.0,
            RANDOM_CHAIN_SLACK.name: 0.5,
            RANDOM_THM15_SLACK.name: 0.5,
            TRAINED_CHAIN_SLACK.name: 1.0,
            TRAINED_THM15_SLACK.name: 1.0,
            "middle_rank": mid + 1,  # the weight rank counts the offset
            MIDDLE_AFFINE_RANK.name: mid,
            COR8_BOUND.name: 0.3,
            "cor8_layers_below": 0.5 * L + 1,
            "cor8_required": 0.5 * L,
            COR8_MIDDLE_MEDIAN.name: med,
            COR8_MIDDLE_MEDIAN_INIT.name: init,
            "cor8_middle_median_random_min": rmin,
            COR8_MIDDLE_MEDIAN_RANDOM.name: rmed,
            COR8_MIDDLE_MAX.name: 2 * med,
            COR8_RANDOM_BELOW.name: 0.0,
            NTK_SCALE.name: 1.0 + L / 16,
            NTK_LAMBDA_ETA.name: 0.8,
            NTK_LAMBDA_ETA_AMPLITUDE.name: 0.1,
            "balance_summed_max": 0.01,
            "balance_per_neuron_max": 0.02,
            "train_cost": 0.01,
        }
        scalars.update(over)
        out.append(PointResult("id", {"model.depth": L}, "done", "", scalars, [], [], 1, 1.0))
    return out


def _bounds_verdicts(points) -> dict[str, bool]:
    exp = get(BOUNDS)
    return {c.id: c.passed for c in exp.evaluate(resolve_config(exp, "quick"), points)}


def test_bounds_claims_pass_on_good_results() -> None:
    assert all(_bounds_verdicts(_bounds_points()).values())


@pytest.mark.parametrize(
    "over, failing",
    [
        ({RANDOM_CHAIN_SLACK.name: -1e-6}, bb.CHAIN_RANDOM.id),
        ({TRAINED_CHAIN_SLACK.name: -1e-6}, bb.CHAIN_TRAINED.id),
        ({RANDOM_THM15_SLACK.name: -1e-6}, bb.THM15_RANDOM.id),
        ({TRAINED_THM15_SLACK.name: -0.1}, bb.THM15_TRAINED.id),
        ({MIDDLE_AFFINE_RANK.name: 3.0}, bb.COR8_CLAIM.id),  # no net with a 2-D middle
    ],
)
def test_bounds_claims_fail_on_wrong_results(over, failing) -> None:
    assert _bounds_verdicts(_bounds_points(**over))[failing] is False


def _with_medians(points, key: str, values) -> list[PointResult]:
    return [
        dataclasses.replace(p, scalars={**p.scalars, key: float(v)}) for p, v in zip(points, values)
    ]


def test_bounds_cor8_reads_the_trend_and_the_untrained_nets() -> None:
    exp = get(BOUNDS)
    cfg = resolve_config(exp, "quick")
    claims = {c.id: c for c in exp.evaluate(cfg, _bounds_points())}
    c = claims[bb.COR8_CLAIM.id]
    assert c.asserted and c.passed
    assert c.measured == pytest.approx(0.12 / 0.30, rel=1e-3)  # against its own init
    # margin: the smaller of the relative drops (1/3, 0.4) and 1 - ratio (0.6)
    assert c.margin == pytest.approx(1 / 3, rel=1e-6)
    for cid in (bb.COR8_SLACK.id, bb.COR8_RANDOM_RANK.id, bb.COR8_SLOPE.id):
        assert claims[cid].state == "reported" and not claims[cid].asserted
    assert claims[bb.COR8_RANDOM_RANK.id].measured == 0
    # the bound 0.3 over the largest middle value 0.24, in decades
    assert claims[bb.COR8_SLACK.id].measured == pytest.approx(math.log10(0.3 / 0.24), rel=1e-3)
    slope = scipy.stats.linregress(np.log([6, 10, 16]), np.log([0.30, 0.20, 0.12])).slope
    assert claims[bb.COR8_SLOPE.id].measured == pytest.approx(slope, rel=1e-3)


@pytest.mark.parametrize(
    "key, values",
    [
        (COR8_MIDDLE_MEDIAN.name, (0.30, 0.32, 0.12)),  # rises between L = 6 and 10
        (COR8_MIDDLE_MEDIAN.name, (0.30, 0.20, 0.21)),  # rises between L = 10 and 16
        (COR8_MIDDLE_MEDIAN.name, (0.50, 0.40, 0.30)),  # falls, but equals its init's 0.30
        (COR8_MIDDLE_MEDIAN.name, (0.50, 0.40, 0.31)),  # falls, but above its init's
        (COR8_MIDDLE_MEDIAN_INIT.name, (1.17, 0.61, 0.12)),  # the init as low as the trained
    ],
)
def test_bounds_cor8_fails_on_a_rise_or_a_value_not_below_the_untrained_net(key, values):
    assert _bounds_verdicts(_with_medians(_bounds_points(), key, values))[bb.COR8_CLAIM.id] is False


def test_bounds_cor8_fails_on_untrained_nets() -> None:
    """The counter-case (issue 32): untrained nets of the quick preset's depths in place of
    the trained ones. Their middle median falls with L too (the trend alone cannot tell
    them apart), but an untrained net is not below itself at init; and its rank among the
    untrained draws is reported."""
    from bottlenecklab.measure import layer_s_next, middle_median

    exp = get(BOUNDS)
    cfg = resolve_config(exp, "quick")
    data = cfg.task.build(seed=cfg.seed)
    points = _bounds_points()
    for i, (p, L) in enumerate(zip(points, cfg.depths)):
        model = dataclasses.replace(cfg.model, depth=L)
        draws = [
            middle_median(
                layer_s_next(
                    model.build(data.d_in, data.d_out, seed=sd, dtype=torch.float64),
                    data.x_train,
                    cfg.k,
                ),
                cfg.p,
            )
            for sd in [cfg.seed + 1] + [cfg.seed + 1 + 1000 * j for j in range(1, cfg.cor8_random)]
        ]
        scalars = {
            **p.scalars,
            MIDDLE_AFFINE_RANK.name: float(cfg.k),
            COR8_MIDDLE_MEDIAN.name: draws[0],  # the untrained net itself
            COR8_MIDDLE_MEDIAN_INIT.name: draws[0],
            "cor8_middle_median_random_min": min(draws),
            COR8_MIDDLE_MEDIAN_RANDOM.name: float(np.median(draws)),
            COR8_RANDOM_BELOW.name: float(sum(d < draws[0] for d in draws)),
        }
        points[i] = dataclasses.replace(p, scalars=scalars)
    meds = [p.scalars[COR8_MIDDLE_MEDIAN.name] for p in points]
    assert meds == sorted(meds, reverse=True)  # the trend holds on untrained nets
    c = {c.id: c for c in exp.evaluate(cfg, points)}[bb.COR8_CLAIM.id]
    assert c.asserted and not c.passed and c.measured == 1
    rank = {c.id: c for c in exp.evaluate(cfg, points)}[bb.COR8_RANDOM_RANK.id]
    assert 0 < rank.measured < cfg.cor8_random  # a random net sits among the random draws


def test_bounds_ntk_scale_fails_on_a_spread() -> None:
    points = _bounds_points()
    points[-1] = dataclasses.replace(
        points[-1], scalars={**points[-1].scalars, NTK_SCALE.name: 9.0}
    )
    assert _bounds_verdicts(points)[bb.NTK_SCALE_CLAIM.id] is False


def test_bounds_claims_that_hold_at_every_parameter_pass_on_an_untrained_network(
    tmp_path,
) -> None:
    """The chain and Thm 15 are inequalities at every parameter: no certificate, and they
    hold on the untrained nets too; no claim of this experiment reads the certificate."""
    exp = get(BOUNDS)
    cfg = resolve_config(exp, "smoke", UNTRAINED)
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    states = {c.id: c.state for c in record.claims}
    assert all(exp.is_ungated(c) and exp.reads_of(c) is None for c in states)
    for cid in (bb.CHAIN_RANDOM.id, bb.CHAIN_TRAINED.id, bb.THM15_RANDOM.id, bb.THM15_TRAINED.id):
        assert states[cid] == "passed", cid
