"""The measurement of `l2/counterexample` (paper 004, Prop 19, App C.1) and the quantities
it writes, declared once: at the `theory` point the closed forms' values, their errors, the
perturbations' smallest loss change and the escape path's error; at a GD run its final
loss.

    COUNTEREXAMPLE(model, data, cfg)  # -> Measurement (tables `escape`, `curve` at `theory`)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from bottlenecklab import theory
from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import Quantity
from bottlenecklab.tasks import Dataset

__all__ = [
    "COUNTEREXAMPLE",
    "ESCAPE_ERROR",
    "FAMILY_ERROR",
    "FAMILY_VALUE",
    "GD_LOSS",
    "GLOBAL_ERROR",
    "GLOBAL_VALUE",
    "LAM",
    "PERTURBATION_MIN",
    "counterexample_measurement",
]


def counterexample_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """A GD run: its final loss `gd_loss` (`theory.counterexample_loss`); the `theory` point:
    values, perturbations, escape path (tables `escape`: the claimed steps; `curve`:
    `{"eps", "sign", "delta"}` along both signs). Every point writes every quantity of
    `COUNTEREXAMPLE`, `nan` where it does not apply.

    Args:
        model: the GD run's net (unused at the `theory` point); data: unused.
        cfg: the experiment's config (`run`, `lam`, `angles`, `angle`, `perturbations`,
            `perturbation`, `epsilons`, `escape_sign`, `seed`).
    """
    lam = cfg.lam
    if cfg.run != "theory":
        W1, W2 = model.weights[0].detach()[:, 0], model.weights[1].detach()[0]
        scalars = dict.fromkeys((q.name for q in CLOSED_FORMS), math.nan)
        scalars[GD_LOSS.name] = float(theory.counterexample_loss(W1, W2, lam))
        return Measurement(scalars=scalars)
    fam, glob = theory.counterexample_values(lam)
    fam_err = max(
        abs(float(theory.counterexample_loss(*theory.counterexample_weights(lam, a), lam)) - fam)
        for a in cfg.angles
    )
    Wg = theory.counterexample_weights(lam, kind="global")
    glob_err = abs(float(theory.counterexample_loss(*Wg, lam)) - glob)
    W1, W2 = theory.counterexample_weights(lam, cfg.angle)
    base = theory.counterexample_loss(W1, W2, lam)
    g = torch.Generator().manual_seed(cfg.seed)
    d = cfg.perturbation * torch.randn(cfg.perturbations, 4, generator=g, dtype=torch.float64)
    change = theory.counterexample_loss(W1 + d[:, :2], W2 + d[:, 2:], lam) - base
    end = theory.counterexample_loss(*theory.counterexample_weights(lam, 0.0), lam)
    rows = []
    for eps in cfg.epsilons:
        V1, V2 = theory.counterexample_weights(lam, kind="escape", eps=eps)
        V2 = torch.tensor([float(V2[0]), cfg.escape_sign * eps], dtype=torch.float64)
        dl = float(theory.counterexample_loss(V1, V2, lam) - end)
        expect = -2 * (1 - lam) * eps**2 + eps**4
        rows.append(
            {
                "eps": eps,
                "delta": dl,
                "expected": expect,
                "rel_error": abs(dl - expect) / abs(expect),
            }
        )
    curve = []
    for eps in np.geomspace(1e-3, 0.5, 40):
        V1, V2 = theory.counterexample_weights(lam, kind="escape", eps=float(eps))
        for sign in (1.0, -1.0):
            V2s = torch.tensor([float(V2[0]), sign * float(eps)], dtype=torch.float64)
            curve.append(
                {
                    "eps": float(eps),
                    "sign": sign,
                    "delta": float(theory.counterexample_loss(V1, V2s, lam) - end),
                }
            )
    scalars = {
        LAM.name: lam,
        FAMILY_VALUE.name: fam,
        GLOBAL_VALUE.name: glob,
        FAMILY_ERROR.name: fam_err,
        GLOBAL_ERROR.name: glob_err,
        PERTURBATION_MIN.name: float(change.min()),
        ESCAPE_ERROR.name: max((r["rel_error"] for r in rows), default=math.nan),
        GD_LOSS.name: math.nan,
    }
    return Measurement(scalars=scalars, tables={"escape": rows, "curve": curve})


def _declare(name: str, doc: str, units: str, over: str) -> Quantity:
    return Quantity(name, doc, function=counterexample_measurement, over=over, units=units)


_FORMS = "the closed forms at given weights (the `theory` point; nan at a GD run)"
_LOSS = "the loss's units"
LAM = _declare("lam", "lambda, the regularization of Prop 19 (paper 004)", "1", _FORMS)
FAMILY_VALUE = _declare(
    "family_value", "1 + 2 lam - lam^2, the family's loss (paper 004, Prop 19)", _LOSS, _FORMS
)
GLOBAL_VALUE = _declare(
    "global_value", "4 lam - 2 lam^2, the global minimum (paper 004, Prop 19)", _LOSS, _FORMS
)
FAMILY_ERROR = _declare(
    "family_error",
    "largest |L - (1 + 2 lam - lam^2)| over the family points checked (paper 004, Prop 19)",
    _LOSS,
    _FORMS,
)
GLOBAL_ERROR = _declare(
    "global_error",
    "|L - (4 lam - 2 lam^2)| at the global minimum (paper 004, Prop 19)",
    _LOSS,
    _FORMS,
)
PERTURBATION_MIN = _declare(
    "perturbation_min",
    "smallest loss change over random perturbations of a family point (a local minimum)",
    _LOSS,
    _FORMS,
)
ESCAPE_ERROR = _declare(
    "escape_error",
    "largest relative error of the +eps path's loss change against -2(1 - lam) eps^2 + eps^4 "
    "(paper 004, App C.1)",
    "relative",
    _FORMS,
)
GD_LOSS = _declare(
    "gd_loss",
    "the final loss of a report-only GD run (theory.counterexample_loss)",
    _LOSS,
    "a GD run's net (nan at the `theory` point)",
)
CLOSED_FORMS = (
    LAM,
    FAMILY_VALUE,
    GLOBAL_VALUE,
    FAMILY_ERROR,
    GLOBAL_ERROR,
    PERTURBATION_MIN,
    ESCAPE_ERROR,
)
COUNTEREXAMPLE = Measure(counterexample_measurement, (*CLOSED_FORMS, GD_LOSS))
