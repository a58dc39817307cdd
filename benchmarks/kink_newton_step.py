"""One `kink_newton_step` on the paper-size leaky ResNet (`N = 1000`, `w = 200`, `L = 50`,
float64, one thread): the matrix-free constraint Jacobian against the dense one.

An untrained network (the cost of a step does not depend on where it is taken, only on
the kink set's size and the number of CG iterations) with the kink set forced to the
`|K|` entries of smallest `|z| / rms`. Each case runs in a fresh process (its peak
resident memory is its own): wall and CPU seconds of the step, of which the piece
(`_Point`: the gradient graph and `J J^T`, dense or matrix-free) takes how much, the
Hessian-vector and Jacobian products the step made, and the peak memory; and the
iterations scipy's `minres` needs on the formed `J J^T` (to `sqrt(eps)`, right-hand side
in its range), what one Krylov solve would cost in `J v` and `J^T u` pairs instead. The dense path
is run where its `J` fits (`|K| P` floats, plus a batched backward pass's intermediates
for every row at once); the 300-entry dense `J` alone is 4.8 GB.

On demand (minutes): `python -m benchmarks kink-newton-step`.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import scipy.sparse.linalg
import torch

from benchmarks._common import load

N, WIDTH, DEPTH, LEAK, LAM = 1000, 200, 50, 5.0, 0.002
CASES = ((30, "dense"), (30, "matrix-free"), (300, "matrix-free"))


def _child(entries: int, path: str) -> None:  # `python -m benchmarks.kink_newton_step K PATH`
    from bottlenecklab.models import LeakyResNetConfig
    from bottlenecklab.tasks import TeacherConfig
    from bottlenecklab.training import KinkNewton, kink_newton_step
    from bottlenecklab.training import _kink_newton as kn
    from bottlenecklab.training._objective import Objective

    torch.set_num_threads(1)
    data = TeacherConfig(dims=(20, 5, 20), n_train=N, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=WIDTH, depth=DEPTH, leak=LEAK, init_scale=0.5).build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    obj = Objective(net, data, "mse", LAM, torch.float64, "cpu")

    def loss_fn() -> torch.Tensor:
        return obj.loss(net.forward_twice_differentiable)

    with torch.no_grad(), kn.PieceMode() as rec:
        loss_fn()
    ratios = [z.abs() / z.pow(2).mean().sqrt() for z in rec.z]
    band = torch.kthvalue(torch.cat([r.reshape(-1) for r in ratios]), entries).values
    state = KinkNewton(1.0)
    state.masks = [r <= band for r in ratios]
    state.barred = [torch.zeros(r.shape, dtype=torch.int64) for r in ratios]
    w0, c0 = time.perf_counter(), time.process_time()
    with torch.enable_grad():
        torch.autograd.grad(loss_fn(), obj.params)
    grad_s = time.process_time() - c0
    base_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    counts = {"hvp": 0, "Jv": 0, "JTu": 0, "point_s": 0.0, "minres": 0}

    class Counted(kn._Point):
        def __init__(self, *args, **kwargs) -> None:
            t0 = time.process_time()
            super().__init__(*args, **kwargs)
            counts["point_s"] += time.process_time() - t0
            # what one Krylov solve of J J^T would take instead (on the formed matrix)
            gram = (self._evecs * self._evals) @ self._evecs.T
            rhs = gram @ torch.ones_like(self._evals)
            scipy.sparse.linalg.minres(
                gram.numpy(),
                rhs.numpy(),
                rtol=torch.finfo(gram.dtype).eps ** 0.5,
                maxiter=10 * len(rhs),
                callback=lambda _: counts.__setitem__("minres", counts["minres"] + 1),
            )

        def hvp(self, v):
            counts["hvp"] += 1
            return super().hvp(v)

        def Jv(self, v):
            counts["Jv"] += 1
            return super().Jv(v)

        def JTu(self, u):
            counts["JTu"] += 1
            return super().JTu(u)

    kn._Point, kn._MATRIX_FREE = Counted, path == "matrix-free"
    radius = state.radius
    w0, c0 = time.perf_counter(), time.process_time()
    kink_newton_step(loss_fn, obj.params, state)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {
        "K": sum(int(m.sum()) for m in state.masks),
        "P": sum(p.numel() for p in obj.params),
        "wall_s": wall,
        "cpu_s": cpu,
        "grad_s": grad_s,
        "accepted": state.radius >= radius,
        "base_gib": base_kib / 2**20,
        "peak_gib": peak_kib / 2**20,
        **counts,
    }
    print(json.dumps(out))


def main() -> dict[str, float]:
    """Run each case in a fresh process and print one line per case."""
    print(
        f"kink-newton-step: paper-size leaky ResNet (N={N}, w={WIDTH}, L={DEPTH}), float64, "
        f"1 thread, untrained, kink set forced ({load()})",
        flush=True,
    )
    result: dict[str, float] = {}
    for entries, path in CASES:
        run = subprocess.run(
            [sys.executable, "-m", "benchmarks.kink_newton_step", str(entries), path],
            capture_output=True,
            text=True,
        )
        if run.returncode:
            print(f"  |K| = {entries} {path}: failed ({run.stderr.strip()[-300:]})", flush=True)
            continue
        r = json.loads(run.stdout.strip().splitlines()[-1])
        print(
            f"  |K| = {r['K']:4d} {path:>11}: step {r['wall_s']:6.1f} wall s "
            f"({r['cpu_s']:6.1f} CPU s, of which the piece {r['point_s']:6.1f}), "
            f"{r['cpu_s'] / r['grad_s']:5.0f} gradients; {r['hvp']} Hv, {r['Jv']} Jv, "
            f"{r['JTu']} J^T u (minres on J J^T: {r['minres']} iterations); "
            f"peak {r['peak_gib']:.2f} GiB (before the step "
            f"{r['base_gib']:.2f}); {'accepted' if r['accepted'] else 'rejected'} "
            f"({load()})",
            flush=True,
        )
        result[f"K{entries}_{path}_s"] = r["wall_s"]
    return result


if __name__ == "__main__":
    _child(int(sys.argv[1]), sys.argv[2])
