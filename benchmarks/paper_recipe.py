"""The paper's recipe at paper size against ours (issue: time to result, target 3); on
demand only, `python -m benchmarks paper-recipe` (over an hour on one core).

One network of Fig 1a at the paper's sizes (`leaky-resnet/hamiltonian-vs-depth`, preset
`paper`: `N = 1000`, `w = 200`, `L = 50`, `lam = 0.002`, adaptive steps) at `L~ = 24`,
trained from the same start by
- the paper's recipe (App. B): Adam 20 000 (lr 1e-3) + SGD 10 000 (lr 1e-4), float32;
- ours: float64, the flagship quick preset's recipe (Adam 2000 cosine + L-BFGS 3000 +
  trust-region Newton 400), stopped as soon as its median critical-point residual is at
  most the paper recipe's final one (or after half the paper recipe's time, when the
  target is missed anyway).
The median critical-point residual (`measure.critical_point_residuals`, float64) is
measured every `LOG_EVERY` steps, its time not counted; the final `-(2/L~)H` median comes
from the layer table. Target: ours reaches a residual at least as low in <= 1/3 of the
paper recipe's time. Lines are printed as they come and the traces are written to
`runs/bench/paper-recipe.json` after each recipe, so an interrupted run keeps its part: a
later run reuses the paper recipe's finished part (delete the file to measure it again).

Measured 2026-11-24 (idle 2-core machine, one thread): paper recipe 3611 s to residual
1.772 (loss 3.663, -(2/L~)H median -349); ours 430 s to 1.712 at the end of its Adam
phase (loss 5.018, -(2/L~)H median -402): 8.4x, met, but neither network is converged.
An earlier choice of ours, Adam 1000 + L-BFGS 40 000, lowered the loss below 3.663
within 490 s but kept the residual at 18-46 and did not reach 1.772 in 1971 s.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks._common import load
from bottlenecklab.experiments import get, resolve_config
from bottlenecklab.files import write_json
from bottlenecklab.measure import (
    critical_point_residuals,
    hamiltonian_summary,
    leaky_resnet_layers,
)
from bottlenecklab.training import PhaseConfig, TrainConfig, train

EXPERIMENT, LEAK, SEED = "leaky-resnet/hamiltonian-vs-depth", 24.0, 0
LOG_EVERY = 500
TARGET_RATIO = 3.0
# ours: the flagship quick preset's recipe (Adam 2000 cosine + L-BFGS 3000 + Newton 400)
OURS = resolve_config(get(EXPERIMENT), "quick").train.phases
OUT = Path("runs/bench/paper-recipe.json")


class _Reached(Exception):
    """Raised from the log callback to stop training at the residual sought."""


def run_recipe(
    name: str,
    phases: tuple[PhaseConfig, ...],
    dtype: str,
    stop_at: float | None,
    cap_s: float,
    device: str = "cpu",
) -> dict[str, Any]:
    """Train one recipe from the shared start on `device`; trace `(seconds, median
    residual, loss)`."""
    torch.set_num_threads(1)
    cfg = resolve_config(get(EXPERIMENT), "paper", seed=SEED)
    cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, leak=LEAK))
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=getattr(torch, dtype))
    train_cfg = TrainConfig(
        lam=cfg.train.lam, dtype=dtype, phases=phases, log_every=LOG_EVERY, checkpoint_every=10**9
    )
    lam = cfg.train.lam
    trace: list[tuple[float, float, float]] = []
    spent = [0.0]  # measurement seconds, inside the training clock

    def on_log(row: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        probe = model if device == "cpu" else copy.deepcopy(model).to("cpu")
        res = statistics.median(critical_point_residuals(probe, data.x_train, data.y_train, lam))
        if device != "cpu":
            torch.cuda.synchronize()
        seconds = row["wall_s"] - spent[0]
        trace.append((seconds, res, float(row["loss"])))
        spent[0] += time.perf_counter() - t0
        print(
            f"paper-recipe: {name}: step {row['step']}, {seconds:.0f} s, median residual "
            f"{res:.4f}, loss {row['loss']:.6g} ({load()})",
            flush=True,
        )
        if (stop_at is not None and res <= stop_at) or seconds > cap_s:
            raise _Reached

    t0 = time.perf_counter()
    try:
        train(model, data, train_cfg, progress=False, on_log=on_log, device=device)
    except _Reached:
        pass
    total = time.perf_counter() - t0 - spent[0]
    model.to("cpu")
    table = leaky_resnet_layers(model, data.x_train, data.y_train, lam, gamma0=cfg.gamma0)
    summary = hamiltonian_summary(table)
    return {
        "recipe": " + ".join(f"{p.optimizer} {p.steps}" for p in phases) + f" ({dtype})",
        "total_s": total,
        "final_residual": trace[-1][1] if trace else float("nan"),
        "final_loss": trace[-1][2] if trace else float("nan"),
        "rank_H_median": summary["rank_H_median"],
        "trace": trace,
    }


def _saved_paper_part() -> dict[str, Any] | None:
    """The paper recipe's finished part of an earlier run at the same point, if any.

    It takes an hour and does not depend on our recipe, so a run interrupted during ours
    (or one re-run after a change to ours) starts where it stopped.
    """
    try:
        saved = json.loads(OUT.read_text())
    except (OSError, ValueError):
        return None
    if saved.get("leak") != LEAK or saved.get("seed") != SEED or "paper" not in saved:
        return None
    paper: dict[str, Any] = saved["paper"]
    return paper


def main() -> dict[str, Any]:
    """Both recipes; prints the times, residuals, `-(2/L~)H` and the target's verdict."""
    base = resolve_config(get(EXPERIMENT), "paper").train.phases
    out: dict[str, Any] = {"leak": LEAK, "seed": SEED}
    saved = _saved_paper_part()
    if saved is not None:
        paper = saved
        print(
            f"paper-recipe: paper: reused from {OUT} ({paper['total_s']:.0f} s, median "
            f"residual {paper['final_residual']:.4f}); delete it to measure again",
            flush=True,
        )
    else:
        paper = run_recipe("paper", base, "float32", None, float("inf"))
    out["paper"] = paper
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_json(OUT, out)
    # past half the paper recipe's time the target is missed anyway
    ours = run_recipe("ours", OURS, "float64", paper["final_residual"], paper["total_s"] / 2)
    out["ours"] = ours
    for r in (paper, ours):
        print(
            f"paper-recipe: {r['recipe']}: {r['total_s']:.0f} s, median residual "
            f"{r['final_residual']:.4f}, -(2/L~)H median {r['rank_H_median']:.3f}",
            flush=True,
        )
    reached = ours["final_residual"] <= paper["final_residual"]
    ratio = paper["total_s"] / ours["total_s"]
    verdict = (
        f"{'met' if ratio >= TARGET_RATIO else 'NOT MET'}: {ratio:.1f}x"
        if reached
        else f"NOT MET: ours did not reach {paper['final_residual']:.4f} in as long"
    )
    print(
        f"paper-recipe: ours reaches the paper recipe's residual in <= 1/{TARGET_RATIO:g} of "
        f"its time at L~ = {LEAK:g}: {verdict} ({load()})",
        flush=True,
    )
    out["verdict"] = verdict
    if "final_loss" in paper:  # context: the loss, which ours lowers much further
        sooner = [t for t, _, loss in ours["trace"] if loss <= paper["final_loss"]]
        out["ours_s_to_paper_loss"] = sooner[0] if sooner else None
        print(
            f"paper-recipe: ours reaches the paper recipe's final loss "
            f"{paper['final_loss']:.6g} "
            + (f"after {sooner[0]:.0f} s" if sooner else "not at all")
            + f" (logged every {LOG_EVERY} steps)",
            flush=True,
        )
    out["measured_at"] = time.strftime("%Y-%m-%d %H:%M")
    write_json(OUT, out)
    return out


def summary() -> None:
    """Print the last on-demand result from `OUT` (for `make bench`, which does not run it)."""
    try:
        saved = json.loads(OUT.read_text())
    except (OSError, ValueError):
        saved = {}
    if "verdict" not in saved:
        print(
            "paper-recipe: ours reaches the paper recipe's residual in <= 1/3 of its time: "
            "not measured on this machine (over an hour on one core: "
            "`python -m benchmarks paper-recipe`)",
            flush=True,
        )
        return
    paper, ours = saved["paper"], saved["ours"]
    print(
        f"paper-recipe (last on-demand run, {saved.get('measured_at', 'date not recorded')}, "
        f"L~ = {saved['leak']:g}): paper recipe {paper['total_s']:.0f} s to median residual "
        f"{paper['final_residual']:.4f} (-(2/L~)H median {paper['rank_H_median']:.3g}); ours "
        f"{ours['total_s']:.0f} s to {ours['final_residual']:.4f} (-(2/L~)H median "
        f"{ours['rank_H_median']:.3g}); ours reaches the paper recipe's residual in <= 1/3 of "
        f"its time: {saved['verdict']}",
        flush=True,
    )
