"""Our leaky-ResNet training step vs the reference program `shared/bench/naive_leaky_resnet.py`
(one nn.Linear per layer, Python loop), same configuration and thread count, alternating
`ROUNDS` times (the reference in its own process, then ours); medians of each."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from benchmarks._common import load
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import data_cost

NAIVE = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench" / "naive_leaky_resnet.py"
N, WIDTH, DEPTH, LEAK, D, STEPS, THREADS, LAM = 1000, 200, 50, 5.0, 20, 20, 1, 0.002
TARGET = 1.5  # the time-to-result issue's speed-up target at paper size
ROUNDS = 3


def _ours() -> float:
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    X, Y = torch.randn(N, D), torch.randn(N, D)
    cfg = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, schedule="equidistant")
    model = cfg.build(D, D, seed=0)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)

    def step() -> float:  # the step of `bottlenecklab.training.train`
        opt.zero_grad()
        loss = data_cost(model(X), Y) + model.regularization(LAM)
        loss.backward()
        opt.step()
        return float(loss.detach())

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        step()
    return (time.perf_counter() - t0) / STEPS * 1e3


def main() -> dict[str, float] | None:
    """Run both and print one line; returns ms per step (None without the reference)."""
    path = Path(os.environ.get("BOTTLENECKLAB_NAIVE_BENCH", NAIVE)).resolve()
    if not path.is_file():
        print(f"naive: reference program not found at {path}; skipped", flush=True)
        return None
    args = [f"--n={N}", f"--width={WIDTH}", f"--depth={DEPTH}", f"--leak={LEAK}", f"--d={D}"]
    args += [f"--steps={STEPS}", f"--threads={THREADS}"]
    naives, ourses = [], []
    for _ in range(ROUNDS):
        out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True)
        naives.append(json.loads(out.stdout.strip().splitlines()[-1])["ms_per_step"])
        ourses.append(_ours())
    naive, ours = statistics.median(naives), statistics.median(ourses)
    print(
        f"naive: leaky ResNet N={N} w={WIDTH} L={DEPTH} float32, {THREADS} thread: "
        f"reference {naive:.1f} ms/step, ours {ours:.1f} ms/step (medians of {ROUNDS} "
        f"alternating rounds) -> {naive / ours:.2f}x "
        f"(target >= {TARGET:g}x: {'met' if naive / ours >= TARGET else 'NOT MET'}) ({load()})",
        flush=True,
    )
    return {"naive_ms": naive, "ours_ms": ours, "ratio": naive / ours}
