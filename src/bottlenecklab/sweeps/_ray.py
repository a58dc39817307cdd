"""The `ray` executor: one Ray core task per run (not Ray Tune).

Every run is a task with `cpus_per_run` CPUs and `gpus_per_run` (fractional) GPUs. A task
whose worker dies (process killed, node lost) is retried by Ray up to `max_retries` times;
the retry re-enters the idempotent `execute_run`, which resumes from the run's checkpoint.
Exceptions of the run function are not retried: they are recorded as `FAILED` on disk.
The run store must be on storage that every node sees (a shared file system).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bottlenecklab.sweeps._store import FAILED, RunRequest

__all__ = ["RayExecutor"]

Job = Callable[[RunRequest], str]


def _call(job: Job, request: RunRequest) -> str:
    return job(request)


class RayExecutor:
    """Runs the jobs of a sweep as Ray tasks.

    Args:
        address: `auto` joins the Ray cluster running on this machine if there is one and
            starts a local one otherwise; `HOST:PORT` or `ray://HOST:PORT` joins that
            cluster. When Ray is already initialized in this process, that is used as is.
        num_cpus: CPUs of a local cluster started here (default: all).
        cpus_per_run: CPUs reserved by every run (its torch threads).
        gpus_per_run: GPUs per run, fractional allowed (`0.25`: four runs share a GPU).
        max_retries: retries of a task whose worker or node died.
    """

    name = "ray"

    def __init__(
        self,
        address: str = "auto",
        *,
        num_cpus: int | None = None,
        cpus_per_run: float = 1.0,
        gpus_per_run: float = 0.0,
        max_retries: int = 3,
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.cpus_per_run = cpus_per_run
        self.gpus_per_run = gpus_per_run
        self.max_retries = max_retries
        self._started = False

    def _init(self) -> Any:
        try:
            import ray
        except ImportError:
            raise RuntimeError(
                "the ray executor needs Ray: pip install 'bottlenecklab[ray]'"
            ) from None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(
                include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
            )
            if self.address in (None, "", "auto"):
                try:  # join a cluster already running on this machine ...
                    ray.init(address="auto", **kwargs)
                except ConnectionError:  # ... or start a private local one
                    ray.init(address="local", num_cpus=self.num_cpus, **kwargs)
            else:
                ray.init(address=self.address, **kwargs)
            self._started = True
        return ray

    def run(
        self, job: Job, requests: Sequence[RunRequest], tick: Callable[[], None]
    ) -> Iterator[tuple[RunRequest, str, str]]:
        """Yield `(request, status, error)` as runs finish (`error` when Ray gave up)."""
        ray = self._init()
        task = ray.remote(_call).options(
            num_cpus=self.cpus_per_run,
            num_gpus=self.gpus_per_run,
            max_retries=self.max_retries,
            retry_exceptions=False,
        )
        job_ref = ray.put(job)
        refs = {task.remote(job_ref, r): r for r in requests}
        try:
            while refs:
                ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=1.0)
                tick()
                for ref in ready:
                    r = refs.pop(ref)
                    try:
                        yield r, ray.get(ref), ""
                    except ray.exceptions.RayError as e:
                        yield r, FAILED, f"{type(e).__name__}: {e}"
        finally:
            for ref in refs:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        """Shut down the local cluster if this executor started it."""
        if self._started:
            import ray

            ray.shutdown()
            self._started = False
