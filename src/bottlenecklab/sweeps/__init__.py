"""Sweeps at scale: grids over dotted keys, a run store, `local` and `ray` executors, tables.

This package knows nothing of the science. A sweep is a list of `RunRequest`s (resolved
configs) and a picklable run function `(RunRequest, RunContext) -> RunResult`; `run_sweep`
runs every request that is not `DONE` through an executor into a `RunStore`, and `collect`
turns the store into `summary.parquet` and long-format tables.
"""

from bottlenecklab.sweeps._batches import BatchFunction, execute_batch, run_batches
from bottlenecklab.sweeps._collect import collect, flatten_dict, read_rows, to_table
from bottlenecklab.sweeps._driver import (
    Executor,
    Progress,
    SweepReport,
    longest_first,
    run_sweep,
    run_sweeps,
)
from bottlenecklab.sweeps._execute import RunFunction, Settings, execute_run, git_commit
from bottlenecklab.sweeps._grid import expand_grid
from bottlenecklab.sweeps._local import JOB_MEMORY_MB, Killed, LocalExecutor
from bottlenecklab.sweeps._memory import available_mb, peak_rss_mb, reset_peak, rss_mb
from bottlenecklab.sweeps._ray import RayExecutor
from bottlenecklab.sweeps._spec import SpecError, SweepSpec, load_spec
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

__all__ = [
    "DONE",
    "FAILED",
    "JOB_MEMORY_MB",
    "RUNNING",
    "BatchFunction",
    "Executor",
    "Killed",
    "LocalExecutor",
    "MetricsLog",
    "Progress",
    "RayExecutor",
    "RunContext",
    "RunFunction",
    "RunRequest",
    "RunResult",
    "RunStore",
    "Settings",
    "SpecError",
    "SweepReport",
    "SweepSpec",
    "available_mb",
    "collect",
    "execute_batch",
    "execute_run",
    "expand_grid",
    "flatten_dict",
    "git_commit",
    "load_spec",
    "longest_first",
    "make_executor",
    "peak_rss_mb",
    "read_rows",
    "reset_peak",
    "rss_mb",
    "run_batches",
    "run_sweep",
    "run_sweeps",
    "to_table",
]


def make_executor(
    name: str,
    *,
    jobs: int = 1,
    threads: int = 1,
    address: str = "auto",
    gpus_per_run: float = 0.0,
    max_retries: int = 3,
    memory_mb: float | None = None,
) -> Executor:
    """`local` (`jobs` processes, each run budgeted `memory_mb`, default `JOB_MEMORY_MB`)
    or `ray` (`address`, `gpus_per_run`) by name."""
    if name == "local":
        return LocalExecutor(
            jobs, threads=threads, max_retries=max_retries, memory_mb=memory_mb or JOB_MEMORY_MB
        )
    if name == "ray":
        return RayExecutor(
            address, cpus_per_run=threads, gpus_per_run=gpus_per_run, max_retries=max_retries
        )
    raise ValueError(f"--executor must be local or ray, got {name!r}")
