"""Figures of paper 000's continuous-time and cost-of-identity experiments (no training)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report._style import plt, save

__all__ = ["coi_minima", "hamiltonian_flow"]


def hamiltonian_flow(record: RunRecord, folder: Path) -> list[Path]:
    """§1.5: relative drift of `H` along the generic path for each step count, and the
    largest drift vs the step `h` for both paths (reference slopes 4 and 1)."""
    if not record.points:
        return []
    r = record.points[0]
    rows = r.layers
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    names = {0.0: "no kink", 1.0: "with kinks"}
    for case, marker in ((0.0, "o"), (1.0, "s")):
        steps = sorted({row["steps"] for row in rows if row["case"] == case})
        if case == 1.0:
            cmap = plt.get_cmap("viridis")
            for i, n in enumerate(steps):
                sel = [
                    row
                    for row in rows
                    if row["case"] == case and row["steps"] == n and row["p"] > 0
                ]
                ax0.semilogy(
                    [x["p"] for x in sel],
                    [max(x["drift"], 1e-18) for x in sel],
                    color=cmap(i / max(1, len(steps) - 1)),
                    lw=1,
                    label=f"{int(n)} steps",
                )
        h = np.array([1.0 / n for n in steps])
        drift = np.array(
            [
                max(row["drift"] for row in rows if row["steps"] == n and row["case"] == case)
                for n in steps
            ]
        )
        ax1.loglog(h, drift, marker + "-", label=names[case])
        slope = 4 if case == 0.0 else 1
        ax1.loglog(h, drift[-1] * (h / h[-1]) ** slope, "k:", lw=0.8)
        ax1.annotate(f"slope {slope}", (h[0], drift[-1] * (h[0] / h[-1]) ** slope), fontsize=7)
    ax0.set_xlabel("depth $p$")
    ax0.set_ylabel(r"$|\mathcal{H}_p - \mathcal{H}_0| / |\mathcal{H}_0|$ (with kinks)")
    ax0.legend(frameon=False, fontsize=6)
    ax1.xaxis.set_minor_formatter(NullFormatter())
    ax1.set_xlabel("RK4 step $h$")
    ax1.set_ylabel(r"$\max_p$ relative drift of $\mathcal{H}$")
    ax1.legend(frameon=False)
    fig.suptitle(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "hamiltonian_flow.png"
    save(fig, path)
    return [path]


def coi_minima(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 1: bias-free COI vs stable rank of random matrices; Prop 2: relaxed COI along
    the minimization from random starts, with the numerical rank of each end point."""
    if not record.points:
        return []
    r = record.points[0]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    kinds = ("gaussian", "sparse", "low rank", "non-neg. low rank")
    pts = [s for s in r.spectra if s.get("matrix") == "prop1"]
    for k, name in enumerate(kinds):
        sel = [s for s in pts if s["layer"] == k]
        ax0.scatter([s["bound"] for s in sel], [s["value"] for s in sel], s=6, label=name)
    if pts:
        lo = min(s["bound"] for s in pts)
        hi = max(max(s["value"] for s in pts), max(s["bound"] for s in pts))
        ax0.loglog([lo, hi], [lo, hi], "k:", lw=0.8, label="COI = stable rank")
    ax0.set_xlabel(r"stable rank $\|A\|_*^2 / \|A\|_F^2$")
    ax0.set_ylabel(r"bias-free COI $\|A\|^2_{\bar K}$")
    ax0.legend(frameon=False, fontsize=6)
    starts = sorted({row["start"] for row in r.layers})
    for s in starts:
        sel = [row for row in r.layers if row["start"] == s and row["step"] > 0]
        (line,) = ax1.loglog([x["step"] for x in sel], [x["coi"] for x in sel], lw=1)
        end = [row for row in r.layers if row["start"] == s and row["step"] < 0]
        if end:
            ax1.plot(sel[-1]["step"], end[0]["rank"], "o", color=line.get_color(), ms=4)
    ax1.set_xlabel("Adam step")
    ax1.set_ylabel(r"relaxed COI $\|A\|^2_{K+\gamma I}$ (dots: rank)")
    ranks = [row["rank"] for row in r.layers if row.get("rank") is not None]
    for k in range(1, int(max(ranks, default=1)) + 2):
        ax1.axhline(k, color="0.85", lw=0.5, zorder=0)
    fig.suptitle(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "coi_minima.png"
    save(fig, path)
    return [path]
