"""Our own models as one adapter among others: their representations come from their
`forward_path` (the same tensors the experiments' tables measure), named by position."""

from __future__ import annotations

import torch

from bottlenecklab import measure
from bottlenecklab.models import FCNN, CircularCNN, LeakyResNet
from bottlenecklab.probe._capture import Capture, Layer, WeightRef

__all__ = ["adapter_for"]


def _leaky_resnet(net: LeakyResNet) -> Capture:
    L = net.depth
    W = net.weights.detach()  # [L, w, w+1], the bias is the last column
    layers = [Layer("A.0", "representation", "lift", True, WeightRef("pin", net.pin.detach()))]
    layers += [
        Layer(
            f"A.{l}", "representation", "leaky_layer", True, WeightRef(f"weights.{l - 1}", W[l - 1])
        )
        for l in range(1, L + 1)
    ]
    layers.append(Layer("output", "output", "pout", True, WeightRef("pout", net.pout.detach())))

    def run(x: torch.Tensor):
        path = net.forward_path(x)
        out = path[-1] @ net.pout.T
        return out, {**{f"A.{l}": A for l, A in enumerate(path)}, "output": out}

    cap = Capture(layers, run, "adapter:LeakyResNet")
    cap.function = net.forward_twice_differentiable
    return cap


def _fcnn(net: FCNN) -> Capture:
    L = net.depth
    refs = [
        WeightRef(f"weights.{l}", net.weights[l].detach(), net.biases[l].detach()) for l in range(L)
    ]
    layers = [
        Layer(f"act.{l}", "activation", net.cfg.activation, True, refs[l - 1]) for l in range(1, L)
    ]
    layers.append(Layer("output", "output", "linear", True, refs[-1]))

    def run(x: torch.Tensor):
        pre, post = net.forward_path(x)
        return pre[-1], {**{f"act.{l}": post[l] for l in range(1, L)}, "output": pre[-1]}

    cap = Capture(layers, run, "adapter:FCNN")
    cap.ntk = lambda X: measure.ntk_trace(net, X)
    cap.chain = (refs, net.cfg.bias_scale, net.act)
    return cap


def _circular_cnn(net: CircularCNN) -> Capture:
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

    def run(x: torch.Tensor):
        pre, post = net.forward_path(x)
        out = pre[-1].reshape(len(x), -1)
        return out, {**{f"act.{l}": post[l] for l in range(1, L)}, "output": out}

    return Capture(layers, run, "adapter:CircularCNN")


def adapter_for(model: torch.nn.Module) -> Capture | None:
    """The capture of one of our models (whatever its subclass), `None` for any other."""
    for cls, make in ((LeakyResNet, _leaky_resnet), (FCNN, _fcnn), (CircularCNN, _circular_cnn)):
        if isinstance(model, cls):
            return make(model)
    return None
