"""The paper-004 experiments (`l2/...`): smoke runs (one through the CLI), claims that pass
on right inputs and FAIL on crafted results, untrained networks and wrong inputs, and (slow)
every claim of each quick preset."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest

from bottlenecklab.config import apply_overrides
from bottlenecklab.experiments import Measurement, PointResult, get, resolve_config, run_experiment

NAMES = [
    "l2/reformulation",
    "l2/counterexample",
    "l2/one-dim-pruning",
    "l2/bipartite-sparsity",
    "l2/attraction-repulsion",
    "l2/width-plateau",
    "l2/width-plateau-digits",
]


def _result(m: Measurement, point: dict[str, Any] | None = None) -> PointResult:
    return PointResult(
        "x", point or {}, "done", "", m.scalars, m.layers, m.spectra, 0, 0.0, m.tables
    )


def _verdicts(name: str, cfg: Any, results: list[PointResult]) -> dict[str, bool]:
    return {c.id: c.passed for c in get(name).claims(cfg, results)}


@pytest.mark.parametrize("name", NAMES)
def test_smoke_run_writes_claims_and_figures(smoke_record, name):
    exp, _, out, record = smoke_record(name)
    assert (out / "claims.json").exists()
    assert record.claims and all(c.source.startswith("004") for c in record.claims)
    for fig in exp.figures:
        assert (out / "figures" / f"{fig}.png").exists()


def test_single_point_training_curves_render_without_warnings(smoke_record):
    """One grid point has no label to put in a legend: no empty legend is asked for."""
    import warnings

    from bottlenecklab.report import write_figures

    _, _, _, record = smoke_record(AR)
    assert len(record.points) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = write_figures(record, ("training_curves",))
    assert [p.name for p in paths] == ["training_curves.png"]


def test_cli_smoke(tmp_path):
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "bottlenecklab",
        "run",
        "l2/counterexample",
        "--preset",
        "smoke",
        "--out",
        str(out),
        "--jobs",
        "1",
        "--threads",
        "1",
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    assert (out / "claims.json").exists()


# ---------------------------------------------------------------- reformulation

REF = "l2/reformulation"
REF_GOOD = {
    "random_split_error": 1e-15,
    "random_cov_error": 1e-15,
    "trained_split_error": 1e-15,
    "trained_cov_error": 1e-14,
    "step_residual": 1e-16,
    "decay_error": 1e-14,
    "linear_error": 1e-7,
    "linear_grad_norm": 1e-8,
}


def test_reformulation_claims_pass_on_good_values():
    cfg = resolve_config(get(REF), "smoke")
    assert all(_verdicts(REF, cfg, [_result(Measurement(scalars=REF_GOOD))]).values())


@pytest.mark.parametrize(
    "key, value, failing",
    [
        ("random_split_error", 1e-6, "split-random"),
        ("random_cov_error", math.nan, "cov-random"),
        ("trained_split_error", 1e-3, "split-trained"),
        ("trained_cov_error", 1e-3, "cov-trained"),
        ("step_residual", 1e-9, "projector-step"),
        ("decay_error", 1e-3, "null-decay"),
        ("linear_error", 1e-2, "linear-kernels"),
        ("linear_grad_norm", 1e-3, "linear-kernels"),  # converged gate
    ],
)
def test_reformulation_claims_fail_on_crafted(key, value, failing):
    cfg = resolve_config(get(REF), "smoke")
    verdict = _verdicts(REF, cfg, [_result(Measurement(scalars={**REF_GOOD, key: value}))])
    assert not verdict[failing]
    assert sum(not v for v in verdict.values()) == 1


def test_reformulation_untrained_linear_net_fails():
    """An untrained linear net (0 L-BFGS steps) fails the linear claim (the gate and the
    kernel error)."""
    exp = get(REF)
    cfg = apply_overrides(resolve_config(exp, "smoke"), {"lin_steps": 0})
    m = exp.measure(None, None, cfg)
    verdict = _verdicts(REF, cfg, [_result(m)])
    assert not verdict["linear-kernels"]
    assert m.scalars["linear_error"] > cfg.linear_tol


# ---------------------------------------------------------------- counterexample

CE = "l2/counterexample"


def test_counterexample_claims_pass_on_smoke(smoke_record):
    _, _, _, record = smoke_record(CE)
    assert all(c.passed for c in record.claims)


@pytest.mark.parametrize(
    "over, failing",
    [
        ({"escape_sign": -1.0}, {"escape-path"}),  # 004's printed -eps
        ({"angle": 0.0}, {"family-local-min"}),  # the end point a_2 = 0 is no minimum
    ],
)
def test_counterexample_claims_fail_on_wrong_inputs(over, failing):
    exp = get(CE)
    cfg = apply_overrides(resolve_config(exp, "smoke"), {"gd_steps": 1, **over})
    verdict = _verdicts(CE, cfg, [_result(exp.measure(None, None, cfg))])
    assert {k for k, v in verdict.items() if not v} == failing


@pytest.mark.parametrize("key", ["family_error", "global_error"])
def test_counterexample_values_fail_on_crafted(key):
    cfg = resolve_config(get(CE), "smoke")
    good = {
        "family_error": 0.0,
        "global_error": 0.0,
        "perturbation_min": 0.0,
        "escape_error": 1e-10,
    }
    assert all(_verdicts(CE, cfg, [_result(Measurement(scalars=good))]).values())
    verdict = _verdicts(CE, cfg, [_result(Measurement(scalars={**good, key: 1e-6}))])
    assert sum(not v for v in verdict.values()) == 1


# ---------------------------------------------------------------- one-dim-pruning

PR = "l2/one-dim-pruning"
PR_GOOD = {
    "n_train": 10.0,
    "alive_before": 150.0,
    "neurons_after": 12.0,
    "output_change": 1e-15,
    "norm_before": 20.0,
    "norm_after": 19.0,
}


def test_pruning_claims_pass_on_smoke(smoke_record):
    _, _, _, record = smoke_record(PR)
    assert all(c.passed for c in record.claims)


@pytest.mark.parametrize(
    "key, value, failing",
    [
        ("neurons_after", 41.0, "at-most-4N"),
        ("output_change", 1e-6, "outputs-kept"),
        ("norm_after", 20.5, "norm-not-raised"),
        ("output_change", math.nan, "outputs-kept"),
    ],
)
def test_pruning_claims_fail_on_crafted(key, value, failing):
    cfg = resolve_config(get(PR), "smoke")
    assert all(_verdicts(PR, cfg, [_result(Measurement(scalars=PR_GOOD))]).values())
    verdict = _verdicts(PR, cfg, [_result(Measurement(scalars={**PR_GOOD, key: value}))])
    assert {k for k, v in verdict.items() if not v} == {failing}


# ---------------------------------------------------------------- bipartite-sparsity

BI = "l2/bipartite-sparsity"


def _bi_points(values: dict[int, float], grad: float = 1e-7, pairs: float = 16.0):
    out = []
    for w, v in values.items():
        s = {
            "width": float(w),
            "loss_over_lam": v,
            "norm_sq": 63.9,
            "neurons": 16.0,
            "rank_K1": 8.0,
            "pairs_covered": pairs if w == 32 else 0.0,
            "grad_norm": grad,
            "remark23_fit_error": 0.0,
            "remark23_norm": 72.0,
        }
        out.append(_result(Measurement(scalars=s), {"model.width": w, "seed": 0}))
    return out


BI_GOOD = {4: 80.0, 8: 64.66, 12: 64.24, 14: 64.12, 16: 64.03, 20: 63.944, 32: 63.944}


def test_bipartite_claims_pass_on_good_values():
    cfg = resolve_config(get(BI), "quick")
    assert all(_verdicts(BI, cfg, _bi_points(BI_GOOD)).values())


@pytest.mark.parametrize(
    "change, failing",
    [
        ({32: 63.96, 20: 63.96}, {"wide-optimum"}),
        ({8: 72.5}, {"width-N"}),
        ({8: 63.944, 12: 63.944, 14: 63.944, 16: 63.944}, {"width-N", "plateau"}),
        ({14: 64.30}, {"non-increasing"}),
        ({16: 63.944}, set()),  # a plateau from 16 = N^2/4 is in range
    ],
)
def test_bipartite_claims_fail_on_crafted(change, failing):
    cfg = resolve_config(get(BI), "quick")
    verdict = _verdicts(BI, cfg, _bi_points({**BI_GOOD, **change}))
    assert {k for k, v in verdict.items() if not v} == failing


def test_bipartite_claims_fail_unconverged_or_unpatterned():
    cfg = resolve_config(get(BI), "quick")
    verdict = _verdicts(BI, cfg, _bi_points(BI_GOOD, grad=1e-2))
    assert not any(v for k, v in verdict.items() if k != "remark23")
    assert not _verdicts(BI, cfg, _bi_points(BI_GOOD, pairs=12.0))["pairs"]


def test_bipartite_untrained_fails(smoke_record):
    """The smoke run (30 L-BFGS steps) is far from converged: the gated claims fail."""
    _, _, _, record = smoke_record(BI)
    verdict = {c.id: c.passed for c in record.claims}
    assert verdict["remark23"]
    assert not verdict["wide-optimum"] and not verdict["pairs"]


# ---------------------------------------------------------------- attraction-repulsion

AR = "l2/attraction-repulsion"
AR_GOOD = {
    "grad_norm": 1e-5,
    "cos_layer1": -0.999,
    "cos_layer2": -0.998,
    "rays_layer1": 3.0,
    "rays_layer2": 3.0,
    "centroid_accuracy_layer1": 0.9,
    "centroid_accuracy_layer2": 1.0,
    "residual_layer1": 0.01,
    "residual_layer2": 0.01,
    "residual10_layer1": 0.01,
    "residual10_layer2": 0.01,
    "merged_layer1": 5.0,
    "merged_layer2": 4.0,
    "rank_K_layer1": 5.0,
    "rank_K_layer2": 4.0,
}


@pytest.mark.parametrize(
    "key, value, failing",
    [
        ("cos_layer1", -0.5, {"balance-layer1"}),
        ("cos_layer2", 0.1, {"balance-layer2"}),
        ("rays_layer1", 7.0, {"rays-layer1"}),
        ("centroid_accuracy_layer2", 0.95, {"cluster"}),
        (
            "grad_norm",
            0.1,
            {"balance-layer1", "balance-layer2", "rays-layer1", "rays-layer2", "cluster"},
        ),
    ],
)
def test_forces_claims_fail_on_crafted(key, value, failing):
    cfg = resolve_config(get(AR), "quick")
    assert all(_verdicts(AR, cfg, [_result(Measurement(scalars=AR_GOOD))]).values())
    verdict = _verdicts(AR, cfg, [_result(Measurement(scalars={**AR_GOOD, key: value}))])
    assert {k for k, v in verdict.items() if not v} == failing


def test_forces_untrained_fails(smoke_record):
    """The smoke run (100 GD steps) is unconverged: every claim fails."""
    _, _, _, record = smoke_record(AR)
    assert not any(c.passed for c in record.claims)
    assert len(record.claims) == 5


def test_forces_views_table(smoke_record):
    _, cfg, _, record = smoke_record(AR)
    rows = record.points[0].tables["views"]
    assert {r["view"] for r in rows} == {"rows", "columns"}
    assert {r["layer"] for r in rows} == {1, 2}


# ---------------------------------------------------------------- width plateaus

WP = "l2/width-plateau"
WPD = "l2/width-plateau-digits"


def _wp_points(values: dict[int, float], grad: float = 1e-4, lam: float | None = None):
    out = []
    for seed, bump in ((0, 0.0), (1, 0.01)):
        for w, v in values.items():
            s = {
                "width": float(w),
                "loss": v * (1 + bump),
                "test_cost": 2 * v,
                "grad_norm": grad,
                "merged_min": 5.0,
                "merged_max": 8.0,
            }
            point = {"model.width": w, "seed": seed}
            if lam is not None:
                point["train.lam"] = lam
            out.append(_result(Measurement(scalars=s), point))
    return out


WP_GOOD = {2: 1.0, 4: 0.5, 6: 0.3, 8: 0.2, 10: 0.12, 12: 0.105, 16: 0.1, 24: 0.1, 32: 0.1}
EARLY = {4: 0.1, 6: 0.1, 8: 0.1, 10: 0.1, 12: 0.1}


@pytest.mark.parametrize(
    "change, failing",
    [
        ({}, set()),
        ({24: 0.105}, {"non-increasing"}),  # a 5 % rise
        ({6: 0.1, 8: 0.1, 10: 0.1, 12: 0.1}, set()),  # plateau from 6: in [5, 20]
        (EARLY, {"plateau"}),  # plateau from 4: too early
        ({24: 0.5, 32: 0.09}, {"non-increasing", "plateau"}),
    ],
)
def test_plateau_claims_crafted(change, failing):
    cfg = resolve_config(get(WP), "quick")
    verdict = _verdicts(WP, cfg, _wp_points({**WP_GOOD, **change}))
    assert {k for k, v in verdict.items() if not v} == failing


def test_plateau_claims_gated_and_per_lam():
    cfg = resolve_config(get(WPD), "quick")
    pts = _wp_points(WP_GOOD, lam=1e-3) + _wp_points({**WP_GOOD, **EARLY}, lam=1e-4)
    verdict = _verdicts(WPD, cfg, pts)
    assert {k for k, v in verdict.items() if not v} == {"plateau(lam=0.0001)"}
    assert not any(
        _verdicts(WP, resolve_config(get(WP), "quick"), _wp_points(WP_GOOD, grad=1.0)).values()
    )


@pytest.mark.parametrize("name", [WP, WPD])
def test_plateau_untrained_fails(smoke_record, name):
    """The smoke runs (50 Adam steps) are far from converged: every claim fails."""
    _, _, _, record = smoke_record(name)
    assert record.claims and not any(c.passed for c in record.claims)


# ---------------------------------------------------------------- quick presets


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quick_preset_claims_pass(tmp_path, name):
    exp = get(name)
    cfg = resolve_config(exp, "quick")
    record = run_experiment(exp, cfg, tmp_path / "run", preset="quick", progress=False)
    failed = [(c.id, c.measured, c.expected) for c in record.claims if not c.passed]
    assert not failed
