"""Paper-size targets of the time-to-result issue, one thread, in one process each:

- achieved GFLOP/s of our float32 training step (`N = 1000`, `w = 200`, `L = 50`) against a
  `[1000, 200] x [200, 201]` matmul timed in the same run (target >= 80 %);
- the per-layer diagnostics table (`measure.leaky_resnet_layers`) at paper size in
  float64 (target <= 2 s);
- (the adaptive layer-step overhead, with its A/A control, is `adaptive_overhead`);
- peak resident memory of paper-size training (target <= 2 GiB), in a fresh process.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import torch

from benchmarks._common import load
from bottlenecklab.measure import leaky_resnet_layers
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig, data_cost
from bottlenecklab.training import PhaseConfig, TrainConfig

N, WIDTH, DEPTH, LEAK, D, LAM = 1000, 200, 50, 5.0, 20, 0.002
FLOPS_PER_STEP = 3 * 2 * N * WIDTH * (WIDTH + 1) * DEPTH  # as the reference program counts


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def _best_seconds(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _step_gflops() -> tuple[float, float]:
    torch.manual_seed(0)
    X, Y = torch.randn(N, D), torch.randn(N, D)
    model = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK).build(D, D, seed=0)
    opt = torch.optim.Adam([model.weights], lr=1e-3, fused=True)

    def step() -> None:
        opt.zero_grad()
        (data_cost(model(X), Y) + model.regularization(LAM)).backward()
        opt.step()

    step()
    ours = _best_seconds(lambda: [step() for _ in range(5)], 3) / 5
    A, B = torch.randn(N, WIDTH), torch.randn(WIDTH, WIDTH + 1)
    mm = _best_seconds(lambda: [A @ B for _ in range(50)], 3) / 50
    return FLOPS_PER_STEP / ours / 1e9, 2 * N * WIDTH * (WIDTH + 1) / mm / 1e9


def _peak_memory_child() -> None:  # run in a fresh process: `python -m benchmarks.paper_size`
    torch.set_num_threads(1)
    data = TeacherConfig(dims=(20, 5, 20), n_train=N, n_test=N).build(seed=0)
    model = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, schedule="adaptive").build(
        data.d_in, data.d_out, seed=1
    )
    from bottlenecklab.training import train

    cfg = TrainConfig(lam=LAM, phases=(PhaseConfig("adam", 20, 1e-3),), log_every=10)
    train(model, data, cfg, progress=False)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux


def main() -> dict[str, float]:
    torch.set_num_threads(1)
    ours, matmul = _step_gflops()
    frac = ours / matmul
    print(
        f"paper-size: training step {ours:.1f} GFLOP/s, matmul [1000,200]x[200,201] "
        f"{matmul:.1f} GFLOP/s -> {100 * frac:.0f} % (target >= 80 %: {_verdict(frac >= 0.8)}) "
        f"({load()})",
        flush=True,
    )
    data = TeacherConfig(dims=(20, 5, 20), n_train=N, n_test=N).build(seed=0)
    net = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, schedule="adaptive").build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    table_s = _best_seconds(lambda: leaky_resnet_layers(net, data.x_train, data.y_train, LAM), 2)
    print(
        f"paper-size: per-layer diagnostics table in float64 {table_s:.2f} s "
        f"(target <= 2 s: {_verdict(table_s <= 2.0)})",
        flush=True,
    )
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.paper_size"], capture_output=True, text=True
    )
    peak_gib = int(out.stdout.strip().splitlines()[-1]) / 2**20
    print(
        f"paper-size: peak memory of training (Adam, float32, adaptive) {peak_gib:.2f} GiB "
        f"(target <= 2 GiB: {_verdict(peak_gib <= 2.0)})",
        flush=True,
    )
    return {
        "step_gflops": ours,
        "matmul_gflops": matmul,
        "table_s": table_s,
        "peak_gib": peak_gib,
    }


if __name__ == "__main__":
    _peak_memory_child()
