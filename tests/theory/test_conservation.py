"""Conservation of H along integrated geodesics (paper 000, §1.5): drift, crossings, starts."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.measure import loglog_slope
from bottlenecklab.theory import (
    drift_ratios,
    drift_refinement,
    generic_start,
    hamiltonian,
    hamiltonian_drift,
    hamiltonian_flow,
    hamiltonian_flow_located,
    kink_free_start,
    refinement_study,
    sign_crossings,
    vector_field,
)

LEAK = 2.0


def _A0(N: int = 30, w: int = 10, seed: int = 0) -> torch.Tensor:
    return torch.randn(N, w, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _flipped_field(A, B, leak, mask=None):
    """A wrong field: the sign of the `+L~ B` term of dB/dp flipped (H is not conserved)."""
    dA, dB = vector_field(A, B, leak, mask)
    return dA, dB - 2 * leak * B


def _wrong_leak_field(A, B, leak, mask=None):
    """A wrong field: the decay `-L~ A` of dA/dp with 1.5 L~ (not a Hamiltonian field)."""
    dA, dB = vector_field(A, B, leak, mask)
    return dA - 0.5 * leak * A, dB


def test_drift_is_zero_at_start_and_matches_the_hamiltonian() -> None:
    A, B = generic_start(_A0(), torch.Generator().manual_seed(1), scale=0.05)
    Ap, Bp = hamiltonian_flow(A, B, LEAK, steps=20)
    d = hamiltonian_drift(Ap, Bp, LEAK)
    assert d.shape == (21,) and float(d[0]) == 0.0
    H0, H5 = float(hamiltonian(A, B, LEAK)), float(hamiltonian(Ap[5], Bp[5], LEAK))
    assert math.isclose(float(d[5]), abs(H5 - H0) / abs(H0), rel_tol=1e-12)


def test_hamiltonian_is_batched_over_a_path() -> None:
    A, B = generic_start(_A0(), torch.Generator().manual_seed(1), scale=0.05)
    Ap, Bp = hamiltonian_flow(A, B, LEAK, steps=4)
    H = hamiltonian(Ap, Bp, LEAK)
    assert H.shape == (5,)
    for i in range(5):
        assert math.isclose(float(H[i]), float(hamiltonian(Ap[i], Bp[i], LEAK)), rel_tol=1e-12)


def test_sign_crossings_counts_entries_changing_sign() -> None:
    A = torch.tensor([[[1.0, -1.0]], [[-1.0, -1.0]], [[2.0, 0.5]], [[2.0, 0.5]]])
    assert sign_crossings(A) == 3  # entry 0 twice, entry 1 once
    assert sign_crossings(A[:1]) == 0


def test_kink_free_start_crosses_no_kink_and_generic_start_does() -> None:
    g = torch.Generator().manual_seed(2)
    A, B = kink_free_start(_A0(), g, offset=0.5, scale=1e-3)
    assert bool((A > 0).all()) and bool((B >= 0).all())
    assert sign_crossings(hamiltonian_flow(A, B, LEAK, steps=40)[0]) == 0
    A, B = generic_start(_A0(), g, scale=5e-2)
    assert sign_crossings(hamiltonian_flow(A, B, LEAK, steps=40)[0]) > 0


def test_refinement_rows_and_fourth_order_without_kinks() -> None:
    A, B = kink_free_start(_A0(), torch.Generator().manual_seed(3), offset=0.5, scale=1e-3)
    summary, series = drift_refinement(A, B, LEAK, (20, 40, 80), series_points=10)
    assert [r["steps"] for r in summary] == [20, 40, 80]
    assert set(summary[0]) == {"steps", "drift", "drift_end", "crossings"}
    assert all(r["crossings"] == 0 for r in summary)
    assert {r["steps"] for r in series} == {20, 40, 80}
    assert max(r["p"] for r in series) == 1.0
    ratio = summary[1]["drift"] / summary[2]["drift"]
    assert 12 < ratio < 24  # RK4: 16, approached from above


def test_first_order_with_kinks() -> None:
    A, B = generic_start(_A0(), torch.Generator().manual_seed(4), scale=5e-2)
    steps = (25, 50, 100, 200, 400)
    summary, _ = drift_refinement(A, B, LEAK, steps)
    crossings = [r["crossings"] for r in summary]
    # The same crossings once the step resolves them (a coarse step can hide an entry that
    # crosses twice inside it), and no growth with refinement (no chattering).
    assert crossings[-1] == crossings[-2] > 0
    assert max(crossings) - min(crossings) <= 0.05 * max(crossings)
    slope = loglog_slope([1 / n for n in steps], [r["drift"] for r in summary])
    assert 0.5 < slope < 1.5
    assert summary[-1]["drift"] < 1e-3


@pytest.mark.parametrize("field", [_flipped_field, _wrong_leak_field])
def test_a_wrong_field_does_not_conserve_h(field) -> None:
    A, B = kink_free_start(_A0(), torch.Generator().manual_seed(3), offset=0.5, scale=1e-2)
    right, _ = drift_refinement(A, B, LEAK, (40, 80))
    wrong, _ = drift_refinement(A, B, LEAK, (40, 80), field=field)
    assert right[1]["drift"] < 1e-6
    assert wrong[1]["drift"] > 1e-3
    assert wrong[0]["drift"] / wrong[1]["drift"] < 2  # no convergence: it is not the step


def test_located_flow_equals_the_fixed_step_flow_without_kinks() -> None:
    A, B = kink_free_start(_A0(), torch.Generator().manual_seed(3), offset=0.5, scale=1e-3)
    Ap, Bp = hamiltonian_flow(A, B, LEAK, steps=20)
    Al, Bl, events = hamiltonian_flow_located(A, B, LEAK, steps=20)
    assert events == 0
    torch.testing.assert_close(Al, Ap, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(Bl, Bp, rtol=1e-12, atol=1e-14)


def test_located_flow_conserves_h_across_the_kinks() -> None:
    A, B = generic_start(_A0(), torch.Generator().manual_seed(4), scale=5e-2)
    fixed, _ = drift_refinement(A, B, LEAK, (400,))
    located, _ = drift_refinement(A, B, LEAK, (100,), locate_kinks=True)
    assert located[0]["crossings"] == fixed[0]["crossings"] > 0
    assert located[0]["drift"] < 1e-6 < fixed[0]["drift"]
    wrong, _ = drift_refinement(A, B, LEAK, (50,), locate_kinks=True, field=_wrong_leak_field)
    assert wrong[0]["drift"] > 1e-3


def test_drift_ratios_divide_each_drift_by_the_next_and_inf_at_zero():
    rows = [{"drift": 1.6e-3}, {"drift": 1e-4}, {"drift": 0.0}]
    assert drift_ratios(rows) == [pytest.approx(16.0), math.inf]
    assert drift_ratios(rows[:1]) == []


def test_refinement_study_names_each_starts_rows_and_scalars() -> None:
    A, B = kink_free_start(_A0(), torch.Generator().manual_seed(3), offset=0.5, scale=1e-3)
    starts = {"smooth": (A, B, (20, 40), False), "one": (A, B, (20,), False)}
    scalars, refinement, series = refinement_study(starts, LEAK)
    summary, _ = drift_refinement(A, B, LEAK, (20, 40))
    assert scalars["drift_smooth_40"] == summary[1]["drift"]
    assert scalars["order_ratio_smooth"] == summary[0]["drift"] / summary[1]["drift"]
    assert "order_ratio_one" not in scalars  # one step count: no ratio
    assert scalars["H0_one"] == float(hamiltonian(A, B, LEAK))
    assert {r["path"] for r in refinement} == {r["path"] for r in series} == {"smooth", "one"}
