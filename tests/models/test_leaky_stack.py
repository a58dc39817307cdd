"""The fused layer stack equals the plain autograd loop (values and gradients, float64)."""

import pytest
import torch
from torch.func import functional_call, stack_module_state, vmap

from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.models._leaky_stack import leaky_resnet_stack

N, W, L = 7, 5, 6


def _inputs(seed: int, leak: float, E: int | None = None):
    g = torch.Generator().manual_seed(seed)
    lead = () if E is None else (E,)
    A0 = torch.randn(*lead, N, W, generator=g, dtype=torch.float64)
    weights = torch.randn(*lead, L, W, W + 1, generator=g, dtype=torch.float64)
    rho = torch.rand(*lead, L, generator=g, dtype=torch.float64) + 0.1
    rho = rho / rho.sum(-1, keepdim=True)  # irregular steps
    leak_t = torch.full(lead, leak, dtype=torch.float64)
    return A0, weights, rho, leak_t


def _plain(A0, weights, rho, leak):
    """Paper 000, Eq. 1 written out, one layer at a time (`[N, w]`)."""
    A = A0
    for r, Wl in zip(rho, weights):
        A = (1 - r * leak) * A + r * (torch.relu(A) @ Wl[:, :W].T + Wl[:, W])
    return A


def _grads(fn, A0, weights):
    A0, weights = A0.clone().requires_grad_(), weights.clone().requires_grad_()
    out = fn(A0, weights)
    # a loss that is separable over members, with a non-trivial gradient per entry
    return (out,) + torch.autograd.grad(out.sin().sum(), (A0, weights))


@pytest.mark.parametrize("leak", [0.0, 1.5, 4.0])
def test_stack_equals_plain_loop_values_and_gradients(leak):
    A0, weights, rho, leak_t = _inputs(0, leak)
    fused = _grads(lambda a, w: leaky_resnet_stack(a, w, rho, leak_t), A0, weights)
    plain = _grads(lambda a, w: _plain(a, w, rho, leak), A0, weights)
    for f, p in zip(fused, plain):
        torch.testing.assert_close(f, p, rtol=1e-12, atol=1e-12)


def test_stack_passes_gradcheck():
    A0, weights, rho, leak_t = _inputs(1, 2.0)
    A0.requires_grad_()
    weights.requires_grad_()
    assert torch.autograd.gradcheck(
        lambda a, w: leaky_resnet_stack(a, w, rho, leak_t), (A0, weights)
    )


def test_stacked_members_equal_one_call_each():
    A0, weights, rho, leak_t = _inputs(2, 0.0, E=3)
    leak_t = torch.tensor([0.5, 1.0, 3.0], dtype=torch.float64)
    batch = _grads(lambda a, w: leaky_resnet_stack(a, w, rho, leak_t), A0, weights)
    for e in range(3):
        one = _grads(
            lambda a, w, e=e: leaky_resnet_stack(a, w, rho[e], leak_t[e]), A0[e], weights[e]
        )
        for b, o in zip(batch, one):
            torch.testing.assert_close(b[e], o, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shared_steps", [True, False])
def test_stack_under_vmap_equals_one_call_each(shared_steps):
    A0, weights, rho, leak_t = _inputs(3, 2.0, E=4)
    if shared_steps:  # an unbatched argument is broadcast over the vmapped axis
        rho_in, dims = rho[0], (0, 0, None, 0)
    else:
        rho_in, dims = rho, (0, 0, 0, 0)
    fused = _grads(
        lambda a, w: vmap(leaky_resnet_stack, in_dims=dims)(a, w, rho_in, leak_t), A0, weights
    )
    for e in range(4):
        r = rho[0] if shared_steps else rho[e]
        one = _grads(lambda a, w, r=r: _plain(a, w, r, 2.0), A0[e], weights[e])
        for f, o in zip(fused, one):
            torch.testing.assert_close(f[e], o, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda s: LeakyResNetConfig(width=6, depth=5, leak=2.0, lift="learned").build(
            3, 2, seed=s, dtype=torch.float64
        ),
        lambda s: FCNNConfig(depth=3, width=6, slope=0.2).build(3, 2, seed=s, dtype=torch.float64),
    ],
    ids=["leaky_resnet", "fcnn"],
)
def test_stackable_models_take_stacked_state(make):
    """`stackable` networks give per-member outputs and penalties from stacked state."""
    nets = [make(s) for s in range(3)]
    assert all(n.stackable for n in nets)
    params, buffers = stack_module_state(nets)
    X = torch.randn(3, N, 3, dtype=torch.float64)
    lam = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    out = functional_call(nets[0], (params, buffers), (X,))
    reg = _stacked_reg(nets[0], params, buffers, lam)  # [3]
    for e, net in enumerate(nets):
        torch.testing.assert_close(out[e], net(X[e]), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(reg[e], net.regularization(lam[e]), rtol=1e-12, atol=1e-12)


def _stacked_reg(template, params, buffers, lam):
    """`template.regularization(lam)` evaluated on the stacked state."""

    class _Reg(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, lam):
            return self.net.regularization(lam)

    state = {f"net.{k}": v for k, v in {**params, **buffers}.items()}
    return functional_call(_Reg(template), state, (lam,))
