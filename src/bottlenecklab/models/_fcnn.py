"""Deep fully-connected network of papers 001/004 (spec `depth-and-rank.md`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from bottlenecklab.config import ConfigError

__all__ = ["FCNN", "FCNNConfig", "GivenFCNNConfig", "NormedFCNNConfig", "leaky_relu"]


def leaky_relu(x: torch.Tensor, slope: float) -> torch.Tensor:
    """`sigma_a(x) = x` for `x >= 0`, `a x` otherwise.

    Through `torch.relu` / `F.leaky_relu`, so that `measure.certify` finds the kinks (its
    derivative at exactly 0 is autograd's: `a`).
    """
    return torch.relu(x) if slope == 0.0 else nn.functional.leaky_relu(x, slope)


@dataclass(frozen=True)
class FCNNConfig:
    """Architecture of a depth-`L` fully-connected network.

    Args:
        depth: `L`, the number of weight matrices (so `L - 1` hidden layers).
        width: width of every hidden layer.
        activation: `leaky_relu` (slope `slope`; `0` is ReLU) or `identity` (deep linear).
        slope: leaky slope `a` in `(-1, 1)`.
        bias_scale: `beta`, the scale of the bias input (`0`: no bias).
        init: `he` (He-normal times `init_scale`) or `normal` (absolute std `init_scale`,
            the small initialization of paper 003).
        init_scale: see `init`.
    """

    depth: int = 4
    width: int = 100
    activation: Literal["leaky_relu", "identity"] = "leaky_relu"
    slope: float = 0.0
    bias_scale: float = 1.0
    init: Literal["he", "normal"] = "he"
    init_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise ConfigError(f"model.depth must be a positive integer, got {self.depth}")
        if self.width < 1:
            raise ConfigError(f"model.width must be a positive integer, got {self.width}")
        if not -1.0 < self.slope < 1.0:
            raise ConfigError(f"model.slope must be in (-1, 1), got {self.slope}")
        if self.bias_scale < 0:
            raise ConfigError(f"model.bias_scale must be >= 0, got {self.bias_scale}")
        if self.init_scale < 0:
            raise ConfigError(f"model.init_scale must be >= 0, got {self.init_scale}")

    def build(
        self, d_in: int, d_out: int, *, seed: int = 0, dtype: torch.dtype = torch.float32
    ) -> FCNN:
        """A freshly initialized network for inputs `[N, d_in]` and outputs `[N, d_out]`."""
        return FCNN(self, d_in, d_out, seed=seed, dtype=dtype)


@dataclass(frozen=True)
class GivenFCNNConfig:
    """A fully-connected network started at given weights (a hand-picked start, e.g. the
    two starts of paper 004, Prop 19); biases start at 0.

    Args:
        net: the architecture (its random init is overwritten).
        weights: the entries of `W_1`, ..., `W_L` in order, each `[n_l, n_{l-1}]` row-major.
    """

    net: FCNNConfig = FCNNConfig(depth=2, width=2, bias_scale=0.0)
    weights: tuple[float, ...] = (0.5, 0.6, 0.4, 0.7)

    def build(
        self, d_in: int, d_out: int, *, seed: int = 0, dtype: torch.dtype = torch.float32
    ) -> FCNN:
        """The network for inputs `[N, d_in]` and outputs `[N, d_out]` at `weights`."""
        model = self.net.build(d_in, d_out, seed=seed, dtype=dtype)
        sizes = [W.numel() for W in model.weights]
        if len(self.weights) != sum(sizes):
            raise ConfigError(
                f"model.weights: {sum(sizes)} entries for these shapes, got {len(self.weights)}"
            )
        flat = torch.tensor(self.weights, dtype=dtype)
        with torch.no_grad():
            for W, w in zip(model.weights, torch.split(flat, sizes)):
                W.copy_(w.view_as(W))
        return model


@dataclass(frozen=True)
class NormedFCNNConfig:
    """A fully-connected network whose seeded init is rescaled to `||theta|| = norm`: nets
    of one seed share one direction at several scales (paper 003, Prop 2.2: the escape
    time against the init scale).

    Args:
        net: the architecture and its init (e.g. `init="normal"`).
        norm: `||theta||` of every parameter (biases included) at init.
    """

    net: FCNNConfig = FCNNConfig(bias_scale=0.0, init="normal")
    norm: float = 1.0

    def __post_init__(self) -> None:
        if not self.norm > 0:
            raise ConfigError(f"model.norm must be > 0, got {self.norm}")

    def build(
        self, d_in: int, d_out: int, *, seed: int = 0, dtype: torch.dtype = torch.float32
    ) -> FCNN:
        """The network for inputs `[N, d_in]` and outputs `[N, d_out]`, rescaled in `dtype`."""
        model = self.net.build(d_in, d_out, seed=seed, dtype=dtype)
        params = list(model.parameters())
        c = self.norm / math.sqrt(sum(float(p.detach().pow(2).sum()) for p in params))
        with torch.no_grad():
            for p in params:
                p.mul_(c)
        return model


class FCNN(nn.Module):
    """`a~_l = a_{l-1} W_l^T + beta b_l^T`, `a_l = sigma_a(a~_l)`, output `a~_L`.

    Parameters: `weights[l]` `[n_l, n_{l-1}]`, `biases[l]` `[n_l]` for `l = 1..L`.
    """

    def __init__(
        self,
        cfg: FCNNConfig,
        d_in: int,
        d_out: int,
        *,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        gen = torch.Generator().manual_seed(seed)
        sizes = [d_in] + [cfg.width] * (cfg.depth - 1) + [d_out]
        weights, biases = [], []
        for n_prev, n in zip(sizes[:-1], sizes[1:]):
            std = cfg.init_scale * (math.sqrt(2.0 / n_prev) if cfg.init == "he" else 1.0)
            weights.append(nn.Parameter((std * torch.randn(n, n_prev, generator=gen)).to(dtype)))
            biases.append(nn.Parameter(torch.zeros(n, dtype=dtype)))
        self.weights = nn.ParameterList(weights)
        self.biases = nn.ParameterList(biases)

    @property
    def depth(self) -> int:
        """Number of weight matrices `L`."""
        return self.cfg.depth

    adapt_every = 0
    stackable = True  # forward/regularization accept stacked members (`train_ensemble`)

    def act(self, x: torch.Tensor) -> torch.Tensor:
        """The nonlinearity `sigma_a` (identity for a deep linear network)."""
        if self.cfg.activation == "identity":
            return x
        return leaky_relu(x, self.cfg.slope)

    def forward_path(self, X: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Pre-activations `[a~_1..a~_L]` and activations `[a_0 = X, a_1..a_{L-1}]`.

        `X` `[N, d_in]`; or `[E, N, d_in]` with every parameter stacked `[E, ...]` (an
        ensemble through `torch.func.functional_call`).
        """
        pre, post = [], [X]
        a = X
        for l, (W, b) in enumerate(zip(self.weights, self.biases)):
            if a.dim() == 2:
                z = torch.addmm(self.cfg.bias_scale * b, a, W.T)  # [N, n_l]
            else:  # stacked members: [E, N, n_l]
                z = torch.baddbmm(self.cfg.bias_scale * b.unsqueeze(-2), a, W.mT)
            pre.append(z)
            if l < self.cfg.depth - 1:
                a = self.act(z)
                post.append(a)
        return pre, post

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Outputs `a~_L`, `[N, d_out]`."""
        return self.forward_path(X)[0][-1]

    def param_norm_sq(self) -> torch.Tensor:
        """`||theta||^2 = sum_l ||W_l||_F^2 + ||b_l||^2` (biases included)."""
        return sum(
            W.pow(2).sum(dim=(-2, -1)) + b.pow(2).sum(-1) for W, b in zip(self.weights, self.biases)
        )

    def regularization(self, lam: float) -> torch.Tensor:
        """`lam ||theta||^2` (paper 001, Eq. 1; paper 004)."""
        return lam * self.param_norm_sq()
