"""Driving a sweep: skip finished runs, hand the rest to an executor, count progress."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from bottlenecklab.files import FolderLock
from bottlenecklab.sweeps._execute import RunFunction, Settings, execute_run
from bottlenecklab.sweeps._store import DONE, FAILED, RUNNING, RunRequest, RunStore

__all__ = ["Executor", "Progress", "SweepReport", "run_sweep", "run_sweeps"]


class Executor(Protocol):
    """Runs jobs and yields `(request, status, error)` as they finish."""

    name: str

    def run(
        self,
        job: Callable[[RunRequest], str],
        requests: Sequence[RunRequest],
        tick: Callable[[], None],
    ) -> Iterator[tuple[RunRequest, str, str]]: ...


@dataclass
class SweepReport:
    """What a sweep did: runs in total, already done before, finished now, failed."""

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    failed_ids: list[str] = field(default_factory=list)
    ran_ids: list[str] = field(default_factory=list)


class Progress:
    """Done / failed / running counts.

    Args:
        show: `True` one rewritten line, `False` a line per finished run, `None` the
            first on a terminal and the second elsewhere.
        quiet: print nothing.
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        show: bool | None = None,
        quiet: bool = False,
    ):
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if show is None else show
        self.quiet = quiet
        self.done = self.failed = self.running = 0
        self._last = ""

    def line(self) -> str:
        """The counts as text."""
        queued = self.total - self.done - self.failed - self.running
        return (
            f"sweep: {self.done}/{self.total} done, {self.failed} failed, "
            f"{self.running} running, {max(queued, 0)} queued"
        )

    def update(self, finished: str = "") -> None:
        """Show the counts (`finished`: the run that just ended, for the log)."""
        text = self.line()
        if self.quiet:
            return
        if self.tty and text != self._last:
            self.stream.write("\r" + text + " " * 4)
            self.stream.flush()
        elif not self.tty and finished:
            self.stream.write(f"{text}  [{finished}]\n")
            self.stream.flush()
        self._last = text

    def close(self) -> None:
        """End the rewritten line."""
        if self.tty and self._last and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()


def _describe(request: RunRequest) -> str:
    labels = " ".join(f"{k}={v}" for k, v in request.labels.items())
    return f"{request.run_id} {labels}".strip()


def run_sweep(
    requests: Sequence[RunRequest],
    run_fn: RunFunction,
    executor: Executor,
    settings: Settings,
    *,
    progress: Progress | None = None,
) -> SweepReport:
    """Run every request that is not `DONE` in the store under `settings.root`.

    Requests are saved first (so `collect` sees queued runs too); each run's status,
    metadata, metrics and result land in its folder (see `RunStore`). A failing run is
    marked `FAILED` and the sweep goes on. `run_fn` must be picklable (module level).
    One driver per store: a second one on the same folder refuses (`files.FolderLocked`).
    """
    return run_sweeps([(requests, settings)], run_fn, executor, progress=progress)[0]


def run_sweeps(
    batches: Sequence[tuple[Sequence[RunRequest], Settings]],
    run_fn: RunFunction,
    executor: Executor,
    *,
    progress: Progress | None = None,
) -> list[SweepReport]:
    """`run_sweep` over several stores at once: every unfinished run of every batch goes
    to one executor, in batch order, so that a store with few runs does not leave workers
    idle while the next one waits (e.g. `reproduce` over many experiments). Returns one
    report per batch. Run ids must be unique across stores.
    """
    with contextlib.ExitStack() as locks:
        for root in dict.fromkeys(settings.root for _, settings in batches):
            locks.enter_context(FolderLock(root))
        return _run_sweeps(batches, run_fn, executor, progress)


def _execute_routed(run_fn: RunFunction, routes: dict[str, Settings], request: RunRequest) -> str:
    """`execute_run` in the store of the request's batch (picklable, for the executors)."""
    return execute_run(run_fn, routes[request.run_id], request)


def _run_sweeps(
    batches: Sequence[tuple[Sequence[RunRequest], Settings]],
    run_fn: RunFunction,
    executor: Executor,
    progress: Progress | None,
) -> list[SweepReport]:
    routes: dict[str, Settings] = {}
    stores: dict[str, RunStore] = {}
    reports: list[SweepReport] = []
    todo: list[RunRequest] = []
    batch_of: dict[str, int] = {}
    for b, (requests, settings) in enumerate(batches):
        store = RunStore(settings.root)
        seen: set[str] = set()
        unique = [r for r in requests if not (r.run_id in seen or seen.add(r.run_id))]
        for r in unique:
            if r.run_id in routes and routes[r.run_id].root != settings.root:
                raise ValueError(f"run id {r.run_id} is in two stores")
            routes[r.run_id], stores[r.run_id], batch_of[r.run_id] = settings, store, b
            store.write_request(r)
        left = [r for r in unique if not store.finished(r.run_id)]
        todo.extend(left)
        reports.append(SweepReport(total=len(unique), skipped=len(unique) - len(left)))
    prog = progress or Progress(sum(r.total for r in reports), quiet=True)
    prog.total = sum(r.total for r in reports)
    prog.done = sum(r.skipped for r in reports)
    in_flight = {r.run_id for r in todo}

    def running() -> int:
        return sum(stores[i].status(i) == RUNNING for i in in_flight)

    def tick() -> None:
        prog.running = running()
        prog.update()

    if len(batches) == 1:
        job = functools.partial(execute_run, run_fn, batches[0][1])
    else:
        job = functools.partial(_execute_routed, run_fn, routes)
    try:
        for r, status, error in executor.run(job, todo, tick):
            in_flight.discard(r.run_id)
            report = reports[batch_of[r.run_id]]
            if status == FAILED and error:  # the worker could not record it itself
                stores[r.run_id].write_failure(r.run_id, error)
            if status == DONE:
                report.done += 1
                prog.done += 1
            else:
                report.failed += 1
                report.failed_ids.append(r.run_id)
                prog.failed += 1
            report.ran_ids.append(r.run_id)
            prog.running = running()
            prog.update(finished=f"{status} {_describe(r)}")
    finally:
        prog.close()
    return reports
