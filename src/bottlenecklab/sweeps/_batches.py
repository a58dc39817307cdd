"""Batched first passes: a group of runs trained together before each run finishes alone.

An opt-in speed-up of `run_sweep` (e.g. an ensemble of same-shape networks). A batch
function gets the member requests and their run contexts and leaves in every member's
folder a checkpoint (and metrics rows) that the member's own run function resumes from, so
the per-run pass that follows completes each run exactly as if it had run alone. Batches
travel through the same executors as runs (one job per batch). A batch that fails costs
nothing but time: its members simply run one by one, from whatever checkpoint they have.
"""

from __future__ import annotations

import functools
import hashlib
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict

from bottlenecklab.sweeps._driver import Executor
from bottlenecklab.sweeps._execute import Settings, _resolve_device, set_threads
from bottlenecklab.sweeps._store import DONE, FAILED, MetricsLog, RunContext, RunRequest, RunStore

__all__ = ["BatchFunction", "execute_batch", "run_batches"]

BatchFunction = Callable[[list[RunRequest], list[RunContext]], None]


def _batch_request(members: Sequence[RunRequest]) -> RunRequest:
    ids = ",".join(m.run_id for m in members)
    digest = hashlib.sha256(ids.encode()).hexdigest()[:12]
    return RunRequest(
        run_id=f"batch-{digest}",
        config={},
        labels={"members": len(members)},
        payload={"members": [asdict(m) for m in members]},
    )


def _fresh(store: RunStore, request: RunRequest) -> bool:
    """Neither finished nor started: only such runs join a batch."""
    return not store.finished(request.run_id) and not store.checkpoint(request.run_id).is_file()


def execute_batch(batch_fn: BatchFunction, settings: Settings, batch: RunRequest) -> str:
    """One attempt at a batch (idempotent: members already started or done are left out).

    Returns `DONE` (also when fewer than two fresh members remain: nothing to batch) or
    `FAILED` (the traceback goes to `batch-failures.log` in the store's folder).
    """
    store = RunStore(settings.root)
    members = [RunRequest(**m) for m in batch.payload["members"]]
    members = [m for m in members if _fresh(store, m)]
    if len(members) < 2:
        return DONE
    set_threads(settings.threads)
    device = _resolve_device(settings.device)
    contexts = []
    for m in members:
        store.write_request(m)
        folder = store.folder(m.run_id)
        store.update_meta(m.run_id, batch=batch.run_id, batch_members=len(members))
        contexts.append(
            RunContext(
                folder=folder,
                checkpoint=store.checkpoint(m.run_id),
                resume=False,
                device=device,
                metrics=MetricsLog(folder / "metrics.csv"),
                progress=settings.progress,
            )
        )
    t0 = time.perf_counter()
    try:
        batch_fn(members, contexts)
    except Exception:
        log = settings.root / "batch-failures.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as f:
            f.write(f"== {batch.run_id} ({len(members)} runs)\n{traceback.format_exc()}\n")
        return FAILED
    for m in members:
        store.update_meta(m.run_id, batch_s=round(time.perf_counter() - t0, 3))
    return DONE


def run_batches(
    groups: Sequence[Sequence[RunRequest]],
    batch_fn: BatchFunction,
    executor: Executor,
    settings: Settings,
    *,
    log: Callable[[str], None] = print,
) -> tuple[int, int]:
    """Run each group of (fresh) requests as one batch job; returns (done, failed) batches.

    `log` gets a line per finished batch. `batch_fn` must be picklable (module level).
    Members of failed batches are left to the per-run pass (`run_sweep`), which resumes
    them from any checkpoint the batch wrote.
    """
    store = RunStore(settings.root)
    batches = []
    for group in groups:
        fresh = [r for r in group if _fresh(store, r)]
        if len(fresh) >= 2:
            batches.append(_batch_request(fresh))
    done = failed = 0
    if not batches:
        return done, failed
    job = functools.partial(execute_batch, batch_fn, settings)
    for b, status, error in executor.run(job, batches, lambda: None):
        if status == DONE:
            done += 1
        else:
            failed += 1
        what = "trained" if status == DONE else "failed (its runs go on one by one)"
        log(
            f"batch {done + failed}/{len(batches)}: {b.labels['members']} runs {what}"
            + (f": {error.strip().splitlines()[-1]}" if error else "")
        )
    return done, failed
