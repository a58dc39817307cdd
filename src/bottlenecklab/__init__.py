"""Bottleneck Lab: train deep networks with a known bottleneck rank and measure the theory.

Sub-packages: `models`, `tasks`, `training`, `measure`, `theory`, `experiments`, `sweeps`,
`report`, `probe`; the command line lives in `cli`.

The probe of a user's own network is re-exported here (`bl.BottleneckProbe`,
`bl.bottleneck_rank`, ...), imported on first use so that `import bottlenecklab` stays
light (the command line imports it for every command).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PROBE = (
    "BottleneckProbe",
    "bottleneck_rank",
    "jacobian_rank",
    "l2_diagnostics",
    "merge_neurons",
    "ntk_trace",
    "representation_table",
)
__all__ = ["__version__", *_PROBE]


def __getattr__(name: str) -> Any:
    if name in _PROBE:
        # Loaded on attribute access only: no sub-package depends on the probe by
        # importing `bottlenecklab` (which an import statement here would tell
        # import-linter, and which would load torch for every CLI command).
        return getattr(importlib.import_module("bottlenecklab.probe"), name)
    raise AttributeError(f"module 'bottlenecklab' has no attribute {name!r}")
