"""Rebuild the results from a `bottlenecklab reproduce` folder: the tables on the docs site,
one summary line per paper in the README.

    python tools/results_tables.py runs/reproduce-quick \
        [--page docs/reproduction.md] [--readme README.md] \
        [--times src/bottlenecklab/experiments/point_times.json]

Writes, between the page's `<!-- results:begin -->` and `<!-- results:end -->` markers,
the run's wall time, the table of every experiment (claims by state, its points' time)
and "What does not pass": the registered findings (`experiments.FINDINGS`) with the
run's measured value, then every other claim that is not `passed` with its state and
reason. Between the README's `<!-- summary:begin -->` and `<!-- summary:end -->` markers
it writes one line per source document (its experiments, their claims by state, their
points' time). `--times` also writes every finished point's time, the table by which
`run_experiments` starts the longest points first (`experiments._point_times`).
Numbers come from the run's files only; nothing is typed by hand. Exit 2
with one line on a bad folder or a file without its markers; then nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from bottlenecklab.experiments import (
    EXPERIMENTS,
    FINDINGS,
    STATES,
    RunRecord,
    count_states,
    expected_states,
    finding_of,
    load_run,
    point_time_s,
    state_of,
    total_wall_s,
)
from bottlenecklab.experiments._awaiting import awaiting_of
from bottlenecklab.experiments._point_times import measured_point_times, write_point_times
from bottlenecklab.files import atomic_write, replace_between
from bottlenecklab.report import PAPERS, find_runs

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
SUMMARY_BEGIN, SUMMARY_END = "<!-- summary:begin -->", "<!-- summary:end -->"


def _cell(counts: dict[str, int]) -> str:
    shown = [f"{n} {st.replace('-', ' ')}" for st, n in counts.items() if n]
    return ", ".join(shown) or "—"


def records(root: Path) -> list[RunRecord]:
    """The run records of the registered experiments under `root`, by source then name."""
    found = []
    for folder in find_runs(root):
        meta = json.loads((folder / "config.json").read_text())
        if meta.get("experiment") in EXPERIMENTS:
            found.append(load_run(folder, EXPERIMENTS))
    if not found:
        raise ValueError(f"no run folders under {root}")
    found.sort(key=lambda r: (EXPERIMENTS[r.name].source, r.name))
    return found


def _presets(recs: Sequence[RunRecord]) -> str:
    return ", ".join(sorted({str(r.meta.get("preset")) for r in recs}))


def missing(recs: Sequence[RunRecord]) -> str:
    """A sentence naming the registered experiments that are not in the run, or ""."""
    absent = sorted(set(EXPERIMENTS) - {r.name for r in recs})
    if not absent:
        return ""
    return f"Not in this run ({len(absent)}): " + ", ".join(f"`{n}`" for n in absent) + "."


def _unexpected(name: str, claim) -> str:
    """Where a quick claim's state is not one `make test-slow` expects: what it expects."""
    want = expected_states(name, claim.id, claim.asserted)
    if state_of(claim) in want:
        return ""
    return f" **Unexpected**: `make test-slow` expects {' or '.join(want)}."


def tables(root: Path | Sequence[RunRecord]) -> str:
    """The Markdown of the results section for the runs under `root` (or these records)."""
    recs = records(root) if isinstance(root, (str, Path)) else list(root)
    total = count_states([c for r in recs for c in r.claims])
    wall = total_wall_s([r.meta for r in recs])
    work = sum(point_time_s(r.meta) for r in recs)
    lines = [
        f"`bottlenecklab reproduce` ({_presets(recs)} preset), {len(recs)} experiments, "
        f"{wall / 60:.1f} min of wall time, {work / 60:.1f} min of point time in all: "
        f"{_cell(total)}.",
        "",
        "| experiment | source | reproduces | claims | point time |",
        "|---|---|---|---|---|",
    ]
    if missing(recs):
        lines[1:1] = ["", missing(recs)]
    for r in recs:
        exp = EXPERIMENTS[r.name]
        title = exp.title.replace("|", "\\|")  # a norm's bars would split the cell
        lines.append(
            f"| `{r.name}` | {exp.source} | {title} | {_cell(count_states(r.claims))} "
            f"| {point_time_s(r.meta):.0f} s |"
        )
    lines += ["", "What does not pass, and why:", ""]
    for f in FINDINGS:
        measured = [
            f"{c.measured} ({state_of(c)})"
            for r in recs
            if r.name == f.experiment
            for c in r.claims
            if c.id == f.claim
        ]
        lines.append(
            f"- **Finding** `{f.experiment}` `{f.claim}` ({f.source}): the paper says "
            f"{f.statement}; this run measures {', '.join(measured) or 'nothing (not run)'}; "
            f"{f.measured}. Settles it: {f.settle}."
        )
    for r in recs:
        for c in r.claims:
            st = state_of(c)
            if st in ("passed", "reported") or finding_of(r.name, c.id):
                continue
            why = (c.certificate or {}).get("reason") or f"expected {c.expected}"
            if awaiting_of(r.name, c.id) is not None and st == "not-converged":
                why += " (expected: awaiting the solver, `experiments/_awaiting.py`)"
            elif st in expected_states(r.name, c.id, c.asserted):
                why += " (checked only where a registered finding's statement holds)"
            odd = _unexpected(r.name, c) if r.meta.get("preset") == "quick" else ""
            lines.append(f"- `{r.name}` `{c.id}`: {st}, measured {c.measured}; {why}.{odd}")
    return "\n".join(lines)


def paper_lines(rows: Iterable[tuple[str, dict[str, int], float]], presets: str) -> str:
    """One Markdown line per source document from `(source, claim counts, point time s)`
    per experiment: `- **000** title — 6 experiments: 31 passed, 3 failed (55 min of points).`"""
    papers: dict[str, tuple[int, dict[str, int], float]] = {}
    for source, counts, seconds in rows:
        key = source.split()[0]
        n, total, time_s = papers.get(key, (0, dict.fromkeys(STATES, 0), 0.0))
        for st, k in counts.items():
            total[st] += k
        papers[key] = (n + 1, total, time_s + seconds)
    n_exp = sum(n for n, _, _ in papers.values())
    lines = [f"`bottlenecklab reproduce` ({presets} preset), {n_exp} experiments:", ""]
    for key in sorted(papers):
        n, total, time_s = papers[key]
        title = PAPERS.get(key, "")
        lines.append(
            f"- **{key}** {title} — {n} experiment{'s' * (n != 1)}: {_cell(total)} "
            f"({time_s / 60:.0f} min of points)."
        )
    return "\n".join(lines)


def summary(recs: Sequence[RunRecord]) -> str:
    """The README's lines: one per source document of these run records."""
    rows = [
        (EXPERIMENTS[r.name].source, count_states(r.claims), point_time_s(r.meta)) for r in recs
    ]
    text = paper_lines(rows, _presets(recs))
    return f"{text}\n\n{missing(recs)}" if missing(recs) else text


def replace_section(text: str, section: str, begin: str = BEGIN, end: str = END) -> str:
    """`text` with the part between the markers replaced by `section`."""
    try:
        return replace_between(text, begin, end, section)
    except ValueError:
        raise ValueError(f"no {begin} ... {end} markers") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path)
    p.add_argument("--page", type=Path, default=Path("docs/reproduction.md"))
    p.add_argument("--readme", type=Path, default=Path("README.md"))
    p.add_argument(
        "--times",
        type=Path,
        default=None,
        help="also write the run's point times there (the scheduler's table: "
        "src/bottlenecklab/experiments/point_times.json)",
    )
    args = p.parse_args(argv)
    try:
        recs = records(args.root)
        page = replace_section(args.page.read_text(), tables(recs))
        readme = replace_section(args.readme.read_text(), summary(recs), SUMMARY_BEGIN, SUMMARY_END)
        # Everything is built before anything is written: a missing marker writes nothing.
        if args.times is not None:
            presets = {str(r.meta.get("preset")) for r in recs}
            if len(presets) != 1:
                raise ValueError(f"point times of one preset only, got {sorted(presets)}")
            write_point_times(measured_point_times(args.root, presets.pop()), args.times)
        atomic_write(args.page, page)
        atomic_write(args.readme, readme)
    except (OSError, ValueError, KeyError) as e:
        print(f"results_tables: {e}", file=sys.stderr)
        return 2
    print(f"updated {args.page} and {args.readme} from {args.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
