"""Newton-KKT on the kink manifold: the endgame of a ReLU network's training (issue 33).

At an L2-regularized ReLU optimum some pre-activation entries sit exactly at 0 (spec
`convergence.md`). Holding a kink set `K` of them at 0, the training loss is smooth on
the manifold `z_K(theta) = 0`, and the nonsmooth critical point is a KKT point of

    min F_off(theta)  s.t.  c(theta) = z_K(theta) = 0,

`F_off` the loss with the entries of `K` switched off (derivative `a`, the leaky slope,
there: on the manifold their value is 0 whatever the side). The multipliers `mu` of
`grad F_off + J^T mu = 0` are the derivative choices of the certificate: with `adj_k` the
loss's derivative with respect to entry `k`'s activation, `s_k = mu_k / ((1 - a) adj_k)`
(exact when no two kinks lie on one sample's path; `measure.certify` re-solves `s`).

One step (`kink_newton_step`) is a Byrd-Omojokun trust-region SQP iteration:
- the Jacobian `J` `[|K|, P]` of the constraints: below `DENSE_JACOBIAN_BYTES` formed
  densely by batched backward passes (given the loss of a subset of the samples,
  `rows_loss_fn`, each over the forward pass of a group of `SAMPLE_CHUNK` samples holding
  kink entries: an entry depends on its own sample only), above it never formed: `J^T u`
  is one backward pass of `z_K`, `J v` the derivative in direction `v` of `u -> J^T u`
  (double backward on the same graph), and `J J^T` `[|K|, |K|]` is formed column by
  column as `J (J^T e_k)`.
  Either way `J J^T` is inverted by a symmetric eigendecomposition (pseudo-inverse,
  eigenvalues below `|K| eps` of the largest dropped: rows without dependence on the
  parameters, e.g. a kink of the fixed input lift, drop out). Formed once per piece,
  it makes every projection on the null space of `J` exact at the cost of one `J v` and
  one `J^T u`; a Krylov solve of `J J^T` instead takes tens to `|K|` such pairs (scipy's
  `minres` to `sqrt(eps)`) for each of the step's projections, one per CG iteration, and
  an inexact projection breaks the projected CG;
- normal step `d_n = -J^+ c`, then a tangential step by projected Steihaug CG on the
  Hessian of the Lagrangian (exact Hessian-vector products: double backward of
  `F_off + mu . c`) in the null space of `J`, inside the trust region;
- the step is accepted on the `l1` merit `F + nu ||c||_1` of the true (nonsmooth)
  loss `F` (`nu` above every `|mu_k|`), with a second-order correction against the Maratos effect;
- the kink set changes in blocks: once the problem on the current kink set is solved
  (relative KKT residual at most `RELEASE_KKT`), entries whose derivative choice `s_k`
  leaves `[0, 1]` are released (and barred from re-entry for `COOLDOWN` steps); entries outside `K`
  whose sign a rejected step flipped (the kinks that blocked it) are added.

The kink set is identified at the first step from a gap in `|z| / rms(z)` of each call
(a decade above the band holding at most 2 % as many entries as below it, `find_kinks`;
else the certificate's `tau = 1e-6`). A converged smoothed continuation before this phase
(`newton` phases with `smooth = 1e2 ... 1e6`) is what opens that gap; without one the
method crawls (lab notes `docs/lab-notes/leaky-resnet.md`, "Kink-aware solver").

Limits: each row of `J` in `J J^T` (matrix-free), or of the dense `J` without a
`rows_loss_fn`, costs a backward pass over the whole batch, though a kink constraint
depends on its own sample only, so forming the piece costs `|K|` (dense) or `2 |K|`
(matrix-free) such passes, most of a step's time at paper size
(`python -m benchmarks kink-newton-step`); `J J^T` is `|K|^2` floats. Where the
constraints are degenerate (dependent rows of `J`, e.g. a unit dead on every sample) the
least-norm multipliers can imply an `s` outside `[0, 1]` although another choice inside
exists; the phase looks for one (bounded least squares) before it releases anything, but
the steps on such a set converge slowly (`fcnn/rank-vs-depth`, the widest digits nets:
see the lab notes).

Like the certificate and `SmoothReLU`, kinks are found by intercepting `torch.relu`,
`F.relu`, `Tensor.relu` and `F.leaky_relu` calls (`TorchFunctionMode`), so any model whose
kinks come from those calls is supported (through `forward_twice_differentiable` where
the model has one).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

__all__ = ["KinkNewton", "PieceMode", "find_kinks", "kink_newton_step"]

ETA = 0.1  # acceptance threshold of the merit's actual / predicted decrease
MAX_RADIUS = 1000.0
CG_ITERS = 200  # most projected CG iterations per tangential step
COOLDOWN = 5  # steps a released entry stays out of the kink set
GAP_DECADES = 1.0  # a gap: this many decades of |z|/rms above the band ...
GAP_FRACTION = 0.02  # ... holding at most this fraction of the entries below it
GAP_TOP = 1e-2  # the kink set lies below this |z|/rms
TAU = 1e-6  # the certificate's band: the kink set when no gap opens
RELEASE = 1e-6  # margin outside [0, 1] of s at which an entry is released
RELEASE_KKT = 1e-3  # ... once the relative KKT residual on the kink set is this small
JACOBIAN_CHUNK = 256  # constraint rows per batched backward pass
SAMPLE_CHUNK = 32  # samples per forward pass of `_Point._jacobian_by_samples`
# The dense `J` (`|K| x P` floats) is formed below this size, the Gram matrix `J J^T`
# matrix-free above it. 256 MiB: `_box_multipliers` holds `J` twice more (its numpy QR's
# `Q` and a copy), so `J` and its copies stay under 1 GiB, no more than the piece's own
# graphs take at paper size (float64); the matrix-free path holds `|K|^2` floats instead.
DENSE_JACOBIAN_BYTES = 256 * 2**20
# Rows of `J^T` per batched pass when `J J^T` is formed matrix-free: at most 4 MiB of them
# (one row at paper size). Each row costs a full-batch backward pass there whatever the
# batching, while a batch holds every row's intermediates: 16 rows raised the step's
# peak memory by 1.1 GiB for no speed (lab notes, leaky-resnet.md).
GRAM_CHUNK_BYTES = 4 * 2**20
_MATRIX_FREE: bool | None = None  # tests force a path (True / False); None: by the size

_RELUS = {torch.relu, F.relu, torch.Tensor.relu}
_LEAKY = {F.leaky_relu}


class PieceMode(TorchFunctionMode):
    """Inside `with PieceMode(masks):` each ReLU / leaky-ReLU call `i` computes its
    activation with the entries of `masks[i]` switched off (`a z`, `a` the slope), and
    keeps their pre-activations (with their graph) in `z_K[i]` and a zero probe added to
    their activations in `probes[i]` (its gradient is the loss's derivative with respect
    to those activations). With `masks = None` it only records each call's
    pre-activation (`z`, detached) and slope.

    Args:
        masks: one bool tensor per call, shaped like its pre-activation; or None.
        probe: add the probes (they need `requires_grad`, so only where differentiated).
        exact: keep the true activations (only record `z_K`).
        s: derivative choices on the kink entries (flat, call order): derivative
            `a + (1 - a) s` there, value unchanged.
    """

    def __init__(
        self,
        masks: list[torch.Tensor] | None = None,
        probe: bool = False,
        exact: bool = False,
        s: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        self.masks, self.probe, self.exact = masks, probe, exact
        self.s = None if s is None else torch.split(s, [int(m.sum()) for m in masks])
        self.z: list[torch.Tensor] = []
        self.slopes: list[float] = []
        self.z_K: list[torch.Tensor] = []
        self.probes: list[torch.Tensor] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _RELUS:
            slope = 0.0
        elif func in _LEAKY:
            slope = float(args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01))
        else:
            return func(*args, **kwargs)
        z = args[0]
        i = len(self.z)
        self.z.append(z.detach().clone())
        self.slopes.append(slope)
        value = torch.where(z > 0, z, slope * z)
        if self.masks is None:
            return value
        mask = self.masks[i]
        self.z_K.append(z[mask])
        if self.exact:
            return value
        value = torch.where(mask, slope * z, value)
        if self.s is not None:  # derivative a + (1 - a) s on the kink entries, value a z
            free = torch.zeros_like(z).masked_scatter(mask, self.s[i].to(z))
            value = value + (1.0 - slope) * free * (z - z.detach())
        if self.probe:
            e = z.new_zeros(int(mask.sum()), requires_grad=True)
            self.probes.append(e)
            value = value + torch.zeros_like(z).masked_scatter(mask, e)
        return value


def find_kinks(zs: list[torch.Tensor]) -> tuple[list[torch.Tensor], float]:
    """The kink set of pre-activations `zs` (one tensor per call): `(masks, band)`.

    `band`: a `|z| / rms(z)` threshold (over all calls together) below `GAP_TOP` whose
    next `GAP_DECADES` decades hold at most `GAP_FRACTION` as many entries as lie below
    it (a gap in the histogram; candidates every quarter decade, the middle of the
    longest run of them taken); `TAU` when there is none.
    """
    ratios = [z.abs() / z.pow(2).mean().sqrt().clamp_min(torch.finfo(z.dtype).tiny) for z in zs]
    if not ratios:
        return [], TAU
    flat = torch.sort(torch.cat([r.reshape(-1) for r in ratios])).values
    exps = torch.arange(-64, 4 * round(math.log10(GAP_TOP)) + 1, dtype=flat.dtype) / 4
    below = torch.searchsorted(flat, 10.0**exps, right=True)
    above = torch.searchsorted(flat, 10.0 ** (exps + GAP_DECADES), right=True)
    ok = (((above - below) <= GAP_FRACTION * below) & (below > 0)).tolist()
    band, best, run = TAU, 0, 0
    for i, good in enumerate(ok):
        run = run + 1 if good else 0
        if run > best:  # the longest run of candidates so far: its middle
            best = run
            band = 10.0 ** float(0.5 * (exps[i - run + 1] + exps[i]))
    return [r <= band for r in ratios], band


class KinkNewton:
    """The resumable state of a `kink_newton` phase (what a checkpoint keeps as
    `optimizer`): trust radius, merit penalty `nu`, kink set (one bool mask per
    nonlinearity call, or None before the first step), the step count and, per entry,
    the step until which a released entry stays out of the kink set; `band` the kink band
    found at identification. `stationarity`: the relative KKT residual
    `||grad F_off + J^T mu|| / ||grad(lam R)||` at the last step (logged, not resumed)."""

    def __init__(self, radius: float) -> None:
        self.radius = float(radius)
        self.nu = 0.0
        self.masks: list[torch.Tensor] | None = None
        self.barred: list[torch.Tensor] | None = None
        self.steps = 0
        self.band = TAU
        self.stationarity = math.nan
        self.released = 0
        self.added = 0

    def state_dict(self) -> dict[str, Any]:
        return {
            "radius": self.radius,
            "nu": self.nu,
            "masks": self.masks,
            "barred": self.barred,
            "steps": self.steps,
            "band": self.band,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.radius, self.nu = float(state["radius"]), float(state["nu"])
        self.masks, self.barred = state["masks"], state["barred"]
        self.steps, self.band = int(state["steps"]), float(state["band"])


def _flat(tensors) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def _assign(params, flat: torch.Tensor) -> None:
    with torch.no_grad():
        for p, v in zip(params, torch.split(flat, [p.numel() for p in params])):
            p.copy_(v.view_as(p))


class _Point:
    """The piece at the current parameters: merit parts, gradients, constraint Jacobian,
    multipliers and the Hessian-vector product of the Lagrangian."""

    def __init__(
        self,
        loss_fn,
        params,
        masks,
        reg_fn,
        matrix_free: bool | None = None,
        rows_loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        self.params, self.loss_fn, self.masks = params, loss_fn, masks
        self.rows_loss_fn = rows_loss_fn
        with torch.enable_grad(), PieceMode(masks, probe=True) as mode:
            loss = loss_fn()
        self.loss = loss
        self.value = float(loss.detach())
        self.zs, self.slopes = mode.z, mode.slopes
        c_parts = mode.z_K
        self.c_graph = torch.cat(c_parts) if c_parts else loss.new_zeros(0)
        self.c = self.c_graph.detach()
        probes = mode.probes
        n_c = self.c.numel()
        grads = torch.autograd.grad(
            loss, [*params, *probes], create_graph=True, materialize_grads=True
        )
        self.grads = grads[: len(params)]
        self.g = _flat(self.grads).detach()
        self.adj = _flat(grads[len(params) :]).detach() if probes else self.g.new_zeros(0)
        self.slope_K = (
            torch.cat(
                [
                    torch.full((int(m.sum()),), s, dtype=self.g.dtype)
                    for m, s in zip(masks, self.slopes)
                ]
            ).to(self.g.device)
            if n_c
            else self.g.new_zeros(0)
        )
        live = bool(n_c) and self.c_graph.requires_grad
        if matrix_free is None:
            matrix_free = _MATRIX_FREE
        if matrix_free is None:
            matrix_free = n_c * self.g.numel() * self.g.element_size() > DENSE_JACOBIAN_BYTES
        self.matrix_free, self._live = bool(matrix_free), live
        self._u: torch.Tensor | None = None  # the dummy `u` of `u -> J^T u` (matrix-free)
        self._JTu_graph: list[torch.Tensor] = []
        if self.matrix_free:
            self.J = None
            JJ = self._gram() if live else self.g.new_zeros((n_c, n_c))
        else:
            if live:
                self.J = self._jacobian()
            else:
                self.J = self.g.new_zeros((n_c, self.g.numel()))
            JJ = self.J @ self.J.T
        # the pseudo-inverse of J J^T (rows without parameter dependence drop out)
        evals, evecs = torch.linalg.eigh(JJ) if n_c else (JJ.new_zeros(0), JJ)
        cutoff = (float(evals.max()) if n_c else 0.0) * n_c * torch.finfo(JJ.dtype).eps
        inv = torch.where(evals > cutoff, 1.0 / evals.clamp_min(1e-300), torch.zeros_like(evals))
        self._evals, self._evecs, self._inv = evals, evecs, inv
        self.mu = -self.solve(self.Jv(self.g))  # least-squares multipliers
        self.kkt = (self.g + self.JTu(self.mu)).norm()
        self.reg_force = float(reg_fn().norm()) if reg_fn is not None else 1.0
        self._lagrangian = None

    def _rows(self, start: int, k: int) -> list[torch.Tensor | None]:
        """Rows `start .. start + k` of `J`, per parameter (`[k, *shape]`, None where the
        constraints do not depend on it): one batched backward pass."""
        n = self.c.numel()
        eye = self.c.new_zeros((k, n))
        eye[torch.arange(k), start + torch.arange(k)] = 1.0
        return list(
            torch.autograd.grad(
                self.c_graph,
                self.params,
                grad_outputs=eye,
                is_grads_batched=True,
                retain_graph=True,
                allow_unused=True,
            )
        )

    def _jacobian(self) -> torch.Tensor:
        """The dense `J` `[|K|, P]`: per sample group (`_jacobian_by_samples`) where the
        piece has a `rows_loss_fn` and its calls are per sample, else by batched backward
        passes over the whole batch, `JACOBIAN_CHUNK` rows each."""
        if self.rows_loss_fn is not None:
            J = self._jacobian_by_samples()
            if J is not None:
                return J
        rows = []
        n = self.c.numel()
        for start in range(0, n, JACOBIAN_CHUNK):
            k = min(JACOBIAN_CHUNK, n - start)
            J = self._rows(start, k)
            rows.append(
                torch.cat(
                    [
                        self.c.new_zeros((k, p.numel())) if j is None else j.reshape(k, -1)
                        for j, p in zip(J, self.params)
                    ],
                    1,
                ).detach()
            )
        return torch.cat(rows)

    def _entry_samples(self) -> torch.Tensor | None:
        """The sample (leading index of its call's pre-activation) of each kink entry, flat
        in call order `[|K|]`; None unless every call has one leading size."""
        if any(m.dim() == 0 for m in self.masks) or len({m.shape[0] for m in self.masks}) != 1:
            return None
        # boolean indexing `z[mask]` takes the entries in row-major order: sample-major
        return torch.cat([m.reshape(m.shape[0], -1).nonzero()[:, 0] for m in self.masks])

    def _sample_groups(self, samples: torch.Tensor) -> list[torch.Tensor]:
        """The samples holding kink entries, ascending, in consecutive groups of at most
        `SAMPLE_CHUNK` samples and `JACOBIAN_CHUNK` entries (a sample with more entries
        alone)."""
        ids, counts = torch.unique(samples, return_counts=True)
        groups, start, held = [], 0, 0
        for i, k in enumerate(counts.tolist()):
            if i > start and (i - start >= SAMPLE_CHUNK or held + k > JACOBIAN_CHUNK):
                groups.append(ids[start:i])
                start, held = i, 0
            held += k
        if len(ids) > start:
            groups.append(ids[start:])
        return groups

    def _jacobian_by_samples(self) -> torch.Tensor | None:
        """The dense `J` from forward passes over the samples holding kink entries only,
        `SAMPLE_CHUNK` samples at a time (`rows_loss_fn`), each row by a batched backward
        pass over its own group: a kink entry depends on its own sample's forward pass
        alone, so a row costs `SAMPLE_CHUNK` samples' backward instead of the batch's.
        None (the caller falls back to the full batch) where a group's pre-activations do
        not match the full batch's rows of them (a call not per sample)."""
        samples = self._entry_samples()
        if samples is None:
            return None
        n, n_p = self.c.numel(), self.g.numel()
        J = self.c.new_zeros((n, n_p))
        tol = math.sqrt(torch.finfo(self.c.dtype).eps)
        for rows in self._sample_groups(samples):
            masks = [m[rows] for m in self.masks]
            with torch.enable_grad(), PieceMode(masks) as mode:
                self.rows_loss_fn(rows)
            if len(mode.z) != len(self.zs) or any(
                z.shape != m.shape
                or (
                    z.numel()
                    and float((z - full[rows]).abs().max()) > tol * float(full.abs().max())
                )
                for z, m, full in zip(mode.z, masks, self.zs)
            ):
                return None
            c = torch.cat(mode.z_K)
            if not c.requires_grad:  # no parameter reaches these entries: zero rows
                continue
            # the group's entries, in the order of `c`: ascending in the flat kink set
            idx = torch.isin(samples, rows).nonzero().squeeze(1)
            for start in range(0, len(idx), JACOBIAN_CHUNK):
                k = min(JACOBIAN_CHUNK, len(idx) - start)
                eye = c.new_zeros((k, len(idx)))
                eye[torch.arange(k), start + torch.arange(k)] = 1.0
                grads = torch.autograd.grad(
                    c,
                    self.params,
                    grad_outputs=eye,
                    is_grads_batched=True,
                    retain_graph=True,
                    allow_unused=True,
                )
                J[idx[start : start + k]] = torch.cat(
                    [
                        c.new_zeros((k, p.numel())) if j is None else j.reshape(k, -1)
                        for j, p in zip(grads, self.params)
                    ],
                    1,
                ).detach()
        return J

    def _transpose_graph(self) -> list[int]:
        """Build `u -> J^T u` once, differentiably in a dummy `u` (`[|K|]`, zeros): its
        derivative in direction `v` is `J v` (double backward on the existing graph: no
        second forward pass). Returns the indices of the parameters `J` depends on."""
        if self._u is None:
            self._u = self.c.new_zeros(self.c.numel(), requires_grad=True)
            self._JTu_graph = list(
                torch.autograd.grad(
                    self.c_graph,
                    self.params,
                    grad_outputs=self._u,
                    create_graph=True,
                    allow_unused=True,
                )
            )
        return [i for i, h in enumerate(self._JTu_graph) if h is not None and h.requires_grad]

    def _gram(self) -> torch.Tensor:
        """`J J^T` `[|K|, |K|]` without the dense `J`: columns `J (J^T e_k)` for a chunk of
        rows at a time (a batched backward pass for `J^T e_k`, a batched double backward
        for `J` of them), the chunk holding at most `GRAM_CHUNK_BYTES` of `J^T`;
        symmetrized."""
        n, n_p = self.c.numel(), self.g.numel()
        chunk = max(1, min(JACOBIAN_CHUNK, GRAM_CHUNK_BYTES // (n_p * self.g.element_size())))
        live = self._transpose_graph()
        G = self.c.new_zeros((n, n))
        for start in range(0, n, chunk):
            k = min(chunk, n - start)
            rows = self._rows(start, k)
            (cols,) = torch.autograd.grad(
                [self._JTu_graph[i] for i in live],
                self._u,
                grad_outputs=[rows[i].detach() for i in live],
                is_grads_batched=True,
                retain_graph=True,
            )
            G[:, start : start + k] = cols.detach().T
        return 0.5 * (G + G.T)

    def Jv(self, v: torch.Tensor) -> torch.Tensor:
        """`J v` `[|K|]` for `v` `[P]`."""
        if self.J is not None:
            return self.J @ v
        if not self._live:
            return v.new_zeros(self.c.numel())
        live = self._transpose_graph()
        vs = torch.split(v, [p.numel() for p in self.params])
        (out,) = torch.autograd.grad(
            [self._JTu_graph[i] for i in live],
            self._u,
            grad_outputs=[vs[i].view_as(self.params[i]) for i in live],
            retain_graph=True,
        )
        return out.detach()

    def JTu(self, u: torch.Tensor) -> torch.Tensor:
        """`J^T u` `[P]` for `u` `[|K|]`."""
        if self.J is not None:
            return self.J.T @ u
        if not self._live:
            return torch.zeros_like(self.g)
        grads = torch.autograd.grad(
            self.c_graph,
            self.params,
            grad_outputs=u.to(self.c),
            retain_graph=True,
            allow_unused=True,
        )
        return _flat(
            [torch.zeros_like(p) if gr is None else gr for gr, p in zip(grads, self.params)]
        ).detach()

    def JTu_anew(self, u: torch.Tensor) -> torch.Tensor:
        """`J^T u` from a new forward pass, the parameters restored to the piece's: writing
        them (a trial step) invalidates the graph `JTu` differentiates (matrix-free)."""
        if not self._live:
            return torch.zeros_like(self.g)
        with torch.enable_grad(), PieceMode(self.masks) as mode:  # the piece's own
            self.loss_fn()
        grads = torch.autograd.grad(
            torch.cat(mode.z_K), self.params, grad_outputs=u.to(self.c), allow_unused=True
        )
        return _flat(
            [torch.zeros_like(p) if gr is None else gr for gr, p in zip(grads, self.params)]
        ).detach()

    def solve(self, r: torch.Tensor) -> torch.Tensor:
        """`(J J^T)^+ r`."""
        if not r.numel():
            return r
        return self._evecs @ (self._inv * (self._evecs.T @ r))

    def project(self, v: torch.Tensor) -> torch.Tensor:
        """`v` projected on the null space of `J`."""
        if not self.c.numel():
            return v
        return v - self.JTu(self.solve(self.Jv(v)))

    def s(self) -> torch.Tensor:
        """The derivative choices the multipliers imply, one per kink entry (`nan` where
        the activation does not reach the loss): the solution of
        `mu_k = (1 - a) s_k adj_k(s)`, `adj_k(s)` the loss's derivative with respect to
        entry `k`'s activation when the kink entries downstream have derivatives `s`.
        The system is triangular along each sample's path (an entry's adjoint depends
        only on the entries after it): fixed-point iterations reach its solution, at most
        one per nonlinearity call."""
        s = self._s_from(self.adj)
        for _ in range(len(self.masks)):
            if not self.c.numel() or not bool(torch.isfinite(s).all()):
                break
            adj = self._adjoint(torch.nan_to_num(s, nan=0.0))
            s_next = self._s_from(adj)
            if torch.equal(s_next, s):
                break
            s = s_next
        return s

    def _s_from(self, adj: torch.Tensor) -> torch.Tensor:
        denom = (1.0 - self.slope_K) * adj
        return torch.where(denom != 0, self.mu / torch.where(denom != 0, denom, 1.0), math.nan)

    def _adjoint(self, s: torch.Tensor) -> torch.Tensor:
        """The derivative of the loss with respect to the kink entries' activations, with
        derivative `a + (1 - a) s` on them."""
        with torch.enable_grad(), PieceMode(self.masks, probe=True, s=s) as mode:
            loss = self.loss_fn()
        return _flat(torch.autograd.grad(loss, mode.probes, materialize_grads=True))

    def hvp(self, v: torch.Tensor) -> torch.Tensor:
        """The Hessian of the Lagrangian `F_off + mu . c` times `v`."""
        if self._lagrangian is None:
            if self.c.numel() and self.c_graph.requires_grad:
                extra = torch.autograd.grad(
                    (self.mu * self.c_graph).sum(),
                    self.params,
                    create_graph=True,
                    materialize_grads=True,
                )
                self._lagrangian = [g + e for g, e in zip(self.grads, extra)]
            else:
                self._lagrangian = list(self.grads)
        live = [i for i, g in enumerate(self._lagrangian) if g.requires_grad]
        if not live:
            return torch.zeros_like(v)
        vs = torch.split(v, [p.numel() for p in self.params])
        Hv = torch.autograd.grad(
            [self._lagrangian[i] for i in live],
            self.params,
            grad_outputs=[vs[i].view_as(self.params[i]) for i in live],
            retain_graph=True,
            materialize_grads=True,
        )
        return _flat(Hv).detach()


def _steihaug(hvp, project, r0: torch.Tensor, radius: float, start: torch.Tensor):
    """Projected Steihaug CG: `d_t` in the null space (`project`) minimizing
    `r0 . d_t + d_t H d_t / 2` with `||start + d_t|| <= radius`; returns `d_t`."""
    d = torch.zeros_like(r0)
    r = project(r0)
    p = -r
    rr = float(r @ r)
    tol = min(0.5, math.sqrt(math.sqrt(rr))) * math.sqrt(rr)

    def to_boundary(d, p):
        a = float(p @ p)
        b = 2 * float((start + d) @ p)
        c = float((start + d) @ (start + d)) - radius**2
        t = (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
        return d + t * p

    if rr == 0.0:
        return d
    for _ in range(CG_ITERS):
        Hp = project(hvp(p))
        curv = float(p @ Hp)
        if curv <= 0:
            return to_boundary(d, p)
        alpha = rr / curv
        d_next = d + alpha * p
        if float((start + d_next).norm()) >= radius:
            return to_boundary(d, p)
        d = d_next
        r = r + alpha * Hp
        rr_next = float(r @ r)
        if math.sqrt(rr_next) <= tol:
            return d
        p = -r + (rr_next / rr) * p
        rr = rr_next
    return d


def _merit(loss_fn, params, masks, nu: float) -> tuple[float, torch.Tensor, list[torch.Tensor]]:
    """`(F + nu ||c||_1, c, z per call)` at the current parameters (no graph), `F` the
    true (nonsmooth) loss."""
    with torch.no_grad(), PieceMode(masks, exact=True) as mode:
        value = float(loss_fn())
    c = torch.cat(mode.z_K) if mode.z_K else torch.zeros(0, dtype=torch.float64)
    return value + nu * float(c.abs().sum()), c, mode.z


def kink_newton_step(
    loss_fn: Callable[[], torch.Tensor],
    params: list[torch.nn.Parameter],
    state: KinkNewton,
    reg_fn: Callable[[], torch.Tensor] | None = None,
    rows_loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> tuple[torch.Tensor, bool]:
    """One trust-region SQP iteration on the kink manifold (module docstring), in place;
    returns (the exact loss before it, whether the method has stopped: no decrease of the
    merit is predicted at float precision, or the radius fell below the iterate's spacing).

    Args:
        loss_fn: the loss from the current `params`, twice differentiable by autograd,
            whose kinks come from ReLU / leaky-ReLU calls.
        params: the parameters (one dtype and device; float64 for the endgame).
        state: radius, penalty and kink set (`KinkNewton`), updated.
        reg_fn: the gradient of the regularization term, flat `[P]`, for the logged
            relative KKT residual (`state.stationarity`); None: the absolute residual.
        rows_loss_fn: the loss of the training samples `rows` only (`[n]` indices,
            ascending), the same network as `loss_fn`'s: where given, the dense `J` is
            formed from forward passes over the samples holding kink entries alone
            (`_Point._jacobian_by_samples`; the full batch where a call's pre-activations
            are not per sample, leading dim the samples).
    """
    with torch.no_grad():
        exact = loss_fn()
    if state.masks is None:  # identify the kink set from the gap in |z| / rms
        with torch.no_grad(), PieceMode() as rec:
            loss_fn()
        state.masks, state.band = find_kinks(rec.z)
        state.barred = [torch.zeros(z.shape, dtype=torch.int64, device=z.device) for z in rec.z]
    point = _Point(loss_fn, params, state.masks, reg_fn, rows_loss_fn=rows_loss_fn)
    s = point.s()
    out = (s < -RELEASE) | (s > 1 + RELEASE)
    solved = float(point.kkt) <= RELEASE_KKT * (point.reg_force or 1.0)
    if solved and bool(out.any()):
        mu_box = _box_multipliers(point, s)
        if mu_box is not None:  # degenerate: other multipliers with s in [0, 1] fit
            out = torch.zeros_like(out)
            point.mu, point._lagrangian = mu_box, None
    if solved and bool(out.any()):  # release the entries whose derivative choice leaves [0, 1]
        state.released += int(out.sum())
        _release(state, out)
        point = _Point(loss_fn, params, state.masks, reg_fn, rows_loss_fn=rows_loss_fn)
    state.stationarity = float(point.kkt) / (point.reg_force or 1.0)
    x = _flat(params).detach()
    eps = torch.finfo(x.dtype).eps
    if state.radius <= eps * float(x.norm()):
        return exact, True
    state.nu = max(state.nu, 2.0 * float(point.mu.abs().max()) if point.mu.numel() else 0.0)
    c = point.c
    # normal step: the least-norm solution of J d = -c, kept well inside the region
    d_n = -point.JTu(point.solve(c)) if c.numel() else torch.zeros_like(x)
    if float(d_n.norm()) > 0.8 * state.radius:
        d_n = d_n * (0.8 * state.radius / float(d_n.norm()))
    r0 = point.g + point.hvp(d_n)
    d_t = _steihaug(point.hvp, point.project, r0, state.radius, d_n)
    d = d_n + d_t
    Hd = point.hvp(d)
    lin_c = c + point.Jv(d) if c.numel() else c
    pred = -(float(point.g @ d) + 0.5 * float(d @ Hd))
    pred += state.nu * (float(c.abs().sum()) - float(lin_c.abs().sum()))
    phi0 = float(exact) + state.nu * float(c.abs().sum())
    if not pred > eps * abs(phi0):  # no decrease at float precision
        return exact.detach(), True
    _assign(params, x + d)
    phi, c_new, z_trial = _merit(loss_fn, params, state.masks, state.nu)
    rho = (phi0 - phi) / pred
    step = d
    if not rho > ETA and c.numel():  # second-order correction: back onto the manifold
        if point.J is None:  # the piece's graph is spent once the parameters were written
            _assign(params, x)
            d_soc = d - point.JTu_anew(point.solve(c_new))
        else:
            d_soc = d - point.JTu(point.solve(c_new))
        _assign(params, x + d_soc)
        phi_soc, _, _ = _merit(loss_fn, params, state.masks, state.nu)
        rho_soc = (phi0 - phi_soc) / pred
        if rho_soc > rho:
            rho, step = rho_soc, d_soc
    hit = float(d.norm()) >= state.radius * (1 - 1e-6)
    if not rho >= 0.25:
        state.radius *= 0.25
    elif rho > 0.75 and hit:
        state.radius = min(2 * state.radius, MAX_RADIUS)
    state.steps += 1
    if not rho > ETA:  # rejected: the kinks the step crossed join the kink set
        _assign(params, x)
        _add_crossed(state, point.zs, z_trial)
        return exact.detach(), False
    _assign(params, x + step)
    return exact.detach(), False


def _box_multipliers(point: _Point, s: torch.Tensor) -> torch.Tensor | None:
    """Multipliers with every derivative choice in `[0, 1]` that solve the KKT system as
    well as release would need, or None: the minimizer of `||g + J^T mu||` over `mu_k`
    between 0 and `(1 - a) adj_k` (the adjoints at the derivative choices `s` clipped to
    `[0, 1]`) when its residual is at most `RELEASE_KKT` of the regularization force.
    With dependent constraint rows the least-norm multipliers can imply an `s` outside
    `[0, 1]` when such others exist."""
    mu, residual = _box_solution(point, s)
    if residual > RELEASE_KKT * (point.reg_force or 1.0):
        return None
    return mu


def _box_solution(point: _Point, s: torch.Tensor) -> tuple[torch.Tensor, float]:
    """`(mu, ||g + J^T mu||)`: the bounded least-squares multipliers of `_box_multipliers`
    (scipy's `bvls` on a `|K| x |K|` problem with the same minimizers). Dense `J`: from
    the QR factors of `J^T`. Matrix-free: from the eigendecomposition `J J^T = V E V^T`
    the piece already holds, `||J^T mu - t||^2 = ||E^(1/2) V^T mu - b||^2 + const` with
    `b = E^(-1/2) V^T J t` (eigenvalues below the pseudo-inverse's cutoff dropped, as in
    `solve`); its residual from one `J^T u` product."""
    import numpy as np
    import scipy.optimize

    adj = point._adjoint(torch.nan_to_num(s, nan=0.5).clamp(0.0, 1.0))
    ends = ((1.0 - point.slope_K) * adj).cpu().numpy()
    lo, hi = np.minimum(ends, 0.0), np.maximum(ends, 0.0)
    hi = np.where(hi > lo, hi, lo + 1e-300)
    target = -point.g.cpu().numpy()
    if point.J is not None:
        JT = point.J.T.cpu().numpy()
        Q, R = np.linalg.qr(JT)  # the same minimizers from the |K| x |K| problem
        sol = scipy.optimize.lsq_linear(R, Q.T @ target, bounds=(lo, hi), method="bvls")
        residual = float(np.linalg.norm(JT @ sol.x - target))
        return torch.as_tensor(sol.x, dtype=point.g.dtype, device=point.g.device), residual
    R = (point._evals.clamp_min(0.0).sqrt()[:, None] * point._evecs.T).cpu().numpy()
    b = (point._inv.sqrt() * (point._evecs.T @ point.Jv(-point.g))).cpu().numpy()
    sol = scipy.optimize.lsq_linear(R, b, bounds=(lo, hi), method="bvls")
    mu = torch.as_tensor(sol.x, dtype=point.g.dtype, device=point.g.device)
    return mu, float((point.JTu(mu) + point.g).norm())


def _release(state: KinkNewton, out: torch.Tensor) -> None:
    """Take the entries flagged in `out` (flat over the kink set, call order) out of the
    kink set, barred from re-entry for `COOLDOWN` steps."""
    start = 0
    for i, m in enumerate(state.masks):
        k = int(m.sum())
        flags = out[start : start + k]
        start += k
        if not bool(flags.any()):
            continue
        idx = m.reshape(-1).nonzero().squeeze(1)[flags.to(m.device)]
        mask = m.clone().reshape(-1)
        mask[idx] = False
        barred = state.barred[i].clone().reshape(-1)
        barred[idx] = state.steps + COOLDOWN
        state.masks[i] = mask.view_as(m)
        state.barred[i] = barred.view_as(m)


def _add_crossed(state: KinkNewton, before: list[torch.Tensor], after: list[torch.Tensor]) -> None:
    """Add to the kink set the entries outside it that a rejected step crossed first
    (the kinks that blocked it: crossing within twice the earliest crossing's fraction of
    the step, `z` taken linear along it), unless barred."""
    crossed, first = [], math.inf
    for i, (z0, z1) in enumerate(zip(before, after)):
        flip = ((z0 > 0) != (z1 > 0)) & ~state.masks[i] & (state.barred[i] <= state.steps)
        t = torch.where(flip, z0.abs() / (z0 - z1).abs().clamp_min(1e-300), math.inf)
        crossed.append(t)
        if flip.any():
            first = min(first, float(t.min()))
    if not math.isfinite(first):
        return
    for i, t in enumerate(crossed):
        new = t <= 2 * first
        if bool(new.any()):
            state.added += int(new.sum())
            state.masks[i] = state.masks[i] | new
