"""Declarative experiments, one module per figure, grouped by paper area; a registry.

Each experiment names its task, model, training, measurement, claims and figures, with
`smoke` / `quick` / `paper` presets; `run_experiment` wires training and measurement.
"""

from bottlenecklab.experiments import leaky_resnet
from bottlenecklab.experiments._registry import EXPERIMENTS, UnknownExperiment, get, register
from bottlenecklab.experiments._runner import (
    RunRecord,
    check_resumable,
    expand_points,
    load_run,
    point_id,
    resolve_config,
    resolve_device,
    run_experiment,
    run_point,
    write_json,
)
from bottlenecklab.experiments._spec import PRESETS, Claim, Experiment, Measurement, PointResult

for _exp in leaky_resnet.EXPERIMENTS:
    register(_exp)

__all__ = [
    "EXPERIMENTS",
    "PRESETS",
    "Claim",
    "Experiment",
    "Measurement",
    "PointResult",
    "RunRecord",
    "UnknownExperiment",
    "check_resumable",
    "expand_points",
    "get",
    "load_run",
    "point_id",
    "register",
    "resolve_config",
    "resolve_device",
    "run_experiment",
    "run_point",
    "write_json",
]
