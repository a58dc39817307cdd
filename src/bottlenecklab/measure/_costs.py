"""Data costs of a trained network on its train and test sets, in float64."""

from __future__ import annotations

import copy
from typing import Any

import torch

from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.tasks import COSTS, Dataset

__all__ = [
    "K_STAR",
    "N_TRAIN",
    "TEST_COST",
    "TEST_ERROR",
    "TRAIN_COST",
    "costs",
    "data_rank",
    "float64_copy",
    "train_size",
]


def float64_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A float64 CPU copy of `model` (diagnostics never cast the caller's network)."""
    return copy.deepcopy(model).to(device="cpu", dtype=torch.float64)


def costs(model: Any, data: Dataset, cost: str = "mse") -> dict[str, float]:
    """`train_cost`, `test_cost` (`COSTS[cost]`, e.g. `(1/N)||Y - Y_hat||_F^2`) and the
    relative `test_error = test_cost / d_out`, computed on a float64 copy of `model`."""
    net = float64_copy(model)
    fn = COSTS[cost]
    out: dict[str, float] = {}
    with torch.no_grad():
        for split, X, Y in (
            ("train", data.x_train, data.y_train),
            ("test", data.x_test, data.y_test),
        ):
            X64 = torch.as_tensor(X, dtype=torch.float64)
            out[f"{split}_cost"] = float(fn(net(X64), torch.as_tensor(Y, dtype=torch.float64)))
    out["test_error"] = out["test_cost"] / data.d_out
    return out


def data_rank(data: Dataset) -> float:
    """The bottleneck rank `k*` the data set reports (its teacher's construction), nan
    when it has none."""
    return float(data.k_star) if data.k_star is not None else float("nan")


def train_size(data: Dataset) -> float:
    """`N`, the number of training points of the data set (rows of `x_train`)."""
    return float(len(data.x_train))


TRAIN_COST = Quantity(
    "train_cost",
    "the data cost of the trained network (`COSTS[cost]`, e.g. (1/N)||Y - Y_hat||_F^2)",
    function=costs,
    over="the training set (float64 copy)",
    units="the cost's units",
)
TEST_COST = Quantity(
    "test_cost",
    "the data cost of the trained network on held-out data",
    function=costs,
    over="the test set (float64 copy)",
    units="the cost's units",
)
TEST_ERROR = Quantity(
    "test_error",
    "relative test error C_test / d_out (1: the trivial predictor on unit-variance outputs)",
    function=costs,
    over="the test set (float64 copy)",
    units="relative",
)
K_STAR = Quantity(
    "k_star",
    "the teacher's bottleneck rank k* as the data set reports it (papers 000 App B, 001): "
    "its construction's inner width, read with no cutoff",
    function=data_rank,
    over="the data set (no network)",
    units="rank (by construction, no spectrum read)",
)
N_TRAIN = Quantity(
    "n_train",
    "N, the number of training points",
    function=train_size,
    over="the data set (no network)",
    units="count",
)
DATA_COSTS = (TRAIN_COST, TEST_COST, TEST_ERROR)  # what `costs` writes
