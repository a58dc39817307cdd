"""The measurement of `leaky-resnet/hamiltonian-flow` (paper 000, §1.5 and §1.2; no
training) and the quantities it writes, declared once (only that experiment reads them,
so they live with the area, not on the `measure` face).

`FLOW` integrates the Hamiltonian system by RK4 at doubling step counts from three starts
(`PATHS`; tables `refinement`, `drift`) and checks the two symmetries of §1.2
(`RANGE_PATH_ERROR`, `RANGE_NORM_ERROR`, `SCALING_PATH_ERROR`). The per-step-count
drifts `drift_<path>_<steps>` and `order_ratio_<path>` are the refinement table's
summary in the row too; their names follow the config's step counts, so they are not
declared: claims read the table. `flow_measurement` takes the theory's maps as keywords
(`field`, `stretch_fn`, `scale_fn`): tests pass wrong ones to see the claims fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import Quantity
from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.theory import (
    Field,
    Weights,
    generic_start,
    hamiltonian,
    kink_free_start,
    lifted_inputs,
    output_scaled_path,
    random_linear_weights,
    refinement_study,
    stretch_range,
    symmetry_errors,
    vector_field,
)

__all__ = [
    "CROSSINGS",
    "FLOW",
    "H0",
    "PATHS",
    "RANGE_NORM_ERROR",
    "RANGE_PATH_ERROR",
    "SCALING_PATH_ERROR",
    "flow_measurement",
]

PATHS = ("smooth", "kinked", "located")  # the refinement study's starts


def flow_measurement(
    model: None,
    data: None,
    cfg: Any,
    *,
    field: Field = vector_field,
    stretch_fn: Callable[[Weights, float], Weights] = stretch_range,
    scale_fn: Callable[[torch.Tensor, float], torch.Tensor] = output_scaled_path,
) -> Measurement:
    """Drift of `H` per step count on the three paths (tables `refinement`, `drift`) and
    the symmetry errors (scalars).

    Args:
        model, data: None (nothing is trained); cfg: `hamiltonian-flow`'s `Config`.
        field, stretch_fn, scale_fn: the theory's (tests pass wrong ones).
    """
    data_ = cfg.task.build(seed=cfg.seed)
    net = LeakyResNetConfig(width=cfg.width, depth=1, leak=0.0).build(
        data_.d_in, data_.d_out, seed=cfg.seed + 1, dtype=torch.float64
    )
    A0 = lifted_inputs(torch.as_tensor(data_.x_train), net.pin.detach())  # [N, w]
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    smooth = kink_free_start(A0, gen, offset=cfg.offset, scale=cfg.b_smooth)
    kinked = generic_start(A0, gen, scale=cfg.b_kinked)
    starts = {
        "smooth": (*smooth, cfg.steps_smooth, False),
        "kinked": (*kinked, cfg.steps_kinked, False),
        "located": (*kinked, (cfg.steps_located,), True),
    }
    scalars, refinement, series = refinement_study(starts, cfg.leak, field=field)
    Wa, Wb = random_linear_weights(A0.shape[1], gen)
    scalars.update(
        symmetry_errors(
            A0,
            Wa,
            Wb,
            cfg.leak,
            stretch=cfg.stretch,
            shift=cfg.shift,
            steps=cfg.ode_steps,
            stretch_fn=stretch_fn,
            scale_fn=scale_fn,
        )
    )
    return Measurement(scalars=scalars, tables={"refinement": refinement, "drift": series})


def _flow(name: str, doc: str, function: Callable[..., Any], over: str, units: str) -> Quantity:
    return Quantity(name, doc, function=function, over=over, units=units)


_SYM = "the RK4 path of W_p = Wa + p Wb from the lifted inputs (no training)"
RANGE_PATH_ERROR = _flow(
    "range_path_error",
    "max |A'_q - A_(q/c)| / max |A| of the range symmetry W_(q/c)/c on [0, c] with leak "
    "L~/c (paper 000, §1.2)",
    symmetry_errors,
    _SYM,
    "relative",
)
RANGE_NORM_ERROR = _flow(
    "range_norm_error",
    "relative error of the stretched weights' norm (Simpson on [0, c]) against the closed "
    "form divided by c (paper 000, §1.2)",
    symmetry_errors,
    _SYM,
    "relative",
)
SCALING_PATH_ERROR = _flow(
    "scaling_path_error",
    "max |A' - exp(-c p) A| / max |A'| of bias-free weights at leak L~ + c (paper 000, §1.2)",
    symmetry_errors,
    _SYM + ", bias-free",
    "relative",
)
_START = "the {} start of the refinement study (lifted inputs, no training)"
H0 = {
    path: _flow(
        f"H0_{path}",
        f"the Hamiltonian H at p = 0 of the {path} path (paper 000, §1.5)",
        hamiltonian,
        _START.format(path),
        "Hamiltonian units",
    )
    for path in PATHS
}
CROSSINGS = {
    path: _flow(
        f"crossings_{path}",
        f"sign crossings of the {path} path at its finest step count",
        refinement_study,
        _START.format(path),
        "count",
    )
    for path in PATHS
}
FLOW = Measure(
    flow_measurement,
    (
        *(q for path in PATHS for q in (H0[path], CROSSINGS[path])),
        RANGE_PATH_ERROR,
        RANGE_NORM_ERROR,
        SCALING_PATH_ERROR,
    ),
)
