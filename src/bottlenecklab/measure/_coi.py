"""Float64 CPU copies of representations, for applying `theory`'s cost of identity (paper
000, §1.4) and its relatives to a trained network's tensors.

The formulas (`cost_of_identity`, `kernel_norm_sq`, `coi_residual`, `stable_rank`,
`negative_mass`) are defined once, in `theory.coi`; `measure` calls them on
`as_float64(A)` and converts the result with `float(...)`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bottlenecklab import theory

__all__ = ["as_float64", "features"]

features = theory.features


def as_float64(A: Any) -> torch.Tensor:
    """A detached float64 CPU tensor from a tensor or array (never the caller's tensor)."""
    if isinstance(A, torch.Tensor):
        return A.detach().to(device="cpu", dtype=torch.float64)
    return torch.as_tensor(np.asarray(A), dtype=torch.float64)
