"""Capturing leaves the user's model as it was: forward hooks only while a capture runs (or
for its `with` block), an fx graph copied, not rewritten; layers read as
computed; adapters found in a registry the user can add to."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from bottlenecklab.models import FCNN, FCNNConfig
from bottlenecklab.probe import (
    Adapter,
    BottleneckProbe,
    Capture,
    Layer,
    WeightRef,
    _adapters,
    capture,
    register_adapter,
)


class Block(nn.Module):
    """A residual block in torchvision's style: its ReLU works in place on the sum."""

    def __init__(self, w: int) -> None:
        super().__init__()
        self.l1, self.l2, self.relu = nn.Linear(w, w), nn.Linear(w, w), nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.l2(self.relu(self.l1(x)))
        out += x
        return self.relu(out)


def _resnet() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), Block(8), Block(8), nn.Linear(8, 2)).double()


def _x() -> torch.Tensor:
    return torch.randn(7, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))


def _hook_counts(model: nn.Module) -> list[int]:
    return [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()]


def test_hooks_capture_is_a_context_manager_that_removes_its_hooks():
    net, x = _resnet(), _x()
    before = _hook_counts(net)
    with capture(net, "hooks") as cap:
        during = _hook_counts(net)
        _, first = cap.run(x)
        _, again = cap.run(x)
    assert sum(during) > sum(before)  # the hooks are on the model inside the block
    assert _hook_counts(net) == before
    with capture(net, "hooks") as cap2:  # a second capture: the same hooks, not twice as many
        assert _hook_counts(net) == during
        _, second = cap2.run(x)
    assert _hook_counts(net) == before
    assert list(first) == list(second) == list(again) and len(first) > 3
    for name in first:
        assert torch.equal(first[name], second[name]) and torch.equal(first[name], again[name])


def test_hooks_capture_called_as_a_function_leaves_no_hook():
    net, x = _resnet(), _x()
    before = _hook_counts(net)
    caps = [capture(net, "hooks") for _ in range(2)]
    values = [cap.run(x)[1] for cap in caps]
    assert _hook_counts(net) == before and not any(cap.attached for cap in caps)
    assert list(values[0]) == list(values[1])
    for name in values[0]:
        assert torch.equal(values[0][name], values[1][name])
    # the probe on a model of its own leaves the user's model alone too
    BottleneckProbe(net, _x(), capture_method="hooks").analyze()
    assert _hook_counts(net) == before


def test_fx_reads_a_layer_as_computed_before_an_in_place_op_changes_it():
    """The residual join `out += x` is read before the block's in-place ReLU rewrites it."""
    net, x = _resnet(), _x()
    _, values = capture(net, "fx").run(x)
    h = net[0](x)
    join = net[1].l2(torch.relu(net[1].l1(h))) + h
    torch.testing.assert_close(values["1"], join, rtol=0, atol=0)
    assert bool((values["1"] < 0).any())  # not the ReLU'd value
    # hooks read the block module's output (after its ReLU), which fx reads as `1.relu#2`
    _, hooked = capture(net, "hooks").run(x)
    torch.testing.assert_close(values["1.relu#2"], torch.relu(join), rtol=0, atol=0)
    torch.testing.assert_close(hooked["1"], torch.relu(join), rtol=0, atol=0)


def test_fx_capture_leaves_a_graph_module_unchanged():
    net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    gm = torch.export.export(net, (torch.randn(5, 4),)).module()
    code, nodes = gm.code, [n.format_node() for n in gm.graph.nodes]
    x = torch.randn(5, 4)
    out, values = capture(gm, "fx").run(x)
    assert gm.code == code and [n.format_node() for n in gm.graph.nodes] == nodes
    torch.testing.assert_close(out, net(x), rtol=0, atol=0)
    torch.testing.assert_close(values["output"], net(x), rtol=0, atol=0)


class _WideFCNN(FCNN):
    """A user's subclass of one of our models."""


class _LastLayerOnly(Adapter):
    """A user's adapter: reads only the output of a `_WideFCNN`."""

    def accepts(self, model: nn.Module) -> bool:
        return isinstance(model, _WideFCNN)

    def capture(self, model: nn.Module) -> Capture:
        ref = WeightRef("last", model.weights[-1].detach(), model.biases[-1].detach())
        layers = [
            Layer("hidden", "activation", "relu", True),
            Layer("output", "output", "x", True, ref),
        ]

        def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
            pre, post = model.forward_path(x)
            return pre[-1], {"hidden": post[-1], "output": pre[-1]}

        return Capture(layers, run, "adapter:mine")


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(_adapters, "ADAPTERS", list(_adapters.ADAPTERS))
    return _adapters.ADAPTERS


def test_a_registered_adapter_is_asked_before_ours(registry):
    cfg = FCNNConfig(depth=3, width=8)
    net, plain = _WideFCNN(cfg, 3, 2), FCNN(cfg, 3, 2)
    assert capture(net).method == "adapter:FCNN"  # our adapter reads the subclass
    assert register_adapter(_LastLayerOnly()) is registry[0]
    assert capture(net).method == "adapter:mine" and capture(plain).method == "adapter:FCNN"
    X = torch.randn(20, 3, generator=torch.Generator().manual_seed(0))
    table = BottleneckProbe(net, X).analyze()
    assert table["name"].tolist() == ["input", "hidden", "output"]
    n = len(registry)
    register_adapter(_LastLayerOnly())  # registered again (a notebook cell re-run): replaced
    assert len(registry) == n


def test_an_adapter_must_say_what_it_accepts_and_how_it_captures():
    class Half(Adapter):
        def accepts(self, model: nn.Module) -> bool:
            return True

    with pytest.raises(TypeError):
        Half()  # `capture` is abstract
    with pytest.raises(TypeError):
        register_adapter(_LastLayerOnly)  # the class, not an instance


def test_the_documented_adapter_example_runs(registry):
    """The "Your own adapter" example of `docs/analyse.md`, run as written."""
    page = (Path(__file__).parents[2] / "docs" / "analyse.md").read_text()
    section = page[page.index("**Your own adapter.**") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    namespace: dict = {}
    exec(compile(code, "analyse.md", "exec"), namespace)
    assert namespace["probe"].summary()["capture"] == "adapter:MyNet"
    assert namespace["probe"].analyze()["name"].tolist() == ["input", "hidden", "output"]
