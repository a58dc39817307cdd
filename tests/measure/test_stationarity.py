"""The shared columns of several experiments' measurements, declared once in `measure`:
`LOSS` and `GRAD_NORM` are what `regularized_loss` returns under their names, `N_TRAIN`
the data set's size, `TRAIN_ACCURACY` what `accuracy` reads on the training set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bottlenecklab import measure
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import Dataset

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _data(seed: int, n: int = 12) -> Dataset:
    rng = np.random.default_rng(seed)
    y = np.eye(3)[rng.integers(0, 3, size=n)]
    return Dataset(rng.normal(size=(n, 4)), y, rng.normal(size=(5, 4)), np.eye(3)[[0, 1, 2, 0, 1]])


@pytest.mark.parametrize("seed", range(2))
def test_loss_and_grad_norm_are_the_regularized_losss_columns(seed: int) -> None:
    data = _data(seed)
    net = FCNNConfig(depth=3, width=6).build(4, 3, seed=seed, dtype=F64)
    lam = 1e-2
    out = measure.regularized_loss(net, data.x_train, data.y_train, lam)
    assert (
        measure.gradient_norm(net, data.x_train, data.y_train, lam) == out[measure.GRAD_NORM.name]
    )
    X, Y = (torch.as_tensor(a) for a in (data.x_train, data.y_train))
    with torch.no_grad():  # mse (1/N)||f(X) - Y||_F^2 + lam ||theta||^2, by hand
        want = float((net(X) - Y).pow(2).sum() / X.shape[0] + lam * net.param_norm_sq())
    assert out[measure.LOSS.name] == pytest.approx(want, rel=100 * EPS)


def test_n_train_and_train_accuracy_read_the_training_set() -> None:
    data = _data(0)
    net = FCNNConfig(depth=2, width=5).build(4, 3, seed=0, dtype=F64)
    assert measure.N_TRAIN.function is measure.train_size
    assert measure.train_size(data) == float(len(data.x_train)) == 12.0
    acc = measure.TRAIN_ACCURACY.function(net, data.x_train, data.y_train)
    with torch.no_grad():
        pred = net(torch.as_tensor(data.x_train)).argmax(1).numpy()
    assert acc == float((pred == data.y_train.argmax(1)).mean())
