"""`report.html`: every run under a folder, its claims and its figures, on one page."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from bottlenecklab.experiments import EXPERIMENTS, load_run
from bottlenecklab.files import atomic_write

__all__ = ["build_report", "find_runs"]


def find_runs(root: Path) -> list[Path]:
    """Run folders under `root` (those holding `config.json` and `claims.json`)."""
    root = Path(root)
    return sorted(
        p.parent for p in root.rglob("claims.json") if (p.parent / "config.json").is_file()
    )


def build_report(root: Path) -> Path:
    """(Re)build `root/report.html` from the run folders under `root`."""
    root = Path(root)
    runs = []
    for folder in find_runs(root):
        meta = json.loads((folder / "config.json").read_text())
        if meta.get("experiment") not in EXPERIMENTS:
            continue
        rec = load_run(folder, EXPERIMENTS)
        figs = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
        runs.append(
            {
                "name": rec.name,
                "folder": folder.relative_to(root).as_posix() if folder != root else ".",
                "meta": rec.meta,
                "claims": rec.claims,
                "passed": sum(c.passed for c in rec.claims),
                "figures": [f.relative_to(root).as_posix() for f in figs],
                "summary": (folder / "summary.md").relative_to(root).as_posix(),
            }
        )
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bottlenecklab.report", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
    )
    html = env.get_template("report.html").render(runs=runs, root=root.name)
    path = root / "report.html"
    atomic_write(path, html)
    return path
