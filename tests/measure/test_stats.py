"""Statistics of repeated trials: exact binomial bounds, the logistic trend z and adjacent
z-scores, checked against closed forms and an independent maximum likelihood fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize

from bottlenecklab.measure._stats import adjacent_z, clopper_pearson, logistic_slope_z


def test_clopper_pearson_matches_the_closed_forms_at_the_ends():
    # k = 0: the one-sided upper bound is 1 - alpha^(1/n); k = n: the lower bound alpha^(1/n)
    assert clopper_pearson(0, 10, 0.95, "less")[1] == pytest.approx(1 - 0.05 ** (1 / 10))
    assert clopper_pearson(10, 10, 0.95, "greater")[0] == pytest.approx(0.05 ** (1 / 10))
    lo, hi = clopper_pearson(5, 10, 0.9)
    assert lo < 0.5 < hi and lo == pytest.approx(1 - hi)


def test_adjacent_z_is_finite_at_zero_and_one_and_signed():
    z = adjacent_z([0.0, 0.5, 1.0, 1.0], 20)
    assert all(math.isfinite(v) for v in z)
    assert z[0] > 0 and z[1] > 0 and z[2] == 0.0


def _mle_z(x, fractions, n):
    """The slope z of an independent fit: scipy minimizes the binomial deviance."""
    x = np.asarray(x, float)
    k = np.asarray(fractions) * n

    def nll(b):
        eta = b[0] + b[1] * x
        return float(np.sum(n * np.logaddexp(0, eta) - k * eta))

    b = scipy.optimize.minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    p = 1 / (1 + np.exp(-(b[0] + b[1] * x)))
    A = np.stack([np.ones_like(x), x], axis=1)
    info = A.T @ (A * (n * p * (1 - p))[:, None])
    return b[1] / math.sqrt(np.linalg.inv(info)[1, 1])


@pytest.mark.parametrize(
    ("fractions", "n"),
    [([0.1, 0.3, 0.5, 0.8], 40), ([0.6, 0.5, 0.3, 0.2], 25), ([0.2, 0.25, 0.2], 100)],
)
def test_logistic_slope_z_agrees_with_an_independent_fit(fractions, n):
    x = [0.0, 1.0, 2.0, 3.0][: len(fractions)]
    assert logistic_slope_z(x, fractions, n) == pytest.approx(
        _mle_z(x, fractions, n), rel=1e-5, abs=1e-6
    )


@pytest.mark.parametrize(
    "fractions",
    [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.0]],
)
def test_logistic_slope_z_is_nan_without_a_finite_estimate(fractions):
    # all one outcome, or successes and failures separated along x: no finite MLE
    assert math.isnan(logistic_slope_z([0.0, 1.0, 2.0], fractions, 8))


def test_logistic_slope_z_is_finite_when_the_groups_overlap():
    assert math.isfinite(logistic_slope_z([0.0, 1.0, 2.0], [0.25, 0.5, 1.0], 8))
