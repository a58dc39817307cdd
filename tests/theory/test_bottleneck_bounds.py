"""Pure formulas of paper 001's bottleneck bounds (Thm 15 distance, Cor 8 bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bottlenecklab.theory import partial_isometry_distance_sq, representation_bottleneck_bound


def test_distance_of_a_partial_isometry_is_zero():
    rng = np.random.default_rng(0)
    Q1, _ = np.linalg.qr(rng.standard_normal((5, 2)))
    Q2, _ = np.linalg.qr(rng.standard_normal((3, 2)))
    assert partial_isometry_distance_sq(Q1 @ Q2.T, 2) == pytest.approx(0.0, abs=1e-24)
    assert partial_isometry_distance_sq(np.diag([3.0, 1.0, 0.5]), 1) == pytest.approx(4 + 1.25)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 3))
def test_key_lemma(seed, k):
    """`||W||_F^2 - k - 2 log|W|_(k) >= d_k(W)^2` (paper 001, Thm 15)."""
    W = np.random.default_rng(seed).standard_normal((4, 3)) * 1.5
    s = np.linalg.svd(W, compute_uv=False)
    lhs = np.sum(s**2) - k - 2 * np.log(s[:k]).sum()
    assert lhs >= partial_isometry_distance_sq(W, k) - 1e-12


def test_cor8_bound_value():
    b = representation_bottleneck_bound(30.0, 10, 2, 0.5, 1.0, -1.0, p=0.25)
    c1 = 10.0
    phi, psi = c1 - 2.0, 0.5 * math.exp(c1 / 2) / (2 * math.exp(-1.0))
    assert b == pytest.approx(math.sqrt(phi) * (math.sqrt(psi) + 0.5) / (0.25 * math.sqrt(10)))
    assert math.isnan(representation_bottleneck_bound(10.0, 10, 2, 0.5, 1.0, -1.0))
