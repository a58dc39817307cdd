"""What `talk/kernel-vs-depth` measures at one `(N, seed)` point: the network's costs,
Laplace-kernel ridge regression's test error on the same compositional data and on a GP
target in each input dimension (paper 002, opening slides), with the quantities it
writes. `cfg` is the experiment's `Config`.
"""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import (
    N_TRAIN,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    Quantity,
    costs,
    train_size,
)
from bottlenecklab.tasks import Dataset
from bottlenecklab.theory import gp_regression_error, kernel_test_error

__all__ = ["GP_ERROR", "KERNEL_TEST_ERROR", "RATES", "rate_measurement"]


def rate_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """At this point's `N` and seed: the network's costs, the kernel's test error on the
    same compositional data, and the kernel's error on a GP target in each `d`."""
    scalars = {N_TRAIN.name: train_size(data), **costs(model, data)}
    scalars[KERNEL_TEST_ERROR.name] = kernel_test_error(
        data.x_train, data.y_train, data.x_test, data.y_test, cfg.length, cfg.ridge
    )
    for d in cfg.gp_dims:
        gen = torch.Generator().manual_seed(1000 * cfg.seed + d)
        scalars[GP_ERROR.at(d).name] = gp_regression_error(
            d, cfg.task.n_train, cfg.task.n_test, gen, cfg.length, cfg.ridge, cfg.jitter
        )
    return Measurement(scalars=scalars)


KERNEL_TEST_ERROR = Quantity(
    "kernel_test_error",
    "Laplace-kernel ridge regression's test error on the composition h o g (002 opening slides)",
    function=rate_measurement,
    over="the point's compositional data set (its N and seed)",
    units="squared error",
)
GP_ERROR = Quantity(
    "gp_error_d",
    "kernel ridge regression's test error on its own GP target in [0, 1]^d (002: N^(-1/d))",
    function=rate_measurement,
    over="a GP target drawn at the point's N and seed",
    units="squared error",
    shape="per input dimension",
)
RATES = Measure(
    rate_measurement, (N_TRAIN, TRAIN_COST, TEST_COST, TEST_ERROR, KERNEL_TEST_ERROR, GP_ERROR)
)
