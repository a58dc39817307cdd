"""The leaky ResNet's layer stack as one autograd function, with a hand-written backward.

`A_l = c_l A_{l-1} + rho_l (relu(A_{l-1}) W_l[:, :w]^T + W_l[:, w])` with `c_l = 1 - rho_l L~`
(paper 000, Eq. 1). Autograd over the plain loop records about fifteen elementwise passes
per layer; here a layer is two in the forward (`relu`, one fused `c A + rho b`) plus one
in-place GEMM, and two in the backward plus two GEMMs, which makes training steps
about 1.5x faster on a CPU (`make bench`). Only the last representation is returned;
`LeakyResNet.forward_path` (the measurements) keeps the plain loop.

Leading "member" dimensions are allowed, so one call runs a whole ensemble of networks
(`train_ensemble`): every member has its own weights, steps and leak.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["leaky_resnet_stack", "leaky_resnet_step_norms"]

_threshold_backward = torch.ops.aten.threshold_backward


def _layer_major(weights: torch.Tensor, rho: torch.Tensor, leak: torch.Tensor):
    """`(rho W^T [L, E, w, w], rho b [L, E, 1, w], c [L, E, 1, 1])` from `weights`
    `[E, L, w, w+1]`, `rho` `[E, L]`, `leak` `[E]`, indexed by layer first. `rho W^T` and
    `rho b` are strided views of one scaled copy (the GEMMs take them as they are)."""
    w = weights.shape[-2]
    r = rho[..., None, None]  # [E, L, 1, 1]
    scaled = (r * weights).transpose(0, 1)  # layer-major: [L, E, w, w+1]
    Wt = scaled[..., :w].transpose(-1, -2)  # [L, E, w_in, w_out]
    bias = scaled[..., w:].transpose(-1, -2)  # [L, E, 1, w]
    c = (1 - r * leak[:, None, None, None]).transpose(0, 1).contiguous()  # [L, E, 1, 1]
    return Wt, bias, c


def _fused_layers(A: torch.Tensor, Wt: torch.Tensor, bias: torch.Tensor, c: torch.Tensor):
    """Yield `(relu(A_{l-1}), A_l)` for `l = 1..L`; `A` `[E, N, w]` (Eq. 1, fused form)."""
    for l in range(Wt.shape[0]):
        R = torch.relu(A)  # [E, N, w]
        A = torch.addcmul(bias[l], c[l], A)  # c A + rho b, one pass
        A.baddbmm_(R, Wt[l])  # += rho relu(A) W^T, in place (GEMM with beta = 1)
        yield R, A


class _LeakyStack(torch.autograd.Function):
    """`(A0 [E, N, w], weights [E, L, w, w+1], rho [E, L], leak [E], norms) -> A_L [E, N, w]`.

    The extra outputs (`rho W^T`, `c`, the relus) are what the backward needs; they are
    returned rather than stashed on `ctx` so that torch.func transforms accept the function.
    With `norms=True` (one network, `E = 1`) it also returns `||A_l - A_{l-1}||_F` and
    `||A_{l-1}||_F` `[L]`, the adaptive layer steps' input, at two reductions per layer
    (else two empty tensors): the training step's own forward then serves the update.
    """

    @staticmethod
    def forward(
        A: torch.Tensor, weights: torch.Tensor, rho: torch.Tensor, leak: torch.Tensor, norms: bool
    ):
        Wt, bias, c = _layer_major(weights, rho, leak)
        relus, diff_l, norm_l = [], [], []
        for R, A_l in _fused_layers(A, Wt, bias, c):
            relus.append(R)
            if norms:  # the same reductions as `leaky_resnet_step_norms`
                diff_l.append(torch.dist(A_l, A))
                norm_l.append(torch.linalg.vector_norm(A))
            A = A_l
        empty = A.new_empty(0)
        diffs = torch.stack(diff_l) if norms else empty
        sizes = torch.stack(norm_l) if norms else empty
        return (A, Wt, c, diffs, sizes, *relus)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        _, Wt, c, diffs, sizes, *relus = output
        ctx.mark_non_differentiable(Wt, c, diffs, sizes, *relus)
        # No zero-filled gradients for the extra outputs (one [N, w] fill per layer).
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(Wt, c, inputs[2], *relus)

    @staticmethod
    def backward(ctx: Any, G: torch.Tensor, *_unused: Any):
        Wt, c, rho, *relus = ctx.saved_tensors
        if G is None:  # A_L does not reach the loss
            return None, None, None, None, None
        L, E, w = Wt.shape[0], Wt.shape[1], Wt.shape[-1]
        # written in place, layer by layer, in the weights' own layout [E, L, w, w+1]
        dW = torch.empty((E, L, w, w + 1), dtype=G.dtype, device=G.device)
        G = G.contiguous()
        for l in range(L - 1, -1, -1):
            R = relus[l]
            torch.bmm(G.transpose(-1, -2), R, out=dW[:, l, :, :w])  # G^T relu(A)
            torch.sum(G, dim=-2, out=dW[:, l, :, w])
            T = _threshold_backward(torch.bmm(G, Wt[l].transpose(-1, -2)), R, 0)
            G = T.addcmul_(c[l], G)  # dC/dA_{l-1} = c G + 1[A > 0] (G rho W)
        dW.mul_(rho[..., None, None])  # d(rho W)/dW
        return G, dW, None, None, None

    @staticmethod
    def vmap(info: Any, in_dims: tuple, A, weights, rho, leak, norms):
        """Under `vmap` (an ensemble's vmapped loss): fold the vmapped axis into the member
        axis and run the batched stack once, instead of one member at a time."""
        B = info.batch_size

        def front(x: torch.Tensor, dim: int | None) -> torch.Tensor:
            x = x.unsqueeze(0).expand(B, *x.shape) if dim is None else x.movedim(dim, 0)
            return x.reshape(B * x.shape[1], *x.shape[2:])

        if norms:
            raise ValueError("layer-step norms are recorded for one network, not under vmap")
        args = (front(x, d) for x, d in zip((A, weights, rho, leak), in_dims[:4]))
        A_L, Wt, c, diffs, sizes, *relus = _LeakyStack.apply(*args, False)
        A_L = A_L.reshape(B, -1, *A_L.shape[1:])
        Wt, c = (x.reshape(x.shape[0], B, -1, *x.shape[2:]) for x in (Wt, c))  # layer-major
        relus = [R.reshape(B, -1, *R.shape[1:]) for R in relus]
        return (A_L, Wt, c, diffs, sizes, *relus), (0, 1, 1, None, None) + (0,) * len(relus)


def leaky_resnet_stack(
    A0: torch.Tensor,
    weights: torch.Tensor,
    rho: torch.Tensor,
    leak: torch.Tensor,
    *,
    step_norms: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`A_L` of a leaky ResNet's residual layers (paper 000, Eq. 1), from `A_0`.

    Args:
        A0: first representation, `[N, w]` or `[E, N, w]` for `E` members.
        weights: `W_l` with the bias as last column, `[L, w, w+1]` or `[E, L, w, w+1]`.
        rho: layer steps, `[L]` or `[E, L]` (no gradient flows to them).
        leak: effective depth `L~`, `[]` or `[E]` (no gradient).
        step_norms: also return `||A_l - A_{l-1}||_F` and `||A_{l-1}||_F`, each `[L]`
            (one network only), equal to `leaky_resnet_step_norms` of the same inputs.
    Returns:
        `A_L`, shaped like `A0` (and the two norms with `step_norms`). Differentiable in
        `A0` and `weights` (first order only); works under `torch.func.vmap` (the vmapped
        axis joins the member axis).
    """
    rho, leak = rho.detach(), leak.detach()
    if A0.dim() == 2:
        out = _LeakyStack.apply(A0[None], weights[None], rho[None], leak.reshape(1), step_norms)
        return (out[0][0], out[3], out[4]) if step_norms else out[0][0]
    if step_norms:
        raise ValueError("step_norms is for one network ([N, w] inputs)")
    return _LeakyStack.apply(A0, weights, rho, leak, False)[0]


@torch.no_grad()
def leaky_resnet_step_norms(
    A0: torch.Tensor, weights: torch.Tensor, rho: torch.Tensor, leak: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """`||A_l - A_{l-1}||_F` and `||A_{l-1}||_F`, each `[L]`, of one network's layers
    (what the adaptive layer steps need; no path is stored).

    Args: as `leaky_resnet_stack` for one network: `A0` `[N, w]`, `weights` `[L, w, w+1]`,
    `rho` `[L]`, `leak` `[]`.
    """
    Wt, bias, c = _layer_major(weights[None], rho[None], leak.reshape(1))
    A = A0[None]
    diffs, norms = [], []
    for _, new in _fused_layers(A, Wt, bias, c):
        diffs.append(torch.dist(new, A))
        norms.append(torch.linalg.vector_norm(A))
        A = new
    return torch.stack(diffs), torch.stack(norms)
