"""`TrainConfig.compile`: the training forward through `torch.compile` (inductor), with a
clean fallback to eager when compilation is unavailable or fails.

What is compiled is the network's plain autograd forward (`forward_twice_differentiable`
where the model has one, e.g. the leaky ResNet's per-layer loop, else `forward`): inductor
fuses its elementwise passes (relu, `c A + rho b`, the threshold in the backward) into
generated C++/Triton loops around the GEMMs, which the hand-fused stack cannot do beyond
its two passes per layer. The same outputs to round-off (float64 tests).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

__all__ = ["compiled_forward"]


def compiled_forward(
    model: torch.nn.Module, X: torch.Tensor
) -> Callable[[torch.Tensor], torch.Tensor]:
    """A compiled `X [N, d_in] -> Y_hat [N, d_out]` of `model`, compiled now (forward and
    backward, on `X`) so that a failure shows here: then a one-line warning and the
    model's own eager forward."""
    plain = getattr(model, "forward_twice_differentiable", None) or model.forward
    try:
        fn = torch.compile(plain, dynamic=False)
        params = [p for p in model.parameters() if p.requires_grad]
        with torch.enable_grad():
            out = fn(X)
            torch.autograd.grad(out.sum(), params, allow_unused=True)
    except Exception as e:  # no compiler, an unsupported op, ...: train eagerly
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        warnings.warn(
            f"torch.compile unavailable ({type(e).__name__}: {msg[:160]}); training eagerly",
            stacklevel=2,
        )
        return model
    return fn
