"""Figures of paper 000 (leaky ResNets)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bottlenecklab.experiments import PointResult, RunRecord
from bottlenecklab.measure import COI_GAMMA_MIN, K_STAR, layer_series, spectra_by_layer
from bottlenecklab.report._style import plt, save

__all__ = ["hamiltonian_vs_leak", "layer_portrait", "plot_weight_spectra"]


def _done(record: RunRecord):
    return sorted(
        (r for r in record.points if r.status == "done"), key=lambda r: r.point["model.leak"]
    )


def hamiltonian_vs_leak(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 1a: `-(2/L~)H`, `-(2/L~)H_gamma` (median, min-max bars) and `min COI` vs `L~`."""
    pts = _done(record)
    if not pts:
        return []
    leaks = np.array([r.point["model.leak"] for r in pts])
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    for name, label, off in (
        ("rank_H", r"$-\frac{2}{\tilde L}\mathcal{H}$", -0.08),
        ("rank_H_gamma", r"$-\frac{2}{\tilde L}\mathcal{H}_\gamma$", 0.08),
    ):
        med = np.array([r.scalars[f"{name}_median"] for r in pts])
        lo = np.array([r.scalars[f"{name}_min"] for r in pts])
        hi = np.array([r.scalars[f"{name}_max"] for r in pts])
        x = leaks * (1 + off / 4)
        ax.errorbar(x, med, yerr=[med - lo, hi - med], marker="o", ms=4, capsize=3, label=label)
    coi = np.array([r.value(COI_GAMMA_MIN) for r in pts])
    ax.plot(leaks, coi, "s--", ms=4, label=r"$\min_\ell$ COI$_\gamma$")
    k = pts[0].scalars.get(K_STAR.name)
    if k is not None:
        ax.axhline(k, color="k", lw=0.8, ls=":", label=f"$k^* = {k:g}$")
    ax.set_xlabel(r"effective depth $\tilde L$")
    ax.set_ylabel("rank estimate")
    top = max(float(np.nanmax(coi)), k or 0) + 1
    ax.set_ylim(min(-0.5, float(np.nanmin([r.scalars["rank_H_min"] for r in pts])) - 0.5), top)
    ax.legend(frameon=False, loc="lower right")
    ax.set_title(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "hamiltonian_vs_leak.png"
    save(fig, path)
    return [path]


def plot_weight_spectra(ax, r: PointResult) -> None:
    """Top singular values of `W_l` over `p` (one line per rank), grey lines at every `p_l`."""
    p = np.array([row["p"] for row in r.layers])
    sv = spectra_by_layer(r.spectra, "W")  # layer -> [s_1, s_2, ...]
    for k in range(max((len(s) for s in sv.values()), default=0)):
        layers = [l for l, s in sv.items() if k < len(s)]
        ax.plot(p[np.array(layers) - 1], [sv[l][k] for l in layers], lw=1)
    for x in p:
        ax.axvline(x, color="0.85", lw=0.5, zorder=0)


def layer_portrait(record: RunRecord, folder: Path, columns: int = 3) -> list[Path]:
    """Fig 1b-d: top-10 singular values of `W_l` vs `p` (grey lines at `p_l`) above the
    rescaled energies vs `p`, for up to `columns` trained networks."""
    pts = _done(record)
    if not pts:
        return []
    idx = np.unique(np.linspace(0, len(pts) - 1, min(columns, len(pts))).round().astype(int))
    chosen = [pts[i] for i in idx]
    fig, axes = plt.subplots(
        2, len(chosen), figsize=(3.2 * len(chosen), 4.6), squeeze=False, sharex="col"
    )
    for j, r in enumerate(chosen):
        leak = r.point["model.leak"]
        top, bot = axes[0, j], axes[1, j]
        plot_weight_spectra(top, r)
        top.set_title(rf"$\tilde L = {leak:g}$")
        top.set_ylabel(r"singular values of $W_\ell$" if j == 0 else "")
        # Each energy at its own depth: layer l's H, kinetic and COI_gamma are quantities of
        # its input A_{l-1}, so they are drawn at p_{l-1} (`measure.layer_series`).
        col = {}
        for name, label, scale in (
            ("rank_H", r"$-\frac{2}{\tilde L}\mathcal{H}$", 1.0),
            ("rank_H_gamma", r"$-\frac{2}{\tilde L}\mathcal{H}_\gamma$", 1.0),
            ("coi_gamma", r"COI$_\gamma$", 1.0),
            ("kinetic", r"$\frac{2}{\tilde L}$ kinetic", 2.0 / leak),
        ):
            at, col[name] = layer_series(r.layers, name)
            bot.plot(at, scale * col[name], label=label)
        k = r.scalars.get(K_STAR.name)
        if k is not None:
            bot.axhline(k, color="k", lw=0.8, ls=":")
        hi = np.nanpercentile(np.concatenate([col["coi_gamma"], col["rank_H"]]), 90)
        bot.set_ylim(min(-1.0, float(np.nanmin(col["rank_H"]))), max(2.0 * (k or 1), hi * 1.2))
        bot.set_xlabel("depth $p$")
        if j == 0:
            bot.legend(frameon=False, fontsize=7)
    path = folder / "layer_portrait.png"
    save(fig, path)
    return [path]
