"""Rebuild the README's results section from a `bottlenecklab reproduce` folder.

    python tools/results_tables.py runs/reproduce-quick [--readme README.md]

Writes, between the README's `<!-- results:begin -->` and `<!-- results:end -->` markers,
the run's wall time, the table of every experiment (claims by state, its points' time)
and "What does not pass": the registered findings (`experiments.FINDINGS`) with the
run's measured value, then every other claim that is not `passed` with its state and
reason. Numbers come from the run's files only; nothing is typed by hand. Exit 2 with one
line on a bad folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bottlenecklab.experiments import (
    EXPERIMENTS,
    FINDINGS,
    count_states,
    expected_states,
    finding_of,
    load_run,
    point_time_s,
    state_of,
    total_wall_s,
)
from bottlenecklab.files import replace_between
from bottlenecklab.report import find_runs

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _cell(counts: dict[str, int]) -> str:
    shown = [f"{n} {st.replace('-', ' ')}" for st, n in counts.items() if n]
    return ", ".join(shown) or "—"


def tables(root: Path) -> str:
    """The Markdown of the results section for the runs under `root`."""
    records = []
    for folder in find_runs(root):
        meta = json.loads((folder / "config.json").read_text())
        if meta.get("experiment") in EXPERIMENTS:
            records.append(load_run(folder, EXPERIMENTS))
    if not records:
        raise ValueError(f"no run folders under {root}")
    records.sort(key=lambda r: (EXPERIMENTS[r.name].source, r.name))
    total = count_states([c for r in records for c in r.claims])
    wall = total_wall_s([r.meta for r in records])
    work = sum(point_time_s(r.meta) for r in records)
    presets = sorted({str(r.meta.get("preset")) for r in records})
    lines = [
        f"`bottlenecklab reproduce` ({', '.join(presets)} preset), {len(records)} experiments, "
        f"{wall / 60:.1f} min of wall time, {work / 60:.1f} min of point time in all: "
        f"{_cell(total)}.",
        "",
        "| experiment | source | reproduces | claims | point time |",
        "|---|---|---|---|---|",
    ]
    for r in records:
        exp = EXPERIMENTS[r.name]
        lines.append(
            f"| `{r.name}` | {exp.source} | {exp.title} | {_cell(count_states(r.claims))} "
            f"| {point_time_s(r.meta):.0f} s |"
        )
    lines += ["", "What does not pass, and why:", ""]
    for f in FINDINGS:
        measured = [
            f"{c.measured} ({state_of(c)})"
            for r in records
            if r.name == f.experiment
            for c in r.claims
            if c.id == f.claim
        ]
        lines.append(
            f"- **Finding** `{f.experiment}` `{f.claim}` ({f.source}): the paper says "
            f"{f.statement}; this run measures {', '.join(measured) or 'nothing (not run)'}; "
            f"{f.measured}. Settles it: {f.settle}."
        )
    for r in records:
        for c in r.claims:
            st = state_of(c)
            if st in ("passed", "reported") or finding_of(r.name, c.id):
                continue
            why = (c.certificate or {}).get("reason") or f"expected {c.expected}"
            if st in expected_states(r.name, c.id, c.asserted):
                why += " (checked only where a registered finding's statement holds)"
            lines.append(f"- `{r.name}` `{c.id}`: {st}, measured {c.measured}; {why}.")
    return "\n".join(lines)


def replace_section(text: str, section: str) -> str:
    """`text` with the part between the markers replaced by `section`."""
    try:
        return replace_between(text, BEGIN, END, section)
    except ValueError:
        raise ValueError(f"the README has no {BEGIN} ... {END} markers") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--readme", type=Path, default=Path("README.md"))
    args = p.parse_args(argv)
    try:
        section = tables(args.root)
        args.readme.write_text(replace_section(args.readme.read_text(), section))
    except (OSError, ValueError, KeyError) as e:
        print(f"results_tables: {e}", file=sys.stderr)
        return 2
    print(f"updated {args.readme} from {args.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
