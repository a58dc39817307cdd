"""NTK trace and top eigenvalue of an FCNN against the full parameter Jacobian."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.measure import ntk_lambda_max, ntk_matrix, ntk_trace
from bottlenecklab.models import FCNNConfig


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
