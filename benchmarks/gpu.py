"""GPU targets of the time-to-result issue (`python -m benchmarks gpu`; part of `make bench`
only where CUDA is available):

- our float32 training step at paper size (`N = 1000`, `w = 200`, `L = 50`, adaptive
  steps) on the device, in ms;
- wall time to median critical-point residual <= 0.05 at paper size (`L~ = 24`, our recipe
  of `benchmarks.paper_recipe`, float64), capped at `CAP_S`;
- `train_ensemble` of 8 quick-size members against 8 sequential runs on the device
  (`benchmarks.ensemble`'s members; target >= 4x);
- the on-device `trust_region` phase against scipy's `newton` per iteration
  (`benchmarks.trust_region`; target >= 5x; not yet measured on a GPU).

Measured 2026-11-24 on one lent NVIDIA H100 80GB (torch 2.11 + CUDA 13): step 11.3-12.9
ms (the same machine's CPU, one thread: 191 ms); ensemble 7.39 s sequential vs 1.45 s,
5.1x (met); residual <= 0.05 not reached in 427 s (Adam 1000 + L-BFGS: loss 0.225, best
residual 2.0) nor with the quick recipe in 388 s (residual 1.71 after its Adam phase,
9.8 at the end; its Newton phase runs scipy's trust-region solver on the host CPU).
"""

from __future__ import annotations

import time

import torch

from benchmarks import ensemble, paper_recipe, trust_region
from benchmarks._common import load, timed
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import data_cost
from bottlenecklab.training import train, train_ensemble

N, WIDTH, DEPTH, LEAK, D, LAM, STEPS = 1000, 200, 50, 5.0, 20, 0.002, 50
TARGET_ENSEMBLE, RESIDUAL, CAP_S = 4.0, 0.05, 540.0


def step_ms(device: str, steps: int = STEPS) -> float:
    """Milliseconds per float32 Adam step of the paper-size leaky ResNet on `device`."""
    torch.manual_seed(0)
    X = torch.randn(N, D, device=device)
    Y = torch.randn(N, D, device=device)
    cfg = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, schedule="adaptive")
    model = cfg.build(D, D, seed=0).to(device)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)

    def step() -> None:
        opt.zero_grad()
        (data_cost(model(X), Y) + model.regularization(LAM)).backward()
        opt.step()

    for _ in range(3):
        step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    return (time.perf_counter() - t0) / steps * 1e3


def ensemble_times(device: str) -> tuple[float, float]:
    """(8 sequential runs, one 8-member ensemble) wall seconds on `device`, best of 2."""

    def sequential() -> None:
        nets, data, cfgs = ensemble.members()
        for m, d, c in zip(nets, data, cfgs):
            train(m, d, c, progress=False, device=device)
        _sync(device)

    def batched() -> None:
        train_ensemble(*ensemble.members(), device=device)
        _sync(device)

    seq = min(timed(sequential)[0] for _ in range(2))
    ens = min(timed(batched)[0] for _ in range(2))
    return seq, ens


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main(device: str = "cuda") -> dict[str, float] | None:
    """Run the four GPU measurements on `device` and print one line each."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu: no CUDA device here; not measured", flush=True)
        return None
    name = torch.cuda.get_device_name() if device.startswith("cuda") else device
    ms = step_ms(device)
    print(f"gpu ({name}): paper-size float32 training step {ms:.2f} ms ({load()})", flush=True)
    ours = paper_recipe.run_recipe("gpu", paper_recipe.OURS, "float64", RESIDUAL, CAP_S, device)
    reached = ours["final_residual"] <= RESIDUAL
    print(
        f"gpu ({name}): time to median residual <= {RESIDUAL:g} at paper size (L~ = "
        f"{paper_recipe.LEAK:g}): "
        + (
            f"{ours['total_s']:.0f} s"
            if reached
            else f"not reached in {ours['total_s']:.0f} s (residual {ours['final_residual']:.3f})"
        ),
        flush=True,
    )
    seq, ens = ensemble_times(device)
    ratio = seq / ens
    print(
        f"gpu ({name}): {ensemble.MEMBERS} quick-size nets x {ensemble.STEPS} Adam steps: "
        f"sequential {seq:.2f} s, ensemble {ens:.2f} s -> {ratio:.2f}x (target >= "
        f"{TARGET_ENSEMBLE:g}x: {'met' if ratio >= TARGET_ENSEMBLE else 'NOT MET'})",
        flush=True,
    )
    tr = trust_region.main(device)
    return {
        "step_ms": ms,
        "time_to_residual_s": ours["total_s"],
        "ensemble_ratio": ratio,
        "trust_region_ratio": tr["ratio"],
    }
