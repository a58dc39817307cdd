"""A claim's verdict (spec `convergence.md`): the convergence certificate and value
stability of every point a claim about trained networks reads, then its own criterion.

`run_point` keeps, per trained point, its certificate (`PointResult.certificate`) and
the values of the quantities the claims read at the end of the certification extension,
or without one at an earlier state of the last phase (`PointResult.earlier`). `verdicts`
measures every claim of an
experiment on a run's points (`Experiment.evaluate`: the divergence guard, the claims'
checks) and `judge` turns each into one of `STATES` (the certificate of a claim that
`Reads`; none for one declared `Ungated`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from bottlenecklab.experiments._findings import finding_of
from bottlenecklab.experiments._spec import STATES, Claim, Experiment, Gate, PointResult, Reads

__all__ = [
    "certificate_record",
    "count_states",
    "gate_of",
    "judge",
    "stability",
    "state_of",
    "states_line",
    "verdicts",
]


def gate_of(cfg: Any) -> Gate:
    """The experiment config's certificate settings (`cfg.certify`, else the defaults)."""
    gate = getattr(cfg, "certify", None)
    return gate if isinstance(gate, Gate) else Gate()


def stability(points: Sequence[PointResult], reads: Reads) -> dict[str, Any]:
    """The largest change of a read scalar, relative to its allowance `window / 4`.

    Returns `{"change", "allowed", "scalar", "point", "ratio"}` for the worst one
    (`ratio <= 1`: stable); `ratio = inf` when a point has no earlier value.
    """
    worst: dict[str, Any] = {"ratio": 0.0, "change": 0.0, "allowed": reads.window / 4}
    for p in points:
        for name in reads.names:
            v = p.scalars.get(name)
            v0 = p.earlier.get(name) if p.earlier is not None else None
            if v is None or v0 is None or not (math.isfinite(v) and math.isfinite(v0)):
                ratio, change = math.inf, math.nan
            else:
                scale = abs(v) if reads.relative else 1.0
                allowed = reads.window / 4 * scale
                change = abs(v - v0)
                ratio = change / allowed if allowed > 0 else (0.0 if change == 0 else math.inf)
            if ratio > worst["ratio"] or (math.isinf(ratio) and worst["ratio"] != ratio):
                worst = {
                    "ratio": ratio,
                    "change": change,
                    "allowed": reads.window / 4 * (abs(v) if reads.relative and v else 1.0),
                    "scalar": name,
                    "point": p.id,
                }
    return worst


def _certificate(points: Sequence[PointResult], reads: Reads, gate: Gate) -> dict[str, Any]:
    done = reads.select(list(points))
    stats = [p.certificate.stationarity if p.certificate else math.nan for p in done]
    worst = max(stats, default=math.nan)
    if any(not math.isfinite(s) for s in stats):
        worst = math.nan
    stab = stability(done, reads)
    threshold = reads.threshold(gate)
    reasons = []
    if not done:
        reasons.append("no trained point")
    elif not math.isfinite(worst):
        reasons.append("no certificate")
    elif worst > threshold:
        why = " (reads a quantity discontinuous at kinks)" if reads.kinked else ""
        reasons.append(f"stationarity {worst:.3g} > {threshold:g}{why}")
    return certificate_record(done, worst, stab, gate, reasons, threshold=threshold)


def certificate_record(
    done: Sequence[PointResult],
    worst: float,
    stab: dict[str, Any],
    gate: Gate,
    reasons: list[str],
    threshold: float | None = None,
) -> dict[str, Any]:
    """A claim's certificate record (`Claim.certificate`): the worst stationarity of the
    points it gates against `threshold` (default the gate's), the worst value change
    (`stability`), and the reasons it failed (`reasons`, the stationarity's, with the
    value stability's added here)."""
    reasons = list(reasons)
    if done and stab["ratio"] > 1:
        if math.isinf(stab["ratio"]) and not math.isfinite(stab["change"]):
            reasons.append(f"no earlier value of {stab.get('scalar')}")
        else:
            over = "over the last phase"
            extended = [p.extension.steps for p in done if p.extension is not None]
            if extended:
                steps = max(extended)
                over = f"over the certification extension ({steps:.0f} steps)"
            reasons.append(
                f"{stab['scalar']} moved {stab['change']:.3g} > {stab['allowed']:.3g}"
                f" (1/4 of the tolerance window) {over}"
            )
    return {
        "stationarity": worst,
        "threshold": gate.threshold if threshold is None else threshold,
        "change": stab["change"],
        "allowed": stab["allowed"],
        "scalar": stab.get("scalar"),
        "converged": not reasons,
        "reason": "; ".join(reasons),
    }


def verdicts(exp: Experiment, cfg: Any, points: Sequence[PointResult]) -> list[Claim]:
    """Every claim of `exp` measured on a run's `points` and judged (`evaluate`, `judge`):
    with `Experiment.per`, each value's claims on that value's points only."""
    return [
        c
        for tag, pts in exp.partition(cfg, points)
        for c in judge(exp, cfg, exp.measured(cfg, pts, tag), pts)
    ]


def judge(
    exp: Experiment, cfg: Any, claims: Sequence[Claim], points: Sequence[PointResult]
) -> list[Claim]:
    """Each claim with its verdict (`state`, `passed`, `certificate`) and, for a registered
    finding (`_findings.FINDINGS`), its key in `finding`.

    `points`: those the claims were measured on (with `Experiment.per`, one value's). An
    asserted claim of a `ClaimSpec` without a gate is refused (`ValueError`): it must
    say what it reads (`Reads`) or why no certificate applies (`Ungated`).
    """
    gate = gate_of(cfg)
    out = []
    for c in claims:
        spec = exp.spec_of(c.id)
        if spec is not None and spec.gate is None and c.asserted and c.state != "not-measured":
            raise ValueError(
                f"{exp.name}: claim {c.id!r} is asserted but declares no gate: give it "
                "Reads(...) or Ungated(why), or report it (`reported`)"
            )
        v = _verdict(exp, gate, c, points)
        f = finding_of(exp.name, c.id)
        out.append(dataclasses.replace(v, finding=f.key) if f is not None else v)
    return out


def _verdict(exp: Experiment, gate: Gate, c: Claim, points: Sequence[PointResult]) -> Claim:
    if not c.asserted:
        return dataclasses.replace(c, state="reported")
    if isinstance(c.measured, str) and c.measured.startswith("not measured"):
        return dataclasses.replace(c, state="not-measured", passed=False)
    if c.state == "not-converged":  # the experiment's own gate said so
        return dataclasses.replace(c, passed=False)
    reads = exp.reads_of(c.id) if exp.trains else None
    if reads is None:
        return dataclasses.replace(c, state="passed" if c.passed else "failed")
    cert = _certificate(points, reads, gate)
    if not cert["converged"]:
        return dataclasses.replace(c, state="not-converged", passed=False, certificate=cert)
    state = "passed" if c.passed else "failed"
    return dataclasses.replace(c, state=state, certificate=cert)


def state_of(claim: Claim) -> str:
    """The claim's verdict; for a `claims.json` written before verdicts were typed, the
    state its `passed` / `asserted` / `measured` fields imply."""
    if claim.state:
        return claim.state
    if not claim.asserted:
        return "reported"
    if claim.passed:
        return "passed"
    return "not-measured" if str(claim.measured).startswith("not measured") else "failed"


def count_states(claims: Sequence[Claim]) -> dict[str, int]:
    """How many claims are in each state (every state of `STATES`, in order)."""
    counts = dict.fromkeys(STATES, 0)
    for c in claims:
        counts[state_of(c)] += 1
    return counts


def states_line(claims: Sequence[Claim]) -> str:
    """`3 passed, 1 failed, 1 not converged, 0 not measured, 2 reported` (one line)."""
    counts = count_states(claims)
    return ", ".join(f"{n} {st.replace('-', ' ')}" for st, n in counts.items())
