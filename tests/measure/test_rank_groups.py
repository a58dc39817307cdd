"""Rank-group line fits of `||theta||^2` against depth (paper 001, Fig 1)."""

from __future__ import annotations

import math

import pytest

from bottlenecklab.measure import rank_group_fits
from bottlenecklab.measure._rank_depth import (
    collapse_margin,
    largest_depth_share,
    rank_depth_correlation,
)


def test_fits_recover_slope_and_intercept():
    depths = [4, 6, 8, 10, 12, 16, 20]
    ranks = [3, 3, 3, 2, 2, 2, 2]
    norms = [3 * L + 5.0 if r == 3 else 2 * L + 9.0 for L, r in zip(depths, ranks)]
    groups = {g["rank"]: g for g in rank_group_fits(depths, norms, ranks)}
    assert groups[2]["slope"] == pytest.approx(2.0) and groups[2]["intercept"] == pytest.approx(9)
    assert groups[3]["slope"] == pytest.approx(3.0) and groups[3]["fitted"] == 0.0  # span 4
    assert groups[2]["fitted"] == 1.0


def test_single_depth_group_has_no_line():
    (g,) = rank_group_fits([8, 8], [20.0, 21.0], [2, 2])
    assert math.isnan(g["slope"]) and g["fitted"] == 0.0


def test_correlation():
    assert rank_depth_correlation([3, 4, 6, 8], [9, 7, 4, 2]) == pytest.approx(-1.0)
    assert math.isnan(rank_depth_correlation([3, 4], [2, 2]))


def test_collapse_margin_is_first_failing_depth_minus_last_all_fitting_depth():
    depths = [4, 4, 8, 8, 16, 16, 32]
    fits = [True, True, True, True, True, False, False]
    assert collapse_margin(depths, fits) == (16, 8, 8)
    # a failure below an all-fitting depth gives a negative margin
    assert collapse_margin([4, 8, 16], [False, True, True]) == (4, 16, -12)
    collapse, top, margin = collapse_margin([4, 8], [True, True])
    assert (collapse, top, margin) == (math.inf, 8, math.inf)
    assert math.isnan(collapse_margin([4], [False])[2])


def test_largest_depth_share_takes_the_best_depth():
    depths = [4, 4, 4, 8, 8, 8]
    assert largest_depth_share(depths, [True, False, False, True, True, False]) == 2 / 3
    assert largest_depth_share(depths, [False] * 6) == 0.0
    assert largest_depth_share([], []) == 0.0
