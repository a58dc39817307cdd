"""`saddle/plateau-time` — paper 003, Prop 2.2 and Sec 2.1 (derived; trains small nets).

    bottlenecklab run saddle/plateau-time --preset quick

Full-batch GD on a small teacher from `theta_0 = alpha * theta_hat` (one shared unit
direction, 5 scales spanning x4). Expected: the log-log slope of the steps to the first
escape (loss <= 0.9 C(0)) against `alpha` is `2 - L` within 15 % at `L = 3, 4`; in the
time `tau` (`eta_k = c ||theta_k||^{2-L}`) the direction `theta/||theta||` does not depend
on `alpha` until the first 1 % loss drop; report only: `tau`-steps ~ `ln(1/alpha)`.
Tables: `escape`, `curves`, `tau`. Quick preset: ~60 s CPU (up to 7 min wall on the
shared 2 cores). Measured numbers and pilots: `docs/lab-notes/saddle.md`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from bottlenecklab.experiments._claims import at_most, in_range, reported, unmeasured
from bottlenecklab.experiments._spec import Claim, Experiment, Measurement, PointResult
from bottlenecklab.measure import escape_step, fit_line, loglog_slope
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import SmallInitConfig, train_small_init

SOURCE = "003 Prop 2.2 (derived)"
DYNAMICS = (
    "a claim about the training dynamics from small init (how long the first plateau "
    "lasts, the path of theta/||theta|| before the escape), read off the trajectory: no "
    "critical point is reached or claimed (no weight decay, the plateau is a transient)."
)


@dataclass(frozen=True)
class Config:
    """Escape time against the init scale, and the `tau`-time run.

    Args:
        task: the teacher (`N = 64`); width: hidden width; depths: depths of the slope fit.
        alphas: per depth, the init scales `alpha` (`||theta_0|| = alpha sqrt(L)`).
        lrs: per depth, the constant GD learning rate.
        max_steps: step budget per run; log_every: steps between logged losses.
        escape_frac: escape when the loss is at most this fraction of `C(0)`.
        first_frac: report only: the same slope for the first departure from the origin
            (loss `<= first_frac * C(0)`), before any later saddle of the teacher.
        slope_rtol: the slope must lie within this relative tolerance of `2 - L`.
        tau_depth, tau_alphas, tau_c, tau_steps: the `tau`-run (`eta_k = c ||theta||^{2-L}`).
        tau_drop: the direction comparison runs until the first logged step at which a
            run's loss is at most `tau_drop * C(0)` (the first 1 % loss drop).
        dir_tol: largest allowed `||theta_bar_k(alpha_i) - theta_bar_k(alpha_j)||` up to then.
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
    seed: int = 0


def _net(cfg: Config, depth: int, d_in: int, d_out: int):
    model = FCNNConfig(depth=depth, width=cfg.width, bias_scale=0.0, init="normal")
    return model.build(d_in, d_out, seed=cfg.seed + 1)  # one direction for every scale


def measure(model: None, data: None, cfg: Config) -> Measurement:
    """Train every (depth, alpha) until escape; the `tau`-run; slopes and direction gaps."""
    ds = cfg.task.build(seed=cfg.seed)
    escape, curves, tau = [], [], []
    scalars: dict[str, float] = {}
    for L, alphas, lr in zip(cfg.depths, cfg.alphas, cfg.lrs):
        steps, first = [], []
        for a in alphas:
            run = SmallInitConfig(
                steps=cfg.max_steps,
                lr=lr,
                init_norm=a * math.sqrt(L),
                log_every=cfg.log_every,
                stop_fraction=cfg.escape_frac,
            )
            res = train_small_init(_net(cfg, L, ds.d_in, ds.d_out), ds, run)
            t, loss = [m["step"] for m in res.metrics], [m["loss"] for m in res.metrics]
            e = escape_step(t, loss, cfg.escape_frac)
            steps.append(e)
            first.append(escape_step(t, loss, cfg.first_frac))
            escape.append(
                {
                    "depth": L,
                    "alpha": a,
                    "init_norm": a * math.sqrt(L),
                    "escape_step": e,
                    "first_step": first[-1],
                    "lr": lr,
                }
            )
            curves += [{"depth": L, "alpha": a, **m} for m in res.metrics]
        finite = all(math.isfinite(e) for e in steps)
        scalars[f"slope_L{L}"] = loglog_slope(alphas, steps) if finite else math.nan
        scalars[f"escaped_L{L}"] = float(sum(math.isfinite(e) for e in steps))
        ok = all(math.isfinite(e) for e in first)
        scalars[f"slope_first_L{L}"] = loglog_slope(alphas, first) if ok else math.nan
    L = cfg.tau_depth
    runs = []
    for a in cfg.tau_alphas:
        run = SmallInitConfig(
            steps=cfg.tau_steps,
            lr=cfg.tau_c,
            lr_power=2.0 - L,
            init_norm=a * math.sqrt(L),
            log_every=1,
            stop_fraction=cfg.escape_frac,
            keep_directions=True,
        )
        runs.append(train_small_init(_net(cfg, L, ds.d_in, ds.d_out), ds, run))
    c0 = [r.metrics[0]["loss"] for r in runs]
    drop = [
        next((m["step"] for m in r.metrics if m["loss"] <= cfg.tau_drop * c), math.inf)
        for r, c in zip(runs, c0)
    ]
    until = min(drop)
    n = min(len(r.directions) for r in runs)
    k_max = int(min(until, n - 1)) if math.isfinite(until) else -1
    gaps = [
        max(
            (
                float((ri.directions[k] - rj.directions[k]).norm())
                for ri, rj in itertools.combinations(runs, 2)
            ),
            default=0.0,
        )
        for k in range(k_max + 1)
    ]
    for a, r in zip(cfg.tau_alphas, runs):
        tau += [
            {
                "alpha": a,
                "step": m["step"],
                "loss": m["loss"],
                "norm": m["norm"],
                "gap": gaps[m["step"]] if m["step"] <= k_max else math.nan,
            }
            for m in r.metrics
        ]
    tau_escape = [
        escape_step([m["step"] for m in r.metrics], [m["loss"] for m in r.metrics], cfg.escape_frac)
        for r in runs
    ]
    scalars["tau_gap_max"] = max(gaps) if gaps else math.nan
    scalars["tau_until_step"] = float(until)
    scalars["tau_steps_per_log_inv_alpha"] = fit_line(
        [math.log(1 / a) for a in cfg.tau_alphas], tau_escape
    )[0]
    for a, e in zip(cfg.tau_alphas, tau_escape):
        scalars[f"tau_escape_{a:g}"] = e
    return Measurement(scalars=scalars, tables={"escape": escape, "curves": curves, "tau": tau})


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Slope `2 - L` per depth (every run must escape within the budget); the `tau`-run."""
    s = results[0].scalars
    out = []
    for L, alphas in zip(cfg.depths, cfg.alphas):
        target = 2.0 - L
        lo, hi = sorted((target * (1 - cfg.slope_rtol), target * (1 + cfg.slope_rtol)))
        statement = (
            f"L = {L}: log-log slope of GD steps to loss <= {cfg.escape_frac:g} C(0) "
            f"against the init scale (alpha = {', '.join(f'{a:g}' for a in alphas)}) "
            f"is 2 - L within {cfg.slope_rtol:.0%}"
        )
        escaped = s.get(f"escaped_L{L}", 0.0)
        if escaped < len(alphas):
            out.append(
                unmeasured(
                    f"slope-L{L}",
                    SOURCE,
                    statement,
                    f"in [{lo:g}, {hi:g}]",
                    f"{int(escaped)} of {len(alphas)} runs escaped within {cfg.max_steps} steps",
                )
            )
        else:
            out.append(
                in_range(
                    f"slope-L{L}", SOURCE, statement, float(s.get(f"slope_L{L}", math.nan)), lo, hi
                )
            )
        out.append(
            reported(
                f"slope-first-L{L}",
                SOURCE,
                f"L = {L}: the same slope for the first departure, loss <= "
                f"{cfg.first_frac:g} C(0) (target 2 - L = {target:g})",
                float(s.get(f"slope_first_L{L}", math.nan)),
            )
        )
    out.append(
        at_most(
            "tau-direction",
            "003 Sec 2.1",
            f"tau-time GD (eta = {cfg.tau_c:g} ||theta||^(2-L), L = {cfg.tau_depth}): largest "
            f"||theta_bar_k(alpha_i) - theta_bar_k(alpha_j)|| over alpha = "
            f"{', '.join(f'{a:g}' for a in cfg.tau_alphas)} until the first "
            f"{1 - cfg.tau_drop:.0%} loss drop (step {s.get('tau_until_step', math.nan):g})",
            float(s.get("tau_gap_max", math.nan)),
            cfg.dir_tol,
        )
    )
    return out


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

EXPERIMENT = Experiment(
    name="saddle/plateau-time",
    source=SOURCE,
    title="The first plateau lasts ~ sigma_0^(2-L) GD steps; tau-time paths are scale-free",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=measure,
    claims=claims,
    figures=("plateau_time",),
    trains=False,
    doc=__doc__ or "",
    ungated={
        "slope-*": DYNAMICS,
        "tau-direction": DYNAMICS,
    },
)
