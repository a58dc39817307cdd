"""Decision maps of a 2-D classifier and their tripoints (paper 002, slide
'Implications: Classification')."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._quantity import Quantity
from bottlenecklab.theory import tripoint_blocks

__all__ = [
    "TRAIN_ACCURACY",
    "TRIPOINTS",
    "accuracy",
    "data_box",
    "decision_map",
    "tripoint_table",
    "tripoints",
]

GRID_BLOCK = 2**14  # grid points evaluated at once


def data_box(x: np.ndarray, margin: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The bounding box of the inputs `x` `[N, 2]` grown by `margin` on every side:
    `((x0_min, x1_min), (x0_max, x1_max))`."""
    lo = x.min(axis=0) - margin
    hi = x.max(axis=0) + margin
    return (float(lo[0]), float(lo[1])), (float(hi[0]), float(hi[1]))


def decision_map(
    model: torch.nn.Module,
    lo: Sequence[float],
    hi: Sequence[float],
    resolution: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The predicted class (argmax of the outputs) on a `resolution x resolution` grid.

    Args:
        model: a classifier of 2-D inputs `[N, 2] -> [N, C]` (evaluated on a float64 copy).
        lo: the lower corner `(x0, x1)` of the grid's box.
        hi: the upper corner `(x0, x1)` of the grid's box.
        resolution: points per side.
    Returns:
        `xs` `[R]` (axis 0), `ys` `[R]` (axis 1), `labels` `[R, R]` with
        `labels[i, j]` the class at `(xs[i], ys[j])`.
    """
    net = float64_copy(model)
    xs = torch.linspace(lo[0], hi[0], resolution, dtype=torch.float64)
    ys = torch.linspace(lo[1], hi[1], resolution, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(xs, ys, indexing="ij"), dim=-1).reshape(-1, 2)
    with torch.no_grad():  # by blocks of rows: a 512^2 grid through a deep net is ~1 GB
        labels = torch.cat([net(part).argmax(dim=-1) for part in grid.split(GRID_BLOCK)])
    return xs, ys, labels.reshape(resolution, resolution)


def tripoints(
    model: torch.nn.Module,
    lo: Sequence[float],
    hi: Sequence[float],
    resolution: int,
) -> torch.Tensor:
    """Centres `[K, 2]` of the 2x2 grid blocks of `decision_map` carrying >= 3 classes
    (`theory.tripoint_blocks`)."""
    xs, ys, labels = decision_map(model, lo, hi, resolution)
    idx = tripoint_blocks(labels)  # [K, 2]
    hx, hy = (xs[1] - xs[0]) / 2, (ys[1] - ys[0]) / 2
    return torch.stack([xs[idx[:, 0]] + hx, ys[idx[:, 1]] + hy], dim=-1)


def accuracy(model: torch.nn.Module, X: np.ndarray, Y: np.ndarray) -> float:
    """Fraction of rows whose argmax output matches the argmax of `Y` (one-hot `[N, C]`)."""
    net = float64_copy(model)
    with torch.no_grad():
        pred = net(torch.as_tensor(X, dtype=torch.float64)).argmax(dim=-1)
    return float((pred.numpy() == np.asarray(Y).argmax(axis=-1)).mean())


def tripoint_table(
    model: torch.nn.Module, lo: Sequence[float], hi: Sequence[float], resolutions: Sequence[int]
) -> tuple[dict[str, float], list[dict[str, float]]]:
    """`tripoints` at every resolution (paper 002, slide 'Implications: Classification'):
    the counts `{TRIPOINTS.at(R).name: K}` (`"tripoints_<R>"`) and the centres in long
    format, one row `{"resolution", "x", "y"}` per tripoint."""
    counts, rows = {}, []
    for res in resolutions:
        centres = tripoints(model, lo, hi, res)  # [K, 2]
        counts[TRIPOINTS.at(res).name] = float(len(centres))
        rows += [{"resolution": res, "x": float(x), "y": float(y)} for x, y in centres]
    return counts, rows


TRIPOINTS = Quantity(
    "tripoints_",
    "the number of tripoints (2x2 blocks of the decision map with >= 3 labels) at an R^2 "
    "map (paper 002, slide 'Implications: Classification')",
    function=tripoint_table,
    over="the decision map of a 2-D classifier on a box around its data, at resolution R",
    units="count",
    shape="per resolution",
)
TRAIN_ACCURACY = Quantity(
    "train_accuracy",
    "the fraction of training points whose largest output is their class (`accuracy`)",
    function=accuracy,
    over="a trained classifier on its training set (float64 copy)",
    units="fraction",
)
