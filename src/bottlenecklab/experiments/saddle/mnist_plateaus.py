"""`saddle/mnist-plateaus` — paper 003, Fig 1, 3, 4 (trains; the paper preset wants a GPU).

    bottlenecklab run saddle/mnist-plateaus --preset quick
    BOTTLENECKLAB_DATA=/path/to/folder bottlenecklab run saddle/mnist-plateaus --preset paper

A bias-free ReLU net (depth 6; depth 4 for Fig 4: one grid point each) trained by SGD
(batch 32) with cross-entropy from a small init, `lr = 10/||theta||^4`. Expected: loss
starts at `ln 10`, two drops (saddle to saddle); at the flattest point between them
`s_1/s_2 >= 3` in every layer `l >= 2`, deeper layers more so; mean `s_2/s_1` doubles by
the end. Quick preset: 8x8 digits, width 32, `sigma_0 = 5e-2`, ~2-4 min CPU (5-10 min
wall on the shared 2 cores); paper preset: MNIST IDX files (`docs/saddles.md`).
Measured numbers and pilots: `docs/lab-notes/saddle.md`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab.experiments._checks import at_least, at_most, fmt, outcome, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Outcome,
    Points,
    Ungated,
)
from bottlenecklab.experiments.saddle._common import dynamics
from bottlenecklab.experiments.saddle._plateaus import (
    DROPS,
    GAP_MEAN_DEEP,
    GAP_MEAN_SHALLOW,
    GAP_MIN_L2,
    LAST_LOSS,
    LOSS0_MINUS_LN10,
    RATIO_MEAN_END,
    RATIO_MEAN_SNAPSHOT,
    SGD_RUN,
    SNAPSHOT_STEP,
    read,
    scalars,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import ImageTask
from bottlenecklab.training import PhaseConfig, TrainConfig

DYNAMICS = Ungated(
    dynamics(
        "loss plateaus and drops, the spectra at the flattest point between two drops and at "
        "the end; no weight decay, and cross-entropy has no minimizer"
    )
)


@dataclass(frozen=True)
class Config:
    """Fig 1/3 (depth 6) and Fig 4 (depth 4), one grid point per trained network.

    Args:
        data: the images (`tasks.ImageTask`: `data.source`, `data.root`, `data.n_train`);
            width: hidden width; depth: depth of Fig 1/3; init_std: `sigma_0`.
        lr, lr_power: `eta = lr ||theta||^lr_power` (Fig 1: `10 / ||theta||^4`).
        min_lr: floor of the depth-`depth` learning rate (`0`: none, the paper's rule).
        batch_size, steps: SGD; log_every: steps between full-training-set losses;
        svd_every: steps between singular-value logs (a multiple of `log_every`);
        svd_top: how many of each layer's largest singular values are logged;
        checkpoint_every: steps between checkpoints.
        depth4_steps, depth4_lr_power: the depth-4 run of Fig 4 (`0` steps: skip).
        drop_rise, drop_fall: `measure._saddles.loss_drops` rate thresholds.
        drop_min_fraction: a drop counts only if the smoothed loss falls across it by
            this fraction of the initial loss `ln 10` (`loss_drops`' `min_fall`): the
            spec's escape criterion (`saddle/plateau-time`: loss `<= 0.9 C(0)`), since a
            drop is an escape from a saddle; the rate thresholds alone are scale-free and
            count the noise of a flat curve.
        loss0_tol: `|loss_0 - ln 10|` tolerance; gap_min: `s_1/s_2` for `l >= 2` at the
            snapshot (spec threshold); end_factor: mean `s_2/s_1` (`l >= 2`) at the end
            over the snapshot's; final_loss_max: "the end" is past the saddles: final loss
            at most this (part of `rank-grows`).
        run: this point, an index into `plan` (the grid: `runs`).
    """

    data: ImageTask = ImageTask()
    width: int = 1000
    depth: int = 6
    init_std: float = 1e-3
    lr: float = 10.0
    lr_power: float = -4.0
    min_lr: float = 0.0
    batch_size: int = 32
    steps: int = 1_875_000  # 1000 epochs of 60000 images
    log_every: int = 1000
    svd_every: int = 5000
    svd_top: int = 10
    checkpoint_every: int = 5000
    depth4_steps: int = 1_875_000
    depth4_lr_power: float = -2.0
    drop_rise: float = 0.2
    drop_fall: float = 0.05
    drop_min_fraction: float = 0.1
    loss0_tol: float = 1e-3
    gap_min: float = 3.0
    end_factor: float = 2.0
    final_loss_max: float = 1.0
    run: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        for i in range(len(self.plan)):  # a wrong setting is refused here, not in a run
            self._train(i)

    @property
    def plan(self) -> tuple[tuple[int, int, float, float], ...]:
        """Every grid point's `(depth, steps, lr_power, min_lr)`: Fig 1/3, then Fig 4."""
        runs = [(self.depth, self.steps, self.lr_power, self.min_lr)]
        if self.depth4_steps:
            runs.append((4, self.depth4_steps, self.depth4_lr_power, 0.0))
        return tuple(runs)

    @property
    def runs(self) -> tuple[int, ...]:
        """The grid: an index per run of `plan`."""
        return tuple(range(len(self.plan)))

    @property
    def task(self) -> ImageTask:
        return self.data

    @property
    def model(self) -> FCNNConfig:
        """This run's net: bias-free, `N(0, sigma_0^2)` weights."""
        L = self.plan[self.run][0]
        return FCNNConfig(
            depth=L, width=self.width, bias_scale=0.0, init="normal", init_scale=self.init_std
        )

    @property
    def train(self) -> TrainConfig:
        """Mini-batch SGD on the cross-entropy, `eta = lr ||theta||^p` (floored), float32."""
        return self._train(self.run)

    def _train(self, run: int) -> TrainConfig:
        _, steps, power, floor = self.plan[run]
        phase = PhaseConfig(
            "sgd",
            steps,
            self.lr,
            lr_power=power,
            min_lr=floor,
            batch_size=self.batch_size,
            seed=self.seed,
        )
        return TrainConfig(
            lam=0.0,
            cost="cross_entropy",
            phases=(phase,),
            dtype="float32",
            log_every=self.log_every,
            checkpoint_every=self.checkpoint_every,
        )


def trace(model: torch.nn.Module, cfg: Config, step: int) -> dict[str, Any]:
    """Every `svd_every` steps the `svd_top` largest singular values of every layer
    (column `singular`, JSON `[L][k]`, float64); empty at the other logged steps."""
    if not cfg.svd_every or step % cfg.svd_every:
        return {"singular": ""}
    s = [
        torch.linalg.svdvals(W.detach().to(torch.float64).cpu())[: cfg.svd_top].tolist()
        for W in model.weights
    ]
    return {"singular": json.dumps(s)}


def after_escape(
    check: Callable[[Config, dict[str, float]], Outcome],
) -> Callable[[Config, Points], Outcome]:
    """`check(cfg, scalars)` of a claim read at the snapshot between the first two drops:
    `not-measured` when there is none (fewer than two drops at depth `depth`)."""

    def judged(cfg: Config, pts: Points) -> Outcome:
        s = scalars(cfg, pts)
        step, half = read(s, SNAPSHOT_STEP), cfg.depth // 2
        if not math.isfinite(step):
            drops = read(s, DROPS.at(cfg.depth))
            why = f"fewer than two drops at depth {cfg.depth} ({drops:g})"
            return unmeasured(why, step=step, half=half, next=half + 1)
        return check(cfg, s).with_facts(step=step, half=half, next=half + 1)

    return judged


def rank_grows(cfg: Config, s: dict[str, float]) -> Outcome:
    """Mean `s_2/s_1` (`l >= 2`) at the end over the snapshot's: "at the end" is after the
    second drop, so the claim also states that training got past the saddles (final loss
    at most `final_loss_max`)."""
    factor = read(s, RATIO_MEAN_END) / read(s, RATIO_MEAN_SNAPSHOT)
    final = read(s, LAST_LOSS.at(cfg.depth))
    ok = math.isfinite(factor) and factor >= cfg.end_factor
    ok = ok and math.isfinite(final) and final <= cfg.final_loss_max
    expected = f">= {cfg.end_factor:g}, with final training loss <= {cfg.final_loss_max:g}"
    return outcome(expected, fmt(factor), ok, final=final)


INITIAL_LOSS = ClaimSpec(
    "initial-loss",
    "|loss_0 - ln 10| (output ~ 0 at init)",
    Ungated("the loss of the untrained init (output ~ 0): no optimization"),
    lambda cfg, pts: at_most(abs(read(scalars(cfg, pts), LOSS0_MINUS_LN10)), cfg.loss0_tol),
    source="003 Fig 1",
)
TWO_DROPS = ClaimSpec(
    "two-drops",
    "loss drops (saddle to saddle) detected at depth {cfg.depth}, each lowering the "
    "smoothed loss by >= {cfg.drop_min_fraction:g} ln 10 (the spec's escape: loss <= 0.9 "
    "of the initial)",
    DYNAMICS,
    lambda cfg, pts: at_least(read(scalars(cfg, pts), DROPS.at(cfg.depth)), 2),
    source="003 Fig 1",
)
DOMINANT_VALUE = ClaimSpec(
    "dominant-value",
    "after the first escape (step {step:g}), smallest s_1/s_2 over layers 2..{cfg.depth}",
    DYNAMICS,
    after_escape(lambda cfg, s: at_least(read(s, GAP_MIN_L2), cfg.gap_min)),
    source="003 Fig 1, 3",
)
DEEPER_MORE_LOW_RANK = ClaimSpec(
    "deeper-more-low-rank",
    "mean s_1/s_2 over layers {next}-{cfg.depth} minus the mean over layers 1-{half}",
    DYNAMICS,
    after_escape(lambda cfg, s: at_least(read(s, GAP_MEAN_DEEP) - read(s, GAP_MEAN_SHALLOW), 0.0)),
    source="003 Fig 1, 3",
)
RANK_GROWS = ClaimSpec(
    "rank-grows",
    "mean s_2/s_1 over layers >= 2, at the end (past the saddles: final training loss "
    "{final:.3g}) over after the first escape",
    DYNAMICS,
    after_escape(rank_grows),
    source="003 Fig 3",
)
CLAIMS = [INITIAL_LOSS, TWO_DROPS, DOMINANT_VALUE, DEEPER_MORE_LOW_RANK, RANK_GROWS]


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: a few hundred SGD steps on the digits (claims are not expected to pass).
    "smoke": {
        "data.source": "digits",
        "width": 16,
        "depth": 4,
        "steps": 300,
        "log_every": 10,
        "svd_every": 50,
        "depth4_steps": 0,
        "init_std": 0.1,
        "lr": 0.5,
        "lr_power": 0.0,
    },
    # The spec's quick start (digits, depth 6, SGD batch 32, lr = 10/||theta||^4) except:
    "quick": {
        "data.source": "digits",  # the spec's CPU stand-in for MNIST
        "width": 32,  # at width 128 no escape at all in 60k steps
        "init_std": 5e-2,  # 1e-3 .. 4e-2: no second drop in 80-150k steps (lab notes)
        "steps": 100_000,  # the second drop ends at ~45k (seed 0), ~100k (seed 1)
        "log_every": 200,  # enough points to locate drops and plateaus
        "svd_every": 1000,  # 100 spectra per run
        "depth4_steps": 20_000,  # depth 4 has no plateau at this sigma_0 (done by 2k)
    },
    # The paper's Fig 1/3 setup (MNIST, width 1000, 1000 epochs): the base config.
    "paper": {},
}

EXPERIMENT = Experiment[Config](
    name="saddle/mnist-plateaus",
    source="003 Fig 1, 3, 4",
    title="Saddle-to-saddle SGD from small init on images: plateaus, then low-rank layers",
    config=Config(),
    presets=PRESETS,
    grid={"run": "runs"},
    measure=SGD_RUN,
    claims=CLAIMS,
    figures=("_saddles:mnist_plateaus",),
    doc=__doc__ or "",
    trace=trace,
)
