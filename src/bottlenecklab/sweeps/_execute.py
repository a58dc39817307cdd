"""The worker side of a sweep: one guarded, idempotent attempt at one run.

`execute_run` is what every executor ships to its workers. It skips a `DONE` run, resumes
from a checkpoint left by an interrupted attempt, and turns any exception of the run
function into a `FAILED` status with the traceback on disk, so one poison run never stops
a sweep. Each attempt's peak resident memory goes into the run's `meta.json`
(`peak_rss_mb`). A worker that dies outright (killed, out of memory, node lost) leaves the run
`RUNNING` with its last checkpoint; the executor's retry calls `execute_run` again.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import subprocess
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bottlenecklab
from bottlenecklab.sweeps._memory import peak_rss_mb, reset_peak
from bottlenecklab.sweeps._store import (
    DONE,
    FAILED,
    RUNNING,
    MetricsLog,
    RunContext,
    RunRequest,
    RunResult,
    RunStore,
)

__all__ = ["RunFunction", "Settings", "execute_run", "git_commit", "set_threads"]

RunFunction = Callable[[RunRequest, RunContext], RunResult]


@dataclass(frozen=True)
class Settings:
    """How every run of a sweep executes.

    Args:
        root: the run store's folder.
        device: `auto` (CUDA when the worker sees one), `cpu` or `cuda`.
        threads: torch/BLAS threads per run (1 by default: results then do not depend on
            the executor or the number of jobs).
        git_commit: the commit of the code that launched the sweep (`None` outside git).
        progress: per-step progress bars of the run function (`None`: on a terminal);
            only sensible when runs execute in the driver's process.
    """

    root: Path
    device: str = "cpu"
    threads: int = 1
    git_commit: str | None = None
    progress: bool | None = False


def git_commit() -> str | None:
    """`git rev-parse HEAD` of the source tree of this package, or `None`."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(bottlenecklab.__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def set_threads(threads: int) -> None:
    """Use `threads` torch intra-op threads and `threads` BLAS/OpenMP threads in this
    process (numpy's and scipy's BLAS, already loaded: `threadpoolctl`), and tell later
    children. The BLAS limit matters for results, not only speed: scipy's trust-krylov
    Newton took another path with the machine's default BLAS threads than with one."""
    import torch
    from threadpoolctl import threadpool_limits

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    threadpool_limits(limits=threads)


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def _now() -> str:
    return _dt.datetime.now().isoformat(timespec="seconds")


def execute_run(run_fn: RunFunction, settings: Settings, request: RunRequest) -> str:
    """One attempt at `request` in the store under `settings.root`; returns its status.

    Idempotent: a finished run (`RunStore.finished`) returns its status at once; a run
    with a checkpoint resumes from it.
    """
    store = RunStore(settings.root)
    rid = request.run_id
    if store.finished(rid):
        return store.status(rid) or DONE
    store.write_request(request)
    folder = store.folder(rid)
    checkpoint = store.checkpoint(rid)
    meta = store.meta(rid)
    device = _resolve_device(settings.device)
    store.update_meta(
        rid,
        version=bottlenecklab.__version__,
        git_commit=settings.git_commit,
        python=platform.python_version(),
        host=socket.gethostname(),
        pid=os.getpid(),
        device=device,
        threads=settings.threads,
        seed=request.seed,
        attempts=int(meta.get("attempts", 0)) + 1,
        worker_exit=None,  # (an earlier attempt's death is history once this one runs)
        created=meta.get("created", _now()),
        started=_now(),
    )
    store.set_status(rid, RUNNING)
    set_threads(settings.threads)
    ctx = RunContext(
        folder=folder,
        checkpoint=checkpoint,
        resume=checkpoint.is_file(),
        device=device,
        metrics=MetricsLog(folder / "metrics.csv"),
        progress=settings.progress,
    )
    reset_peak()  # the run's own peak, also in a worker that ran others before
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        result = run_fn(request, ctx)
    except Exception:
        store.update_meta(rid, **_finished(t0, c0))
        store.write_failure(rid, traceback.format_exc())
        return FAILED
    store.update_meta(rid, **_finished(t0, c0))
    return store.write_result(rid, result)


def _finished(t0: float, c0: float) -> dict[str, object]:
    """An attempt's end in `meta.json`: when, how long (wall, and the CPU time of the
    process, which other jobs on the machine do not inflate), and its peak resident
    memory (MiB; the process's since the attempt began, where the platform can reset
    it)."""
    peak = peak_rss_mb()
    return {
        "finished": _now(),
        "last_attempt_s": round(time.perf_counter() - t0, 3),
        "last_attempt_cpu_s": round(time.process_time() - c0, 3),
        "peak_rss_mb": None if peak is None else round(peak, 1),
    }
