"""Running an experiment: resolve its config, run every grid point through the sweep
machinery, collect the tables, judge the claims.

A run folder `OUT/` holds `config.json` (resolved config, preset, seed, version),
`points/` (a run store: one folder per grid point keyed by the hash of its resolved config,
see `bottlenecklab.sweeps.RunStore`), `summary.parquet` (a row per point) with the long
tables `layers.parquet`, `spectra.parquet`, `metrics.parquet`, the combined `metrics.csv`
and `claims.json`. A `DONE` point is never trained again and an interrupted one resumes
from its checkpoint, so re-running or resuming a run only does what is missing. Figures
and `RunRecord.points` are read back from the tables.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime as _dt
import functools
import json
import os
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

import bottlenecklab
from bottlenecklab import files
from bottlenecklab.config import ConfigError, apply_overrides, from_dict, to_dict
from bottlenecklab.experiments._point_times import expected_seconds
from bottlenecklab.experiments._points import point_requests
from bottlenecklab.experiments._run_point import point_result, run_ensembles, run_point
from bottlenecklab.experiments._spec import PRESETS, Claim, Experiment, PointResult
from bottlenecklab.experiments._verdicts import verdicts
from bottlenecklab.files import atomic_writer
from bottlenecklab.sweeps import (
    Executor,
    LocalExecutor,
    Progress,
    RunRequest,
    RunStore,
    Settings,
    collect,
    git_commit,
    read_rows,
    run_sweeps,
)
from bottlenecklab.training import CheckpointError, check_smoothable, load_checkpoint

__all__ = [
    "Job",
    "RunRecord",
    "check_resumable",
    "load_run",
    "point_time_s",
    "resolve_config",
    "resolve_device",
    "run_experiment",
    "run_experiments",
    "total_wall_s",
    "write_json",
]


@dataclass
class RunRecord:
    """A finished (or partly finished) run of an experiment, as read from its tables.

    Args:
        tables: the run's tables as rows (`summary`, `layers`, `spectra`, `metrics`).
    """

    name: str
    out: Path
    meta: dict[str, Any]
    config: Any
    points: list[PointResult]
    claims: list[Claim]
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file, then rename); dataclasses, paths, arrays allowed."""
    files.write_json(path, obj, default=_json_default)


def _json_default(o: Any) -> Any:
    if dataclasses.is_dataclass(o):
        return dataclasses.asdict(o)
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def resolve_device(device: str) -> str:
    """`auto` -> `cuda` when available else `cpu`; `cuda` without a GPU is an error."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: no CUDA device is available here (use cpu or auto)")
    if device not in ("cpu", "cuda"):
        raise ConfigError(f"--device must be auto, cpu or cuda, got {device!r}")
    return device


def resolve_config(
    exp: Experiment,
    preset: str = "quick",
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> Any:
    """The experiment's config with the preset, then `--set` overrides, then `--seed`.

    Overriding a key that the experiment sweeps (a `grid` key) is refused: set the list of
    values instead.
    """
    if preset not in PRESETS:
        raise ConfigError(f"--preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    cfg = apply_overrides(exp.config, exp.presets.get(preset, {}))
    overrides = dict(overrides or {})
    for key in overrides:
        if key in exp.grid:
            raise ConfigError(
                f"{key!r} is swept by {exp.name}; set {exp.grid[key]!r} (its list of values)"
            )
    cfg = apply_overrides(cfg, overrides)
    if seed is not None:
        cfg = apply_overrides(cfg, {"seed": seed})
    return cfg


def check_resumable(out: Path, exp: Experiment, cfg: Any) -> None:
    """Refuse to resume a run that has nothing to resume or a damaged checkpoint.

    Reads every checkpoint of unfinished points before anything is written, so a refused
    resume overwrites nothing.
    """
    store = RunStore(Path(out) / "points")
    found = False
    for req in point_requests(exp, cfg):
        if store.finished(req.run_id):
            found = True
        elif store.checkpoint(req.run_id).exists():
            load_checkpoint(store.checkpoint(req.run_id))
            found = True
    if not found:
        raise CheckpointError(f"nothing to resume in {out}: no checkpoint or finished point")


def _new_meta(exp, cfg, preset, overrides, device) -> dict[str, Any]:
    return {
        "experiment": exp.name,
        "source": exp.source,
        "preset": preset,
        "seed": cfg.seed,
        "overrides": dict(overrides or {}),
        "version": bottlenecklab.__version__,
        "git_commit": git_commit(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "config": to_dict(cfg),
    }


def run_experiment(
    exp: Experiment,
    cfg: Any,
    out: Path,
    *,
    preset: str,
    overrides: Mapping[str, Any] | None = None,
    device: str = "cpu",
    resume: bool | str = False,
    progress: bool | None = None,
    log: Callable[[str], None] = lambda s: None,
    executor: Executor | None = None,
    threads: int = 1,
    ensemble: int = 0,
) -> RunRecord:
    """Run every grid point of `exp` into `out` through `executor` and judge the claims.

    Args:
        executor: `LocalExecutor(1)` (in this process) by default; any sweep executor.
        threads: torch threads per point (1: results do not depend on the executor).
        ensemble: train same-shape points (e.g. an `L~` sweep) in ensembles of up to this
            many networks first (`train_ensemble`; 0 = off), then finish each point alone.
        progress: show done/failed/running counts on the terminal (default: if a TTY).

    One process per run folder: another one on `out` refuses (`files.FolderLocked`).
    """
    job = Job(exp, cfg, Path(out), preset, overrides, resume)
    return run_experiments(
        [job],
        device=device,
        progress=progress,
        log=log,
        executor=executor,
        threads=threads,
        ensemble=ensemble,
    )[0]


@dataclass
class Job:
    """One experiment of `run_experiments`: its config, run folder, preset, the overrides
    it was resolved with, and whether to resume (`True`, or `"strict"`)."""

    exp: Experiment
    cfg: Any
    out: Path
    preset: str
    overrides: Mapping[str, Any] | None = None
    resume: bool | str = False


def run_experiments(
    jobs: list[Job],
    *,
    device: str = "cpu",
    progress: bool | None = None,
    log: Callable[[str], None] = lambda s: None,
    executor: Executor | None = None,
    threads: int = 1,
    ensemble: int = 0,
    on_record: Callable[[RunRecord], None] = lambda r: None,
) -> list[RunRecord]:
    """`run_experiment` for several experiments sharing one executor: the grid points of
    all of them are queued at once (`sweeps.run_sweeps`), longest first by the times the
    last full run measured (`_point_times`), so a long point does not start last and a
    one-point experiment runs beside the next one's points instead of leaving workers
    idle. Each experiment's tables, claims and `config.json` are written as by
    `run_experiment`; its `wall_s` is then the shared wall time (`shared`: how many
    experiments), `points_s` the sum of its own points' times. `on_record` is called with
    each finished record, in job order.
    """
    executor = executor or LocalExecutor(1, threads=threads)
    with contextlib.ExitStack() as locks:
        for job in jobs:
            locks.enter_context(files.FolderLock(job.out))
        t0 = time.perf_counter()
        call = f"{_dt.datetime.now().isoformat(timespec='seconds')}-{os.getpid()}"
        batches, metas = [], []
        for job in jobs:  # refused before anything is written
            _check_smoothing(job.exp, point_requests(job.exp, job.cfg))
        for job in jobs:
            if job.resume and (job.out / "config.json").is_file():
                meta = json.loads((job.out / "config.json").read_text())
            else:
                meta = _new_meta(job.exp, job.cfg, job.preset, job.overrides, device)
                write_json(job.out / "config.json", meta)
            metas.append(meta)
            requests = point_requests(job.exp, job.cfg)
            log(f"{job.exp.name}: {len(requests)} point(s) on the {executor.name} executor")
            in_process = isinstance(executor, LocalExecutor) and executor.jobs == 1
            bars = progress if in_process else False  # per-step bars only from this process
            root = job.out / "points"
            settings = Settings(root, device, threads, meta.get("git_commit"), bars)
            run_ensembles(requests, executor, settings, ensemble, quiet=progress is False)
            batches.append((requests, settings))
        in_process = isinstance(executor, LocalExecutor) and executor.jobs == 1
        total = sum(len(r) for r, _ in batches)
        # Counts: a line per finished point next to in-process bars, a rewritten line otherwise.
        counts = Progress(total, show=False if in_process else None, quiet=progress is False)
        presets = {r.run_id: j.preset for j, (reqs, _) in zip(jobs, batches) for r in reqs}
        cost = functools.partial(_expected_seconds, presets)
        run_sweeps(batches, run_point, executor, progress=counts, cost=cost)
        records = []
        for job, meta, (requests, _) in zip(jobs, metas, batches):
            record = _finish(job, meta, requests, time.perf_counter() - t0, len(jobs), call)
            on_record(record)
            records.append(record)
        return records


def _expected_seconds(presets: dict[str, str], request: RunRequest) -> float | None:
    """The measured seconds of `request` at its job's preset (`_point_times`)."""
    return expected_seconds(presets.get(request.run_id, ""), request)


def _finish(
    job: Job, meta: dict[str, Any], requests: list[RunRequest], wall: float, shared: int, call: str
) -> RunRecord:
    """Collect the tables of a finished grid, judge the claims, write `claims.json`."""
    exp, cfg, out = job.exp, job.cfg, job.out
    store = RunStore(out / "points")
    collect(store, out, [r.run_id for r in requests])
    _write_all_metrics(out, store, requests)
    record = load_run(out, {exp.name: exp})
    claims = verdicts(exp, cfg, record.points)
    point_s = [store.meta(r.run_id).get("last_attempt_s") for r in requests]
    meta["points_s"] = round(sum(float(t or 0.0) for t in point_s), 1)  # its own work
    meta["shared"] = shared  # experiments whose points shared the executor (wall_s)
    meta["call"] = call  # the run_experiments call: one wall time per call
    meta["wall_s"] = round(wall, 1) + (meta.get("wall_s", 0.0) if job.resume else 0)
    write_json(out / "config.json", meta)
    write_json(out / "claims.json", [dataclasses.asdict(c) for c in claims])
    return dataclasses.replace(record, meta=meta, claims=claims)


def _check_smoothing(exp: Experiment, requests: list[RunRequest]) -> None:
    """A smoothed phase (`PhaseConfig.smooth`) on a network it cannot smooth is refused
    before any point runs (one line), checked on the first point's data and model."""
    if not exp.trains or not requests:
        return
    cfg = from_dict(type(exp.config), requests[0].config)
    if not any(p.smooth for p in cfg.train.phases):
        return
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1)
    check_smoothable(
        model, torch.as_tensor(data.x_train[:4], dtype=torch.float32), cfg.train.phases
    )


def total_wall_s(metas: list[dict[str, Any]]) -> float:
    """Wall time of the runs whose `config.json` are `metas`: experiments that shared one
    `run_experiments` call (`call`) count that call's time once."""
    calls: dict[Any, float] = {}
    for i, meta in enumerate(metas):
        key = meta.get("call") or ("own", i)
        calls[key] = max(calls.get(key, 0.0), float(meta.get("wall_s") or 0.0))
    return sum(calls.values())


def point_time_s(meta: dict[str, Any]) -> float:
    """Seconds an experiment's own points took (`points_s`; `wall_s` for older runs)."""
    return float(meta.get("points_s", meta.get("wall_s")) or 0.0)


def _write_all_metrics(out: Path, store: RunStore, requests: list[RunRequest]) -> None:
    """`OUT/metrics.csv`: every point's log, tagged with its id (the `point` column)."""
    rows: list[dict[str, str]] = []
    for req in requests:
        f = store.folder(req.run_id) / "metrics.csv"
        if f.is_file():
            with open(f, newline="") as fh:
                rows.extend({"point": req.run_id, **r} for r in csv.DictReader(fh))
    if rows:
        cols = list(dict.fromkeys(k for r in rows for k in r))
        with atomic_writer(out / "metrics.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)


def load_run(out: Path, experiments: Mapping[str, Experiment]) -> RunRecord:
    """Read a run folder written by `run_experiment` from its tables (for reports)."""
    out = Path(out)
    meta = json.loads((out / "config.json").read_text())
    exp = experiments[meta["experiment"]]
    cfg = from_dict(type(exp.config), meta["config"])
    fixed = ("summary", "layers", "spectra", "metrics")
    named = sorted(p.stem for p in out.glob("*.parquet") if p.stem not in fixed)
    tables = {name: read_rows(out / f"{name}.parquet") for name in (*fixed, *named)}
    by_id = {row["run_id"]: row for row in tables["summary"]}
    per_run: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in ("layers", "spectra", "metrics", *named):
        for row in tables[name]:
            per_run.setdefault(row["run_id"], {}).setdefault(name, []).append(row)
    points = []
    for req in point_requests(exp, cfg):
        row = by_id.get(req.run_id)
        if row is not None and row["status"] in ("DONE", "FAILED"):
            own = per_run.get(req.run_id, {})
            points.append(
                point_result(
                    row,
                    req.payload["point"],
                    own.get("layers", []),
                    own.get("spectra", []),
                    {name: own.get(name, []) for name in named},
                    own.get("metrics", []),
                )
            )
    claims_file = out / "claims.json"
    claims = []
    if claims_file.is_file():
        claims = [Claim(**c) for c in json.loads(claims_file.read_text())]
    return RunRecord(exp.name, out, meta, cfg, points, claims, tables)
