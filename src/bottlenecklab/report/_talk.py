"""Figures of paper 002's experiments (`talk/*`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import NullFormatter

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report._style import plt, save

__all__ = ["kernel_vs_depth"]


def _series(record: RunRecord, key: str, min_n: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rows = [
        (r.scalars["n_train"], r.scalars[key])
        for r in record.points
        if r.status == "done" and key in r.scalars and r.scalars["n_train"] >= min_n
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
        n, e = _series(record, f"gp_error_d{d}")
        _plot_fit(ax0, n, e, f"GP target, d = {d} (theory {-1 / d:.2f})", marker)
    ax0.set_title("Laplace kernel on its own GP target")
    n, e = _series(record, "kernel_test_error", cfg.net_min_n)
    _plot_fit(ax1, n, e, "kernel", "o")
    n, e = _series(record, "test_cost", cfg.net_min_n)
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
