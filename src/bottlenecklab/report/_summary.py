"""`summary.md`: what was run, the claims, one row per trained network, the figures."""

from __future__ import annotations

from pathlib import Path

from bottlenecklab.experiments import RunRecord, get, state_of, states_line
from bottlenecklab.files import atomic_write
from bottlenecklab.report._figures import write_figures

__all__ = ["render_run", "summary_markdown", "write_summary"]

# Scalars shown per point when present (name, header, format).
_COLUMNS = (
    ("rank_H_median", "median -(2/L~)H", "{:.3f}"),
    ("rank_H_min", "min", "{:.3f}"),
    ("rank_H_max", "max", "{:.3f}"),
    ("rank_H_gamma_median", "median -(2/L~)H_γ", "{:.3f}"),
    ("coi_gamma_min", "min COI_γ", "{:.3f}"),
    ("cp_residual_median", "crit.-pt residual", "{:.3g}"),
    ("train_cost", "train C", "{:.3g}"),
    ("test_cost", "test C", "{:.3g}"),
)


def summary_markdown(record: RunRecord, figures: list[Path]) -> str:
    """The Markdown text of a run's summary."""
    m = record.meta
    lines = [
        f"# {record.name}",
        "",
        f"Source: paper {m.get('source', '')}. Preset `{m.get('preset')}`, seed {m.get('seed')}, "
        f"bottlenecklab {m.get('version')}, torch {m.get('torch')}, device {m.get('device')}, "
        f"wall {m.get('wall_s', '?')} s{_shared(m)}.",
        "",
        f"Reproduce: `bottlenecklab run {record.name} --preset {m.get('preset')} "
        f"--seed {m.get('seed')}"
        + "".join(f" --set {k}={v}" for k, v in (m.get("overrides") or {}).items())
        + "`",
        "",
        f"## Claims: {states_line(record.claims)}",
        "",
        "| claim | source | statement | expected | measured | |",
        "|---|---|---|---|---|---|",
    ]
    for c in record.claims:
        state = state_of(c)
        mark = state.upper() if state in ("passed", "reported") else f"**{state.upper()}**"
        if (c.certificate or {}).get("reason"):
            mark += f" ({c.certificate['reason']})"
        lines.append(
            f"| {c.id} | {c.source} | {c.statement} | {c.expected} | {c.measured} | {mark} |"
        )
    if record.points:
        keys = list(record.points[0].point)
        cols = [c for c in _COLUMNS if any(c[0] in r.scalars for r in record.points)]
        lines += ["", "## Trained networks", ""]
        head = keys + [h for _, h, _ in cols] + ["steps", "train s", "status"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in record.points:
            cells = [
                f"{r.point[k]:g}" if isinstance(r.point[k], float) else str(r.point[k])
                for k in keys
            ]
            cells += [fmt.format(r.scalars[n]) if n in r.scalars else "–" for n, _, fmt in cols]
            cells += [str(r.steps), f"{r.wall_s:.1f}", r.status]
            lines.append("| " + " | ".join(cells) + " |")
    if figures:
        lines += ["", "## Figures", ""]
        lines += [f"![{p.stem}](figures/{p.name})" for p in figures]
    return "\n".join(lines) + "\n"


def write_summary(record: RunRecord, figures: list[Path]) -> Path:
    """Write `summary.md` into the run folder."""
    path = record.out / "summary.md"
    atomic_write(path, summary_markdown(record, figures))
    return path


def render_run(record: RunRecord) -> Path:
    """Figures (`figures/*.png`) and `summary.md` of a run; returns the summary's path."""
    exp = get(record.name)
    names = exp.figures + (("training_curves",) if exp.trains else ())
    figures = write_figures(record, names)
    return write_summary(record, figures)


def _shared(meta: dict) -> str:
    """How the wall time was shared (`run_experiments`), or nothing for a run of its own."""
    if int(meta.get("shared") or 1) <= 1:
        return ""
    return f" (shared by {meta['shared']} experiments; its points {meta.get('points_s')} s)"
