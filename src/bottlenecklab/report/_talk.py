"""Figures of paper 002's experiments (`talk/*`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from bottlenecklab.experiments import RunRecord
from bottlenecklab.experiments.fcnn._symmetry import (
    PCA_CROSSINGS,
    PCA_LAYER,
    RANDOM_CROSSINGS,
    REG_LOSS,
    ROTATION_RATIO_LAYER2,
)
from bottlenecklab.experiments.talk._classify import BOX_X0, BOX_X1, BOX_Y0, BOX_Y1
from bottlenecklab.experiments.talk._rates import GP_ERROR, KERNEL_TEST_ERROR
from bottlenecklab.measure import MIDDLE_RANK, N_TRAIN, TEST_COST, Quantity, spectra_by_layer
from bottlenecklab.measure._decision import TRIPOINTS
from bottlenecklab.report._style import plt, save

__all__ = [
    "kernel_vs_depth",
    "newtonian_modes",
    "newtonian_rollout",
    "symmetry_dynamics",
    "tripoints",
]


def _series(
    record: RunRecord, quantity: Quantity, min_n: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """`(N, quantity)` of the finished points with `N >= min_n`."""
    rows = [
        (r.value(N_TRAIN), r.value(quantity))
        for r in record.points
        if r.status == "done" and quantity.name in r.scalars and r.value(N_TRAIN) >= min_n
    ]
    if not rows:
        return np.zeros(0), np.zeros(0)
    n, e = np.array(rows).T
    return n, e


def _plot_fit(ax, n: np.ndarray, e: np.ndarray, label: str, marker: str) -> None:
    """Points (every seed), the geometric mean per `N`, and the fitted power law."""
    keep = (n > 0) & (e > 0)
    n, e = n[keep], e[keep]
    if n.size == 0:
        return
    (line,) = ax.loglog(n, e, marker, alpha=0.35, ms=3)
    sizes = np.unique(n)
    means = [np.exp(np.mean(np.log(e[n == s]))) for s in sizes]
    label_fit = label
    if sizes.size >= 2:
        slope, icpt = np.polyfit(np.log(n), np.log(e), 1)
        ax.loglog(sizes, np.exp(icpt) * sizes**slope, "--", color=line.get_color(), lw=0.8)
        label_fit = f"{label}: slope {slope:.2f}"
    ax.loglog(sizes, means, marker + "-", color=line.get_color(), label=label_fit)


def kernel_vs_depth(record: RunRecord, folder: Path) -> list[Path]:
    """Test error vs `N` (log-log) with fitted slopes: the kernel on its own GP target
    (`d = 1, 2`, reference `N^{-1/d}`), and kernel vs deep net on the composition."""
    if not record.points:
        return []
    cfg = record.config
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.5, 3.2))
    for d, marker in zip(cfg.gp_dims, "os^v"):
        n, e = _series(record, GP_ERROR.at(d))
        _plot_fit(ax0, n, e, f"GP target, d = {d} (theory {-1 / d:.2f})", marker)
    ax0.set_title("Laplace kernel on its own GP target")
    n, e = _series(record, KERNEL_TEST_ERROR, cfg.net_min_n)
    _plot_fit(ax1, n, e, "kernel", "o")
    n, e = _series(record, TEST_COST, cfg.net_min_n)
    _plot_fit(ax1, n, e, f"deep net (L = {cfg.model.depth})", "s")
    ax1.set_title(f"h o g on [0,1]^{cfg.task.dim} (inner dim 1)")
    for ax in (ax0, ax1):
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("training size N")
        ax.set_ylabel("test error")
        ax.legend(frameon=False, fontsize=6)
    path = folder / "kernel_vs_depth.png"
    save(fig, path)
    return [path]


def tripoints(record: RunRecord, folder: Path) -> list[Path]:
    """Decision maps (rows: architecture, columns: seed) with the tripoints of the
    stored map's resolution marked (red crosses); titles give the middle rank and the
    tripoint counts at every resolution."""
    cfg = record.config
    runs = [r for r in record.points if r.status == "done" and r.tables.get("decision_map")]
    if not runs:
        return []
    archs = [a for a in cfg.archs if any(r.point.get("arch") == a for r in runs)]
    seeds = sorted({r.point.get("seed", 0) for r in runs})
    fig, axes = plt.subplots(
        len(archs), len(seeds), figsize=(2.6 * len(seeds), 2.6 * len(archs)), squeeze=False
    )
    for r in runs:
        ax = axes[archs.index(r.point["arch"])][seeds.index(r.point.get("seed", 0))]
        rows = sorted(r.tables["decision_map"], key=lambda x: x["row"])
        labels = np.array([[int(c) for c in x["labels"]] for x in rows])  # [R, R], [i, j]
        extent = tuple(r.value(q) for q in (BOX_X0, BOX_X1, BOX_Y0, BOX_Y1))
        ax.imshow(labels.T, origin="lower", extent=extent, cmap="Pastel1", vmin=0, vmax=8)
        pts = [p for p in r.tables.get("tripoints", []) if p["resolution"] == cfg.map_resolution]
        if pts:
            ax.plot([p["x"] for p in pts], [p["y"] for p in pts], "rx", ms=6, mew=1.5)
        counts = ", ".join(f"{int(r.get(TRIPOINTS.at(n), -1))}@{n}" for n in cfg.resolutions)
        depth = (cfg.deep if r.point["arch"] == "deep" else cfg.shallow).depth
        ax.set_title(
            f"{r.point['arch']} L={depth}, seed {r.point.get('seed', 0)}\n"
            f"mid rank {int(r.value(MIDDLE_RANK))}, tripoints {counts}",
            fontsize=7,
        )
        ax.set_xticks([])
        ax.set_yticks([])
    path = folder / "tripoints.png"
    save(fig, path)
    return [path]


def symmetry_dynamics(record: RunRecord, folder: Path) -> list[Path]:
    """Paper 001 Fig 2: top singular values of every `W_l` (largest gap marked), the PCA
    paths at `l = ceil(0.24 L)`, and the layer-2 distance map on a plane perpendicular
    to `w`; of the lowest-regularized-loss seed (the net the claims' reported numbers
    describe)."""
    done = [p for p in record.points if p.status == "done"]
    if not done:
        return []
    r = min(done, key=lambda p: p.get(REG_LOSS, math.inf))
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    spec = spectra_by_layer(r.spectra, "W")  # layer -> [s_1, s_2, ...]
    layers = list(spec)
    for k in range(1, 7):
        vals = [spec[l][k - 1] if k <= len(spec[l]) else np.nan for l in layers]
        axes[0].semilogy(layers, vals, "o-", ms=3, lw=0.8, label=f"$s_{k}$")
    for row in r.layers:
        if row["gap_index"] == 2 and row["gap"] >= record.config.min_gap:
            axes[0].axvline(row["layer"], color="0.85", lw=4, zorder=0)
    axes[0].set_xlabel("layer $\\ell$ (shaded: largest gap at i = 2)")
    axes[0].set_ylabel("singular values of $W_\\ell$")
    axes[0].legend(frameon=False, fontsize=6, ncol=2)
    pca = r.tables.get("pca_paths", [])
    for p in sorted({x["path"] for x in pca}):
        pts = sorted((x for x in pca if x["path"] == p), key=lambda x: x["t"])
        axes[1].plot([x["x"] for x in pts], [x["y"] for x in pts], "-", lw=0.6)
        axes[1].plot(pts[0]["x"], pts[0]["y"], "k.", ms=2)
    axes[1].set_title(
        f"PCA of $\\alpha_{{{int(r.value(PCA_LAYER))}}}(v(t))$: {int(r.value(PCA_CROSSINGS))} "
        f"crossings (random 2-D: {int(r.value(RANDOM_CROSSINGS))})"
    )
    heat = r.tables.get("heat_map", [])
    if heat:
        a = np.array(sorted({x["a"] for x in heat}))
        grid = np.full((len(a), len(a)), np.nan)
        index = {v: i for i, v in enumerate(a)}
        for x in heat:
            grid[index[x["a"]], index[x["b"]]] = x["distance"]
        im = axes[2].imshow(grid.T, origin="lower", extent=(a[0], a[-1], a[0], a[-1]))
        fig.colorbar(im, ax=axes[2], shrink=0.8)
        axes[2].set_title(
            f"$\\|\\alpha_2(x_0) - \\alpha_2(x)\\|$ on a plane $\\perp w$ "
            f"(ratio {r.value(ROTATION_RATIO_LAYER2):.2f})"
        )
    path = folder / "symmetry_dynamics.png"
    save(fig, path)
    return [path]


def newtonian_rollout(record: RunRecord, folder: Path) -> list[Path]:
    """Rows: truth and prediction of each rollout sample; columns: the predicted steps."""
    if not record.points or record.points[0].status != "done":
        return []
    rows = record.points[0].tables.get("rollout", [])
    if not rows:
        return []
    n = record.config.task.size
    samples = sorted({r["sample"] for r in rows})
    steps = sorted({r["step"] for r in rows})
    fig, axes = plt.subplots(
        2 * len(samples), len(steps), figsize=(1.1 * len(steps), 2.2 * len(samples)), squeeze=False
    )
    for r in rows:
        frame = np.array([float(x) for x in r["pixels"].split(",")]).reshape(n, n)
        row = 2 * samples.index(r["sample"]) + (r["kind"] == "prediction")
        ax = axes[row][steps.index(r["step"])]
        ax.imshow(frame, cmap="magma")
        ax.set_xticks([])
        ax.set_yticks([])
        if steps.index(r["step"]) == 0:
            ax.set_ylabel(r["kind"], fontsize=6)
        if row == 0:
            ax.set_title(f"t + {r['step'] + 1}", fontsize=7)
    path = folder / "newtonian_rollout.png"
    save(fig, path)
    return [path]


def newtonian_modes(record: RunRecord, folder: Path) -> list[Path]:
    """`s_{omega, i}` of every layer (sorted), coloured by the order `|omega|`."""
    if not record.points or record.points[0].status != "done":
        return []
    spec = record.points[0].spectra
    if not spec:
        return []
    layers = sorted({r["layer"] for r in spec})
    orders = sorted({r["order"] for r in spec})
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(1, len(layers), figsize=(1.6 * len(layers), 2.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, l in zip(axes, layers):
        vals = sorted((r for r in spec if r["layer"] == l), key=lambda r: -r["value"])
        top = max(vals[0]["value"], 1e-300)
        ax.scatter(
            range(len(vals)),
            [r["value"] / top for r in vals],
            c=[cmap(r["order"] / max(orders)) for r in vals],
            s=4,
        )
        ax.axhline(record.config.mode_rel, color="0.6", lw=0.6, ls=":")
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_title(f"layer {l}", fontsize=7)
        ax.set_xlabel("rank of $s_{\\omega,i}$", fontsize=6)
    axes[0].set_ylabel("$s_{\\omega,i}$ / largest (colour: order $|\\omega|$)")
    path = folder / "newtonian_modes.png"
    save(fig, path)
    return [path]
