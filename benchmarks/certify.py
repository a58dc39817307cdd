"""Cost of the convergence certificate (`measure.certify`) on the paper-size leaky ResNet
(`N = 1000`, `w = 200`, `L = 50`, float64, one thread; target <= 2 s, like the layer table).

A converged network's kink set is small (the flagship quick net: 28 entries in 24 rows at
`tau = 1e-6`); its cost grows with the kinked rows and entries. The benchmark widens the
kink band of a paper-size network until it holds about 30 and 150 entries (what converged
nets show at `tau = 1e-6` and `1e-4`), and times the certificate, and the plain gradient
it starts from.
"""

from __future__ import annotations

import time

import torch

from bottlenecklab.measure import KinkMode, certify
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig

N, WIDTH, DEPTH, LEAK, LAM = 1000, 200, 50, 5.0, 0.002
TARGET_S = 2.0


def _tau_for(net, X, entries: int) -> float:
    """The kink band that holds about `entries` pre-activation entries."""
    rec = KinkMode(1.0)
    with rec:
        net.forward_path(X)
    rel = torch.cat([(c.z.abs() / c.z.pow(2).mean().sqrt()).reshape(-1) for c in rec.calls])
    return float(torch.kthvalue(rel, entries).values)


def main() -> None:
    torch.set_num_threads(1)
    data = TeacherConfig(dims=(20, 5, 20), n_train=N, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, init_scale=0.5).build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    X = torch.as_tensor(data.x_train)
    print(f"certify: paper-size leaky ResNet (N={N}, w={WIDTH}, L={DEPTH}), float64, 1 thread")
    for entries in (30, 150):
        tau = _tau_for(net, X, entries)
        t0 = time.perf_counter()
        cert = certify(net, data, LAM, tau=tau)
        dt = time.perf_counter() - t0
        verdict = "met" if dt <= TARGET_S else "NOT MET"
        print(
            f"  {sum(cert.kinks)} kink entries (tau {tau:.2g}): {dt:.2f} s "
            f"({cert.iterations} rounds; target <= {TARGET_S:g} s: {verdict})"
        )
