"""What a claim's `check` returns through: one helper per kind of criterion, each writing
its tolerance into `expected`, the measured value (4 significant digits) into `measured`
and the signed distance to the bound into `margin` (`Outcome`).

A check is `(config, points) -> Outcome`; the claim's id, source and statement are its
`ClaimSpec`'s. Every helper takes `**facts`: values for the statement's `{name}` fields
(`at_most(worst, cfg.bound, leaks="6, 12")`). A non-finite value never passes: a
measurement that blew up proves nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from bottlenecklab.experiments._spec import Outcome

__all__ = [
    "Outcome",
    "at_least",
    "at_most",
    "fmt",
    "gated",
    "greater_than",
    "holds_to_roundoff",
    "in_range",
    "interval_in_range",
    "listed",
    "non_decreasing",
    "non_decreasing_below",
    "outcome",
    "reported",
    "unmeasured",
]


def fmt(x: float) -> float | str:
    """A measured number as stored: 4 significant digits, or `"nan"` / `"inf"` as text."""
    return float(f"{float(x):.4g}") if math.isfinite(x) else str(x)


def listed(values: Sequence[Any], spec: str = ".3g") -> str:
    """Values as text for a statement's facts, `"1.2, 3.4"` (each formatted by `spec`)."""
    return ", ".join(format(v, spec) for v in values)


def _margin(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def outcome(
    expected: str,
    measured: str | float | None,
    passed: bool,
    margin: float | None = None,
    **facts: Any,
) -> Outcome:
    """A criterion no helper covers (a compound one), written out: `expected` and
    `measured` as text, `passed`, and the margin (None when not finite)."""
    m = _margin(margin) if margin is not None else None
    return Outcome(expected, measured, bool(passed), margin=m, facts=facts)


def unmeasured(why: str, expected: str = "see spec", **facts: Any) -> Outcome:
    """Nothing to measure (e.g. no restart reached the optimum): state `not-measured`."""
    return Outcome(expected, f"not measured: {why}", False, state="not-measured", facts=facts)


def in_range(value: float, lo: float, hi: float, **facts: Any) -> Outcome:
    """`lo <= value <= hi`."""
    ok = math.isfinite(value) and lo <= value <= hi
    margin = _margin(min(value - lo, hi - value))
    return Outcome(f"in [{lo:g}, {hi:g}]", fmt(value), ok, margin=margin, facts=facts)


def at_least(value: float, bound: float, tol: float = 0.0, **facts: Any) -> Outcome:
    """`value >= bound - tol`."""
    ok = math.isfinite(value) and value >= bound - tol
    exp = f">= {bound:.4g}" + (f" - {tol:g}" if tol else "")
    return Outcome(exp, fmt(value), ok, margin=_margin(value - bound + tol), facts=facts)


def greater_than(value: float, bound: float, **facts: Any) -> Outcome:
    """`value > bound` (strictly: equality is not enough, e.g. "larger in the middle")."""
    ok = math.isfinite(value) and value > bound
    return Outcome(f"> {bound:g}", fmt(value), ok, margin=_margin(value - bound), facts=facts)


def at_most(value: float, bound: float, **facts: Any) -> Outcome:
    """`value <= bound`."""
    ok = math.isfinite(value) and value <= bound
    return Outcome(f"<= {bound:g}", fmt(value), ok, margin=_margin(bound - value), facts=facts)


def holds_to_roundoff(slack_value: float, roundoff: float, **facts: Any) -> Outcome:
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
    return Outcome(
        f">= -{r:g} (round-off)", fmt(v), ok, margin=margin, margin_scale="decades", facts=facts
    )


def non_decreasing(values: Sequence[float], tol: float = 0.0, **facts: Any) -> Outcome:
    """Every consecutive difference `>= -tol`; measured: the values (3 decimals)."""
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
    return Outcome(exp, measured, ok, margin=margin, facts=facts)


def non_decreasing_below(
    values: Sequence[float], tol: float, ceiling: float, ceiling_name: str, **facts: Any
) -> Outcome:
    """`non_decreasing(values, tol)` and every value `<= ceiling` (a sequence approaching
    a limit from below, e.g. `ceiling_name = "k* + 0.5"`)."""
    trend = non_decreasing(values, tol, **facts)
    top = max(float(v) for v in values)
    over = top > ceiling
    return dataclasses.replace(
        trend,
        expected=f"{trend.expected}; every value <= {ceiling:g}",
        measured=f"{trend.measured} (max {top:.3f} > {ceiling_name})" if over else trend.measured,
        passed=trend.passed and not over,
        margin=None if trend.margin is None else min(trend.margin, ceiling - top),
    )


def interval_in_range(
    value: float, spread: float, lo: float, hi: float, name: str = "value", **facts: Any
) -> Outcome:
    """`[value - spread, value + spread]` inside `[lo, hi]` (an estimate with its
    precision); a non-finite spread never passes."""
    a, b = value - spread, value + spread
    ok = math.isfinite(spread) and lo <= a and b <= hi
    return outcome(
        f"[{name} - spread, {name} + spread] inside [{lo:g}, {hi:g}]",
        f"{value:.4g} +- {spread:.3g} = [{a:.4g}, {b:.4g}]",
        ok,
        min(a - lo, hi - b) if math.isfinite(spread) else None,
        **facts,
    )


def reported(value: float, **facts: Any) -> Outcome:
    """A number the spec asks to report, with no criterion to assert: kept with the claims
    (state `reported`) but never counted as a pass; `passed` only says it is finite."""
    return Outcome(
        "reported, not asserted",
        fmt(value),
        math.isfinite(value),
        asserted=False,
        state="reported",
        facts=facts,
    )


def gated(result: Outcome, residual: float, threshold: float, what: str = "residual") -> Outcome:
    """The experiment's own convergence gate (where the certificate does not apply):
    `result` counts only when `residual <= threshold`; above it (or not finite) the
    outcome is `not-converged` with the residual as the reason. The gate is written into
    `expected` either way."""
    ok = math.isfinite(residual) and residual <= threshold
    expected = f"{result.expected}; converged: {what} <= {threshold:g}"
    if ok:
        return dataclasses.replace(result, expected=expected)
    measured = f"{result.measured} (not converged: {what} = {fmt(residual)} > {threshold:g})"
    return dataclasses.replace(
        result, expected=expected, measured=measured, passed=False, state="not-converged"
    )
