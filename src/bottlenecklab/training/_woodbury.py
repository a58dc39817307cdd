"""The Gauss-Newton matrix of an L2-regularized least-squares loss, inverted through the
Woodbury identity: a preconditioner for Newton-Krylov steps, and a Levenberg-Marquardt
model on its own.

For `F(theta) = (1/N) ||f(theta) - Y||_F^2 + lam R(theta)`, `R` quadratic with a diagonal
Hessian `D` (weight decay), the Hessian is `D + (2/N) J^T J + sum_i r_i . nabla^2 f_i`,
`J` `[N d_out, P]` the Jacobian of the outputs. Its Gauss-Newton part
`M = diag(d) + J^T diag(w) J` (`d = D + mu`, `w = 2/N`) has the exact inverse

    M^{-1} = D^{-1} - D^{-1} J^T (diag(1/w) + J D^{-1} J^T)^{-1} J D^{-1},

one `m`-square Cholesky factorization (`m = N d_out` rows), where `P` can be much larger.
On the leaky ResNets of paper 000 the decay's curvature `lam rho / L~` is ~1e-4 and the
data's is O(1) on a subspace of dimension at most `m`, so the Hessian's eigenvalues span
2.6e5 (a pilot flagship) and unpreconditioned Krylov solves take 26-40 Hessian-vector
products per Newton step (up to 211); in the metric of `M` the residual term's outliers
remain (-15 to 365 times `M`) and the count falls 2.6-4 times. At `m = 6000` one
`M^{-1} v` with the formed `J` costs about 21 Hessian-vector products (lab notes
`docs/lab-notes/leaky-resnet.md`, "The smoothed stages' solver: a Woodbury metric").

    J = output_jacobian(model.forward_twice_differentiable, params, X)
    M = Woodbury(d, J, w)     # M.solve(v) = M^{-1} v; M.operator() for scipy's M=
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse.linalg
import torch
from torch.func import functional_call, jacrev, vmap

__all__ = ["Woodbury", "output_jacobian", "regularization_diagonal"]

# Samples per vmapped Jacobian chunk: at most this many bytes of `J` rows at once.
JACOBIAN_CHUNK_BYTES = 64 * 2**20


class _Forward(torch.nn.Module):
    """`forward(x) = fn(x)` for a bound method `fn` of `model` (so that
    `torch.func.functional_call` can call any of its forwards with swapped parameters)."""

    def __init__(self, model: torch.nn.Module, name: str) -> None:
        super().__init__()
        self.model, self.name = model, name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self.model, self.name)(x)


def output_jacobian(
    model: torch.nn.Module,
    X: torch.Tensor,
    *,
    forward: str = "forward",
    mode: Callable[[], object] | None = None,
) -> torch.Tensor:
    """The Jacobian of the outputs with respect to the trainable parameters, `[N d_out, P]`
    (row `i d_out + k`: output `k` of sample `i`; columns in `model.parameters()` order,
    flattened), by `torch.func` (`vmap` over samples of `jacrev`): each sample's outputs
    depend on its own row of `X` only (no batch statistics), so the cost is about `d_out`
    backward passes over the batch.

    Args:
        model: the network; forward: the name of the method computing `[N, d_out]`
            outputs from `[N, d_in]` inputs (e.g. `forward_twice_differentiable`).
        X: the inputs `[N, d_in]`.
        mode: a context manager factory entered around every forward (e.g.
            `lambda: SmoothReLU(beta)`), or None.
    """
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = {f"model.{n}": p.detach() for n, p in model.named_parameters() if p.requires_grad}
    wrapper = _Forward(model, forward)

    def one(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        if mode is None:
            return functional_call(wrapper, p, (x[None],))[0]
        with mode():
            return functional_call(wrapper, p, (x[None],))[0]

    jac = vmap(jacrev(one), in_dims=(None, 0))
    P = sum(p.numel() for p in params.values())
    with torch.no_grad():
        d_out = one(params, X[0]).numel()
    per_sample = d_out * P * X.element_size()
    chunk = max(1, JACOBIAN_CHUNK_BYTES // per_sample)
    rows = []
    for start in range(0, X.shape[0], chunk):
        blocks = jac(params, X[start : start + chunk])  # {name: [n, d_out, *shape]}
        n = X[start : start + chunk].shape[0]
        rows.append(
            torch.cat([blocks[f"model.{k}"].reshape(n, d_out, -1) for k in names], dim=2)
            .reshape(n * d_out, P)
            .detach()
        )
    return torch.cat(rows)


def regularization_diagonal(
    reg_fn: Callable[[], torch.Tensor], params: list[torch.nn.Parameter]
) -> torch.Tensor:
    """The Hessian of a quadratic regularizer with a diagonal Hessian (weight decay), as
    its diagonal `[P]`: one Hessian-vector product with the all-ones vector, checked
    against a second one with a random sign vector (a one-line `ValueError` when the
    Hessian is not diagonal)."""
    with torch.enable_grad():
        reg = reg_fn()
        grads = torch.autograd.grad(reg, params, create_graph=True, materialize_grads=True)

    def hvp(vs: list[torch.Tensor]) -> torch.Tensor:
        live = [i for i, g in enumerate(grads) if g.requires_grad]
        if not live:
            return torch.cat([torch.zeros_like(v).reshape(-1) for v in vs])
        Hv = torch.autograd.grad(
            [grads[i] for i in live],
            params,
            grad_outputs=[vs[i] for i in live],
            retain_graph=True,
            materialize_grads=True,
        )
        return torch.cat([h.reshape(-1) for h in Hv]).detach()

    ones = [torch.ones_like(p) for p in params]
    diag = hvp(ones)
    gen = torch.Generator().manual_seed(0)
    signs = [
        (torch.randint(0, 2, p.shape, generator=gen) * 2 - 1).to(p) for p in params
    ]  # a diagonal Hessian maps them to diag * signs
    flat = torch.cat([s.reshape(-1) for s in signs])
    off = (hvp(signs) - diag * flat).norm()
    if float(off) > 1e3 * torch.finfo(diag.dtype).eps * max(float(diag.norm()), 1e-300):
        raise ValueError("the regularizer's Hessian is not diagonal: no Woodbury preconditioner")
    return diag


class Woodbury:
    """`M = diag(d + shift) + J^T diag(w) J` and its inverse by the Woodbury identity.

    Args:
        d: the diagonal `[P]` (the regularizer's Hessian), `d + shift > 0` everywhere.
        J: `[m, P]` rows (the output Jacobian).
        w: `[m]` weights > 0 (`2/N` for the mean squared error), or a scalar.
        shift: the damping `mu` added to the diagonal.
        gram: `J J^T` `[m, m]` when already formed (used only when `d` is uniform).

    Builds and Cholesky-factors the capacitance matrix `diag(1/w) + J diag(1/(d+shift)) J^T`
    `[m, m]` (`torch.linalg.cholesky`); `solve` then costs two products with `J`. When `d`
    is uniform, `J J^T` is formed once and kept for every other damping (`damped`).
    """

    def __init__(
        self,
        d: torch.Tensor,
        J: torch.Tensor,
        w: torch.Tensor | float,
        *,
        shift: float = 0.0,
        gram: torch.Tensor | None = None,
    ) -> None:
        self.d, self.J, self.shift = d, J, float(shift)
        self.diag = d + self.shift
        if not bool((self.diag > 0).all()):
            raise ValueError("Woodbury: the diagonal d + shift must be > 0")
        m = J.shape[0]
        w = torch.as_tensor(w, dtype=J.dtype, device=J.device).expand(m)
        if not bool((w > 0).all()):
            raise ValueError("Woodbury: the weights w must be > 0")
        self.w = w
        uniform = bool((d == d[0]).all())
        self._gram = (gram if gram is not None else J @ J.T) if uniform else None
        if self._gram is not None:
            scaled = self._gram / float(self.diag[0])
        else:
            scaled = (J / self.diag) @ J.T
        capacitance = scaled + torch.diag(1.0 / w)
        self._chol = torch.linalg.cholesky(0.5 * (capacitance + capacitance.T))

    def damped(self, mu: float) -> Woodbury:
        """The same `d`, `J` and `w` with the damping `mu` (`J J^T` reused when `d` is
        uniform: one `m`-square Cholesky factorization)."""
        return Woodbury(self.d, self.J, self.w, shift=mu, gram=self._gram)

    def matvec(self, v: torch.Tensor) -> torch.Tensor:
        """`M v` `[P]`."""
        return self.diag * v + self.J.T @ (self.w * (self.J @ v))

    def solve(self, v: torch.Tensor) -> torch.Tensor:
        """`M^{-1} v` `[P]` (also `[P, k]`: one column per right-hand side)."""
        d = self.diag if v.dim() == 1 else self.diag[:, None]
        x = v / d
        u = torch.cholesky_solve((self.J @ x).reshape(self.J.shape[0], -1), self._chol)
        return x - (self.J.T @ u.reshape((-1, *v.shape[1:]))) / d

    def operator(self) -> scipy.sparse.linalg.LinearOperator:
        """`M^{-1}` as a scipy `LinearOperator` on float64 numpy vectors (`M=` of
        `scipy.sparse.linalg.minres` / `cg`)."""
        P = self.d.numel()

        def apply(v: np.ndarray) -> np.ndarray:
            t = torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64).reshape(-1))
            return self.solve(t.to(self.d)).cpu().double().numpy()

        return scipy.sparse.linalg.LinearOperator((P, P), matvec=apply, dtype=np.float64)
