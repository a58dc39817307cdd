"""Diagnostics of a trained circular CNN: per-frequency singular values and modes of
every layer (paper 002, slides 'Convolutional Networks', 'Learning Newtonian
Mechanics'), and multi-step rollouts."""

from __future__ import annotations

import math

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.measure._rank_rule import RankRule
from bottlenecklab.measure._spectra import spectrum_rows
from bottlenecklab.tasks import Dataset, ball_frames
from bottlenecklab.theory import frequency_order, frequency_singular_values, significant_modes

__all__ = [
    "MODE_RULE",
    "ball_rollout",
    "frequency_spectra",
    "layer_frequency_singular_values",
    "layer_modes",
    "mode_table",
    "rollout",
]


# A mode counts when s_(omega, i) >= 0.1 x the layer's largest over every frequency (spec
# depth-and-rank.md, talk/newtonian-cnn; the talk gives no number): one relative cutoff
# for every layer compared. `significant_modes` applies its cutoff.
MODE_RULE = RankRule.relative(0.1)


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
                o = int(order[w1, w2])
                rows += spectrum_rows(l, f"{w1},{w2}", s[w1, w2].tolist(), order=o)
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


def mode_table(
    model: torch.nn.Module, rel: float = MODE_RULE.cutoff
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """`layer_modes` (at `MODE_RULE`'s cutoff unless `rel` is given) in long format
    (paper 002, slide 'Learning Newtonian Mechanics'):
    one row `{"layer", **mode}` per significant mode, and one row per layer
    `{"layer", "modes": count, "max_order": largest frequency order (0 without modes)}`."""
    modes, layers = [], []
    for l, found in enumerate(layer_modes(model, rel), start=1):
        modes += [{"layer": l, **m} for m in found]
        top = max((m["order"] for m in found), default=0)
        layers.append({"layer": l, "modes": len(found), "max_order": top})
    return modes, layers


def ball_rollout(
    model: torch.nn.Module, data: Dataset, steps: int, samples: int, gravity: float, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """`rollout` of the first `samples` test inputs of `tasks.ball_gravity` against the
    true frames of the ball's recorded positions and velocities (paper 002, slide
    'Learning Newtonian Mechanics'): position `p + t v + t (t + 1) / 2 g` at step `t`;
    frames `n x n` with `n^2` the targets' width.

    Returns:
        `truth`, `prediction`: `[k, steps, n, n]` each (`k = min(samples, N_test)`).
    """
    n = round(math.sqrt(data.y_test.shape[1]))
    k = min(samples, len(data.x_test))
    p = np.array(data.info["test_p"][:k])
    v = np.array(data.info["test_v"][:k])
    g = np.array([gravity, 0.0])
    pos = np.stack([p + (t + 1) * v + (t + 1) * (t + 2) / 2 * g for t in range(steps)], 1)
    truth = data.info["scale"] * ball_frames(pos, n, sigma)  # [k, steps, n, n]
    return truth, rollout(model, data.x_test[:k], steps, n)
