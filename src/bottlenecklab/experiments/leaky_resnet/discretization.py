"""`leaky-resnet/discretization` — paper 000, Fig 2 and §3.

    bottlenecklab run leaky-resnet/discretization --preset quick

Leaky ResNets at `L~ = 3` on a `[30, 6, 3, 30]` residual teacher (`k* = 3`), for several
depths `L` and the `equidistant`, `irregular` and `adaptive` layer-step schedules: test
error per `(L, schedule)` (adaptive <= equidistant at most depths), adaptive steps larger
in the middle than at the ends, spectra of `W_l` with the steps marked, a 2-D PCA of the
representation paths, and the adaptive update's time overhead (paper: about 2 %), reported
here beside its A/A control and asserted only by `make bench`
(`benchmarks/adaptive_overhead.py`, at the paper preset's `w`, `N`).

Expected (quick preset): 2/2 asserted claims pass, the overhead reported; ~1-3 min on one
core.
Lab notes: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from bottlenecklab.experiments._checks import at_least, greater_than, reported, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measure,
    Measurement,
    Outcome,
    PointResult,
    Points,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import (
    LAYERS,
    PAPER_TRAINING,
    PaperConfig,
    layer_measurement,
)
from bottlenecklab.experiments.leaky_resnet._overhead import (
    ADAPT_AA_SPREAD,
    ADAPT_LOAD,
    ADAPT_OVERHEAD,
    overhead_with_control,
)
from bottlenecklab.measure import TEST_ERROR, float64_copy
from bottlenecklab.measure._steps import RHO_MIDDLE_OVER_ENDS, step_profile
from bottlenecklab.measure._views import pca_paths
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig


@dataclass(frozen=True)
class Config(PaperConfig):
    """Fig 2 at the paper's sizes (App. B): `w = 200`, `N = 1000`, `L~ = 3`, `L` in 4..22,
    on a `[30, 6, 3, 30]` residual teacher.

    Args:
        depths, schedules: the sweep's numbers of layers `L` and layer-step schemes.
        win_fraction: fraction of depths at which adaptive must be at most equidistant.
        error_slack: relative slack of that comparison.
        middle_ratio: bound on the adaptive mean middle-third over outer-thirds step.
        overhead_bound, aa_limit, load_limit: the adaptive update's time overhead bound,
            its A/A control and quiet-machine limit (`make bench` only).
        n_paths: samples kept for the PCA figure.
        timing_repeats: timed blocks per arm (medians taken).
    """

    task: TeacherConfig = TeacherConfig(
        dims=(30, 6, 3, 30), kind="resnet", n_train=1000, n_test=1000
    )
    model: LeakyResNetConfig = LeakyResNetConfig(width=200, depth=18, leak=3.0)
    depths: tuple[int, ...] = (4, 6, 10, 14, 18, 22)
    schedules: tuple[str, ...] = ("equidistant", "irregular", "adaptive")
    win_fraction: float = 0.5
    error_slack: float = 0.0
    middle_ratio: float = 1.0
    overhead_bound: float = 0.03
    aa_limit: float = 0.01
    load_limit: float = 0.25
    n_paths: int = 12
    timing_repeats: int = 10


BASE = Config()


def step_measurement(model, data, cfg: Config) -> Measurement:
    """Test error, layer steps, layer table, PCA of paths (and, on the adaptive points,
    the adaptive update's overhead: `ADAPT_OVERHEAD`, `ADAPT_AA_SPREAD`, `ADAPT_LOAD`)."""
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    scalars.update(step_profile(table.column("rho")))
    scalars["rho_max_times_leak"] = float(table.column("rho").max() * model.leak)
    if model.cfg.schedule == "adaptive":
        timing = overhead_with_control(model, data, cfg.train, blocks=cfg.timing_repeats)
        scalars[ADAPT_OVERHEAD.name] = timing.overhead
        scalars[ADAPT_AA_SPREAD.name] = timing.aa_spread
        scalars[ADAPT_LOAD.name] = timing.load
    with torch.no_grad():
        path = float64_copy(model).forward_path(torch.as_tensor(data.x_train))
    coords, explained = pca_paths(path)  # [L+1, N, 2]
    scalars["pca_explained"] = float(explained.sum())
    n = min(cfg.n_paths, coords.shape[1])
    pca = [
        {"layer": l, "sample": j, "x": float(coords[l, j, 0]), "y": float(coords[l, j, 1])}
        for l in range(coords.shape[0])
        for j in range(n)
    ]
    return Measurement(
        scalars=scalars, layers=table.rows, spectra=table.spectra, tables={"pca": pca}
    )


# What every point measures (the overhead only on the adaptive ones: read with `get`).
STEPS = Measure(step_measurement, (*LAYERS.quantities, RHO_MIDDLE_OVER_ENDS))


def _pairs(pts: Points) -> tuple[list[int], dict[int, PointResult], dict[int, PointResult]]:
    """The depths with both an equidistant and an adaptive network, and those networks."""
    by = {
        sched: {p.point["model.depth"]: p for p in pts if p.point["model.schedule"] == sched}
        for sched in ("equidistant", "adaptive")
    }
    eq, ad = by["equidistant"], by["adaptive"]
    return sorted(set(eq) & set(ad)), eq, ad


def _paired(check):
    """`check(cfg, depths, eq, ad)`, or not measured without a pair of networks."""

    def checked(cfg: Config, pts: Points) -> Outcome:
        depths, eq, ad = _pairs(pts)
        if not depths:
            return unmeasured("no depth with both an equidistant and an adaptive network")
        return check(cfg, depths, eq, ad)

    return checked


@_paired
def beats(cfg: Config, depths: list[int], eq: dict, ad: dict) -> Outcome:
    """At strictly more than half the depths the adaptive test error is the lower; strict:
    at init the two schedules are one network (a tie is no win; vacuity V8)."""
    err = {L: (ad[L].value(TEST_ERROR), eq[L].value(TEST_ERROR)) for L in depths}
    wins = sum(a < (1 + cfg.error_slack) * e for a, e in err.values())
    return at_least(
        float(wins),
        float(len(depths) // 2 + 1),
        n=len(depths),
        slack=f" times {1 + cfg.error_slack:g}" if cfg.error_slack else "",
        pairs="; ".join(f"L={L}: {a:.4f} vs {e:.4f}" for L, (a, e) in err.items()),
    )


@_paired
def middle(cfg: Config, depths: list[int], eq: dict, ad: dict) -> Outcome:
    """The smallest ratio of mean middle-third step to mean outer-thirds step."""
    ratios = [ad[L].value(RHO_MIDDLE_OVER_ENDS) for L in depths]
    return greater_than(
        min(ratios),
        cfg.middle_ratio,
        ratios=", ".join(f"L={L}: {v:.2f}" for L, v in zip(depths, ratios)),
    )


@_paired
def overhead(cfg: Config, depths: list[int], eq: dict, ad: dict) -> Outcome:
    """The largest adaptive-update overhead over depths, with its A/A spread (reported)."""
    return reported(max(ad[L].value(ADAPT_OVERHEAD) for L in depths)).with_facts(
        per_depth=", ".join(
            f"L={L}: {100 * ad[L].value(ADAPT_OVERHEAD):.1f} % (A/A "
            f"{100 * ad[L].get(ADAPT_AA_SPREAD):.1f} %, load {ad[L].get(ADAPT_LOAD):.2f})"
            for L in depths
        ),
        bound=100 * cfg.overhead_bound,
    )


ADAPTIVE_BEATS_EQUIDISTANT = ClaimSpec(
    "adaptive-beats-equidistant",
    "number of depths L (of {n}) where the adaptive test error is below the "
    "equidistant one{slack}: strictly more than half ({pairs})",
    Reads((TEST_ERROR,), window=0.02),
    beats,
    partial=True,  # the depths with both networks
)
ADAPTIVE_STEPS_MIDDLE = ClaimSpec(
    "adaptive-steps-middle",
    "adaptive layer steps are larger in the middle third than in the outer thirds: "
    "smallest ratio of their means over depths ({ratios})",
    Reads((RHO_MIDDLE_OVER_ENDS,), window=BASE.middle_ratio),
    middle,
    source="000 §3",
    partial=True,
)
ADAPTIVE_OVERHEAD = ClaimSpec(
    "adaptive-overhead",
    "extra CPU time of training steps with the adaptive update over the same steps "
    "without it, largest over depths (paper: about 2 %), beside the A/A spread of two "
    "identical fixed-step arms timed in the same run and the load average "
    "({per_depth}); asserted (<= {bound:g} %) by `make bench` at the "
    "paper's w and N, where a noisy A/A pair or a loaded machine makes it not-measured",
    None,
    overhead,
    source="000 §3",
    partial=True,
)

PRESETS = {
    # Seconds: tiny teacher and net, two depths; a smaller leak keeps rho_l L~ < 1.
    "smoke": {
        "model.leak": 1.5,
        "task.dims": (6, 3, 2, 6),
        "task.hidden": 16,
        "task.n_train": 48,
        "task.n_test": 48,
        "model.width": 8,
        "depths": (4, 6),
        "train.phases": ({"optimizer": "adam", "steps": 30, "lr": 1e-2},),
        "train.log_every": 10,
        "train.checkpoint_every": 30,
        "timing_repeats": 3,
        "n_paths": 5,
    },
    # Minutes: N = 500, w = 30, four depths; Adam, L-BFGS, Newton in float64 (lab notes).
    "quick": {
        "task.n_train": 500,
        "task.n_test": 500,
        "model.width": 30,
        "train.lam": 0.05,
        "train.dtype": "float64",
        "depths": (6, 10, 14, 18),
        "train.phases": (
            {"optimizer": "adam", "steps": 800, "lr": 3e-3, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 3000, "lr": 1.0},
            {"optimizer": "newton", "steps": 200, "lr": 1.0},
        ),
        "train.log_every": 100,
        "train.checkpoint_every": 500,
    },
    "paper": PAPER_TRAINING,  # the paper's sizes and lam, continuation in lam (_common)
}

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/discretization",
    source="000 Fig 2",
    title="Test error vs depth L for equidistant, irregular and adaptive layer steps",
    config=BASE,
    presets=PRESETS,
    grid={"model.depth": "depths", "model.schedule": "schedules"},
    measure=STEPS,
    claims=[ADAPTIVE_BEATS_EQUIDISTANT, ADAPTIVE_STEPS_MIDDLE, ADAPTIVE_OVERHEAD],
    figures=(
        "_leaky_resnet_discretization:error_vs_depth",
        "_leaky_resnet_discretization:discretization_spectra",
        "_leaky_resnet_discretization:pca_paths",
    ),
    doc=__doc__ or "",
)
