"""Figures and the HTML page of a bottleneck probe (`bottlenecklab.probe`): a rank-vs-depth
strip, the spectra per layer, the Jacobian spectrum; `report.html` in the experiment
report's style, with `layers.parquet` and `summary.json` beside it.

Imports nothing of `experiments` (the probe may use it; import-linter contract)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from bottlenecklab.files import atomic_write, atomic_writer
from bottlenecklab.report._style import plt, save

__all__ = ["probe_figures", "probe_report"]

FIGURES = {
    "rank_vs_depth": "numerical rank (centred) and stable rank of every layer; the bottleneck "
    "layers are marked",
    "spectra": "top singular values of each representation (normalized by the largest)",
    "weight_spectra": "top singular values of the weight feeding each layer",
    "jacobian_spectrum": "median singular values of the input-output Jacobian over the points",
}


def _rank_vs_depth(table: pd.DataFrame, summary: dict[str, Any], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(table) + 2), 3.2))
    x = table["layer_id"].to_numpy()
    ax.plot(x, table["rank_centered"], "o-", label="rank (centred)")
    ax.plot(x, table["stable_rank"], "s--", ms=3, label="stable rank")
    bn = table[table["bottleneck"]]
    ax.scatter(
        bn["layer_id"],
        bn["rank_centered"],
        s=120,
        facecolors="none",
        edgecolors="C3",
        label=f"bottleneck (rank {summary['bottleneck_rank']})",
        zorder=3,
    )
    ax.set_xticks(x, table["name"], rotation=60, ha="right", fontsize=7)
    ax.set_xlabel("layer")
    ax.set_ylabel("rank")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"{summary['model']}: rank vs depth ({summary['n_samples']} samples)")
    save(fig, path)


def _spectra(table: pd.DataFrame, column: str, title: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    cmap = plt.get_cmap("viridis")
    n = max(len(table) - 1, 1)
    for i, (name, sv) in enumerate(zip(table["name"], table[column])):
        sv = np.asarray(sv, dtype=float)
        if sv.size and sv[0] > 0:
            ax.semilogy(
                np.arange(1, sv.size + 1),
                sv / sv[0],
                "o-",
                ms=2,
                color=cmap(i / n),
                label=name if len(table) <= 12 else None,
            )
    ax.set_xlabel("index i")
    ax.set_ylabel("s_i / s_1")
    ax.set_title(title)
    if len(table) <= 12:
        ax.legend(fontsize=6, ncol=2)
    save(fig, path)


def _jacobian(summary: dict[str, Any], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sv = np.asarray(summary.get("jacobian_sv_median") or [], dtype=float)
    if sv.size:
        ax.semilogy(np.arange(1, sv.size + 1), np.maximum(sv, 1e-300), "o-", ms=3)
    ax.set_xlabel("index i")
    ax.set_ylabel("median s_i(J f(x))")
    ax.set_title(
        f"Jacobian spectrum (rank {summary['jacobian_rank']}, {summary['jacobian_points']} points)"
    )
    save(fig, path)


def probe_figures(table: pd.DataFrame, summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """The probe's figures as `out_dir/<name>.png`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / f"{name}.png" for name in FIGURES}
    _rank_vs_depth(table, summary, paths["rank_vs_depth"])
    _spectra(table, "top_sv", "representation spectra", paths["spectra"])
    weighted = table[[len(v) > 0 for v in table["W_top_sv"]]]
    _spectra(weighted, "W_top_sv", "weight spectra", paths["weight_spectra"])
    _jacobian(summary, paths["jacobian_spectrum"])
    return list(paths.values())


def _cell(v: Any) -> str:
    if isinstance(v, bool | np.bool_):
        return "yes" if v else ""
    if isinstance(v, float | np.floating):
        return "—" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, list | np.ndarray):
        return ", ".join(f"{x:.3g}" for x in list(v)[:5])
    return "" if v is None else str(v)


SHOWN = [
    "layer_id",
    "name",
    "kind",
    "op",
    "width",
    "rank",
    "rank_centered",
    "stable_rank",
    "coi",
    "coi_gamma",
    "coi_gamma_nobias",
    "weight",
    "N",
    "M",
    "W_rank",
    "W_spikes",
    "W_dk_sq",
    "balance_residual",
    "bottleneck",
    "undefined",
]


def probe_report(table: pd.DataFrame, summary: dict[str, Any], out_dir: Path) -> Path:
    """`out_dir/report.html`, `layers.parquet`, `summary.json` and `figures/`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = probe_figures(table, summary, out_dir / "figures")
    with atomic_writer(out_dir / "layers.parquet", "wb") as f:
        table.to_parquet(f, index=False)
    atomic_write(out_dir / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    cols = [c for c in SHOWN if c in table.columns]
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bottlenecklab.report", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = env.get_template("probe.html").render(
        s=summary,
        columns=cols,
        rows=[
            {"bottleneck": bool(r["bottleneck"]), "cells": [_cell(r[c]) for c in cols]}
            for _, r in table.iterrows()
        ],
        meanings=table.attrs.get("columns", {}),
        figures=[
            {"stem": p.stem, "path": f"figures/{p.name}", "caption": FIGURES[p.stem]}
            for p in figures
        ],
    )
    atomic_write(out_dir / "report.html", html)
    return out_dir / "report.html"
