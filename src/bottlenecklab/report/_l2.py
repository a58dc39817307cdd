"""Figures of paper 004's experiments (L2 reformulations and sparsity)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bottlenecklab.experiments import RunRecord
from bottlenecklab.report._style import plt, save

__all__ = ["l2_counterexample", "l2_reformulation"]


def l2_reformulation(record: RunRecord, folder: Path) -> list[Path]:
    """Relative errors of the loss identities per network (table `forms`): weight vs
    representation + null, representation vs covariance; random and trained nets, against
    float64's epsilon."""
    if not record.points:
        return []
    rows = record.points[0].tables.get("forms", [])
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    for k, (kind, marker) in enumerate((("random", "o"), ("trained", "s"))):
        sel = [r for r in rows if r["kind"] == kind]
        for j, (key, label) in enumerate(
            (("split_error", "L vs L^r + null"), ("cov_error", "L^r vs L^k"))
        ):
            y = np.maximum([r[key] for r in sel], 1e-18)
            x = 2 * k + j + 0.1 * np.random.default_rng(0).standard_normal(len(y))
            ax.semilogy(x, y, marker, ms=4, alpha=0.7, label=f"{kind}: {label}")
    ax.axhline(np.finfo(np.float64).eps, color="k", ls=":", lw=0.8, label="float64 eps")
    ax.set_xticks([0, 1, 2, 3], ["rand split", "rand cov", "trained split", "trained cov"])
    ax.set_ylabel("relative error")
    ax.legend(frameon=False, fontsize=6)
    path = folder / "l2_reformulation.png"
    save(fig, path)
    return [path]


def l2_counterexample(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 19: the loss change along the escape path from the family's end point, with
    `+eps` (the spec: descends as `-2(1 - lam) eps^2 + eps^4`) and `-eps` (004's print:
    ascends), table `curve`."""
    if not record.points:
        return []
    r = record.points[0]
    rows = r.tables.get("curve", [])
    if not rows:
        return []
    lam = float(r.scalars["lam"])
    fig, ax = plt.subplots(figsize=(4.5, 3.0))
    for sign, style, label in ((1.0, "o-", "+eps (descent)"), (-1.0, "s-", "-eps (004 print)")):
        sel = sorted((x for x in rows if x["sign"] == sign), key=lambda x: x["eps"])
        ax.plot([x["eps"] for x in sel], [x["delta"] for x in sel], style, ms=3, label=label)
    eps = np.array(sorted({x["eps"] for x in rows}))
    ax.plot(eps, -2 * (1 - lam) * eps**2 + eps**4, "k:", lw=1, label="-2(1-lam)eps^2 + eps^4")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_xlabel("eps")
    ax.set_ylabel("loss change from a_2 = 0")
    ax.legend(frameon=False, fontsize=7)
    path = folder / "l2_counterexample.png"
    save(fig, path)
    return [path]
