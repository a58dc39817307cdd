"""Driving a sweep: skip finished runs, hand the rest to an executor, count progress."""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from bottlenecklab.files import FolderLock
from bottlenecklab.sweeps._execute import RunFunction, Settings, execute_run
from bottlenecklab.sweeps._local import Killed
from bottlenecklab.sweeps._store import DONE, FAILED, RUNNING, RunRequest, RunStore

__all__ = ["Executor", "Progress", "SweepReport", "longest_first", "run_sweep", "run_sweeps"]


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
    """Done / failed / running counts, a line per finished run, and the time left.

    Args:
        show: `True` a rewritten status line on the terminal, `False` none, `None` the
            first on a terminal; either way each finished run gets its own line.
        quiet: print nothing.

    The time left (`left_s`, set by the sweep) is built from the runs' measured times:
    each run still to do costs its expected time (the sweep's `cost`) scaled by how the
    finished runs compared with theirs, else the mean time of the finished runs of its
    experiment (of all finished runs where its experiment has none yet); a running one
    that less what it has run, spread over the runs at once; unknown until a run has
    finished.
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
        self.left_s: float | None = None
        self._at = time.monotonic()  # when `left_s` was estimated
        self._last = ""

    def set_left(self, seconds: float | None) -> None:
        """The estimated time left, now."""
        self.left_s, self._at = seconds, time.monotonic()

    def left(self) -> str:
        """The time left as text (`~12 min left`, or `time left unknown`)."""
        if self.left_s is None:
            return "time left: after the first run"
        return f"~{_duration(max(0.0, self.left_s - (time.monotonic() - self._at)))} left"

    def line(self) -> str:
        """The counts as text."""
        queued = self.total - self.done - self.failed - self.running
        return (
            f"sweep: {self.done}/{self.total} done, {self.failed} failed, "
            f"{self.running} running, {max(queued, 0)} queued; {self.left()}"
        )

    def update(self, finished: str = "") -> None:
        """Show the counts; `finished`: the run that just ended gets its own line."""
        text = self.line()
        if self.quiet:
            return
        if finished:
            n = self.done + self.failed
            clear = "\r" + " " * (len(self._last) + 4) + "\r" if self.tty and self._last else ""
            self.stream.write(f"{clear}[{n}/{self.total}] {finished}; {self.left()}\n")
            self._last = ""
        if self.tty and text != self._last:
            self.stream.write("\r" + text + " " * 4)
            self._last = text
        self.stream.flush()

    def close(self) -> None:
        """End the rewritten line."""
        if self.tty and self._last and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    """`42 s`, `12 min`, `2.5 h`."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class _Clock:
    """The time left of a sweep from its runs' measured times (`Progress`).

    Args:
        workers: runs at once.
        cost: a run's expected seconds (None: not known), e.g. from the last full run.
            Given, a run still to do costs its expected time scaled by how the finished
            runs compared with theirs (measured / expected, summed), which holds when the
            longest runs go first; a run without an expectation costs the mean of the
            finished runs of its experiment (of all finished runs where it has none).
    """

    def __init__(
        self, workers: int, cost: Callable[[RunRequest], float | None] | None = None
    ) -> None:
        self.workers = max(1, workers)
        self.cost = cost
        self.times: dict[str, list[float]] = {}
        self.measured_s = self.expected_s = 0.0

    @staticmethod
    def group(request: RunRequest) -> str:
        """What runs of similar cost share: the experiment of a grid point."""
        payload = request.payload if isinstance(request.payload, dict) else {}
        return str(payload.get("experiment", ""))

    def _expected(self, request: RunRequest) -> float | None:
        c = self.cost(request) if self.cost is not None else None
        return None if c is None or c <= 0 else float(c)

    def measured(self, request: RunRequest, seconds: float | None) -> None:
        """A finished run's time (None: not known)."""
        if seconds is not None and seconds >= 0:
            self.times.setdefault(self.group(request), []).append(float(seconds))
            expected = self._expected(request)
            if expected is not None:
                self.measured_s += float(seconds)
                self.expected_s += expected

    def left_s(self, todo: Sequence[RunRequest], running: dict[str, float]) -> float | None:
        """Seconds left for `todo` (queued and running runs; `running`: run id -> seconds it
        has run): their work spread over the workers, and at least the longest of them;
        None before any run finished."""
        every = [t for ts in self.times.values() for t in ts]
        if not every:
            return None
        overall = sum(every) / len(every)
        scale = self.measured_s / self.expected_s if self.expected_s > 0 else None
        costs = []
        for r in todo:
            expected = self._expected(r)
            own = self.times.get(self.group(r))
            if expected is not None and scale is not None:
                cost = expected * scale
            else:
                cost = sum(own) / len(own) if own else overall
            costs.append(max(0.0, cost - running.get(r.run_id, 0.0)))
        if not costs:
            return 0.0
        return max(sum(costs) / min(self.workers, len(costs)), max(costs))


def _describe(request: RunRequest) -> str:
    labels = " ".join(f"{k}={v}" for k, v in request.labels.items())
    payload = request.payload if isinstance(request.payload, dict) else {}
    name = payload.get("experiment")
    return " ".join(str(t) for t in (name, request.run_id, labels) if t)


def _finished(request: RunRequest, status: str, meta: dict[str, Any]) -> str:
    """A finished run's line: status, which run, its time and peak memory."""
    facts = []
    if meta.get("last_attempt_s") is not None:
        facts.append(_duration(float(meta["last_attempt_s"])))
    if meta.get("peak_rss_mb") is not None:
        facts.append(f"peak {float(meta['peak_rss_mb']) / 1024:.2f} GB")
    if meta.get("worker_exit") is not None:  # its process died: say so, not "failed"
        status = "KILLED"
    return f"{status} {_describe(request)}" + (f" ({', '.join(facts)})" if facts else "")


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
    cost: Callable[[RunRequest], float | None] | None = None,
) -> list[SweepReport]:
    """`run_sweep` over several stores at once: every unfinished run of every batch goes
    to one executor, so that a store with few runs does not leave workers idle while the
    next one waits (e.g. `reproduce` over many experiments). Returns one report per
    batch. Run ids must be unique across stores.

    Args:
        cost: a run's expected seconds (None: not known). Given, the runs start longest
            first (`longest_first`), which packs them on the workers far better than batch
            order when a few runs are long; else in batch order.
    """
    with contextlib.ExitStack() as locks:
        for root in dict.fromkeys(settings.root for _, settings in batches):
            locks.enter_context(FolderLock(root))
        return _run_sweeps(batches, run_fn, executor, progress, cost)


def longest_first(
    requests: Sequence[RunRequest], cost: Callable[[RunRequest], float | None]
) -> list[RunRequest]:
    """`requests` by expected time, longest first (LPT: a makespan within 4/3 of the best
    on identical workers); a run of unknown cost counts as the median known one, ties
    keep their order."""
    costs = [cost(r) for r in requests]
    known = sorted(c for c in costs if c is not None)
    fill = known[len(known) // 2] if known else 0.0
    order = sorted(range(len(requests)), key=lambda i: -(fill if costs[i] is None else costs[i]))
    return [requests[i] for i in order]


def _execute_routed(run_fn: RunFunction, routes: dict[str, Settings], request: RunRequest) -> str:
    """`execute_run` in the store of the request's batch (picklable, for the executors)."""
    return execute_run(run_fn, routes[request.run_id], request)


def _run_sweeps(
    batches: Sequence[tuple[Sequence[RunRequest], Settings]],
    run_fn: RunFunction,
    executor: Executor,
    progress: Progress | None,
    cost: Callable[[RunRequest], float | None] | None = None,
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
    if cost is not None:
        todo = longest_first(todo, cost)
    prog = progress or Progress(sum(r.total for r in reports), quiet=True)
    prog.total = sum(r.total for r in reports)
    prog.done = sum(r.skipped for r in reports)
    in_flight = {r.run_id for r in todo}

    def running() -> int:
        return sum(stores[i].status(i) == RUNNING for i in in_flight)

    def tick() -> None:
        prog.running = running()
        prog.update()

    clock = _Clock(getattr(executor, "jobs", 1), cost)
    for r in (r for requests, _ in batches for r in requests):  # finished before: their times
        if r.run_id not in in_flight and stores.get(r.run_id) is not None:
            clock.measured(r, stores[r.run_id].meta(r.run_id).get("last_attempt_s"))
    by_id = {r.run_id: r for r in todo}

    def estimate() -> None:
        now = _dt.datetime.now()
        ran: dict[str, float] = {}
        for i in in_flight:
            started = stores[i].meta(i).get("started")
            if stores[i].status(i) == RUNNING and started:
                ran[i] = (now - _dt.datetime.fromisoformat(started)).total_seconds()
        prog.set_left(clock.left_s([by_id[i] for i in in_flight], ran))

    estimate()

    if len(batches) == 1:
        job = functools.partial(execute_run, run_fn, batches[0][1])
    else:
        job = functools.partial(_execute_routed, run_fn, routes)
    try:
        for r, status, error in executor.run(job, todo, tick):
            in_flight.discard(r.run_id)
            report = reports[batch_of[r.run_id]]
            if status == FAILED and error:  # the worker could not record it itself
                if isinstance(error, Killed):  # its process died: how, and at what size
                    peak = None if error.peak_mb is None else round(error.peak_mb, 1)
                    stores[r.run_id].update_meta(r.run_id, worker_exit=error.code, peak_rss_mb=peak)
                stores[r.run_id].write_failure(r.run_id, error)
            if status == DONE:
                report.done += 1
                prog.done += 1
            else:
                report.failed += 1
                report.failed_ids.append(r.run_id)
                prog.failed += 1
            report.ran_ids.append(r.run_id)
            meta = stores[r.run_id].meta(r.run_id)
            clock.measured(r, meta.get("last_attempt_s") if status == DONE else None)
            prog.running = running()
            estimate()
            prog.update(finished=_finished(r, status, meta))
    finally:
        prog.close()
    return reports
