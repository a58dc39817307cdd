"""`fcnn/bottleneck-bounds` — paper 001, Thm 3 (proof), Thm 15, Cor 8, §4.

    bottlenecklab run fcnn/bottleneck-bounds --preset quick

Random FCNNs (depth 2-12, leaky slopes, biases, init scales) and ReLU nets trained on the
latent teacher (`k* = 2`) at `L = 6, 10, 16`, Adam, L-BFGS, then GD at `eta = 0.1/L`.
Expected: the Jacobian chain and Thm 15 hold on every net and point (slack 1e-9); Cor 8's
content: the middle-layer median of `s_(k+1)(a~_l / sqrt N)` does not grow with `L` and,
at the deepest net, lies below that of its own initialization (slack, slope, rank among
untrained nets reported); `Tr Theta/(N L)` stays within a factor 3 across depths over the
edge-of-stability oscillation of GD (its `lambda_max eta` reported). A few CPU minutes.
Verdicts per seed, measurements and pilots: `docs/lab-notes/fcnn.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats
import torch

from bottlenecklab.experiments._checks import (
    at_most,
    fmt,
    holds_to_roundoff,
    listed,
    outcome,
    reported,
    unmeasured,
)
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measure,
    Measurement,
    Outcome,
    Points,
    Ungated,
)
from bottlenecklab.experiments.fcnn._common import SMOKE, LatentConfig, adam_then_gd
from bottlenecklab.measure import (
    COR8_BOUND,
    DEPTH,
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    Quantity,
    costs,
    fcnn_balance_residuals,
    middle_rank,
)
from bottlenecklab.measure._costs import DATA_COSTS
from bottlenecklab.measure._jacobian import (
    BOUND_SLACKS,
    RANDOM_CHAIN_SLACK,
    RANDOM_THM15_SLACK,
    TRAINED_CHAIN_SLACK,
    TRAINED_THM15_SLACK,
    chain_slacks,
    jacobian_bounds,
    random_network_slacks,
)
from bottlenecklab.measure._layer_ranks import (
    COR8,
    COR8_MIDDLE_MAX,
    COR8_MIDDLE_MEDIAN,
    COR8_MIDDLE_MEDIAN_INIT,
    COR8_MIDDLE_MEDIAN_RANDOM,
    COR8_RANDOM_BELOW,
    cor8_summary,
    middle_affine_rank,
    random_middle_medians,
    representation_bottleneck,
)
from bottlenecklab.measure._ntk import (
    NTK_LAMBDA_ETA,
    NTK_LAMBDA_ETA_AMPLITUDE,
    NTK_ORBIT,
    NTK_SCALE,
    ntk_along_gd,
    ntk_orbit_summary,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import COSTS, LatentTeacherConfig
from bottlenecklab.training import TrainConfig


@dataclass(frozen=True)
class Config(LatentConfig):
    """Random and trained networks for the bounds of paper 001 (`LatentConfig` at the spec's
    quick sizes: N = 128, width 48, Adam 4000 then GD 1000).

    Args:
        depths: depths of the trained networks (the grid).
        n_random, random_depths, slopes, betas, init_scales, random_width, random_dim,
            n_points: the random networks per grid point and their choices.
        slack: numerical slack of the chain and Thm 15 (float64).
        k, p: rank and fraction of Cor 8; the middle layers are `p <= l/L <= 1 - p`.
        cor8_factor: the deepest net's middle median of `s_(k+1)` lies below
            `1 / cor8_factor` times that of its own initialization.
        cor8_random: untrained nets of each depth reported beside it.
        eta0: the GD step is `eta0 / L`.
        ntk_factor, ntk_spread: bounds on `lambda_max eta / N` and on max/min of
            `Tr Theta / (N L)`, means over `orbit_steps` further GD steps.
        affine_rel: relative cut of the middle representation's affine dimension.
    """

    task: LatentTeacherConfig = LatentTeacherConfig(n_train=128, n_test=128)
    model: FCNNConfig = FCNNConfig(depth=6, width=48, bias_scale=1.0)
    train: TrainConfig = adam_then_gd(4000, 1000, 200)
    depths: tuple[int, ...] = (6, 10, 16)
    n_random: int = 34
    random_depths: tuple[int, int] = (2, 12)
    slopes: tuple[float, ...] = (0.0, 0.1, -0.5)
    betas: tuple[float, ...] = (0.0, 1.0)
    init_scales: tuple[float, ...] = (0.5, 1.0, 2.0)
    random_width: int = 16
    random_dim: int = 8
    n_points: int = 32
    slack: float = 1e-9
    k: int = 2
    p: float = 0.25
    cor8_factor: float = 1.0
    cor8_random: int = 19
    eta0: float = 0.1
    ntk_factor: float = 1.1
    ntk_spread: float = 3.0
    orbit_steps: int = 10
    affine_rel: float = 0.2


def bounds_measurement(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """Bounds on the random share and on the trained net; Cor 8, NTK, balancedness."""
    L = model.depth
    r_chain, r_thm15 = random_network_slacks(
        cfg.n_random,
        depths=cfg.random_depths,
        slopes=cfg.slopes,
        betas=cfg.betas,
        init_scales=cfg.init_scales,
        width=cfg.random_width,
        dim=cfg.random_dim,
        n_points=cfg.n_points,
        seed=[cfg.seed, L, 7],
    )
    X = data.x_train
    t_chain, t_thm15 = chain_slacks(jacobian_bounds(model, X))
    cor8 = representation_bottleneck(model, X, cfg.k, cfg.p)
    # the net's own initialization (run_point's seed and dtype), then further draws of it
    dtype = next(model.parameters()).dtype
    seeds = [cfg.seed + 1] + [cfg.seed + 1 + 1000 * j for j in range(1, cfg.cor8_random)]
    s_init, random_medians = random_middle_medians(
        lambda sd: cfg.model.build(data.d_in, data.d_out, seed=sd, dtype=dtype),
        seeds,
        X,
        cfg.k,
        cfg.p,
    )
    balance = fcnn_balance_residuals(model)
    eta = cfg.eta0 / L
    Y = torch.as_tensor(data.y_train)
    lam_max, trace = ntk_along_gd(
        model, X, Y, cfg.train.lam, eta, cfg.orbit_steps, COSTS[cfg.train.cost]
    )
    scalars = {
        "depth": float(L),
        "random_nets": float(cfg.n_random),
        "random_chain_slack": r_chain,
        "random_thm15_slack": r_thm15,
        "trained_chain_slack": t_chain,
        "trained_thm15_slack": t_thm15,
        "middle_rank": float(middle_rank(model)),
        "middle_affine_rank": float(middle_affine_rank(model, X, cfg.affine_rel)),
        **cor8_summary(cor8, random_medians, cfg.p),
        **ntk_orbit_summary(lam_max, trace, eta, L),
        "balance_summed_max": float(balance["summed"].max()),
        "balance_per_neuron_max": float(balance["per_neuron"].max()),
        **costs(model, data),
    }
    layers = [
        {"layer": float(i), "s_next": float(s), "s_next_init": float(s0)}
        for i, (s, s0) in enumerate(zip(cor8["s_next"], s_init), start=1)
    ]
    return Measurement(scalars=scalars, layers=layers)


RANDOM_NETS = Quantity(
    "random_nets",
    "the number of random networks whose slacks a point reads",
    function=bounds_measurement,
    over="the random share of a grid point (`Config.n_random`)",
    units="count",
)
BOUNDS = Measure(
    bounds_measurement,
    (
        DEPTH,
        RANDOM_NETS,
        *BOUND_SLACKS,
        MIDDLE_RANK,
        MIDDLE_AFFINE_RANK,
        *COR8,
        *NTK_ORBIT,
        *DATA_COSTS,
    ),
)
BASE = Config()


def by_depth(pts: Points) -> list:
    """The trained points, by depth."""
    return sorted(pts, key=lambda r: r.value(DEPTH))


def smallest(slack: Quantity):
    """A check: the smallest `slack` over the points, to round-off (`cfg.slack`)."""
    return lambda cfg, pts: holds_to_roundoff(
        min(pts.values(slack)),
        cfg.slack,
        n_random=int(sum(pts.values(RANDOM_NETS))),
        depths=listed([r.value(DEPTH) for r in by_depth(pts)], "g"),
    )


def cor8_facts(cfg: Config, pts: Points) -> dict:
    """What the Cor 8 statements show: the deepest net's numbers and the trend's."""
    done = by_depth(pts)
    top = done[-1].scalars
    return {
        "top": top,
        "ranks": listed([r.value(MIDDLE_AFFINE_RANK) for r in done], "g"),
        "listed": "; ".join(
            f"L = {r.value(DEPTH):g}: {r.value(COR8_MIDDLE_MEDIAN):.3g} "
            f"(init {r.value(COR8_MIDDLE_MEDIAN_INIT):.3g})"
            for r in done
        ),
    }


def _medians(done: list) -> tuple[np.ndarray, np.ndarray, bool]:
    """The trained and untrained middle medians by depth, and whether all are usable."""
    med = np.array([r.value(COR8_MIDDLE_MEDIAN) for r in done])
    rand = np.array([r.value(COR8_MIDDLE_MEDIAN_RANDOM) for r in done])
    return med, rand, bool(np.all(np.isfinite(med) & np.isfinite(rand)) and np.all(med > 0))


def cor8(cfg: Config, pts: Points) -> Outcome:
    """Cor 8 (001 App. B Cor 17), what it predicts that can fail: the middle median of
    `s_(k+1)(a~_l / sqrt N)` non-increasing in `L`, and at the deepest net (affine dimension
    `k`) below `1 / cor8_factor` times its own initialization's (lab notes `fcnn.md`)."""
    done, facts = by_depth(pts), cor8_facts(cfg, pts)
    factor = "" if cfg.cor8_factor == 1 else f"{1 / cfg.cor8_factor:g} x "
    expected = "middle s_(k+1) non-increasing in L; below the untrained net's at the deepest"
    if len(done) < 2:
        return unmeasured(f"{len(done)} trained depth: no trend", expected, **facts)
    top = done[-1] if done else None
    if int(top.value(MIDDLE_AFFINE_RANK)) != cfg.k:
        why = (
            f"the deepest net's middle representation has affine dimension "
            f"{top.value(MIDDLE_AFFINE_RANK):g}, not {cfg.k} (affine dimensions: "
            f"{facts['ranks']})"
        )
        return unmeasured(why, expected, **facts)
    med, _, finite = _medians(done)
    ratio = float(top.value(COR8_MIDDLE_MEDIAN) / top.value(COR8_MIDDLE_MEDIAN_INIT))
    # relative drop per step (med > 0 where finite)
    falls = [(a - b) / a for a, b in zip(med[:-1], med[1:])] if finite else [math.nan]
    below = 1 / cfg.cor8_factor - ratio
    return outcome(
        f"< {factor}1 and non-increasing in L",
        fmt(ratio),
        finite and min(falls) >= 0 and below > 0,
        # relative units both: the smallest relative drop between depths, the fraction
        # below the untrained net's median
        min(min(falls), below) if finite else None,
        **facts,
    )


def cor8_slack(cfg: Config, pts: Points) -> Outcome:
    """log10 of Cor 8's bound over the largest middle `s_(k+1)` at the deepest net."""
    top = by_depth(pts)[-1]
    bound, largest = top.value(COR8_BOUND), top.value(COR8_MIDDLE_MAX)
    ok = math.isfinite(bound) and bound > 0 and math.isfinite(largest) and largest > 0
    return reported(math.log10(bound / largest) if ok else math.nan, top=top.scalars)


def cor8_slope(cfg: Config, pts: Points) -> Outcome:
    """Log-log slope in `L` of the trained middle medians (and of the untrained ones)."""
    done = by_depth(pts)
    logs = np.log([r.value(DEPTH) for r in done])
    med, rand, finite = _medians(done)
    if not (finite and len(done) > 1):
        return reported(math.nan, slope0=math.nan)
    slope0 = float(scipy.stats.linregress(logs, np.log(rand)).slope)
    return reported(float(scipy.stats.linregress(logs, np.log(med)).slope), slope0=slope0)


def ntk_stability(cfg: Config, pts: Points) -> Outcome:
    """`lambda_max eta` after GD, mean over the orbit, largest over depths."""
    orbit = ", ".join(
        f"{r.value(NTK_LAMBDA_ETA):.3f} +- {r.value(NTK_LAMBDA_ETA_AMPLITUDE):.3f}"
        for r in by_depth(pts)
    )
    return reported(max(pts.values(NTK_LAMBDA_ETA)), orbit=orbit)


def ntk_scale(cfg: Config, pts: Points) -> Outcome:
    """max / min over depths of `Tr Theta / (N L)`."""
    scales = [r.value(NTK_SCALE) for r in by_depth(pts)]
    spread = max(scales) / min(scales) if min(scales) > 0 else math.inf
    return at_most(spread, cfg.ntk_spread, scales=listed(scales))


# No claim here is about a critical point: the trained nets end GD at a fixed step at the
# edge of stability, where GD oscillates and the certificate cannot hold (measured in
# docs/lab-notes/fcnn.md).
ANY_PARAMETER = "an inequality at every parameter ({}): no critical point needed"
COR8 = Ungated(
    "a theorem for balanced parameters (001 App. B Cor 17): the claim states the "
    "balancedness residuals it was measured at"
)
NTK = Ungated(
    "a statement about where GD at a fixed step goes (001 §4): GD at the edge of "
    "stability oscillates and is at no critical point; measured over that oscillation"
)
AT_TOP = "at the deepest net (L = {top[depth]:g}): "
CHAIN_RANDOM = ClaimSpec(
    "chain-random",
    "{n_random} random nets x {cfg.n_points} points: smallest slack of ||theta||^2 >= "
    "L ||Jf||_{{2/L}}^{{2/L}} >= L Rank Jf + 2 log|Jf|_+",
    Ungated(ANY_PARAMETER.format("001, proof of Thm 3")),
    smallest(RANDOM_CHAIN_SLACK),
    source="001 Thm 3 (proof)",
)
CHAIN_TRAINED = ClaimSpec(
    "chain-trained",
    "trained nets (L = {depths}), every training point: smallest slack of the chain",
    Ungated(ANY_PARAMETER.format("001, proof of Thm 3")),
    smallest(TRAINED_CHAIN_SLACK),
    source="001 Thm 3 (proof)",
)
THM15_RANDOM = ClaimSpec(
    "thm15-random",
    "random nets: smallest slack of sum_l [d_k(W_l)^2 + ||b_l||^2] <= ||theta||^2 - kL "
    "- 2 log|Jf(x)|_(k) over k <= Rank Jf(x)",
    Ungated(ANY_PARAMETER.format("001 Thm 15")),
    smallest(RANDOM_THM15_SLACK),
)
THM15_TRAINED = ClaimSpec(
    "thm15-trained",
    "trained nets: smallest Thm 15 slack over points and k <= Rank Jf(x)",
    Ungated(ANY_PARAMETER.format("001 Thm 15")),
    smallest(TRAINED_THM15_SLACK),
)
COR8_CLAIM = ClaimSpec(
    "cor8",
    "median over the middle layers (p <= l/L <= 1 - p, p = {cfg.p:g}) of "
    "s_(k+1)(a~_l / sqrt N), k = {cfg.k}, trained (and the same net at init): {listed}; "
    "non-increasing in L, and at the deepest net (L = {top[depth]:g}, affine dimension "
    "{cfg.k}) its ratio to the same net at init (affine dimensions: {ranks}; "
    "balancedness residual summed {top[balance_summed_max]:.2g}, per neuron "
    "{top[balance_per_neuron_max]:.2g})",
    COR8,
    cor8,
    source="001 Cor 8 (App. B Cor 17)",
)
COR8_SLACK = ClaimSpec(
    "cor8-slack",
    AT_TOP + "log10 of Cor 8's bound ({top[cor8_bound]:.3g}) over the largest middle "
    "s_(k+1)(a~_l / sqrt N) ({top[cor8_middle_max]:.3g}), in decades (> 0: every middle "
    "layer lies below the bound)",
    COR8,
    cor8_slack,
    source="001 Cor 8",
)
COR8_RANDOM_RANK = ClaimSpec(
    "cor8-random-rank",
    AT_TOP + "untrained nets of that depth (of {cfg.cor8_random}: its own init and "
    "further draws of the same init; smallest median "
    "{top[cor8_middle_median_random_min]:.3g}, median of medians "
    "{top[cor8_middle_median_random]:.3g}) whose middle median of s_(k+1) lies below the "
    "trained net's ({top[cor8_middle_median]:.3g}); 0 rejects 'one more random draw' at "
    "level {level:.2g}",
    COR8,
    lambda cfg, pts: reported(
        by_depth(pts)[-1].get(COR8_RANDOM_BELOW),
        top=by_depth(pts)[-1].scalars,
        level=1 / (cfg.cor8_random + 1),
    ),
    source="001 Cor 8",
)
COR8_SLOPE = ClaimSpec(
    "cor8-slope",
    "least-squares slope of log(middle median s_(k+1)) against log L over the trained "
    "depths, beside Cor 8's -1/2 (the untrained nets' median: {slope0:.3g})",
    COR8,
    cor8_slope,
    source="001 Cor 8",
)
NTK_STABILITY = ClaimSpec(
    "ntk-stability",
    "after GD at eta = eta0 / L (eta0 = {cfg.eta0:g}): lambda_max(Theta(X,X)) / N "
    "times eta, mean over {cfg.orbit_steps} further GD steps (the edge-of-stability "
    "oscillation), largest over depths (mean +- half range per depth: {orbit}); "
    "GD can only settle at <= {cfg.ntk_factor:g}, which an untrained net meets too",
    NTK,
    ntk_stability,
    source="001 §4",
)
NTK_SCALE_CLAIM = ClaimSpec(
    "ntk-scale",
    "max / min over depths of Tr Theta(X,X) / (N L), mean over the same GD steps ({scales})",
    NTK,
    ntk_scale,
    source="001 §4",
)

PRESETS = {
    # Seconds: two shallow depths, a handful of random nets, a few steps (_common).
    "smoke": {**SMOKE, "depths": (3, 4), "n_random": 3, "n_points": 4},
    # The spec's quick sizes; Adam, L-BFGS (float64), then GD at eta = 0.1/L without
    # halving (reasons: docs/lab-notes/fcnn.md).
    "quick": {
        "model.init_scale": 0.85,
        "train.dtype": "float64",
        "train.phases": (
            {"optimizer": "adam", "steps": 2000, "lr": 0.01, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 600, "lr": 1.0},
            {"optimizer": "sgd", "steps": 1000, "lr": 0.1},
        ),
    },
    # More random nets and a longer schedule (paper 001 gives no sizes).
    "paper": {
        "task.n_train": 512,
        "model.width": 100,
        "n_random": 200,
        "depths": (6, 10, 16, 24),
        "train.phases": (
            {"optimizer": "adam", "steps": 20000, "lr": 0.01, "schedule": "cosine"},
            {"optimizer": "sgd", "steps": 5000, "lr": 0.1, "backtrack": True},
        ),
    },
}

EXPERIMENT = Experiment[Config](
    name="fcnn/bottleneck-bounds",
    source="001 Thm 15",
    title="Jacobian chain, Thm 15 and Cor 8 bottleneck bounds; NTK after GD at eta ~ 1/L",
    config=BASE,
    presets=PRESETS,
    grid={"model.depth": "depths"},
    measure=BOUNDS,
    claims=[
        CHAIN_RANDOM,
        CHAIN_TRAINED,
        THM15_RANDOM,
        THM15_TRAINED,
        COR8_CLAIM,
        COR8_SLACK,
        COR8_RANDOM_RANK,
        COR8_SLOPE,
        NTK_STABILITY,
        NTK_SCALE_CLAIM,
    ],
    figures=("_depth_rank:bottleneck_bounds",),
    doc=__doc__ or "",
)
