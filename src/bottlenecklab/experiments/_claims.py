"""Small constructors for claims with their tolerance written into `expected`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from bottlenecklab.experiments._spec import Claim

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


def _fmt(x: float) -> float | str:
    return float(f"{float(x):.4g}") if math.isfinite(x) else str(x)


def _margin(x: float) -> float | None:
    """A claim's margin (`Claim.margin`), None when not finite."""
    return float(x) if math.isfinite(x) else None


def unmeasured(id: str, source: str, statement: str, expected: str, why: str) -> Claim:
    """A claim that could not be measured (e.g. training diverged): state `not-measured`."""
    return Claim(
        id, source, statement, expected, f"not measured: {why}", False, state="not-measured"
    )


def in_range(id: str, source: str, statement: str, value: float, lo: float, hi: float) -> Claim:
    """`lo <= value <= hi`."""
    ok = math.isfinite(value) and lo <= value <= hi
    margin = _margin(min(value - lo, hi - value))
    return Claim(id, source, statement, f"in [{lo:g}, {hi:g}]", _fmt(value), ok, margin=margin)


def at_least(id: str, source: str, statement: str, value: float, bound: float, tol: float = 0.0):
    """`value >= bound - tol`."""
    ok = math.isfinite(value) and value >= bound - tol
    exp = f">= {bound:.4g}" + (f" - {tol:g}" if tol else "")
    return Claim(id, source, statement, exp, _fmt(value), ok, margin=_margin(value - bound + tol))


def holds_to_roundoff(
    id: str, source: str, statement: str, slack_value: float, roundoff: float
) -> Claim:
    """An exact inequality (a theorem, or a chain of them) checked in floating point: its
    smallest slack `slack_value` (`>= 0` in exact arithmetic) must be `>= -roundoff`.

    The margin is in decades (`margin_scale = "decades"`): how many orders of magnitude
    the slack lies above the round-off tolerance, `log10((max(v, 0) + r) / r)` when it
    holds and `-log10(|v| / r)` when it fails. A theorem's slack has no threshold of its
    own to approach (how tight the drawn networks happen to be is not a tolerance), so the
    seed-to-seed spread that can flip its verdict is that of its distance to round-off.
    """
    v, r = float(slack_value), float(roundoff)
    ok = math.isfinite(v) and v >= -r
    if not math.isfinite(v):
        margin = None
    elif ok:
        margin = math.log10((max(v, 0.0) + r) / r)
    else:
        margin = -math.log10(-v / r)
    return Claim(
        id,
        source,
        statement,
        f">= -{r:g} (round-off)",
        _fmt(v),
        ok,
        margin=margin,
        margin_scale="decades",
    )


def greater_than(id: str, source: str, statement: str, value: float, bound: float) -> Claim:
    """`value > bound` (strictly: equality is not enough, e.g. "larger in the middle")."""
    ok = math.isfinite(value) and value > bound
    return Claim(
        id, source, statement, f"> {bound:g}", _fmt(value), ok, margin=_margin(value - bound)
    )


def at_most(id: str, source: str, statement: str, value: float, bound: float) -> Claim:
    """`value <= bound`."""
    ok = math.isfinite(value) and value <= bound
    return Claim(
        id, source, statement, f"<= {bound:g}", _fmt(value), ok, margin=_margin(bound - value)
    )


def non_decreasing(
    id: str, source: str, statement: str, values: Sequence[float], tol: float = 0.0
) -> Claim:
    """Every consecutive difference `>= -tol`."""
    vals = [float(v) for v in values]
    ok = (
        bool(vals)
        and all(math.isfinite(v) for v in vals)
        and all(b >= a - tol for a, b in zip(vals[:-1], vals[1:]))
    )
    measured = ", ".join(f"{v:.3f}" for v in vals)
    exp = "non-decreasing" + (f" (each step >= -{tol:g})" if tol else "")
    steps = [b - a + tol for a, b in zip(vals[:-1], vals[1:])]
    margin = _margin(min(steps)) if steps else None
    return Claim(id, source, statement, exp, measured, ok, margin=margin)


def gated(claim: Claim, residual: float, threshold: float, what: str = "residual") -> Claim:
    """A claim about a trained network counts only on a converged one: `residual <= threshold`.

    `residual` measures distance from a critical point (e.g. the largest median
    critical-point residual of paper 000 over the sweep). Above `threshold` (or not finite)
    the claim is reported as not passed, with the residual as the reason; the gate is
    written into `expected` either way.
    """
    ok = math.isfinite(residual) and residual <= threshold
    expected = f"{claim.expected}; converged: {what} <= {threshold:g}"
    if ok:
        return dataclasses.replace(claim, expected=expected)
    measured = f"{claim.measured} (not converged: {what} = {_fmt(residual)} > {threshold:g})"
    return dataclasses.replace(
        claim, expected=expected, measured=measured, passed=False, state="not-converged"
    )


def reported(id: str, source: str, statement: str, value: float) -> Claim:
    """A number the spec asks to report, with no criterion to assert: kept with the claims
    (state REPORTED) but never counted as a pass; `passed` only says it was measured
    (finite)."""
    ok = math.isfinite(value)
    return Claim(
        id,
        source,
        statement,
        "reported, not asserted",
        _fmt(value),
        ok,
        asserted=False,
        state="reported",
    )
