"""One readable full-batch training loop: phases from the `PHASES` registry, explicit
regularizer, and the `Bookkeeper` every training path shares (logs, checkpoints,
divergence, resume)."""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from bottlenecklab.tasks import Dataset
from bottlenecklab.training._checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from bottlenecklab.training._compile import compiled_forward
from bottlenecklab.training._config import TrainConfig
from bottlenecklab.training._objective import DTYPES, Objective
from bottlenecklab.training._phases import PHASES

__all__ = ["Bookkeeper", "TrainResult", "TrainingDiverged", "train"]


class TrainingDiverged(RuntimeError):
    """The loss became NaN/Inf; the last good state was kept (message is one line)."""


@dataclass
class TrainResult:
    """What a training run produced.

    Args:
        metrics: one dict per logged step (`step`, `phase`, `lr`, `lam` (the weight decay
            of that step's loss), `loss`, `cost`, `reg`, `test_cost`, `grad_norm`,
            `wall_s`).
        steps: steps done; wall_s: training time (resumed runs add up their parts).
    """

    metrics: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    wall_s: float = 0.0


class Bookkeeper:
    """The bookkeeping of one training run, step by step: the position (`phase`, step `t`
    in it, `result.steps`), the metrics rows and the `on_log` callback (called with each
    row right after it is logged, the model holding that step's state), the progress bar,
    checkpoints every `checkpoint_every` steps, and on a NaN/Inf loss the rollback to the
    last logged good state (`TrainingDiverged`), and the stop at a loss (`stop_at`: the
    first logged loss at or below it sets `stopped`). `resume()` restores all of it.

    `train` and `train_ensemble` use all of it (`for_run`); loops of their own (small
    init, representation GD) use the rows, `due` and the bar.

    Args:
        model: the network trained (its `state_dict` is what is checkpointed).
        total: steps of the run (the bar); log_every: steps between rows.
        phases: the run's phases (`advance` books steps into them).
        checkpoint_every: steps between checkpoints (to `checkpoint`).
        measure: `(optimizer, lr) -> row` (loss parts, test cost, ...) at the current state.
        checkpoint: as in `train`.
        on_log: as in `train`.
        progress: as in `train`.
        desc: as in `train`.
    """

    def __init__(self, model: Any, *, total: int, log_every: int, phases: tuple = (),
                 checkpoint_every: int = 1, measure: Any = None, checkpoint: Any = None,
                 on_log: Any = None, progress: bool | None = False,
                 desc: str = "train") -> None:  # fmt: skip
        self.model, self.total, self.log_every, self.phases = model, total, log_every, phases
        self.checkpoint_every, self.measure = checkpoint_every, measure
        self.checkpoint, self.on_log = checkpoint, on_log
        self.result = TrainResult()
        self.phase, self.t, self.lr_factor, self.opt_state = 0, 0, 1.0, None
        self.stop_at: float | None = None
        self.stopped = False
        self.show = sys.stderr.isatty() if progress is None else progress
        self.desc = desc

    @classmethod
    def for_run(cls, model, cfg: TrainConfig, measure=None, **kw: Any) -> Bookkeeper:
        """The bookkeeper of a `TrainConfig` run (`kw`: checkpoint, on_log, progress, desc)."""
        every = {"log_every": cfg.log_every, "checkpoint_every": cfg.checkpoint_every}
        return cls(model, total=cfg.total_steps, phases=cfg.phases, measure=measure, **every, **kw)

    def resume(self) -> None:
        """Continue from `checkpoint` (`CheckpointError` when missing or corrupted)."""
        if self.checkpoint is None:
            raise CheckpointError("--resume needs a checkpoint file")
        state = load_checkpoint(self.checkpoint)
        self.model.load_state_dict(state["model"])
        self.phase, self.t, self.opt_state = state["phase"], state["t"], state.get("optimizer")
        self.lr_factor = float(state.get("lr_factor", 1.0))
        self.stop_at, self.stopped = state.get("stop_at"), bool(state.get("stopped", False))
        self.result.metrics = list(state["metrics"])
        self.result.steps, self.result.wall_s = state["steps"], state["wall_s"]

    def start(self) -> None:
        r = self.result
        self.bar = tqdm(total=self.total, initial=r.steps, desc=self.desc,
                        disable=not self.show, leave=False)  # fmt: skip
        self.t0 = time.perf_counter()
        self.good, self.good_step = copy.deepcopy(self.model.state_dict()), r.steps

    def enter(self, phase_i: int, opt: Any) -> None:
        """Start phase `phase_i` with its fresh optimizer `opt` (or the resumed one)."""
        if phase_i != self.phase:
            self.phase, self.t, self.lr_factor = phase_i, 0, 1.0
        elif self.opt_state is not None:
            opt.load_state_dict(self.opt_state)
        self.opt_state = None

    def tick(self, done: int) -> None:
        """Count `done` steps (of the current phase and in all)."""
        self.t += done
        self.result.steps += done
        self.bar.update(done)

    def until_boundary(self) -> int:
        """Steps to the next log or checkpoint (chunked phases stop there)."""
        s = self.result.steps
        return min(
            self.log_every - s % self.log_every, self.checkpoint_every - s % self.checkpoint_every
        )

    def due(self, step: int, last: bool = False) -> bool:
        """Whether `step` gets a row: every `log_every` steps and the last one."""
        return step % self.log_every == 0 or last

    def elapsed(self) -> float:
        return self.result.wall_s + time.perf_counter() - self.t0

    def log(self, row: dict[str, Any]) -> None:
        """Append `row` to the metrics, call `on_log` with it, show it on the bar."""
        self.result.metrics.append(row)
        if self.on_log is not None:
            self.on_log(row)
        if self.show:
            shown = {"loss": "loss", "test": "test_cost"}
            self.bar.set_postfix({k: f"{row[c]:.4g}" for k, c in shown.items() if c in row})

    def advance(self, done: int, loss: torch.Tensor | float, opt: Any, lr: float) -> None:
        """Book `done` steps ending with `loss`: progress, the log row, divergence, the
        checkpoint."""
        r, phase = self.result, self.phases[self.phase]
        self.tick(done)
        value = float(loss.detach()) if torch.is_tensor(loss) else float(loss)
        last = self.t == phase.steps and self.phase == len(self.phases) - 1
        if math.isfinite(value) and self.due(r.steps, last):
            row = {"step": r.steps, **self.measure(phase.optimizer, lr)}
            row["wall_s"] = round(self.elapsed(), 3)
            self.log(row)
            if math.isfinite(row["loss"]):
                self.good, self.good_step = copy.deepcopy(self.model.state_dict()), r.steps
                self.stopped = self.stop_at is not None and row["loss"] <= self.stop_at
            else:  # this very step blew up (caught here even when it is the last one)
                value = row["loss"]
        if not math.isfinite(value):
            self.model.load_state_dict(self.good)
            self.save()
            self.bar.close()
            raise TrainingDiverged(
                f"loss became {value} at step {r.steps} ({phase.optimizer}, lr {lr:.3g});"
                f" kept the state of step {self.good_step}"
                + (f" in {self.checkpoint}" if self.checkpoint else "")
            )
        if r.steps % self.checkpoint_every == 0 and self.checkpoint is not None:
            self.save(opt.state_dict())

    def stop_phase(self, loss: torch.Tensor | float, opt: Any, lr: float) -> None:
        """The phase's method stopped before its last step (converged, stalled, or a failed
        trust region): log a row at the step where it stopped (`stopped_early`: the state
        the phase ends in), then book the phase's remaining steps at once, so the run keeps
        its planned step count (the last phase still logs its final row)."""
        remaining = self.phases[self.phase].steps - self.t
        if remaining <= 0:
            return
        r, phase = self.result, self.phases[self.phase]
        logged = self.result.metrics[-1]["step"] if self.result.metrics else None
        if logged != r.steps:
            row = {"step": r.steps, **self.measure(phase.optimizer, lr), "stopped_early": True}
            row["wall_s"] = round(self.elapsed(), 3)
            if math.isfinite(row["loss"]):
                self.log(row)
        self.advance(remaining, loss, opt, lr)

    def save(self, opt_state: dict[str, Any] | None = None, **extra: Any) -> None:
        """Checkpoint the model, the optimizer's state and the position (`extra` entries
        override the defaults, e.g. an ensemble member's share of the time)."""
        if self.checkpoint is None:
            return
        state = {
            "model": self.model.state_dict(),
            "optimizer": opt_state,
            "phase": self.phase,
            "t": self.t,
            "steps": self.result.steps,
            "metrics": self.result.metrics,
            "wall_s": self.elapsed(),
            "lr_factor": self.lr_factor,
            "stop_at": self.stop_at,
            "stopped": self.stopped,
            **extra,
        }
        save_checkpoint(state, self.checkpoint)

    def finish(self, phases_done: int | None = None, wall_s: float | None = None) -> TrainResult:
        """Close the bar, add up the time (or take `wall_s`) and write the checkpoint of
        the end of phase `phases_done` (default: all)."""
        self.bar.close()
        self.result.wall_s = self.elapsed() if wall_s is None else wall_s
        self.t0 = time.perf_counter()
        self.phase = len(self.phases) if phases_done is None else phases_done
        self.t = 0
        self.save()
        return self.result


def train(
    model: torch.nn.Module,
    data: Dataset,
    cfg: TrainConfig,
    *,
    device: str = "cpu",
    checkpoint: Path | None = None,
    resume: bool = False,
    progress: bool | None = None,
    desc: str = "train",
    on_log: Callable[[dict[str, Any]], None] | None = None,
    on_phase: Callable[[int, int], None] | None = None,
) -> TrainResult:
    """Train `model` full batch on `data.x_train` `[N, d_in]` -> `data.y_train` `[N, d_out]`.

    The loss is `C(Y_hat) + model.regularization(lam)`, `C` the config's cost (`COSTS`),
    `lam` the phase's own (`PhaseConfig.lam`, else `cfg.lam`: `TrainConfig.lam_of`). Each
    phase runs its kind from `PHASES` (`PhaseConfig.optimizer`); with
    `cfg.stop_fraction` training ends at the first logged loss at or below that fraction of
    the initial one (`TrainResult.steps` then counts the steps done). Models with
    `adapt_every > 0` (adaptive layer steps) update their steps every `adapt_every`
    first-order steps from that step's own forward pass (`record_step_norms`, then
    `adapt_recorded` after the backward): the new steps apply from the next step on.

    Args:
        model: network with `forward`, `regularization(lam)`, `depth`, `adapt_every`.
        data: the task's data; `cfg`: phases, `lam`, logging, `compile`.
        device: torch device for training.
        checkpoint: file for atomic checkpoints (every `cfg.checkpoint_every` steps and at
            the end); with `resume=True` training continues from it (`CheckpointError` when
            it is missing or corrupted).
        progress: show a bar (default: only when stderr is a terminal).
        on_log: called with every new row of `metrics` as it is logged (live logs); a row
            with `stopped_early` marks where a phase's method stopped before its last step
            (`Bookkeeper.stop_phase`).
        on_phase: called as `on_phase(i, t)` when phase `i` starts (`t = 0`) or resumes
            (`t` its steps done), the model holding that state.
    Raises:
        TrainingDiverged: the loss became NaN/Inf; the model holds the last logged good
            state, which is also checkpointed.
    """
    obj = Objective(model, data, cfg.cost, cfg.lam, DTYPES[cfg.dtype], device)
    book = Bookkeeper.for_run(model, cfg, obj.row, checkpoint=checkpoint, on_log=on_log,
                              progress=progress, desc=desc)  # fmt: skip
    if resume:
        book.resume()
    elif cfg.stop_fraction:  # the initial loss, at the first phase's weight decay
        obj.lam = cfg.lam_of(cfg.phases[0])
        with torch.no_grad():
            book.stop_at = cfg.stop_fraction * float(obj.loss())
    if cfg.compile:
        obj.forward = compiled_forward(model, obj.X)
    scale = 1.0 / model.depth if cfg.lr_per_depth else 1.0
    book.start()
    for phase_i in range(book.phase, len(cfg.phases)):
        if book.stopped:  # `cfg.stop_fraction`: the loss got there
            break
        phase, kind = cfg.phases[phase_i], PHASES[cfg.phases[phase_i].optimizer]
        obj.lam = cfg.lam_of(phase)  # continuation in lambda: each phase its own
        obj.smooth = phase.smooth  # continuation in the ReLU's softplus sharpness
        opt = kind.make(phase, obj.params, phase.lr * scale)
        book.enter(phase_i, opt)
        if on_phase is not None:
            on_phase(phase_i, book.t)
        kind.run(obj, phase, opt, phase.lr * scale, book)
    return book.finish()
