"""NTK trace and top eigenvalue of an FCNN against the full parameter Jacobian."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab.measure import ntk_lambda_max, ntk_matrix, ntk_trace
from bottlenecklab.measure._ntk import ntk_along_gd, ntk_orbit_summary
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import COSTS


def _full_jacobian_ntk(net, X):
    params = {k: v.detach() for k, v in net.named_parameters()}

    def f(p):
        return torch.func.functional_call(net, p, (X,)).reshape(-1)  # [N d_out], sample-major

    jac = torch.func.jacrev(f)(params)
    M = torch.cat([j.reshape(j.shape[0], -1) for j in jac.values()], dim=1)  # [N d_out, P]
    return M @ M.T


@pytest.mark.parametrize(
    "activation,slope,beta",
    [("leaky_relu", 0.0, 1.0), ("leaky_relu", 0.3, 0.5), ("identity", 0.0, 0.0)],
)
def test_ntk_against_full_parameter_jacobian(activation, slope, beta):
    cfg = FCNNConfig(depth=4, width=5, activation=activation, slope=slope, bias_scale=beta)
    net = cfg.build(3, 2, seed=1, dtype=torch.float64)
    with torch.no_grad():
        for b in net.biases:
            b.normal_(0.0, 0.3)
    X = torch.randn(6, 3, dtype=torch.float64)
    theta = _full_jacobian_ntk(net, X)
    torch.testing.assert_close(ntk_matrix(net, X), theta)
    diag = torch.diagonal(theta).reshape(6, 2).sum(1)
    torch.testing.assert_close(ntk_trace(net, X), diag)
    assert ntk_lambda_max(net, X) == pytest.approx(float(torch.linalg.eigvalsh(theta)[-1]) / 6)


def test_ntk_along_gd_starts_at_the_model_and_follows_gd_on_a_copy():
    """State 0 is the model's own NTK; the next states are those after plain GD steps on
    `C + lam ||theta||^2` (here checked against one manual step); the model is untouched."""
    cfg = FCNNConfig(depth=3, width=6, bias_scale=1.0)
    net = cfg.build(3, 2, seed=2, dtype=torch.float64)
    X, Y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 2, dtype=torch.float64)
    before = [p.detach().clone() for p in net.parameters()]
    lam_max, trace = ntk_along_gd(net, X, Y, 1e-3, 0.05, 1, COSTS["mse"])
    assert lam_max[0] == pytest.approx(ntk_lambda_max(net, X), rel=1e-10)
    assert trace[0] == pytest.approx(float(ntk_trace(net, X).sum()) / 8, rel=1e-10)
    for p, b in zip(net.parameters(), before):
        assert torch.equal(p, b)
    loss = COSTS["mse"](net(X), Y) + net.regularization(1e-3)
    grads = torch.autograd.grad(loss, list(net.parameters()))
    with torch.no_grad():
        for p, g in zip(net.parameters(), grads):
            p -= 0.05 * g
    assert lam_max[1] == pytest.approx(ntk_lambda_max(net, X), rel=1e-8)


def test_ntk_orbit_summary_means_over_the_orbit() -> None:
    lam = np.array([10.0, 12.0, 8.0])  # lambda_max / N along 2 further GD steps
    trace = np.array([30.0, 36.0, 33.0])  # Tr Theta / N
    s = ntk_orbit_summary(lam, trace, eta=0.1, depth=3)
    assert s["ntk_scale"] == pytest.approx(11.0)
    assert s["ntk_lambda_eta"] == pytest.approx(1.0)
    assert s["ntk_lambda_eta_amplitude"] == pytest.approx(0.2)
    assert s["ntk_lambda_eta_final"] == pytest.approx(1.0)
