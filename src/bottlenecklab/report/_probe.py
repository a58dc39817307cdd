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
    "rank_vs_depth": "rank (the rank rule) and stable rank of every layer's centred "
    "representation; the bottleneck layers are marked",
    "spectra": "top singular values of each centred representation (normalized by the "
    "largest); a bar marks each layer's rank-rule cut (between s_k and s_k+1), the dashed "
    "line the rule's one relative cutoff c and the dotted lines the noise floors",
    "weight_spectra": "top singular values of the weight feeding each layer",
    "jacobian_spectrum": "median singular values of the input-output Jacobian over the points",
}


def _rank_vs_depth(table: pd.DataFrame, summary: dict[str, Any], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(max(5.0, 0.35 * len(table) + 2), 3.2))
    x = table["layer_id"].to_numpy()
    ax.plot(x, table["rank_centered"], "o-", label="rank (centred)")
    ax.plot(x, table["stable_rank_centered"], "s--", ms=3, label="stable rank (centred)")
    bn = table[table["bottleneck"]]
    ax.scatter(
        bn["layer_id"],
        bn["rank_centered"],
        s=120,
        facecolors="none",
        edgecolors="C3",
        label=(
            f"bottleneck (rank {summary['bottleneck_rank']})"
            if summary["bottleneck_rank"] is not None
            else "no bottleneck"
        ),
        zorder=3,
    )
    ax.set_xticks(x, table["name"], rotation=60, ha="right", fontsize=7)
    ax.set_xlabel("layer")
    ax.set_ylabel("rank")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title(f"{summary['model']}: rank vs depth ({summary['n_samples']} samples)")
    save(fig, path)


def _spectra(table: pd.DataFrame, column: str, title: str, path: Path, cut: bool = False) -> None:
    """Normalized spectra per layer; with `cut`, the rank rule's cut of each (a bar between
    `s_k` and `s_{k+1}`), its relative cutoff and noise floors."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    cmap = plt.get_cmap("viridis")
    n = max(len(table) - 1, 1)
    for i, (_, row) in enumerate(table.iterrows()):
        sv = np.asarray(row[column], dtype=float)
        if not (sv.size and sv[0] > 0):
            continue
        color = cmap(i / n)
        y = sv / sv[0]
        ax.semilogy(
            np.arange(1, sv.size + 1),
            np.maximum(y, 1e-17),
            "o-",
            ms=2,
            color=color,
            label=row["name"] if len(table) <= 12 else None,
        )
        if cut and int(row["rank_centered"]) < sv.size:
            k = int(row["rank_centered"])
            ax.plot([k + 0.5, k + 0.5], [max(y[k], 1e-17), y[k - 1]], "-", lw=3, color=color)
        if cut and row.get("rank_floor", 0) > 0:
            ax.axhline(float(row["rank_floor"]), ls=":", lw=0.6, color=color)
    if cut and table.attrs.get("rank_rule_kind") in ("relative", "paper"):
        if not table.attrs.get("rank_rule_absolute", False):
            ax.axhline(table.attrs["rank_cutoff"], ls="--", lw=0.8, color="C3")
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
        if summary.get("jacobian_rank") is not None
        else f"no Jacobian: {summary.get('jacobian_undefined')}"
    )
    save(fig, path)


def probe_figures(table: pd.DataFrame, summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """The probe's figures as `out_dir/<name>.png`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / f"{name}.png" for name in FIGURES}
    _rank_vs_depth(table, summary, paths["rank_vs_depth"])
    column = "top_sv_centered" if "top_sv_centered" in table.columns else "top_sv"
    _spectra(table, column, "centred representation spectra", paths["spectra"], cut=True)
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
    "rank_clear",
    "rank_gap",
    "rank_exact",
    "rank_floor",
    "rank_at_1e-1",
    "rank_at_1e-2",
    "rank_at_1e-3",
    "stable_rank_centered",
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
