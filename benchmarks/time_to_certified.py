"""Time to a certified network (issue 33): one grid point of a quick preset, trained from
its own random start by the recipe the preset used before `kink_newton` and by the recipe
with `kink_newton`, one after the other in one process (float64, one thread). The
certificate (`measure.certify`, at the experiment's kink band `tau`) is taken where each
phase ends; its time is not counted. Reported per net and recipe: the training seconds
to reach the experiment's gate and the issue's target (stationarity <= 1e-4), and the
stationarity at the end. Target: the new recipe reaches 1e-4 in at most the seconds the
old one takes to reach its gate.

    python -m benchmarks time-to-certified          # the width-plateau nets (minutes)
    python -m benchmarks time-to-certified-all      # also the flagship and FCNN nets (hours)
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

from benchmarks._common import load
from bottlenecklab.config import apply_overrides
from bottlenecklab.experiments import get, resolve_config
from bottlenecklab.experiments.l2._plateau import KINK_END, quick_phases
from bottlenecklab.measure import certify
from bottlenecklab.training import train

TARGET = 1e-4

# `l2/width-plateau-digits`' quick recipe before `kink_newton` (2026-11-28): Adam, GD, the
# smoothed continuation, then five exact restarted L-BFGS runs of 200 and L-BFGS 100.
_DIGITS_START = (
    {"optimizer": "adam", "steps": 3000, "lr": 1e-3},
    {"optimizer": "sgd", "steps": 2000, "lr": 0.05, "backtrack": True},
)
_TEACHER_START = (
    {"optimizer": "adam", "steps": 1000, "lr": 1e-3},
    *({"optimizer": "lbfgs", "steps": 200, "lr": 1.0},) * 5,
)


@dataclass(frozen=True)
class Net:
    """One benchmarked point: `experiment`'s quick preset with `point` overrides (a grid
    point), trained by `old` and by `new` (None: the experiment's current quick recipe)."""

    experiment: str
    point: dict[str, Any]
    old: tuple[dict[str, Any], ...]
    new: tuple[dict[str, Any], ...] | None = None


NETS = (
    Net(
        "l2/width-plateau-digits",
        {"model.width": 2, "train.lam": 1e-4, "seed": 0},
        quick_phases(*_DIGITS_START),
    ),
    Net(
        "l2/width-plateau-digits",
        {"model.width": 8, "train.lam": 1e-4, "seed": 0},
        quick_phases(*_DIGITS_START),
    ),
    Net(
        "l2/width-plateau",
        {"model.width": 2, "seed": 0},
        quick_phases(*_TEACHER_START),
        quick_phases(*_TEACHER_START, end=KINK_END),
    ),
)


def _trace(exp_name: str, point: dict[str, Any], phases) -> dict[str, Any]:
    """Train one recipe; `(seconds, stationarity)` where each phase ends."""
    torch.set_num_threads(1)
    exp = get(exp_name)
    cfg = apply_overrides(resolve_config(exp, "quick"), {**point, "train.phases": phases})
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
    tau = cfg.certify.tau
    train_cfg = replace(cfg.train, dtype="float64", log_every=10**9, checkpoint_every=10**9)
    trace: list[tuple[float, float]] = []
    clock = {"t0": time.perf_counter(), "spent": 0.0}

    def measure() -> None:
        t0 = time.perf_counter()
        stat = certify(model, data, cfg.train.lam, cost=cfg.train.cost, tau=tau).stationarity
        trace.append((t0 - clock["t0"] - clock["spent"], stat))
        clock["spent"] += time.perf_counter() - t0

    train(model, data, train_cfg, progress=False, on_phase=lambda i, t: i and measure())
    measure()
    return {"trace": trace, "gate": cfg.certify.threshold}


def _first(trace: list[tuple[float, float]], level: float) -> float | None:
    return next((t for t, s in trace if math.isfinite(s) and s <= level), None)


def _cell(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.0f} s"


def run(nets: tuple[Net, ...]) -> list[dict[str, Any]]:
    """Both recipes of each net; prints one line per recipe and the target's verdict."""
    rows = []
    print(f"time-to-certified ({load()})", flush=True)
    for net in nets:
        new = net.new or resolve_config(get(net.experiment), "quick").train.phases
        out: dict[str, Any] = {"net": net}
        for name, phases in (("old", net.old), ("new", new)):
            r = _trace(net.experiment, net.point, phases)
            gate, trace = r["gate"], r["trace"]
            out[name] = {
                "total_s": trace[-1][0],
                "final": trace[-1][1],
                "to_gate": _first(trace, gate),
                "to_target": _first(trace, TARGET),
                "gate": gate,
            }
            o = out[name]
            print(
                f"  {net.experiment} {net.point}, {name} recipe: {o['total_s']:.0f} s, "
                f"stationarity {o['final']:.2e}; to the gate {gate:g}: {_cell(o['to_gate'])}, "
                f"to {TARGET:g}: {_cell(o['to_target'])}",
                flush=True,
            )
        old_s = out["old"]["to_gate"] or out["old"]["total_s"]
        met = out["new"]["to_target"] is not None and out["new"]["to_target"] <= old_s
        print(f"  -> target {'met' if met else 'not met'}", flush=True)
        rows.append(out)
    return rows


def main() -> list[dict[str, Any]]:
    """The width-plateau nets (minutes on one core)."""
    return run(NETS)


def main_all() -> list[dict[str, Any]]:
    """Every net of the issue's list that has a quick recipe here (hours on one core): the
    width-plateau nets and the flagship's largest-depth point, its recipe then
    `kink_newton` 20."""
    flagship = "leaky-resnet/hamiltonian-vs-depth"
    old = tuple(asdict(p) for p in resolve_config(get(flagship), "quick").train.phases)
    point = {"model.leak": 24.0, "seed": 0}
    kink = {"optimizer": "kink_newton", "steps": 20, "lr": 1.0}
    return run((*NETS, Net(flagship, point, old, (*old, kink))))
