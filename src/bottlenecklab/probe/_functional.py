"""One-question forms of the probe (spec `probe.md`, "Functional forms"), same names as
`measure` where the quantity exists there for our own models."""

from __future__ import annotations

import copy
from typing import Any

import pandas as pd
import torch
from torch import nn

from bottlenecklab import measure
from bottlenecklab.probe._capture import capture, sequential_chain
from bottlenecklab.probe._probe import BottleneckProbe, ProbeError, _linear_ntk_trace

__all__ = [
    "bottleneck_rank",
    "jacobian_rank",
    "l2_diagnostics",
    "merge_neurons",
    "ntk_trace",
    "representation_table",
]


def representation_table(model: nn.Module, X: Any, layers: Any = "auto", **kw: Any) -> pd.DataFrame:
    """`BottleneckProbe(model, X, layers=layers).analyze()`: one row per layer."""
    return BottleneckProbe(model, X, layers=layers, **kw).analyze()


def bottleneck_rank(model: nn.Module, X: Any, **kw: Any) -> int | None:
    """The measured bottleneck rank (`probe.RANK_RULE`) of `model` on `X`; `None` when the
    verdict is not a bottleneck (the summary's `min_hidden_rank` is the smallest rank)."""
    return BottleneckProbe(model, X, **kw).summary()["bottleneck_rank"]


def jacobian_rank(model: nn.Module, X: Any, **kw: Any) -> int:
    """Median over the points of `X` (the first `jacobian_points`) of the rank of the
    input-output Jacobian (`s_i > 1e-3 s_1`, spec `depth-and-rank.md`)."""
    return int(BottleneckProbe(model, X, **kw).summary()["jacobian_rank"])


def ntk_trace(model: nn.Module, X: Any) -> torch.Tensor:
    """`Tr Theta(x_i, x_i)` `[N]`, float64, at every row of `X`: `measure.ntk_trace` for an
    `FCNN`, the same formula (`measure.ntk_trace_terms`) through the `nn.Linear` layers of
    any other network.

    Raises:
        ProbeError: a parameter outside an `nn.Linear` module (the trace is not defined).
    """
    net = copy.deepcopy(model).to(dtype=torch.float64).eval()
    cap = capture(net)
    X64 = torch.as_tensor(X, dtype=torch.float64)
    if cap.ntk is not None:
        return cap.ntk(X64)
    tr = _linear_ntk_trace(net, X64)
    if isinstance(tr, str):
        raise ProbeError(tr)
    return tr


def l2_diagnostics(model: nn.Module, X: Any, Y: Any, lam: float, cost: str = "mse") -> dict:
    """The regularized loss at `(X, Y)`: `cost`, `regularization`, `loss`, `grad_norm`
    (`measure.regularized_loss`), and `certificate` (`None` until the convergence
    certificate is wired in; see `BottleneckProbe.summary`)."""
    out: dict[str, Any] = dict(measure.regularized_loss(model, X, Y, lam, cost))
    out["certificate"] = None
    return out


def merge_neurons(model: nn.Module, X: Any) -> tuple[nn.Sequential, list[int]]:
    """A smaller equivalent `nn.Sequential`: dead neurons dropped and positively
    proportional ones merged, hidden layer by hidden layer (`measure.merge_chain`, the
    implementation of `measure._sparsity.merge_neurons`; paper 004, §4), in float64.

    Args:
        model: an `nn.Sequential` of `Linear` layers with one positively homogeneous
            activation between each two; X: `[N, d_in]`.
    Returns:
        `(merged network, [n_1, ..., n_{L-1}] neurons kept per hidden layer)`.
    """
    net = copy.deepcopy(model).to(dtype=torch.float64)
    chain = sequential_chain(net)
    if chain is None:
        raise ProbeError(
            "merge_neurons needs an nn.Sequential of Linear layers with one positively "
            "homogeneous activation between each two"
        )
    refs, beta, act = chain
    X64 = torch.as_tensor(X, dtype=torch.float64)
    Ws, bs, counts = measure.merge_chain(
        [r.weight for r in refs], [r.bias for r in refs], X64, act, beta
    )
    mods: list[nn.Module] = []
    for i, (W, b) in enumerate(zip(Ws, bs)):
        lin = nn.Linear(W.shape[1], W.shape[0], dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(W)
            lin.bias.copy_(b)
        mods.append(lin)
        if i < len(Ws) - 1:
            mods.append(copy.deepcopy(act))
    return nn.Sequential(*mods), counts
