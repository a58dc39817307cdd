"""Time to a converged network (issue: time to result): the flagship's quick point at the
largest effective depth, trained by the old recipe (Adam 2000 + L-BFGS 8000) and by the
quick preset's recipe (Adam 2000 + L-BFGS 3000 + trust-region Newton 400), one after the
other in one process. The median critical-point residual is measured every 100 steps
(`measure.critical_point_residuals`; its time is not counted) and the training wall time
to reach each threshold is reported; the target is residual <= 0.05, >= 3x sooner.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any

import torch

from benchmarks._common import load
from bottlenecklab.experiments import get, resolve_config
from bottlenecklab.measure import critical_point_residuals
from bottlenecklab.training import PhaseConfig, TrainConfig, train

EXPERIMENT, LEAK, SEED = "leaky-resnet/hamiltonian-vs-depth", 24.0, 0
THRESHOLDS = (0.3, 0.15, 0.1, 0.05)
TARGET, TARGET_RATIO = 0.05, 3.0
OLD = (
    PhaseConfig("adam", 2000, 1e-3, schedule="cosine"),
    PhaseConfig("lbfgs", 8000, 1.0),
)


def _trace(phases: tuple[PhaseConfig, ...]) -> tuple[list[tuple[float, float]], float]:
    """`[(training seconds, median residual)]` every 100 steps, and the total seconds."""
    torch.set_num_threads(1)
    cfg = resolve_config(get(EXPERIMENT), "quick", seed=SEED)
    cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, leak=LEAK))
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
    train_cfg = TrainConfig(
        lam=cfg.train.lam, dtype="float64", phases=phases, log_every=100, checkpoint_every=10**9
    )
    trace: list[tuple[float, float]] = []
    spent = [0.0]  # measurement seconds, inside the training clock

    def on_log(row: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        res = critical_point_residuals(model, data.x_train, data.y_train, cfg.train.lam)
        trace.append((row["wall_s"] - spent[0], statistics.median(res.tolist())))
        spent[0] += time.perf_counter() - t0

    result = train(model, data, train_cfg, progress=False, on_log=on_log)
    return trace, result.wall_s - spent[0]


def _first(trace: list[tuple[float, float]], threshold: float) -> float | None:
    return next((t for t, r in trace if r <= threshold), None)


def main() -> dict[str, Any]:
    """Both recipes; prints the seconds to each threshold and the target's verdict."""
    new = resolve_config(get(EXPERIMENT), "quick").train.phases
    out: dict[str, Any] = {}
    for name, phases in (("old", OLD), ("new", new)):
        trace, total = _trace(phases)
        best = min(r for _, r in trace)
        reach = {th: _first(trace, th) for th in THRESHOLDS}
        cells = ", ".join(
            f"<= {th:g}: {'never' if s is None else f'{s:.0f} s'}" for th, s in reach.items()
        )
        recipe = " + ".join(f"{p.optimizer} {p.steps}" for p in phases)
        print(
            f"convergence: {recipe}: {total:.0f} s, final residual {trace[-1][1]:.3f}, "
            f"best {best:.3f}; time to residual {cells}",
            flush=True,
        )
        out[name] = {
            "total_s": total,
            "reach": reach,
            "final": trace[-1][1],
            "best": best,
            "trace": trace,
        }
    old_t, new_t = out["old"]["reach"][TARGET], out["new"]["reach"][TARGET]
    if new_t is None:
        verdict = f"NOT MET: the new recipe never reaches residual {TARGET:g}"
    elif old_t is None:
        ratio = out["old"]["total_s"] / new_t
        verdict = (
            f"{'MET' if ratio >= TARGET_RATIO else 'NOT MET'}: old never reaches it in "
            f"{out['old']['total_s']:.0f} s, new in {new_t:.0f} s (>= {ratio:.1f}x)"
        )
    else:
        ratio = old_t / new_t
        verdict = f"{'MET' if ratio >= TARGET_RATIO else 'NOT MET'}: {ratio:.2f}x"
    # what the old recipe's own final quality costs with the new one
    same = _first(out["new"]["trace"], out["old"]["final"])
    if same is not None:
        print(
            f"convergence: the new recipe reaches the old one's final residual "
            f"{out['old']['final']:.3f} in {same:.0f} s against {out['old']['total_s']:.0f} s "
            f"-> {out['old']['total_s'] / same:.1f}x",
            flush=True,
        )
    print(
        f"convergence: target residual <= {TARGET:g} at L~ = {LEAK:g}, >= {TARGET_RATIO:g}x "
        f"sooner: {verdict} ({load()})",
        flush=True,
    )
    out["verdict"] = verdict
    return out
