"""The science run function: train and measure one grid point into its run folder.

`run_point` is what every executor runs (it is picklable: the experiment travels by
name). It draws the data with the config's `seed` and the network with `seed + 1`,
streams the training log into the run's append-only `metrics.csv`, checkpoints
atomically, and resumes from the checkpoint when an earlier attempt was interrupted.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from bottlenecklab.config import from_dict
from bottlenecklab.experiments._registry import get
from bottlenecklab.experiments._spec import PointResult
from bottlenecklab.sweeps import RunContext, RunRequest, RunResult
from bottlenecklab.training import TrainingDiverged, load_checkpoint, train

__all__ = ["point_result", "run_point"]


def _desc(point: dict[str, Any]) -> str:
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in point.items()) or "train"


def run_point(request: RunRequest, ctx: RunContext) -> RunResult:
    """Train (unless the experiment does not) and measure the run of `request`."""
    exp = get(request.payload["experiment"])
    cfg = from_dict(type(exp.config), request.config)
    point = dict(request.payload.get("point", {}))
    if not exp.trains:
        t0 = time.perf_counter()
        m = exp.measure(None, None, cfg)
        info = {"outcome": "done", "message": "", "steps": 0, "wall_s": time.perf_counter() - t0}
        return RunResult(dict(m.scalars), {"layers": m.layers, "spectra": m.spectra}, info)
    data = cfg.task.build(seed=cfg.seed)
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
    outcome, message = "done", ""
    try:
        tr = train(
            model,
            data,
            cfg.train,
            device=ctx.device,
            checkpoint=ctx.checkpoint,
            resume=ctx.resume,
            progress=ctx.progress,
            desc=_desc(point),
            on_log=lambda row: ctx.metrics.append({**point, **row}),
        )
        steps, wall = tr.steps, tr.wall_s
    except TrainingDiverged as e:
        outcome, message = "diverged", str(e)
        state = load_checkpoint(ctx.checkpoint)
        steps, wall = state["steps"], state["wall_s"]
    model.to("cpu")
    t0 = time.perf_counter()
    m = exp.measure(model, data, cfg)
    scalars = {**m.scalars, "measure_s": time.perf_counter() - t0}
    info = {"outcome": outcome, "message": message, "steps": steps, "wall_s": wall}
    return RunResult(scalars, {"layers": m.layers, "spectra": m.spectra}, info)


def point_result(
    row: dict[str, Any],
    point: dict[str, Any],
    layers: list[dict[str, Any]],
    spectra: list[dict[str, Any]],
) -> PointResult:
    """A `PointResult` from its row of `summary.parquet` and its rows of the long tables.

    A `FAILED` run becomes status `failed` with the error as message.
    """
    scalars = {k[7:]: v for k, v in row.items() if k.startswith("metric.") and v is not None}
    if row["status"] == "DONE":
        status, message = row.get("info.outcome") or "done", row.get("info.message") or ""
    else:
        status, message = row["status"].lower(), row.get("error") or ""
    strip = [{k: v for k, v in r.items() if k != "run_id"} for r in layers]
    return PointResult(
        id=row["run_id"],
        point=point,
        status=status,
        message=message,
        scalars=scalars,
        layers=strip,
        spectra=[{k: v for k, v in r.items() if k != "run_id"} for r in spectra],
        steps=int(row.get("info.steps") or 0),
        wall_s=float(row.get("info.wall_s") or 0.0),
    )
