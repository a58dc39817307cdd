"""Running an experiment: resolve its config, train and measure every grid point, judge claims.

This is where `training` and `measure` are wired together. Each grid point lives in
`OUT/points/<id>/` (`id` = hash of the point's task, model, training and seed), with its
checkpoint, `metrics.csv` and `result.json`; a point with a `result.json` is never trained
again, so re-running or resuming a run only does what is missing.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import itertools
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

import bottlenecklab
from bottlenecklab.config import (
    ConfigError,
    apply_overrides,
    config_hash,
    from_dict,
    to_dict,
)
from bottlenecklab.experiments._spec import PRESETS, Claim, Experiment, PointResult
from bottlenecklab.training import (
    CheckpointError,
    TrainingDiverged,
    load_checkpoint,
    train,
)

__all__ = [
    "RunRecord",
    "check_resumable",
    "expand_points",
    "load_run",
    "point_id",
    "resolve_config",
    "resolve_device",
    "run_experiment",
    "run_point",
    "write_json",
]


@dataclass
class RunRecord:
    """A finished (or partly finished) run of an experiment, as written in its folder."""

    name: str
    out: Path
    meta: dict[str, Any]
    config: Any
    points: list[PointResult]
    claims: list[Claim]


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2, default=_json_default)
        f.write("\n")
    os.replace(tmp, path)


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


def expand_points(exp: Experiment, cfg: Any) -> list[tuple[dict[str, Any], Any]]:
    """The grid: one `(point values, point config)` per combination, in grid order."""
    if not exp.grid:
        return [({}, cfg)]
    keys = list(exp.grid)
    value_lists = [_grid_values(cfg, exp.grid[k]) for k in keys]
    points = []
    for combo in itertools.product(*value_lists):
        point = dict(zip(keys, combo))
        points.append((point, apply_overrides(cfg, point)))
    return points


def _grid_values(cfg: Any, field: str) -> tuple[Any, ...]:
    value = getattr(cfg, field)
    if not isinstance(value, tuple) or not value:
        raise ConfigError(f"{field!r} must be a non-empty list of values")
    return value


def point_id(cfg: Any) -> str:
    """Hash of what determines a training run: task, model, training and seed.

    Configs without a `train` field (experiments that do not train) hash whole.
    """
    if not hasattr(cfg, "train"):
        return config_hash(cfg)
    return config_hash({"task": cfg.task, "model": cfg.model, "train": cfg.train, "seed": cfg.seed})


def _desc(point: dict[str, Any]) -> str:
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in point.items()) or "train"


def run_point(
    exp: Experiment,
    cfg: Any,
    point: dict[str, Any],
    folder: Path,
    *,
    device: str = "cpu",
    resume: bool = False,
    progress: bool | None = None,
) -> PointResult:
    """Train and measure one grid point in `folder`; idempotent.

    A `result.json` already there is returned as is; a checkpoint is continued when
    `resume` is set. Data are drawn with `cfg.seed`, the network with `cfg.seed + 1`.
    """
    result_file = folder / "result.json"
    if result_file.is_file():
        return _read_point(result_file)
    folder.mkdir(parents=True, exist_ok=True)
    pid = point_id(cfg)
    if not exp.trains:
        t0 = time.perf_counter()
        m = exp.measure(None, None, cfg)
        res = PointResult(
            pid,
            point,
            "done",
            "",
            dict(m.scalars),
            m.layers,
            m.spectra,
            0,
            time.perf_counter() - t0,
        )
        write_json(result_file, dataclasses.asdict(res))
        return res
    data = cfg.task.build(seed=cfg.seed)
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
    ckpt = folder / "checkpoint.pt"
    status, message = "done", ""
    try:
        tr = train(
            model,
            data,
            cfg.train,
            device=device,
            checkpoint=ckpt,
            resume=resume and ckpt.is_file(),
            progress=progress,
            desc=_desc(point),
        )
        metrics, steps, wall = tr.metrics, tr.steps, tr.wall_s
    except TrainingDiverged as e:
        status, message = "diverged", str(e)
        state = load_checkpoint(ckpt)
        metrics, steps, wall = state["metrics"], state["steps"], state["wall_s"]
    _write_metrics(folder / "metrics.csv", metrics, point)
    model.to("cpu")
    t0 = time.perf_counter()
    m = exp.measure(model, data, cfg)
    scalars = dict(m.scalars)
    scalars["measure_s"] = time.perf_counter() - t0
    res = PointResult(
        id=pid,
        point=point,
        status=status,
        message=message,
        scalars=scalars,
        layers=m.layers,
        spectra=m.spectra,
        steps=steps,
        wall_s=wall,
    )
    write_json(result_file, dataclasses.asdict(res))
    return res


def _read_point(path: Path) -> PointResult:
    return PointResult(**json.loads(path.read_text()))


def _write_metrics(path: Path, rows: list[dict[str, Any]], point: dict[str, Any]) -> None:
    if not rows:
        return
    cols = list(point) + list(rows[0])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({**point, **r})


def check_resumable(out: Path, exp: Experiment, cfg: Any) -> None:
    """Refuse to resume a run that has nothing to resume or a damaged checkpoint.

    Reads every checkpoint of unfinished points before anything is written, so a refused
    resume overwrites nothing.
    """
    found = False
    for _, pcfg in expand_points(exp, cfg):
        folder = out / "points" / point_id(pcfg)
        if (folder / "result.json").is_file():
            found = True
        elif (folder / "checkpoint.pt").exists():
            load_checkpoint(folder / "checkpoint.pt")
            found = True
    if not found:
        raise CheckpointError(f"nothing to resume in {out}: no checkpoint or finished point")


def run_experiment(
    exp: Experiment,
    cfg: Any,
    out: Path,
    *,
    preset: str,
    overrides: Mapping[str, Any] | None = None,
    device: str = "cpu",
    resume: bool = False,
    progress: bool | None = None,
    log: Callable[[str], None] = lambda s: None,
) -> RunRecord:
    """Run every grid point of `exp` into `out` and judge the claims.

    Writes `config.json` (resolved config, preset, seed, version), `points/<id>/...`,
    `metrics.csv` (all points, one row per logged step) and `claims.json`.
    """
    out = Path(out)
    if resume and (out / "config.json").is_file():
        meta = json.loads((out / "config.json").read_text())
    else:
        meta = {
            "experiment": exp.name,
            "source": exp.source,
            "preset": preset,
            "seed": cfg.seed,
            "overrides": dict(overrides or {}),
            "version": bottlenecklab.__version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
            "device": device,
            "created": _dt.datetime.now().isoformat(timespec="seconds"),
            "config": to_dict(cfg),
        }
        write_json(out / "config.json", meta)
    points = expand_points(exp, cfg)
    results: list[PointResult] = []
    t0 = time.perf_counter()
    for i, (point, pcfg) in enumerate(points):
        log(f"[{i + 1}/{len(points)}] {exp.name} {_desc(point)}")
        res = run_point(
            exp,
            pcfg,
            point,
            out / "points" / point_id(pcfg),
            device=device,
            resume=resume,
            progress=progress,
        )
        if res.status != "done":
            log(f"  {res.message}")
        results.append(res)
    claims = exp.claims(cfg, results)
    meta["wall_s"] = round(time.perf_counter() - t0, 1) + (meta.get("wall_s", 0.0) if resume else 0)
    write_json(out / "config.json", meta)
    write_json(out / "claims.json", [dataclasses.asdict(c) for c in claims])
    _write_all_metrics(out, points)
    return RunRecord(exp.name, out, meta, cfg, results, claims)


def _write_all_metrics(out: Path, points: list[tuple[dict[str, Any], Any]]) -> None:
    rows: list[dict[str, str]] = []
    for _, pcfg in points:
        f = out / "points" / point_id(pcfg) / "metrics.csv"
        if f.is_file():
            with open(f, newline="") as fh:
                rows.extend({"point": point_id(pcfg), **r} for r in csv.DictReader(fh))
    if rows:
        cols = list(dict.fromkeys(k for r in rows for k in r))
        with open(out / "metrics.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)


def load_run(out: Path, experiments: Mapping[str, Experiment]) -> RunRecord:
    """Read a run folder written by `run_experiment` (for reports)."""
    out = Path(out)
    meta = json.loads((out / "config.json").read_text())
    exp = experiments[meta["experiment"]]
    cfg = from_dict(type(exp.config), meta["config"])
    results = []
    for _, pcfg in expand_points(exp, cfg):
        f = out / "points" / point_id(pcfg) / "result.json"
        if f.is_file():
            results.append(_read_point(f))
    claims_file = out / "claims.json"
    claims = []
    if claims_file.is_file():
        claims = [Claim(**c) for c in json.loads(claims_file.read_text())]
    return RunRecord(exp.name, out, meta, cfg, results, claims)
