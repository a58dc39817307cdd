"""Cost of the convergence certificate (`measure.certify`) against its kink-set size `|K|`,
on the paper-size leaky ResNet (`N = 1000`, `w = 200`, `L = 50`, float64, one thread).

The kink band of an untrained paper-size network is widened until it holds `|K|` = 30
(what a converged flagship net shows at `tau = 1e-6`), 100, 300 and 1000 entries, and
each certificate is timed. Target: <= 2 s at `|K| = 30` (issue 33).

Robust to a shared machine: each size is timed `REPEATS` times (best kept), as wall and
as process CPU seconds (one thread: CPU time is the wall time of an idle machine, and a
loaded one does not inflate it), and against one full-batch loss-and-gradient evaluation
of the same network timed in the same run (`gradients`: the certificate's cost in
gradient evaluations, which load scales alike). The verdict reads the CPU seconds.
"""

from __future__ import annotations

import time

import torch

from benchmarks._common import load
from bottlenecklab.measure import KinkMode, certify
from bottlenecklab.measure import _certify as certify_module
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig, data_cost

N, WIDTH, DEPTH, LEAK, LAM = 1000, 200, 50, 5.0, 0.002
SIZES = (30, 100, 300, 1000)
REPEATS = {30: 3, 100: 3, 300: 2, 1000: 1}
TARGET_S, TARGET_K = 2.0, 30


def _tau_for(net, X: torch.Tensor, entries: int) -> float:
    """The kink band that holds `entries` pre-activation entries."""
    rec = KinkMode(1.0)
    with rec:
        net.forward_path(X)
    rel = torch.cat([(c.z.abs() / c.z.pow(2).mean().sqrt()).reshape(-1) for c in rec.calls])
    return float(torch.kthvalue(rel, entries).values)


def _timed(fn) -> tuple[float, float, object]:
    """(wall s, process CPU s, value) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def _certificate(net, data, tau: float):
    certify_module._RECENT.clear()  # time the computation, not the cache
    return certify(net, data, LAM, tau=tau)


def main() -> dict[str, float]:
    torch.set_num_threads(1)
    data = TeacherConfig(dims=(20, 5, 20), n_train=N, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, init_scale=0.5).build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)

    def gradient() -> None:
        loss = data_cost(net.forward_twice_differentiable(X), Y) + net.regularization(LAM)
        torch.autograd.grad(loss, [net.weights])

    grad_s = min(_timed(gradient)[1] for _ in range(3))
    print(
        f"certificate-cost: paper-size leaky ResNet (N={N}, w={WIDTH}, L={DEPTH}), float64, "
        f"1 thread; one loss+gradient {grad_s:.3f} CPU s ({load()})",
        flush=True,
    )
    cold = _timed(lambda: _certificate(net, data, _tau_for(net, X, TARGET_K)))
    print(f"  first certificate in the process (warm-up included): {cold[0]:.2f} s", flush=True)
    out: dict[str, float] = {"gradient_s": grad_s}
    for k in SIZES:
        tau = _tau_for(net, X, k)
        runs = [_timed(lambda tau=tau: _certificate(net, data, tau)) for _ in range(REPEATS[k])]
        wall = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        cert = runs[0][2]
        line = (
            f"  |K| = {sum(cert.kinks):4d} (tau {tau:.2g}): {cpu:6.2f} CPU s, {wall:6.2f} wall s "
            f"(best of {len(runs)}), {cpu / grad_s:5.1f} gradients, {cert.iterations} rounds"
        )
        if k == TARGET_K:
            verdict = "met" if cpu <= TARGET_S else "NOT MET"
            line += f"; target <= {TARGET_S:g} s: {verdict}"
        print(line + f" ({load()})", flush=True)
        out[f"K{k}_s"] = cpu
    return out
