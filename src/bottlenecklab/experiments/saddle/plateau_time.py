"""`saddle/plateau-time` — paper 003, Prop 2.2 and Sec 2.1 (derived).

    bottlenecklab run saddle/plateau-time --preset quick

Full-batch GD on a small teacher from `theta_0 = alpha * theta_hat` (one shared unit
direction, 5 scales spanning x4), one grid point per run (`plan`), each stopped at its
escape. Expected: the log-log slope of the steps to the first escape (loss <= 0.9 C(0))
against `alpha` is `2 - L` within 15 % at `L = 3, 4`; in the time `tau`
(`eta_k = c ||theta_k||^{2-L}`) the direction `theta/||theta||` (traced every step) does
not depend on `alpha` until the first 1 % loss drop. Quick preset: ~4.5 min CPU (12-20
min wall on the shared 2 cores). Measured numbers and pilots: `docs/lab-notes/saddle.md`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from bottlenecklab.experiments._checks import at_most, in_range, listed, reported, unmeasured
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Outcome,
    Points,
    Ungated,
)
from bottlenecklab.experiments.saddle._common import (
    curve,
    dynamics,
)
from bottlenecklab.experiments.saddle._plateaus import SCALE_RUN
from bottlenecklab.measure import (
    direction_gaps,
    escape_step,
    loglog_slope,
)
from bottlenecklab.models import FCNNConfig, NormedFCNNConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig

Kind = Literal["slope", "tau"]


@dataclass(frozen=True)
class Config:
    """Escape time against the init scale, and the `tau`-time runs.

    Args:
        task: the teacher (`N = 64`); width: hidden width; depths: depths of the slope fit.
        alphas: per depth, the init scales `alpha` (`||theta_0|| = alpha sqrt(L)`).
        lrs: per depth, the constant GD learning rate.
        max_steps: step budget per run; log_every: steps between logged losses.
        escape_frac: escape when the loss is at most this fraction of `C(0)` (every run
            stops there: `train.stop_fraction`).
        first_frac: report only: the same slope for the first departure from the origin
            (loss `<= first_frac * C(0)`), before any later saddle of the teacher.
        slope_rtol: the slope must lie within this relative tolerance of `2 - L`.
        tau_depth, tau_alphas, tau_c, tau_steps: the `tau`-runs (`eta_k = c ||theta||^{2-L}`,
            logged every step).
        tau_drop: the direction comparison runs until the first logged step at which a
            run's loss is at most `tau_drop * C(0)` (the first 1 % loss drop).
        dir_tol: largest allowed `||theta_bar_k(alpha_i) - theta_bar_k(alpha_j)||` up to then.
        run: this point, an index into `plan` (the grid: `runs`).
    """

    task: TeacherConfig = TeacherConfig(dims=(5, 3, 2), hidden=20, n_train=64, n_test=1)
    width: int = 16
    depths: tuple[int, ...] = (3, 4)
    alphas: tuple[tuple[float, ...], ...] = (
        (0.01, 0.014, 0.02, 0.028, 0.04),
        (0.0125, 0.0177, 0.025, 0.035, 0.05),
    )
    lrs: tuple[float, ...] = (0.1, 1.0)
    max_steps: int = 70_000
    log_every: int = 10
    escape_frac: float = 0.9
    first_frac: float = 0.999
    slope_rtol: float = 0.15
    tau_depth: int = 3
    tau_alphas: tuple[float, ...] = (1e-4, 1e-3, 1e-2)
    tau_c: float = 0.05
    tau_steps: int = 5000
    tau_drop: float = 0.99
    dir_tol: float = 1e-2
    run: int = 0
    seed: int = 0

    @property
    def plan(self) -> tuple[tuple[Kind, int, float], ...]:
        """Every grid point's `(kind, depth, alpha)`: the slope runs, then the `tau`-runs."""
        slope = tuple(
            ("slope", L, a) for L, alphas in zip(self.depths, self.alphas) for a in alphas
        )
        return slope + tuple(("tau", self.tau_depth, a) for a in self.tau_alphas)

    @property
    def runs(self) -> tuple[int, ...]:
        """The grid: an index per run of `plan`."""
        return tuple(range(len(self.plan)))

    @property
    def model(self) -> NormedFCNNConfig:
        """This run's net: the seed's direction at `||theta_0|| = alpha sqrt(L)`."""
        _, L, a = self.plan[self.run]
        net = FCNNConfig(depth=L, width=self.width, bias_scale=0.0, init="normal")
        return NormedFCNNConfig(net, a * math.sqrt(L))

    @property
    def train(self) -> TrainConfig:
        """Plain GD on the data cost until the escape: a constant step per depth, or the
        `tau`-time step `tau_c ||theta||^{2-L}` logged every step."""
        kind, L, _ = self.plan[self.run]
        if kind == "slope":
            phase = PhaseConfig("sgd", self.max_steps, self.lrs[self.depths.index(L)])
            log_every = self.log_every
        else:
            phase = PhaseConfig("sgd", self.tau_steps, self.tau_c, lr_power=2.0 - L)
            log_every = 1
        return TrainConfig(
            lam=0.0,
            phases=(phase,),
            dtype="float64",
            log_every=log_every,
            stop_fraction=self.escape_frac,
        )


def trace(model: torch.nn.Module, cfg: Config, step: int) -> dict[str, Any]:
    """`tau`-runs: `theta / ||theta||` at every logged step (column `direction`, JSON)."""
    if cfg.plan[cfg.run][0] != "tau":
        return {}
    theta = torch.cat([p.detach().flatten() for p in model.parameters()]).cpu()
    return {"direction": json.dumps((theta / theta.norm()).tolist())}


def escapes(cfg: Config, pts: Points, L: int, frac: float) -> list[float]:
    """Depth `L`'s steps to loss `<= frac C(0)` per `alpha` (`nan`: not within the budget)."""
    runs = {cfg.plan[p.point["run"]]: curve(p) for p in pts}
    return [escape_step(*runs["slope", L, a], frac) for a in cfg.alphas[cfg.depths.index(L)]]


def slope(L: int) -> Callable[[Config, Points], Outcome]:
    """Depth `L`'s log-log slope of the escape steps against `alpha`, in `2 - L` +- `slope_rtol`
    (every run must escape within the budget: each stopped at its first escape)."""

    def check(cfg: Config, pts: Points) -> Outcome:
        alphas, steps = cfg.alphas[cfg.depths.index(L)], escapes(cfg, pts, L, cfg.escape_frac)
        lo, hi = sorted((2.0 - L) * (1 + r) for r in (-cfg.slope_rtol, cfg.slope_rtol))
        facts = {"L": L, "alphas": listed(alphas, "g")}
        escaped = sum(math.isfinite(e) for e in steps)
        if escaped < len(alphas):
            why = f"{escaped} of {len(alphas)} runs escaped within {cfg.max_steps} steps"
            return unmeasured(why, f"in [{lo:g}, {hi:g}]", **facts)
        return in_range(loglog_slope(alphas, steps), lo, hi, **facts)

    return check


def slope_first(L: int) -> Callable[[Config, Points], Outcome]:
    """The same slope for the first departure, loss `<= first_frac C(0)` (reported)."""

    def check(cfg: Config, pts: Points) -> Outcome:
        first = escapes(cfg, pts, L, cfg.first_frac)
        ok = all(math.isfinite(e) for e in first)
        value = loglog_slope(cfg.alphas[cfg.depths.index(L)], first) if ok else math.nan
        return reported(value, L=L, target=2.0 - L)

    return check


def tau_direction(cfg: Config, pts: Points) -> Outcome:
    """The `tau`-runs' largest direction gap up to the first `1 - tau_drop` loss drop of
    any of them (`measure.direction_gaps`; `nan`: no drop)."""
    runs = [p for p in pts if cfg.plan[p.point["run"]][0] == "tau"]
    drops = []
    for r in runs:
        t, loss = curve(r)
        drops.append(next((k for k, v in zip(t, loss) if v <= cfg.tau_drop * loss[0]), math.inf))
    until = min(drops, default=math.inf)
    gaps = {}
    if math.isfinite(until):
        paths = [
            {int(m["step"]): np.array(json.loads(m["direction"])) for m in r.metrics} for r in runs
        ]
        gaps = direction_gaps(paths, int(until))
    worst = max(gaps.values()) if gaps else math.nan
    alphas = listed(cfg.tau_alphas, "g")
    return at_most(worst, cfg.dir_tol, until=until, alphas=alphas, drop=1 - cfg.tau_drop)


DEPTHS = (3, 4)  # the depths of Prop 2.2's slope claims (the presets sweep a subset)
SLOPE = {
    L: ClaimSpec(
        f"slope-L{L}",
        "L = {L}: log-log slope of GD steps to loss <= {cfg.escape_frac:g} C(0) against "
        "the init scale (alpha = {alphas}) is 2 - L within {cfg.slope_rtol:.0%}",
        Ungated(dynamics("how long the first plateau lasts")),
        slope(L),
        when=lambda cfg, L=L: L in cfg.depths,
    )
    for L in DEPTHS
}
SLOPE_FIRST = {
    L: ClaimSpec(
        f"slope-first-L{L}",
        "L = {L}: the same slope for the first departure, loss <= {cfg.first_frac:g} "
        "C(0) (target 2 - L = {target:g})",
        None,
        slope_first(L),
        when=lambda cfg, L=L: L in cfg.depths,
    )
    for L in DEPTHS
}
TAU_DIRECTION = ClaimSpec(
    "tau-direction",
    "tau-time GD (eta = {cfg.tau_c:g} ||theta||^(2-L), L = {cfg.tau_depth}): largest "
    "||theta_bar_k(alpha_i) - theta_bar_k(alpha_j)|| over alpha = {alphas} until the "
    "first {drop:.0%} loss drop (step {until:g})",
    Ungated(dynamics("the path of theta/||theta|| before the escape")),
    tau_direction,
    source="003 Sec 2.1",
)
CLAIMS = [*(c for L in DEPTHS for c in (SLOPE[L], SLOPE_FIRST[L])), TAU_DIRECTION]


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: depth 3 only, scales near the top of the range, few tau-steps.
    "smoke": {
        "depths": (3,),
        "alphas": ((0.04, 0.08),),
        "lrs": (0.5,),
        "max_steps": 2000,
        "tau_alphas": (1e-2, 2e-2),
        "tau_steps": 300,
        "width": 8,
    },
    # The base config is the quick recipe (lab notes: why eta = 1 and 70k steps at L = 4).
    "quick": {},
    # No paper setup for this derived claim: wider scale range, same recipe.
    "paper": {
        "width": 32,
        "max_steps": 200_000,
        "alphas": ((0.0025, 0.005, 0.01, 0.02, 0.04), (0.00625, 0.0125, 0.025, 0.05)),
    },
}

EXPERIMENT = Experiment[Config](
    name="saddle/plateau-time",
    source="003 Prop 2.2 (derived)",
    title="The first plateau lasts ~ sigma_0^(2-L) GD steps; tau-time paths are scale-free",
    config=Config(),
    presets=PRESETS,
    grid={"run": "runs"},
    measure=SCALE_RUN,
    claims=CLAIMS,
    figures=("_saddles:plateau_time",),
    doc=__doc__ or "",
    trace=trace,
)
