"""Smoke runs of the paper-000 experiments: claim ids, figures and measured scalars."""

from __future__ import annotations

import json

import pytest

from bottlenecklab.experiments import PointResult, get, resolve_config, run_experiment

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
            "rk4-every-doubling",
            "kinked-drift",
            "kinked-first-order",
            "kinked-located",
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


TRAINED = (
    "leaky-resnet/discretization",
    "leaky-resnet/hamiltonian-vs-depth",
    "leaky-resnet/layer-portrait",
    "leaky-resnet/path-bounds",
)
UNTRAINED = {"train.phases": ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)}


@pytest.mark.parametrize("name", TRAINED)
def test_every_claim_fails_on_an_untrained_network(name, tmp_path) -> None:
    """Claims about trained networks are gated on convergence: an untrained network (no
    training step at all) fails every one of them, with the residual as the reason."""
    exp = get(name)
    cfg = resolve_config(exp, "smoke", UNTRAINED)
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    assert record.claims and all(p.steps == 0 for p in record.points)
    assert not any(c.passed for c in record.claims)
    assert all("not converged" in str(c.measured) for c in record.claims)


def _point(leak: float, **scalars) -> PointResult:
    return PointResult("id", {"model.leak": leak}, "done", "", scalars, [], [], 100, 1.0)


def _flagship_points(residual: float, medians=(3.2, 4.1, 4.6), coi=(5.5, 5.0, 4.8)):
    return [
        _point(
            leak,
            rank_H_median=m,
            coi_gamma_min=c,
            test_error=0.3,
            cp_residual_median=residual,
        )
        for leak, m, c in zip((6.0, 12.0, 24.0), medians, coi)
    ]


def test_flagship_claims_pass_on_converged_results_and_fail_above_the_gate() -> None:
    exp = get("leaky-resnet/hamiltonian-vs-depth")
    cfg = resolve_config(exp, "quick")
    assert all(c.passed for c in exp.claims(cfg, _flagship_points(0.05)))
    gated = exp.claims(cfg, _flagship_points(cfg.max_residual * 1.01))
    assert not any(c.passed for c in gated)


@pytest.mark.parametrize(
    "medians, coi, failing",
    [
        ((3.2, 4.1, 3.7), (5.5, 5.0, 4.8), "from-below"),  # a dip of 0.4 > 0.1
        ((3.2, 5.8, 4.6), (6.5, 6.0, 4.8), "from-below"),  # above k* + 0.5 on the way
        ((3.2, 4.1, 6.0), (5.5, 5.0, 6.5), "rank-at-largest-leak"),  # overshoots k*
        ((3.2, 4.1, 4.6), (5.5, 3.5, 4.8), "coi-from-above"),  # COI below H by 0.6
    ],
)
def test_flagship_claims_fail_on_wrong_converged_results(medians, coi, failing) -> None:
    exp = get("leaky-resnet/hamiltonian-vs-depth")
    claims = exp.claims(resolve_config(exp, "quick"), _flagship_points(0.05, medians, coi))
    assert {c.id: c.passed for c in claims}[failing] is False


def test_path_bounds_growth_like_sqrt_leak_is_not_bounded() -> None:
    """ "Bounded as L~ grows" is a log-log slope: sqrt(L~) growth (slope 1/2) fails even
    though its max/min ratio over three points is only 2."""
    exp = get("leaky-resnet/path-bounds")
    cfg = resolve_config(exp, "quick")
    keys = (
        "thm4_upper thm4_middle thm4_lower thm4_lower_corrected thm4_per_layer_frac "
        "thm4_per_layer_frac_corrected thm4_upper_const thm4_middle_const thm4_lower_const"
    ).split()
    points = [
        _point(
            leak,
            path_length=2.0 * leak**0.5,
            B_max=3.0,
            BS_max=1.0 + 0.01 * leak,
            cp_residual_median=0.05,
            **{k: 0.0 for k in keys},
        )
        for leak in (4.0, 8.0, 16.0)
    ]
    got = {c.id: c.passed for c in exp.claims(cfg, points)}
    assert got["path-length-bounded"] is False
    assert got["B-bounded"] is True and got["BS-bounded"] is True


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_quick_preset_passes_every_claim(name, tmp_path) -> None:
    """`make test-slow`: every paper-000 quick preset passes every claim."""
    exp = get(name)
    record = run_experiment(
        exp, resolve_config(exp, "quick"), tmp_path / "run", preset="quick", progress=False
    )
    failed = [(c.id, c.measured) for c in record.claims if not c.passed]
    assert record.claims and not failed, failed
