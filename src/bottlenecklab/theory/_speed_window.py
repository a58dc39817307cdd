"""Paper 000, Thm 4 (2) per layer, in the form its proof supports (spec `leaky-resnets.md`,
fourth review).

The proof's identity, for a layer with ridge `gamma`, momentum `B` and
`a = COI_gamma + (2/L~) H`, is `a + gamma ||B||^2 = ||V/L~ + gamma B||^2_(K + gamma I)`, and
`||gamma B||_(K + gamma I) <= sqrt(gamma) ||B||` (since `(K + gamma I)^{-1} <= gamma^{-1} I`).
The triangle inequality then gives, with `(a)_+ = max(a, 0)`,

    -L~ sqrt(gamma) ||B|| <= ||V||_(K + gamma I) - L~ sqrt((a)_+) <= 2 L~ sqrt(gamma) ||B||.

The paper writes `sqrt(a)` (undefined where `a < 0`, which the identity allows down to
`-gamma ||B||^2`) and `gamma c` with `c = max ||B||` in place of `sqrt(gamma) ||B||`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SpeedWindow", "speed_window"]


@dataclass(frozen=True)
class SpeedWindow:
    """The window around each layer's speed (paper 000, Thm 4 (2)), arrays `[L]`.

    Args:
        arg: `a_l = COI_gamma,l + (2/L~) H`.
        excess: `||V_l||_(K+gamma I) - L~ sqrt((a_l)_+)`.
        lower: `-L~ sqrt(gamma_l) ||B_l||` (the window's lower end, `<= 0`).
        upper: `2 L~ sqrt(gamma_l) ||B_l||` (its upper end, `>= 0`).
        used: the signed fraction of the window the excess uses: `excess / upper` where
            `excess >= 0`, `excess / |lower|` (negative) where it is below 0; the
            inequality holds at a layer iff `|used| <= 1`.
    """

    arg: np.ndarray
    excess: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    used: np.ndarray

    @property
    def holds(self) -> np.ndarray:
        """`[L]` bool: the inequality holds at the layer."""
        return (self.excess >= self.lower) & (self.excess <= self.upper)


def speed_window(
    v_norm: np.ndarray,
    coi_gamma: np.ndarray,
    rank_h: float,
    gamma: np.ndarray | float,
    b_norm: np.ndarray,
    leak: float,
) -> SpeedWindow:
    """The window that paper 000, Thm 4 (2) puts around each layer's speed: both sides per
    layer, each layer with its own `gamma_l` and `||B_l||` (see the module docstring).

    Args:
        v_norm: `||V_l||_(K_(l-1) + gamma_l I)`, `[L]`.
        coi_gamma: `||A_(l-1)||^2_(K_(l-1) + gamma_l I)`, `[L]`.
        rank_h: `-(2/L~) H` (the Hamiltonian the theorem holds constant; the median over
            layers of a trained network).
        gamma: `gamma_l`, `[L]` or one ridge for every layer.
        b_norm: `||B_l||_F`, `[L]`.
        leak: `L~ > 0`.
    """
    v = np.asarray(v_norm, dtype=float)
    arg = np.asarray(coi_gamma, dtype=float) - rank_h
    root_gb = np.sqrt(np.broadcast_to(np.asarray(gamma, dtype=float), v.shape)) * np.asarray(
        b_norm, dtype=float
    )
    excess = v - leak * np.sqrt(np.maximum(arg, 0.0))
    lower, upper = -leak * root_gb, 2.0 * leak * root_gb
    with np.errstate(divide="ignore", invalid="ignore"):
        used = np.where(excess >= 0, excess / upper, excess / -lower)
    used = np.where(excess == 0, 0.0, used)  # a zero window and no excess uses nothing
    return SpeedWindow(arg=arg, excess=excess, lower=lower, upper=upper, used=used)
