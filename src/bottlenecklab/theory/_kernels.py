"""Laplace kernel, Gaussian-process targets and kernel ridge regression (paper 002).

The opening slides of paper 002 contrast the kernel rate `N^{-alpha/d_in}` (the curse of
dimensionality) with deep networks that adapt to a low inner dimension. Here the kernel
side: a target drawn from the Gaussian process of the same Laplace kernel (smoothness
`alpha = 1`) and its kernel ridge regression estimate.
"""

from __future__ import annotations

import torch

__all__ = [
    "gp_regression_error",
    "gp_sample",
    "kernel_ridge_regression",
    "kernel_test_error",
    "laplace_kernel",
]


def laplace_kernel(X: torch.Tensor, Z: torch.Tensor, length: float = 0.5) -> torch.Tensor:
    """`k(x, z) = exp(-||x - z|| / length)` (paper 002, opening slides).

    Args:
        X: `[N, d]`
        Z: `[M, d]`
        length: the length scale (`0.5` in the spec).
    Returns:
        `[N, M]`.
    """
    return torch.exp(-torch.cdist(X, Z) / length)


def gp_sample(
    X: torch.Tensor, gen: torch.Generator, length: float = 0.5, jitter: float = 1e-10
) -> torch.Tensor:
    """One draw of the centred Gaussian process with the Laplace kernel at the points `X`.

    `f = C z`, `C` the Cholesky factor of `k(X, X) + jitter * I` (the jitter keeps the
    factorization of a kernel matrix with nearly equal points stable; it adds a white
    noise of variance `jitter`, far below the errors measured), `z ~ N(0, I)`.

    Args:
        X: `[N, d]` (float64 recommended)
        gen: the seeded generator of `z`.
    Returns:
        `[N]`.
    """
    K = laplace_kernel(X, X, length)
    K = K + jitter * torch.eye(len(X), dtype=X.dtype)
    C = torch.linalg.cholesky(K)
    z = torch.randn(len(X), generator=gen, dtype=X.dtype)
    return C @ z


def kernel_ridge_regression(
    X: torch.Tensor,
    y: torch.Tensor,
    X_test: torch.Tensor,
    length: float = 0.5,
    ridge: float = 1e-8,
) -> torch.Tensor:
    """Kernel ridge regression with the Laplace kernel: `k(X_test, X) (K + ridge I)^{-1} y`.

    With a tiny ridge this is (nearly) the kernel interpolant, the posterior mean of the
    Gaussian process when the target is drawn from it.

    Args:
        X: `[N, d]`
        y: `[N]` or `[N, c]`
        X_test: `[M, d]`
        ridge: added to the diagonal of
            `K = k(X, X)` (not scaled by `N`).
    Returns:
        predictions `[M]` or `[M, c]`.
    """
    K = laplace_kernel(X, X, length) + ridge * torch.eye(len(X), dtype=X.dtype)
    C = torch.linalg.cholesky(K)
    coef = torch.cholesky_solve(y.reshape(len(X), -1), C)  # [N, c]
    pred = laplace_kernel(X_test, X, length) @ coef
    return pred.reshape(len(X_test), *y.shape[1:])


def kernel_test_error(
    X: torch.Tensor,
    y: torch.Tensor,
    X_test: torch.Tensor,
    y_test: torch.Tensor,
    length: float = 0.5,
    ridge: float = 1e-8,
) -> float:
    """Test cost `(1/M) ||y_test - y_hat||_F^2` of `kernel_ridge_regression` (float64).

    Args:
        X: `[N, d]`
        y: `[N, c]`
        X_test: `[M, d]`
        y_test: `[M, c]`.
    """
    args = [torch.as_tensor(a, dtype=torch.float64) for a in (X, y, X_test, y_test)]
    pred = kernel_ridge_regression(args[0], args[1], args[2], length, ridge)
    return float((pred - args[3]).pow(2).sum() / len(args[3]))


def gp_regression_error(
    dim: int,
    n_train: int,
    n_test: int,
    gen: torch.Generator,
    length: float = 0.5,
    ridge: float = 1e-8,
    jitter: float = 1e-10,
) -> float:
    """Test error of kernel ridge regression on a target drawn from the kernel's own
    Gaussian process: points `U[0, 1]^dim`, one joint draw (`gp_sample`) on the
    `n_train + n_test` points, regression on the first `n_train` (paper 002, opening
    slides: error `~ N^{-1/dim}` for the Laplace kernel).

    Args:
        dim: input dimension `d`; n_train, n_test: sample sizes
        gen: seeded generator of
            the points and the draw.
    Returns:
        the mean squared test error `(1/n_test) sum (f - f_hat)^2`.
    """
    X = torch.rand(n_train + n_test, dim, generator=gen, dtype=torch.float64)
    f = gp_sample(X, gen, length, jitter)[:, None]  # [N + M, 1]
    return kernel_test_error(X[:n_train], f[:n_train], X[n_train:], f[n_train:], length, ridge)
