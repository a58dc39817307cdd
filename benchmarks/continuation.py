"""Continuation in lambda at the paper's small weight decay (issue 24, item 1): the
flagship's quick point (`leaky-resnet/hamiltonian-vs-depth`, preset `quick`: teacher
[20, 5, 20], w = 40, L = 30, N = 300, float64) at `lam = 0.002` (the paper's, not the
preset's 0.05) and `L~ = 12`, trained from the same start, one after the other, by
- direct: the quick preset's recipe at `lam = 0.002` (Adam 2000 cosine + L-BFGS 3000 +
  trust-region Newton 400);
- continuation: the same Adam phase at `lam = 0.05`, L-BFGS down the geometric path
  0.05 -> 0.002 in `STAGES` stages of 3000 / `STAGES` steps (`training.continuation`),
  Newton 400 at 0.002: the same step budget.
For each: training wall time, the certificate's stationarity at `lam = 0.002`
(`measure.certify`, the experiment's gate: 0.2, `LEAKY_GATE`), the median over layers of `-(2/L~)H`
(`measure.leaky_resnet_layers(..., clarke=True)`) and the final loss. One thread.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import torch

from benchmarks._common import load
from bottlenecklab.experiments import get, resolve_config
from bottlenecklab.measure import certify, hamiltonian_summary, leaky_resnet_layers
from bottlenecklab.training import PhaseConfig, TrainConfig, continuation, train

EXPERIMENT, LEAK, SEED = "leaky-resnet/hamiltonian-vs-depth", 12.0, 0
LAM, LAM_START, STAGES = 0.002, 0.05, 4


def recipes() -> dict[str, tuple[PhaseConfig, ...]]:
    """The two recipes (same total steps): the quick preset's phases at `LAM`, and the
    continuation from `LAM_START` with the same Adam and Newton phases."""
    adam, lbfgs, newton = resolve_config(get(EXPERIMENT), "quick").train.phases
    stage = dataclasses.replace(lbfgs, steps=lbfgs.steps // STAGES)
    path = continuation(LAM_START, LAM, STAGES, stage)
    cont = (dataclasses.replace(adam, lam=LAM_START), *path, newton)
    return {"direct": (adam, lbfgs, newton), "continuation": cont}


def run(name: str, phases: tuple[PhaseConfig, ...]) -> dict[str, Any]:
    """Train one recipe from the shared start at `L~ = LEAK`; measure at `LAM`."""
    torch.set_num_threads(1)
    cfg = resolve_config(get(EXPERIMENT), "quick", seed=SEED)
    cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, leak=LEAK))
    data = cfg.task.build(seed=cfg.seed)
    model = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
    train_cfg = TrainConfig(
        lam=LAM, dtype="float64", phases=phases, log_every=200, checkpoint_every=10**9
    )
    result = train(model, data, train_cfg, progress=False)
    t0 = time.perf_counter()
    gate = cfg.certify  # the flagship's certificate settings (threshold 0.2, tau 1e-6)
    cert = certify(model, data, LAM, tau=gate.tau, threshold=gate.threshold)
    table = leaky_resnet_layers(
        model, data.x_train, data.y_train, LAM, gamma0=cfg.gamma0, clarke=True
    )
    out = {
        "recipe": " + ".join(
            f"{p.optimizer} {p.steps}" + (f" @{p.lam:.3g}" if p.lam is not None else "")
            for p in phases
        ),
        "train_s": result.wall_s,
        "stationarity": cert.stationarity,
        "certified": cert.stationarity <= gate.threshold,
        "rank_H_median": hamiltonian_summary(table)["rank_H_median"],
        "loss": result.metrics[-1]["loss"],
        "measure_s": time.perf_counter() - t0,
    }
    print(
        f"continuation: {name}: {out['recipe']} (lam {LAM:g} at the end, L~ = {LEAK:g}): "
        f"{out['train_s']:.0f} s, stationarity {out['stationarity']:.3g} (gate "
        f"{gate.threshold:g}: {'certified' if out['certified'] else 'NOT certified'}), "
        f"median -(2/L~)H {out['rank_H_median']:.3f}, loss {out['loss']:.9g} ({load()})",
        flush=True,
    )
    return out


def main() -> dict[str, Any]:
    """Both recipes; prints one line each."""
    return {name: run(name, phases) for name, phases in recipes().items()}


if __name__ == "__main__":
    main()
