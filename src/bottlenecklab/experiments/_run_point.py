"""The science run function: train and measure one grid point into its run folder.

`run_point` is what every executor runs (it is picklable: the experiment travels by
name). It draws the data with the config's `seed` and the network with `seed + 1`,
streams the training log into the run's append-only `metrics.csv`, checkpoints
atomically, and resumes from the checkpoint when an earlier attempt was interrupted.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from bottlenecklab.config import from_dict
from bottlenecklab.experiments._record import (
    CertificateRecord,
    EarlierState,
    ExtensionRecord,
    flat,
)
from bottlenecklab.experiments._registry import get
from bottlenecklab.experiments._spec import PointResult
from bottlenecklab.experiments._verdicts import gate_of
from bottlenecklab.measure import certify, one_based
from bottlenecklab.sweeps import (
    Executor,
    RunContext,
    RunRequest,
    RunResult,
    Settings,
    run_batches,
)
from bottlenecklab.training import (
    TrainingDiverged,
    ensemble_phases,
    extend,
    load_checkpoint,
    save_checkpoint,
    train,
    train_ensemble,
)

__all__ = [
    "ensemble_groups",
    "point_result",
    "run_ensembles",
    "run_point",
    "train_point_ensemble",
]


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
        return RunResult(dict(m.scalars), m.all_tables(), info)
    data = cfg.task.build(seed=cfg.seed)
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
    outcome, message = "done", ""
    read = list(exp.recorded)
    gate = gate_of(cfg)
    earlier = _Earlier(ctx.checkpoint.parent, cfg.train, gate.earlier, model)
    keep = bool(read) and not gate.extension

    def on_log(row: dict[str, Any]) -> None:
        traced = exp.trace(model, cfg, row["step"]) if exp.trace is not None else {}
        ctx.metrics.append({**point, **row, **traced})
        if keep:
            earlier.offer(row)

    def on_phase(i: int, t: int) -> None:
        if keep and i == len(cfg.train.phases) - 1 and t == 0:
            earlier.start()

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
            on_log=on_log,
            on_phase=on_phase,
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
    if read:
        t0 = time.perf_counter()
        cert = certify(
            model, data, cfg.train.lam, cost=cfg.train.cost, tau=gate.tau, threshold=gate.threshold
        )
        scalars.update(flat(CertificateRecord.of(cert), None, None))
        scalars["certify_s"] = time.perf_counter() - t0
        if outcome != "done":
            prev = None
        elif gate.extension:
            ext = extend(model, data, cfg.train, gate.extension, ctx.checkpoint.parent, ctx.device)
            stationarity = certify(
                ext.model, data, cfg.train.lam, cost=cfg.train.cost, tau=gate.tau
            ).stationarity
            record = ExtensionRecord(
                float(ext.steps), ext.wall_s, ext.move, ext.loss_change, stationarity
            )
            scalars.update(flat(None, record, None))
            t0 = time.perf_counter()
            prev = (float(steps + ext.steps), exp.measure(ext.model, data, cfg))
            scalars["extension_measure_s"] = time.perf_counter() - t0
        else:
            prev = earlier.load(exp, cfg, data, model)
        if prev is not None:
            step, before = prev
            values = {k: before.scalars[k] for k in read if k in before.scalars}
            scalars.update(flat(None, None, EarlierState(float(step), values)))
    info = {"outcome": outcome, "message": message, "steps": steps, "wall_s": wall}
    return RunResult(dict(scalars), m.all_tables(), info)


class _Earlier:
    """The state of the network earlier in the last phase (value stability without an
    extension, spec `convergence.md` item 3), kept beside the checkpoint so that a resumed
    run still has it: `earlier.pt`, the first logged state at or after the earlier step
    while the phase still moved, and `phase_start.pt`, the state where the last phase
    began. `load` gives the former when it exists, else the latter: an earlier state
    exists however the last phase ends (at its step limit, stalled, or stopped by its
    method), and it is never a state of an optimizer that had already stopped.
    """

    def __init__(self, folder: Path, train_cfg: Any, fraction: float, model: nn.Module) -> None:
        last = train_cfg.phases[-1]
        self.begin = train_cfg.total_steps - last.steps
        self.step = self.begin + int(fraction * last.steps)
        self.end = train_cfg.total_steps
        self.path, self.start_path = folder / "earlier.pt", folder / "phase_start.pt"
        self.stalled_mark = folder / "earlier.stalled"
        self.model = model

    def _keep(self, path: Path, step: int) -> None:
        state = {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}
        save_checkpoint({"model": state, "step": step}, path)

    def start(self) -> None:
        """The last phase begins (not a resume inside it): keep its starting state."""
        if not self.start_path.exists():
            self._keep(self.start_path, self.begin)

    def offer(self, row: dict[str, Any]) -> None:
        """Keep the state of the first logged row at or after the earlier step, unless the
        phase's method had stopped by then (a `stopped_early` row: its state is the end
        state) or the row is the final one."""
        step = row["step"]
        if row.get("stopped_early") and step >= self.begin:
            self.stalled_mark.touch()
            return
        stalled = self.stalled_mark.exists()
        if self.step <= step < self.end and not stalled and not self.path.exists():
            self._keep(self.path, step)

    def load(self, exp: Any, cfg: Any, data: Any, model: nn.Module):
        """`(step, Measurement)` of the earlier state, or None when none was kept."""
        path = self.path if self.path.exists() else self.start_path
        if not path.exists():
            return None
        state = load_checkpoint(path)
        dtype = next(model.parameters()).dtype
        other = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
        other.load_state_dict(state["model"])
        return state["step"], exp.measure(other, data, cfg)


def _ensemble_key(request: RunRequest) -> str | None:
    """What members of one ensemble share: everything but the seed, `lam` and `L~` (whose
    sign they share); `None` for a run that cannot join one."""
    cfg = json.loads(json.dumps(request.config))
    train_cfg, model = cfg.get("train", {}), cfg.get("model", {})
    phases = train_cfg.get("phases") or []
    if not phases or phases[0].get("optimizer") == "lbfgs":
        return None
    cfg.pop("seed", None)
    train_cfg.pop("lam", None)
    if "leak" in model:
        model["leak"] = float(model["leak"]) > 0
    return json.dumps({"payload": request.payload.get("experiment"), "config": cfg}, sort_keys=True)


def ensemble_groups(requests: list[RunRequest], size: int) -> list[list[RunRequest]]:
    """Split training runs into ensembles of at most `size` same-shape networks.

    Members differ only in seed, `train.lam` and `model.leak`; runs of experiments that do
    not train or trace their training, and runs whose first phase is L-BFGS, are left out.
    Groups keep the order of `requests`; a group of one is dropped (it runs alone anyway).
    """
    by_key: dict[str, list[RunRequest]] = {}
    for r in requests:
        exp = get(r.payload["experiment"])
        if not exp.trains or exp.trace is not None:
            continue
        key = _ensemble_key(r)
        if key is not None:
            by_key.setdefault(key, []).append(r)
    groups = []
    for members in by_key.values():
        for i in range(0, len(members), size):
            if len(members[i : i + size]) >= 2:
                groups.append(members[i : i + size])
    return groups


def train_point_ensemble(requests: list[RunRequest], contexts: list[RunContext]) -> None:
    """Train the leading Adam/SGD phases of several runs as one ensemble (`train_ensemble`).

    Each run's folder then holds a checkpoint and metrics rows from which `run_point`
    finishes it (later phases, measurements) exactly as if it had trained alone.
    """
    cfgs, datas, models = [], [], []
    for r in requests:
        exp = get(r.payload["experiment"])
        cfg = from_dict(type(exp.config), r.config)
        data = cfg.task.build(seed=cfg.seed)
        dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
        cfgs.append(cfg.train)
        datas.append(data)
        models.append(cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype))
    if ensemble_phases(cfgs[0]) == 0:
        return
    points = [dict(r.payload.get("point", {})) for r in requests]
    loggers = [
        (lambda row, ctx=ctx, point=point: ctx.metrics.append({**point, **row}))
        for ctx, point in zip(contexts, points)
    ]
    train_ensemble(
        models,
        datas,
        cfgs,
        device=contexts[0].device,
        checkpoints=[ctx.checkpoint for ctx in contexts],
        on_log=loggers,
    )


def run_ensembles(
    requests: list[RunRequest],
    executor: Executor,
    settings: Settings,
    size: int,
    *,
    quiet: bool = False,
) -> tuple[int, int]:
    """Train the first-order phases of `requests` as ensembles of up to `size` members
    (one executor job each) before the per-run pass; returns (done, failed) ensembles."""
    if size < 2:
        return 0, 0
    groups = ensemble_groups(requests, size)
    log = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    return run_batches(groups, train_point_ensemble, executor, settings, log=log)


def point_result(
    row: dict[str, Any],
    point: dict[str, Any],
    layers: list[dict[str, Any]],
    spectra: list[dict[str, Any]],
    tables: dict[str, list[dict[str, Any]]] | None = None,
    metrics: list[dict[str, Any]] | None = None,
) -> PointResult:
    """A `PointResult` from its row of `summary.parquet`, its rows of the long tables and
    of `metrics.parquet`.

    A run with a result keeps its outcome (`done`, `diverged`: the latter is stored
    `FAILED` with its reason); a `FAILED` run without one becomes status `killed` where
    its worker process died (`meta.worker_exit`, with the signal and peak memory in the
    message), else `failed`, with the error as message.
    """
    scalars = {k[7:]: v for k, v in row.items() if k.startswith("metric.") and v is not None}
    if row.get("info.outcome"):
        status, message = row.get("info.outcome") or "done", row.get("info.message") or ""
    else:
        status, message = row["status"].lower(), row.get("error") or ""
        if status == "failed" and row.get("meta.worker_exit") is not None:
            status = "killed"
    strip = [{k: v for k, v in r.items() if k != "run_id"} for r in layers]
    return PointResult(
        id=row["run_id"],
        point=point,
        status=status,
        message=message,
        scalars=scalars,
        layers=strip,
        spectra=one_based([{k: v for k, v in r.items() if k != "run_id"} for r in spectra]),
        steps=int(row.get("info.steps") or 0),
        wall_s=float(row.get("info.wall_s") or 0.0),
        tables={
            name: [{k: v for k, v in r.items() if k != "run_id"} for r in rows]
            for name, rows in (tables or {}).items()
        },
        metrics=[{k: v for k, v in r.items() if k != "run_id"} for r in metrics or []],
    )
