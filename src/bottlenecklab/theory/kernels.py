"""Kernel methods against depth (paper 002, opening slides): the Laplace kernel, targets
drawn from its Gaussian process, and kernel ridge regression.
"""

from bottlenecklab.theory._kernels import (
    gp_regression_error,
    gp_sample,
    kernel_ridge_regression,
    kernel_test_error,
    laplace_kernel,
)

__all__ = [
    "gp_regression_error",
    "gp_sample",
    "kernel_ridge_regression",
    "kernel_test_error",
    "laplace_kernel",
]
