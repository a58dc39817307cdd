"""8 quick-size leaky ResNets of one shape: `train_ensemble` vs 8 sequential `train` runs.

Quick size of `leaky-resnet/hamiltonian-vs-depth`: teacher (10, 3, 10), N = 300, w = 50,
L = 30, float64, adaptive layer steps; 8 seeds, Adam only (the ensemble refuses L-BFGS).
Both sides use one torch thread, as the sweep executors run every job.
"""

from __future__ import annotations

import torch

from benchmarks._common import load, timed
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train, train_ensemble

MEMBERS, STEPS = 8, 100
THREADS = 1  # as the sweep executors run every job (2 threads thrash on a shared machine)


def _members():
    task = TeacherConfig(dims=(10, 3, 10), n_train=300, n_test=300)
    model = LeakyResNetConfig(width=50, depth=30, leak=10.0, schedule="adaptive")
    cfg = TrainConfig(
        lam=0.02, phases=(PhaseConfig("adam", STEPS, 3e-3),), dtype="float64", log_every=50
    )
    data = [task.build(seed=s) for s in range(MEMBERS)]
    nets = [model.build(10, 10, seed=s + 1, dtype=torch.float64) for s in range(MEMBERS)]
    return nets, data, [cfg] * MEMBERS


def main() -> dict[str, float]:
    """Run the benchmark and print one line; returns the timings."""
    torch.set_num_threads(THREADS)
    nets, data, cfgs = _members()
    seq, _ = timed(lambda: [train(m, d, c, progress=False) for m, d, c in zip(nets, data, cfgs)])
    nets, data, cfgs = _members()
    ens, _ = timed(lambda: train_ensemble(nets, data, cfgs))
    print(
        f"ensemble: {MEMBERS} quick-size nets x {STEPS} Adam steps: sequential {seq:.1f} s, "
        f"ensemble {ens:.1f} s -> {seq / ens:.2f}x (target >= 2x; "
        f"{torch.get_num_threads()} torch threads; {load()})",
        flush=True,
    )
    return {"sequential_s": seq, "ensemble_s": ens, "ratio": seq / ens}
