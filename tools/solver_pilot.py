"""Pilot of the kink-aware solver (issue 33) on one trained leaky-ResNet point.

From a point's checkpoint (a run folder's `points/<id>`), runs a smoothed continuation
(`--stage` phases at each `--betas` sharpness, warm-started), then `--kink-newton` steps
of the `kink_newton` phase, and prints after each stage (and every `--every` endgame
steps) the exact loss `F`, the certificate's stationarity (`tau = 1e-6`), the counts of
pre-activation entries with `|z| / rms <= 1e-12 ... 1e-1` (does a gap open?), and the
flagship's median `-(2/L~)H` (`rank_H_median`):

    PYTHONPATH=src python tools/solver_pilot.py \\
        runs/demo/leaky-resnet/hamiltonian-vs-depth/points/ID \\
        --stage newton:300 --betas 1e2,1e3,1e4,1e5,1e6 --kink-newton 20

`--stage woodbury_newton:100` runs the stages in the Gauss-Newton metric instead. Times:
wall (`t`) and this process's CPU seconds (`cpu`, what one core spent: read it on a
loaded machine).

Measurements: `docs/lab-notes/leaky-resnet.md`, "Kink-aware solver (2026-11-28)".
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from bottlenecklab.config import from_dict
from bottlenecklab.experiments._registry import get
from bottlenecklab.experiments.leaky_resnet._common import layer_measurement
from bottlenecklab.measure import certify
from bottlenecklab.training import (
    KinkNewton,
    PhaseConfig,
    TrainConfig,
    kink_newton_step,
    load_checkpoint,
    train,
)

BANDS = (1e-12, 1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def load(point: Path):
    """`(config, data, model)` of a run's grid point, the model at its checkpoint."""
    req = json.loads((point / "request.json").read_text())
    exp = get(req["payload"]["experiment"])
    cfg = from_dict(type(exp.config), req["config"])
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
    model.load_state_dict(load_checkpoint(point / "checkpoint.pt")["model"])
    return cfg, data, model


def report(tag: str, wall: float, cfg, data, model, cpu: float | None = None) -> None:
    lam = cfg.train.lam
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    with torch.no_grad():
        path = model.forward_path(X)
        F = float((path[-1] @ model.pout.T - Y).pow(2).sum(1).mean() + model.regularization(lam))
    r = torch.cat([(a.abs() / a.pow(2).mean().sqrt()).reshape(-1) for a in path[1:-1]])
    counts = [int((r <= t).sum()) for t in BANDS]
    t0 = time.perf_counter()
    cert = certify(model, data, lam, cost=cfg.train.cost, tau=1e-6)
    t_cert = time.perf_counter() - t0
    _, scalars = layer_measurement(model, data, lam, cfg.gamma0)
    print(
        f"{tag:>16} t={wall:7.1f}s "
        + (f"cpu={cpu:7.1f}s " if cpu is not None else "")
        + f"F={F:.10f} stationarity={cert.stationarity:.3e} "
        f"K={sum(cert.kinks)} median={scalars['rank_H_median']:.4f} cert={t_cert:.1f}s "
        f"counts(1e-12,1e-10,1e-8..1e-1)={counts}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("point", type=Path)
    parser.add_argument(
        "--stage", default="newton:300", help="phases per beta, e.g. lbfgs:1000+newton:20"
    )
    parser.add_argument("--betas", default="1e2,1e3,1e4,1e5,1e6")
    parser.add_argument("--kink-newton", type=int, default=20)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--start", type=Path, help="a state dict to start from instead")
    parser.add_argument("--save", type=Path, help="write the final state dict here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg, data, model = load(args.point)
    if args.start:
        model.load_state_dict(torch.load(args.start))
    lam = cfg.train.lam
    report("start", 0.0, cfg, data, model)
    wall = cpu = 0.0
    betas = [float(b) for b in args.betas.split(",")] if args.betas else []
    for beta in betas:
        stage = [s.split(":") for s in args.stage.split("+")]
        phases = tuple(PhaseConfig(m, int(n), 1.0, smooth=beta) for m, n in stage)
        tc = TrainConfig(lam=lam, cost=cfg.train.cost, phases=(*phases, PhaseConfig("lbfgs", 0)),
                         dtype="float64", log_every=10**6, checkpoint_every=10**6)  # fmt: skip
        t0, c0 = time.perf_counter(), time.process_time()
        train(model, data, tc, progress=False)
        wall, cpu = wall + time.perf_counter() - t0, cpu + time.process_time() - c0
        report(f"beta={beta:g}", wall, cfg, data, model, cpu)
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    params = [p for p in model.parameters() if p.requires_grad]

    def loss() -> torch.Tensor:
        out = model.forward_twice_differentiable(X)
        return (out - Y).pow(2).sum(1).mean() + model.regularization(lam)

    def reg() -> torch.Tensor:
        with torch.enable_grad():
            grads = torch.autograd.grad(model.regularization(lam), params)
        return torch.cat([g.reshape(-1) for g in grads])

    state = KinkNewton(1.0)
    for i in range(args.kink_newton):
        t0, c0 = time.perf_counter(), time.process_time()
        _, stopped = kink_newton_step(loss, params, state, reg)
        wall, cpu = wall + time.perf_counter() - t0, cpu + time.process_time() - c0
        size = sum(int(m.sum()) for m in state.masks)
        print(f"  step {i}: kkt {state.stationarity:.3e} |K| {size} band {state.band:.2e} "
              f"radius {state.radius:.2e} released {state.released} added {state.added}",
              flush=True)  # fmt: skip
        if stopped or (i + 1) % args.every == 0 or i + 1 == args.kink_newton:
            report(f"kink_newton {i + 1}", wall, cfg, data, model, cpu)
        if stopped:
            break
    if args.save:
        torch.save(model.state_dict(), args.save)


if __name__ == "__main__":
    main()
