"""Smoke runs of the paper-000 experiments: claim ids, figures and measured scalars."""

from __future__ import annotations

import json

import pytest

# name -> (claim ids in order, figure files, scalars every point must measure)
EXPECTED = {
    "leaky-resnet/hamiltonian-vs-depth": (
        ("rank-at-largest-leak", "from-below", "coi-from-above", "test-error"),
        ("hamiltonian_vs_leak", "layer_portrait"),
        (
            "rank_H_median",
            "rank_H_gamma_median",
            "coi_gamma_min",
            "cp_residual_median",
            "test_error",
        ),
    ),
    "leaky-resnet/layer-portrait": (
        ("bottleneck-gap", "hamiltonian-flat", "kinetic-middle", "coi-bottleneck", "non-negative"),
        ("layer_portrait",),
        ("gap_middle_median", "spread_H", "kinetic_middle_over_ends"),
    ),
    "leaky-resnet/discretization": (
        ("adaptive-beats-equidistant", "adaptive-steps-middle", "adaptive-overhead"),
        ("error_vs_depth", "discretization_spectra", "pca_paths"),
        ("test_error", "rho_middle_over_ends", "pca_explained"),
    ),
    "leaky-resnet/path-bounds": (
        (
            "path-length-bounded",
            "B-bounded",
            "BS-bounded",
            "thm4-upper",
            "thm4-lower",
            "thm4-lower-corrected",
            "thm4-per-layer",
            "thm4-constant-gamma",
        ),
        ("path_bounds", "layer_portrait"),
        (
            "path_length",
            "B_max",
            "BS_max",
            "thm4_middle",
            "thm4_upper",
            "thm4_lower",
            "balancedness_max",
        ),
    ),
    "leaky-resnet/hamiltonian-flow": (
        (
            "rk4-order",
            "kinked-drift",
            "kinked-drift-shrinks",
            "range-symmetry",
            "range-norm",
            "output-scaling",
        ),
        ("hamiltonian_flow",),
        ("order_ratio_smooth", "drift_kinked_20", "range_path_error", "scaling_path_error"),
    ),
    "leaky-resnet/coi-minima": (
        (
            "prop1-bound",
            "nonneg-coi-is-rank",
            "minima-non-negative",
            "minima-coi-is-rank",
            "minima-coi-bar-is-rank",
        ),
        ("coi_minima",),
        ("prop1_min_gap", "prop2_max_negative_mass", "prop2_max_rank_error"),
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_claim_is_reported(name, smoke_record) -> None:
    _, _, out, _ = smoke_record(name)
    claims = json.loads((out / "claims.json").read_text())
    assert tuple(c["id"] for c in claims) == EXPECTED[name][0]
    assert all(isinstance(c["passed"], bool) and c["expected"] for c in claims)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_figures_and_summary(name, smoke_record) -> None:
    _, _, out, _ = smoke_record(name)
    for fig in EXPECTED[name][1]:
        assert (out / "figures" / f"{fig}.png").stat().st_size > 1000
    assert name in (out / "summary.md").read_text()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_measured_scalars(name, smoke_record) -> None:
    *_, record = smoke_record(name)
    assert record.points
    for point in record.points:
        assert point.status == "done"
        assert set(EXPECTED[name][2]) <= set(point.scalars)
