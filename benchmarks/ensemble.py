"""8 quick-size leaky ResNets of one shape: `train_ensemble` vs 8 sequential `train` runs.

Quick size of `leaky-resnet/hamiltonian-vs-depth`: teacher (10, 3, 10), N = 300, w = 50,
L = 30, float64, adaptive layer steps; 8 seeds, Adam only (an ensemble trains the
first-order phases; L-BFGS is per run). Timed at 1 thread and at one thread per core.
"""

from __future__ import annotations

import functools
import os

import torch

from benchmarks._common import load, timed
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train, train_ensemble

MEMBERS, STEPS = 8, 100
THREADS = 1  # as the sweep executors run every job (2 threads thrash on a shared machine)


def members():
    """(`MEMBERS` fresh quick-size nets, their data, their configs): one ensemble's input."""
    task = TeacherConfig(dims=(10, 3, 10), n_train=300, n_test=300)
    model = LeakyResNetConfig(width=50, depth=30, leak=10.0, schedule="adaptive")
    cfg = TrainConfig(
        lam=0.02, phases=(PhaseConfig("adam", STEPS, 3e-3),), dtype="float64", log_every=50
    )
    data = [task.build(seed=s) for s in range(MEMBERS)]
    nets = [model.build(10, 10, seed=s + 1, dtype=torch.float64) for s in range(MEMBERS)]
    return nets, data, [cfg] * MEMBERS


def _time(threads: int, repeats: int = 3) -> tuple[float, float]:
    """(sequential, ensemble) best wall seconds of `repeats` alternating tries."""
    torch.set_num_threads(threads)
    seq, ens = float("inf"), float("inf")
    for _ in range(repeats):
        seq = min(seq, timed(_sequential(*members()))[0])
        ens = min(ens, timed(functools.partial(train_ensemble, *members()))[0])
    return seq, ens


def _sequential(nets, data, cfgs):
    return lambda: [train(m, d, c, progress=False) for m, d, c in zip(nets, data, cfgs)]


def main() -> dict[str, float]:
    """Run the benchmark and print one line per thread count; returns the timings.

    The headline ratio compares each side at its best thread count (one process owning
    the machine): the per-run trainer gains little from a second thread on these small
    matrices, the ensemble's batched matmuls do.
    """
    out: dict[str, float] = {}
    for threads in (1, os.cpu_count() or 1):
        seq, ens = _time(threads)
        out[f"sequential_{threads}t_s"], out[f"ensemble_{threads}t_s"] = seq, ens
        print(
            f"ensemble: {MEMBERS} quick-size nets x {STEPS} Adam steps, {threads} thread(s): "
            f"sequential {seq:.2f} s, ensemble {ens:.2f} s (best of 3) -> {seq / ens:.2f}x "
            f"({load()})",
            flush=True,
        )
    seq = min(v for k, v in out.items() if k.startswith("sequential"))
    ens = min(v for k, v in out.items() if k.startswith("ensemble"))
    out["ratio"] = seq / ens
    print(f"ensemble: best vs best {seq / ens:.2f}x (target >= 2x)", flush=True)
    torch.set_num_threads(THREADS)
    return out
