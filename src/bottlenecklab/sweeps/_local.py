"""The `local` executor: runs in this process (1 job) or in a process pool (`--jobs N`)."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from bottlenecklab._console import one_line_warnings
from bottlenecklab.sweeps._execute import set_threads
from bottlenecklab.sweeps._store import FAILED, RunRequest

__all__ = ["LocalExecutor"]

Job = Callable[[RunRequest], str]


def _die_with_driver(driver_pid: int) -> None:
    """A pool worker ends when its driver does (Linux): a killed sweep must not leave
    orphans that go on writing run folders while the sweep is run again."""
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != driver_pid:  # the driver died before the line above
        os._exit(1)


def _init_worker(threads: int, driver_pid: int) -> None:
    """A pool worker: dies with the driver, its thread count, warnings on one line."""
    _die_with_driver(driver_pid)
    set_threads(threads)
    one_line_warnings()


class LocalExecutor:
    """Runs the jobs of a sweep on this machine.

    Args:
        jobs: runs at once. `1` runs them one after the other in this process (progress
            bars and Ctrl-C behave as in a plain run); more use a pool of `jobs` spawned
            worker processes, each with `Settings.threads` torch/BLAS threads.
        max_retries: how often runs are resubmitted after a worker process died (the pool
            cannot tell which run killed it: every run in flight is charged a retry).
    """

    name = "local"

    def __init__(self, jobs: int = 1, *, threads: int = 1, max_retries: int = 3) -> None:
        if jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {jobs}")
        self.jobs = jobs
        self.threads = threads
        self.max_retries = max_retries

    def run(
        self, job: Job, requests: Sequence[RunRequest], tick: Callable[[], None]
    ) -> Iterator[tuple[RunRequest, str, str]]:
        """Yield `(request, status, error)` as runs finish (`error` only if the job died)."""
        if self.jobs == 1:
            for r in requests:
                tick()
                yield r, job(r), ""
            return
        yield from self._pool(job, list(requests), tick)

    def _pool(
        self, job: Job, pending: list[RunRequest], tick: Callable[[], None]
    ) -> Iterator[tuple[RunRequest, str, str]]:
        retries: Counter[str] = Counter()
        ctx = multiprocessing.get_context("spawn")  # no fork after torch started threads
        while pending:
            pool = ProcessPoolExecutor(
                max_workers=min(self.jobs, len(pending)),
                mp_context=ctx,
                initializer=_init_worker,
                initargs=(self.threads, os.getpid()),
            )
            futures: dict[Future[str], RunRequest] = {pool.submit(job, r): r for r in pending}
            pending = []
            try:
                while futures:
                    done, _ = wait(futures, timeout=1.0, return_when=FIRST_COMPLETED)
                    tick()
                    for f in done:
                        r = futures.pop(f)
                        try:
                            yield r, f.result(), ""
                        except BrokenProcessPool:
                            retries[r.run_id] += 1
                            if retries[r.run_id] > self.max_retries:
                                why = f"worker process died {retries[r.run_id]} times"
                                yield r, FAILED, why
                            else:
                                pending.append(r)
                        except Exception:
                            yield r, FAILED, traceback.format_exc()
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
