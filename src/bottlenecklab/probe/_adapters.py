"""The registry of adapters, and our own models as three adapters among them: their
representations come from their `forward_path` (the same tensors the experiments' tables
measure), named by position.

The built-in adapters are registered here, in `ADAPTERS`, and nowhere else; a user adds
one with `register_adapter` (docs: "Analyse your own network")."""

from __future__ import annotations

import torch
from torch import nn

from bottlenecklab import measure
from bottlenecklab.models import FCNN, CircularCNN, LeakyResNet
from bottlenecklab.probe._base import Adapter, Capture, Layer, WeightRef

__all__ = [
    "ADAPTERS",
    "CircularCNNAdapter",
    "FCNNAdapter",
    "LeakyResNetAdapter",
    "adapter_for",
    "register_adapter",
]


class LeakyResNetAdapter(Adapter):
    """A `LeakyResNet`: the lift `A.0`, every leaky layer `A.l` and the output."""

    def accepts(self, model: nn.Module) -> bool:
        return isinstance(model, LeakyResNet)

    def capture(self, model: nn.Module) -> Capture:
        assert isinstance(model, LeakyResNet)
        net = model
        L = net.depth
        W = net.weights.detach()  # [L, w, w+1], the bias is the last column
        layers = [Layer("A.0", "representation", "lift", True, WeightRef("pin", net.pin.detach()))]
        layers += [
            Layer(
                f"A.{l}",
                "representation",
                "leaky_layer",
                True,
                WeightRef(f"weights.{l - 1}", W[l - 1]),
            )
            for l in range(1, L + 1)
        ]
        layers.append(Layer("output", "output", "pout", True, WeightRef("pout", net.pout.detach())))

        def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            path = net.forward_path(x)
            out = path[-1] @ net.pout.T
            return out, {**{f"A.{l}": A for l, A in enumerate(path)}, "output": out}

        cap = Capture(layers, run, "adapter:LeakyResNet")
        cap.function = net.forward_twice_differentiable
        return cap


class FCNNAdapter(Adapter):
    """An `FCNN`: every hidden activation `act.l` and the output; an affine chain, with
    the closed-form NTK trace (`measure.ntk_trace`)."""

    def accepts(self, model: nn.Module) -> bool:
        return isinstance(model, FCNN)

    def capture(self, model: nn.Module) -> Capture:
        assert isinstance(model, FCNN)
        net = model
        L = net.depth
        refs = [
            WeightRef(f"weights.{l}", net.weights[l].detach(), net.biases[l].detach())
            for l in range(L)
        ]
        layers = [
            Layer(f"act.{l}", "activation", net.cfg.activation, True, refs[l - 1])
            for l in range(1, L)
        ]
        layers.append(Layer("output", "output", "linear", True, refs[-1]))

        def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            pre, post = net.forward_path(x)
            return pre[-1], {**{f"act.{l}": post[l] for l in range(1, L)}, "output": pre[-1]}

        cap = Capture(layers, run, "adapter:FCNN")
        cap.ntk = lambda X: measure.ntk_trace(net, X)
        cap.chain = (refs, net.cfg.bias_scale, net.act)
        return cap


class CircularCNNAdapter(Adapter):
    """A `CircularCNN`: every hidden activation and the output; each layer's weight is the
    circular convolution, its spectrum from the frequency domain
    (`measure.layer_frequency_singular_values`)."""

    def accepts(self, model: nn.Module) -> bool:
        return isinstance(model, CircularCNN)

    def capture(self, model: nn.Module) -> Capture:
        assert isinstance(model, CircularCNN)
        net = model
        L, n = net.depth, net.cfg.size
        spectra = measure.layer_frequency_singular_values(net)  # [n, n, r_l] each
        refs = []
        for l, K in enumerate(net.kernels):
            c_out, c_in = K.shape[:2]
            s = spectra[l].reshape(-1).sort(descending=True).values
            refs.append(
                WeightRef(
                    f"kernels.{l}",
                    K.detach().reshape(c_out, -1),
                    net.biases[l].detach(),
                    singular_values=s,
                    shape=(c_out * n * n, c_in * n * n),
                )
            )
        layers = [Layer(f"act.{l}", "activation", "relu", True, refs[l - 1]) for l in range(1, L)]
        layers.append(Layer("output", "output", "circular_conv", True, refs[-1]))

        def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            pre, post = net.forward_path(x)
            out = pre[-1].reshape(len(x), -1)
            return out, {**{f"act.{l}": post[l] for l in range(1, L)}, "output": out}

        return Capture(layers, run, "adapter:CircularCNN")


# The registry, asked in order: the built-in adapters, each registered here once; a user's
# adapter goes first (`register_adapter`).
ADAPTERS: list[Adapter] = [LeakyResNetAdapter(), FCNNAdapter(), CircularCNNAdapter()]


def register_adapter(adapter: Adapter) -> Adapter:
    """Add `adapter` to the registry, asked before every adapter registered earlier (so an
    adapter for a subclass of one of our models wins over ours); an adapter of the same
    class registered before is replaced. Returns `adapter`.

    Raises:
        TypeError: `adapter` is not an `Adapter` instance.
    """
    if not isinstance(adapter, Adapter):
        raise TypeError(f"expected an Adapter instance, got {type(adapter).__name__}")
    ADAPTERS[:] = [adapter, *(a for a in ADAPTERS if type(a) is not type(adapter))]
    return adapter


def adapter_for(model: nn.Module) -> Capture | None:
    """The capture of `model` by the first registered adapter that accepts it, `None` when
    none does."""
    for adapter in ADAPTERS:
        if adapter.accepts(model):
            return adapter.capture(model)
    return None
