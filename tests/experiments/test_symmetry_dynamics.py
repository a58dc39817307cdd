"""`fcnn/symmetry-dynamics` (paper 001 Fig 2): smoke runs (API and CLI), claims that FAIL
on crafted wrong or unconverged results, and (slow) the quick preset passing."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bottlenecklab.cli import main
from bottlenecklab.experiments import PointResult, get, resolve_config
from bottlenecklab.experiments.fcnn import _symmetry as q
from bottlenecklab.experiments.fcnn import symmetry_dynamics as sd
from bottlenecklab.measure import Quantity, RankRule

NAME = sd.EXPERIMENT.name
GAP, STATE, UNCROSSED, ROTATION = (
    sd.MIDDLE_GAP_AT_2.id,
    sd.STATE_IS_U.id,
    sd.PATHS_UNCROSSED.id,
    sd.ROTATION_INVARIANT.id,
)


def _result(seed: int = 0, over: dict[Quantity, float] | None = None) -> PointResult:
    values = {
        q.MIDDLE_LAYERS: 4.0,
        q.MIDDLE_GAP_LAYERS: 3.0,
        q.REG_LOSS: 0.2 + 0.01 * seed,
        q.MIDDLE_JACOBIAN_RANK: 2.0,
        q.MIDDLE_CENTRED_RANK: 2.0,
        q.OUTPUT_JACOBIAN_RANK: 2.0,
        q.PCA_LAYER: 3.0,
        q.STATE_R2: 0.95,
        q.STATE_R2_INIT: -0.1,
        q.FAR_CROSSINGS: 1.0,
        q.FAR_CROSSINGS_INIT: 60.0,
        q.FAR_CROSSING_RATIO: 1.0 / 60.0,
        q.PCA_CROSSINGS: 90.0,
        q.PCA_CROSSINGS_INIT: 95.0,
        q.U_CROSSINGS: 3.0,
        q.RANDOM_CROSSINGS: 40.0,
        q.STEP_R2: 0.9,
        q.GAP_LAYER: 4.0,
        q.ROTATION_RATIO: 0.2,
        q.ROTATION_RATIO_LAYER2: 0.7,
        q.RELATIVE_TRAIN_COST: 0.001,
    }
    values.update(over or {})
    scalars = {k.name: v for k, v in values.items()}
    layers = [
        {
            "layer": float(l),
            "gap_index": 2,
            "gap": 5.0,
            "jacobian_rank": 2.0,
            "centred_rank": 2.0,
            "state_r2": 0.9,
            "state_r2_init": 0.1,
        }
        for l in range(1, 13)
    ]
    return PointResult(f"p{seed}", {"seed": seed}, "done", "", scalars, layers, [], 0, 0.0, {})


def _claims(results: list[PointResult]) -> dict[str, bool]:
    exp = get(NAME)
    cfg = resolve_config(exp, "quick")
    return {c.id: c.passed for c in exp.evaluate(cfg, results) if c.asserted}


def _verdicts(over: dict[Quantity, float] | None = None) -> dict[str, bool]:
    """The claims on three seeds that all carry `over`."""
    return _claims([_result(seed, over) for seed in (0, 1, 2)])


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
        ({q.MIDDLE_GAP_LAYERS: 2.0}, GAP),  # 2 of 4 is no majority
        ({q.STATE_R2: 0.7}, STATE),
        # the metric cannot tell an untrained net apart: the claim says nothing
        ({q.STATE_R2_INIT: 0.85}, STATE),
        ({q.FAR_CROSSING_RATIO: 0.2}, UNCROSSED),
        ({q.FAR_CROSSING_RATIO: float("nan")}, UNCROSSED),  # no untrained crossings
        ({q.ROTATION_RATIO: 0.8}, ROTATION),
        ({q.ROTATION_RATIO: float("nan")}, ROTATION),  # no layer with the gap
    ],
)
def test_claims_fail_on_wrong_results(over, failing) -> None:
    got = _verdicts(over)
    assert got == {k: k != failing for k in got}


def test_claims_fail_on_the_untrained_networks_own_metrics() -> None:
    """Trained = untrained (no training): both 2-D state claims fail on their criteria."""
    got = _verdicts({q.STATE_R2: -0.1, q.FAR_CROSSINGS: 60.0, q.FAR_CROSSING_RATIO: 1.0})
    assert not got[STATE] and not got[UNCROSSED]


# `middle-gap-at-2` over the seeds (spec, fourth review): the lowest-regularized-loss seed
# and a majority of the seeds; 3 of 4 middle layers is a seed's majority, 2 of 4 is not.


def _gap_seeds(counts: tuple[float, ...], losses: tuple[float, ...]) -> bool:
    results = [
        _result(seed, {q.MIDDLE_GAP_LAYERS: n, q.REG_LOSS: loss})
        for seed, (n, loss) in enumerate(zip(counts, losses))
    ]
    return _claims(results)[GAP]


def test_gap_claim_passes_with_the_lowest_loss_seed_and_two_of_three() -> None:
    # seed 2 keeps a third direction but has the highest loss
    assert _gap_seeds((3.0, 4.0, 1.0), (0.20, 0.21, 0.22))


def test_gap_claim_fails_when_the_lowest_loss_seed_fails() -> None:
    # two of three seeds pass, but the seed with the lowest loss is the one that fails
    assert not _gap_seeds((3.0, 4.0, 1.0), (0.21, 0.22, 0.20))


def test_gap_claim_fails_when_a_majority_of_seeds_fails() -> None:
    # the lowest-loss seed passes, the two others do not
    assert not _gap_seeds((3.0, 2.0, 1.0), (0.20, 0.21, 0.22))


def test_gap_claim_counts_an_unfinished_seed_as_failing() -> None:
    results = [_result(0), _result(1, {q.MIDDLE_GAP_LAYERS: 1.0})]
    diverged = dataclasses.replace(_result(2), status="diverged", message="nan loss")
    got = _claims([*results, diverged])
    # 1 of 3 seeds has the gap: no majority; the every-seed claims are not measured
    assert got[GAP] is False
    exp = get(NAME)
    cfg = resolve_config(exp, "quick")
    states = {c.id: c for c in exp.evaluate(cfg, [*results, diverged])}
    assert str(states[STATE].measured).startswith("not measured")


@pytest.mark.parametrize(
    "over, failing",
    [
        ({q.STATE_R2: 0.7}, STATE),
        ({q.STATE_R2_INIT: 0.85}, STATE),
        ({q.FAR_CROSSING_RATIO: 0.2}, UNCROSSED),
        ({q.ROTATION_RATIO: float("nan")}, ROTATION),
    ],
)
def test_every_seed_claims_fail_on_one_bad_seed(over, failing) -> None:
    """The 2-D state claims hold at every seed: one seed's failure fails them."""
    got = _claims([_result(0), _result(1, over), _result(2)])
    assert got == {k: k != failing for k in got}


def test_reported_ranks_are_the_lowest_loss_seeds() -> None:
    exp = get(NAME)
    cfg = resolve_config(exp, "quick")
    results = [
        _result(0, {q.REG_LOSS: 0.3, q.MIDDLE_JACOBIAN_RANK: 3.0}),
        _result(1, {q.REG_LOSS: 0.1, q.MIDDLE_JACOBIAN_RANK: 2.0}),
    ]
    ranks = next(c for c in exp.evaluate(cfg, results) if c.id == sd.SEED_RANKS.id)
    assert not ranks.asserted and ranks.measured == 2.0
    assert "seed 0: loss 0.3" in ranks.statement and "seed 1: loss 0.1" in ranks.statement


RANKS = [x for x in sd.SYMMETRY.quantities if x.units == "rank"]


@pytest.mark.parametrize("quantity", RANKS, ids=str)
def test_its_ranks_name_their_rules_as_the_docs_list_them(quantity: Quantity) -> None:
    """Every rank the measurement writes names its `RankRule`, and the rank table of
    `docs/add-a-quantity.md` lists it."""
    doc = Path(__file__).parents[2] / "docs" / "add-a-quantity.md"
    assert isinstance(quantity.rule, RankRule)
    assert f"| `{quantity.name}` |" in doc.read_text()
