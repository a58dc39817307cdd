"""What `talk/tripoints` measures on a trained 2-D classifier: accuracy, the middle
representation's affine dimension and weight rank (`AFFINE_RANK_RULE`, `WEIGHT_RANK_RULE`),
tripoints at every resolution and the decision map (paper 002, slide 'Implications:
Classification'), with the quantities it writes. `cfg` is the experiment's `Config`.
"""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import (
    MIDDLE_AFFINE_RANK,
    MIDDLE_RANK,
    TEST_COST,
    TEST_ERROR,
    TRAIN_COST,
    Quantity,
    costs,
    middle_rank,
    weight_spectra,
)
from bottlenecklab.measure._decision import (
    TRIPOINTS,
    accuracy,
    data_box,
    decision_map,
    tripoint_table,
)
from bottlenecklab.measure._layer_ranks import affine_profile, middle_layer
from bottlenecklab.tasks import Dataset

__all__ = [
    "BOX",
    "BOX_X0",
    "BOX_X1",
    "BOX_Y0",
    "BOX_Y1",
    "MIDDLE_AFFINE_RATIO",
    "MIDDLE_LAYER",
    "TEST_ACCURACY",
    "TRAIN_ACCURACY",
    "TRIPOINT",
    "tripoint_measurement",
]


def tripoint_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """Accuracy, the middle representation's affine dimension (centred pre-activations of
    layer `ceil(L/2)`) and weight rank, the weight spectra, tripoints at every resolution
    (table `tripoints`) and the decision map at `map_resolution` (table `decision_map`:
    one row per grid line, labels as a string of digits); per layer (`layers`) the centred
    `s_2 / s_1` and affine dimension of every hidden pre-activation."""
    scalars = costs(model, data, "cross_entropy")
    scalars[TRAIN_ACCURACY.name] = accuracy(model, data.x_train, data.y_train)
    scalars[TEST_ACCURACY.name] = accuracy(model, data.x_test, data.y_test)
    layers = affine_profile(model, data.x_train, cfg.affine_rel)
    mid = middle_layer(model.depth)
    scalars[MIDDLE_LAYER.name] = float(mid)
    scalars[MIDDLE_AFFINE_RANK.name] = float(layers[mid - 1]["affine_rank"])
    scalars[MIDDLE_AFFINE_RATIO.name] = layers[mid - 1]["affine_ratio"]
    scalars[MIDDLE_RANK.name] = float(middle_rank(model, cfg.rank_floor))  # weight rank
    lo, hi = data_box(data.x_train, cfg.margin)
    corners = {BOX_X0: lo[0], BOX_Y0: lo[1], BOX_X1: hi[0], BOX_Y1: hi[1]}
    scalars.update({q.name: v for q, v in corners.items()})
    counts, points = tripoint_table(model, lo, hi, cfg.resolutions)
    scalars.update(counts)
    _, _, labels = decision_map(model, lo, hi, cfg.map_resolution)
    rows = [
        {"row": i, "labels": "".join(str(int(v)) for v in line)} for i, line in enumerate(labels)
    ]
    return Measurement(
        scalars=scalars,
        layers=layers,
        spectra=weight_spectra(model),
        tables={"tripoints": points, "decision_map": rows},
    )


_NET = "a trained 2-D classifier"
TRAIN_ACCURACY, TEST_ACCURACY = (
    Quantity(
        f"{split}_accuracy",
        f"the fraction of {split} points classified right",
        function=tripoint_measurement,
        over=f"the {split} set",
        units="fraction",
    )
    for split in ("train", "test")
)
MIDDLE_LAYER = Quantity(
    "middle_layer", "the middle layer ceil(L/2)", tripoint_measurement, _NET, "layer index"
)
MIDDLE_AFFINE_RATIO = Quantity(
    "middle_affine_ratio",
    "centred s_2/s_1 of the middle pre-activations a~_ceil(L/2)(X) (spec depth-and-rank.md, "
    "Decision on talk/tripoints: 1-D affine when <= 0.2)",
    function=tripoint_measurement,
    over=_NET + "'s centred middle pre-activations on its training inputs",
    units="ratio",
)
BOX_X0, BOX_Y0, BOX_X1, BOX_Y1 = BOX = tuple(
    Quantity(
        f"box_{corner}",
        f"the decision map's box, {corner} (x0, y0: the lower corner): the data's bounding "
        "box grown by margin",
        function=tripoint_measurement,
        over="the training inputs",
        units="input units",
    )
    for corner in ("x0", "y0", "x1", "y1")
)
TRIPOINT = Measure(
    tripoint_measurement,
    (
        TRAIN_COST,
        TEST_COST,
        TEST_ERROR,
        TRAIN_ACCURACY,
        TEST_ACCURACY,
        MIDDLE_LAYER,
        MIDDLE_AFFINE_RANK,
        MIDDLE_AFFINE_RATIO,
        MIDDLE_RANK,
        *BOX,
        TRIPOINTS,
    ),
)
