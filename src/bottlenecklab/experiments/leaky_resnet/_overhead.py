"""The adaptive layer-step update's time overhead with an A/A control (paper 000, §3:
"about 2 %" longer training; spec `leaky-resnets.md`, fourth review).

Three arms of the same training steps run in one process, in rotating order: with the
adaptive update, and two identical copies without it (the A/A pair). The overhead is only
a measurement when the two fixed-step arms agree and the machine is quiet; otherwise its
verdict is `not-measured`, never `passed`.
"""

from __future__ import annotations

import copy
import os
import statistics
import time
from dataclasses import dataclass
from typing import Any

import torch

from bottlenecklab.measure import Quantity
from bottlenecklab.tasks import COSTS, Dataset
from bottlenecklab.training import TrainConfig

__all__ = [
    "ADAPT_AA_SPREAD",
    "ADAPT_LOAD",
    "ADAPT_OVERHEAD",
    "OverheadTiming",
    "overhead_verdict",
    "overhead_with_control",
]

ARMS = ("adaptive", "fixed_a", "fixed_b")


@dataclass(frozen=True)
class OverheadTiming:
    """Median CPU seconds per block of each arm and what they give.

    Args:
        adaptive_s, fixed_a_s, fixed_b_s: median block times of the three arms.
        load: the larger 1-minute load average (`os.getloadavg`) of the start and the end.
        cpus: the machine's logical cores (`os.cpu_count`).
        blocks: timed blocks per arm; steps: training steps per block.
    """

    adaptive_s: float
    fixed_a_s: float
    fixed_b_s: float
    load: float
    cpus: int
    blocks: int
    steps: int

    @property
    def overhead(self) -> float:
        """`t_adaptive / t_fixed - 1`, `t_fixed` the mean of the two fixed-step medians."""
        return self.adaptive_s / (0.5 * (self.fixed_a_s + self.fixed_b_s)) - 1.0

    @property
    def aa_spread(self) -> float:
        """`|t_fixed_b / t_fixed_a - 1|`: what the same steps differ by in this run."""
        return abs(self.fixed_b_s / self.fixed_a_s - 1.0)

    @property
    def other_load(self) -> float:
        """The load average less this process's one busy thread, per core."""
        return max(self.load - 1.0, 0.0) / self.cpus


def overhead_with_control(
    model: torch.nn.Module,
    data: Dataset,
    cfg: TrainConfig,
    *,
    blocks: int = 10,
    steps_per_block: int = 0,
    lr: float = 1e-12,
) -> OverheadTiming:
    """Time Adam steps with the adaptive layer-step update every `adapt_every` steps
    against the same steps without it, twice (A/A), in rotating order.

    Three copies of `model` in the training precision `cfg.dtype`; each block is
    `steps_per_block` steps (default: two update periods), timed in this process's CPU time
    (`time.process_time`); one warm-up block per arm is not counted. The tiny learning rate
    keeps every copy at `model`'s point: this is timing only.

    Args:
        model: a leaky ResNet with adaptive steps (`adapt_every > 0`,
            `record_step_norms`, `adapt_recorded`).
        data: its training data (`x_train` `[N, d_in]`, `y_train` `[N, d_out]`).
        cfg: the training config (`dtype`, `lam`, `cost`).
        blocks: timed blocks per arm.
    """
    every = int(getattr(model, "adapt_every", 0))
    if every <= 0:
        raise ValueError("overhead_with_control needs a model with adaptive layer steps")
    steps = steps_per_block or 2 * every
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    X = torch.as_tensor(data.x_train, dtype=dtype)
    Y = torch.as_tensor(data.y_train, dtype=dtype)
    cost = COSTS[cfg.cost]
    nets = {arm: copy.deepcopy(model).to(dtype=dtype) for arm in ARMS}
    opts = {arm: torch.optim.Adam(n.parameters(), lr=lr, fused=True) for arm, n in nets.items()}

    def block(arm: str) -> float:
        net, opt = nets[arm], opts[arm]
        t0 = time.process_time()
        for t in range(steps):
            update = arm == "adaptive" and t % every == 0
            if update:
                net.record_step_norms()
            opt.zero_grad()
            loss = cost(net(X), Y) + net.regularization(cfg.lam)
            loss.backward()
            if update:
                net.adapt_recorded()
            opt.step()
        return time.process_time() - t0

    load0 = os.getloadavg()[0]
    for arm in ARMS:
        block(arm)  # warm-up
    times: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for b in range(blocks):
        for arm in ARMS[b % 3 :] + ARMS[: b % 3]:
            times[arm].append(block(arm))
    med = {arm: statistics.median(ts) for arm, ts in times.items()}
    return OverheadTiming(
        adaptive_s=med["adaptive"],
        fixed_a_s=med["fixed_a"],
        fixed_b_s=med["fixed_b"],
        load=max(load0, os.getloadavg()[0]),
        cpus=os.cpu_count() or 1,
        blocks=blocks,
        steps=steps,
    )


_TIMED = "CPU time of Adam steps of an adaptive leaky ResNet, timed in its run"
ADAPT_OVERHEAD = Quantity(
    "adapt_overhead",
    "extra CPU time of steps with the adaptive layer-step update over the same steps "
    "without it (paper 000, §3: about 2 %)",
    function=overhead_with_control,
    over=_TIMED,
    units="fraction",
)
ADAPT_AA_SPREAD = Quantity(
    "adapt_aa_spread",
    "relative difference of two identical fixed-step arms timed with it (the A/A control)",
    function=overhead_with_control,
    over=_TIMED,
    units="fraction",
)
ADAPT_LOAD = Quantity(
    "adapt_load",
    "the machine's 1-minute load average while it was timed",
    function=overhead_with_control,
    over=_TIMED,
    units="load",
)


def overhead_verdict(timing: Any, bound: float, aa_limit: float, load_limit: float) -> str:
    """`passed` / `failed` for `overhead <= bound`, or `not-measured` when the A/A pair
    differs by more than `aa_limit` or the other load per core exceeds `load_limit`: the
    timing then cannot tell the overhead from noise.

    Args:
        timing: an `OverheadTiming` (or anything with `overhead`, `aa_spread`,
            `other_load`).
    """
    if not timing.aa_spread <= aa_limit or not timing.other_load <= load_limit:
        return "not-measured"
    return "passed" if timing.overhead <= bound else "failed"
