"""The measurement of `l2/reformulation` (paper 004, Prop 1, 3, App B, §3.1) and the
quantities it writes, declared once: the relative errors of the loss identities on each
grid point's networks (`NETS`: random, trained, decaying, the deep linear net).

    IDENTITIES(model, data, cfg)  # -> Measurement with table `forms` (one row per net)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import torch

from bottlenecklab import measure as M
from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.experiments.l2._common import worst
from bottlenecklab.measure import Quantity
from bottlenecklab.measure._reformulation import (
    fcnn_linear_kernels,
    fcnn_reformulated_losses,
    null_norms,
    null_step_residual,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset

__all__ = [
    "ARCHS",
    "COV_ERROR",
    "DECAY_ERROR",
    "IDENTITIES",
    "LINEAR_ERROR",
    "LINEAR_GRAD_NORM",
    "NETS",
    "NULL_MIN",
    "SPLIT_ERROR",
    "STEP_RESIDUAL",
    "Kind",
    "identities_measurement",
    "with_arch",
]

Kind = Literal["random", "trained", "decay", "linear"]
# The (beta, leaky slope) of the random, trained and decaying nets.
ARCHS: dict[str, tuple[float, float]] = {
    "relu": (0.0, 0.0),
    "leaky": (0.0, 0.1),
    "relu-bias": (1.0, 0.0),
    "leaky-bias": (1.0, 0.1),
}
# The grid's networks: name -> (kind, arch). `random` trains nothing (it measures
# `n_random` random nets of every arch); `trained-*` fit the Gaussian data (Adam, then
# backtracking GD); `decay-*` run constant-step GD from their init; `linear` is the deep
# linear net (L-BFGS, then the certification extension).
NETS: dict[str, tuple[Kind, str]] = {
    "random": ("random", "relu"),
    **{f"trained-{a}": ("trained", a) for a in ARCHS},
    **{f"decay-{a}": ("decay", a) for a in ARCHS},
    "linear": ("linear", "relu"),
}


def with_arch(model: FCNNConfig, arch: str) -> FCNNConfig:
    """`model` with `arch`'s bias scale and leaky slope (`ARCHS`)."""
    beta, slope = ARCHS[arch]
    return dataclasses.replace(model, bias_scale=beta, slope=slope)


def _random_net(cfg: Any, arch: str, seed: int):
    """A random net of `arch` with non-zero biases, so that the bias column counts."""
    net = with_arch(cfg.relu, arch).build(
        cfg.data.d_in, cfg.data.d_out, seed=seed, dtype=torch.float64
    )
    with torch.no_grad():
        g = torch.Generator().manual_seed(seed)
        for b in net.biases:
            b.copy_(0.3 * torch.randn(b.shape, generator=g, dtype=torch.float64))
    return net


def _errors(out: dict[str, float]) -> tuple[float, float]:
    split = abs(out["representation"] + out["null"] - out["weight"]) / abs(out["weight"])
    cov = abs(out["covariance"] - out["representation"]) / abs(out["representation"])
    return split, cov


def _linear_error(lnet, X: torch.Tensor) -> float:
    """Largest relative Frobenius error of `K_l` against `X M^{l/L} X^T` over the layers."""
    measured, formula = fcnn_linear_kernels(lnet, X)
    return worst([float((K - F).norm() / F.norm()) for K, F in zip(measured, formula)])


def _form_row(kind: str, arch: str, index: int, out: dict[str, float]) -> dict[str, Any]:
    split, cov = _errors(out)
    beta, slope = ARCHS[arch]
    return {
        "kind": kind,
        "beta": beta,
        "slope": slope,
        "index": index,
        SPLIT_ERROR.name: split,
        COV_ERROR.name: cov,
        "null": out["null"],
    }


def identities_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """This point's identities (table `forms`: one row per network). Every point has the
    same scalars (`nan` where they do not apply): `split_error`, `cov_error`, `null_min`
    (the worst over the point's nets), `step_residual` (random nets), `decay_error`
    (decay nets: `||W~_1||` against its init's), `linear_error` (the linear net).

    Args:
        model: this point's trained (or random) net; data: its data set.
        cfg: the experiment's config (`net`, `n_random`, `lam`, `step_lr`, `fit`, `decay`,
            `linear_fit`, `model`, `relu`, `data`, `seed`).
    """
    X, Y = torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)
    kind, arch = NETS[cfg.net]
    rows, steps = [], []
    scalars = dict.fromkeys((q.name for q in QUANTITIES), math.nan)
    if kind == "random":
        for a_i, a in enumerate(ARCHS):
            for i in range(cfg.n_random):
                net = _random_net(cfg, a, cfg.seed + 100 * (a_i * cfg.n_random + i + 1))
                rows.append(_form_row("random", a, i, fcnn_reformulated_losses(net, X, Y, cfg.lam)))
                steps.append(null_step_residual(net, X, Y, cfg.lam, cfg.step_lr))
        scalars[STEP_RESIDUAL.name] = worst(steps)
    elif kind == "trained":
        rows.append(
            _form_row("trained", arch, 0, fcnn_reformulated_losses(model, X, Y, cfg.fit.lam))
        )
    elif kind == "decay":
        # the same network at its initialization (run_point's seed and dtype)
        init = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=torch.float64)
        before, after = null_norms(init, X)[0], null_norms(model, X)[0]
        phase = cfg.decay.phases[0]
        expect = (1 - 2 * phase.lr * cfg.decay.lam) ** phase.steps
        scalars[DECAY_ERROR.name] = abs(after / before / expect - 1) if before > 0 else math.nan
    else:
        scalars[LINEAR_ERROR.name] = _linear_error(model, X)
        scalars[LINEAR_GRAD_NORM.name] = M.gradient_norm(model, X, Y, cfg.linear_fit.lam)
    if rows:
        scalars[SPLIT_ERROR.name] = worst([r[SPLIT_ERROR.name] for r in rows])
        scalars[COV_ERROR.name] = worst([r[COV_ERROR.name] for r in rows])
        scalars[NULL_MIN.name] = min(r["null"] for r in rows)
    return Measurement(scalars=scalars, tables={"forms": rows})


def _identity(name: str, doc: str, over: str) -> Quantity:
    return Quantity(name, doc, function=identities_measurement, over=over, units="relative")


_NETS = "this point's networks (float64; nan where they do not apply)"
SPLIT_ERROR = _identity(
    "split_error",
    "largest |L^r + lam sum ||W~_l||^2 - L| / |L| (paper 004, Prop 1; App B)",
    "the random or trained nets of " + _NETS,
)
COV_ERROR = _identity(
    "cov_error",
    "largest |L^k - L^r| / |L^r| (paper 004, Prop 3)",
    "the random or trained nets of " + _NETS,
)
NULL_MIN = Quantity(
    "null_min",
    "smallest null part lam sum ||W~_l||^2 (W~ != 0 when the width exceeds N)",
    function=identities_measurement,
    over="the random or trained nets of " + _NETS,
    units="the loss's units",
)
STEP_RESIDUAL = _identity(
    "step_residual",
    "largest relative residual of W_{t+1} P_perp = (1 - 2 lr lam) W_t P_perp after one GD "
    "step (paper 004, App B, derived)",
    "the random nets of " + _NETS,
)
DECAY_ERROR = _identity(
    "decay_error",
    "|(||W~_1|| / ||W~_1(0)||) / (1 - 2 lr lam)^t - 1| over constant-step GD (paper 004, "
    "App B, derived)",
    "the decaying net of " + _NETS,
)
LINEAR_ERROR = _identity(
    "linear_error",
    "largest relative Frobenius error of K_l against X M^{l/L} X^T over the layers (paper "
    "004, §3.1)",
    "the deep linear net of " + _NETS,
)
# Written on the linear net's point only (the others have no linear fit), so not one of
# the quantities every point holds (`QUANTITIES`, nan where they do not apply).
LINEAR_GRAD_NORM = Quantity(
    "linear_grad_norm",
    "||grad_theta (C_train + lam ||theta||^2)|| of the linear net at `linear_fit.lam` "
    "(`measure.gradient_norm`; 0 at the critical point whose kernels LINEAR_ERROR compares)",
    function=identities_measurement,
    over="the deep linear net of this point (float64)",
    units="the loss's units per parameter unit",
)
QUANTITIES = (SPLIT_ERROR, COV_ERROR, NULL_MIN, STEP_RESIDUAL, DECAY_ERROR, LINEAR_ERROR)
IDENTITIES = Measure(identities_measurement, QUANTITIES)
