"""Margins against spreads: is each claim's verdict robust to the seed and the thread count?

    python tools/margins.py runs/robust/seed0 runs/robust/seed1 runs/robust/seed2 \
        runs/robust/threads2 --page docs/lab-notes/robustness.md

Each argument is a `bottlenecklab reproduce` folder (other seeds, other thread counts);
the experiments that every folder holds are compared. For every asserted claim: its state
and margin (`Claim.margin`, the signed distance of the measured value to its bound) in
each run, the smallest margin and the spread (largest minus smallest margin), in the
claim's margin scale (`Claim.margin_scale`: its own units, or decades above round-off for
an exact statement checked in floating point). A verdict is robust when the smallest
margin exceeds the spread; a claim that is not robust is marked **fragile**. The table
is written between the page's `<!-- margins:begin -->` and `<!-- margins:end -->` markers;
numbers come from the runs' files only. Exit 2 with one line on a bad folder.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from bottlenecklab.config import ConfigError
from bottlenecklab.experiments import EXPERIMENTS, load_run, state_of
from bottlenecklab.files import replace_between
from bottlenecklab.report import find_runs

BEGIN, END = "<!-- margins:begin -->", "<!-- margins:end -->"


def _label(root: Path) -> str:
    """`seed S, T thread(s)` of a reproduce folder (from its first point's metadata)."""
    seeds, threads = set(), set()
    for folder in find_runs(root):
        seeds.add(json.loads((folder / "config.json").read_text())["config"].get("seed"))
        for meta in sorted((folder / "points").glob("*/meta.json"))[:1]:
            threads.add(json.loads(meta.read_text()).get("threads"))
    fmt = lambda xs: "/".join(str(x) for x in sorted(xs, key=str)) or "?"  # noqa: E731
    return f"seed {fmt(seeds)}, {fmt(threads)} thread(s)"


def rows(roots: list[Path]) -> list[dict]:
    """One row per (experiment, asserted claim): states and margins per root, the smallest
    margin, the spread and whether the verdict is robust."""
    runs: dict[str, list] = {}
    for i, root in enumerate(roots):
        folders = find_runs(root)
        if not folders:
            raise ValueError(f"no run folders under {root}")
        for folder in folders:
            meta = json.loads((folder / "config.json").read_text())
            if meta.get("experiment") in EXPERIMENTS:
                try:
                    record = load_run(folder, EXPERIMENTS)
                except ConfigError as e:  # a run of another version of the experiment
                    raise ValueError(f"{folder}: {e}") from None
                runs.setdefault(record.name, [None] * len(roots))[i] = record
    out = []
    for name in sorted(n for n in runs if all(runs[n])):  # experiments every run has
        ids = [c.id for r in runs[name] if r for c in r.claims if c.asserted]
        for cid in dict.fromkeys(ids):
            cells = []
            for record in runs[name]:
                c = next((c for c in record.claims if c.id == cid), None) if record else None
                cells.append((state_of(c), c.margin) if c else ("not run", None))
            margins = [m for _, m in cells if m is not None and math.isfinite(m)]
            low = min(margins) if margins else None
            spread = max(margins) - min(margins) if len(margins) > 1 else None
            robust = (
                all(st == "passed" for st, _ in cells)
                and low is not None
                and spread is not None
                and len(margins) == len(cells)
                and low > spread
            )
            scales = {c.margin_scale for r in runs[name] for c in r.claims if c.id == cid}
            out.append(
                {
                    "experiment": name,
                    "claim": cid,
                    "unit": " dec" if scales == {"decades"} else "",
                    "cells": cells,
                    "low": low,
                    "spread": spread,
                    "robust": robust,
                }
            )
    return out


def table(roots: list[Path]) -> str:
    """The markdown table of `rows` with one column per run."""
    labels = [_label(r) for r in roots]
    lines = [
        f"Margins of every asserted claim over {len(roots)} runs ({'; '.join(labels)}). "
        "Margin: the measured value's signed distance to its bound (claim units; `dec`: "
        "decades above the round-off tolerance of an exact statement); robust when the "
        "smallest margin exceeds the spread.",
        "",
        "| experiment | claim | " + " | ".join(labels) + " | smallest | spread | verdict |",
        "|---|---|" + "---|" * len(labels) + "---|---|---|",
    ]
    fmt = lambda x: "n/a" if x is None else f"{x:.3g}"  # noqa: E731
    for row in rows(roots):
        u = row["unit"]
        cells = " | ".join(f"{st} ({fmt(m)}{u if m is not None else ''})" for st, m in row["cells"])
        verdict = "robust" if row["robust"] else "**fragile**"
        lines.append(
            f"| `{row['experiment']}` | `{row['claim']}` | {cells} | {fmt(row['low'])}{u} "
            f"| {fmt(row['spread'])}{u} | {verdict} |"
        )
    return "\n".join(lines)


def replace_section(text: str, section: str) -> str:
    """`text` with the part between the markers replaced by `section`."""
    try:
        return replace_between(text, BEGIN, END, section)
    except ValueError:
        raise ValueError(f"the page has no {BEGIN} ... {END} markers") from None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("roots", type=Path, nargs="+")
    p.add_argument("--page", type=Path, default=Path("docs/lab-notes/robustness.md"))
    args = p.parse_args(argv)
    try:
        section = table(args.roots)
        args.page.write_text(replace_section(args.page.read_text(), section))
    except (OSError, ValueError, KeyError) as e:
        print(f"margins: {e}".splitlines()[0], file=sys.stderr)
        return 2
    print(f"updated {args.page} from {len(args.roots)} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
