"""Diagnostics of a trained circular CNN: per-frequency singular values and modes of
every layer (paper 002, slides 'Convolutional Networks', 'Learning Newtonian
Mechanics'), and multi-step rollouts."""

from __future__ import annotations

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.theory import frequency_order, frequency_singular_values, significant_modes

__all__ = ["frequency_spectra", "layer_frequency_singular_values", "layer_modes", "rollout"]


def layer_frequency_singular_values(model: torch.nn.Module) -> list[torch.Tensor]:
    """`theory.frequency_singular_values` of every kernel `K_l`: `[n, n, r_l]` each."""
    return [frequency_singular_values(K) for K in model.kernels]


def layer_modes(model: torch.nn.Module, rel: float) -> list[list[dict[str, float]]]:
    """`theory.significant_modes` of every layer (threshold `rel` times the layer's
    largest `s_{omega, i}`)."""
    return [significant_modes(s, rel) for s in layer_frequency_singular_values(model)]


def frequency_spectra(model: torch.nn.Module) -> list[dict[str, float | int | str]]:
    """Every `s_{omega, i}` of every layer in the long format of a run's spectra:
    `{"layer", "matrix": "w1,w2" (the frequency omega), "index" (i, 1-based), "value",
    "order"}` (`theory.frequency_order` of omega)."""
    rows: list[dict[str, float | int | str]] = []
    for l, s in enumerate(layer_frequency_singular_values(model), start=1):  # [n, n, r_l]
        order = frequency_order(s.shape[0])
        for w1 in range(s.shape[0]):
            for w2 in range(s.shape[1]):
                rows += [
                    {"layer": l, "matrix": f"{w1},{w2}", "index": i, "value": v}
                    | {"order": int(order[w1, w2])}
                    for i, v in enumerate(s[w1, w2].tolist(), start=1)
                ]
    return rows


def rollout(model: torch.nn.Module, x0: np.ndarray, steps: int, size: int) -> np.ndarray:
    """Feed the model its own predictions: inputs (frame t-1, frame t) -> frame t+1.

    Args:
        x0: `[M, 2 n^2]` the two first frames (channel-major)
        steps: frames to predict.
    Returns:
        `[M, steps, n, n]` predicted frames (float64 copy of the model).
    """
    net = float64_copy(model)
    n2 = size * size
    x = torch.as_tensor(x0, dtype=torch.float64)
    out = []
    with torch.no_grad():
        for _ in range(steps):
            y = net(x)  # [M, n^2]
            out.append(y.reshape(len(y), size, size))
            x = torch.cat([x[:, n2:], y], dim=1)
    return torch.stack(out, dim=1).numpy()
