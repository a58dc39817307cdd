"""What `talk/newtonian-cnn` measures on a trained circular CNN: its costs against
repeating the last frame, the modes of every layer (counted by `MODE_RULE`) and a rollout
(paper 002, slide 'Learning Newtonian Mechanics'), with the quantities it writes. `cfg` is
the experiment's `Config`.
"""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import TEST_COST, TEST_ERROR, TRAIN_COST, Quantity, costs
from bottlenecklab.measure._frequency import MODE_RULE, ball_rollout, frequency_spectra, mode_table
from bottlenecklab.tasks import Dataset

__all__ = [
    "BASELINE_TEST_COST",
    "CNN",
    "MIDDLE_LAYERS",
    "MIDDLE_LOW_MODE_LAYERS",
    "RELATIVE_TEST_COST",
    "ROLLOUT_ERROR_LAST",
    "cnn_measurement",
]


def cnn_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """Costs vs the repeat-last-frame baseline, modes of every layer (table `modes`),
    all `s_{omega, i}` (`spectra`, with the order), and a rollout (table `rollout`)."""
    n = cfg.task.size
    scalars = costs(model, data)
    last = data.x_test[:, n * n :]
    base = float(((data.y_test - last) ** 2).sum(axis=1).mean())
    scalars[BASELINE_TEST_COST.name] = base
    scalars[RELATIVE_TEST_COST.name] = scalars[TEST_COST.name] / base
    L = model.depth
    modes, layers = mode_table(model, cfg.mode_rel)
    middle = [r for r in layers if L / 3 < r["layer"] <= 2 * L / 3]
    ok = [r for r in middle if r["modes"] <= cfg.max_modes and r["max_order"] <= cfg.max_order]
    scalars[MIDDLE_LAYERS.name] = float(len(middle))
    scalars[MIDDLE_LOW_MODE_LAYERS.name] = float(len(ok))
    task = cfg.task
    truth, pred = ball_rollout(
        model, data, cfg.rollout_steps, cfg.rollout_samples, task.gravity, task.sigma
    )
    scalars[ROLLOUT_ERROR_LAST.name] = float(
        ((pred[:, -1] - truth[:, -1]) ** 2).sum(axis=(1, 2)).mean()
    )
    roll = [
        {
            "sample": a,
            "step": t,
            "kind": kind,
            "pixels": ",".join(f"{x:.4g}" for x in frame.ravel()),
        }
        for kind, frames in (("truth", truth), ("prediction", pred))
        for a in range(len(truth))
        for t, frame in enumerate(frames[a])
    ]
    return Measurement(
        scalars=scalars,
        layers=layers,
        spectra=frequency_spectra(model),
        tables={"modes": modes, "rollout": roll},
    )


_TEST = "the test set's next frames (float64 copy)"
_MIDDLE = "the middle-third layers L/3 < l <= 2L/3 of a trained circular CNN"
BASELINE_TEST_COST = Quantity(
    "baseline_test_cost",
    "the test cost of repeating the last frame (002 'Learning Newtonian Mechanics')",
    function=cnn_measurement,
    over=_TEST,
    units="squared pixel error",
)
RELATIVE_TEST_COST = Quantity(
    "relative_test_cost",
    "the next-step test cost over the repeat-last-frame baseline's",
    function=cnn_measurement,
    over=_TEST,
    units="relative",
)
MIDDLE_LAYERS = Quantity(
    "middle_layers", "the number of middle-third layers", cnn_measurement, _MIDDLE, "count"
)
MIDDLE_LOW_MODE_LAYERS = Quantity(
    "middle_low_mode_layers",
    "middle-third layers with <= max_modes modes, all of order <= max_order (002 'Learning "
    "Newtonian Mechanics': position and velocity in two frequency-1 pairs)",
    function=cnn_measurement,
    over=_MIDDLE + ", their modes s_(omega, i)",
    units="count",
    rule=MODE_RULE,
)
ROLLOUT_ERROR_LAST = Quantity(
    "rollout_error_last",
    "squared error of the rollout's last frame against the ball's true frame",
    function=cnn_measurement,
    over="the first rollout_samples test inputs, rolled out rollout_steps frames",
    units="squared pixel error",
)
CNN = Measure(
    cnn_measurement,
    (
        TRAIN_COST,
        TEST_COST,
        TEST_ERROR,
        BASELINE_TEST_COST,
        RELATIVE_TEST_COST,
        MIDDLE_LAYERS,
        MIDDLE_LOW_MODE_LAYERS,
        ROLLOUT_ERROR_LAST,
    ),
)
