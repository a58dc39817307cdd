"""The compiled training step (`TrainConfig.compile`) against the eager one and the naive
reference (`shared/bench/naive_leaky_resnet.py`), at paper size (`N = 1000, w = 200,
L = 50`, float32, one thread), alternating `ROUNDS` times: targets >= 1.5x naive and
>= 80 % of a same-size matmul's GFLOP/s. When the compiled step misses them, the top ops
of its profile are printed (where the time goes). Also: the compile time against a quick
run's length (2000 Adam steps at `w = 40, L = 30, N = 300`)."""

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
from benchmarks.naive import NAIVE
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import data_cost
from bottlenecklab.training._compile import compiled_forward

N, WIDTH, DEPTH, LEAK, D, LAM = 1000, 200, 50, 5.0, 20, 0.002
STEPS, ROUNDS, THREADS = 10, 3, 1
FLOPS_PER_STEP = 3 * 2 * N * WIDTH * (WIDTH + 1) * DEPTH  # as the reference program counts


def _stepper(compiled: bool, n: int, width: int, depth: int):
    """A training step `() -> None` of `train` (Adam), and the compile seconds."""
    torch.manual_seed(0)
    X, Y = torch.randn(n, D), torch.randn(n, D)
    cfg = LeakyResNetConfig(width=width, depth=depth, leak=LEAK, schedule="equidistant")
    model = cfg.build(D, D, seed=0)
    t0 = time.perf_counter()
    forward = compiled_forward(model, X) if compiled else model
    compile_s = time.perf_counter() - t0
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3, fused=True)

    def step() -> None:
        opt.zero_grad()
        (data_cost(forward(X), Y) + model.regularization(LAM)).backward()
        opt.step()

    for _ in range(2):
        step()
    return step, compile_s


def _ms(step, steps: int = STEPS) -> float:
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1e3


def _naive_ms() -> float | None:
    path = Path(os.environ.get("BOTTLENECKLAB_NAIVE_BENCH", NAIVE)).resolve()
    if not path.is_file():
        return None
    args = [f"--n={N}", f"--width={WIDTH}", f"--depth={DEPTH}", f"--leak={LEAK}", f"--d={D}"]
    args += [f"--steps={STEPS}", f"--threads={THREADS}"]
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["ms_per_step"]


def _matmul_gflops() -> float:
    A, B = torch.randn(N, WIDTH), torch.randn(WIDTH, WIDTH + 1)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(50):
            A @ B
        best = min(best, (time.perf_counter() - t0) / 50)
    return 2 * N * WIDTH * (WIDTH + 1) / best / 1e9


def _profile(step) -> str:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            step()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12)


def overhead() -> None:
    """Compile seconds against a quick run (2000 Adam steps, w = 40, L = 30, N = 300)."""
    torch.set_num_threads(THREADS)
    eager, _ = _stepper(False, 300, 40, 30)
    fast, compile_s = _stepper(True, 300, 40, 30)
    e, c = _ms(eager, 50), _ms(fast, 50)
    run_e, run_c = 2000 * e / 1e3, compile_s + 2000 * c / 1e3
    print(
        f"compiled (quick size): compile {compile_s:.1f} s; 2000 steps eager {run_e:.1f} s, "
        f"compiled {run_c:.1f} s including the compile ({e:.2f} vs {c:.2f} ms/step) ({load()})",
        flush=True,
    )


def main() -> None:
    torch.set_num_threads(THREADS)
    eager, _ = _stepper(False, N, WIDTH, DEPTH)
    fast, compile_s = _stepper(True, N, WIDTH, DEPTH)
    naives, eagers, fasts = [], [], []
    for _ in range(ROUNDS):
        naive = _naive_ms()
        if naive is not None:
            naives.append(naive)
        eagers.append(_ms(eager))
        fasts.append(_ms(fast))
    e, c = statistics.median(eagers), statistics.median(fasts)
    mm = _matmul_gflops()
    gf = {k: FLOPS_PER_STEP / (v / 1e3) / 1e9 for k, v in (("eager", e), ("compiled", c))}
    line = (
        f"compiled: N={N} w={WIDTH} L={DEPTH} float32, {THREADS} thread, compile {compile_s:.0f} s;"
        f" eager {e:.1f} ms/step ({gf['eager'] / mm:.0%} of matmul), compiled {c:.1f} ms/step"
        f" ({gf['compiled'] / mm:.0%} of matmul; target >= 80 %: "
        f"{'met' if gf['compiled'] >= 0.8 * mm else 'NOT MET'})"
    )
    met = gf["compiled"] >= 0.8 * mm
    if naives:
        naive = statistics.median(naives)
        line += (
            f"; naive {naive:.1f} ms/step -> eager {naive / e:.2f}x, compiled {naive / c:.2f}x"
            f" (target >= 1.5x: {'met' if naive / c >= 1.5 else 'NOT MET'})"
        )
        met = met and naive / c >= 1.5
    else:
        line += "; naive reference not found: not measured"
    print(f"{line} (medians of {ROUNDS} alternating rounds, {load()})", flush=True)
    if not met:
        print("compiled step profile (top ops, self CPU time):\n" + _profile(fast), flush=True)
    overhead()
