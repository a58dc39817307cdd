"""Peak resident memory of quick points: each must fit 2 GB (issue 41: two jobs on a
24 GB machine with room to spare).

The points that once did not (`talk/tripoints`' deep net: 24 GB in its certificate's
`K x K` Gram matrices; `talk/newtonian-cnn`: 13.5 GB), each run alone in a fresh worker
process (`LocalExecutor(2)`, as `reproduce --jobs 2` runs it: the worker's import of torch
counts), its peak read from the point's `meta.json` (`peak_rss_mb`, the worker's resident
high-water mark over the point: training, measurements, certificate).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks._common import load, timed
from bottlenecklab.experiments import get, point_requests, resolve_config, run_point
from bottlenecklab.sweeps import LocalExecutor, RunStore, Settings, run_sweep

BOUND_MB = 2048.0
POINTS = (  # experiment, overrides, the point's labels
    ("talk/tripoints", {"seeds": (0,), "archs": ("deep",)}, {"arch": "deep", "seed": 0}),
    ("talk/newtonian-cnn", {}, {}),
)


def _request(name: str, overrides: dict, labels: dict):
    exp = get(name)
    cfg = resolve_config(exp, "quick", overrides)
    reqs = [r for r in point_requests(exp, cfg) if labels.items() <= r.labels.items()]
    assert len(reqs) == 1, f"{name}: {len(reqs)} points match {labels}"
    return reqs[0]


def main() -> dict[str, float]:
    """Run each point; print its peak memory and time against the bound."""
    out: dict[str, float] = {}
    for name, overrides, labels in POINTS:
        req = _request(name, overrides, labels)
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(Path(tmp), threads=1)
            wall, report = timed(lambda: run_sweep([req], run_point, LocalExecutor(2), settings))  # noqa: B023
            store = RunStore(Path(tmp))
            meta, error = store.meta(req.run_id), store.error(req.run_id)
        peak = float(meta.get("peak_rss_mb") or float("nan"))
        ok = report.done == 1 and peak <= BOUND_MB
        which = " ".join(f"{k}={v}" for k, v in labels.items())
        print(
            f"point-memory: {name} {which} quick: peak {peak / 1024:.2f} GB resident, "
            f"{wall:.0f} s wall ({'ok' if ok else 'OVER'}: bound {BOUND_MB / 1024:.0f} GB"
            f"{'' if report.done else ', point not done: ' + error}; {load()})",
            flush=True,
        )
        out[name] = peak
    return out
