"""Finding and capturing the layers of a user's network: a registered adapter (`_adapters`)
where one accepts the model, `torch.fx` where it traces, forward hooks on named modules
where it does not.

A capture turns one batch `x` `[b, ...]` into the model output and a dict
`{layer name: tensor [b, ...]}`; the layers are named by module path (`layer3.1.relu`;
a module called twice gets `#2`, `#3`, ...).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from bottlenecklab.probe._adapters import adapter_for
from bottlenecklab.probe._base import Capture, CaptureError, Layer, WeightRef

__all__ = [
    "ACTIVATIONS",
    "HOMOGENEOUS",
    "capture",
    "graph_mode",
    "is_transformer",
    "sequential_chain",
    "to_eval",
]

# Modules whose output is a layer (the spec: activations, Identity as a marker).
ACTIVATIONS: tuple[type[nn.Module], ...] = (
    nn.ReLU,
    nn.LeakyReLU,
    nn.PReLU,
    nn.ReLU6,
    nn.GELU,
    nn.ELU,
    nn.SELU,
    nn.SiLU,
    nn.Mish,
    nn.Tanh,
    nn.Sigmoid,
    nn.Softplus,
    nn.Hardtanh,
    nn.Identity,
)
# Positively homogeneous: sigma(c x) = c sigma(x) for c > 0 (balancedness, merging, COI).
HOMOGENEOUS: tuple[type[nn.Module], ...] = (nn.ReLU, nn.LeakyReLU, nn.PReLU, nn.Identity)
_ACT_FUNCTIONS: dict[object, tuple[str, bool]] = {
    torch.relu: ("relu", True),
    nn.functional.relu: ("relu", True),
    nn.functional.leaky_relu: ("leaky_relu", True),
    nn.functional.gelu: ("gelu", False),
    torch.tanh: ("tanh", False),
    torch.sigmoid: ("sigmoid", False),
    nn.functional.silu: ("silu", False),
    torch.ops.aten.relu.default: ("relu", True),
    torch.ops.aten.relu_.default: ("relu", True),
    torch.ops.aten.leaky_relu.default: ("leaky_relu", True),
    torch.ops.aten.gelu.default: ("gelu", False),
    torch.ops.aten.tanh.default: ("tanh", False),
    torch.ops.aten.sigmoid.default: ("sigmoid", False),
    torch.ops.aten.silu.default: ("silu", False),
}
_ACT_METHODS = {"relu": True, "relu_": True, "tanh": False, "sigmoid": False}
# residual joins, in-place ones included (`out += h` exports as `aten.add_`)
_ADDS = {
    operator.add,
    operator.iadd,
    torch.add,
    torch.ops.aten.add.Tensor,
    torch.ops.aten.add_.Tensor,
}
WEIGHT_MODULES = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)
_WEIGHT_FUNCTIONS = {
    nn.functional.linear,
    nn.functional.conv1d,
    nn.functional.conv2d,
    nn.functional.conv3d,
    torch.ops.aten.linear.default,
    torch.ops.aten.conv1d.default,
    torch.ops.aten.conv2d.default,
    torch.ops.aten.convolution.default,
}
# Global pooling: its output (a CNN's pooled features) is a layer by default.
POOLS: tuple[type[nn.Module], ...] = (
    nn.AdaptiveAvgPool1d,
    nn.AdaptiveAvgPool2d,
    nn.AdaptiveAvgPool3d,
    nn.AdaptiveMaxPool1d,
    nn.AdaptiveMaxPool2d,
    nn.AdaptiveMaxPool3d,
)
_POOL_FUNCTIONS = {
    nn.functional.adaptive_avg_pool1d,
    nn.functional.adaptive_avg_pool2d,
    nn.functional.adaptive_avg_pool3d,
    torch.ops.aten.adaptive_avg_pool1d.default,
    torch.ops.aten.adaptive_avg_pool2d.default,
    torch.ops.aten.adaptive_avg_pool3d.default,
    torch.ops.aten._adaptive_avg_pool2d.default,
}
Named = Callable[[str], bool] | None  # module paths whose outputs are captured on request
# Parameter-free or parameter-holding modules that need no weight analysis of their own.
_NO_WEIGHT_NEEDED = (nn.Dropout, nn.Flatten, nn.Unflatten, nn.Sequential, nn.ModuleList)


def _unique(name: str, seen: dict[str, int]) -> str:
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name}#{seen[name]}"


def _module_path(node: torch.fx.Node) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return node.name
    path = list(stack.values())[-1][0]
    return str(path) or node.name


def _weight_of_module(name: str, mod: nn.Module) -> WeightRef:
    W = mod.weight.detach()
    return WeightRef(name, W.reshape(W.shape[0], -1), _bias(mod))


def _bias(mod: nn.Module) -> torch.Tensor | None:
    b = getattr(mod, "bias", None)
    return b.detach() if isinstance(b, torch.Tensor) else None


def _unsupported_params(model: nn.Module) -> list[tuple[str, str]]:
    """Modules holding their own parameters that are not `Linear`/`Conv`."""
    out = []
    for name, mod in model.named_modules():
        own = list(mod.parameters(recurse=False))
        if own and not isinstance(mod, WEIGHT_MODULES + HOMOGENEOUS):
            out.append(
                (name or type(mod).__name__, f"{type(mod).__name__}: no weight analysis for it")
            )
    return out


# --- train/eval mode of an exported graph ---------------------------------------------------

# An exported program's graph holds its mode in its calls: `aten.batch_norm(..., training,
# ...)` (argument 5) and `aten.dropout(x, p, train)` (argument 2). torch 2.13's
# `ExportedProgram.module()` refuses `.eval()`; its documented way out, `torchao`'s
# `move_exported_model_to_eval`, sets these same flags to False.
_MODE_ARGS = {torch.ops.aten.batch_norm.default: 5, torch.ops.aten.dropout.default: 2}
_MODE_OPS = {
    torch.ops.aten._native_batch_norm_legit_functional.default,
    torch.ops.aten._native_batch_norm_legit.default,
    torch.ops.aten.native_batch_norm.default,
    torch.ops.aten._batch_norm_with_update.default,
    torch.ops.aten._batch_norm_with_update_functional.default,
    torch.ops.aten.native_dropout.default,
}


def graph_mode(model: nn.Module) -> str | None:
    """The mode an exported graph (`torch.export`'s `.module()`) computes in: `train` when a
    batch norm or dropout call runs in training mode, `eval` when every one runs in eval
    mode, `None` when it has none (or `model` is not a graph module)."""
    if not isinstance(model, torch.fx.GraphModule):
        return None
    modes = []
    for node in model.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target in _MODE_ARGS:
            i = _MODE_ARGS[node.target]
            flag = node.args[i] if len(node.args) > i else node.kwargs.get("training", False)
            modes.append("train" if flag else "eval")
        elif node.target in _MODE_OPS:
            modes.append("train")
    if not modes:
        return None
    return "train" if "train" in modes else "eval"


def to_eval(model: nn.Module) -> nn.Module:
    """`model` in eval mode, in place: `.eval()`, or, on an exported graph, its batch norm
    calls on running statistics and its dropout off (argument flags set to False), and its
    `train`/`eval` methods restored.

    Raises:
        CaptureError: the graph holds a training-mode call that has no eval flag (a
            decomposed batch norm): it cannot be switched.
    """
    if not isinstance(model, torch.fx.GraphModule):
        return model.eval()
    for node in model.graph.nodes:
        if node.op == "call_function" and node.target in _MODE_ARGS:
            i = _MODE_ARGS[node.target]
            if len(node.args) > i:
                node.args = (*node.args[:i], False, *node.args[i + 1 :])
        elif node.op == "call_function" and node.target in _MODE_OPS:
            raise CaptureError(
                f"the exported graph runs {node.target} in training mode and it cannot be "
                "switched to eval mode: export the model after model.eval()"
            )
    model.recompile()
    for name in ("train", "eval"):  # torch.export's module() refuses both
        vars(model).pop(name, None)
    return nn.Module.eval(model)


# --- torch.fx ------------------------------------------------------------------------------


def _reading_graph(
    gm: torch.fx.GraphModule, picked: list[torch.fx.Node], output: torch.fx.node.Argument
) -> torch.fx.GraphModule:
    """A new module running `gm`'s graph, copied node by node into a new `torch.fx.Graph`
    (`gm` is not changed), that returns `(output, (copy of each picked node, ...))`: each
    copy taken right after its node (a later in-place operation does not change it). The
    new graph has plain positional code: one tensor in (an exported program's pytree
    wrapping of its inputs and outputs is not carried over)."""
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    wanted = set(picked)
    copies = []
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        env[node] = graph.node_copy(node, env.__getitem__)
        if node in wanted:
            copies.append(graph.call_method("clone", (env[node],)))
    graph.output((torch.fx.map_arg(output, env.__getitem__), tuple(copies)))
    return torch.fx.GraphModule(gm, graph)


def _fx_capture(model: nn.Module, named: Named = None) -> Capture:
    # a GraphModule's own graph, else the trace of `model`; read, and copied to be run
    gm = model if isinstance(model, torch.fx.GraphModule) else torch.fx.symbolic_trace(model)
    graph = gm.graph
    modules = dict(gm.named_modules())
    seen: dict[str, int] = {}
    picked: list[tuple[torch.fx.Node, Layer]] = []
    weights: dict[torch.fx.Node, WeightRef] = {}
    # an exported graph inlines its modules: a module's output is the last node of its path
    last_of: dict[str, torch.fx.Node] = {}
    for node in graph.nodes:
        if node.op == "call_function" and node.meta.get("nn_module_stack"):
            last_of[_module_path(node)] = node
    module_outputs = {n for p, n in last_of.items() if named is not None and named(p)}
    for node in graph.nodes:
        layer = None
        if node.op == "call_module":
            mod = modules[node.target]
            if isinstance(mod, ACTIVATIONS):
                name = _unique(str(node.target), seen)
                layer = Layer(name, "activation", type(mod).__name__, isinstance(mod, HOMOGENEOUS))
            elif isinstance(mod, POOLS):
                layer = Layer(_unique(str(node.target), seen), "pool", type(mod).__name__, True)
            elif named is not None and named(str(node.target)):
                name = _unique(str(node.target), seen)
                layer = Layer(name, "module", type(mod).__name__, False)
            if isinstance(mod, WEIGHT_MODULES):
                weights[node] = _weight_of_module(str(node.target), mod)
        elif node.op == "call_function" and node.target in _POOL_FUNCTIONS:
            layer = Layer(_unique(_module_path(node), seen), "pool", "adaptive_avg_pool", True)
        elif node.op == "call_function" and node.target in _ACT_FUNCTIONS:
            op, hom = _ACT_FUNCTIONS[node.target]
            layer = Layer(_unique(_module_path(node), seen), "activation", op, hom)
        elif node.op == "call_method" and node.target in _ACT_METHODS:
            hom = _ACT_METHODS[node.target]
            layer = Layer(_unique(_module_path(node), seen), "activation", node.target, hom)
        elif node.op == "call_function" and node.target in _ADDS:
            tensors = [a for a in node.args[:2] if isinstance(a, torch.fx.Node)]
            if len(tensors) == 2 and all(a.op not in ("get_attr",) for a in tensors):
                layer = Layer(_unique(_module_path(node), seen), "block", "add", True)
        elif node.op == "call_function" and node.target in _WEIGHT_FUNCTIONS:
            w = node.args[1] if len(node.args) > 1 else None
            if isinstance(w, torch.fx.Node) and w.op == "get_attr":
                W = _fetch(gm, str(w.target)).detach()
                b = node.args[2] if len(node.args) > 2 else None
                B = _fetch(gm, str(b.target)).detach() if _is_attr(b) else None
                name = _module_path(node)
                weights[node] = WeightRef(name, W.reshape(W.shape[0], -1), B)
        if layer is None and node in module_outputs:
            name = _unique(_module_path(node), seen)
            layer = Layer(name, "module", str(getattr(node.target, "__name__", node.target)), False)
        if layer is not None:
            picked.append((node, layer))
    for node, layer in picked:
        layer.weight = _nearest_weight(node, weights)
    out_node = next(n for n in graph.nodes if n.op == "output")
    original = out_node.args[0]
    if isinstance(original, tuple | list) and original and isinstance(original[0], torch.fx.Node):
        # an exported program's flat outputs (or a traced tuple): the first is the output
        original = original[0]
    if isinstance(original, torch.fx.Node):
        out_layer = Layer("output", "output", "output", True, _nearest_weight(out_node, weights))
    reading = _reading_graph(gm, [node for node, _ in picked], original)
    names = [layer.name for _, layer in picked]

    def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        out, values = reading(x)
        found = dict(zip(names, values))
        if isinstance(out, torch.Tensor):
            found["output"] = out
        return out, found

    layers = [layer for _, layer in picked]
    if isinstance(original, torch.fx.Node):
        layers.append(out_layer)
    # modules whose weights the graph reads directly (an exported program's Linear calls
    # become aten.linear on their parameters): analysed, not skipped
    read = {ref.name for ref in weights.values()}
    skipped = [(n, r) for n, r in _unsupported_params(model) if n not in read]
    cap = Capture(layers, run, "fx", skipped)
    cap.chain = sequential_chain(model)
    return cap


def sequential_chain(model: nn.Module) -> tuple | None:
    """`(weight refs, 1.0, activation)` when `model` is an `nn.Sequential` of `Linear`
    layers with one positively homogeneous activation type between each two (an affine
    chain: balancedness and merging are defined), else `None`."""
    if not isinstance(model, nn.Sequential):
        return None
    mods = [m for m in model if not isinstance(m, nn.Dropout | nn.Identity)]
    if mods and isinstance(mods[0], nn.Flatten):
        mods = mods[1:]
    if len(mods) < 3 or len(mods) % 2 == 0:
        return None
    linears, acts = mods[0::2], mods[1::2]
    if not all(type(m) is nn.Linear for m in linears):
        return None
    if not all(isinstance(a, HOMOGENEOUS) and _same_act(a, acts[0]) for a in acts):
        return None
    refs = []
    for i, m in enumerate(linears):
        b = m.bias.detach() if m.bias is not None else torch.zeros(m.out_features)
        refs.append(WeightRef(_child_name(model, m) or str(i), m.weight.detach(), b))
    return refs, 1.0, acts[0]


def _same_act(a: nn.Module, b: nn.Module) -> bool:
    """One activation function for the whole chain (a PReLU's slope is a parameter)."""
    if type(a) is not type(b) or isinstance(a, nn.PReLU):
        return False
    return getattr(a, "negative_slope", None) == getattr(b, "negative_slope", None)


def _child_name(model: nn.Module, m: nn.Module) -> str | None:
    return next((n for n, c in model.named_children() if c is m), None)


def _is_attr(n: object) -> bool:
    return isinstance(n, torch.fx.Node) and n.op == "get_attr"


def _fetch(gm: nn.Module, target: str) -> torch.Tensor:
    obj: object = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    assert isinstance(obj, torch.Tensor)
    return obj


def _nearest_weight(node: torch.fx.Node, weights: dict[torch.fx.Node, WeightRef]):
    """The weight node closest upstream of `node` (breadth first), `None` if none."""
    frontier, seen = [node], {node}
    while frontier:
        nxt = []
        for n in frontier:
            for a in n.all_input_nodes:
                if a in weights:
                    return weights[a]
                if a not in seen:
                    seen.add(a)
                    nxt.append(a)
        frontier = nxt
    return None


# --- forward hooks --------------------------------------------------------------------------


def _is_block(mod: nn.Module) -> bool:
    """Residual blocks by their class name (`BasicBlock`, `Bottleneck`, `ResBlock`...):
    without a graph, the skip connection itself is invisible."""
    name = type(mod).__name__.lower()
    return any(k in name for k in ("block", "bottleneck", "residual"))


TRANSFORMER_BLOCKS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)


def is_transformer(model: nn.Module) -> bool:
    """`model` holds attention (`nn.MultiheadAttention`): its layers are token sequences."""
    return any(isinstance(m, nn.MultiheadAttention) for m in model.modules())


def _inside_attention_block(model: nn.Module, name: str) -> bool:
    """The module `name` is, or lies inside, a module holding attention."""
    mods = dict(model.named_modules())
    parts = name.split(".")
    return any(is_transformer(mods[".".join(parts[:i])]) for i in range(1, len(parts) + 1))


def _hook_capture(model: nn.Module, fx_error: str, named: Named = None) -> Capture:
    transformer = is_transformer(model)
    acts = [(n, m) for n, m in model.named_modules() if n and isinstance(m, ACTIVATIONS)]
    pools = [(n, m) for n, m in model.named_modules() if n and isinstance(m, POOLS)]
    # a transformer's blocks: the modules holding an attention module as a child
    blocks = [
        (n, m)
        for n, m in model.named_modules()
        if n
        and (
            _is_block(m)
            or isinstance(m, TRANSFORMER_BLOCKS)
            or any(isinstance(c, nn.MultiheadAttention) for c in m.children())
        )
    ]
    attns = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.MultiheadAttention)]
    taken = {n for n, _ in acts + pools + blocks + attns}
    extra = [
        (n, m)
        for n, m in model.named_modules()
        if n and n not in taken and named is not None and named(n)
    ]
    # PyTorch's encoder/decoder layers call their activation as a function: their MLP
    # hidden activations are the input of linear2 (Dropout is off in eval mode)
    mlps = [
        (f"{n}.mlp", m.linear2, m.activation)
        for n, m in model.named_modules()
        if isinstance(m, TRANSFORMER_BLOCKS) and not isinstance(m.activation, nn.Module)
    ]
    wmods = [(n, m) for n, m in model.named_modules() if isinstance(m, WEIGHT_MODULES)]
    layers: list[Layer] = []  # filled, in call order, by the first batch
    index: set[str] = set()
    store: dict[str, torch.Tensor] = {}
    state = {"last_weight": None, "seen": {}}

    def on_weight(name: str):
        def hook(mod, inp, out):
            state["last_weight"] = _weight_of_module(name, mod)

        return hook

    def add(key: str, kind: str, op: str, hom: bool, tokens: bool, weight=None) -> None:
        if key not in index:
            index.add(key)
            layers.append(Layer(key, kind, op, hom, weight or state["last_weight"], tokens))

    def on_layer(name: str, kind: str, mod: nn.Module):
        in_attention = transformer and _inside_attention_block(model, name)

        def hook(_mod, inp, out):
            key = _unique(name, state["seen"])
            if isinstance(mod, nn.MultiheadAttention):
                out = out[0]  # (output, attention weights)
            tokens = in_attention and isinstance(out, torch.Tensor) and out.dim() == 3
            hom = (isinstance(mod, HOMOGENEOUS) or kind in ("block", "pool")) and not in_attention
            # attention calls its output projection as a function: name it here
            weight = (
                _weight_of_module(f"{name}.out_proj", mod.out_proj)
                if isinstance(mod, nn.MultiheadAttention)
                else None
            )
            add(key, kind, type(mod).__name__, hom, tokens, weight)
            if isinstance(out, torch.Tensor):
                store[key] = out.detach().clone()

        return hook

    def on_mlp(name: str, act: Callable):
        op = getattr(act, "__name__", type(act).__name__)

        def hook(_mod, inp):
            key = _unique(name, state["seen"])
            add(key, "activation", op, op == "relu", inp[0].dim() == 3)
            store[key] = inp[0].detach().clone()

        return hook

    def install() -> list[RemovableHandle]:
        handles = [m.register_forward_hook(on_weight(n)) for n, m in wmods]
        handles += [m.register_forward_hook(on_layer(n, "activation", m)) for n, m in acts]
        handles += [m.register_forward_hook(on_layer(n, "block", m)) for n, m in blocks]
        handles += [m.register_forward_hook(on_layer(n, "attention", m)) for n, m in attns]
        handles += [m.register_forward_hook(on_layer(n, "pool", m)) for n, m in pools]
        handles += [m.register_forward_hook(on_layer(n, "module", m)) for n, m in extra]
        handles += [lin.register_forward_pre_hook(on_mlp(n, act)) for n, lin, act in mlps]
        return handles

    def run(x: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        store.clear()
        state["seen"] = {}
        state["last_weight"] = None
        # PyTorch's fused transformer fast path skips the submodules (and their hooks)
        fast = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            with cap:  # the hooks are on the model for this call (or the caller's `with`)
                out = model(x)
        finally:
            torch.backends.mha.set_fastpath_enabled(fast)
        if "output" not in index and isinstance(out, torch.Tensor):
            index.add("output")
            layers.append(Layer("output", "output", "output", True, state["last_weight"]))
        if isinstance(out, torch.Tensor):
            store["output"] = out.detach()
        return out, dict(store)

    # an attention module's output is a layer; its own projection weights are not analysed
    attn_names = {n for n, _ in attns}
    skipped = [
        (f"{n}.in_proj_weight", r) if n in attn_names else (n, r)
        for n, r in _unsupported_params(model)
    ]
    cap = Capture(layers, run, "hooks", skipped, fx_error=fx_error, install=install)
    cap.chain = sequential_chain(model)
    return cap


def capture(model: nn.Module, method: str = "auto", named: Named = None) -> Capture:
    """The capture of `model`: a registered adapter's when one accepts it (`auto`, see
    `register_adapter`), else `torch.fx`, else forward hooks (`method`: `auto`, `fx` or
    `hooks`).

    `named`: a predicate on module paths; the outputs of the modules it accepts are
    captured too (kind `module`), whatever they are (a user's `layers="avgpool"`). Global
    pooling modules (`POOLS`, `adaptive_avg_pool` calls) are captured always (kind `pool`).

    A hooks capture puts its hooks on `model` only while it runs a batch, or for the whole
    block of `with capture(model, "hooks") as cap:`; the model is left as it was.

    Raises:
        CaptureError: `fx` asked and the model does not trace.
    """
    if method == "auto":
        adapted = adapter_for(model)
        if adapted is not None:
            return adapted
    fx_error = None
    if method == "auto" and is_transformer(model):
        # torch.fx traces nn.MultiheadAttention's fused kernels as one call, or not at all
        return _hook_capture(model, "attention: read by hooks", named)
    if method in ("auto", "fx"):
        try:
            return _fx_capture(model, named)
        except Exception as e:  # any tracing failure: fall back to hooks
            fx_error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if method == "fx":
                raise CaptureError(f"torch.fx cannot trace the model ({fx_error})") from None
    return _hook_capture(model, fx_error or "hooks asked", named)
