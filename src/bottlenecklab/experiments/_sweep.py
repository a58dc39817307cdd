"""Sweep files over experiments: a spec becomes run requests, run into a run store.

    bottlenecklab sweep examples/sweep-demo.yaml --jobs 2

`OUT/runs/` is the run store (one folder per run), `OUT/summary.parquet` a row per run,
`OUT/layers.parquet`, `OUT/spectra.parquet`, `OUT/metrics.parquet` the long tables,
`OUT/sweep.json` the parsed spec. Re-running the same spec into the same `OUT` trains only
what is missing.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bottlenecklab.config import ConfigError, apply_overrides, from_dict
from bottlenecklab.experiments._points import point_requests
from bottlenecklab.experiments._registry import UnknownExperiment, get
from bottlenecklab.experiments._run_point import run_ensembles, run_point
from bottlenecklab.experiments._runner import resolve_config, write_json
from bottlenecklab.experiments._spec import Experiment
from bottlenecklab.sweeps import (
    Executor,
    Progress,
    RunRequest,
    RunStore,
    Settings,
    SpecError,
    SweepReport,
    SweepSpec,
    collect,
    expand_grid,
    git_commit,
    run_sweep,
)

__all__ = ["run_sweep_spec", "sweep_requests"]


def _base(spec: SweepSpec) -> tuple[Experiment, Any]:
    if spec.base is not None:
        try:
            meta = json.loads(spec.base.read_text())
            exp = get(meta["experiment"])
            return exp, from_dict(type(exp.config), meta["config"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SpecError(f"base {spec.base} is not a run's config.json ({e})") from None
    try:
        exp = get(str(spec.experiment))
    except UnknownExperiment as e:
        raise SpecError(str(e)) from None
    return exp, resolve_config(exp, spec.preset)


def sweep_requests(spec: SweepSpec) -> tuple[Experiment, list[RunRequest]]:
    """Every run of a sweep: grid x seeds x repeats x the experiment's own grid.

    A grid (or `set`) key that the experiment sweeps itself pins that sweep to the value.
    """
    exp, cfg = _base(spec)
    try:
        fixed_set = {k: v for k, v in spec.overrides.items() if k in exp.grid}
        cfg = apply_overrides(cfg, {k: v for k, v in spec.overrides.items() if k not in exp.grid})
        requests: list[RunRequest] = []
        points = expand_grid(spec.grid, spec.seeds, order=spec.order, order_seed=spec.order_seed)
        for labels in points:
            fixed = {**fixed_set, **{k: v for k, v in labels.items() if k in exp.grid}}
            pcfg = apply_overrides(cfg, {k: v for k, v in labels.items() if k not in exp.grid})
            if fixed:  # a pinned grid value is checked like any other override
                apply_overrides(pcfg, fixed)
            for repeat in range(spec.repeats):
                requests += point_requests(exp, pcfg, labels, fixed=fixed, repeat=repeat)
    except (ConfigError, ValueError) as e:
        raise SpecError(f"sweep: {e}") from None
    return exp, requests


def run_sweep_spec(
    spec: SweepSpec,
    out: Path,
    executor: Executor,
    *,
    device: str = "cpu",
    threads: int = 1,
    progress: Progress | None = None,
    ensemble: int | None = None,
) -> tuple[SweepReport, dict[str, Path]]:
    """Run a sweep into `out` (skipping `DONE` runs) and collect its tables.

    `ensemble` (default: the spec's option): train same-shape runs in ensembles of up to
    that many networks first (`train_ensemble`), then finish every run on its own.
    """
    exp, requests = sweep_requests(spec)
    out = Path(out)
    write_json(
        out / "sweep.json",
        {**asdict(spec), "base": str(spec.base) if spec.base else None, "runs": len(requests)},
    )
    settings = Settings(out / "runs", device, threads, git_commit())
    size = spec.ensemble if ensemble is None else ensemble
    run_ensembles(requests, executor, settings, size, quiet=bool(progress and progress.quiet))
    report = run_sweep(requests, run_point, executor, settings, progress=progress)
    ids = list(dict.fromkeys(r.run_id for r in requests))
    tables = collect(RunStore(out / "runs"), out, ids)
    return report, tables
