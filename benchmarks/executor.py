"""The local executor: 1 job vs 2 jobs on the same 4 runs (one torch thread per run).

Runs are quick-size (the flagship's quick network, N = 300, w = 40, L = 30, float64,
1500 Adam steps: ~10 s each), so that starting a worker process (importing torch, ~3 s)
is paid once per worker, as in a real sweep, and does not dominate.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks._common import load, timed
from bottlenecklab.experiments import get, point_requests, resolve_config, run_point
from bottlenecklab.sweeps import LocalExecutor, Settings, run_sweep

RUNS = 4


def _requests():
    exp = get("leaky-resnet/hamiltonian-vs-depth")
    cfg = resolve_config(
        exp,
        "quick",
        {
            "leaks": (6.0, 12.0),
            "train.phases": ({"optimizer": "adam", "steps": 1500, "lr": 1e-3},),
            "train.checkpoint_every": 500,
        },
    )
    reqs = []
    for seed in range(RUNS // 2):
        reqs += point_requests(exp, cfg.__class__(**{**cfg.__dict__, "seed": seed}))
    return reqs


def main() -> dict[str, float]:
    """Run the benchmark and print one line; returns the timings."""
    reqs = _requests()
    times = {}
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(Path(tmp), threads=1)
            times[jobs], _ = timed(
                lambda: run_sweep(reqs, run_point, LocalExecutor(jobs), settings)  # noqa: B023
            )
    print(
        f"executor: {len(reqs)} runs: 1 job {times[1]:.1f} s, 2 jobs {times[2]:.1f} s -> "
        f"{times[1] / times[2]:.2f}x (target >= 1.6x on 2 cores; {load()})",
        flush=True,
    )
    return {"jobs1_s": times[1], "jobs2_s": times[2], "ratio": times[1] / times[2]}
