"""What the width-plateau experiments share (paper 004, Fig 2): the base config, the smoke
and quick recipes, the measurement, the claims and their own certificate gate.

The claims are measured once per `train.lam` of a run (`Experiment(per="train.lam")`):
their statements' `{tag}` names the `lam` when a run has several."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab import measure as M
from bottlenecklab.experiments._checks import in_range, listed, non_decreasing, reported
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Gate,
    Measure,
    Measurement,
    Outcome,
    PointResult,
    Points,
    Reads,
    Ungated,
)
from bottlenecklab.experiments._verdicts import certificate_record, gate_of, stability
from bottlenecklab.experiments.l2._common import WIDTH, best_rows, hidden_width, width_rows
from bottlenecklab.measure import GRAD_NORM, LOSS, TEST_COST, TRAIN_COST, Quantity
from bottlenecklab.measure._sparsity import best_per_width, merge_neurons, plateau_start
from bottlenecklab.models import FCNNConfig

__all__ = [
    "CLAIMS",
    "EXACT_END",
    "KINK_END",
    "MERGED_MAX",
    "MERGED_MIN",
    "NON_INCREASING",
    "PLATEAU",
    "PLATEAU_CLAIM",
    "QUICK",
    "SMOKE",
    "UNFINISHED_RESTARTS",
    "WIDTH",
    "PlateauConfig",
    "plateau_gate",
    "plateau_measure",
    "quick_phases",
]


@dataclass(frozen=True)
class PlateauConfig:
    """Depth-3 ReLU nets of equal hidden widths, a `model.width` x `seed` grid (004 Fig 2:
    3 trials). An experiment's `Config` subclasses it and adds `task`, `train`, `widths`.

    Args:
        seeds: the grid's seeds; trend_tol: allowed relative rise of the best loss between
            widths; plateau_tol, plateau_range: the plateau's tolerance and accepted start
            (004: "around 10").
        certify: the convergence certificate (spec `convergence.md`): stationarity <= 0.2
            of the regularization force, as for the other kinked optima we certify; the
            kink band `tau = 1e-4` holds the softplus band of the last smoothed stage
            (`|z| < 4.6 / beta`); the earlier state is the start of the last phase.
    """

    model: FCNNConfig = FCNNConfig(depth=3, width=10)
    seeds: tuple[int, ...] = (0, 1, 2)
    trend_tol: float = 0.02
    plateau_tol: float = 0.1
    plateau_range: tuple[float, float] = (5.0, 20.0)
    certify: Gate = Gate(threshold=0.2, tau=1e-4, earlier=0.0)
    seed: int = 0


# The smoothed stages of both quick recipes (`docs/convergence.md`): three restarted
# L-BFGS runs of 200 at each softplus sharpness beta = 1e2 ... 1e7, then trust region 100
# at beta = 1e5, 1e6, 1e7. L-BFGS and exact Newton stop at the first ReLU kinks, far from
# a critical point at the narrow widths; the smoothed path reaches lower losses, and the
# trust-region stages bring the narrow widths below the certificate's threshold. Each
# preset ends with exact L-BFGS (lab notes `docs/lab-notes/l2.md`).
SMOOTHED_STAGES: tuple[dict[str, Any], ...] = tuple(
    {"optimizer": "lbfgs", "steps": 200, "lr": 1.0, "smooth": beta}
    for beta in (1e2, 1e3, 1e4, 1e5, 1e6, 1e7)
    for _ in range(3)
) + tuple(
    {"optimizer": "trust_region", "steps": 100, "lr": 1.0, "smooth": beta}
    for beta in (1e5, 1e6, 1e7)
)

# The end of the teacher's quick recipe: five exact restarted L-BFGS runs of 200 (a wide
# net can still drift toward the regularized optimum; spec l2-sparsity.md, fourth review),
# then twice Newton-KKT on the kink manifold (`kink_newton`, at most 300 steps; it stops
# once converged, which solves a narrow net the restarts leave beside its kinks) followed
# by exact L-BFGS restarts, which settle the wide nets that `kink_newton` leaves moving or
# sets descending again; the last phase, L-BFGS 100, is value stability's earlier state
# (pilots: lab notes `l2.md`).
_KINK_STEP: dict[str, Any] = {"optimizer": "kink_newton", "steps": 300, "lr": 1.0}
_LBFGS_200: dict[str, Any] = {"optimizer": "lbfgs", "steps": 200, "lr": 1.0}
EXACT_END: tuple[dict[str, Any], ...] = (
    (_LBFGS_200,) * 5
    + (_KINK_STEP,)
    + (_LBFGS_200,) * 3
    + (_KINK_STEP, _LBFGS_200, {"optimizer": "lbfgs", "steps": 100, "lr": 1.0})
)

# The end of the digits' quick recipe (issue 33): Newton-KKT on the kink manifold
# (`kink_newton`, at most 120 steps; it stops once converged), then a restart of 10 that
# re-identifies the kink set (value stability's earlier state is its start). It certifies
# the width-2 nets the exact end leaves on their kinks (lab notes `l2.md`, 2026-11-28).
KINK_END: tuple[dict[str, Any], ...] = (
    {"optimizer": "kink_newton", "steps": 120, "lr": 1.0},
    {"optimizer": "kink_newton", "steps": 10, "lr": 1.0},
)


def quick_phases(
    *start: dict[str, Any], end: tuple[dict[str, Any], ...] = EXACT_END
) -> tuple[dict[str, Any], ...]:
    """A quick recipe's phases: `start`, the smoothed continuation, `end`."""
    return (*start, *SMOOTHED_STAGES, *end)


# Seconds: two widths, one seed, short Adam (each experiment shrinks its data).
SMOKE: dict[str, Any] = {
    "widths": (2, 4),
    "seeds": (0,),
    "train.phases": ({"optimizer": "adam", "steps": 50, "lr": 1e-3},),
    "train.log_every": 25,
}
# Float64 (the certificate and the smoothed stages), a logged row where the last phase
# starts (value stability's earlier state). Each experiment adds its phases.
QUICK: dict[str, Any] = {"train.dtype": "float64", "train.log_every": 100}

# The claims read each width's lowest loss (with L2) over seeds, a multi-start estimate, and
# are gated by the experiment itself (`plateau_gate`, spec `l2-sparsity.md`, fourth review):
# stationarity of the seed that sets each width's best and of every seed within the 2 %
# trend tolerance of it, value stability of every seed (its loss moves by at most 1/4 of
# the tolerance over the last phase). The runner's gate would ask every seed to be
# stationary, an unfinished restart far above the best included, so the claims are
# `Ungated`; the reported `unfinished-restarts` reads every seed's loss, which makes the
# runner keep its earlier value (`PointResult.earlier`) for value stability.
# (`LOSS_READ`, declared with the measurement below.)


def plateau_gate(
    cfg: Any,
    points: list[PointResult],
    tol: float,
    read: Reads | None = None,
    loss: Quantity | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The certificate of a width sweep's claims, which read each width's lowest loss over
    seeds (spec `l2-sparsity.md`, fourth review).

    Stationarity (`certificate.stationarity <= cfg.certify.threshold`) is required of the seed
    that sets each width's lowest `loss` and of every seed within `tol` (relative) of it;
    value stability (`_verdicts.stability`, window `tol`) of every seed. A seed more than
    `tol` above its width's best that fails stationarity is an unfinished restart: listed,
    not gating. Never falls back to a higher certified seed.

    Args:
        cfg: the experiment config (`certify`); points: the finished points of one `lam`
            (`point["model.width"]` or their `WIDTH`, `point["seed"]`).
        tol: the trend tolerance.
        read: what the claim reads (its window is that of value stability); default
            `LOSS_READ`.
        loss: the loss ranked per width; default `read`'s first quantity.
    Returns:
        `(certificate, unfinished)`: the certificate in the runner's form (`stationarity`
        (worst over the gating seeds), `threshold`, `change`, `allowed`, `scalar`,
        `converged`, `reason`) and one line per unfinished restart.
    """
    read = read or LOSS_READ
    loss = loss or read.scalars[0]
    gate = gate_of(cfg)
    by_width: dict[float, list[PointResult]] = {}
    for p in points:
        by_width.setdefault(float(p.point.get("model.width", p.value(WIDTH))), []).append(p)
    reasons, unfinished, gating = [], [], []
    for w in sorted(by_width):
        pts = sorted(by_width[w], key=lambda p: p.value(loss))
        best = pts[0].value(loss)
        for rank, p in enumerate(pts):
            stat = p.certificate.stationarity if p.certificate else math.nan
            ok = math.isfinite(stat) and stat <= gate.threshold
            above = p.value(loss) / best - 1 if best > 0 else math.inf
            who = f"width {w:g} seed {p.point.get('seed', '?')}"
            if rank == 0 or above <= tol:
                gating.append(stat)
                if not ok:
                    where = "sets the best loss" if rank == 0 else f"at +{above:.2%} of the best"
                    reasons.append(f"{who} ({where}): stationarity {stat:.3g}")
            elif not ok:
                unfinished.append(
                    f"{who}: loss {p.value(loss):.6g} (+{above:.2%}), stationarity {stat:.3g}"
                )
    worst = max(gating, default=math.nan)
    if any(not math.isfinite(v) for v in gating):
        worst = math.nan
    if reasons:
        more = f" and {len(reasons) - 3} more" if len(reasons) > 3 else ""
        reasons = [f"{'; '.join(reasons[:3])}{more} > {gate.threshold:g}"]
    if not points:
        reasons.append("no trained point")
    stab = stability(points, read)
    cert = certificate_record(points, worst, stab, gate, reasons)
    return cert, unfinished


def plateau_measure(model: torch.nn.Module, data, cfg: Any) -> Measurement:
    """Train loss with the regularizer, train and test data costs, gradient norm, merged
    neuron counts (float64 copy)."""
    cost = cfg.train.cost
    c = M.costs(model, data, cost)
    net = M.float64_copy(model)
    lam = cfg.train.lam
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    _, merged = merge_neurons(net, X)
    scalars = {
        WIDTH.name: hidden_width(net),
        LOSS.name: c[TRAIN_COST.name] + lam * float(net.param_norm_sq().detach()),
        TRAIN_COST.name: c[TRAIN_COST.name],
        TEST_COST.name: c[TEST_COST.name],
        GRAD_NORM.name: M.gradient_norm(net, X, Y, lam, cost=cost),
        MERGED_MIN.name: float(min(merged)),
        MERGED_MAX.name: float(max(merged)),
    }
    return Measurement(scalars=scalars)


_NET = "a trained FCNN of a width sweep (float64 copy)"
MERGED_MAX = Quantity(
    "merged_max",
    "the largest number of neurons `merge_neurons` merges over the layers (paper 004, §4)",
    function=plateau_measure,
    over=_NET + ", training inputs",
    units="count",
)
MERGED_MIN = Quantity(
    "merged_min",
    "the fewest neurons `merge_neurons` keeps in a hidden layer (dead ones dropped, "
    "positively proportional ones merged; paper 004, §4)",
    function=plateau_measure,
    over=_NET + ", training inputs",
    units="count",
)
# The measurement of every width-plateau point; value stability reads LOSS (LOSS_READ).
PLATEAU = Measure(
    plateau_measure, (WIDTH, LOSS, TRAIN_COST, TEST_COST, GRAD_NORM, MERGED_MIN, MERGED_MAX)
)
LOSS_READ = Reads((LOSS,), window=PlateauConfig.trend_tol, relative=True)


def best_loss(pts: Points) -> tuple[list[float], list[float], dict[float, dict[str, float]]]:
    """`(widths, best loss, best seed's row)` per width, widths increasing."""
    rows = width_rows(pts)
    widths, best = best_per_width(rows, LOSS.name)
    return widths, best, best_rows(rows, LOSS)


def self_gated(
    o: Outcome, cfg: Any, pts: Points, read: Reads | None = None, loss: Quantity | None = None
) -> Outcome:
    """`o` judged by `plateau_gate` (`not-converged` when it fails; `read`, `loss` as
    there), with the gate's record as its certificate."""
    cert, _ = plateau_gate(cfg, list(pts), cfg.trend_tol, read, loss)
    if not cert["converged"]:
        o = dataclasses.replace(o, passed=False, state="not-converged")
    return dataclasses.replace(o, certificate=cert)


def non_increasing(cfg: Any, pts: Points) -> Outcome:
    """Relative steps: the log of the best loss, widest first, non-decreasing within
    `log(1 + trend_tol)`."""
    widths, best, _ = best_loss(pts)
    logs = [math.log(b) if b > 0 else math.nan for b in reversed(best)]
    o = non_decreasing(logs, math.log1p(cfg.trend_tol), widths=listed(widths[::-1], "g"))
    return self_gated(o, cfg, pts)


def plateau(cfg: Any, pts: Points) -> Outcome:
    """The first width with best loss `<= (1 + plateau_tol) min` lies in `plateau_range`."""
    widths, best, rows = best_loss(pts)
    start = plateau_start(widths, best, cfg.plateau_tol)
    o = in_range(start, *cfg.plateau_range, merged=rows[widths[-1]][MERGED_MAX.name])
    return self_gated(o, cfg, pts)


def unfinished_restarts(cfg: Any, pts: Points, read: Reads | None = None) -> Outcome:
    """Seeds more than `trend_tol` above their width's best that fail stationarity."""
    _, unfinished = plateau_gate(cfg, list(pts), cfg.trend_tol, read)
    return reported(float(len(unfinished)), seeds="; ".join(unfinished) or "none")


NON_INCREASING = ClaimSpec(
    "non-increasing",
    "best-of-seeds train loss (with L2) is non-increasing in width within "
    "{cfg.trend_tol:.0%}{tag}: log best loss, widest first ({widths})",
    Ungated(
        "gated by the experiment (`_plateau.plateau_gate`, spec l2-sparsity.md, fourth "
        "review): the certificate of the seed that sets each width's best "
        "loss and of every seed within the trend tolerance of it, value stability of "
        "every seed; the runner's gate would also ask an unfinished restart far above the "
        "best to be stationary"
    ),
    non_increasing,
)
PLATEAU_CLAIM = ClaimSpec(
    "plateau",
    "plateau start: first width with best loss <= (1 + {cfg.plateau_tol:g}) min{tag} "
    "(merged neurons at the widest: {merged:g})",
    Ungated("gated by the experiment, as non-increasing"),
    plateau,
)
UNFINISHED_RESTARTS = ClaimSpec(
    "unfinished-restarts",
    "seeds more than {cfg.trend_tol:.0%} above their width's best loss that fail "
    "stationarity (not gating){tag}: {seeds}",
    LOSS_READ,
    unfinished_restarts,
)
CLAIMS = [NON_INCREASING, PLATEAU_CLAIM, UNFINISHED_RESTARTS]
