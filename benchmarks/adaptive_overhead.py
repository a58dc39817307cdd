"""`leaky-resnet/discretization` `adaptive-overhead` (paper 000, §3: adaptive layer steps
make training "about 2 %" longer), asserted at the paper preset's `w`, `N`, `L~`, depth
and precision: the adaptive update's extra CPU time per Adam step at most
`overhead_bound` (3 %), one thread.

An A/A control runs in the same process: two identical fixed-step arms timed beside the
adaptive one, in rotating order. When they differ by more than `aa_limit` (1 %) or the
load average, less this thread, exceeds `load_limit` (0.25) per core, the timing cannot
tell a 2 % overhead from noise and the verdict is `not-measured`, never `passed` (spec
`leaky-resnets.md`, fourth review). The network is the preset's untrained adaptive net:
the update's cost does not depend on the weights.
"""

from __future__ import annotations

import dataclasses

import torch

from benchmarks._common import load
from bottlenecklab.experiments import get, resolve_config
from bottlenecklab.experiments.leaky_resnet._overhead import overhead_verdict, overhead_with_control

BLOCKS = 10  # per arm


def main() -> dict[str, float | str]:
    """Time the three arms at the paper preset's size and print one line."""
    torch.set_num_threads(1)
    cfg = resolve_config(get("leaky-resnet/discretization"), "paper")
    data = cfg.task.build(seed=cfg.seed)
    model_cfg = dataclasses.replace(cfg.model, schedule="adaptive")
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    net = model_cfg.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)
    t = overhead_with_control(net, data, cfg.train, blocks=BLOCKS)
    verdict = overhead_verdict(t, cfg.overhead_bound, cfg.aa_limit, cfg.load_limit)
    print(
        f"adaptive-overhead: leaky ResNet w={model_cfg.width} L={model_cfg.depth} "
        f"N={data.x_train.shape[0]} L~={model_cfg.leak:g} {cfg.train.dtype}, 1 thread, "
        f"{t.steps} Adam steps per block, medians of {t.blocks} rotating blocks per arm: "
        f"adaptive {1e3 * t.adaptive_s:.0f} ms, fixed {1e3 * t.fixed_a_s:.0f} / "
        f"{1e3 * t.fixed_b_s:.0f} ms -> overhead {100 * t.overhead:.2f} % "
        f"(bound {100 * cfg.overhead_bound:g} %), A/A {100 * t.aa_spread:.2f} % "
        f"(limit {100 * cfg.aa_limit:g} %), other load {t.other_load:.2f}/core "
        f"(limit {cfg.load_limit:g}): {verdict} ({load()})",
        flush=True,
    )
    return {
        "overhead": t.overhead,
        "aa_spread": t.aa_spread,
        "other_load": t.other_load,
        "verdict": verdict,
    }
