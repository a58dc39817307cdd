"""Batched ensembles: train many same-shape networks at once with `torch.func`.

The members' parameters and buffers are stacked along a new leading axis `[E, ...]` and one
optimizer steps the stacked tensors. Networks that declare `stackable = True` (both library
models) take the stacked state directly (`functional_call`): every matmul is one batched
GEMM over members and the leaky ResNet's fused layer stack runs once for all; any other
network's per-member loss `C(Y_hat_e) + reg_e(lam_e)` is vmapped. Adam and SGD act
elementwise, so each member follows exactly the trajectory of its own `train()` run (up to
float round-off of batched matmuls); members may differ in seed (weights and data), `lam`
and any tensor the model holds (e.g. a leaky ResNet's `L~`), not in shapes or phases.

L-BFGS couples all parameters through its line search, so an ensemble trains the leading
Adam/SGD phases only. With one checkpoint file per member it leaves each member exactly
where `train(..., resume=True)` picks up (optimizer state included mid-phase), so the
remaining phases (L-BFGS) run per member and the whole is the per-run training.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training._config import PhaseConfig, TrainConfig
from bottlenecklab.training._objective import DTYPES
from bottlenecklab.training._phases import PHASES, lr_at
from bottlenecklab.training._trainer import Bookkeeper, TrainingDiverged, TrainResult

__all__ = ["train_ensemble"]


class _Objective(nn.Module):
    """`(X, Y, lam) -> [loss, cost, reg]` of the wrapped network (what gets vmapped)."""

    def __init__(self, net: nn.Module, cost: str = "mse") -> None:
        super().__init__()
        self.net = net
        self.cost = COSTS[cost]

    def forward(self, X: torch.Tensor, Y: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
        cost = self.cost(self.net(X), Y)
        reg = self.net.regularization(lam)
        return torch.stack([cost + reg, cost, reg], dim=-1)  # [3], or [E, 3] when stacked


def _check(models: Sequence[nn.Module], cfgs: Sequence[TrainConfig]) -> None:
    if not models or len(models) != len(cfgs):
        raise ValueError("train_ensemble needs one TrainConfig per model (and >= 1 model)")
    first = cfgs[0]
    for c in cfgs[1:]:
        shared = ("phases", "dtype", "log_every", "checkpoint_every", "lr_per_depth", "cost")
        if any(getattr(c, k) != getattr(first, k) for k in shared):
            raise ValueError(f"ensemble members must share {', '.join(shared)}")
    if not PHASES[first.phases[0].optimizer].batchable:
        raise ValueError(
            "train_ensemble trains the leading adam/sgd phases; this one starts with "
            + first.phases[0].optimizer
        )
    shapes = {tuple((n, tuple(t.shape)) for n, t in m.state_dict().items()) for m in models}
    if len({type(m) for m in models}) != 1 or len(shapes) != 1:
        raise ValueError("ensemble members must be networks of one class and one shape")
    if len({getattr(getattr(m, "cfg", None), "leak", 1.0) > 0 for m in models}) != 1:
        raise ValueError("ensemble members must all have L~ > 0, or all L~ = 0")


def _stack(arrays: Sequence[Any], dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.stack([torch.as_tensor(a, dtype=dtype, device=device) for a in arrays])


def ensemble_phases(cfg: TrainConfig) -> int:
    """How many leading phases of `cfg` an ensemble trains: those before the first phase
    that is not elementwise (`PhaseKind.batchable`: L-BFGS, Newton), backtracks (each
    decides per member whether a step is taken) or sets its step from the norm of each
    member (`lr_power`), draws mini-batches (`batch_size`) or is smoothed (`smooth`);
    none when training stops at a loss (`stop_fraction`)."""
    if cfg.stop_fraction:
        return 0
    n = 0
    while (
        n < len(cfg.phases)
        and PHASES[cfg.phases[n].optimizer].batchable
        and not cfg.phases[n].backtrack
        and not cfg.phases[n].lr_power
        and not cfg.phases[n].batch_size
        and not cfg.phases[n].smooth
    ):
        n += 1
    return n


def train_ensemble(
    models: Sequence[nn.Module],
    data: Sequence[Dataset],
    cfgs: Sequence[TrainConfig],
    *,
    device: str = "cpu",
    checkpoints: Sequence[Path] | None = None,
    on_log: Sequence[Callable[[dict[str, Any]], None]] | None = None,
) -> list[TrainResult]:
    """Train `models[e]` on `data[e]` with `cfgs[e]`, all at once; same results as `train`.

    Trains the leading Adam/SGD phases (`ensemble_phases`); later phases are left to
    `train(..., resume=True)` from the member checkpoints.

    Args:
        models: `E` networks of one class and shape (`forward`, `regularization(lam)`,
            `depth`, `adapt_every`, `adapt`); trained in place.
        data: one data set per member (same shapes: `x_train` `[N, d_in]` ...).
        cfgs: one config per member: `lam` may differ, phases (and their own `lam`) must
            not.
        device: torch device of the stacked tensors.
        checkpoints: one file per member, written as `train` writes them (every
            `checkpoint_every` steps and at the end).
        on_log: one callback per member, called with each new metrics row.
    Returns:
        One `TrainResult` per member (`wall_s` is the ensemble's time divided by `E`).
    Raises:
        TrainingDiverged: some member's loss became NaN/Inf (members keep their last state).
    """
    _check(models, cfgs)
    for extra in (checkpoints, on_log):
        if extra is not None and len(extra) != len(models):
            raise ValueError("train_ensemble needs one checkpoint file / log callback per model")
    cfg = cfgs[0]
    dtype = DTYPES[cfg.dtype]
    E = len(models)
    for m in models:
        m.to(device=device, dtype=dtype)
    X, Y = (
        _stack([d.x_train for d in data], dtype, device),
        _stack([d.y_train for d in data], dtype, device),
    )
    Xt, Yt = (
        _stack([d.x_test for d in data], dtype, device),
        _stack([d.y_test for d in data], dtype, device),
    )
    objectives = [_Objective(m, cfg.cost) for m in models]
    params, buffers = stack_module_state(objectives)  # name -> [E, ...]
    params = {n: p.detach().requires_grad_(True) for n, p in params.items()}
    template = copy.deepcopy(objectives[0]).to("meta")

    def member(p: dict, b: dict, x: torch.Tensor, y: torch.Tensor, lam: torch.Tensor):
        return functional_call(template, (p, b), (x, y, lam))

    # stackable networks take the stacked state as it is (one batched GEMM per matmul, about
    # 10 % faster than vmap, which would give the same numbers); others are vmapped.
    batched = member if getattr(models[0], "stackable", False) else vmap(member)  # -> [E, 3]
    leaves = list(params.values())  # the order of `model.parameters()`, as in `train`
    scale = 1.0 / models[0].depth if cfg.lr_per_depth else 1.0
    adapt_every = getattr(models[0], "adapt_every", 0)
    books = [
        Bookkeeper.for_run(
            m,
            cfg,
            checkpoint=None if checkpoints is None else checkpoints[e],
            on_log=None if on_log is None else on_log[e],
        )
        for e, m in enumerate(models)
    ]
    for b in books:
        b.start()
    t0 = time.perf_counter()
    n_phases = ensemble_phases(cfg)

    def save(opt: Any) -> None:
        if checkpoints is None:
            return
        _write_back(models, params, buffers)
        wall = (time.perf_counter() - t0) / E
        for e, b in enumerate(books):
            b.save(_member_state(opt, e, E), wall_s=wall)

    for phase_i, phase in enumerate(cfg.phases[:n_phases]):
        # each member's weight decay in this phase (a phase's own `lam` is every member's)
        lams = torch.tensor([c.lam_of(phase) for c in cfgs], dtype=dtype, device=device)  # [E]
        base_lr = phase.lr * scale
        opt = PHASES[phase.optimizer].make(phase, leaves, base_lr)
        for b in books:
            b.enter(phase_i, opt)
        for t in range(phase.steps):
            lr = lr_at(phase, base_lr, t)
            for g in opt.param_groups:
                g["lr"] = lr
            opt.zero_grad()
            parts = batched(params, buffers, X, Y, lams)  # [E, 3]
            parts[:, 0].sum().backward()  # members' parameters are disjoint slices
            if adapt_every and t % adapt_every == 0:  # as `train`: from this step's weights,
                _adapt(models, params, buffers, X)  # effective from the next step
            opt.step()
            for b in books:
                b.tick(1)
            steps = books[0].result.steps
            values = parts[:, 0].detach()
            if not bool(torch.isfinite(values).all()):
                bad = int((~torch.isfinite(values)).nonzero()[0])
                raise TrainingDiverged(f"ensemble member {bad}: loss became {float(values[bad])}")
            last = t == phase.steps - 1 and phase_i == len(cfg.phases) - 1
            if books[0].due(steps, last):
                member_lams = [c.lam_of(phase) for c in cfgs]
                rows = _log_rows(
                    batched, params, buffers, X, Y, Xt, Yt, lams, phase, lr, member_lams
                )
                wall = (time.perf_counter() - t0) / E
                for b, row in zip(books, rows):
                    b.log({"step": steps, **row, "wall_s": round(wall, 3)})
            if steps % cfg.checkpoint_every == 0 and t + 1 < phase.steps:
                save(opt)
    _write_back(models, params, buffers)
    return [b.finish(n_phases, (time.perf_counter() - t0) / E) for b in books]


def _member_state(opt: torch.optim.Optimizer, e: int, E: int) -> dict[str, Any]:
    """Member `e`'s slice of the stacked optimizer state, as its own `train` would save it."""
    full = opt.state_dict()

    def pick(v: Any) -> Any:
        if torch.is_tensor(v) and v.dim() > 0 and v.shape[0] == E:
            return v[e].clone()
        return v.clone() if torch.is_tensor(v) else v

    state = {i: {k: pick(v) for k, v in s.items()} for i, s in full["state"].items()}
    return {"state": state, "param_groups": copy.deepcopy(full["param_groups"])}


@torch.no_grad()
def _adapt(models: Sequence[nn.Module], params: dict, buffers: dict, X: torch.Tensor) -> None:
    """Each member's adaptive layer-step update, on its own module (every `adapt_every`)."""
    _write_back(models, params, buffers)
    for e, m in enumerate(models):
        m.adapt(X[e])
        for n, b in m.named_buffers(prefix="net"):
            buffers[n][e].copy_(b)


@torch.no_grad()
def _write_back(models: Sequence[nn.Module], params: dict, buffers: dict) -> None:
    """Copy the stacked state into the member modules."""
    for e, m in enumerate(models):
        for n, p in m.named_parameters(prefix="net"):
            p.copy_(params[n][e])
        for n, b in m.named_buffers(prefix="net"):
            b.copy_(buffers[n][e])


def _log_rows(batched, params, buffers, X, Y, Xt, Yt, lams, phase: PhaseConfig, lr: float,
              member_lams: list[float]):  # fmt: skip
    """Per-member log rows, as `train` logs them (`lam` (`member_lams`, the configs' own
    numbers), loss parts, test cost, gradient norm)."""
    for p in params.values():
        p.grad = None
    parts = batched(params, buffers, X, Y, lams)  # [E, 3]
    parts[:, 0].sum().backward()
    parts = parts.detach()
    sq = sum(p.grad.pow(2).flatten(1).sum(1) for p in params.values())  # [E]
    with torch.no_grad():
        test = batched(params, buffers, Xt, Yt, lams)[:, 1]  # [E]
    rows = []
    for e in range(parts.shape[0]):
        rows.append(
            {
                "phase": phase.optimizer,
                "lr": lr,
                "lam": member_lams[e],
                "loss": float(parts[e, 0]),
                "cost": float(parts[e, 1]),
                "reg": float(parts[e, 2]),
                "test_cost": float(test[e]),
                "grad_norm": math.sqrt(float(sq[e])),
            }
        )
    for p in params.values():
        p.grad = None
    return rows
