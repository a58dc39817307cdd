"""`saddle/mnist-plateaus` — paper 003, Fig 1, 3, 4 (trains; the paper preset wants a GPU).

    bottlenecklab run saddle/mnist-plateaus --preset quick
    BOTTLENECKLAB_DATA=/path/to/folder bottlenecklab run saddle/mnist-plateaus --preset paper

A bias-free ReLU net (depth 6; depth 4 for Fig 4) trained by SGD (batch 32) with
cross-entropy from a small init, `lr = 10/||theta||^4`. Expected: loss starts at `ln 10`,
two drops (saddle to saddle); at the flattest point between them `s_1/s_2 >= 3` in every
layer `l >= 2`, deeper layers more so; mean `s_2/s_1` doubles by the end. Quick preset:
8x8 digits, width 32, `sigma_0 = 5e-2`, ~85 s CPU (~6 min wall on the shared 2 cores);
paper preset: MNIST IDX files (`docs/saddles.md`). Tables: `curve`, `singular`, `drops`.
Measured numbers and pilots: `docs/lab-notes/saddle.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from bottlenecklab.experiments._claims import at_least, at_most, unmeasured
from bottlenecklab.experiments._spec import Claim, Experiment, Measurement, PointResult
from bottlenecklab.measure import loss_drops
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset, digits_arrays, mnist_arrays, scalar_standardize
from bottlenecklab.training import SmallInitConfig, train_small_init

SOURCE = "003 Fig 1"
DYNAMICS = (
    "a claim about the SGD dynamics from small init (loss plateaus and drops, the spectra "
    "at the flattest point between two drops and at the end): read off the trajectory; no "
    "critical point is claimed (no weight decay, cross-entropy has no minimizer)."
)


@dataclass(frozen=True)
class DataConfig:
    """Image data: `digits` (scikit-learn's 8x8 digits) or `mnist` (IDX files in `root`,
    else `$BOTTLENECKLAB_DATA`); `n_train`: first `n` training images (`0`: all)."""

    source: Literal["digits", "mnist"] = "mnist"
    root: str | None = None
    n_train: int = 0


@dataclass(frozen=True)
class Config:
    """Fig 1/3 (depth 6) and Fig 4 (depth 4).

    Args:
        data: the images; width: hidden width; depth: depth of Fig 1/3; init_std: `sigma_0`.
        lr, lr_power: `eta = lr ||theta||^lr_power` (Fig 1: `10 / ||theta||^4`).
        min_lr: floor of the depth-`depth` learning rate (`0`: none, the paper's rule).
        batch_size, steps: SGD; log_every: steps between full-training-set losses;
        svd_every: steps between singular-value logs.
        depth4_steps, depth4_lr_power: the depth-4 run of Fig 4 (`0` steps: skip).
        drop_rise, drop_fall: `measure.loss_drops` thresholds.
        loss0_tol: `|loss_0 - ln 10|` tolerance; gap_min: `s_1/s_2` for `l >= 2` at the
            snapshot (spec threshold); end_factor: mean `s_2/s_1` (`l >= 2`) at the end
            over the snapshot's; final_loss_max: "the end" is past the saddles: final loss
            at most this (part of `rank-grows`).
        device: `cpu`, `cuda`, or `auto` (CUDA when available); this experiment trains
            inside `measure`, so the run's `--device` does not reach it.
    """

    data: DataConfig = DataConfig()
    width: int = 1000
    depth: int = 6
    init_std: float = 1e-3
    lr: float = 10.0
    lr_power: float = -4.0
    min_lr: float = 0.0
    batch_size: int = 32
    steps: int = 1_875_000  # 1000 epochs of 60000 images
    log_every: int = 1000
    svd_every: int = 5000
    depth4_steps: int = 1_875_000
    depth4_lr_power: float = -2.0
    drop_rise: float = 0.2
    drop_fall: float = 0.05
    loss0_tol: float = 1e-3
    gap_min: float = 3.0
    end_factor: float = 2.0
    final_loss_max: float = 1.0
    device: str = "auto"
    seed: int = 0


def _dataset(cfg: DataConfig) -> Dataset:
    if cfg.source == "digits":
        x, y = digits_arrays()
        x_tr, y_tr, x_te, y_te = x, y, x[:1], y[:1]
    else:
        d = mnist_arrays(cfg.root)
        x_tr, y_tr, x_te, y_te = d["x_train"], d["y_train"], d["x_test"], d["y_test"]
    if cfg.n_train:
        x_tr, y_tr = x_tr[: cfg.n_train], y_tr[: cfg.n_train]
    x_tr, x_te = scalar_standardize(x_tr, x_te)
    eye = np.eye(10)
    return Dataset(x_tr, eye[y_tr], x_te, eye[y_te], info={"source": cfg.source})


def _train(cfg: Config, data: Dataset, depth: int, steps: int, lr_power: float, min_lr: float):
    model = FCNNConfig(
        depth=depth, width=cfg.width, bias_scale=0.0, init="normal", init_scale=cfg.init_std
    ).build(data.d_in, data.d_out, seed=cfg.seed + 1)
    run = SmallInitConfig(
        steps=steps,
        lr=cfg.lr,
        lr_power=lr_power,
        min_lr=min_lr,
        batch_size=cfg.batch_size,
        cost="cross_entropy",
        dtype="float32",
        log_every=cfg.log_every,
        svd_every=cfg.svd_every,
        seed=cfg.seed,
    )
    device = cfg.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return train_small_init(model, data, run, device=device)


def _ratios(spectra: list[dict[str, Any]], step: int, depth: int) -> list[float]:
    """`s_1/s_2` of every layer at the logged step `step` (`[L]`)."""
    out = []
    for l in range(1, depth + 1):
        s = sorted(
            (x["value"] for x in spectra if x["step"] == step and x["layer"] == l), reverse=True
        )
        out.append(s[0] / s[1] if len(s) > 1 and s[1] > 0 else math.inf)
    return out


def measure(model: None, data: None, cfg: Config) -> Measurement:
    """Train depth 6 (and depth 4), detect the drops, read the spectra at the snapshot."""
    ds = _dataset(cfg.data)
    scalars: dict[str, float] = {"loss0_minus_ln10": math.nan}
    curve, singular, drops_t = [], [], []
    runs = [(cfg.depth, cfg.steps, cfg.lr_power, cfg.min_lr)]
    if cfg.depth4_steps:
        runs.append((4, cfg.depth4_steps, cfg.depth4_lr_power, 0.0))
    for depth, steps, power, floor in runs:
        res = _train(cfg, ds, depth, steps, power, floor)
        t = [m["step"] for m in res.metrics]
        loss = [m["loss"] for m in res.metrics]
        curve += [{"depth": depth, **m} for m in res.metrics]
        singular += [{"depth": depth, **x} for x in res.spectra]
        d = loss_drops(t, loss, rise=cfg.drop_rise, fall=cfg.drop_fall)
        drops_t += [
            {"depth": depth, "drop": i, "start": a, "peak": p, "end": b, "sharpness": sh}
            for i, ((a, p, b), sh) in enumerate(zip(d["drops"], d["sharpness"]))
        ]
        scalars[f"drops_L{depth}"] = float(len(d["drops"]))
        scalars[f"final_loss_L{depth}"] = loss[-1]
        scalars[f"sharpness_first_L{depth}"] = d["sharpness"][0] if d["sharpness"] else math.nan
        if depth != cfg.depth:
            continue
        scalars["loss0_minus_ln10"] = loss[0] - math.log(10)
        svd_steps = sorted({x["step"] for x in res.spectra})
        if d["flattest"] and svd_steps:
            snap = min(svd_steps, key=lambda s: abs(s - d["flattest"][0]))
            scalars["snapshot_step"] = float(snap)
            gap = _ratios(res.spectra, snap, depth)
            end = _ratios(res.spectra, svd_steps[-1], depth)
            for l, g in enumerate(gap, start=1):
                scalars[f"gap_snapshot_l{l}"] = g
            scalars["gap_min_l2"] = min(gap[1:])
            scalars["gap_mean_deep"] = float(np.mean(gap[depth // 2 :]))
            scalars["gap_mean_shallow"] = float(np.mean(gap[: depth // 2]))
            inv = lambda r: float(np.mean([1 / x for x in r[1:]]))  # noqa: E731
            scalars["ratio_mean_snapshot"] = inv(gap)
            scalars["ratio_mean_end"] = inv(end)
    return Measurement(
        scalars=scalars, tables={"curve": curve, "singular": singular, "drops": drops_t}
    )


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """Initial loss, two drops, low rank after the first escape, more rank at the end
    (past the saddles: the final loss is part of `rank-grows`)."""
    s = results[0].scalars
    g = lambda k: float(s.get(k, math.nan))  # noqa: E731
    L = cfg.depth
    half = L // 2
    out = [
        at_most(
            "initial-loss",
            "003 Fig 1",
            "|loss_0 - ln 10| (output ~ 0 at init)",
            abs(g("loss0_minus_ln10")),
            cfg.loss0_tol,
        ),
        at_least(
            "two-drops",
            "003 Fig 1",
            f"loss drops (saddle to saddle) detected at depth {L}",
            g(f"drops_L{L}"),
            2,
        ),
    ]
    if not math.isfinite(g("snapshot_step")):
        why = f"fewer than two drops at depth {L} ({g(f'drops_L{L}'):g})"
        ids = ("dominant-value", "deeper-more-low-rank", "rank-grows")
        return out + [unmeasured(i, SOURCE, "after the first escape", "see spec", why) for i in ids]
    spectral = [
        at_least(
            "dominant-value",
            "003 Fig 1, 3",
            f"after the first escape (step {g('snapshot_step'):g}), smallest s_1/s_2 over "
            f"layers 2..{L}",
            g("gap_min_l2"),
            cfg.gap_min,
        ),
        at_least(
            "deeper-more-low-rank",
            "003 Fig 1, 3",
            f"mean s_1/s_2 over layers {half + 1}-{L} minus the mean over layers 1-{half}",
            g("gap_mean_deep") - g("gap_mean_shallow"),
            0.0,
        ),
        _rank_grows(cfg, g("ratio_mean_end") / g("ratio_mean_snapshot"), g(f"final_loss_L{L}")),
    ]
    return out + spectral


def _rank_grows(cfg: Config, factor: float, final_loss: float) -> Claim:
    """`rank-grows`: "at the end" is after the second drop, so the claim also states that
    training got past the saddles (final loss at most `final_loss_max`)."""
    ok = (
        math.isfinite(factor)
        and factor >= cfg.end_factor
        and math.isfinite(final_loss)
        and final_loss <= cfg.final_loss_max
    )
    return Claim(
        "rank-grows",
        "003 Fig 3",
        "mean s_2/s_1 over layers >= 2, at the end (past the saddles: final training loss "
        f"{final_loss:.3g}) over after the first escape",
        f">= {cfg.end_factor:g}, with final training loss <= {cfg.final_loss_max:g}",
        float(f"{factor:.4g}") if math.isfinite(factor) else "nan",
        ok,
    )


PRESETS: dict[str, dict[str, Any]] = {
    # Seconds: a few hundred SGD steps on the digits (claims are not expected to pass).
    "smoke": {
        "data.source": "digits",
        "width": 16,
        "depth": 4,
        "steps": 300,
        "log_every": 10,
        "svd_every": 50,
        "depth4_steps": 0,
        "init_std": 0.1,
        "lr": 0.5,
        "lr_power": 0.0,
    },
    # The spec's quick start (digits, depth 6, SGD batch 32, lr = 10/||theta||^4) except:
    "quick": {
        "data.source": "digits",  # the spec's CPU stand-in for MNIST
        "width": 32,  # at width 128 no escape at all in 60k steps
        "init_std": 5e-2,  # 1e-3 .. 4e-2: no second drop in 80-150k steps (lab notes)
        "steps": 100_000,  # the second drop ends at ~45k (seed 0), ~100k (seed 1)
        "log_every": 200,  # enough points to locate drops and plateaus
        "svd_every": 1000,  # 100 spectra per run
        "depth4_steps": 20_000,  # depth 4 has no plateau at this sigma_0 (done by 2k)
    },
    # The paper's Fig 1/3 setup (MNIST, width 1000, 1000 epochs): the base config.
    "paper": {},
}

EXPERIMENT = Experiment(
    name="saddle/mnist-plateaus",
    source="003 Fig 1, 3, 4",
    title="Saddle-to-saddle SGD from small init on images: plateaus, then low-rank layers",
    config=Config(),
    presets=PRESETS,
    grid={},
    measure=measure,
    claims=claims,
    figures=("mnist_plateaus",),
    trains=False,
    doc=__doc__ or "",
    ungated={
        "initial-loss": "the loss of the untrained init (output ~ 0): no optimization",
        "two-drops": DYNAMICS,
        "dominant-value": DYNAMICS,
        "deeper-more-low-rank": DYNAMICS,
        "rank-grows": DYNAMICS,
    },
)
