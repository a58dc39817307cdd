"""The convergence figure every training experiment gets: its loss and gradient norm over
the steps of each grid point (from `metrics.parquet`), the evidence behind its claims'
convergence gates."""

from __future__ import annotations

from pathlib import Path

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report._style import plt, save

__all__ = ["training_curves"]


def training_curves(record: RunRecord, folder: Path) -> list[Path]:
    """Loss and gradient norm vs step, one line per grid point (log scales)."""
    rows = record.tables.get("metrics", [])
    if not rows:
        return []
    by_run: dict[str, list[dict]] = {}
    for r in rows:
        by_run.setdefault(r["run_id"], []).append(r)
    labels = {
        p.id: ", ".join(f"{k.split('.')[-1]}={v}" for k, v in p.point.items())
        for p in record.points
    }
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.0))
    cmap = plt.get_cmap("viridis")
    for i, (rid, series) in enumerate(sorted(by_run.items())):
        series = sorted(series, key=lambda r: float(r["step"]))
        steps = [float(r["step"]) for r in series]
        color = cmap(i / max(1, len(by_run) - 1))
        for ax, key in zip(axes, ("loss", "grad_norm")):
            ys = [float(r[key]) if r.get(key) is not None else float("nan") for r in series]
            ax.plot(steps, ys, color=color, lw=1, label=labels.get(rid, rid[:6]))
    for ax, title in zip(axes, ("regularized loss", "gradient norm")):
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_title(title, fontsize=9)
    if 1 < len(by_run) <= 12 and any(labels.get(rid) for rid in by_run):
        axes[0].legend(fontsize=6, frameon=False)
    path = folder / "training_curves.png"
    save(fig, path)
    return [path]
