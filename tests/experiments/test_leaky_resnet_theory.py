"""The theory experiments of paper 000 (`hamiltonian-flow`, `coi-minima`): their claims pass
on the right inputs, FAIL on crafted results and on wrong fields / symmetry maps / COI
functions / minimizers fed through the experiment's own `measure`, and (slow) every claim
of the `quick` presets passes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from bottlenecklab.config import apply_overrides
from bottlenecklab.experiments import Measurement, PointResult, get, resolve_config
from bottlenecklab.experiments.leaky_resnet import _coi as cq
from bottlenecklab.experiments.leaky_resnet import _flow as q
from bottlenecklab.experiments.leaky_resnet import coi_minima as cm
from bottlenecklab.experiments.leaky_resnet import hamiltonian_flow as hf
from bottlenecklab.measure import RankRule
from bottlenecklab.theory import cost_of_identity, numerical_rank, output_scaled_path, vector_field

FLOW = hf.EXPERIMENT.name
COI = cm.EXPERIMENT.name


def _result(m: Measurement) -> PointResult:
    return PointResult("x", {}, "done", "", m.scalars, m.layers, m.spectra, 0, 0.0, m.tables)


def _crafted(scalars: dict[str, float], tables: dict[str, list[dict[str, Any]]]) -> PointResult:
    return _result(Measurement(scalars=scalars, tables=tables))


def _verdicts(name: str, cfg: Any, result: PointResult) -> dict[str, bool]:
    return {c.id: c.passed for c in get(name).evaluate(cfg, [result])}


# ---------------------------------------------------------------- hamiltonian-flow


@pytest.fixture(scope="module")
def flow_cfg():
    """A small config on which every claim passes (seconds): N = 30, w = 10; a larger
    kink-free momentum than the presets so RK4's fourth order shows from 20 steps; the
    generic path's bound loosened to 5e-3 (it is 9e-4 at 400 steps here); 100 located steps
    (at 10 the smooth pieces' RK4 error, 4e-5, is above the 1e-6 bound)."""
    return apply_overrides(
        resolve_config(get(FLOW), "smoke"),
        {
            "task.n_train": 30,
            "width": 10,
            "b_smooth": 3e-3,
            "b_kinked": 0.02,
            "steps_smooth": (20, 40, 80, 160),
            "steps_kinked": (25, 50, 100, 200, 400),
            "steps_located": 100,
            "ode_steps": 200,
            "drift_bound": 5e-3,
        },
    )


@pytest.fixture(scope="module")
def flow_right(flow_cfg) -> PointResult:
    return _result(get(FLOW).measure(None, None, flow_cfg))


def _good_flow(**over: Any) -> PointResult:
    """Crafted results that pass every claim (order 4 without kinks, order 1 with)."""
    smooth = [
        {"path": "smooth", "steps": n, "drift": 1e-4 / 16**i, "drift_end": 0.0, "crossings": 0}
        for i, n in enumerate((10, 20, 40))
    ]
    kinked = [
        {"path": "kinked", "steps": n, "drift": 1e-3 / 2**i, "drift_end": 0.0, "crossings": 50}
        for i, n in enumerate((50, 100, 200, 400))
    ]
    located = [{"path": "located", "steps": 25, "drift": 1e-8, "drift_end": 0.0, "crossings": 50}]
    scalars = {
        q.RANGE_PATH_ERROR.name: 1e-9,
        q.RANGE_NORM_ERROR.name: 1e-16,
        q.SCALING_PATH_ERROR.name: 1e-9,
    }
    scalars.update(over.pop("scalars", {}))
    rows = over.pop("rows", smooth + kinked + located)
    return _crafted(scalars, {"refinement": rows})


def test_flow_claims_pass_on_right_inputs(flow_cfg, flow_right) -> None:
    assert all(_verdicts(FLOW, flow_cfg, flow_right).values())
    assert all(_verdicts(FLOW, flow_cfg, _good_flow()).values())


def test_flow_tables_have_one_schema_each(flow_right) -> None:
    ref, drift = flow_right.tables["refinement"], flow_right.tables["drift"]
    assert {tuple(sorted(r)) for r in ref} == {("crossings", "drift", "drift_end", "path", "steps")}
    assert {tuple(sorted(r)) for r in drift} == {("drift", "p", "path", "steps")}
    assert flow_right.spectra == []


def _drop_term_field(A, B, leak, mask=None):
    """Wrong: the `+L~ B` term of dB/dp with its sign flipped."""
    dA, dB = vector_field(A, B, leak, mask)
    return dA, dB - 2 * leak * B


def _wrong_leak_field(A, B, leak, mask=None):
    """Wrong: the decay of dA/dp with leak 1.5 L~ (not the Hamiltonian's)."""
    dA, dB = vector_field(A, B, leak, mask)
    return dA - 0.5 * leak * A, dB


@pytest.mark.parametrize("field", [_drop_term_field, _wrong_leak_field])
def test_flow_conservation_claims_fail_on_a_wrong_field(flow_cfg, field) -> None:
    m = q.flow_measurement(None, None, flow_cfg, field=field)
    v = _verdicts(FLOW, flow_cfg, _result(m))
    assert not v[hf.RK4_ORDER.id] and not v[hf.RK4_EVERY_DOUBLING.id]
    assert (
        not v[hf.KINKED_DRIFT.id]
        and not v[hf.KINKED_FIRST_ORDER.id]
        and not v[hf.KINKED_LOCATED.id]
    )
    assert v[hf.RANGE_SYMMETRY.id] and v[hf.OUTPUT_SCALING.id]  # the forward ODE is untouched


def test_flow_range_claims_fail_on_a_wrong_stretch(flow_cfg) -> None:
    def no_rescale(W, c):  # W_{q/c} without the 1/c
        return lambda q: W(q / c)

    m = q.flow_measurement(None, None, flow_cfg, stretch_fn=no_rescale)
    v = _verdicts(FLOW, flow_cfg, _result(m))
    assert not v[hf.RANGE_SYMMETRY.id] and not v[hf.RANGE_NORM.id]
    assert v[hf.OUTPUT_SCALING.id] and v[hf.RK4_ORDER.id]


def test_flow_scaling_claim_fails_on_a_wrong_leak_shift(flow_cfg) -> None:
    m = q.flow_measurement(
        None, None, flow_cfg, scale_fn=lambda path, c: output_scaled_path(path, 1.1 * c)
    )
    v = _verdicts(FLOW, flow_cfg, _result(m))
    assert not v[hf.OUTPUT_SCALING.id] and v[hf.RANGE_SYMMETRY.id]


@pytest.mark.parametrize(
    ("rows", "failing"),
    [
        # A kink-free path that crossed a kink is not one: both order claims fail.
        (
            [
                {"path": "smooth", "steps": n, "drift": 1e-4 / 16**i, "crossings": 1}
                for i, n in enumerate((10, 20, 40))
            ],
            {hf.RK4_ORDER.id, hf.RK4_EVERY_DOUBLING.id},
        ),
        # Fourth order at the last doubling only (a plateau before it).
        (
            [
                {"path": "smooth", "steps": n, "drift": d, "crossings": 0}
                for n, d in ((10, 1e-4), (20, 0.9e-4), (40, 0.9e-4 / 16))
            ],
            {hf.RK4_EVERY_DOUBLING.id},
        ),
        # Not conserved: the drift does not shrink.
        (
            [{"path": "smooth", "steps": n, "drift": 1e-2, "crossings": 0} for n in (10, 20, 40)],
            {hf.RK4_ORDER.id, hf.RK4_EVERY_DOUBLING.id},
        ),
    ],
)
def test_flow_smooth_claims_fail_on_crafted_results(flow_cfg, rows, failing) -> None:
    kinked = [r for r in _good_flow().tables["refinement"] if r["path"] != "smooth"]
    v = _verdicts(FLOW, flow_cfg, _good_flow(rows=rows + kinked))
    assert {k for k, ok in v.items() if not ok} == failing


@pytest.mark.parametrize(
    ("drifts", "crossings", "failing"),
    [
        ((5e-4, 5e-4, 5e-4, 5e-4), 50, {hf.KINKED_FIRST_ORDER.id}),  # plateau: not first order
        ((1e-1, 5e-2, 2.5e-2, 1.25e-2), 50, {hf.KINKED_DRIFT.id}),  # first order but too big
        (
            (1e-3, 1e-3 / 16, 1e-3 / 256, 1e-3 / 4096),
            50,
            {hf.KINKED_FIRST_ORDER.id},
        ),  # no kink seen
        ((1e-3, 5e-4, 2.5e-4, 1.25e-4), 0, {hf.KINKED_FIRST_ORDER.id}),  # no crossing at all
        ((1e-3, 5e-4, 2.5e-4, math.nan), 50, {hf.KINKED_DRIFT.id, hf.KINKED_FIRST_ORDER.id}),
    ],
)
def test_flow_kinked_claims_fail_on_crafted_results(flow_cfg, drifts, crossings, failing) -> None:
    smooth = [r for r in _good_flow().tables["refinement"] if r["path"] != "kinked"]
    kinked = [
        {"path": "kinked", "steps": n, "drift": d, "crossings": crossings}
        for n, d in zip((50, 100, 200, 400), drifts)
    ]
    v = _verdicts(FLOW, flow_cfg, _good_flow(rows=smooth + kinked))
    assert {k for k, ok in v.items() if not ok} == failing


@pytest.mark.parametrize(
    ("quantity", "claim"),
    [
        (q.RANGE_PATH_ERROR, hf.RANGE_SYMMETRY),
        (q.RANGE_NORM_ERROR, hf.RANGE_NORM),
        (q.SCALING_PATH_ERROR, hf.OUTPUT_SCALING),
    ],
    ids=lambda x: getattr(x, "id", str(x)),
)
@pytest.mark.parametrize("value", [1e-3, math.nan, math.inf])
def test_flow_symmetry_claims_fail_on_crafted_results(flow_cfg, quantity, claim, value) -> None:
    v = _verdicts(FLOW, flow_cfg, _good_flow(scalars={quantity.name: value}))
    assert {k for k, ok in v.items() if not ok} == {claim.id}


@pytest.mark.parametrize(
    "located",
    [
        [],  # not measured
        [{"path": "located", "steps": 25, "drift": 1e-4, "crossings": 50}],  # not conserved
        [{"path": "located", "steps": 25, "drift": 1e-9, "crossings": 0}],  # nothing located
        [{"path": "located", "steps": 25, "drift": math.nan, "crossings": 50}],
    ],
)
def test_flow_located_claim_fails_on_crafted_results(flow_cfg, located) -> None:
    rows = [r for r in _good_flow().tables["refinement"] if r["path"] != "located"]
    v = _verdicts(FLOW, flow_cfg, _good_flow(rows=rows + located))
    assert {k for k, ok in v.items() if not ok} == {hf.KINKED_LOCATED.id}


def test_flow_claims_all_fail_without_measurements(flow_cfg) -> None:
    assert not any(_verdicts(FLOW, flow_cfg, _crafted({}, {})).values())


# ---------------------------------------------------------------- coi-minima


@pytest.fixture(scope="module")
def coi_cfg():
    """A small config on which every claim passes: 10 matrices per kind, 2 starts of
    `[6, 8]` with 1500 Adam steps."""
    return apply_overrides(
        resolve_config(get(COI), "smoke"),
        {"n_matrices": 10, "max_n": 8, "n_starts": 2, "n": 6, "w": 8, "steps": 1500},
    )


def _good_coi(**over: Any) -> PointResult:
    prop1 = [
        {
            "kind": "gaussian",
            "index": 0,
            "n": 4,
            "w": 6,
            "finite": True,
            "coi": 3.5,
            "stable_rank": 3.0,
            "rank": 4,
        },
        {
            "kind": "gaussian",
            "index": 1,
            "n": 4,
            "w": 6,
            "finite": False,
            "coi": math.nan,
            "stable_rank": 3.2,
            "rank": 4,
        },
        {
            "kind": "nonneg_low_rank",
            "index": 0,
            "n": 4,
            "w": 6,
            "finite": True,
            "coi": 2.0,
            "stable_rank": 1.5,
            "rank": 2,
        },
    ]
    ends = [
        {"start": s, "rank": 3, "coi": 3.001, "coi_bar": 2.999, "negative_mass": 1e-9}
        for s in range(2)
    ]
    tables = {"prop1": prop1, "coi_minima": ends}
    for name, rows in over.items():
        tables[name] = rows
    return _crafted({}, tables)


def test_coi_claims_pass_on_right_inputs(coi_cfg) -> None:
    m = get(COI).measure(None, None, coi_cfg)
    assert all(_verdicts(COI, coi_cfg, _result(m)).values())
    assert all(_verdicts(COI, coi_cfg, _good_coi()).values())
    assert set(m.tables) == {"prop1", "coi_minima", "coi_history"} and m.spectra == []


def test_coi_claims_fail_on_a_wrong_coi_function(coi_cfg) -> None:
    def half(A, **kw):  # COI below its stable rank, forged
        return 0.5 * cost_of_identity(A, **kw)

    cfg = apply_overrides(coi_cfg, {"steps": 200})  # fails whether converged or not
    m = cq.coi_measurement(None, None, cfg, coi=half)
    v = _verdicts(COI, cfg, _result(m))
    assert not v[cm.PROP1_BOUND.id] and not v[cm.NONNEG_COI_IS_RANK.id]
    assert not v[cm.MINIMA_COI_IS_RANK.id] and not v[cm.MINIMA_COI_BAR_IS_RANK.id]


def test_coi_claims_fail_when_the_minimizer_does_not_minimize(coi_cfg) -> None:
    def still(A0, **kw):  # end points = the Gaussian starts
        return A0, [float(cost_of_identity(A0))]

    m = cq.coi_measurement(None, None, coi_cfg, minimize=still)
    v = _verdicts(COI, coi_cfg, _result(m))
    assert v[cm.PROP1_BOUND.id] and v[cm.NONNEG_COI_IS_RANK.id]
    assert not v[cm.MINIMA_NON_NEGATIVE.id] and not v[cm.MINIMA_COI_IS_RANK.id]


@pytest.mark.parametrize(
    ("over", "failing"),
    [
        (
            {
                "prop1": [
                    {
                        "kind": "gaussian",
                        "index": 0,
                        "n": 4,
                        "w": 6,
                        "finite": True,
                        "coi": 2.9,
                        "stable_rank": 3.0,
                        "rank": 4,
                    }
                ]
            },
            {cm.PROP1_BOUND.id, cm.NONNEG_COI_IS_RANK.id},
        ),  # and no non-negative matrix measured
        (
            {
                "prop1": [
                    {
                        "kind": "nonneg_low_rank",
                        "index": 0,
                        "n": 4,
                        "w": 6,
                        "finite": True,
                        "coi": 2.01,
                        "stable_rank": 1.5,
                        "rank": 2,
                    }
                ]
            },
            {cm.NONNEG_COI_IS_RANK.id},
        ),
        (
            {
                "coi_minima": [
                    {"start": 0, "rank": 3, "coi": 3.0, "coi_bar": 3.0, "negative_mass": 1e-3}
                ]
            },
            {cm.MINIMA_NON_NEGATIVE.id},
        ),
        (
            {
                "coi_minima": [
                    {"start": 0, "rank": 3, "coi": 3.5, "coi_bar": 3.0, "negative_mass": 0.0}
                ]
            },
            {cm.MINIMA_COI_IS_RANK.id},
        ),
        (
            {
                "coi_minima": [
                    {"start": 0, "rank": 3, "coi": 3.0, "coi_bar": math.nan, "negative_mass": 0.0}
                ]
            },
            {cm.MINIMA_COI_BAR_IS_RANK.id},
        ),
        (
            {"coi_minima": []},
            {cm.MINIMA_NON_NEGATIVE.id, cm.MINIMA_COI_IS_RANK.id, cm.MINIMA_COI_BAR_IS_RANK.id},
        ),
    ],
)
def test_coi_claims_fail_on_crafted_results(coi_cfg, over, failing) -> None:
    v = _verdicts(COI, coi_cfg, _good_coi(**over))
    assert {k for k, ok in v.items() if not ok} == failing


# ---------------------------------------------------------------- quick presets (slow)


# ---------------------------------------------------------------- coi-minima's rank rules


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    ("rule", "rel"),
    [
        (cq.PROP1_RANK_RULE, 1e-8),
        (cq.minima_rank_rule(1e-4), 1e-2),
        (cq.minima_rank_rule(1e-6), 1e-3),
    ],
    ids=["prop1", "minima-1e-4", "minima-1e-6"],
)
def test_coi_rank_rules_count_as_the_theory_does(rule: RankRule, rel: float, seed: int) -> None:
    """The named rules count a planted spectrum (values on both sides of each cutoff) as
    `theory.numerical_rank` does with the cutoff the experiment passes it."""
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(9, 9, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(7, 7, generator=g, dtype=torch.float64))
    s = torch.tensor([2.0, 1.0, 0.1, 0.015, 5e-3, 5e-4, 1e-9], dtype=torch.float64)
    A = U[:, :7] @ torch.diag(s) @ V.T
    assert rule.cutoff == pytest.approx(rel, rel=1e-12)
    t = torch.linalg.svdvals(A)
    assert rule.read(t, tuple(A.shape)).rank == numerical_rank(A, rule.cutoff)


def test_coi_rank_quantities_name_their_rules_as_the_docs_list_them() -> None:
    doc = Path(__file__).parents[2] / "docs" / "add-a-quantity.md"
    ranks = [x for x in cq.COI_MINIMA.quantities if x.units == "rank"]
    assert ranks and all(isinstance(x.rule, RankRule) for x in ranks)
    assert all(f"| `{x.name}` |" in doc.read_text() for x in ranks)
    assert cq.PROP2_MEAN_RANK.rule == cq.minima_rank_rule(cm.Config().gamma0)
