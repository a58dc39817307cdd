"""Figures of papers 001/002 (representation cost, bottleneck rank and depth)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bottlenecklab.experiments import RunRecord
from bottlenecklab.experiments.linear._representation import REMAINDER_CONSTANT
from bottlenecklab.measure import (
    COR8_BOUND,
    DEPTH,
    MIDDLE_RANK,
    NORM_SQ,
    TRAIN_COST,
    rank_group_fits,
    spectra_by_layer,
)
from bottlenecklab.report._style import plt, save

__all__ = ["bottleneck_bounds", "depth_spectra", "rank_vs_depth", "representation_cost"]


def _done(record: RunRecord):
    return [r for r in record.points if r.status == "done"]


def representation_cost(record: RunRecord, folder: Path) -> list[Path]:
    """Deep linear remainder `|R(A;L) - (L R0 + R1 + R2/L)|` vs `L` (slope -2 reference) and
    the Example 20 excess `||theta||^2 - 3L` vs `L` (slope `1 - 2 gamma` reference)."""
    pts = _done(record)
    if not pts:
        return []
    r = pts[0]
    rem, ex = r.tables.get("remainder", []), r.tables.get("example20", [])
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.5, 3.2))
    L = np.array([x["depth"] for x in rem], dtype=float)
    y = np.abs([x["remainder"] for x in rem])
    ax0.loglog(L, y, "o-", ms=4, label="remainder")
    const = r.get(REMAINDER_CONSTANT, np.nan)
    ax0.loglog(L, np.abs(const) / L**2, "k:", label=r"$\frac{4}{3}\sum(\log s_i)^3 / L^2$")
    ax0.set_xlabel("depth $L$")
    ax0.set_ylabel(r"$|R(A;L) - (LR^{(0)} + R^{(1)} + R^{(2)}/L)|$")
    ax0.legend(frameon=False)
    Lx = np.array([x["depth"] for x in ex], dtype=float)
    ex_y = np.array([x["excess"] for x in ex])
    ax1.loglog(Lx, ex_y, "s-", ms=4, label=r"$\|\theta\|^2 - 3L$")
    gamma = record.config.gamma
    ax1.loglog(Lx, 12 * Lx ** (1 - 2 * gamma), "k:", label=rf"$12 L^{{{1 - 2 * gamma:g}}}$")
    ax1.set_xlabel("depth $L$")
    ax1.legend(frameon=False)
    ax1.set_title("Example 20")
    path = folder / "representation_cost.png"
    save(fig, path)
    return [path]


def rank_vs_depth(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 1a: `||theta||^2` vs `L`, colour = middle rank, filled marker = fits (train cost
    below the threshold), with the fitted line of each rank group."""
    pts = _done(record)
    if not pts:
        return []
    thr = record.config.fit_threshold
    ranks = sorted({int(r.value(MIDDLE_RANK)) for r in pts})
    cmap = plt.get_cmap("viridis")
    colour = {k: cmap(i / max(1, len(ranks) - 1)) for i, k in enumerate(ranks)}
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    for r in pts:
        k, fit = int(r.value(MIDDLE_RANK)), r.value(TRAIN_COST) < thr
        ax.plot(
            r.value(DEPTH),
            r.value(NORM_SQ),
            "o" if fit else "x",
            color=colour[k],
            mfc=colour[k] if fit else "none",
        )
    for k in ranks:  # legend entries: one per middle rank (the colour)
        ax.plot([], [], "o", color=colour[k], label=f"middle rank {k}")
    fitting = [r for r in pts if r.value(TRAIN_COST) < thr]
    groups = rank_group_fits(
        [r.value(DEPTH) for r in fitting],
        [r.value(NORM_SQ) for r in fitting],
        [int(r.value(MIDDLE_RANK)) for r in fitting],
    )
    for g in groups:
        if np.isfinite(g["slope"]):
            sel = [r.value(DEPTH) for r in fitting if r.value(MIDDLE_RANK) == g["rank"]]
            x = np.array([min(sel), max(sel)])
            ax.plot(
                x,
                g["slope"] * x + g["intercept"],
                "-",
                color=colour[int(g["rank"])],
                lw=1,
                label=f"fit, rank {g['rank']:g}: slope {g['slope']:.2f}",
            )
    ax.set_xlabel("depth $L$")
    ax.set_ylabel(r"$\|\theta\|^2$")
    ax.legend(frameon=False, fontsize=7)
    ax.set_title("o: fits, x: does not fit", fontsize=8)
    path = folder / "rank_vs_depth.png"
    save(fig, path)
    return [path]


def depth_spectra(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 1b: the singular values of every `W_l` at 4 depths (first seed of each)."""
    pts = _done(record)
    if not pts:
        return []
    by_depth: dict[float, object] = {}
    for r in sorted(pts, key=lambda r: (r.value(DEPTH), r.point.get("seed", 0))):
        by_depth.setdefault(r.value(DEPTH), r)
    depths = sorted(by_depth)
    pick = [depths[i] for i in np.unique(np.linspace(0, len(depths) - 1, 4).round().astype(int))]
    fig, axes = plt.subplots(1, len(pick), figsize=(3.0 * len(pick), 2.8), squeeze=False)
    for ax, L in zip(axes[0], pick):
        r = by_depth[L]
        for l, vals in spectra_by_layer(r.spectra, "W").items():
            ax.semilogy([l] * len(vals), np.maximum(vals, 1e-6), "_", color="C0", ms=8)
        ax.axhline(0.1, color="k", lw=0.6, ls=":")
        ax.set_title(f"L = {L:g} (middle rank {r.value(MIDDLE_RANK):g})", fontsize=8)
        ax.set_xlabel("layer $\\ell$")
    axes[0][0].set_ylabel(r"singular values of $W_\ell$")
    path = folder / "depth_spectra.png"
    save(fig, path)
    return [path]


def bottleneck_bounds(record: RunRecord, folder: Path) -> list[Path]:
    """Cor 8: `s_{k+1}(a~_l / sqrt N)` per layer of each trained net (solid), of the same
    net at its initialization (dashed), with its bound (dotted)."""
    pts = _done(record)
    if not pts:
        return []
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    for i, r in enumerate(sorted(pts, key=lambda r: r.value(DEPTH))):
        rows = [x for x in r.layers if "s_next" in x]
        L = r.value(DEPTH)
        ax.semilogy(
            [x["layer"] / L for x in rows],
            [max(x["s_next"], 1e-8) for x in rows],
            "o-",
            ms=3,
            color=f"C{i}",
            label=f"L = {L:g}",
        )
        init = [x for x in rows if "s_next_init" in x]
        if init:
            ax.semilogy(
                [x["layer"] / L for x in init],
                [max(x["s_next_init"], 1e-8) for x in init],
                "--",
                lw=0.8,
                color=f"C{i}",
            )
        bound = r.get(COR8_BOUND)
        if np.isfinite(bound):
            ax.axhline(bound, color=f"C{i}", ls=":", lw=0.8)
    ax.set_xlabel(r"$\ell / L$")
    ax.set_ylabel(r"$s_{k+1}(\tilde\alpha_\ell / \sqrt{N})$ (dashed: init; dotted: bound)")
    ax.legend(frameon=False, fontsize=7)
    path = folder / "bottleneck_bounds.png"
    save(fig, path)
    return [path]
