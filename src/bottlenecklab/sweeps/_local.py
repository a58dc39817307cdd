"""The `local` executor: runs in this process (1 job) or in `jobs` worker processes.

With several jobs, each worker is a spawned process that runs one run at a time; the
driver knows which run each worker holds, so a worker that dies (killed by the kernel's
OOM killer, a signal, `os._exit`) costs only its own run: the run is recorded with the
signal and the worker's peak resident memory (sampled from `/proc` while it ran), and
the other workers go on. Runs start as cores (`jobs`) *and* memory allow: another run
starts only while the memory available, less what the runs in flight may still grow to,
holds one more run's budget (`memory_mb`, raised to the largest peak a run of the sweep
has shown).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from bottlenecklab._console import one_line_warnings
from bottlenecklab.sweeps._execute import set_threads
from bottlenecklab.sweeps._memory import available_mb, peak_rss_mb, reset_peak, rss_mb
from bottlenecklab.sweeps._store import FAILED, RunRequest

__all__ = ["JOB_MEMORY_MB", "Killed", "LocalExecutor"]

Job = Callable[[RunRequest], str]

JOB_MEMORY_MB = 2048.0  # a run's memory budget until runs show more (a quick point's bound)
SAMPLE_S = 0.25  # how often the workers' peak memory is read (the last read before a death)


def _die_with_driver(driver_pid: int) -> None:
    """A worker ends when its driver does (Linux): a killed sweep must not leave orphans
    that go on writing run folders while the sweep is run again."""
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != driver_pid:  # the driver died before the line above
        os._exit(1)


def _init_worker(threads: int, driver_pid: int) -> None:
    """A worker: dies with the driver, its thread count, warnings on one line."""
    _die_with_driver(driver_pid)
    set_threads(threads)
    one_line_warnings()


def _worker(conn: Connection, threads: int, driver_pid: int) -> None:
    """A worker's loop: receive `(job, request)`, send `(ok, status or traceback)`; stop
    on `None`."""
    _init_worker(threads, driver_pid)
    while True:
        reset_peak()  # the driver reads the peak of the next run only (from /proc)
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        job, request = task
        try:
            conn.send((True, job(request)))
        except Exception:
            conn.send((False, traceback.format_exc()))


class Killed(str):
    """The one-line failure record of a run whose worker process died, with the exit code
    (`signal`: the signal that killed it, or None for an exit) and the worker's peak
    resident memory while it held the run (`peak_mb`, MiB, None where unknown)."""

    signal: int | None
    code: int
    peak_mb: float | None

    def __new__(cls, code: int, peak_mb: float | None, attempts: int) -> Killed:
        sig = -code if code < 0 else None
        if sig is not None:
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            what = f"killed by {name} (signal {sig})"
        else:
            what = f"worker process exited with code {code}"
        peak = "" if peak_mb is None else f" at a peak of {peak_mb / 1024:.2f} GB resident"
        oom = " (the kernel's out-of-memory kill)" if sig == signal.SIGKILL else ""
        tries = f", {attempts} attempts" if attempts > 1 else ""
        self = super().__new__(cls, f"{what}{peak}{oom}{tries}")
        self.signal, self.code, self.peak_mb = sig, code, peak_mb
        return self


@dataclass
class _Slot:
    """One worker process and the run it holds (`solo`: no other run beside it;
    `crowded`: another run was in flight at some time while it ran)."""

    process: Any
    conn: Connection
    request: RunRequest | None = None
    peak_mb: float | None = None
    solo: bool = False
    crowded: bool = False


class LocalExecutor:
    """Runs the jobs of a sweep on this machine.

    Args:
        jobs: runs at once, at most. `1` runs them one after the other in this process
            (progress bars and Ctrl-C behave as in a plain run); more use `jobs` spawned
            worker processes, each with `threads` torch/BLAS threads.
        max_retries: how often a run is tried again after its worker process died. A run
            killed by `SIGKILL` (the OOM killer's signal) is tried again once at most, and
            only if other runs were in flight beside it; it then runs alone.
        memory_mb: a run's memory budget (MiB) before any run of the sweep has shown its
            peak; another run starts only while the memory available covers it.
    """

    name = "local"

    def __init__(
        self,
        jobs: int = 1,
        *,
        threads: int = 1,
        max_retries: int = 3,
        memory_mb: float = JOB_MEMORY_MB,
    ) -> None:
        if jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {jobs}")
        self.jobs = jobs
        self.threads = threads
        self.max_retries = max_retries
        self.memory_mb = memory_mb

    def run(
        self, job: Job, requests: Sequence[RunRequest], tick: Callable[[], None]
    ) -> Iterator[tuple[RunRequest, str, str]]:
        """Yield `(request, status, error)` as runs finish (`error` only if the job died)."""
        if self.jobs == 1:
            for r in requests:
                tick()
                yield r, job(r), ""
            return
        yield from self._workers(job, list(requests), tick)

    def _workers(
        self, job: Job, requests: list[RunRequest], tick: Callable[[], None]
    ) -> Iterator[tuple[RunRequest, str, str]]:
        ctx = multiprocessing.get_context("spawn")  # no fork after torch started threads
        pending: deque[RunRequest] = deque(requests)
        alone: deque[RunRequest] = deque()  # killed beside others: again, with none beside
        retries: Counter[str] = Counter()
        slots: list[_Slot] = []
        budget = self.memory_mb

        def busy() -> list[_Slot]:
            return [s for s in slots if s.request is not None]

        def may_start() -> bool:
            running = busy()
            if not running:
                return True
            if alone or len(running) >= self.jobs or any(s.solo for s in running):
                return False
            free = available_mb()
            if free is None:
                return True
            growth = sum(max(0.0, budget - (rss_mb(s.process.pid) or 0.0)) for s in running)
            return free - growth >= budget

        def give(r: RunRequest, solo: bool) -> None:
            idle = [s for s in slots if s.request is None]
            if idle:
                slot = idle[0]
            else:
                here, there = ctx.Pipe()
                p = ctx.Process(
                    target=_worker, args=(there, self.threads, os.getpid()), daemon=True
                )
                p.start()
                there.close()
                slot = _Slot(p, here)
                slots.append(slot)
            others = [s for s in busy() if s is not slot]
            slot.request, slot.peak_mb, slot.solo, slot.crowded = r, None, solo, bool(others)
            for s in others:
                s.crowded = True
            slot.conn.send((job, r))

        try:
            while pending or alone or busy():
                while (alone or pending) and may_start():
                    give(*((alone.popleft(), True) if alone else (pending.popleft(), False)))
                running = busy()
                wait([s.conn for s in running] + [s.process.sentinel for s in running], SAMPLE_S)
                tick()
                for s in running:
                    peak = peak_rss_mb(s.process.pid)
                    if peak is not None:
                        s.peak_mb = max(s.peak_mb or 0.0, peak)
                for s in running:
                    r = s.request
                    if r is None or not (s.conn.poll() or not s.process.is_alive()):
                        continue
                    try:
                        ok, value = s.conn.recv()
                    except (EOFError, OSError):  # the worker died holding the run
                        s.process.join(5.0)
                        code = s.process.exitcode
                        slots.remove(s)
                        s.request = None
                        retries[r.run_id] += 1
                        again = self._again(code, s.crowded, retries[r.run_id])
                        if again == "alone":
                            alone.append(r)
                        elif again == "retry":
                            pending.appendleft(r)
                        else:
                            yield r, FAILED, Killed(code or 0, s.peak_mb, retries[r.run_id])
                        continue
                    s.request = None
                    budget = max(budget, s.peak_mb or 0.0)
                    yield (r, value, "") if ok else (r, FAILED, value)
        finally:
            for s in slots:
                if s.request is None and s.process.is_alive():
                    try:
                        s.conn.send(None)
                    except OSError:
                        pass
            for s in slots:
                s.process.join(2.0 if s.request is None else 0.0)
                if s.process.is_alive():
                    s.process.kill()
                    s.process.join()

    def _again(self, code: int | None, crowded: bool, attempts: int) -> str:
        """`retry`, `alone` (again, with no run beside it) or `no`, for a run whose worker
        died with exit code `code` (negative: a signal) after `attempts` attempts."""
        if code == -signal.SIGKILL:  # the OOM killer's signal: again only if crowded out
            return "alone" if crowded and attempts == 1 and self.max_retries >= 1 else "no"
        return "retry" if attempts <= self.max_retries else "no"
