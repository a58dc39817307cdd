"""Figures of paper 000, Fig 2 (discretization schemes) and Fig 3 (path bounds)."""

from __future__ import annotations

from pathlib import Path

from bottlenecklab.experiments import PointResult, RunRecord
from bottlenecklab.measure import TEST_ERROR
from bottlenecklab.report._leaky_resnet import plot_weight_spectra
from bottlenecklab.report._style import plt, save

__all__ = ["discretization_spectra", "error_vs_depth", "path_bounds", "pca_paths"]

SCHEMES = ("equidistant", "irregular", "adaptive")


def _done(record: RunRecord) -> list[PointResult]:
    return [r for r in record.points if r.status == "done"]


def _largest_depth(record: RunRecord) -> list[PointResult]:
    """The points at the largest depth `L`, in scheme order."""
    pts = _done(record)
    if not pts:
        return []
    L = max(r.point["model.depth"] for r in pts)
    order = {s: i for i, s in enumerate(SCHEMES)}
    sel = [r for r in pts if r.point["model.depth"] == L]
    return sorted(sel, key=lambda r: order.get(r.point["model.schedule"], 9))


def error_vs_depth(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 2a: relative test error vs the number of layers `L`, one line per scheme."""
    pts = _done(record)
    if not pts:
        return []
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    for scheme, marker in zip(SCHEMES, "osD"):
        sel = sorted(
            (r for r in pts if r.point["model.schedule"] == scheme),
            key=lambda r: r.point["model.depth"],
        )
        if sel:
            ax.plot(
                [r.point["model.depth"] for r in sel],
                [r.value(TEST_ERROR) for r in sel],
                marker + "-",
                ms=4,
                label=scheme,
            )
    ax.set_xlabel("number of layers $L$")
    ax.set_ylabel(r"test error $C_{test} / d_{out}$")
    ax.legend(frameon=False)
    ax.set_title(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "error_vs_depth.png"
    save(fig, path)
    return [path]


def discretization_spectra(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 2b: top singular values of `W_l` over `p` with the steps `p_l` marked (grey),
    one panel per scheme at the largest `L`."""
    sel = _largest_depth(record)
    if not sel:
        return []
    fig, axes = plt.subplots(1, len(sel), figsize=(3.2 * len(sel), 2.8), squeeze=False)
    for ax, r in zip(axes[0], sel):
        plot_weight_spectra(ax, r)
        ax.set_title(f"{r.point['model.schedule']}, $L = {r.point['model.depth']}$")
        ax.set_xlabel("depth $p$")
    axes[0, 0].set_ylabel(r"singular values of $W_\ell$")
    path = folder / "discretization_spectra.png"
    save(fig, path)
    return [path]


def pca_paths(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 2c: 2-D PCA of the representation paths of a few samples (dots at every layer),
    one panel per scheme at the largest `L`."""
    sel = _largest_depth(record)
    if not sel:
        return []
    fig, axes = plt.subplots(1, len(sel), figsize=(3.2 * len(sel), 3.0), squeeze=False)
    for ax, r in zip(axes[0], sel):
        rows = r.tables.get("pca", [])  # {"layer", "sample", "x", "y"}
        for j in sorted({s["sample"] for s in rows}):
            path_j = sorted((s for s in rows if s["sample"] == j), key=lambda s: s["layer"])
            x = [s["x"] for s in path_j]
            y = [s["y"] for s in path_j]
            (line,) = ax.plot(x, y, lw=0.6, alpha=0.7)
            ax.plot(x, y, ".", ms=2.5, color=line.get_color())
            ax.plot(x[0], y[0], "o", ms=3, mfc="none", color="k", mew=0.5)
        ax.set_title(f"{r.point['model.schedule']}, $L = {r.point['model.depth']}$")
        ax.set_xlabel("PC 1")
    axes[0, 0].set_ylabel("PC 2")
    path = folder / "pca_paths.png"
    save(fig, path)
    return [path]


def path_bounds(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 3: path lengths (plain and in two kernel metrics), `max||B||`, `max||B^T S||`
    vs `L~` (left); both sides of Thm 4 (1) vs `L~` (right)."""
    pts = sorted(_done(record), key=lambda r: r.point["model.leak"])
    if not pts:
        return []
    leaks = [r.point["model.leak"] for r in pts]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    for key, label in (
        ("path_length_plain", r"path length $\sum_\ell \rho_\ell \|V_\ell\|_F$"),
        ("path_length", r"$\ell_\gamma$, $\gamma_\ell = \gamma_0 \|K_\ell\|$"),
        ("path_length_const", r"$\ell_\gamma$, $\gamma = 1/\tilde L$"),
        ("B_max", r"$\max_\ell \|B_\ell\|$"),
        ("BS_max", r"$\max_\ell \|B_\ell^T S_{\ell-1}\|$"),
    ):
        if all(key in r.scalars for r in pts):  # records before the plain length lack it
            ax0.semilogy(leaks, [r.scalars[key] for r in pts], "o-", ms=4, label=label)
    ax0.set_xlabel(r"effective depth $\tilde L$")
    ax0.legend(frameon=False)
    for key, label, style in (
        ("thm4_upper", r"upper $\gamma c^2$", "v--"),
        ("thm4_middle", r"$-\frac{2}{\tilde L}\mathcal{H} - \min_\ell$ COI$_\gamma$", "o-"),
        ("thm4_lower", r"lower $-(\ell_\gamma/\tilde L + \gamma c)^2$", "^--"),
        ("thm4_lower_corrected", r"lower, $\sqrt{\gamma} c$ form", "^:"),
    ):
        ax1.plot(leaks, [r.scalars[key] for r in pts], style, ms=4, label=label)
    ax1.axhline(0, color="k", lw=0.5)
    ax1.set_yscale("symlog", linthresh=1.0)
    ax1.set_xlabel(r"effective depth $\tilde L$")
    ax1.set_ylabel("Theorem 4 (1)")
    ax1.legend(frameon=False, fontsize=6)
    fig.suptitle(f"{record.name} ({record.meta.get('preset', '')})")
    path = folder / "path_bounds.png"
    save(fig, path)
    return [path]
