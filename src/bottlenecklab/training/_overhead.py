"""What the adaptive layer-step update costs: the same training steps timed with and
without it, alternating in one process (paper 000, §3 reports about 2 %)."""

from __future__ import annotations

import copy
import statistics
import time

import torch

from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training._config import TrainConfig

__all__ = ["schedule_overhead"]


def schedule_overhead(
    model: torch.nn.Module,
    data: Dataset,
    cfg: TrainConfig,
    *,
    blocks: int = 10,
    steps_per_block: int = 0,
    lr: float = 1e-12,
) -> float:
    """Relative extra time of Adam steps that update the layer steps every `adapt_every`
    steps, against the same steps without the update: `median(t_adapt) / median(t_fixed) - 1`.

    Two copies of `model` in the training precision `cfg.dtype` run `blocks` pairs of
    blocks of `steps_per_block` steps (default: two update periods), alternating which goes
    first. Each block is timed in this process's CPU time (`time.process_time`, all its
    threads), not wall time: on a loaded machine the wall time of a block also counts the
    time other processes held the cores (measured in `docs/lab-notes/leaky-resnet.md`).
    The tiny learning rate keeps both copies at the trained point; this is
    timing only.

    Args:
        model: a network with `adapt_every > 0` (`record_step_norms`, `adapt_recorded`).
        data: its training data; cfg: the training config (`dtype`, `lam`, `cost`).
    """
    every = int(getattr(model, "adapt_every", 0))
    if every <= 0:
        raise ValueError("schedule_overhead needs a model with adaptive layer steps")
    steps = steps_per_block or 2 * every
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    X = torch.as_tensor(data.x_train, dtype=dtype)
    Y = torch.as_tensor(data.y_train, dtype=dtype)
    cost = COSTS[cfg.cost]
    nets = {name: copy.deepcopy(model).to(dtype=dtype) for name in ("adaptive", "fixed")}
    opts = {name: torch.optim.Adam(n.parameters(), lr=lr, fused=True) for name, n in nets.items()}

    def block(name: str) -> float:
        net, opt = nets[name], opts[name]
        t0 = time.process_time()
        for t in range(steps):
            update = name == "adaptive" and t % every == 0
            if update:
                net.record_step_norms()
            opt.zero_grad()
            loss = cost(net(X), Y) + net.regularization(cfg.lam)
            loss.backward()
            if update:
                net.adapt_recorded()
            opt.step()
        return time.process_time() - t0

    block("adaptive"), block("fixed")  # warm-up
    times: dict[str, list[float]] = {"adaptive": [], "fixed": []}
    for b in range(blocks):
        order = ("adaptive", "fixed") if b % 2 == 0 else ("fixed", "adaptive")
        for name in order:
            times[name].append(block(name))
    return statistics.median(times["adaptive"]) / statistics.median(times["fixed"]) - 1.0
