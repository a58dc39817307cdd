"""Figures of paper 003 (saddle-to-saddle dynamics, escape directions)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from bottlenecklab.experiments import RunRecord
from bottlenecklab.experiments.saddle._common import LOSS0, curve
from bottlenecklab.experiments.saddle._plateaus import ALPHA, SNAPSHOT_STEP, TAU, read, summary
from bottlenecklab.measure import DEPTH, direction_gaps, escape_step
from bottlenecklab.report._style import plt, save

__all__ = ["circle_escape", "escape_vs_depth", "mnist_plateaus", "plateau_time"]

RANK1 = math.sqrt(2) - 1


def circle_escape(record: RunRecord, folder: Path) -> list[Path]:
    """Example 1: the Eq. 6 curve (Fig 5), success fraction vs width (Fig 2) and every
    restart's speed per width (Fig 6)."""
    if not record.points:
        return []
    r = record.points[0]
    rows = r.tables.get("restarts", [])
    curve = r.tables.get("eq6", [])
    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(11, 3.2))
    if curve:
        phi = np.array([c["phi"] for c in curve])
        ax0.plot(phi, [c["eq6"] for c in curve], lw=1.2, label="Eq. 6")
        ax0.plot(phi, [c["abs_loss"] for c in curve], "k:", lw=1, label=r"$|L_0|$, width 1")
        ax0.axhline(RANK1, color="C3", lw=0.8, ls="--", label=r"$\sqrt{2}-1$")
        ax0.set_xlabel(r"angle $\varphi$ of $W_1$")
        ax0.set_ylabel("escape speed")
        ax0.legend(frameon=False, fontsize=7)
    widths = sorted({int(x["width"]) for x in rows})
    frac = [np.mean([x["success"] for x in rows if x["width"] == w]) for w in widths]
    ax1.semilogx(widths, frac, "o-")
    ax1.set_xscale("log", base=2)
    ax1.set_ylim(-0.02, 1.02)
    ax1.set_xlabel("hidden width")
    ax1.set_ylabel(r"fraction with $s > \sqrt{2}-1$")
    rng = np.random.default_rng(0)
    for i, w in enumerate(widths):
        s = np.array([x["speed"] for x in rows if x["width"] == w])
        ax2.scatter(i + 0.25 * rng.uniform(-1, 1, s.size), s, s=4, alpha=0.5, color="C0")
    ax2.axhline(RANK1, color="C3", lw=0.8, ls="--", label=r"$\sqrt{2}-1$ (rank 1)")
    ax2.axhline(0.5, color="C2", lw=0.8, ls="--", label="1/2 (rank 2)")
    ax2.set_xticks(range(len(widths)), [str(w) for w in widths])
    ax2.set_xlabel("hidden width")
    ax2.set_ylabel("speed of every restart")
    ax2.legend(frameon=False, fontsize=7)
    path = folder / "circle_escape.png"
    save(fig, path)
    return [path]


def escape_vs_depth(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 3.2: best speed vs depth (cold, warm) per problem; Thm 3.1: tail energies and
    `s_2/s_1` per layer of the best deepest direction, with the (vacuous) bound."""
    if not record.points:
        return []
    r = record.points[0]
    rows = r.tables.get("speeds", [])
    prof = r.tables.get("profile", [])
    problems = sorted({x["problem"] for x in rows})
    fig, axes = plt.subplots(1, 1 + len(problems), figsize=(4 + 3.6 * len(problems), 3.2))
    ax = axes[0]
    for i, p in enumerate(problems):
        for start, ls in (("cold", ":"), ("warm", "-")):
            sel = [x for x in rows if x["problem"] == p and x["start"] == start]
            depths = sorted({x["depth"] for x in sel})
            best = [max(x["speed"] for x in sel if x["depth"] == L) for L in depths]
            ax.plot(depths, best, ls, marker="o", color=f"C{i}", label=f"{p}, {start}")
    ax.set_xlabel("depth $L$")
    ax.set_ylabel(r"best escape speed $s^*(L)$")
    ax.legend(frameon=False, fontsize=7)
    for ax, p in zip(axes[1:], problems):
        sel = sorted((x for x in prof if x["problem"] == p), key=lambda x: x["layer"])
        ell = [x["layer"] for x in sel]
        for key, label in (
            ("tail_W", r"tail$(W_\ell)$"),
            ("tail_Z", r"tail$(Z^\sigma_\ell)$"),
            ("ratio_W", r"$s_2/s_1(W_\ell)$"),
            ("nonlinearity", "nonlinearity"),
        ):
            ys = [max(x[key], 1e-12) if np.isfinite(x[key]) else np.nan for x in sel]
            ax.semilogy(ell, ys, "o-", ms=3, label=label)
        bound = [x["bound"] for x in sel]
        if any(np.isfinite(bound)):
            ax.semilogy(ell, bound, "k--", lw=0.8, label="Thm 3.1 bound")
        ax.set_title(f"{p}: best direction at the largest depth")
        ax.set_xlabel(r"layer $\ell$")
        ax.legend(frameon=False, fontsize=6)
    path = folder / "escape_vs_depth.png"
    save(fig, path)
    return [path]


def plateau_time(record: RunRecord, folder: Path) -> list[Path]:
    """Prop 2.2 (derived): loss curves from several init scales, escape steps vs scale
    (log-log, reference slope `2 - L`), and the `tau`-time runs with their direction gap
    (`measure.direction_gaps`; dotted: the first 1 % loss drop). One point per run."""
    done = [p for p in record.points if p.status == "done" and LOSS0.name in p.scalars]
    if not done:
        return []
    slope = [p for p in done if not p.get(TAU, 0.0)]
    tau = sorted((p for p in done if p.get(TAU, 0.0)), key=lambda p: p.value(ALPHA))
    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(11, 3.2))
    depths = sorted({int(p.value(DEPTH)) for p in slope})
    for i, L in enumerate(depths):
        runs = sorted((p for p in slope if p.value(DEPTH) == L), key=lambda p: p.value(ALPHA))
        esc = []
        for j, p in enumerate(runs):
            t, loss = curve(p)
            ax0.semilogx(
                [max(x, 1) for x in t],
                loss,
                color=f"C{i}",
                alpha=0.4 + 0.6 * j / max(1, len(runs) - 1),
                lw=1,
                label=f"L = {L}" if j == 0 else None,
            )
            esc.append(escape_step(t, loss, record.config.escape_frac))
        a = np.array([p.value(ALPHA) for p in runs])
        e = np.array(esc, dtype=float)
        ax1.loglog(a, e, "o-", color=f"C{i}", label=f"L = {L}")
        if np.isfinite(e).any():
            k = int(np.nanargmax(e))
            ax1.loglog(a, e[k] * (a / a[k]) ** (2 - L), "k:", lw=0.8)
    ax0.set_xlabel("GD step")
    ax0.set_ylabel("training loss")
    ax0.legend(frameon=False, fontsize=7)
    ax1.set_xlabel(r"init scale $\alpha$")
    ax1.set_ylabel("steps to escape (dotted: slope $2-L$)")
    ax1.legend(frameon=False, fontsize=7)
    drops = []
    for j, p in enumerate(tau):
        t, loss = curve(p)
        ax2.plot(t, loss, color=f"C{j}", label=rf"$\alpha$ = {p.value(ALPHA):g}")
        drops.append(
            next((k for k, v in zip(t, loss) if v <= record.config.tau_drop * loss[0]), math.inf)
        )
    ax2.set_xlabel(r"$\tau$-step ($\eta = c\|\theta\|^{2-L}$)")
    ax2.set_ylabel("training loss")
    paths = [
        {
            int(m["step"]): np.array(json.loads(m["direction"]))
            for m in p.metrics
            if m.get("direction")
        }
        for p in tau
    ]
    gap = direction_gaps(paths, 2**62) if len(paths) > 1 else {}
    if gap:
        tw = ax2.twinx()
        tw.semilogy(list(gap), [max(g, 1e-16) for g in gap.values()], "k-", lw=0.6)
        if math.isfinite(min(drops)):
            tw.axvline(min(drops), color="k", ls=":", lw=0.8)
        tw.set_ylabel(r"direction gap $\max\|\bar\theta(\alpha_i) - \bar\theta(\alpha_j)\|$")
    ax2.legend(frameon=False, fontsize=7)
    path = folder / "plateau_time.png"
    save(fig, path)
    return [path]


def mnist_plateaus(record: RunRecord, folder: Path) -> list[Path]:
    """Fig 1: loss with snapshot lines and the top singular values of every layer at the
    snapshots; Fig 3: every layer's top singular values over training; Fig 4: the
    depth-4 loss beside the depth-6 one. Read off the points' logs (`summary`)."""
    if not record.points:
        return []
    got = summary(record.config, record.points)
    curves, spectra = got["curves"], got["spectra"]
    depths = sorted(curves, reverse=True)
    if not depths:
        return []
    L = record.config.depth
    snap = read(got["scalars"], SNAPSHOT_STEP)
    steps6 = sorted(spectra)
    snaps = [s for s in (snap, steps6[-1] if steps6 else math.nan) if np.isfinite(s)]
    fig = plt.figure(figsize=(11, 6))
    ax0 = fig.add_subplot(2, 3, 1)
    for i, d in enumerate(depths):
        ax0.plot(*curves[d], color=f"C{i}", lw=1, label=f"depth {d}")
    for k, s in enumerate(snaps):
        ax0.axvline(s, color="k", ls=":", lw=0.8)
        ax0.annotate(f"snapshot {k + 1}", (s, ax0.get_ylim()[1]), fontsize=6, rotation=90, va="top")
    ax0.set_xlabel("SGD step")
    ax0.set_ylabel("training loss (cross-entropy)")
    ax0.legend(frameon=False, fontsize=7)
    ax1 = fig.add_subplot(2, 3, 4)
    for k, s in enumerate(snaps):
        for l in range(1, L + 1):
            vals = spectra[int(s)][l - 1]
            ax1.semilogy(
                range(1, len(vals) + 1),
                vals,
                "o-" if k == 0 else "s--",
                ms=2,
                color=f"C{l - 1}",
                lw=0.8,
                label=f"layer {l}" if k == 0 else None,
            )
    ax1.set_xlabel("index (o: snapshot 1, s: end)")
    ax1.set_ylabel("singular value")
    ax1.legend(frameon=False, fontsize=6, ncol=2)
    for l in range(1, L + 1):
        # layers 1..ceil(L/2) in the middle column, the rest in the right one
        rows = (L + 1) // 2
        col, row = (2, l - 1) if l <= rows else (3, l - 1 - rows)
        ax = fig.add_subplot(rows, 3, 3 * row + col)
        top = max((len(spectra[t][l - 1]) for t in steps6), default=0)
        for i in range(top):
            sel = [t for t in steps6 if len(spectra[t][l - 1]) > i]
            ax.plot(
                sel,
                [spectra[t][l - 1][i] for t in sel],
                lw=0.8,
                color=plt.get_cmap("viridis")(i / max(1, top - 1)),
            )
        for s in snaps:
            ax.axvline(s, color="k", ls=":", lw=0.6)
        ax.set_ylabel(f"$W_{l}$", fontsize=7)
        ax.tick_params(labelsize=6)
    path = folder / "mnist_plateaus.png"
    save(fig, path)
    return [path]
