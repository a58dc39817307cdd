"""Cost of identity, kernel norms and stable rank as pure tensor formulas (paper 000, §1.4).

Rows are samples: `A` is `[N, w]`, `S = sigma(A)` is `[N, w+1]` (with bias) or `relu(A)`
(`[N, w]`, bias-free) and `K = S S^T`. The cost of identity is
`||A||^2_{K + gamma I} = Tr[A^T (K + gamma I)^{-1} A]`. These are the library's only
implementations: `measure` applies them to trained networks (float64, floats out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from bottlenecklab.theory._features import features

__all__ = [
    "KernelSVD",
    "cost_of_identity",
    "kernel_condition",
    "kernel_norm_sq",
    "kernel_norms_sq",
    "kernel_norms_sq_from_grams",
    "relative_gamma",
    "stable_rank",
]


def _condition(s: torch.Tensor, m: int, gamma: float | torch.Tensor) -> torch.Tensor:
    """`(s_1^2 + gamma) / (s_m^2 + gamma)` from the singular values `s` of `S` `[N, m]`."""
    s2 = s.pow(2)
    if s2.numel() < m:  # fewer samples than features: S^T S is singular
        s2 = torch.cat([s2, s2.new_zeros(m - s2.numel())])
    return (s2.max() + gamma) / (s2.min() + gamma)


@dataclass(frozen=True)
class KernelSVD:
    """The SVD of features `S` `[N, m]` through a QR factorization, `S = Q R` and
    `R = U_R diag(s) V^T`, so that `K = S S^T = (Q U_R) diag(s^2) (Q U_R)^T`: one
    factorization shared by every `gamma = 0` quantity of `K` (the pseudo-inverse norm, the
    part of `M` outside the range of `S`, `||K||_op`, the conditioning of `S^T S + gamma I`),
    and, through `leading`, by those of `S`'s leading columns (`relu(A)` inside
    `[relu(A), 1]`). (LAPACK's SVD of a tall matrix takes the same QR route.)

    Singular values at most `eps * max(N, m) * s_1` count as zero, the cut-off of
    `torch.linalg.pinv`, so that `norm_sq(M)` is `||S^+ M||_F^2`.

    Args:
        Q: orthonormal `[N, k]`, `k = min(N, m)`
        R: upper trapezoidal `[k, m]`
        U_R: left singular vectors of `R`, `[k, k]`
        s: singular values `[k]`, descending.
    """

    Q: torch.Tensor
    R: torch.Tensor
    U_R: torch.Tensor
    s: torch.Tensor

    @staticmethod
    def of(S: torch.Tensor) -> KernelSVD:
        """Factor `S` `[N, m]`."""
        Q, R = torch.linalg.qr(S)
        return KernelSVD._from_qr(Q, R)

    @staticmethod
    def _from_qr(Q: torch.Tensor, R: torch.Tensor) -> KernelSVD:
        U_R, s, _ = torch.linalg.svd(R, full_matrices=False)
        return KernelSVD(Q=Q, R=R, U_R=U_R, s=s)

    def leading(self, j: int) -> KernelSVD:
        """The factorization of `S[:, :j]`, from the same `Q` (`S[:, :j] = Q[:, :k] R[:k, :j]`,
        `k = min(N, j)`): only a `k x j` SVD."""
        k = min(self.Q.shape[-1], j)
        return KernelSVD._from_qr(self.Q[:, :k], self.R[:k, :j])

    @property
    def m(self) -> int:
        """The number of features (columns of `S`)."""
        return self.R.shape[-1]

    def _rank(self) -> int:
        N = self.Q.shape[0]
        cut = torch.finfo(self.s.dtype).eps * max(N, self.m) * self.s[:1].clamp_min(0.0)
        return int((self.s > cut).sum())  # s is descending: the kept values come first

    def op_norm_sq(self) -> torch.Tensor:
        """`||K||_op = s_1^2`, a 0-d tensor."""
        return self.s[0].pow(2)

    def condition(self, gamma: float | torch.Tensor = 0.0) -> torch.Tensor:
        """Condition number `(s_1^2 + gamma) / (s_m^2 + gamma)` of `S^T S + gamma I`
        (`kernel_condition`), a 0-d tensor."""
        return _condition(self.s, self.m, gamma)

    def norm_sq(self, M: torch.Tensor) -> torch.Tensor:
        """`||S^+ M||_F^2`, the `gamma = 0` value of `||M||^2_K` (`kernel_norm_sq`), 0-d."""
        r = self._rank()
        D = self.U_R[:, :r].transpose(-1, -2) @ (self.Q.transpose(-1, -2) @ M)  # [r, w]
        return (D / self.s[:r].unsqueeze(-1)).pow(2).sum()

    def norm_sq_and_residual(self, M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`(||S^+ M||_F^2, ||M - S S^+ M||_F / ||M||_F)`: the `gamma = 0` norm and the
        relative part of `M` outside the range of `S` (`coi_residual`), each a 0-d tensor.

        The part outside is split into two orthogonal pieces, `M - Q Q^T M` (outside the
        range of `Q`) and the directions of `Q` whose singular values are cut off."""
        C = self.Q.transpose(-1, -2) @ M  # [k, w]
        return self._norm_sq_and_residual(M, C, (M - self.Q @ C).pow(2).sum())

    def nested_norm_sq_and_residual(
        self, M: torch.Tensor, j: int
    ) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
        """`norm_sq_and_residual(M)` against `S` and against its leading columns `S[:, :j]`
        (`leading(j)`), from one projection `Q^T M`: `((norm, residual), (norm, residual))`."""
        C = self.Q.transpose(-1, -2) @ M  # [k, w]
        outside = (M - self.Q @ C).pow(2).sum()
        inner = self.leading(j)
        k = inner.Q.shape[-1]  # Q[:, k:] is orthogonal to S[:, :j]'s range
        return (
            self._norm_sq_and_residual(M, C, outside),
            inner._norm_sq_and_residual(M, C[:k], outside + C[k:].pow(2).sum()),
        )

    def _norm_sq_and_residual(
        self, M: torch.Tensor, C: torch.Tensor, outside_q: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r = self._rank()
        D = self.U_R.transpose(-1, -2) @ C  # [k, w]
        residual = (outside_q + D[r:].pow(2).sum()).sqrt() / M.norm().clamp_min(1e-300)
        return (D[:r] / self.s[:r].unsqueeze(-1)).pow(2).sum(), residual


def relative_gamma(A: torch.Tensor, gamma0: float, *, bias: bool = True) -> torch.Tensor:
    """`gamma = gamma0 ||K||_op = gamma0 s_max(S)^2` (the spec's Decision on paper 000, Thm 4)."""
    return gamma0 * torch.linalg.matrix_norm(features(A, bias), ord=2).pow(2)


def kernel_norm_sq(
    M: torch.Tensor, S: torch.Tensor, gamma: float | torch.Tensor = 0.0
) -> torch.Tensor:
    """`||M||^2_{K + gamma I} = Tr[M^T (K + gamma I)^{-1} M]`, `K = S S^T`, a 0-d tensor.

    `gamma > 0`: the Woodbury form
    `gamma^{-1} (||M||^2 - Tr[(S^T M)^T (S^T S + gamma I)^{-1} (S^T M)])`, an `m x m`
    Cholesky solve instead of `N x N` (spec `leaky-resnets.md`). `gamma = 0`: the
    pseudo-inverse value `||S^+ M||_F^2` (finite only for `M` in the range of `S`; the
    part outside, where paper 000 calls the norm infinite, is `coi_residual`).
    Differentiable in `M` and `S` for `gamma > 0`.

    Args:
        M: `[N, w]`
        S: `[N, m]`
        gamma: absolute ridge, `>= 0`.
    """
    return kernel_norms_sq((M,), S, gamma)[0]


def kernel_norms_sq(
    Ms: Sequence[torch.Tensor], S: torch.Tensor, gamma: float | torch.Tensor = 0.0
) -> torch.Tensor:
    """`kernel_norm_sq` of several matrices against one kernel `K = S S^T`, `[len(Ms)]`:
    one factorization of `S^T S + gamma I` (or of `S`, at `gamma = 0`) serves them all.

    Args:
        Ms: matrices `[N, w_i]`
        S: `[N, m]`
        gamma: absolute ridge, `>= 0`.
    """
    if float(gamma) < 0:
        raise ValueError(f"gamma must be >= 0, got {float(gamma)}")
    if float(gamma) == 0:
        svd = KernelSVD.of(S)
        return torch.stack([svd.norm_sq(M) for M in Ms])
    M = torch.cat(list(Ms), dim=-1)  # [N, sum w_i]
    SM = S.transpose(-1, -2) @ M  # [m, sum w_i]
    per_column = _woodbury_columns(S.transpose(-1, -2) @ S, SM, M.pow(2).sum(-2), gamma)
    return torch.stack([c.sum() for c in per_column.split([m.shape[-1] for m in Ms])]).clamp_min(
        0.0
    )


def kernel_norms_sq_from_grams(
    StS: torch.Tensor,
    StMs: Sequence[torch.Tensor],
    M_sq: Sequence[torch.Tensor | float],
    gamma: float | torch.Tensor,
) -> torch.Tensor:
    """`kernel_norms_sq` for `gamma > 0` from second moments only: `S^T S` `[m, m]`, each
    `S^T M_i` `[m, w_i]` and `||M_i||_F^2` (the Woodbury form needs nothing else), `[len]`.

    The streaming form (`N` rows accumulated batch by batch into `[m, m]` and `[m, w]`
    sums): the same formula as `kernel_norms_sq`, never an `N x N` kernel.

    Args:
        StS: `[m, m]`; StMs: `[m, w_i]`; M_sq: `||M_i||_F^2`; gamma: absolute ridge `> 0`.
    """
    if not float(gamma) > 0:
        raise ValueError(f"the moment form needs gamma > 0, got {float(gamma)}")
    out = []
    for SM, m2 in zip(StMs, M_sq):
        cols = _woodbury_columns(StS, SM, torch.zeros(SM.shape[-1], dtype=SM.dtype), gamma)
        out.append(cols.sum() + torch.as_tensor(m2, dtype=SM.dtype) / gamma)
    return torch.stack(out).clamp_min(0.0)


def _woodbury_columns(
    StS: torch.Tensor, SM: torch.Tensor, M_col_sq: torch.Tensor, gamma: float | torch.Tensor
) -> torch.Tensor:
    """Per column `j` of `M`: `gamma^{-1} (||M_j||^2 - (S^T M_j)^T (S^T S + gamma I)^{-1}
    (S^T M_j))`, the Woodbury form of `||M_j||^2_{K + gamma I}`, `[w]`."""
    G = StS + gamma * torch.eye(StS.shape[-1], dtype=StS.dtype, device=StS.device)
    L, info = torch.linalg.cholesky_ex(G)
    if int(info) == 0:
        Z = torch.cholesky_solve(SM, L)  # (S^T S + gamma I)^{-1} S^T M
    else:  # not numerically positive definite (gamma below round-off of S^T S): the
        # relaxed solve, with the eigenvalues bounded below by gamma as they are exactly
        evals, evecs = torch.linalg.eigh(G)
        Z = evecs @ ((evecs.transpose(-1, -2) @ SM) / evals.clamp_min(gamma).unsqueeze(-1))
    return (M_col_sq - (SM * Z).sum(-2)) / gamma


def kernel_condition(S: torch.Tensor, gamma: float | torch.Tensor = 0.0) -> torch.Tensor:
    """Condition number `(s_1^2 + gamma) / (s_m^2 + gamma)` of `S^T S + gamma I`, a 0-d tensor.

    How many digits `kernel_norm_sq` loses: about `log10` of this (infinite for a singular
    `S` at `gamma = 0`, where the pseudo-inverse value is reported instead).

    Args:
        S: `[N, m]`
        gamma: absolute ridge, `>= 0`.
    """
    return _condition(torch.linalg.svdvals(S), S.shape[-1], gamma)


def cost_of_identity(
    A: torch.Tensor, *, gamma: float | torch.Tensor = 0.0, bias: bool = True
) -> torch.Tensor:
    """The cost of identity `||A||^2_{K + gamma I}`, `S = sigma(A)` (paper 000, §1.4).

    Args:
        A: `[N, w]`
        gamma: absolute ridge (`relative_gamma` gives the scaled one)
        bias: `S = [relu(A), 1]` (`True`) or `relu(A)`.
    """
    return kernel_norm_sq(A, features(A, bias), gamma)


def stable_rank(A: torch.Tensor, *, singular_values: torch.Tensor | None = None) -> torch.Tensor:
    """`||A||_*^2 / ||A||_F^2`, the lower bound of the bias-free cost of identity
    (paper 000, Prop 1: `||A||^2_{K-bar} >= ||A||_*^2 / ||A||_F^2`); 0 for `A = 0`.

    Args:
        A: `[N, w]`
        singular_values: `torch.linalg.svdvals(A)` when the caller has them.
    """
    s = torch.linalg.svdvals(A) if singular_values is None else singular_values
    fro2 = s.pow(2).sum()
    return s.sum().pow(2) / fro2 if fro2 > 0 else fro2
