"""Leaky ResNet of paper 000 (§1, "Leaky ResNets"), in code orientation (rows = samples)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from bottlenecklab.config import ConfigError
from bottlenecklab.models._leaky_stack import leaky_resnet_stack, leaky_resnet_step_norms
from bottlenecklab.models._schedules import adaptive_steps_from_norms, layer_steps
from bottlenecklab.theory import sigma

__all__ = ["LeakyResNet", "LeakyResNetConfig", "sigma"]


@dataclass(frozen=True)
class LeakyResNetConfig:
    """Architecture of a leaky ResNet.

    Args:
        width: `w`, the width of every representation `A_l`.
        depth: `L`, the number of residual layers.
        leak: effective depth `L~ >= 0` (`0` is a plain ResNet).
        lift: `fixed` (seeded random lift/projection with orthonormal columns/rows, not
            trained; the spec's Decision) or `learned` (trained, decayed with `lam/2`).
        schedule: layer steps: `equidistant`, `irregular` (amplitude `irregular_a`) or
            `adaptive` (updated every `adaptive_every` steps, blended with `adaptive_damping`).
        init: `fixed_point` starts at `W_l = L~ [I, 0]` plus noise (non-negative
            representations are then a fixed point of every layer, so the signal survives a
            large leak; spec "Numerical notes"), `random` at `N(0, init_scale^2/(w+1))`.
        init_scale: `random`: std of the weights in units of `1/sqrt(w+1)`; `fixed_point`:
            std of the noise in units of `L~/sqrt(w+1)`, i.e. relative to the diagonal
            `L~ I` (operator norm of the noise ~ `2 init_scale L~`; `L~ = 0` uses 1).
    """

    width: int = 200
    depth: int = 50
    leak: float = 5.0
    lift: Literal["fixed", "learned"] = "fixed"
    schedule: Literal["equidistant", "irregular", "adaptive"] = "equidistant"
    irregular_a: float = 0.5
    adaptive_every: int = 10
    adaptive_damping: float = 1.0
    init: Literal["fixed_point", "random"] = "fixed_point"
    init_scale: float = 0.1

    def __post_init__(self) -> None:
        if self.width < 1:
            raise ConfigError(f"model.width must be a positive integer, got {self.width}")
        if self.depth < 1:
            raise ConfigError(f"model.depth must be a positive integer, got {self.depth}")
        if not (self.leak >= 0 and math.isfinite(self.leak)):
            raise ConfigError(f"model.leak (effective depth) must be >= 0, got {self.leak}")
        if not 0.0 <= self.irregular_a < 1.0:
            raise ConfigError(f"model.irregular_a must be in [0, 1), got {self.irregular_a}")
        if self.adaptive_every < 1:
            raise ConfigError(f"model.adaptive_every must be >= 1, got {self.adaptive_every}")
        if not 0.0 < self.adaptive_damping <= 1.0:
            raise ConfigError(
                f"model.adaptive_damping must be in (0, 1], got {self.adaptive_damping}"
            )
        if self.init_scale < 0:
            raise ConfigError(f"model.init_scale must be >= 0, got {self.init_scale}")

    def build(
        self, d_in: int, d_out: int, *, seed: int = 0, dtype: torch.dtype = torch.float32
    ) -> LeakyResNet:
        """A freshly initialized network for inputs `[N, d_in]` and outputs `[N, d_out]`."""
        return LeakyResNet(self, d_in, d_out, seed=seed, dtype=dtype)


def _orthonormal(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    """A `[rows, cols]` matrix with orthonormal columns (rows >= cols) or rows."""
    big, small = max(rows, cols), min(rows, cols)
    q, r = torch.linalg.qr(torch.randn(big, small, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)
    return q if rows >= cols else q.T


class LeakyResNet(nn.Module):
    """`A_l = (1 - rho_l L~) A_{l-1} + rho_l sigma(A_{l-1}) W_l^T` (paper 000, Eq. 1).

    Parameters: `weights` `[L, w, w+1]` (last column is the bias), and `pin` `[w, d_in]`,
    `pout` `[d_out, w]` (buffers when the lift is fixed). `rho` `[L]` is a buffer.
    """

    stackable = True  # forward/regularization accept stacked members (`train_ensemble`)

    def __init__(
        self,
        cfg: LeakyResNetConfig,
        d_in: int,
        d_out: int,
        *,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        w, L = cfg.width, cfg.depth
        gen = torch.Generator().manual_seed(seed)
        pin = _orthonormal(w, d_in, gen)
        pout = _orthonormal(d_out, w, gen)
        scale = cfg.init_scale / math.sqrt(w + 1)
        if cfg.init == "fixed_point" and cfg.leak > 0:
            scale *= cfg.leak  # noise relative to the fixed point L~ [I, 0]
        noise = scale * torch.randn(L, w, w + 1, generator=gen, dtype=torch.float64)
        if cfg.init == "fixed_point":
            base = torch.zeros(L, w, w + 1, dtype=torch.float64)
            base[:, :, :w] = cfg.leak * torch.eye(w, dtype=torch.float64)
            weights = base + noise
        else:
            weights = noise
        self.weights = nn.Parameter(weights.to(dtype))
        if cfg.lift == "learned":
            self.pin = nn.Parameter(pin.to(dtype))
            self.pout = nn.Parameter(pout.to(dtype))
        else:
            self.register_buffer("pin", pin.to(dtype))
            self.register_buffer("pout", pout.to(dtype))
        self.register_buffer("rho", layer_steps(cfg.schedule, L, cfg.irregular_a).to(dtype))
        # `L~` as a tensor too (not saved in checkpoints), so that an ensemble of nets with
        # different leaks can be trained at once with torch.func (`train_ensemble`).
        self.register_buffer("leak_t", torch.tensor(cfg.leak, dtype=dtype), persistent=False)
        self._warned = False
        self._record = False  # the next forward keeps the adaptive steps' norms
        self._step_norms: tuple[torch.Tensor, torch.Tensor] | None = None
        self.check_steps()

    @property
    def depth(self) -> int:
        """Number of residual layers `L`."""
        return self.cfg.depth

    @property
    def leak(self) -> float:
        """Effective depth `L~`."""
        return self.cfg.leak

    @property
    def adapt_every(self) -> int:
        """Steps between adaptive layer-step updates (0: the schedule is fixed)."""
        return self.cfg.adaptive_every if self.cfg.schedule == "adaptive" else 0

    def check_steps(self) -> None:
        """Warn (once) when some `rho_l L~ >= 1` (the layer then flips or kills its input)."""
        worst = float(self.rho.max()) * self.cfg.leak
        if worst >= 1.0 and not self._warned:
            self._warned = True
            warnings.warn(
                f"layer step times leak reaches {worst:.3g} >= 1 "
                f"(depth {self.cfg.depth}, leak {self.cfg.leak}): use more layers",
                stacklevel=2,
            )

    def forward_path(self, X: torch.Tensor) -> list[torch.Tensor]:
        """All representations `[A_0, ..., A_L]`, each `[N, w]`, for inputs `X` `[N, d_in]`.

        The plain autograd loop (differentiable to any order, e.g. for the momenta of
        `measure`); `forward` computes `A_L` with the fused stack instead.
        """
        A = X @ self.pin.T  # [N, w]
        path = [A]
        leak = self.leak_t
        w = self.cfg.width
        # unbind once: its backward is one stack, where indexing `weights[l]` per layer
        # would allocate and add a full-size zero gradient per layer (O(L^2) memory traffic).
        for r, W in zip(self.rho.unbind(0), self.weights.unbind(0)):  # W: [w, w+1]
            # sigma(A) W^T = relu(A) W[:, :w]^T + bias, as one fused matmul-add.  # [N, w]
            A = (1 - r * leak) * A + r * torch.addmm(W[:, w], torch.relu(A), W[:, :w].T)
            path.append(A)
        return path

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Outputs `Y_hat = A_L Pout^T`, `[N, d_out]`, through the fused layer stack.

        Stacked members work too (`train_ensemble`): with every parameter and buffer given
        a leading member axis `[E, ...]` (`torch.func.functional_call`), `X` `[E, N, d_in]`
        gives `[E, N, d_out]`.
        """
        A0 = X @ self.pin.mT  # [..., N, w]
        if self._record and A0.dim() == 2:
            self._record = False
            A_L, diffs, norms = leaky_resnet_stack(
                A0, self.weights, self.rho, self.leak_t, step_norms=True
            )
            self._step_norms = (diffs, norms)
            return A_L @ self.pout.mT
        return leaky_resnet_stack(A0, self.weights, self.rho, self.leak_t) @ self.pout.mT

    def forward_twice_differentiable(self, X: torch.Tensor) -> torch.Tensor:
        """`forward` through the plain autograd loop (`forward_path`), `[N, d_out]`: the
        same outputs, differentiable twice (Hessian-vector products of the Newton phase;
        the fused stack's hand-written backward is not)."""
        return self.forward_path(X)[-1] @ self.pout.T

    def regularization(self, lam: float | torch.Tensor) -> torch.Tensor:
        """`(lam / (2 L~)) sum_l rho_l ||W_l||_F^2` (paper 000, Eq. 2); `lam/2` when `L~ = 0`.

        A learned lift adds `(lam/2)(||Pin||^2 + ||Pout||^2)`. A scalar; `[E]` for stacked
        members with `lam` `[E]`.
        """
        coef = lam / (2 * self.leak_t) if self.cfg.leak > 0 else lam / 2
        per_layer = self.weights.pow(2).sum(dim=(-2, -1))  # [..., L]
        reg = coef * (self.rho * per_layer).sum(-1)
        if self.cfg.lift == "learned":
            lift = self.pin.pow(2).sum(dim=(-2, -1)) + self.pout.pow(2).sum(dim=(-2, -1))
            reg = reg + (lam / 2) * lift
        return reg

    @torch.no_grad()
    def adapt(self, X: torch.Tensor) -> None:
        """Adaptive layer-step update from the representations of `X` (spec: `adaptive`).

        One pass over the layers that keeps only `||A_l - A_{l-1}||` and `||A_{l-1}||`
        (the same numbers `adaptive_steps(forward_path(X))` uses, in the fused form of
        `forward`: no path is stored).
        """
        diffs, norms = leaky_resnet_step_norms(X @ self.pin.T, self.weights, self.rho, self.leak_t)
        self._set_steps(diffs, norms)

    def record_step_norms(self) -> None:
        """Have the next `forward` keep `||A_l - A_{l-1}||` and `||A_{l-1}||` (two
        reductions per layer) for `adapt_recorded`: the training step's own forward then
        serves the adaptive update, instead of a separate pass (`adapt`)."""
        self._record = True

    @torch.no_grad()
    def adapt_recorded(self) -> None:
        """The adaptive layer-step update from the norms of the last recorded `forward`.

        Called after that step's backward and before its optimizer step, it gives the steps
        `adapt(X)` would give on the same weights; they take effect from the next step.
        """
        if self._step_norms is None:
            raise RuntimeError("adapt_recorded needs a forward after record_step_norms()")
        diffs, norms = self._step_norms
        self._step_norms = None
        self._set_steps(diffs, norms)

    def _set_steps(self, diffs: torch.Tensor, norms: torch.Tensor) -> None:
        steps = adaptive_steps_from_norms(diffs, norms, self.rho, self.cfg.adaptive_damping)
        self.rho.copy_(steps)
        self.check_steps()
