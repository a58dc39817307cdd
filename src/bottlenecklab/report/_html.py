"""`report.html`: every run under a folder on one static page that opens from disk.

An overview per source document (claims passed / failed / not measured, experiments not
run, time), then one section per experiment: its claims (each linked to the figure that
shows it), its figures, the training curves behind its convergence gates, and where the
numbers come from (config, seed, version, git commit, device, time). Runs of one experiment
that differ only in their seed are shown together: each claim's pass rate over the seeds
and the spread of its measured value. No script, no network: images sit beside the page.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from bottlenecklab.experiments import (
    EXPERIMENTS,
    FINDINGS,
    Claim,
    RunRecord,
    load_run,
    point_time_s,
    state_of,
)
from bottlenecklab.files import atomic_write

__all__ = ["PAPERS", "build_report", "claim_state", "find_runs", "report_data"]

# The source documents (`shared/papers/README.md`), by the number experiments cite.
PAPERS = {
    "000": "Hamiltonian mechanics of feature learning: bottleneck structure in leaky ResNets",
    "001": "Bottleneck structure in learned features: low-dimension vs regularity tradeoff",
    "002": "Bottleneck structure in large depth networks, mechanisms of symmetry learning (talk)",
    "003": "Saddle-to-saddle dynamics in deep ReLU networks: low-rank bias in the first escape",
    "004": "Feature learning in L2-regularized DNNs: attraction/repulsion and sparsity",
}
# The verdicts of `convergence.md`, in the order the report counts them.
STATES = {
    "passed": "PASSED",
    "failed": "FAILED",
    "not-converged": "NOT CONVERGED",
    "not-measured": "NOT MEASURED",
    "reported": "REPORTED",
}


def find_runs(root: Path) -> list[Path]:
    """Run folders under `root` (those holding `config.json` and `claims.json`)."""
    root = Path(root)
    return sorted(
        p.parent for p in root.rglob("claims.json") if (p.parent / "config.json").is_file()
    )


def claim_state(claim: Claim) -> str:
    """The claim's verdict, one of `STATES` (`experiments.state_of`)."""
    return state_of(claim)


def _finding_anchor(key: str) -> str:
    return "finding-" + _slug(key)


def _paper(source: str) -> str:
    return source.split()[0] if source else "?"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


@dataclass
class _Run:
    record: RunRecord
    folder: str  # relative to the report's folder
    figures: dict[str, str]  # figure stem -> relative path
    anchor: str

    @property
    def meta(self) -> dict[str, Any]:
        return self.record.meta


@dataclass
class _Group:
    """The runs of one experiment that differ at most in their seed."""

    name: str
    anchor: str
    runs: list[_Run] = field(default_factory=list)

    @property
    def experiment(self):
        return EXPERIMENTS[self.name]


def _claim_rows(group: _Group) -> list[dict[str, Any]]:
    """One row per claim id: per-seed states and measured values, pass rate and spread."""
    exp = group.experiment
    rows: dict[str, dict[str, Any]] = {}
    for run in group.runs:
        for c in run.record.claims:
            row = rows.setdefault(
                c.id,
                {
                    "id": c.id,
                    "statement": c.statement,
                    "source": c.source,
                    "expected": c.expected,
                    "per_seed": [],
                    "finding": _finding_anchor(c.finding) if c.finding else None,
                },
            )
            fig = exp.figure_of(c.id)
            href = f"#{run.anchor}-{fig}" if fig and fig in run.figures else None
            row["per_seed"].append(
                {
                    "seed": run.meta.get("seed"),
                    "state": claim_state(c),
                    "measured": c.measured,
                    "certificate": _certificate_text(c),
                    "href": href,
                }
            )
    for row in rows.values():
        seeds = row["per_seed"]
        row["passed"] = sum(s["state"] == "passed" for s in seeds)
        row["n"] = len(seeds)
        # A row shows its worst state over the seeds (failed before not converged, ...).
        states = {s["state"] for s in seeds}
        row["state"] = next(
            st
            for st in ("failed", "not-converged", "not-measured", "passed", "reported")
            if st in states
        )
        numbers = [_number(s["measured"]) for s in seeds]
        if len(seeds) > 1 and all(x is not None for x in numbers):
            row["spread"] = (
                f"{min(numbers):.4g} – {max(numbers):.4g} (median {statistics.median(numbers):.4g})"
            )
        row["href"] = seeds[0]["href"]
    return list(rows.values())


def _overview(groups: list[_Group]) -> list[dict[str, Any]]:
    """Per source document: claims by state, experiments run and not run, wall time."""
    papers: dict[str, dict[str, Any]] = {}
    for name, exp in sorted(EXPERIMENTS.items()):
        p = papers.setdefault(
            _paper(exp.source),
            {
                "paper": _paper(exp.source),
                **dict.fromkeys(STATES, 0),
                "findings": [],
                "experiments": [],
                "not_run": [],
                "wall_s": 0.0,
            },
        )
        own = [g for g in groups if g.name == name]
        if not own:
            p["not_run"].append(name)
            continue
        for g in own:
            p["experiments"].append({"name": name, "anchor": g.anchor})
            for run in g.runs:
                for c in run.record.claims:
                    p[claim_state(c)] += 1
                p["wall_s"] += point_time_s(run.meta)
    for f in FINDINGS:
        runs = [(g, r) for g in groups if g.name == f.experiment for r in g.runs]
        latest = [
            {
                "seed": r.meta.get("seed"),
                "state": claim_state(c),
                "measured": c.measured,
                "href": f"#{g.anchor}",
            }
            for g, r in runs
            for c in r.record.claims
            if c.id == f.claim
        ]
        paper = _paper(EXPERIMENTS[f.experiment].source) if f.experiment in EXPERIMENTS else "?"
        if paper in papers:
            papers[paper]["findings"].append(
                {"finding": f, "anchor": _finding_anchor(f.key), "runs": latest}
            )
    out = []
    for key in sorted(papers):
        p = papers[key]
        p["title"] = PAPERS.get(key, "")
        out.append(p)
    return out


def _certificate_text(c: Claim) -> str:
    cert = c.certificate or {}
    if not cert:
        return ""
    text = f"stationarity {cert.get('stationarity', float('nan')):.3g} (<= {cert.get('threshold')})"
    if cert.get("scalar"):
        text += f"; {cert['scalar']} moved {cert.get('change', float('nan')):.3g}"
        text += f" (allowed {cert.get('allowed', float('nan')):.3g})"
    return text


def report_data(root: Path) -> dict[str, Any]:
    """Everything the page shows, as plain data (the template only lays it out)."""
    root = Path(root)
    groups: dict[str, _Group] = {}
    for folder in find_runs(root):
        meta = json.loads((folder / "config.json").read_text())
        if meta.get("experiment") not in EXPERIMENTS:
            continue
        rec = load_run(folder, EXPERIMENTS)
        config = {k: v for k, v in (meta.get("config") or {}).items() if k != "seed"}
        key = json.dumps([rec.name, meta.get("preset"), config], sort_keys=True, default=str)
        if key not in groups:
            n = sum(g.name == rec.name for g in groups.values())
            groups[key] = _Group(rec.name, _slug(rec.name) + (f"-{n + 1}" if n else ""))
        group = groups[key]
        figs = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
        rel = folder.relative_to(root).as_posix() if folder != root else "."
        group.runs.append(
            _Run(
                rec,
                rel,
                {f.stem: f.relative_to(root).as_posix() for f in figs},
                f"{group.anchor}-s{len(group.runs)}",
            )
        )
    ordered = sorted(groups.values(), key=lambda g: (EXPERIMENTS[g.name].source, g.name))
    for g in ordered:
        g.runs.sort(key=lambda r: (r.meta.get("seed") is None, r.meta.get("seed")))
        for i, run in enumerate(g.runs):
            run.anchor = f"{g.anchor}-s{i}"
    sections = []
    for g in ordered:
        exp = g.experiment
        rows = _claim_rows(g)
        order = list(exp.figures) + ["training_curves"]
        sections.append(
            {
                "name": g.name,
                "anchor": g.anchor,
                "title": exp.title,
                "source": exp.source,
                "rows": rows,
                "counts": {s: sum(r["state"] == s for r in rows) for s in STATES},
                "runs": [
                    {
                        "anchor": run.anchor,
                        "folder": run.folder,
                        "meta": run.meta,
                        "config": json.dumps(run.meta.get("config"), indent=2, default=str),
                        "figures": [
                            {"stem": s, "path": run.figures[s]}
                            for s in [s for s in order if s in run.figures]
                            + sorted(set(run.figures) - set(order))
                        ],
                        "points": [
                            {
                                "point": p.point,
                                "status": p.status,
                                "message": p.message,
                                "steps": p.steps,
                                "wall_s": p.wall_s,
                            }
                            for p in run.record.points
                        ],
                    }
                    for run in g.runs
                ],
            }
        )
    return {
        "root": root.resolve().name,
        "papers": _overview(ordered),
        "sections": sections,
        "states": STATES,
    }


def build_report(root: Path) -> Path:
    """(Re)build `root/report.html` from the run folders under `root` (no training)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bottlenecklab.report", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    html = env.get_template("report.html").render(**report_data(root))
    path = Path(root) / "report.html"
    atomic_write(path, html)
    return path
