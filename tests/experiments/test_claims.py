"""The check helpers (`_checks`): each passes where it should and FAILS on inputs that must
fail (nan, inf, just outside the bound, a dip bigger than the tolerance, a residual above a
gate)."""

from __future__ import annotations

import math

import pytest

from bottlenecklab.experiments._checks import (
    at_least,
    at_most,
    gated,
    holds_to_roundoff,
    in_range,
    non_decreasing,
    reported,
    unmeasured,
)
from bottlenecklab.experiments._spec import Claim, ClaimSpec, Outcome

NAN, INF = math.nan, math.inf
EPS = 1e-12


def _claim(o: Outcome) -> Claim:
    """The claim a `ClaimSpec` makes of outcome `o` (before the verdict)."""
    return ClaimSpec("x", "s", None, lambda cfg, pts: o).claim(None, o, "002")


@pytest.mark.parametrize("value", [1.0, 2.0, 1.5])
def test_in_range_passes_inside_and_on_the_bounds(value: float) -> None:
    c = in_range(value, 1.0, 2.0)
    assert c.passed and c.expected == "in [1, 2]" and c.measured == value


@pytest.mark.parametrize("value", [1.0 - EPS, 2.0 + EPS, NAN, INF, -INF, -1.5])
def test_in_range_fails_outside_and_on_non_finite(value: float) -> None:
    assert not in_range(value, 1.0, 2.0).passed


def test_in_range_reports_non_finite_values_as_text() -> None:
    assert in_range(NAN, 0.0, 1.0).measured == "nan"
    assert in_range(INF, 0.0, 1.0).measured == "inf"


@pytest.mark.parametrize(("value", "tol"), [(1.0, 0.0), (0.95, 0.05), (7.0, 0.0)])
def test_at_least_passes_down_to_the_bound_minus_tol(value: float, tol: float) -> None:
    assert at_least(value, 1.0, tol=tol).passed


@pytest.mark.parametrize(
    ("value", "tol"), [(1.0 - EPS, 0.0), (0.95 - 1e-9, 0.05), (NAN, 0.0), (INF, 0.0), (-INF, 1.0)]
)
def test_at_least_fails_below_and_on_non_finite(value: float, tol: float) -> None:
    # +inf is not a pass either: a measurement that blew up proves nothing.
    assert not at_least(value, 1.0, tol=tol).passed


def test_at_least_writes_the_tolerance_into_expected() -> None:
    assert at_least(1.0, 2.0, tol=0.5).expected == ">= 2 - 0.5"
    assert at_least(3.0, 2.0).expected == ">= 2"


@pytest.mark.parametrize("value", [1.0, 0.0, -3.0])
def test_at_most_passes_up_to_the_bound(value: float) -> None:
    assert at_most(value, 1.0).passed


@pytest.mark.parametrize("value", [1.0 + EPS, NAN, INF, -INF])
def test_at_most_fails_above_and_on_non_finite(value: float) -> None:
    # -inf fails too (e.g. log of a zero error that should not be zero).
    assert not at_most(value, 1.0).passed


@pytest.mark.parametrize(
    ("values", "tol"),
    [([1, 2, 3], 0.0), ([1, 1, 1], 0.0), ([1.0, 0.95, 1.2], 0.05), ([5.0], 0.0)],
)
def test_non_decreasing_passes_with_dips_within_tol(values: list[float], tol: float) -> None:
    assert non_decreasing(values, tol=tol).passed


@pytest.mark.parametrize(
    ("values", "tol"),
    [
        ([1.0, 1.0 - 1e-9, 2.0], 0.0),  # any dip without a tolerance
        ([1.0, 0.94, 1.2], 0.05),  # a dip bigger than the tolerance
        ([1.0, NAN, 3.0], 0.0),
        ([1.0, 2.0, INF], 0.0),
        ([3.0, 2.0, 1.0], 0.5),
    ],
)
def test_non_decreasing_fails_on_a_dip_or_non_finite(values: list[float], tol: float) -> None:
    assert not non_decreasing(values, tol=tol).passed


def test_non_decreasing_fails_on_no_values() -> None:
    # A sweep that measured nothing must not pass a trend claim.
    assert not non_decreasing([]).passed


def test_non_decreasing_states_its_tolerance() -> None:
    c = non_decreasing([1.0, 2.0], tol=0.1)
    assert "0.1" in c.expected and c.measured == "1.000, 2.000"


def test_gated_keeps_a_passing_claim_below_the_threshold() -> None:
    c = gated(at_most(0.5, 1.0), residual=0.01, threshold=0.05, what="res")
    assert c.passed and "res <= 0.05" in c.expected and c.measured == 0.5


@pytest.mark.parametrize("residual", [0.05 + 1e-9, 3.0, NAN, INF])
def test_gated_fails_a_passing_claim_above_the_threshold(residual: float) -> None:
    c = gated(at_most(0.5, 1.0), residual=residual, threshold=0.05, what="res")
    assert not c.passed
    assert "not converged" in str(c.measured) and "res" in str(c.measured)


def test_gated_never_turns_a_failed_claim_into_a_pass() -> None:
    c = gated(at_most(2.0, 1.0), residual=0.0, threshold=0.05)
    assert not c.passed


def test_unmeasured_is_a_failure_with_its_reason() -> None:
    c = unmeasured("training diverged", "in [1, 2]")
    assert not c.passed and c.expected == "in [1, 2]" and "training diverged" in str(c.measured)


@pytest.mark.parametrize(
    "value, ok", [(0.3, True), (-2.0, True), (math.nan, False), (math.inf, False)]
)
def test_reported_is_never_asserted(value, ok) -> None:
    c = reported(value)
    assert c.passed is ok and not c.asserted


def test_reported_claims_are_not_counted() -> None:
    """A REPORTED claim is its own state: not a pass in the CLI tally, the summary or the
    report, even when measured."""
    from bottlenecklab.report import claim_state

    assert claim_state(_claim(reported(0.5))) == "reported"
    assert claim_state(_claim(in_range(0.5, 0.0, 1.0))) == "passed"


@pytest.mark.parametrize(
    ("slack", "passes", "decades"),
    [
        (0.1, True, 8.0),
        (1.0, True, 9.0),
        (0.0, True, 0.0),
        (-5e-10, True, 0.0),
        (-1e-6, False, -3.0),
        (NAN, False, None),
        (-INF, False, None),
    ],
)
def test_holds_to_roundoff_counts_decades_above_the_roundoff(slack, passes, decades) -> None:
    c = holds_to_roundoff(slack, 1e-9)
    assert c.passed is passes and c.margin_scale == "decades"
    if decades is None:
        assert c.margin is None
    else:
        assert c.margin == pytest.approx(decades, abs=1e-8)
