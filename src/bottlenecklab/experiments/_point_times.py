"""Measured point times: what each grid point of a preset cost in the last full run, so
that `run_experiments` starts the longest points first (`sweeps.longest_first`).

The table (`point_times.json` beside this module) is generated from a `bottlenecklab
reproduce` folder by `tools/results_tables.py --times`, never typed by hand:

    {"source": {...}, "presets": {"quick": {"l2/width-plateau": [
        {"run_id": "...", "point": {"model.width": 2, "seed": 0}, "seconds": 103.2}, ...]}}}

A point's expected time is its own (same run id: same resolved config), else that of the
point with the same grid values (a preset whose other settings changed), else the median
of its experiment's points, else unknown.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bottlenecklab.files import write_json
from bottlenecklab.sweeps import DONE, RunRequest, RunStore

__all__ = [
    "POINT_TIMES",
    "PointTimes",
    "expected_seconds",
    "measured_point_times",
    "write_point_times",
]

POINT_TIMES = Path(__file__).with_name("point_times.json")


def _key(point: dict[str, Any]) -> str:
    return json.dumps(point, sort_keys=True, default=str)


class PointTimes:
    """The measured seconds of a preset's points, by run id and by grid values.

    Args:
        table: `{"presets": {preset: {experiment: [{"run_id", "point", "seconds"}]}}}`.
    """

    def __init__(self, table: dict[str, Any]):
        self.presets: dict[str, dict[str, list[dict[str, Any]]]] = table.get("presets", {})

    def seconds(self, preset: str, request: RunRequest) -> float | None:
        """The expected seconds of `request` (a point of `preset`), or None if unknown."""
        payload = request.payload if isinstance(request.payload, dict) else {}
        rows = self.presets.get(preset, {}).get(str(payload.get("experiment", "")), [])
        if not rows:
            return None
        for row in rows:
            if row["run_id"] == request.run_id:
                return float(row["seconds"])
        point = _key(dict(payload.get("point", {})))
        for row in rows:
            if _key(row["point"]) == point:
                return float(row["seconds"])
        return float(statistics.median(float(row["seconds"]) for row in rows))

    def for_preset(self, preset: str) -> Callable[[RunRequest], float | None]:
        """`seconds` at `preset`, as the `cost` of `sweeps.run_sweeps`."""
        return functools.partial(self.seconds, preset)


@functools.cache
def _shipped() -> PointTimes:
    try:
        return PointTimes(json.loads(POINT_TIMES.read_text()))
    except (OSError, ValueError):  # no table (or a broken one): batch order
        return PointTimes({})


def expected_seconds(preset: str, request: RunRequest) -> float | None:
    """The shipped table's expected seconds of `request`, a point of `preset`."""
    return _shipped().seconds(preset, request)


def measured_point_times(folder: Path, preset: str) -> dict[str, Any]:
    """The point-times table of the run folders under `folder` (a `reproduce` folder:
    `AREA/NAME/points/<run id>/`): every point that finished, its run id, grid values and
    its CPU time (`last_attempt_cpu_s`: what a one-thread point takes on an idle core,
    whatever ran beside it), else its wall time (`last_attempt_s`, older runs).

    Args:
        folder: the reproduce folder; preset: the preset it ran.
    Returns:
        `{"source": {"preset", "commit"}, "presets": {preset: {experiment: rows}}}`, rows
        sorted by run id.
    """
    experiments: dict[str, list[dict[str, Any]]] = {}
    commits: set[str] = set()
    runs = {c.parent for c in folder.rglob("config.json") if (c.parent / "points").is_dir()}
    for run in sorted(runs):
        store = RunStore(run / "points")
        for run_id in store.run_ids():
            meta = store.meta(run_id)
            seconds = meta.get("last_attempt_cpu_s", meta.get("last_attempt_s"))
            if store.status(run_id) != DONE or seconds is None:
                continue
            payload = store.request(run_id).payload or {}
            experiments.setdefault(str(payload.get("experiment")), []).append(
                {
                    "run_id": run_id,
                    "point": payload.get("point", {}),
                    "seconds": round(float(seconds), 1),
                }
            )
            if meta.get("git_commit"):
                commits.add(str(meta["git_commit"])[:12])
    return {
        "source": {"preset": preset, "commits": sorted(commits)},
        "presets": {preset: dict(sorted(experiments.items()))},
    }


def write_point_times(table: dict[str, Any], path: Path = POINT_TIMES) -> None:
    """Write `table` (`measured_point_times`) as the shipped table, merged with the other
    presets already there."""
    old: dict[str, Any] = {}
    if path.is_file():
        old = json.loads(path.read_text())
    presets = {**old.get("presets", {}), **table["presets"]}
    write_json(path, {"source": table["source"], "presets": presets})
