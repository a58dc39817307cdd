"""Test problems for executors: a science-free run function with a known answer, and
wrappers that kill their worker once or every time (fault injection).

They live in the package, not under tests/, so that worker processes (spawned pools, Ray
workers on other nodes) can import them by name.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from bottlenecklab.files import atomic_write
from bottlenecklab.sweeps._execute import RunFunction
from bottlenecklab.sweeps._store import RunContext, RunRequest, RunResult

__all__ = ["DieOnce", "KillDuring", "counting_run"]


def counting_run(request: RunRequest, ctx: RunContext) -> RunResult:
    """`steps` steps of a toy 'training' with a JSON checkpoint after every step.

    Config: `x`, `steps`, `sleep` (s per step), `poison` (raise at the end), `die_at`
    (kill the worker process at that step on the first attempt, after its checkpoint),
    `kill_at` (the worker sends itself `SIGKILL` at that step, before its checkpoint, so
    on every attempt, as the kernel's OOM killer would), `hold_mb` (allocate and touch
    that many MiB first).
    Each attempt appends its start step to `attempts.log` and its pid to `pids.log`.
    The answer: `acc = x * steps * (steps + 1) / 2`, however often it was interrupted.
    """
    cfg = request.config
    start, acc = 0, 0.0
    if ctx.resume:
        state = json.loads(ctx.checkpoint.read_text())
        start, acc = state["step"], state["acc"]
    with open(ctx.folder / "attempts.log", "a") as f:
        f.write(f"{start}\n")
    with open(ctx.folder / "pids.log", "a") as f:  # which process ran each attempt
        f.write(f"{os.getpid()}\n")
    marker = ctx.folder / "died-once"
    held = bytearray(int(cfg.get("hold_mb", 0) * 2**20))
    for i in range(0, len(held), 4096):  # touched: resident, not only reserved
        held[i] = 1
    for step in range(start, cfg["steps"]):
        time.sleep(cfg.get("sleep", 0.0))
        if cfg.get("kill_at") == step + 1:  # before its checkpoint: every attempt gets here
            os.kill(os.getpid(), signal.SIGKILL)
        acc += cfg["x"] * (step + 1)
        ctx.metrics.append({"step": step + 1, "acc": acc})
        atomic_write(ctx.checkpoint, json.dumps({"step": step + 1, "acc": acc}))
        if cfg.get("die_at") == step + 1 and not marker.exists():
            marker.touch()
            os._exit(1)
    del held
    if cfg.get("poison"):
        raise RuntimeError(f"poisoned run x={cfg['x']}")
    return RunResult({"acc": acc}, {"curve": [{"i": i, "v": cfg["x"] * i} for i in range(3)]})


@dataclass(frozen=True)
class DieOnce:
    """Wraps a run function: on a run's first attempt, the worker process exits (as if
    killed) as soon as the run has written its first checkpoint; later attempts run as is.

    Args:
        run_fn: the wrapped run function (picklable).
        poll_s: how often the checkpoint file is looked for.
    """

    run_fn: RunFunction
    poll_s: float = 0.002

    def __call__(self, request: RunRequest, ctx: RunContext) -> RunResult:
        marker = ctx.folder / "died-once"
        if not marker.exists():
            marker.touch()

            def watch() -> None:
                while not ctx.checkpoint.exists():
                    time.sleep(self.poll_s)
                os._exit(1)

            threading.Thread(target=watch, daemon=True).start()
        return self.run_fn(request, ctx)


@dataclass(frozen=True)
class KillDuring:
    """Wraps a run function: a run whose labels include `where` is killed while it runs
    (its worker process holds `hold_mb` MiB for `after_s` seconds, then sends itself
    `SIGKILL`, as the kernel's OOM killer would), on every attempt; the others run as is.

    Args:
        run_fn: the wrapped run function (picklable).
        where: `(label, value)` pairs of the runs to kill (e.g. `(("arch", "deep"),)`).
    """

    run_fn: RunFunction
    where: tuple[tuple[str, Any], ...]
    hold_mb: float = 64.0
    after_s: float = 1.0

    def __call__(self, request: RunRequest, ctx: RunContext) -> RunResult:
        if all(request.labels.get(k) == v for k, v in self.where):
            held = bytearray(int(self.hold_mb * 2**20))
            for i in range(0, len(held), 4096):  # touched: resident, not only reserved
                held[i] = 1
            time.sleep(self.after_s)
            os.kill(os.getpid(), signal.SIGKILL)
        return self.run_fn(request, ctx)
