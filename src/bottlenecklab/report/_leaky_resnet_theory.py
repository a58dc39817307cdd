"""Figures of paper 000's continuous-time and cost-of-identity experiments (no training)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report._style import plt, save

__all__ = ["coi_minima", "hamiltonian_flow"]


def hamiltonian_flow(record: RunRecord, folder: Path) -> list[Path]:
    """§1.5: relative drift of `H` along the generic path for each step count (table
    `drift`), and the largest drift vs the step `h` for both paths (table `refinement`),
    with reference slopes 4 (no kink) and 1 (with kinks)."""
    if not record.points:
        return []
    r = record.points[0]
    series = r.tables.get("drift", [])
    refinement = r.tables.get("refinement", [])
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.5, 3.2))
    kinked_steps = sorted({row["steps"] for row in series if row["path"] == "kinked"})
    cmap = plt.get_cmap("viridis")
    for i, n in enumerate(kinked_steps):
        sel = [row for row in series if row["path"] == "kinked" and row["steps"] == n]
        sel = [row for row in sel if row["p"] > 0]
        ax0.semilogy(
            [x["p"] for x in sel],
            [max(x["drift"], 1e-18) for x in sel],
            color=cmap(i / max(1, len(kinked_steps) - 1)),
            lw=1,
            label=f"{int(n)} steps",
        )
    names = {"smooth": "no kink", "kinked": "with kinks"}
    for path, marker, slope in (("smooth", "o", 4), ("kinked", "s", 1)):
        rows = sorted((x for x in refinement if x["path"] == path), key=lambda x: x["steps"])
        if not rows:
            continue
        h = np.array([1.0 / x["steps"] for x in rows])
        drift = np.array([max(x["drift"], 1e-18) for x in rows])
        ax1.loglog(h, drift, marker + "-", label=names[path])
        ax1.loglog(h, drift[-1] * (h / h[-1]) ** slope, "k:", lw=0.8)
        ax1.annotate(f"slope {slope}", (h[0], drift[-1] * (h[0] / h[-1]) ** slope), fontsize=7)
    located = [x for x in refinement if x["path"] == "located"]
    if located:
        ax1.loglog(
            [1.0 / x["steps"] for x in located],
            [max(x["drift"], 1e-18) for x in located],
            "*",
            ms=9,
            label="with kinks, crossings located",
        )
    ax0.set_xlabel("depth $p$")
    ax0.set_ylabel(r"$|\mathcal{H}_p - \mathcal{H}_0| / |\mathcal{H}_0|$ (with kinks)")
    ax0.legend(frameon=False, fontsize=6)
    ax1.xaxis.set_minor_formatter(NullFormatter())
    ax1.set_xlabel("RK4 step $h$")
    ax1.set_ylabel(r"max. relative drift of $\mathcal{H}$")
    ax1.legend(frameon=False, fontsize=7)
    fig.suptitle(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "hamiltonian_flow.png"
    save(fig, path)
    return [path]


def coi_minima(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 1: bias-free COI vs stable rank of random matrices (table `prop1`); Prop 2:
    relaxed COI along the minimization from random starts (table `coi_history`), with the
    numerical rank of each end point (table `coi_minima`) as a dot."""
    if not record.points:
        return []
    r = record.points[0]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    names = {
        "gaussian": "gaussian",
        "sparse": "sparse",
        "low_rank": "low rank",
        "nonneg_low_rank": "non-neg. low rank",
    }
    pts = [x for x in r.tables.get("prop1", []) if x["finite"]]
    for kind, name in names.items():
        sel = [x for x in pts if x["kind"] == kind]
        ax0.scatter([x["stable_rank"] for x in sel], [x["coi"] for x in sel], s=6, label=name)
    if pts:
        lo = min(x["stable_rank"] for x in pts)
        hi = max(x["stable_rank"] for x in pts)
        ax0.loglog([lo, hi], [lo, hi], "k:", lw=0.8, label="COI = stable rank")
    ax0.set_xlabel(r"stable rank $\|A\|_*^2 / \|A\|_F^2$")
    ax0.set_ylabel(r"bias-free COI $\|A\|^2_{\bar K}$")
    ax0.legend(frameon=False, fontsize=6)
    history = r.tables.get("coi_history", [])
    ends = {x["start"]: x for x in r.tables.get("coi_minima", [])}
    for s in sorted({x["start"] for x in history}):
        sel = [x for x in history if x["start"] == s]
        (line,) = ax1.loglog([x["step"] for x in sel], [x["coi"] for x in sel], lw=1)
        if s in ends:
            ax1.plot(sel[-1]["step"], ends[s]["rank"], "o", color=line.get_color(), ms=4)
    ax1.set_xlabel("Adam step")
    ax1.set_ylabel(r"relaxed COI $\|A\|^2_{K+\gamma I}$ (dots: rank)")
    for k in range(1, int(max((x["rank"] for x in ends.values()), default=1)) + 2):
        ax1.axhline(k, color="0.85", lw=0.5, zorder=0)
    fig.suptitle(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "coi_minima.png"
    save(fig, path)
    return [path]
