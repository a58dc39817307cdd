"""`as_float64`: how `measure` hands a network's tensors to `theory`'s cost of identity
(paper 000, §1.4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import theory
from bottlenecklab.measure._coi import as_float64


@pytest.mark.parametrize("gamma", [0.0, 0.5])
@pytest.mark.parametrize("bias", [True, False])
def test_numpy_and_torch_inputs_agree(rng, gamma, bias):
    A = rng.standard_normal((9, 3))
    ref = float(theory.cost_of_identity(as_float64(A), gamma=gamma, bias=bias))
    for B in (
        torch.tensor(A),
        torch.tensor(A, dtype=torch.float32),
        torch.tensor(A, requires_grad=True),
    ):
        got = float(theory.cost_of_identity(as_float64(B), gamma=gamma, bias=bias))
        assert got == pytest.approx(ref, rel=1e-5 if B.dtype == torch.float32 else 1e-12)
    listed = float(theory.cost_of_identity(as_float64(A.tolist()), gamma=gamma, bias=bias))
    assert listed == pytest.approx(ref, rel=1e-12)


def test_as_float64_is_a_detached_copy():
    A = torch.ones(2, 3, requires_grad=True)
    B = as_float64(A)
    assert B.dtype == torch.float64 and not B.requires_grad
    B[0, 0] = 5.0
    assert float(A[0, 0].detach()) == 1.0
    assert as_float64(np.zeros((2, 2), dtype=np.float32)).dtype == torch.float64
