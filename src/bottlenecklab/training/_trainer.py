"""One readable full-batch training loop: phases, explicit regularizer, logs, checkpoints."""

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

from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training._checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from bottlenecklab.training._config import PhaseConfig, TrainConfig
from bottlenecklab.training._newton import newton_steps

__all__ = ["TrainResult", "TrainingDiverged", "train"]

DTYPES = {"float32": torch.float32, "float64": torch.float64}


class TrainingDiverged(RuntimeError):
    """The loss became NaN/Inf; the last good state was kept (message is one line)."""


@dataclass
class TrainResult:
    """What a training run produced.

    Args:
        metrics: one dict per logged step (`step`, `phase`, `optimizer`, `lr`, `loss`,
            `cost`, `reg`, `test_cost`, `grad_norm`, `wall_s`).
        steps: steps done; wall_s: training time (resumed runs add up their parts).
    """

    metrics: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    wall_s: float = 0.0


class _NewtonState:
    """The resumable state of a Newton phase: its trust radius (`optimizer` checkpoint)."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def state_dict(self) -> dict[str, float]:
        return {"radius": self.radius}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.radius = float(state["radius"])


def _newton_phase(model, loss_parts, params, phase: PhaseConfig, t: int, opt, advance) -> None:
    """Run the rest of a Newton phase (`newton_steps`) on the twice-differentiable loss:
    `model.forward_twice_differentiable` where the model has one (the leaky ResNet's fused
    stack has a hand-written backward), else `model` itself. Each accepted iteration is
    booked by `advance`; when the method stops early the phase is over."""
    smooth = getattr(model, "forward_twice_differentiable", None)

    def loss_fn() -> torch.Tensor:
        return loss_parts(smooth)[0]

    remaining = phase.steps - t

    def on_step(loss: float) -> None:
        advance(1, loss, opt, opt.radius)

    out = newton_steps(loss_fn, params, remaining, radius=opt.radius, on_step=on_step)
    opt.radius = out.radius
    if out.steps < remaining:  # no further decrease at float precision: the phase is over
        with torch.no_grad():
            loss = loss_parts()[0]
        advance(remaining - out.steps, loss, opt, opt.radius)


def _optimizer(phase: PhaseConfig, params: list[torch.nn.Parameter], lr: float):
    if phase.optimizer == "newton":
        return _NewtonState(lr)
    if phase.optimizer == "adam":
        return torch.optim.Adam(params, lr=lr, fused=True)
    if phase.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=phase.momentum)
    # One `step()` runs a chunk of iterations (up to the next log or checkpoint), so the
    # closure is not re-evaluated at the start of every iteration; `_lbfgs_chunk` sets
    # max_iter / max_eval per call.
    return torch.optim.LBFGS(
        params,
        lr=lr,
        max_iter=1,
        max_eval=1 + 25,
        history_size=phase.history,
        line_search_fn="strong_wolfe",
        tolerance_grad=0.0,
        tolerance_change=0.0,
    )


def _lbfgs_chunk(opt: torch.optim.LBFGS, closure, iters: int) -> tuple[torch.Tensor, int]:
    """Run up to `iters` L-BFGS iterations in one `step()`; returns (loss, iterations done).

    `max_eval` leaves every strong-Wolfe line search its full 25 trials, so a chunk ends
    after `iters` iterations whatever their cost: the iterates then do not depend on where
    the chunks end (logging or checkpoint intervals). torch's default `1.25 * max_iter`
    would cut a chunk short, and a 1-iteration search after one trial, after which L-BFGS
    stalls for good.
    """
    group = opt.param_groups[0]
    group["max_iter"] = iters
    group["max_eval"] = 25 * iters + 1
    state = opt.state[group["params"][0]]
    before = state.get("n_iter", 0)
    loss = opt.step(closure)
    return loss, opt.state[group["params"][0]].get("n_iter", 0) - before


def _lr_at(phase: PhaseConfig, base: float, t: int) -> float:
    if phase.schedule == "cosine" and phase.steps > 0:
        return base * 0.5 * (1 + math.cos(math.pi * t / phase.steps))
    return base


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
) -> TrainResult:
    """Train `model` full batch on `data.x_train` `[N, d_in]` -> `data.y_train` `[N, d_out]`.

    The loss is `C(Y_hat) + model.regularization(lam)`, `C` the config's cost (`COSTS`).
    Models with `adapt_every > 0` (adaptive layer steps) update their steps every
    `adapt_every` first-order steps from that step's own forward pass
    (`record_step_norms`, then `adapt_recorded` after the backward): the new steps apply
    from the next step on.

    Args:
        model: network with `forward`, `regularization(lam)`, `depth`, `adapt_every`.
        data: the task's data; `cfg`: phases, `lam`, logging.
        device: torch device for training.
        checkpoint: file for atomic checkpoints (every `cfg.checkpoint_every` steps and at
            the end); with `resume=True` training continues from it (`CheckpointError` when
            it is missing or corrupted).
        progress: show a bar (default: only when stderr is a terminal).
        on_log: called with every new row of `metrics` as it is logged (live logs).
    Raises:
        TrainingDiverged: the loss became NaN/Inf; the model holds the last logged good
            state, which is also checkpointed.
    """
    dtype = DTYPES[cfg.dtype]
    model.to(device=device, dtype=dtype)
    X = torch.as_tensor(data.x_train, dtype=dtype, device=device)
    Y = torch.as_tensor(data.y_train, dtype=dtype, device=device)
    Xt = torch.as_tensor(data.x_test, dtype=dtype, device=device)
    Yt = torch.as_tensor(data.y_test, dtype=dtype, device=device)
    params = [p for p in model.parameters() if p.requires_grad]
    scale = 1.0 / model.depth if cfg.lr_per_depth else 1.0

    result = TrainResult()
    start_phase, start_t, opt_state = 0, 0, None
    lr_factor = 1.0  # a backtracking GD phase halves it on every rejected step
    if resume:
        if checkpoint is None:
            raise CheckpointError("--resume needs a checkpoint file")
        state = load_checkpoint(checkpoint)
        model.load_state_dict(state["model"])
        start_phase, start_t = state["phase"], state["t"]
        opt_state = state.get("optimizer")
        lr_factor = float(state.get("lr_factor", 1.0))
        result.metrics = list(state["metrics"])
        result.steps = state["steps"]
        result.wall_s = state["wall_s"]

    cost_fn = COSTS[cfg.cost]

    def loss_parts(forward: Any = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        cost = cost_fn((forward or model)(X), Y)
        reg = model.regularization(cfg.lam)
        return cost + reg, cost, reg

    def save(phase_i: int, t: int, opt: Any) -> None:
        if checkpoint is None:
            return
        save_checkpoint(
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict() if opt is not None else None,
                "phase": phase_i,
                "t": t,
                "steps": result.steps,
                "metrics": result.metrics,
                "wall_s": result.wall_s + (time.perf_counter() - t0),
                "lr_factor": lr_factor,
            },
            checkpoint,
        )

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(
        total=cfg.total_steps, initial=result.steps, desc=desc, disable=not show, leave=False
    )
    t0 = time.perf_counter()
    good_state = copy.deepcopy(model.state_dict())
    good_step = result.steps
    opt = None
    for phase_i in range(start_phase, len(cfg.phases)):
        phase = cfg.phases[phase_i]
        base_lr = phase.lr * scale
        opt = _optimizer(phase, params, base_lr)
        t = 0
        if phase_i != start_phase:
            lr_factor = 1.0
        if phase_i == start_phase and opt_state is not None:
            opt.load_state_dict(opt_state)
            t = start_t
        elif phase_i == start_phase:
            t = start_t

        def advance(
            done: int,
            loss: torch.Tensor | float,
            opt: Any,
            lr: float,
            phase: PhaseConfig = phase,
            phase_i: int = phase_i,
        ) -> None:
            """Book `done` steps: progress, the log row, divergence, the checkpoint."""
            nonlocal t, good_state, good_step
            t += done
            result.steps += done
            bar.update(done)
            value = float(loss.detach()) if torch.is_tensor(loss) else float(loss)
            last = t == phase.steps and phase_i == len(cfg.phases) - 1
            if math.isfinite(value) and (result.steps % cfg.log_every == 0 or last):
                row = _log_row(model, loss_parts, cost_fn, Xt, Yt, params, phase, lr, result, t0)
                result.metrics.append(row)
                if on_log is not None:
                    on_log(row)
                bar.set_postfix(loss=f"{row['loss']:.4g}", test=f"{row['test_cost']:.3g}")
                if math.isfinite(row["loss"]):
                    good_state = copy.deepcopy(model.state_dict())
                    good_step = result.steps
                else:  # this very step blew up (caught here even when it is the last one)
                    value = row["loss"]
            if not math.isfinite(value):
                model.load_state_dict(good_state)
                save(phase_i, t, None)
                bar.close()
                raise TrainingDiverged(
                    f"loss became {value} at step {result.steps} ({phase.optimizer}, lr {lr:.3g});"
                    f" kept the state of step {good_step}"
                    + (f" in {checkpoint}" if checkpoint else "")
                )
            if result.steps % cfg.checkpoint_every == 0:
                save(phase_i, t, opt)

        if phase.optimizer == "newton" and t < phase.steps:
            _newton_phase(model, loss_parts, params, phase, t, opt, advance)
        while t < phase.steps:
            lr = _lr_at(phase, base_lr, t) * lr_factor
            for g in opt.param_groups:
                g["lr"] = lr
            done = 1
            if phase.optimizer == "lbfgs":

                def closure(opt=opt) -> torch.Tensor:
                    opt.zero_grad()
                    loss = loss_parts()[0]
                    loss.backward()
                    return loss

                chunk = min(
                    phase.steps - t,
                    cfg.log_every - result.steps % cfg.log_every,
                    cfg.checkpoint_every - result.steps % cfg.checkpoint_every,
                )
                loss, done = _lbfgs_chunk(opt, closure, chunk)
                if done == 0:  # a zero step: L-BFGS cannot move, the phase is over
                    done = phase.steps - t
            else:
                adapt_now = bool(model.adapt_every) and t % model.adapt_every == 0
                if adapt_now:
                    model.record_step_norms()
                opt.zero_grad()
                loss = loss_parts()[0]
                loss.backward()
                if adapt_now:
                    model.adapt_recorded()
                if phase.backtrack:
                    before = [p.detach().clone() for p in params]
                    opt.step()
                    with torch.no_grad():
                        after = float(loss_parts()[0])
                    if not after <= float(loss.detach()):  # rejected (also NaN): undo, halve
                        with torch.no_grad():
                            for p, b in zip(params, before):
                                p.copy_(b)
                        lr_factor *= 0.5
                else:
                    opt.step()
            advance(done, loss, opt, lr)  # `loss`: the loss *before* this step (chunk)
        opt_state = None
    bar.close()
    result.wall_s += time.perf_counter() - t0
    t0 = time.perf_counter()
    save(len(cfg.phases), 0, None)
    return result


def _log_row(model, loss_parts, cost_fn, Xt, Yt, params, phase, lr, result, t0) -> dict[str, Any]:
    for p in params:
        p.grad = None
    loss, cost, reg = loss_parts()
    loss.backward()
    grad_norm = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in params if p.grad is not None))
    with torch.no_grad():
        test_cost = float(cost_fn(model(Xt), Yt))
    return {
        "step": result.steps,
        "phase": phase.optimizer,
        "lr": lr,
        "loss": float(loss.detach()),
        "cost": float(cost.detach()),
        "reg": float(reg.detach()),
        "test_cost": test_cost,
        "grad_norm": grad_norm,
        "wall_s": round(result.wall_s + time.perf_counter() - t0, 3),
    }
