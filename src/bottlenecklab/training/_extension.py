"""The certification extension (spec `convergence.md`, fourth review): a few steps of an
optimizer that can still move, run on a copy of a trained network from its final state.
Value stability compares what the claims read at the end of training with the same
quantities at the end of the extension: two states of an optimizer that had stopped moving
would say nothing about convergence."""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from bottlenecklab.tasks import Dataset
from bottlenecklab.training._config import PhaseConfig, TrainConfig
from bottlenecklab.training._objective import DTYPES, Objective
from bottlenecklab.training._trainer import train

__all__ = ["Extension", "extend"]

EXTENSION_FILE = "extension.pt"


@dataclass
class Extension:
    """The extended copy of a network and what the extension did.

    Args:
        model: the copy at the end of the extension (CPU).
        steps: steps of the extension (its phases' planned steps).
        wall_s: its cost in seconds (training time of the extension).
        move: `||theta_ext - theta|| / ||theta||`, how far it moved.
        loss_change: `(F_ext - F) / |F|` of the training objective at `train.lam`.
    """

    model: torch.nn.Module
    steps: int
    wall_s: float
    move: float
    loss_change: float


def _flat(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1).to(torch.float64) for p in model.parameters()])


def _loss(model: torch.nn.Module, data: Dataset, cfg: TrainConfig, device: str) -> float:
    obj = Objective(model, data, cfg.cost, cfg.lam, DTYPES[cfg.dtype], device)
    with torch.no_grad():
        return float(obj.loss())


def extend(
    model: torch.nn.Module,
    data: Dataset,
    cfg: TrainConfig,
    phases: tuple[PhaseConfig, ...],
    folder: Path,
    device: str = "cpu",
) -> Extension:
    """Run `phases` from `model`'s state on a copy (the model itself is not changed).

    The extension trains like any run (`train`, at `cfg.lam`, `cfg.dtype`, `cfg.cost`) and
    checkpoints to `folder / "extension.pt"`: an interrupted extension resumes there, a
    finished one is read back without training again (bitwise the same copy).

    Args:
        model: the trained network (its final state).
        data: its training data; cfg: its training config (lam, cost, dtype).
        phases: the extension's phases (the last one exact: `TrainConfig` checks it).
        folder: the run's folder.
    """
    ext_cfg = dataclasses.replace(
        cfg,
        phases=tuple(phases),
        log_every=max(p.steps for p in phases) + sum(p.steps for p in phases),
        checkpoint_every=max(1, min(cfg.checkpoint_every, sum(p.steps for p in phases))),
        stop_fraction=0.0,
        compile=False,
    )
    other = copy.deepcopy(model).to("cpu")
    theta = _flat(other)
    before = _loss(other, data, ext_cfg, device)
    path = Path(folder) / EXTENSION_FILE
    t0 = time.perf_counter()
    res = train(other, data, ext_cfg, device=device, checkpoint=path, resume=path.exists(),
                progress=False, desc="extension")  # fmt: skip
    wall = res.wall_s if res.wall_s else time.perf_counter() - t0
    other.to("cpu")
    after = _loss(other, data, ext_cfg, device)
    other.to("cpu")
    norm = float(theta.norm())
    move = float((_flat(other) - theta).norm()) / norm if norm > 0 else math.nan
    change = (after - before) / abs(before) if before != 0 else math.nan
    return Extension(other, ext_cfg.total_steps, wall, move, change)
