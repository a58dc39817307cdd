"""Test problems for executors: a science-free run function with a known answer, and a
wrapper that kills its worker once (fault injection).

They live in the package, not under tests/, so that worker processes (spawned pools, Ray
workers on other nodes) can import them by name.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass

from bottlenecklab.files import atomic_write
from bottlenecklab.sweeps._execute import RunFunction
from bottlenecklab.sweeps._store import RunContext, RunRequest, RunResult

__all__ = ["DieOnce", "counting_run"]


def counting_run(request: RunRequest, ctx: RunContext) -> RunResult:
    """`steps` steps of a toy 'training' with a JSON checkpoint after every step.

    Config: `x`, `steps`, `sleep` (s per step), `poison` (raise at the end), `die_at`
    (kill the worker process at that step on the first attempt, after its checkpoint).
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
    for step in range(start, cfg["steps"]):
        time.sleep(cfg.get("sleep", 0.0))
        acc += cfg["x"] * (step + 1)
        ctx.metrics.append({"step": step + 1, "acc": acc})
        atomic_write(ctx.checkpoint, json.dumps({"step": step + 1, "acc": acc}))
        if cfg.get("die_at") == step + 1 and not marker.exists():
            marker.touch()
            os._exit(1)
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
