"""The fused layer stack (`LeakyResNet.forward`) vs the plain autograd loop
(`forward_path`): one Adam step (forward, backward, update) of a quick-size leaky ResNet.

Quick size of `leaky-resnet/hamiltonian-vs-depth`: N = 300, w = 50, L = 30, float64, one
torch thread (as every sweep job runs).
"""

from __future__ import annotations

import time

import torch

from benchmarks._common import load
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import data_cost

N, WIDTH, DEPTH, LEAK, D, STEPS, LAM = 300, 50, 30, 10.0, 10, 200, 0.02


def _per_step(fused: bool) -> float:
    torch.manual_seed(0)
    X = torch.randn(N, D, dtype=torch.float64)
    Y = torch.randn(N, D, dtype=torch.float64)
    cfg = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK)
    model = cfg.build(D, D, seed=0, dtype=torch.float64)
    opt = torch.optim.Adam([model.weights], lr=1e-3, fused=True)

    def out() -> torch.Tensor:
        return model(X) if fused else model.forward_path(X)[-1] @ model.pout.T

    def step() -> None:
        opt.zero_grad()
        (data_cost(out(), Y) + model.regularization(LAM)).backward()
        opt.step()

    for _ in range(10):
        step()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        step()
    return (time.perf_counter() - t0) / STEPS


def main() -> dict[str, float]:
    """Best of three alternating timings of each; prints one line, returns the timings."""
    torch.set_num_threads(1)
    plain = min(_per_step(False) for _ in range(3))
    fused = min(_per_step(True) for _ in range(3))
    print(
        f"stack: quick-size Adam step, plain autograd loop {plain * 1e3:.2f} ms, "
        f"fused stack {fused * 1e3:.2f} ms -> {plain / fused:.2f}x ({load()})",
        flush=True,
    )
    return {"plain_ms": plain * 1e3, "fused_ms": fused * 1e3, "ratio": plain / fused}
