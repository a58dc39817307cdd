"""`leaky-resnet/hamiltonian-vs-depth` — paper 000, Fig 1a.

    bottlenecklab run leaky-resnet/hamiltonian-vs-depth --preset quick

A leaky ResNet is trained on a compositional teacher with bottleneck rank `k*` at several
effective depths `L~`. The rescaled Hamiltonian `-(2/L~) H` (median over layers) estimates
`k*`: it approaches `k*` from below as `L~` grows, while the minimal (relaxed) cost of
identity approaches it from above.

Expected (quick preset: teacher [20, 5, 20], k* = 5, w = 40, L = 30, L~ = 6, 12, 18, 24):
every claim passes for seeds 0-9 (measured below). The recipe is Adam 2000 (cosine),
L-BFGS 3000, then 400 trust-region Newton iterations with exact Hessian-vector products
(`training.newton_steps`). Measured on this 2-core CPU, seed 0, 2026-11-24: median
-(2/L~)H = 1.12, 3.81, 4.49, 4.51 (from below toward 5); min COI_gamma = 5.80, 4.72, 4.66,
4.48 (from above); critical-point residuals 0.054, 0.084, 0.069, 0.142; relative test
error 0.34-0.37. Training takes 75-82 s per point.

Seeds 0-9 (`--seed s`, 2026-11-24), median -(2/L~)H at L~ = 6, 12, 18, 24, and the
largest median residual over the four points; every seed passes 4/4:

    seed  medians                      worst residual
    0     1.122 3.808 4.494 4.509      0.142
    1     1.125 3.878 4.336 4.622      0.116
    2     0.960 3.513 4.329 4.560      0.166
    3     0.922 3.752 4.456 4.518      0.144
    4     1.079 3.757 4.324 4.515      0.150
    5     1.203 3.881 4.456 4.460      0.165
    6     0.664 3.685 4.466 4.461      0.148
    7     1.254 3.898 4.366 4.642      0.129
    8     0.776 3.817 4.276 4.613      0.157
    9     0.801 3.780 4.471 4.532      0.128

At the largest L~ the median is 4.543 on average, 4.460 to 4.642 (all within 0.1 of
the mean). A run of all 10 seeds takes 113-163 s (two points at a time).

The old recipe (Adam 2000 + L-BFGS 8000) failed seed 1 (medians 1.10, 3.84, 3.91, 3.91)
and seed 2 (a dip of 0.22). At L~ = 24 it left residuals of 0.2-0.4 that moved from one
log row to the next, and round-off alone moved the largest-L~ median by 0.3-0.6.

The residual does not reach 0.05 at every L~. The regularized optimum sits on ReLU kinks.
At L~ = 24 (seed 0), 49 entries of the representations are within 1e-10 (relative) of 0.
Around them the loss is flat to 1e-9 while the gradient norm stays ~5e-3, so no method
that needs a gradient to vanish can converge there. Iterates whose losses agree to 1e-9
have residuals of 0.08-0.26 and medians of 4.11-4.63. Choosing sigma'(0) in [0, 1] at
those entries to best satisfy the critical-point identity (a Clarke subgradient) lowers
the median residual only from 0.12 to 0.06. The early and late layers keep 0.2-0.5.
Other teachers of the family (`--set task.dims=[20,k,20]`, seed 0, 2026-11-24):
k* = 3 passes 4/4 (medians -0.47, 2.04, 2.58, 2.74; residuals <= 0.107). k* = 8 FAILS
4/4 on the gate: the residual at L~ = 24 is 0.52 (> 0.3), the medians are 3.47, 5.77,
5.22, 2.95, and the network sits below rank 8 (min COI_gamma 5.8 at L~ = 24, train cost
0.77 against 0.12 for k* = 3). With lam = 0.02 the medians rise to -0.43, 5.61, 6.89,
6.76, but the residual at L~ = 24 is 0.30 and 6.76 < 7, so it still fails. An
8-dimensional bottleneck needs more than this preset's width 40 and schedule give; not
fixed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from bottlenecklab.experiments._claims import (
    at_least,
    at_most,
    in_range,
    non_decreasing,
    unmeasured,
)
from bottlenecklab.experiments._spec import (
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import layer_measurement
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "000 Fig 1a"


@dataclass(frozen=True)
class Config:
    """Fig 1a at the paper's sizes (App. B): `[20, 5, 20]` MLP teacher, `w = 200`, `L = 50`.

    Args:
        leaks: the effective depths `L~` of the sweep (one trained network each).
        gamma0: relative ridge of the stable Hamiltonian and relaxed COI.
        rank_window: `(below, above)`: the median `-(2/L~)H` at the largest `L~` must lie
            in `[k* - below, k* + above]`, and no median may exceed `k* + above` (the
            estimate approaches `k*` from below).
        trend_tolerance: allowed dip between consecutive medians of `-(2/L~) H`.
        coi_tolerance: allowed amount by which `min COI_gamma` may undercut the median.
        test_error_bound: bound on the relative test error `C_test / d_out` (the paper
            gives no number; 1 is the trivial predictor; 0.5 asks that the network explain
            half of the test variance, which the quick preset's N = 300 samples of a
            20-dimensional input allow — it measures ~0.36).
        certify: the convergence certificate of every claim (spec `convergence.md`):
            nonsmooth stationarity <= 1e-2 of the regularization force (the spec's default).
    """

    task: TeacherConfig = TeacherConfig(dims=(20, 5, 20), kind="mlp", n_train=1000, n_test=1000)
    model: LeakyResNetConfig = LeakyResNetConfig(width=200, depth=50, schedule="adaptive")
    train: TrainConfig = TrainConfig(
        lam=0.002,
        phases=(PhaseConfig("adam", 20_000, 1e-3), PhaseConfig("sgd", 10_000, 1e-4)),
    )
    seed: int = 0
    leaks: tuple[float, ...] = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
    gamma0: float = 1e-3
    rank_window: tuple[float, float] = (1.0, 0.5)
    trend_tolerance: float = 0.1
    coi_tolerance: float = 0.25
    test_error_bound: float = 0.5
    certify: Gate = Gate()


def measure(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """Per-layer Hamiltonian table, its summary and the data costs (float64, training set)."""
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    return Measurement(scalars=scalars, layers=table.rows, spectra=table.spectra)


CLAIMS = (
    ("rank-at-largest-leak", "-(2/L~)H estimates k*"),
    ("from-below", "-(2/L~)H grows toward k* with L~, from below"),
    ("coi-from-above", "min COI_gamma lies above the median -(2/L~)H"),
    ("test-error", "the network generalizes"),
)


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """The four claims of Fig 1a (spec `leaky-resnets.md`, experiments table), each gated
    on the convergence of every network (`max_residual`)."""
    k = cfg.task.k_star
    below, above = cfg.rank_window
    by_leak = sorted(
        (r for r in results if r.status == "done"), key=lambda r: r.point["model.leak"]
    )
    if len(by_leak) < len(results) or not by_leak:
        bad = [r.message for r in results if r.status != "done"]
        why = f"{len(bad)} of {len(results)} trainings diverged: {bad[0] if bad else ''}"
        return [unmeasured(cid, SOURCE, st, "see spec", why) for cid, st in CLAIMS]
    medians = [r.scalars["rank_H_median"] for r in by_leak]
    gaps = [r.scalars["coi_gamma_min"] - r.scalars["rank_H_median"] for r in by_leak]
    worst_test = max(r.scalars["test_error"] for r in by_leak)
    top = by_leak[-1]
    leaks = ", ".join(f"{r.point['model.leak']:g}" for r in by_leak)
    trend = non_decreasing(
        "from-below",
        SOURCE,
        f"the median -(2/L~)H approaches k* = {k} from below: non-decreasing in L~ ({leaks}) "
        f"and never above k* + {above:g}",
        medians,
        tol=cfg.trend_tolerance,
    )
    if max(medians) > k + above:
        trend = dataclasses.replace(
            trend,
            measured=f"{trend.measured} (max {max(medians):.3f} > k* + {above:g})",
            passed=False,
        )
    trend = dataclasses.replace(trend, expected=f"{trend.expected}; every value <= {k + above:g}")
    out = [
        in_range(
            "rank-at-largest-leak",
            SOURCE,
            f"at the largest L~ = {top.point['model.leak']:g}, the median over layers of "
            f"-(2/L~)H lies within [k* - {below:g}, k* + {above:g}] (k* = {k})",
            medians[-1],
            k - below,
            k + above,
        ),
        trend,
        at_least(
            "coi-from-above",
            SOURCE,
            "at every L~, min over layers of COI_gamma lies above the median -(2/L~)H "
            f"(gamma0 = {cfg.gamma0:g}): the smallest gap min COI_gamma - median over L~",
            min(gaps),
            0.0,
            tol=cfg.coi_tolerance,
        ),
        at_most(
            "test-error",
            SOURCE,
            "relative test error C_test / d_out, worst over L~",
            worst_test,
            cfg.test_error_bound,
        ),
    ]
    return out


# Presets: only what changes, with the reason.
PRESETS = {
    # Seconds: a 3-layer net on a tiny teacher, two leaks; exercises every stage.
    "smoke": {
        "task.dims": (6, 2, 6),
        "task.hidden": 16,
        "task.n_train": 48,
        "task.n_test": 48,
        "model.width": 8,
        "model.depth": 6,
        "model.schedule": "equidistant",
        "leaks": (1.0, 2.0),
        "train.phases": (
            {"optimizer": "adam", "steps": 40, "lr": 1e-2},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
        "train.log_every": 10,
        "train.checkpoint_every": 20,
    },
    # Minutes on 2 CPU cores. The paper's teacher (k* = 5) on a smaller net, trained
    # until the critical-point residual is ~0.05-0.15. A larger lam (0.05) makes the
    # regularized optimum reachable in a few thousand steps (the per-layer decay gradient
    # (lam/L~) rho W is otherwise ~1e-5 W). Float64. Start at the fixed point
    # W = L~ [I, 0] (+ 1 % noise), so large leaks do not kill the signal. Adam (cosine)
    # fits, L-BFGS (strong Wolfe) approaches the optimum, and trust-region Newton
    # converges where L-BFGS stalls. N = 300 keeps each L~ at ~80 s on one core;
    # generalization is correspondingly modest (see test_error_bound).
    "quick": {
        "task.n_train": 300,
        "model.width": 40,
        "model.depth": 30,
        "model.schedule": "equidistant",
        "model.init_scale": 0.064,  # noise std = 0.01 L~ at w = 40
        "train.lam": 0.05,
        "train.dtype": "float64",
        "leaks": (6.0, 12.0, 18.0, 24.0),
        "train.phases": (
            {"optimizer": "adam", "steps": 2000, "lr": 1e-3, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 3000, "lr": 1.0},
            {"optimizer": "newton", "steps": 400, "lr": 1.0},
        ),
        "train.log_every": 200,
        "train.checkpoint_every": 1000,
    },
    # The paper's own sizes and schedule (App. B): the base config.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="leaky-resnet/hamiltonian-vs-depth",
    source=SOURCE,
    title="-(2/L~)H recovers the bottleneck rank k* as the effective depth grows",
    config=Config(),
    presets=PRESETS,
    grid={"model.leak": "leaks"},
    measure=measure,
    claims=claims,
    figures=("hamiltonian_vs_leak", "layer_portrait"),
    doc=__doc__ or "",
    # What each claim reads, per L~, with its tolerance window (value stability: 1/4).
    reads={
        "rank-at-largest-leak": Reads(("rank_H_median",), window=1.5),  # [k*-1, k*+0.5]
        "from-below": Reads(("rank_H_median",), window=0.5),  # never above k* + 0.5
        "coi-from-above": Reads(("coi_gamma_min", "rank_H_median"), window=0.25),
        "test-error": Reads(("test_error",), window=0.5),  # bound 0.5 above 0
    },
)
