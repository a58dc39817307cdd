"""Phase kinds: a plain dict registry (torchdiffeq's `SOLVERS`) of what one phase does.

A kind builds the phase's optimizer (`make`: whatever a checkpoint keeps as `optimizer`,
through `state_dict` / `load_state_dict`) and runs it (`run`), booking every step with the
loop's `Bookkeeper` (`book.advance`), which logs, checkpoints and catches divergence. Most
kinds only define `step`: one step (or a chunk of steps) from the current parameters.
Mini-batch `sgd` (`PhaseConfig.batch_size`) keeps its batch order in the optimizer
(`MiniBatchSGD`), so the checkpoint holds it and a resumed run draws the same batches.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch

from bottlenecklab.training._config import PhaseConfig
from bottlenecklab.training._kink_newton import KinkNewton, kink_newton_step
from bottlenecklab.training._newton import newton_steps
from bottlenecklab.training._objective import Objective
from bottlenecklab.training._smoothing import SmoothReLU
from bottlenecklab.training._trust_region import TrustRegion, trust_region_step
from bottlenecklab.training._woodbury import Woodbury, output_jacobian, regularization_diagonal
from bottlenecklab.training._woodbury_newton import WoodburyTrustRegion, woodbury_trust_region_step

__all__ = ["PHASES", "STOP", "Batches", "MiniBatchSGD", "PhaseKind", "lr_at"]

STOP = -1  # `PhaseKind.step`'s `done` when the method stopped early: the phase ends there


def lr_at(phase: PhaseConfig, base: float, t: int) -> float:
    """The learning rate of step `t` of `phase` (its schedule from `base`)."""
    if phase.schedule == "cosine" and phase.steps > 0:
        return base * 0.5 * (1 + math.cos(math.pi * t / phase.steps))
    return base


class PhaseKind:
    """One kind of phase. `batchable`: it acts elementwise on the parameters, so an
    ensemble may train it on stacked members (`train_ensemble`)."""

    batchable: ClassVar[bool] = False

    def make(self, phase: PhaseConfig, params: list[torch.nn.Parameter], lr: float) -> Any:
        raise NotImplementedError

    def step(self, obj: Objective, phase: PhaseConfig, opt: Any, book: Any):
        """One step (or chunk) at `book.t`; returns (the loss before it, steps done), with
        `done = STOP` when the method cannot go on (the phase ends there:
        `Bookkeeper.stop_phase`)."""
        raise NotImplementedError

    def lr(self, phase: PhaseConfig, opt: Any, base_lr: float, book: Any) -> float:
        lr = lr_at(phase, base_lr, book.t) * book.lr_factor
        if phase.lr_power:  # `lr ||theta||^lr_power` at the current parameters
            params = [p for g in opt.param_groups for p in g["params"]]
            norm = math.sqrt(sum(float(p.detach().pow(2).sum()) for p in params))
            lr *= norm**phase.lr_power
        return max(lr, phase.min_lr)

    def run(self, obj: Objective, phase: PhaseConfig, opt: Any, base_lr: float, book) -> None:
        """The rest of the phase, from step `book.t` (or until `book.stopped`)."""
        while book.t < phase.steps and not book.stopped:
            lr = self.lr(phase, opt, base_lr, book)
            for g in getattr(opt, "param_groups", ()):
                g["lr"] = lr
            loss, done = self.step(obj, phase, opt, book)
            if done == STOP:
                book.stop_phase(loss, opt, lr)
            else:
                book.advance(done, loss, opt, lr)


class FirstOrder(PhaseKind):
    """A `torch.optim` step on the loss's gradient; the model's adaptive layer steps are
    updated every `adapt_every` steps from that step's own forward pass; `backtrack` undoes
    a step that raises the loss and halves the learning rate for the rest of the phase."""

    batchable = True

    def __init__(self, make) -> None:
        self._make = make

    def make(self, phase, params, lr):
        return self._make(phase, params, lr)

    def step(self, obj, phase, opt, book):
        model = obj.model
        adapt_now = bool(model.adapt_every) and book.t % model.adapt_every == 0
        if adapt_now:
            model.record_step_norms()
        opt.zero_grad()
        rows = opt.batches.next(obj.n) if isinstance(opt, MiniBatchSGD) else None
        loss = obj.loss(model if adapt_now else None, rows)  # the recording forward is eager
        loss.backward()
        if adapt_now:
            model.adapt_recorded()
        if not phase.backtrack:
            opt.step()
            return loss, 1
        before = [p.detach().clone() for p in obj.params]
        opt.step()
        with torch.no_grad():
            after = float(obj.loss())
        if not after <= float(loss.detach()):  # rejected (also NaN): undo, halve
            with torch.no_grad():
                for p, b in zip(obj.params, before):
                    p.copy_(b)
            book.lr_factor *= 0.5
        return loss, 1


class LBFGS(PhaseKind):
    """L-BFGS with a strong-Wolfe line search; one step = one L-BFGS iteration.

    One `step()` of torch's optimizer runs a chunk of iterations (up to the next log or
    checkpoint), so the closure is not re-evaluated at the start of every iteration.
    `max_eval` leaves every line search its full 25 trials, so a chunk ends after its
    iterations whatever their cost: the iterates then do not depend on where the chunks
    end (logging or checkpoint intervals). torch's default `1.25 * max_iter` would cut a
    chunk short, and a 1-iteration search after one trial, after which L-BFGS stalls.
    """

    def make(self, phase, params, lr):
        return torch.optim.LBFGS(
            params,
            lr=lr,
            max_iter=1,
            max_eval=1 + 25,
            history_size=phase.history,
            line_search_fn="strong_wolfe",
            tolerance_grad=0.0,
            tolerance_change=0.0,
        )

    def step(self, obj, phase, opt, book):
        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = obj.loss()
            loss.backward()
            return loss

        iters = min(phase.steps - book.t, book.until_boundary())
        group = opt.param_groups[0]
        group["max_iter"], group["max_eval"] = iters, 25 * iters + 1
        before = opt.state[group["params"][0]].get("n_iter", 0)
        loss = opt.step(closure)
        done = opt.state[group["params"][0]].get("n_iter", 0) - before
        # a zero step: L-BFGS cannot move, the phase is over
        return loss, done or STOP


class Newton(PhaseKind):
    """Trust-region Newton through scipy's `trust-krylov` (`newton_steps`, host CPU), `lr`
    the initial trust radius. Runs the rest of the phase in one call; each iteration is
    booked as it ends; when the method stops early the remaining steps are booked at once."""

    def make(self, phase, params, lr):
        return TrustRegion(lr)

    def run(self, obj, phase, opt, base_lr, book) -> None:
        if book.t >= phase.steps or book.stopped:
            return
        smooth = getattr(obj.model, "forward_twice_differentiable", None)
        remaining, radius = phase.steps - book.t, opt.radius

        def on_step(loss: float) -> None:
            book.advance(1, loss, opt, radius)

        out = newton_steps(
            lambda: obj.loss(smooth), obj.params, remaining, radius=radius, on_step=on_step
        )
        opt.radius = out.radius
        if out.steps < remaining:  # no further decrease at float precision: phase over
            with torch.no_grad():
                loss = obj.loss()
            book.stop_phase(loss, opt, radius)


class TrustRegionPhase(PhaseKind):
    """Trust-region Newton in torch (`trust_region_step`: Lanczos GLTR on exact
    Hessian-vector products), on the parameters' own device; `lr` the initial trust
    radius, one step = one trust-region iteration (accepted or not)."""

    def make(self, phase, params, lr):
        return TrustRegion(lr)

    def lr(self, phase, opt, base_lr, book) -> float:
        return opt.radius

    def step(self, obj, phase, opt, book):
        smooth = getattr(obj.model, "forward_twice_differentiable", None)
        loss, stopped = trust_region_step(lambda: obj.loss(smooth), obj.params, opt)
        # no decrease predicted at float precision: the phase is over
        return loss, STOP if stopped else 1


class KinkNewtonPhase(PhaseKind):
    """Newton-KKT on the kink manifold (`kink_newton_step`): the exact endgame after a
    smoothed continuation; `lr` the initial trust radius, one step = one trust-region
    SQP iteration (accepted or not). The kink set is identified at the phase's first
    step and kept, with the radius and penalty, in the checkpoint."""

    def make(self, phase, params, lr):
        return KinkNewton(lr)

    def lr(self, phase, opt, base_lr, book) -> float:
        return opt.radius

    def step(self, obj, phase, opt, book):
        smooth = getattr(obj.model, "forward_twice_differentiable", None)

        def reg_grad() -> torch.Tensor:
            with torch.enable_grad():
                reg = obj.model.regularization(obj.lam) if obj.lam else None
                if reg is None or not reg.requires_grad:
                    return torch.zeros(1, dtype=obj.X.dtype)
                grads = torch.autograd.grad(reg, obj.params, materialize_grads=True)
            return torch.cat([g.reshape(-1) for g in grads])

        loss, stopped = kink_newton_step(
            lambda: obj.loss(smooth),
            obj.params,
            opt,
            reg_grad,
            rows_loss_fn=lambda rows: obj.loss(smooth, rows),
        )
        return loss, STOP if stopped else 1


class WoodburyNewtonPhase(PhaseKind):
    """Trust-region Newton in the metric of the Gauss-Newton matrix
    `M = D + (2/N) J^T J` (`woodbury_trust_region_step`: GLTR preconditioned by `M^{-1}`,
    the Woodbury inverse), for the mean squared error with a weight decay on every
    parameter (`D` its diagonal Hessian); `lr` the initial trust radius in the `M` norm,
    one step = one trust-region iteration (accepted or not). The output Jacobian `J`
    (through the model's `forward_twice_differentiable`, smoothed like the phase) is formed
    again every `REFRESH` accepted steps."""

    REFRESH = 10

    def make(self, phase, params, lr):
        return WoodburyTrustRegion(lr, refresh=self.REFRESH)

    def lr(self, phase, opt, base_lr, book) -> float:
        return opt.radius

    def step(self, obj, phase, opt, book):
        from bottlenecklab.config import ConfigError
        from bottlenecklab.tasks import COSTS

        if obj.cost_fn is not COSTS["mse"]:
            raise ConfigError("woodbury_newton: the Gauss-Newton matrix is that of cost mse")
        model = obj.model
        name = "forward_twice_differentiable"
        forward = name if hasattr(model, name) else "forward"
        smooth = getattr(model, name, None)
        if opt.diagonal is None:
            d = regularization_diagonal(lambda: model.regularization(obj.lam), obj.params)
            if not bool((d > 0).all()):
                raise ConfigError(
                    "woodbury_newton needs a weight decay on every parameter (lam > 0)"
                )
            opt.diagonal = d
        beta = obj.smooth

        def preconditioner() -> Woodbury:
            mode = (lambda: SmoothReLU(beta)) if beta else None
            J = output_jacobian(model, obj.X, forward=forward, mode=mode)
            return Woodbury(opt.diagonal, J, 2.0 / obj.n)

        loss, stopped = woodbury_trust_region_step(
            lambda: obj.loss(smooth), obj.params, opt, preconditioner
        )
        return loss, STOP if stopped else 1


class Batches:
    """The mini-batch order of a phase: a seeded permutation of the `N` training samples,
    drawn again when fewer than `size` samples of it are left (a new epoch; the tail of
    the old one is skipped). Its state (generator, permutation, position) goes into the
    checkpoint, so a resumed run draws exactly the batches of an uninterrupted one."""

    def __init__(self, size: int, seed: int) -> None:
        self.size, self.seed = size, seed
        self.gen = torch.Generator().manual_seed(seed)
        self.order: torch.Tensor | None = None  # the first permutation: at the first batch
        self.pos = 0

    def next(self, n: int) -> torch.Tensor:
        """The row indices `[size]` (CPU, int64) of the next batch of `n` samples."""
        if self.order is None or self.pos + self.size > n:
            self.order, self.pos = torch.randperm(n, generator=self.gen), 0
        rows = self.order[self.pos : self.pos + self.size]
        self.pos += self.size
        return rows

    def state_dict(self) -> dict[str, Any]:
        return {"gen": self.gen.get_state(), "order": self.order, "pos": self.pos}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.gen.set_state(state["gen"])
        self.order, self.pos = state["order"], int(state["pos"])


class MiniBatchSGD(torch.optim.SGD):
    """`torch.optim.SGD` that also holds the phase's `Batches` (in its state dict)."""

    def __init__(self, params, lr: float, momentum: float, batches: Batches) -> None:
        super().__init__(params, lr=lr, momentum=momentum)
        self.batches = batches

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "batches": self.batches.state_dict()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        self.batches.load_state_dict(state.pop("batches"))
        super().load_state_dict(state)


def _adam(phase, params, lr):
    return torch.optim.Adam(params, lr=lr, fused=True)


def _sgd(phase, params, lr):
    if phase.batch_size:
        return MiniBatchSGD(params, lr, phase.momentum, Batches(phase.batch_size, phase.seed))
    return torch.optim.SGD(params, lr=lr, momentum=phase.momentum)


PHASES: dict[str, PhaseKind] = {
    "adam": FirstOrder(_adam),
    "sgd": FirstOrder(_sgd),
    "lbfgs": LBFGS(),
    "newton": Newton(),
    "trust_region": TrustRegionPhase(),
    "kink_newton": KinkNewtonPhase(),
    "woodbury_newton": WoodburyNewtonPhase(),
}
