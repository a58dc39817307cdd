"""Claim constructors of the modules that still build their claims in a `claims()`
function (legacy): each is the `_checks` helper of the same name with the claim's id,
source and statement in front. A module declared with `ClaimSpec`s uses `_checks`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from bottlenecklab.experiments import _checks
from bottlenecklab.experiments._spec import Claim, Outcome

__all__ = [
    "at_least",
    "at_most",
    "gated",
    "greater_than",
    "holds_to_roundoff",
    "in_range",
    "non_decreasing",
    "reported",
    "unmeasured",
]


def _claim(id: str, source: str, statement: str, o: Outcome) -> Claim:
    return Claim(
        id,
        source,
        statement,
        o.expected,
        o.measured,
        o.passed,
        asserted=o.asserted,
        state=o.state,
        margin=o.margin,
        margin_scale=o.margin_scale,
    )


def unmeasured(id: str, source: str, statement: str, expected: str, why: str) -> Claim:
    """A claim that could not be measured (e.g. training diverged): state `not-measured`."""
    return _claim(id, source, statement, _checks.unmeasured(why, expected))


def in_range(id: str, source: str, statement: str, value: float, lo: float, hi: float) -> Claim:
    """`lo <= value <= hi`."""
    return _claim(id, source, statement, _checks.in_range(value, lo, hi))


def at_least(
    id: str, source: str, statement: str, value: float, bound: float, tol: float = 0.0
) -> Claim:
    """`value >= bound - tol`."""
    return _claim(id, source, statement, _checks.at_least(value, bound, tol))


def holds_to_roundoff(
    id: str, source: str, statement: str, slack_value: float, roundoff: float
) -> Claim:
    """An exact inequality checked in floating point (`_checks.holds_to_roundoff`)."""
    return _claim(id, source, statement, _checks.holds_to_roundoff(slack_value, roundoff))


def greater_than(id: str, source: str, statement: str, value: float, bound: float) -> Claim:
    """`value > bound` (strictly)."""
    return _claim(id, source, statement, _checks.greater_than(value, bound))


def at_most(id: str, source: str, statement: str, value: float, bound: float) -> Claim:
    """`value <= bound`."""
    return _claim(id, source, statement, _checks.at_most(value, bound))


def non_decreasing(
    id: str, source: str, statement: str, values: Sequence[float], tol: float = 0.0
) -> Claim:
    """Every consecutive difference `>= -tol`."""
    return _claim(id, source, statement, _checks.non_decreasing(values, tol))


def gated(claim: Claim, residual: float, threshold: float, what: str = "residual") -> Claim:
    """A claim about a trained network counts only on a converged one: `residual <=
    threshold` (`_checks.gated`)."""
    o = Outcome(claim.expected, claim.measured, claim.passed, claim.asserted, claim.margin)
    g = _checks.gated(o, residual, threshold, what)
    return dataclasses.replace(
        claim,
        expected=g.expected,
        measured=g.measured,
        passed=g.passed,
        state=g.state or claim.state,
    )


def reported(id: str, source: str, statement: str, value: float) -> Claim:
    """A number the spec asks to report, with no criterion to assert (state `reported`)."""
    return _claim(id, source, statement, _checks.reported(value))
