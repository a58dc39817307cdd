"""Claim verdicts (spec `convergence.md`): the certificate and value stability decide
whether a claim about trained networks counts; every experiment declares what its claims
read; typed states round-trip through `claims.json`."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math

import pytest

from bottlenecklab.experiments import (
    EXPERIMENTS,
    FINDINGS,
    STATES,
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
    count_states,
    expected_states,
    get,
    judge,
    resolve_config,
    run_experiment,
    state_of,
)
from bottlenecklab.experiments._checks import at_most, in_range, reported, unmeasured
from bottlenecklab.experiments._spec import ClaimSpec, Outcome
from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth as hvd
from bottlenecklab.experiments.leaky_resnet import layer_portrait as portrait
from bottlenecklab.experiments.leaky_resnet import path_bounds as pb


def _exp(per: str | None = None, **reads: Reads) -> Experiment:
    """An experiment whose claim `<id>` reads `reads[id]` (its check is not called here:
    `judge` gets the claims)."""
    specs = [ClaimSpec(i, "s", r, lambda c, p: in_range(0.5, 0.0, 1.0)) for i, r in reads.items()]
    return Experiment(
        name="test/verdicts",
        source="000 Fig 0",
        title="t",
        config=None,
        presets={},
        grid={},
        measure=lambda m, d, c: Measurement({}),
        claims=specs,
        per=per,
    )


def _claim(id: str, o: Outcome, statement: str = "s") -> Claim:
    """Claim `id` of outcome `o`, before the verdict."""
    return ClaimSpec(id, statement, None, lambda c, p: o).claim(None, o, "000 Fig 0")


def _point(stationarity: float, value: float, prev: float | None) -> PointResult:
    scalars = {"cert_stationarity": stationarity, "x": value}
    if prev is not None:
        scalars["prev_x"] = prev
    return PointResult("p", {}, "done", "", scalars, [], [], 10, 1.0)


READS = Reads(("x",), window=1.0)
CLAIM = _claim("c", in_range(0.5, 0.0, 1.0), "x in [0, 1]")


@pytest.mark.parametrize(
    ("stationarity", "prev", "state"),
    [
        (1e-3, 0.5, "passed"),  # converged and stable
        (1e-3, 0.5 + 0.24, "passed"),  # moved less than window/4 = 0.25
        (1e-3, 0.5 + 0.26, "not-converged"),  # moved more than window/4
        (0.5, 0.5, "not-converged"),  # stationarity above the threshold
        (math.nan, 0.5, "not-converged"),  # no certificate
        (1e-3, None, "not-converged"),  # no earlier state
    ],
)
def test_certificate_and_stability_decide(stationarity, prev, state) -> None:
    (c,) = judge(_exp(c=READS), None, [CLAIM], [_point(stationarity, 0.5, prev)])
    assert c.state == state and c.passed is (state == "passed")
    assert c.certificate is not None and c.certificate["threshold"] == Gate().threshold
    if state == "not-converged":
        assert c.certificate["reason"]


def test_a_converged_claim_outside_its_tolerance_fails() -> None:
    claim = _claim("c", at_most(0.5, 0.1), "x <= 0.1")
    (c,) = judge(_exp(c=READS), None, [claim], [_point(1e-3, 0.5, 0.5)])
    assert c.state == "failed" and not c.passed


def test_the_experiment_threshold_applies() -> None:
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        certify: Gate = Gate(threshold=0.6)

    (c,) = judge(_exp(c=READS), Cfg(), [CLAIM], [_point(0.5, 0.5, 0.5)])
    assert c.state == "passed"


def test_relative_windows_scale_with_the_value() -> None:
    reads = Reads(("x",), window=0.02, relative=True)  # a 2 % tolerance: 0.5 % allowed
    ok = judge(_exp(c=reads), None, [CLAIM], [_point(1e-3, 100.0, 100.4)])[0]
    bad = judge(_exp(c=reads), None, [CLAIM], [_point(1e-3, 100.0, 100.6)])[0]
    assert (ok.state, bad.state) == ("passed", "not-converged")


def test_a_claim_reads_only_its_points() -> None:
    bad = dataclasses.replace(_point(0.5, 0.5, 0.5), point={"arch": "deep"})
    good = dataclasses.replace(_point(1e-3, 0.5, 0.5), point={"arch": "shallow"})
    last = Reads(("x",), window=1.0, points="last")
    where = Reads(("x",), window=1.0, where={"arch": "shallow"})
    assert judge(_exp(c=READS), None, [CLAIM], [bad, good])[0].state == "not-converged"
    assert judge(_exp(c=last), None, [CLAIM], [bad, good])[0].state == "passed"
    assert judge(_exp(c=where), None, [CLAIM], [good, bad])[0].state == "passed"
    assert judge(_exp(c=last), None, [CLAIM], [good, bad])[0].state == "not-converged"


def test_tagged_ids_of_a_per_experiment_read_their_claims_gate() -> None:
    # the test experiment's own claim `c`, tagged as the runner tags it (`c(lam=0.001)`)
    claim = dataclasses.replace(CLAIM, id="c(lam=0.001)")
    exp = _exp(per="train.lam", c=READS)
    (c,) = judge(exp, None, [claim], [_point(0.5, 0.5, 0.5)])
    assert c.state == "not-converged"
    assert exp.reads_of("c(lam=0.001)") == READS and exp.reads_of("c(x=1)") is None
    assert _exp(c=READS).reads_of("c(lam=0.001)") is None  # no `per`: no tags


@pytest.mark.parametrize(
    ("claim", "state"),
    [
        (_claim("r", reported(0.3)), "reported"),
        (_claim("u", unmeasured("diverged", "e")), "not-measured"),
        (_claim("t", in_range(2.0, 0.0, 1.0)), "failed"),  # not in reads: theory
    ],
)
def test_other_states(claim: Claim, state: str) -> None:
    (c,) = judge(_exp(c=READS), None, [claim], [_point(1e-3, 0.5, 0.5)])
    assert c.state == state and state_of(c) == state


def test_states_round_trip_through_claims_json() -> None:
    claims = judge(
        _exp(c=READS),
        None,
        [CLAIM, _claim("r", reported(1.0)), _claim("u", unmeasured("why", "e"))],
        [_point(0.5, 0.5, 0.5)],
    )
    text = json.dumps([dataclasses.asdict(c) for c in claims])
    back = [Claim(**c) for c in json.loads(text)]
    assert back == claims
    assert count_states(back) == {
        "passed": 0,
        "failed": 0,
        "not-converged": 1,
        "not-measured": 1,
        "reported": 1,
    }
    assert set(count_states(back)) == set(STATES)


def test_old_claims_files_get_their_implied_state() -> None:
    old = Claim("a", "000", "s", "e", 1.0, True)
    assert state_of(old) == "passed"
    assert state_of(dataclasses.replace(old, passed=False)) == "failed"


def test_findings_name_registered_claims() -> None:
    for f in FINDINGS:
        assert f.experiment in EXPERIMENTS, f.key
        assert f.measured and f.pilots and f.settle and f.spec
        for claim in (f.claim, *f.conditional):
            assert get(f.experiment).spec_of(claim) is not None, (f.key, claim)


def test_claims_awaiting_the_solver_are_declared() -> None:
    from bottlenecklab.experiments._awaiting import AWAITING

    for a in AWAITING:
        ids = [s.id for s in get(a.experiment).specs]
        for pattern in a.claims:
            assert any(fnmatch.fnmatchcase(i, pattern) for i in ids), (a.experiment, pattern)


def test_a_registry_entry_must_name_a_claim_of_its_experiment() -> None:
    """The registries name claims by object; an entry whose claim is not one of its
    experiment's declared claims (another experiment's, or an id it lacks) is refused."""
    from bottlenecklab.experiments._awaiting import Awaiting

    with pytest.raises(ValueError, match="declares no claim"):
        Awaiting(hvd.EXPERIMENT, (pb.THM4_LOWER_CLAIM,), "w")
    with pytest.raises(ValueError, match="declares no claim"):
        Awaiting(hvd.EXPERIMENT, ("no-such-*",), "w")
    with pytest.raises(ValueError, match="declares no claim"):
        dataclasses.replace(FINDINGS[0], experiment=hvd.EXPERIMENT)
    a = Awaiting(hvd.EXPERIMENT, (hvd.FROM_BELOW, "coi-*"), "w")
    assert a.experiment == hvd.EXPERIMENT.name and a.claims == (hvd.FROM_BELOW.id, "coi-*")


def test_a_finding_claim_is_marked() -> None:
    f = FINDINGS[0]
    exp = dataclasses.replace(_exp(), name=f.experiment)
    claim = dataclasses.replace(CLAIM, id=f.claim)
    (c,) = judge(exp, None, [claim], [])
    assert c.finding == f.key


TRAINED = sorted(name for name, exp in EXPERIMENTS.items() if exp.trains)


@pytest.mark.parametrize("name", TRAINED)
def test_every_claim_of_a_trained_experiment_is_gated_or_says_why_not(name, smoke_record):
    """A claim about trained networks reads scalars the certificate checks (`reads`), or the
    experiment says why no certificate applies (`ungated`)."""
    exp, _, _, record = smoke_record(name)
    undeclared = [
        c.id
        for c in record.claims
        if c.asserted and exp.reads_of(c.id) is None and not exp.is_ungated(c.id)
    ]
    assert not undeclared, f"{name}: declare reads or ungated for {undeclared}"
    read = {s for r in exp.reads.values() for s in r.names}
    for point in record.points:
        assert read <= set(point.scalars), f"{name} reads scalars it does not measure"


@pytest.mark.parametrize("name", sorted(n for n in TRAINED if get(n).reads))
def test_gated_claims_are_not_converged_on_an_untrained_network(name, tmp_path, untrained) -> None:
    exp = get(name)
    cfg = resolve_config(exp, "smoke", untrained(exp))
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    # gated by the runner (`reads`) or by the experiment itself, which then attaches its
    # certificate to the claim (e.g. `l2/_plateau.plateau_gate`)
    gated = [
        c
        for c in record.claims
        if c.asserted and (exp.reads_of(c.id) is not None or c.certificate is not None)
    ]
    assert gated
    assert all(c.state in ("not-converged", "not-measured") for c in gated), [
        (c.id, c.state) for c in gated
    ]


def test_expected_states_follow_the_registry() -> None:
    f = next(f for f in FINDINGS if f.conditional)
    assert expected_states(f.experiment, f.claim) == ("failed",)
    assert expected_states(f.experiment, f.conditional[0]) == ("not-measured", "passed")
    assert expected_states(f.experiment, "anything-else") == ("passed",)
    assert expected_states(f.experiment, f.claim, asserted=False) == ("reported",)
    for g in FINDINGS:  # a conditional claim is a claim of the same experiment
        assert g.claim not in g.conditional


def test_claims_awaiting_the_solver_are_expected_not_converged() -> None:
    from bottlenecklab.experiments._awaiting import AWAITING
    from bottlenecklab.experiments.l2._plateau import PLATEAU_CLAIM

    for a in AWAITING:
        assert a.experiment in EXPERIMENTS
        for pattern in a.claims:
            claim = pattern.replace("*", "x")
            assert expected_states(a.experiment, claim) == ("not-converged",)
    for lam in ("0.001", "0.0001"):  # lam = 1e-4: certified since the kink_newton end
        claim = f"{PLATEAU_CLAIM.id}(lam={lam})"
        assert expected_states("l2/width-plateau-digits", claim) == ("passed",)


KINKED = Reads(("x",), window=1.0, kinked=True)


@pytest.mark.parametrize(
    "prev",
    [0.5, 0.5 + 1e-12, 0.5 + 0.2, 0.5 + 3.0, None],
    ids=["still", "round-off", "within", "far", "none"],
)
def test_the_tight_gate_ignores_the_extension_on_an_uncertified_net(prev) -> None:
    """A kinked claim at stationarity 1e-3 (under the experiment's 1e-2) is not-converged
    whatever the extension did, with the stationarity in the reason (fifth review)."""
    (c,) = judge(_exp(c=KINKED), None, [CLAIM], [_point(1e-3, 0.5, prev)])
    assert c.state == "not-converged" and not c.passed
    assert c.certificate["threshold"] == 1e-4
    assert "stationarity 0.001 > 0.0001" in c.certificate["reason"]


def test_the_tight_gate_passes_a_certified_stable_net_and_keeps_value_stability() -> None:
    ok = judge(_exp(c=KINKED), None, [CLAIM], [_point(5e-5, 0.5, 0.5 + 0.2)])[0]
    moved = judge(_exp(c=KINKED), None, [CLAIM], [_point(5e-5, 0.5, 0.5 + 0.3)])[0]
    assert ok.state == "passed" and moved.state == "not-converged"
    assert "moved" in moved.certificate["reason"]


def test_the_tight_gate_never_loosens_a_tighter_experiment_gate() -> None:
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        certify: Gate = Gate(threshold=1e-6)

    (c,) = judge(_exp(c=KINKED), Cfg(), [CLAIM], [_point(5e-5, 0.5, 0.5)])
    assert c.state == "not-converged" and c.certificate["threshold"] == 1e-6


# Claims reading a quantity discontinuous at kinks (spec `convergence.md`, fifth review;
# issue 40): the median -(2/L~)H, H's flatness, layer-portrait's gap ratio, Thm 4's sides.
HVD_KINKED = (hvd.RANK_AT_LARGEST_LEAK, hvd.FROM_BELOW, hvd.COI_FROM_ABOVE)
KINKED_CLAIMS = {
    hvd.EXPERIMENT.name: {c.id for c in HVD_KINKED},
    portrait.EXPERIMENT.name: {portrait.BOTTLENECK_GAP.id, portrait.HAMILTONIAN_FLAT.id},
    pb.EXPERIMENT.name: {
        pb.THM4_LOWER_CLAIM.id,
        pb.THM4_LOWER_CORRECTED_CLAIM.id,
        pb.THM4_PER_LAYER.id,
        pb.THM4_CONSTANT_GAMMA.id,
    },
}


@pytest.mark.parametrize("name", sorted(KINKED_CLAIMS))
def test_claims_reading_kinked_quantities_get_the_tight_gate(name) -> None:
    exp = get(name)
    kinked = {i for i, r in exp.reads.items() if r.kinked}
    assert kinked == KINKED_CLAIMS[name]


def test_every_claim_awaiting_the_solver_is_tightly_gated_or_left_by_the_spec() -> None:
    """An entry's claims read kinked quantities (the 1e-4 gate), or the entry cites the
    spec's decision that leaves its nets to the solver; never both missing."""
    from bottlenecklab.experiments._awaiting import AWAITING

    for a in AWAITING:
        reads = get(a.experiment).reads
        for pattern in a.claims:
            assert reads[pattern].kinked or a.spec, (a.experiment, pattern)
        assert not a.spec or not any(reads[p].kinked for p in a.claims), a.experiment
