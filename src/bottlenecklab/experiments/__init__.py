"""Declarative experiments, one module per figure, grouped by paper area; a registry.

Each experiment names its task, model, training, measurement, claims and figures, with
`smoke` / `quick` / `paper` presets. `run_experiment` runs its grid points through the sweep
machinery (`bottlenecklab.sweeps`) with `run_point`, the one science run function (train +
measure one config into a run folder); `run_sweep_spec` does the same for sweep files.

The experiment modules are discovered (`discover`) the first time the registry is read
(`get(name)`, `EXPERIMENTS`), not when this package is imported.
"""

from bottlenecklab.experiments._discover import Found, discover
from bottlenecklab.experiments._findings import FINDINGS, Finding, expected_states, finding_of
from bottlenecklab.experiments._points import expand_points, point_id, point_requests, run_config
from bottlenecklab.experiments._registry import (
    EXPERIMENTS,
    Registry,
    UnknownExperiment,
    get,
    register,
)
from bottlenecklab.experiments._run_point import point_result, run_point
from bottlenecklab.experiments._runner import (
    Job,
    RunRecord,
    check_resumable,
    load_run,
    point_time_s,
    resolve_config,
    resolve_device,
    run_experiment,
    run_experiments,
    total_wall_s,
    write_json,
)
from bottlenecklab.experiments._spec import (
    PRESETS,
    STATES,
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
)
from bottlenecklab.experiments._sweep import run_sweep_spec, sweep_requests
from bottlenecklab.experiments._verdicts import count_states, judge, state_of, states_line

__all__ = [
    "EXPERIMENTS",
    "FINDINGS",
    "PRESETS",
    "STATES",
    "Claim",
    "Experiment",
    "Finding",
    "Found",
    "Gate",
    "Job",
    "Measurement",
    "PointResult",
    "Reads",
    "Registry",
    "RunRecord",
    "UnknownExperiment",
    "check_resumable",
    "count_states",
    "discover",
    "expand_points",
    "expected_states",
    "finding_of",
    "get",
    "judge",
    "load_run",
    "point_id",
    "point_requests",
    "point_result",
    "point_time_s",
    "register",
    "resolve_config",
    "resolve_device",
    "run_config",
    "run_experiment",
    "run_experiments",
    "run_point",
    "run_sweep_spec",
    "state_of",
    "states_line",
    "sweep_requests",
    "total_wall_s",
    "write_json",
]
