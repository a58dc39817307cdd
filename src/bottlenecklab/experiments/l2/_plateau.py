"""Measurement and claims shared by the width-plateau experiments (paper 004, Fig 2)."""

from __future__ import annotations

import math
from typing import Any

import torch

from bottlenecklab import measure as M
from bottlenecklab.experiments._claims import in_range, non_decreasing, unmeasured
from bottlenecklab.experiments._spec import Claim, Measurement, PointResult, Reads

__all__ = [
    "PLATEAU_READS",
    "SMOOTHED_STAGES",
    "plateau_claims",
    "plateau_measure",
    "plateau_reads_per_lam",
]

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

# Both claims read each width's loss (with L2); value stability asks it to move by at most
# 1/4 of the 2 % trend tolerance over the last phase (spec Decision). Every seed is read:
# the best of seeds moves no more than the most-moving seed.
PLATEAU_READS = {
    "non-increasing*": Reads(("loss",), window=0.02, relative=True),
    "plateau*": Reads(("loss",), window=0.02, relative=True),
}


def plateau_reads_per_lam(lams: tuple[float, ...]) -> dict[str, Reads]:
    """`PLATEAU_READS` with each `lam`'s claims (`plateau_claims`' ids for a grid of
    several `lams`) reading only the points trained at that `lam`; other ids (a grid
    overridden to other `lams`) fall back to every point."""
    per = {
        f"{kind}(lam={lam:g})": Reads(
            ("loss",), window=0.02, relative=True, where={"train.lam": lam}
        )
        for lam in lams
        for kind in ("non-increasing", "plateau")
    }
    return {**per, **PLATEAU_READS}


def plateau_measure(model: torch.nn.Module, data, cfg: Any) -> Measurement:
    """Train loss with the regularizer, train and test data costs, gradient norm, merged
    neuron counts (float64 copy)."""
    cost = cfg.train.cost
    c = M.costs(model, data, cost)
    net = M.float64_copy(model)
    lam = cfg.train.lam
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    _, merged = M.merge_neurons(net, X)
    scalars = {
        "width": float(net.weights[0].shape[0]),
        "loss": c["train_cost"] + lam * float(net.param_norm_sq().detach()),
        "train_cost": c["train_cost"],
        "test_cost": c["test_cost"],
        "grad_norm": M.loss_grad_norm(net, X, Y, lam, cost=cost),
        "merged_min": float(min(merged)),
        "merged_max": float(max(merged)),
    }
    return Measurement(scalars=scalars)


def plateau_claims(cfg: Any, results: list[PointResult], source: str) -> list[Claim]:
    """Per `train.lam` of the grid (or the config's): best-of-seeds loss non-increasing in
    width within `trend_tol` (relative), plateau start in `plateau_range` (both gated by the
    convergence certificate through `PLATEAU_READS`)."""
    lams = sorted({r.point.get("train.lam", cfg.train.lam) for r in results})
    out = []
    for lam in lams:
        sel = [r for r in results if r.point.get("train.lam", cfg.train.lam) == lam]
        tag = f" (lam = {lam:g})" if len(lams) > 1 else ""
        ids = (f"non-increasing{tag.replace(' ', '')}", f"plateau{tag.replace(' ', '')}")
        done = [r for r in sel if r.status == "done"]
        if len(done) < len(sel) or not done:
            why = f"{len(sel) - len(done)} of {len(sel)} trainings diverged"
            out += [unmeasured(i, source, "see spec", "see spec", why) for i in ids]
            continue
        rows = [
            {"width": r.point.get("model.width", r.scalars["width"]), **r.scalars} for r in done
        ]
        widths, best = M.best_per_width(rows, "loss")
        best_rows: dict[float, dict] = {}
        for r in rows:
            w = float(r["width"])
            if w not in best_rows or r["loss"] < best_rows[w]["loss"]:
                best_rows[w] = r
        start = M.plateau_start(widths, best, cfg.plateau_tol)
        lo, hi = cfg.plateau_range
        # relative steps: log of the best loss, non-increasing in width within log(1 + tol)
        logs = [math.log(b) if b > 0 else math.nan for b in reversed(best)]
        trend = non_decreasing(
            ids[0],
            source,
            f"best-of-seeds train loss (with L2) is non-increasing in width within "
            f"{cfg.trend_tol:.0%}{tag}: log best loss, widest first "
            f"({', '.join(f'{w:g}' for w in reversed(widths))})",
            logs,
            tol=math.log1p(cfg.trend_tol),
        )
        plateau = in_range(
            ids[1],
            source,
            f"plateau start: first width with best loss <= (1 + {cfg.plateau_tol:g}) min{tag} "
            f"(merged neurons at the widest: {best_rows[widths[-1]]['merged_max']:g})",
            start,
            lo,
            hi,
        )
        out += [trend, plateau]
    return out
