"""Circular CNN with full-size kernels applied by FFT (paper 002, slide 'Convolutional
Networks'; spec `depth-and-rank.md`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from bottlenecklab.config import ConfigError

__all__ = ["CircularCNN", "CircularCNNConfig"]


@dataclass(frozen=True)
class CircularCNNConfig:
    """Architecture of a depth-`L` circular CNN on `n x n` images.

    Args:
        depth: `L`, the number of convolutions
        channels: `c_l` of every hidden layer.
        size: `n` (inputs `[N, c_0 n^2]` are reshaped to `[N, c_0, n, n]`).
        bias_scale: `beta` (per-channel bias `beta b_l`).
        init_scale: He-normal std `sqrt(2 / (c_{l-1} n^2))` times this.
    """

    depth: int = 8
    channels: int = 12
    size: int = 16
    bias_scale: float = 1.0
    init_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.depth < 1 or self.channels < 1 or self.size < 1:
            raise ConfigError("model.depth, model.channels and model.size must be >= 1")

    def build(
        self, d_in: int, d_out: int, *, seed: int = 0, dtype: torch.dtype = torch.float32
    ) -> CircularCNN:
        """A fresh network for flattened inputs `[N, d_in]` and outputs `[N, d_out]`
        (`d_in`, `d_out` multiples of `n^2`)."""
        return CircularCNN(self, d_in, d_out, seed=seed, dtype=dtype)


class CircularCNN(nn.Module):
    """`a~_l = K_l (*) a_{l-1} + beta b_l`, `a_l = relu(a~_l)`, output `a~_L` (flattened).

    `(K (*) a)[o, x] = sum_c sum_q K[o, c, q] a[c, x - q]` (indices mod `n`), computed as
    `irfft2(rfft2(K) rfft2(a))`. Parameters: `kernels[l]` `[c_l, c_{l-1}, n, n]`,
    `biases[l]` `[c_l]`.
    """

    adapt_every = 0
    stackable = False

    def __init__(
        self,
        cfg: CircularCNNConfig,
        d_in: int,
        d_out: int,
        *,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        n2 = cfg.size**2
        if d_in % n2 or d_out % n2:
            raise ConfigError(f"d_in = {d_in} and d_out = {d_out} must be multiples of n^2 = {n2}")
        self.cfg = cfg
        gen = torch.Generator().manual_seed(seed)
        chans = [d_in // n2] + [cfg.channels] * (cfg.depth - 1) + [d_out // n2]
        kernels, biases = [], []
        for c_prev, c in zip(chans[:-1], chans[1:]):
            std = cfg.init_scale * math.sqrt(2.0 / (c_prev * n2))
            K = std * torch.randn(c, c_prev, cfg.size, cfg.size, generator=gen)
            kernels.append(nn.Parameter(K.to(dtype)))
            biases.append(nn.Parameter(torch.zeros(c, dtype=dtype)))
        self.kernels = nn.ParameterList(kernels)
        self.biases = nn.ParameterList(biases)

    @property
    def depth(self) -> int:
        """Number of convolutions `L`."""
        return self.cfg.depth

    def forward_path(self, X: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Pre-activations `[a~_1..a~_L]` and activations `[a_0, a_1..a_{L-1}]`, each
        `[N, c_l, n, n]`, for flattened inputs `X` `[N, c_0 n^2]`."""
        n = self.cfg.size
        a = X.reshape(len(X), -1, n, n)
        pre, post = [], [a]
        for l, (K, b) in enumerate(zip(self.kernels, self.biases)):
            # per frequency: [c_l, c_{l-1}] times [c_{l-1}, N], as one batched matmul
            # (a complex einsum is ~20x slower here)
            a_hat = torch.fft.rfft2(a).permute(2, 3, 0, 1)  # [n, n/2+1, N, c_{l-1}]
            K_hat = torch.fft.rfft2(K).permute(2, 3, 1, 0)  # [n, n/2+1, c_{l-1}, c_l]
            spec = (a_hat @ K_hat).permute(2, 3, 0, 1)  # [N, c_l, n, n/2+1]
            z = torch.fft.irfft2(spec, s=(n, n)) + self.cfg.bias_scale * b[:, None, None]
            pre.append(z)
            if l < self.cfg.depth - 1:
                a = torch.relu(z)
                post.append(a)
        return pre, post

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Outputs `a~_L` flattened, `[N, c_L n^2]`."""
        out = self.forward_path(X)[0][-1]
        return out.reshape(len(out), -1)

    def param_norm_sq(self) -> torch.Tensor:
        """`||theta||^2 = sum_l ||K_l||_F^2 + ||b_l||^2`."""
        return sum(K.pow(2).sum() + b.pow(2).sum() for K, b in zip(self.kernels, self.biases))

    def regularization(self, lam: float) -> torch.Tensor:
        """`lam ||theta||^2` (spec **Decision**: full-size kernels, biases included)."""
        return lam * self.param_norm_sq()
