"""The bottleneck probe: the theory's quantities on any PyTorch model (spec `probe.md`).

`BottleneckProbe(model, X, Y, lam).analyze()` gives one row per layer (found by a
registered `Adapter`, such as those of our own models, else by `torch.fx` or forward
hooks; `register_adapter` adds one for a model of yours); the one-question forms
(`bottleneck_rank`, `jacobian_rank`, `ntk_trace`, ...) answer one thing each. Every
quantity comes from `measure`'s layer-level core, the code the experiments use.
"""

from bottlenecklab.probe._adapters import register_adapter
from bottlenecklab.probe._base import Adapter, Capture, CaptureError, Layer, WeightRef
from bottlenecklab.probe._capture import ACTIVATIONS, HOMOGENEOUS, capture, sequential_chain
from bottlenecklab.probe._functional import (
    bottleneck_rank,
    jacobian_rank,
    l2_diagnostics,
    merge_neurons,
    ntk_trace,
    representation_table,
)
from bottlenecklab.probe._io import DATA_FORMATS, load_data, load_model
from bottlenecklab.probe._probe import COLUMNS, RANK_RULE, BottleneckProbe, ProbeError

__all__ = [
    "ACTIVATIONS",
    "COLUMNS",
    "DATA_FORMATS",
    "HOMOGENEOUS",
    "RANK_RULE",
    "Adapter",
    "BottleneckProbe",
    "Capture",
    "CaptureError",
    "Layer",
    "ProbeError",
    "WeightRef",
    "bottleneck_rank",
    "capture",
    "jacobian_rank",
    "l2_diagnostics",
    "load_data",
    "load_model",
    "merge_neurons",
    "ntk_trace",
    "register_adapter",
    "representation_table",
    "sequential_chain",
]
