"""What a capture is and what an adapter is: the types that `_capture` (torch.fx, forward
hooks) and `_adapters` (our own models, and the user's) both build on. Imports nothing of
the probe."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

__all__ = ["Adapter", "Capture", "CaptureError", "Layer", "WeightRef"]


class CaptureError(Exception):
    """The model has no layer the probe can read (one line: why)."""


@dataclass(frozen=True)
class WeightRef:
    """A weight matrix feeding a layer: its name, `[n_out, n_in]` (a convolution flattened
    to `[c_out, c_in k...]`), its bias `[n_out]` or `None`, and an explicit spectrum when
    the operator is not the matrix itself (circular convolutions)."""

    name: str
    weight: torch.Tensor
    bias: torch.Tensor | None = None
    singular_values: torch.Tensor | None = None
    shape: tuple[int, int] | None = None


@dataclass
class Layer:
    """One captured layer: `name` (module path), `kind` (`activation`, `block` for a
    residual join, `pool` for a global pooling, `module` for a module named by the user,
    `output`, or `representation` for an adapter), `op` (the module or
    function), whether `op` is positively homogeneous, and the weight feeding it."""

    name: str
    kind: str
    op: str
    homogeneous: bool
    weight: WeightRef | None = None
    tokens: bool = False  # inside a transformer: a [batch, tokens, d] sequence


@dataclass
class Capture:
    """Layers of a model and the function that runs one batch through it.

    `run(x)` (`x` `[b, ...]`) returns `(output, {name: tensor [b, ...]})`; `skipped` lists
    `(name, reason)` of what is not analysed; `method` is `fx`, `hooks` or
    `adapter:<Class>`.

    A capture that reads the model through forward hooks (`install`: registers them and
    returns their handles) keeps them on the model only while it needs them: during one
    `run`, or for the whole `with` block when used as a context manager, so that many
    batches do not re-register them::

        with capture(model, "hooks") as cap:
            for x in batches:
                out, values = cap.run(x)
        # the model's hooks are as they were before the capture

    For a capture without hooks (`fx`, an adapter) the `with` block changes nothing.
    """

    layers: list[Layer]
    run: Callable[[torch.Tensor], tuple[torch.Tensor, dict[str, torch.Tensor]]]
    method: str
    skipped: list[tuple[str, str]] = field(default_factory=list)
    fx_error: str | None = None
    function: Callable[[torch.Tensor], torch.Tensor] | None = None  # for Jacobians
    ntk: Callable[[torch.Tensor], torch.Tensor] | None = None  # specialised NTK trace
    chain: tuple | None = None  # (weight refs, bias scale, activation): an affine chain
    install: Callable[[], list[RemovableHandle]] | None = field(default=None, repr=False)
    _handles: list[RemovableHandle] = field(default_factory=list, init=False, repr=False)
    _depth: int = field(default=0, init=False, repr=False)

    @property
    def attached(self) -> bool:
        """Whether this capture's hooks are on the model now."""
        return bool(self._handles)

    def __enter__(self) -> Capture:
        if self._depth == 0 and self.install is not None:
            self._handles = self.install()
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.close()

    def close(self) -> None:
        """Remove this capture's hooks from the model (a no-op when none are on it)."""
        handles, self._handles = self._handles, []
        for h in handles:
            h.remove()


class Adapter(abc.ABC):
    """How the probe reads one family of models without tracing them: which models it
    `accepts`, and their `capture` (the layers and the function returning them for a
    batch). Register an instance with `bottlenecklab.probe.register_adapter`; the probe's
    `capture(model)` asks the registered adapters, the latest registered first, before
    trying torch.fx and forward hooks."""

    @abc.abstractmethod
    def accepts(self, model: nn.Module) -> bool:
        """Whether this adapter reads `model`."""

    @abc.abstractmethod
    def capture(self, model: nn.Module) -> Capture:
        """The layers of `model` (which this adapter `accepts`) and its `run(x)`:
        `(output [b, d_out], {layer name: representation [b, ...]})`; `method` should
        read `adapter:<Class>`."""
