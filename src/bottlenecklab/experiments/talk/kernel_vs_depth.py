"""`talk/kernel-vs-depth` — paper 002, opening slides (kernel rate `N^{-alpha/d_in}`).

    bottlenecklab run talk/kernel-vs-depth --preset quick

Laplace-kernel ridge regression (`exp(-||x - x'|| / 0.5)`, ridge 1e-8, float64) on a
target drawn from the same kernel's Gaussian process on `[0, 1]^d`: the test error falls
like `N^{-1/d}` (`alpha = 1`), the curse of dimensionality. On the composition `h o g` of
`tasks.radial_composition` (`[0, 1]^8`, inner dimension 1) the kernel's and a deep net's
(`L = 6`, width 64, `lam = 1e-4`) slopes are reported, not asserted.

Expected (quick preset, `N = 32 ... 1024`, seeds 0-2): GP slopes -1.02 (d = 1) and -0.48
(d = 2), inside +-20 % of -1/d; about 7 min on 2 loaded cores (the networks' training).
Pilots and measured margins: `docs/lab-notes/talk.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from bottlenecklab.experiments._checks import in_range, reported, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Outcome,
    Points,
    Ungated,
)
from bottlenecklab.experiments.talk._rates import GP_ERROR, KERNEL_TEST_ERROR, RATES
from bottlenecklab.measure import (
    N_TRAIN,
    TEST_COST,
    Quantity,
    loglog_slope,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import RadialCompositionConfig
from bottlenecklab.training import PhaseConfig, TrainConfig


@dataclass(frozen=True)
class Config:
    """The opening slides' comparison (the talk gives no sizes; these are the spec's).

    Args:
        sizes, seeds: the grid (training sizes `N`, seeds).
        gp_dims: input dimensions of the GP targets (one claim each; fixed by the base).
        length, ridge, jitter: Laplace kernel length, KRR ridge, Cholesky jitter.
        slope_tolerance: relative window of the GP slope around `-1/d`.
        net_min_n: smallest `N` of the compositional slopes (kernel and network).
    """

    task: RadialCompositionConfig = RadialCompositionConfig(n_test=1000)
    model: FCNNConfig = FCNNConfig(depth=6, width=64)
    train: TrainConfig = TrainConfig(
        lam=1e-4,
        phases=(PhaseConfig("adam", 20_000, 1e-3, schedule="cosine"),),
        log_every=500,
    )
    seed: int = 0
    sizes: tuple[int, ...] = (32, 64, 128, 256, 512, 1024, 2048, 4096)
    seeds: tuple[int, ...] = (0, 1, 2)
    gp_dims: tuple[int, ...] = (1, 2)
    length: float = 0.5
    ridge: float = 1e-8
    jitter: float = 1e-10
    slope_tolerance: float = 0.2
    net_min_n: int = 128


BASE = Config()


def slope(pts: Points, quantity: Quantity, min_n: float = 0.0) -> float:
    """Log-log slope of `quantity` against `N` over the points with `N >= min_n`."""
    rows = [p for p in pts if p.get(N_TRAIN, 0.0) >= min_n and quantity.name in p.scalars]
    return loglog_slope([p.value(N_TRAIN) for p in rows], [p.value(quantity) for p in rows])


def gp_slope(d: int, cfg: Config, pts: Points) -> Outcome:
    """The GP target's slope in dimension `d` within `slope_tolerance` of `-1/d`."""
    if len({p.get(N_TRAIN) for p in pts}) < 2:
        return unmeasured("fewer than 2 N", d=d)
    lo, hi = -(1 + cfg.slope_tolerance) / d, -(1 - cfg.slope_tolerance) / d
    return in_range(slope(pts, GP_ERROR.at(d)), lo, hi, d=d)


# partial: the GP slopes are the kernel's, the compositional ones only reported
GP_SLOPE = {
    d: ClaimSpec(
        f"gp-slope-d{d}",
        "Laplace-kernel ridge regression on its own GP target in d = {d}: log-log slope "
        "of the test error vs N within +-{cfg.slope_tolerance:.0%} of -1/d",
        Ungated(
            "kernel ridge regression on Gaussian-process targets: a closed-form "
            "estimator, no trained network"
        ),
        partial(gp_slope, d),
        partial=True,
    )
    for d in BASE.gp_dims
}
KERNEL_COMPOSITION_SLOPE = ClaimSpec(
    "kernel-composition-slope",
    "kernel on h o g in [0,1]^{cfg.task.dim} (inner dimension 1): slope of the test "
    "error vs N >= {cfg.net_min_n}",
    None,
    lambda cfg, pts: reported(slope(pts, KERNEL_TEST_ERROR, cfg.net_min_n)),
    partial=True,
)
NET_COMPOSITION_SLOPE = ClaimSpec(
    "net-composition-slope",
    "deep net (L = {cfg.model.depth}, width {cfg.model.width}, lam = {cfg.train.lam:g}) "
    "on h o g: slope of the test error vs N >= {cfg.net_min_n}",
    None,
    lambda cfg, pts: reported(slope(pts, TEST_COST, cfg.net_min_n)),
    partial=True,
)
CLAIMS = [*GP_SLOPE.values(), KERNEL_COMPOSITION_SLOPE, NET_COMPOSITION_SLOPE]

PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: two sizes, one seed, a few Adam steps on a narrow net.
    "smoke": {
        "sizes": (16, 32),
        "seeds": (0,),
        "task.n_test": 50,
        "model.width": 8,
        "model.depth": 3,
        "net_min_n": 16,
        "train.phases": ({"optimizer": "adam", "steps": 20, "lr": 1e-3},),
        "train.log_every": 10,
    },
    # The spec's sizes (N = 32 ... 1024, 3 seeds); 2000 Adam steps fit (lab notes).
    "quick": {
        "sizes": (32, 64, 128, 256, 512, 1024),
        "train.phases": ({"optimizer": "adam", "steps": 2000, "lr": 1e-3, "schedule": "cosine"},),
    },
    # Larger N (to 4096) and a long schedule: the base config.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="talk/kernel-vs-depth",
    source="002 opening slides",
    title="Kernel rate N^{-1/d} on GP targets; kernel vs deep net on a composition h o g",
    config=BASE,
    presets=PRESETS,
    grid={"task.n_train": "sizes", "seed": "seeds"},
    measure=RATES,
    claims=CLAIMS,
    figures=("_talk:kernel_vs_depth",),
    doc=__doc__ or "",
)
