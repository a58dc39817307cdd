"""Matplotlib set-up shared by every figure: headless backend, paper-ready defaults."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from bottlenecklab.files import atomic_writer  # noqa: E402

__all__ = ["plt", "save"]

plt.rcParams.update(
    {
        "figure.dpi": 100,
        "savefig.dpi": 200,
        "font.size": 9,
        "axes.titlesize": 9,
        "axes.labelsize": 9,
        "legend.fontsize": 8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "savefig.bbox": "tight",
    }
)


def save(fig, path) -> None:
    """Write `fig` as PNG and close it."""
    try:
        with atomic_writer(path, "wb") as f:
            fig.savefig(f, format=Path(path).suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)
