"""What a training run of paper 003 from small init measures: the losses at its ends
(`end_losses`), its scale and step (`scale_measurement`, `saddle/plateau-time`), its depth
(`sgd_measurement`, `saddle/mnist-plateaus`), and what the claims and the figures read off
the runs' logs (`summary`: drops, the snapshot between the first two drops, the spectral
gaps there and at the end), with the quantities each writes. `cfg` is the experiment's
`Config`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import torch

from bottlenecklab.experiments._spec import Measure, Measurement, PointResult, Points
from bottlenecklab.experiments.saddle._common import (
    ENDS,
    FINAL_LOSS,
    LOSS0,
    curve,
    end_losses,
)
from bottlenecklab.measure import DEPTH, TRAIN_COST, Quantity, costs
from bottlenecklab.measure._saddles import loss_drops
from bottlenecklab.tasks import COSTS, Dataset

__all__ = [
    "ALPHA",
    "DROPS",
    "ESCAPED",
    "GAP_MEAN_DEEP",
    "GAP_MEAN_SHALLOW",
    "GAP_MIN_L2",
    "GAP_SNAPSHOT",
    "INIT_NORM",
    "LAST_LOSS",
    "LOSS0_MINUS_LN10",
    "LR",
    "RATIO_MEAN_END",
    "RATIO_MEAN_SNAPSHOT",
    "SCALE_RUN",
    "SGD_RUN",
    "SHARPNESS_FIRST",
    "SNAPSHOT_STEP",
    "TAU",
    "read",
    "scalars",
    "scale_measurement",
    "sgd_measurement",
    "spectra",
    "summary",
]


def scale_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """This run's depth, scale and step, `C(0)` and the final loss (float64) and whether
    it escaped."""
    kind, L, a = cfg.plan[cfg.run]
    ends = end_losses(
        model, data, cfg, lambda net, d: costs(net, d)[TRAIN_COST.name], torch.float64
    )
    scalars = {
        DEPTH.name: float(L),
        ALPHA.name: a,
        INIT_NORM.name: a * math.sqrt(L),
        LR.name: cfg.train.phases[0].lr,
        TAU.name: float(kind == "tau"),
        **ends,
        ESCAPED.name: float(ends[FINAL_LOSS.name] <= cfg.escape_frac * ends[LOSS0.name]),
    }
    return Measurement(scalars=scalars)


_PLAN = "one run of the plan (its config)"
ALPHA = Quantity(
    "alpha", "the init scale alpha (paper 003, Prop 2.2)", scale_measurement, _PLAN, "scale"
)
INIT_NORM = Quantity(
    "init_norm", "||theta_0|| = alpha sqrt(L)", scale_measurement, _PLAN, "parameter norm"
)
LR = Quantity("lr", "the GD step (c of a tau-run)", scale_measurement, _PLAN, "step")
TAU = Quantity(
    "tau",
    "1 for a tau-time run (eta_k = c ||theta_k||^(2-L)), 0 for a slope run",
    scale_measurement,
    _PLAN,
    "flag",
)
ESCAPED = Quantity(
    "escaped",
    "1 when the final loss is at most escape_frac C(0) (the run stopped at its escape)",
    scale_measurement,
    "the training set, at the run's two ends",
    "flag",
)
SCALE_RUN = Measure(scale_measurement, (DEPTH, ALPHA, INIT_NORM, LR, TAU, *ENDS, ESCAPED))


def _train_cost(model: torch.nn.Module, data: Dataset) -> float:
    X = torch.as_tensor(data.x_train, dtype=torch.float32)
    Y = torch.as_tensor(data.y_train, dtype=torch.float32)
    with torch.no_grad():
        return float(COSTS["cross_entropy"](model(X), Y))


def sgd_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """This run's depth, the init's training loss (`LOSS0`: run_point's seed, float32)
    and the final one."""
    ends = end_losses(model, data, cfg, _train_cost)
    return Measurement(scalars={DEPTH.name: float(cfg.plan[cfg.run][0]), **ends})


SGD_RUN = Measure(sgd_measurement, (DEPTH, *ENDS))


def spectra(r: PointResult) -> dict[int, list[list[float]]]:
    """A run's traced singular values: step -> per layer, the largest first."""
    return {
        int(m["step"]): json.loads(m["singular"])
        for m in r.metrics
        if isinstance(m.get("singular"), str) and m["singular"]
    }


def _ratios(layers: list[list[float]]) -> list[float]:
    """`s_1/s_2` of every layer (`[L]`)."""
    return [s[0] / s[1] if len(s) > 1 and s[1] > 0 else math.inf for s in layers]


def summary(cfg: Any, results: list[PointResult]) -> dict[str, Any]:
    """What the claims and the figure read off the points' logs: `scalars` (the quantities
    below: drops per depth, the snapshot, the spectral gaps there and at the end), `curves`
    (depth -> `(steps, losses)`), `spectra` (the depth-`depth` run's, by step), `drops` rows."""
    scalars: dict[str, float] = {LOSS0_MINUS_LN10.name: math.nan, SNAPSHOT_STEP.name: math.nan}
    curves, drops_t, sv = {}, [], {}
    for r in results:
        if r.status != "done" or DEPTH.name not in r.scalars:
            continue
        depth = int(r.value(DEPTH))
        t, loss = curve(r)
        curves[depth] = (t, loss)
        d = loss_drops(
            t,
            loss,
            rise=cfg.drop_rise,
            fall=cfg.drop_fall,
            min_fall=cfg.drop_min_fraction * math.log(10),
        )
        drops_t += [
            {"depth": depth, "drop": i, "start": a, "peak": p, "end": b, "sharpness": sh, "fall": f}
            for i, ((a, p, b), sh, f) in enumerate(zip(d["drops"], d["sharpness"], d["falls"]))
        ]
        scalars[DROPS.at(depth).name] = float(len(d["drops"]))
        scalars[LAST_LOSS.at(depth).name] = loss[-1]
        first = d["sharpness"][0] if d["sharpness"] else math.nan
        scalars[SHARPNESS_FIRST.at(depth).name] = first
        if depth != cfg.depth:
            continue
        scalars[LOSS0_MINUS_LN10.name] = loss[0] - math.log(10)
        sv = spectra(r)
        svd_steps = sorted(sv)
        if d["flattest"] and svd_steps:
            snap = min(svd_steps, key=lambda s: abs(s - d["flattest"][0]))
            scalars[SNAPSHOT_STEP.name] = float(snap)
            gap, end = _ratios(sv[snap]), _ratios(sv[svd_steps[-1]])
            for l, g in enumerate(gap, start=1):
                scalars[GAP_SNAPSHOT.at(l).name] = g
            scalars[GAP_MIN_L2.name] = min(gap[1:])
            scalars[GAP_MEAN_DEEP.name] = float(np.mean(gap[depth // 2 :]))
            scalars[GAP_MEAN_SHALLOW.name] = float(np.mean(gap[: depth // 2]))
            inv = lambda r: float(np.mean([1 / x for x in r[1:]]))  # noqa: E731
            scalars[RATIO_MEAN_SNAPSHOT.name] = inv(gap)
            scalars[RATIO_MEAN_END.name] = inv(end)
    return {"scalars": scalars, "curves": curves, "spectra": sv, "drops": drops_t}


_LOG = "the runs' logged losses (every log_every steps) and singular values (every svd_every)"
_SNAP = "the depth-`depth` run's layers l >= 2 at the snapshot (the traced step nearest the "
_SNAP += "flattest point between its first two drops)"


def _logged(name: str, doc: str, over: str, units: str, shape: str = "scalar") -> Quantity:
    """A quantity `summary` reads off the points' logs."""
    return Quantity(name, doc, function=summary, over=over, units=units, shape=shape)


LOSS0_MINUS_LN10 = _logged(
    "loss0_minus_ln10", "C(0) - ln 10 (003 Fig 1: the output ~ 0 at init)", _LOG, "nats"
)
SNAPSHOT_STEP = _logged("snapshot_step", "the snapshot's step (nan: no two drops)", _LOG, "step")
DROPS = _logged(
    "drops_L", "loss drops found by measure._saddles.loss_drops", _LOG, "count", "per depth"
)
LAST_LOSS = _logged("final_loss_L", "the last logged loss", _LOG, "nats", "per depth")
SHARPNESS_FIRST = _logged(
    "sharpness_first_L", "the first drop's sharpness (loss_drops)", _LOG, "ratio", "per depth"
)
GAP_SNAPSHOT = _logged(
    "gap_snapshot_l", "s_1/s_2 of W_l at the snapshot", _SNAP, "ratio", "per layer"
)
GAP_MIN_L2 = _logged("gap_min_l2", "smallest s_1/s_2 (003 Fig 1, 3)", _SNAP, "ratio")
GAP_MEAN_DEEP = _logged("gap_mean_deep", "mean s_1/s_2 over the deeper half", _SNAP, "ratio")
GAP_MEAN_SHALLOW = _logged(
    "gap_mean_shallow", "mean s_1/s_2 over the shallower half", _SNAP, "ratio"
)
RATIO_MEAN_SNAPSHOT = _logged("ratio_mean_snapshot", "mean s_2/s_1 (003 Fig 3)", _SNAP, "ratio")
RATIO_MEAN_END = _logged(
    "ratio_mean_end", "mean s_2/s_1 at the last traced step (003 Fig 3)", _LOG, "ratio"
)


def scalars(cfg: Any, pts: Points) -> dict[str, float]:
    """`summary`'s scalars of the points' logs (`nan` for a missing one)."""
    return {k: float(v) for k, v in summary(cfg, list(pts))["scalars"].items()}


def read(s: dict[str, float], quantity: Quantity) -> float:
    """`quantity` in `summary`'s scalars `s` (`nan` when it was not found)."""
    return s.get(quantity.name, math.nan)
