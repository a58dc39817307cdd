"""Figures of paper 004's experiments (L2 reformulations and sparsity)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bottlenecklab.experiments import RunRecord
from bottlenecklab.experiments.l2._bipartite import LOSS_OVER_LAM, WIDE_OPTIMUM
from bottlenecklab.experiments.l2._common import WIDTH
from bottlenecklab.experiments.l2._counterexample import LAM
from bottlenecklab.experiments.l2._pruning import ALIVE_BEFORE, NEURONS_AFTER
from bottlenecklab.experiments.l2._reformulation import COV_ERROR, SPLIT_ERROR
from bottlenecklab.measure import LOSS, N_TRAIN, TEST_COST, Quantity
from bottlenecklab.report._style import plt, save

__all__ = [
    "l2_counterexample",
    "l2_forces",
    "l2_one_dim_pruning",
    "l2_reformulation",
    "l2_width_plateau",
]


def l2_reformulation(record: RunRecord, folder: Path) -> list[Path]:
    """Relative errors of the loss identities per network (table `forms`): weight vs
    representation + null, representation vs covariance; random and trained nets, against
    float64's epsilon (every point's rows: one point per trained net, one for the random
    nets)."""
    rows = [r for p in record.points for r in p.tables.get("forms", [])]
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    for k, (kind, marker) in enumerate((("random", "o"), ("trained", "s"))):
        sel = [r for r in rows if r["kind"] == kind]
        for j, (key, label) in enumerate(
            ((SPLIT_ERROR.name, "L vs L^r + null"), (COV_ERROR.name, "L^r vs L^k"))
        ):
            y = np.maximum([r[key] for r in sel], 1e-18)
            x = 2 * k + j + 0.1 * np.random.default_rng(0).standard_normal(len(y))
            ax.semilogy(x, y, marker, ms=4, alpha=0.7, label=f"{kind}: {label}")
    ax.axhline(np.finfo(np.float64).eps, color="k", ls=":", lw=0.8, label="float64 eps")
    ax.set_xticks([0, 1, 2, 3], ["rand split", "rand cov", "trained split", "trained cov"])
    ax.set_ylabel("relative error")
    ax.legend(frameon=False, fontsize=6)
    path = folder / "l2_reformulation.png"
    save(fig, path)
    return [path]


def l2_counterexample(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 19: the loss change along the escape path from the family's end point, with
    `+eps` (the spec: descends as `-2(1 - lam) eps^2 + eps^4`) and `-eps` (004's print:
    ascends), table `curve`."""
    r = next((p for p in record.points if p.tables.get("curve")), None)
    if r is None:  # the curve is the closed forms' point's (`run = theory`)
        return []
    rows = r.tables["curve"]
    lam = float(r.value(LAM))
    fig, ax = plt.subplots(figsize=(4.5, 3.0))
    for sign, style, label in ((1.0, "o-", "+eps (descent)"), (-1.0, "s-", "-eps (004 print)")):
        sel = sorted((x for x in rows if x["sign"] == sign), key=lambda x: x["eps"])
        ax.plot([x["eps"] for x in sel], [x["delta"] for x in sel], style, ms=3, label=label)
    eps = np.array(sorted({x["eps"] for x in rows}))
    ax.plot(eps, -2 * (1 - lam) * eps**2 + eps**4, "k:", lw=1, label="-2(1-lam)eps^2 + eps^4")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_xlabel("eps")
    ax.set_ylabel("loss change from a_2 = 0")
    ax.legend(frameon=False, fontsize=7)
    path = folder / "l2_counterexample.png"
    save(fig, path)
    return [path]


def l2_one_dim_pruning(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 15: the trained function and its pruned version on the test grid (table
    `curve`), the pruned neurons' kinks (table `kinks`) and the training points."""
    if not record.points:
        return []
    r = record.points[0]
    curve = r.tables.get("curve", [])
    if not curve:
        return []
    fig, ax = plt.subplots(figsize=(5.0, 3.2))
    x = [p["x"] for p in curve]
    ax.plot(x, [p["before"] for p in curve], "-", lw=2, alpha=0.5, label="trained")
    ax.plot(x, [p["after"] for p in curve], "k--", lw=1, label="pruned")
    xs = np.linspace(-1, 1, int(r.get(N_TRAIN, 0)))
    for k in r.tables.get("kinks", []):
        if np.isfinite(k["kink"]) and -1.2 < k["kink"] < 1.2:
            ax.axvline(k["kink"], color="C3" if k["a"] > 0 else "C0", lw=0.6, alpha=0.6)
    ax.plot(xs, np.interp(xs, x, [p["before"] for p in curve]), "ko", ms=3, label="data x")
    n0, n1 = r.get(ALIVE_BEFORE), r.get(NEURONS_AFTER)
    ax.set_title(f"{n0:g} alive neurons -> {n1:g} after pruning (kinks: red a > 0, blue a < 0)")
    ax.set_xlabel("x")
    ax.legend(frameon=False, fontsize=7)
    path = folder / "l2_one_dim_pruning.png"
    save(fig, path)
    return [path]


def _width_panel(
    ax,
    points,
    key: Quantity,
    style: str,
    label: str,
    color: str,
    by: Quantity,
    offset: float = 0.0,
) -> None:
    """Per-seed dots of `key` against the width, and a line through the value of the run
    with the smallest `by` per width (the best-of-seeds run)."""
    xs = [float(p.point.get("model.width", p.get(WIDTH))) for p in points]
    ys = [float(p.get(key)) - offset for p in points]
    sel = [float(p.get(by)) for p in points]
    ax.plot(xs, ys, "o", color=color, ms=3, alpha=0.6)
    best: dict[float, tuple[float, float]] = {}
    for x, y, b in zip(xs, ys, sel):
        if np.isfinite(b) and (x not in best or b < best[x][0]):
            best[x] = (b, y)
    w = sorted(best)
    ax.plot(w, [best[x][1] for x in w], style, color=color, lw=1.2, label=label)


def l2_width_plateau(record: RunRecord, folder: Path) -> list[Path]:
    """004 Fig 2: loss with regularizer (full line, best over seeds; a dot per seed) and the
    test data cost (dashed, of the best-loss run) against the width; one panel per
    `train.lam` of the grid. The bipartite experiment plots `loss / lam` with the derived
    wide optimum."""
    points = [p for p in record.points if p.status == "done"]
    if not points:
        return []
    lams = sorted({p.point.get("train.lam") for p in points}, key=lambda v: (v is None, v))
    fig, axes = plt.subplots(1, len(lams), figsize=(4.2 * len(lams), 3.2), squeeze=False)
    for ax, lam in zip(axes[0], lams):
        sel = [p for p in points if p.point.get("train.lam") == lam]
        if LOSS_OVER_LAM.name in sel[0].scalars:
            ref = float(sel[0].get(WIDE_OPTIMUM, 0.0))
            _width_panel(
                ax,
                sel,
                LOSS_OVER_LAM,
                "-",
                "best loss / lam - (N^2 - lam N (N-1))",
                "C0",
                LOSS_OVER_LAM,
                offset=ref,
            )
            ax.set_yscale("log")
            ax.set_ylabel(f"loss / lam - {ref:.4g}")
        else:
            _width_panel(ax, sel, LOSS, "-", "train loss (with L2), best seed", "C0", LOSS)
            _width_panel(ax, sel, TEST_COST, "--", "test data cost of that run", "C1", LOSS)
            ax.set_yscale("log")
            ax.set_ylabel("loss")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("width")
        if lam is not None:
            ax.set_title(f"lam = {lam:g}")
        ax.legend(frameon=False, fontsize=7)
    path = folder / "l2_width_plateau.png"
    save(fig, path)
    return [path]


def l2_forces(record: RunRecord, folder: Path) -> list[Path]:
    """004 Fig 1: per hidden layer, the data points (rows of `Z_l`, coloured by class) and
    the neurons (columns; grey: dead) in an uncentered 2-D PCA, with `-A_l` (green) and
    `-R_l` (red) arrows (table `views`)."""
    if not record.points:
        return []
    rows = record.points[0].tables.get("views", [])
    if not rows:
        return []
    layers = sorted({r["layer"] for r in rows})
    fig, axes = plt.subplots(2, len(layers), figsize=(4.0 * len(layers), 7.0), squeeze=False)
    for j, layer in enumerate(layers):
        for i, view in enumerate(("rows", "columns")):
            ax = axes[i, j]
            sel = [r for r in rows if r["layer"] == layer and r["view"] == view]
            x = np.array([r["x"] for r in sel])
            y = np.array([r["y"] for r in sel])
            lab = np.array([r["label"] for r in sel])
            span = max(np.ptp(x), np.ptp(y), 1e-12)
            force = np.array([[r["ax"], r["ay"], r["rx"], r["ry"]] for r in sel])
            scale = 0.15 * span / max(np.abs(force).max(), 1e-300)
            if view == "rows":
                for c in np.unique(lab):
                    ax.plot(x[lab == c], y[lab == c], "o", ms=3, label=f"digit {c}")
            else:
                ax.plot(x[lab == 1], y[lab == 1], "o", ms=3, color="k", label="neurons")
                ax.plot(x[lab == 0], y[lab == 0], "o", ms=2, color="0.7", label="dead")
            for col, color, label in ((0, "green", "-A"), (2, "red", "-R")):
                ax.quiver(
                    x,
                    y,
                    scale * force[:, col],
                    scale * force[:, col + 1],
                    color=color,
                    angles="xy",
                    scale_units="xy",
                    scale=1,
                    width=0.004,
                    label=label,
                )
            ax.axhline(0, color="0.85", lw=0.5)
            ax.axvline(0, color="0.85", lw=0.5)
            ax.set_title(f"layer {layer}: {'data points' if view == 'rows' else 'neurons'}")
            ax.legend(frameon=False, fontsize=6)
    path = folder / "l2_forces.png"
    save(fig, path)
    return [path]
