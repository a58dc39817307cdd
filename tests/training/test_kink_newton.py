"""The `kink_newton` phase (Newton-KKT on the kink manifold): an analytic minimum on a
kink to 1e-10, plain Newton where there is no kink, a kink released at its first
identification, bitwise resume, and no certificate by accident on an untrained net."""

from __future__ import annotations

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.measure import certify
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import (
    PHASES,
    KinkNewton,
    PhaseConfig,
    TrainConfig,
    find_kinks,
    kink_newton_step,
    train,
)

F64 = torch.float64
EPS = torch.finfo(F64).eps


def _solve(loss, params, radius: float = 1.0, steps: int = 60) -> KinkNewton:
    state = KinkNewton(radius)
    for _ in range(steps):
        _, stopped = kink_newton_step(loss, params, state)
        if stopped:
            return state
    raise AssertionError(f"kink_newton did not stop in {steps} steps")


def test_analytic_minimum_on_a_kink_to_1e_10():
    """`F(x) = |x1| + (x2 - 1)^2 + lam/2 |x|^2` (`|x1| = 2 relu(x1) - x1`), from a point
    off the kink: the minimizer `(0, 2 / (2 + lam))` to 1e-10, with the kink (which
    blocked a step) in the kink set and its derivative choice `s = 1/2` (the multiplier
    `mu = 1` over `adj = 2`). Without the kink set the method cannot get there: the
    gradient alternates between `+-1` in `x1`."""
    lam = 0.1
    x = torch.nn.Parameter(torch.tensor([0.7, -0.3], dtype=F64))

    def loss() -> torch.Tensor:
        return 2 * torch.relu(x[:1]).sum() - x[0] + (x[1] - 1) ** 2 + lam / 2 * x.pow(2).sum()

    state = _solve(loss, [x])
    exact = torch.tensor([0.0, 2 / (2 + lam)], dtype=F64)
    assert float((x.detach() - exact).abs().max()) <= 1e-10
    assert [int(m.sum()) for m in state.masks] == [1]
    assert state.stationarity <= 1e-10
    from bottlenecklab.training._kink_newton import _Point

    s = _Point(loss, [x], state.masks, None).s()
    assert float(s[0]) == pytest.approx(0.5, abs=1e-9)


def test_no_kink_is_plain_newton():
    """A ridge problem (no ReLU): the kink set stays empty and the method is trust-region
    Newton: from inside the region it reaches the closed form to the attainable accuracy
    (steps are accepted on loss values: `|dx|` resolved to ~sqrt(eps) times the
    conditioning), as scipy's `newton` phase does."""
    g = torch.Generator().manual_seed(0)
    A = torch.randn(40, 6, generator=g, dtype=F64)
    b = torch.randn(40, generator=g, dtype=F64)
    H = A.T @ A + 0.1 * torch.eye(6, dtype=F64)
    exact = torch.linalg.solve(H, A.T @ b)
    x = torch.nn.Parameter(torch.zeros(6, dtype=F64))
    state = _solve(lambda: (A @ x - b).pow(2).sum() + 0.1 * x.pow(2).sum(), [x], radius=10.0)
    assert state.masks == []
    bound = float(torch.linalg.cond(H)) * EPS**0.5 * float(exact.norm())
    assert float((x.detach() - exact).norm()) <= bound


def test_smooth_deep_linear_net_same_loss_as_newton(tiny_data):
    """A deep linear net after Adam: the same final loss as the `newton` phase to
    round-off (the minima form a manifold, so the points may differ)."""
    final = {}
    for kind in ("newton", "kink_newton"):
        net = FCNNConfig(depth=3, width=6, activation="identity").build(
            tiny_data.d_in, tiny_data.d_out, seed=0, dtype=F64
        )
        adam = TrainConfig(lam=0.05, phases=(PhaseConfig("adam", 300, 1e-2),), dtype="float64")
        train(net, tiny_data, adam, progress=False)
        cfg = TrainConfig(lam=0.05, phases=(PhaseConfig(kind, 40, 1.0),), dtype="float64")
        res = train(net, tiny_data, cfg, progress=False)
        assert res.metrics[-1]["grad_norm"] <= 1e-7
        final[kind] = res.metrics[-1]["loss"]
    assert final["kink_newton"] == pytest.approx(final["newton"], rel=1e-12)


def test_a_kink_with_s_outside_the_box_is_released():
    """`F(y) = relu(y1) + (y1 + 1)^2 + (y2 - 2)^2` from `y1 = 0`: the kink is identified
    (`|z| = 0`), its multiplier gives `s = -2`, outside `[0, 1]`: it is released and the
    method goes to the smooth minimizer `(-1, 2)` off the kink."""
    y = torch.nn.Parameter(torch.tensor([0.0, 0.0], dtype=F64))

    def loss() -> torch.Tensor:
        return torch.relu(y[:1]).sum() + (y[0] + 1) ** 2 + (y[1] - 2) ** 2

    state = KinkNewton(10.0)
    kink_newton_step(loss, [y], state)  # solves the problem on the kink set: y2 = 2
    from bottlenecklab.training._kink_newton import _Point

    s = _Point(loss, [y], state.masks, None).s()
    assert [int(m.sum()) for m in state.masks] == [1] and float(s[0]) == pytest.approx(-2.0)
    kink_newton_step(loss, [y], state)  # the reduced problem is solved: released
    assert state.released == 1 and [int(m.sum()) for m in state.masks] == [0]
    _solve(loss, [y], radius=10.0)
    assert float((y.detach() - torch.tensor([-1.0, 2.0], dtype=F64)).abs().max()) <= 1e-12


def test_find_kinks_uses_the_gap():
    """Entries 1e-12 and 1e-11 below a gap of 8 decades join the kink set; the band sits
    in the gap. Without a gap the certificate's band 1e-6 applies."""
    z = torch.tensor([1e-12, -1e-11, 1e-3, 0.5, -1.0, 2.0], dtype=F64)
    rms = float(z.pow(2).mean().sqrt())
    masks, band = find_kinks([z])
    assert masks[0].tolist() == [True, True, False, False, False, False]
    assert 1e-11 / rms < band < 1e-3 / rms
    masks, band = find_kinks([torch.tensor([1e-3, 3e-3, 1e-2, 1.0], dtype=F64)])
    assert band == 1e-6 and not masks[0].any()


RECIPE = (
    PhaseConfig("adam", 300, 1e-2),
    *(PhaseConfig("newton", 100, 1.0, smooth=beta) for beta in (1e2, 1e3, 1e4, 1e5, 1e6)),
    PhaseConfig("kink_newton", 20, 1.0),
)


def test_leaky_resnet_certified_after_continuation_and_kink_newton(resnet_setup):
    """A small leaky ResNet: Adam, a smoothed Newton continuation to `beta = 1e6`, then
    `kink_newton`: the certificate (exact loss, `tau = 1e-6`) reaches 1e-9 with kinks in
    its set (measured 1e-11: the endgame converges quadratically); the `kink_newton`
    losses never rise."""
    data, net = resnet_setup
    model = net()
    cfg = TrainConfig(lam=0.05, phases=RECIPE, dtype="float64", log_every=5)
    res = train(model, data, cfg, progress=False)
    losses = [r["loss"] for r in res.metrics if r["phase"] == "kink_newton"]
    assert all(b <= a * (1 + 10 * EPS) for a, b in zip(losses, losses[1:]))
    cert = certify(model, data, 0.05)
    assert sum(cert.kinks) > 0
    assert cert.stationarity <= 1e-9


def test_kink_newton_resumes_bitwise_after_a_crash(crash_and_resume):
    phases = (PhaseConfig("adam", 50, 1e-2), PhaseConfig("kink_newton", 20, 1.0))
    cfg = TrainConfig(lam=0.05, phases=phases, dtype="float64", log_every=5, checkpoint_every=5)
    saved = crash_and_resume(cfg, at=60)
    assert saved["radius"] > 0 and saved["masks"] is not None


@pytest.mark.parametrize("steps", [0, 1])
def test_untrained_net_is_not_certified(steps, resnet_setup):
    """An untrained leaky ResNet after 0 or 1 `kink_newton` steps stays far above the
    default gate (1e-2)."""
    data, net = resnet_setup
    model = net()
    phases = (PhaseConfig("kink_newton", steps, 1.0),)
    train(model, data, TrainConfig(lam=0.05, phases=phases, dtype="float64"), progress=False)
    cert = certify(model, data, 0.05)
    assert not cert.converged and cert.stationarity > 1e-2


def test_registered():
    assert "kink_newton" in PHASES


def test_a_smoothed_kink_newton_phase_is_refused():
    with pytest.raises(ConfigError, match="kink_newton solves the exact"):
        PhaseConfig("kink_newton", 10, 1.0, smooth=1e4)


@pytest.fixture(scope="module")
def adam_point(resnet_setup):
    """The small leaky ResNet after Adam, with its 40 entries of smallest `|z| / rms` as
    the kink set: `(loss_fn, params, masks)`."""
    from bottlenecklab.training._kink_newton import PieceMode
    from bottlenecklab.training._objective import Objective

    data, net = resnet_setup
    model = net()
    adam = TrainConfig(lam=0.05, phases=(PhaseConfig("adam", 300, 1e-2),), dtype="float64")
    train(model, data, adam, progress=False)
    obj = Objective(model, data, "mse", 0.05, F64, "cpu")

    def loss() -> torch.Tensor:
        return obj.loss(model.forward_twice_differentiable)

    with torch.no_grad(), PieceMode() as rec:
        loss()
    ratios = [z.abs() / z.pow(2).mean().sqrt() for z in rec.z]
    band = torch.kthvalue(torch.cat([r.reshape(-1) for r in ratios]), 40).values
    return loss, obj.params, [r <= band for r in ratios]


def test_matrix_free_products_equal_the_dense_ones(adam_point):
    """`J v`, `J^T u`, `J J^T`, `(J J^T)^+ r`, the projection on the null space of `J`,
    the multipliers and the box multipliers of the matrix-free piece against the dense
    one (`J` formed row by row). Products: within `P eps` of `|J| |v|` (a length-`P` dot
    product in another order); what goes through `(J J^T)^+`: within `P eps cond` relative
    (`cond` that of `J J^T` on the kept eigenvalues, here 1e2; measured: products 1e-16
    of `|J| |v|`, the rest 6e-15 relative). A wrong product (`v` reversed) misses by far
    more than the bound."""
    from bottlenecklab.training._kink_newton import _assign, _box_solution, _flat, _Point

    loss, params, masks = adam_point
    dense = _Point(loss, params, masks, None, matrix_free=False)
    free = _Point(loss, params, masks, None, matrix_free=True)
    assert dense.J is not None and free.J is None and free.matrix_free
    J = dense.J
    n_c, P = J.shape
    assert n_c == 40
    g = torch.Generator().manual_seed(0)
    v = torch.randn(P, generator=g, dtype=F64)
    u = torch.randn(n_c, generator=g, dtype=F64)
    r = torch.randn(n_c, generator=g, dtype=F64)
    bound_Jv = P * EPS * (J.abs() @ v.abs())
    assert bool(((free.Jv(v) - J @ v).abs() <= bound_Jv).all())
    assert float((J @ v.flip(0) - J @ v).abs().max()) > 1e6 * float(bound_Jv.max())
    bound_JTu = P * EPS * (J.abs().T @ u.abs())
    assert bool(((free.JTu(u) - J.T @ u).abs() <= bound_JTu).all())
    gram = free._evecs @ torch.diag(free._evals) @ free._evecs.T
    assert float((gram - J @ J.T).abs().max()) <= P * EPS * float((J.abs() @ J.abs().T).max())
    kept = dense._evals[dense._inv > 0]
    # two kink entries of the first call (the fixed input lift) have no parameter
    # dependence: their rows are 0 and both pseudo-inverses drop them
    assert len(kept) == n_c - 2 and int((free._inv > 0).sum()) == n_c - 2
    rel = P * EPS * float(kept.max() / kept.min())
    exact = dense.solve(r)
    assert float((free.solve(r) - exact).norm()) <= rel * float(exact.norm())
    assert float((free.project(v) - dense.project(v)).norm()) <= rel * float(v.norm())
    assert float((free.mu - dense.mu).norm()) <= rel * float(dense.mu.norm())
    assert float(free.kkt) == pytest.approx(float(dense.kkt), rel=rel)
    s = dense.s()
    mu_d, res_d = _box_solution(dense, s)
    mu_f, res_f = _box_solution(free, s)
    # unique but on the zero rows (any value in their box fits as well)
    rows = J.abs().sum(1) > 0
    assert float((mu_f - mu_d)[rows].norm()) <= rel * float(mu_d.norm())
    assert res_f == pytest.approx(res_d, rel=rel)
    x = _flat(params).detach()
    _assign(params, x + 1.0)  # a trial step spends the graph; J^T u from a new one at x
    _assign(params, x)
    assert bool(((free.JTu_anew(u) - J.T @ u).abs() <= bound_JTu).all())


def test_matrix_free_kink_newton_certifies_like_the_dense_one(monkeypatch, resnet_setup):
    """The certified-leaky-ResNet recipe with the matrix-free path forced in `kink_newton`:
    the same certificate bound (1e-9; measured 9e-12 against the dense path's 1e-11), the
    same kink entries, and the same final loss to 1e-12 relative (both end at one KKT
    point; the last steps differ by rounding)."""
    from bottlenecklab.training import _kink_newton

    data, net = resnet_setup
    smoothed = net()
    phases = (*RECIPE[:-1], PhaseConfig("kink_newton", 0, 1.0))
    cfg = TrainConfig(lam=0.05, phases=phases, dtype="float64")
    train(smoothed, data, cfg, progress=False)
    tail = TrainConfig(lam=0.05, phases=(RECIPE[-1],), dtype="float64", log_every=5)
    out = {}
    for matrix_free in (False, True):
        model = net()
        model.load_state_dict(smoothed.state_dict())
        monkeypatch.setattr(_kink_newton, "_MATRIX_FREE", matrix_free)
        res = train(model, data, tail, progress=False)
        out[matrix_free] = (res.metrics[-1]["loss"], certify(model, data, 0.05))
    monkeypatch.undo()
    for _, cert in out.values():
        assert sum(cert.kinks) > 0 and cert.stationarity <= 1e-9
    assert out[True][1].kinks == out[False][1].kinks
    assert out[True][0] == pytest.approx(out[False][0], rel=1e-12)


def test_the_path_is_chosen_by_the_jacobian_size(adam_point, monkeypatch):
    """Dense below `DENSE_JACOBIAN_BYTES` of `J`, matrix-free above it."""
    from bottlenecklab.training import _kink_newton
    from bottlenecklab.training._kink_newton import _Point

    loss, params, masks = adam_point
    assert not _Point(loss, params, masks, None).matrix_free
    monkeypatch.setattr(_kink_newton, "DENSE_JACOBIAN_BYTES", 40 * 432 * 8 - 1)
    assert sum(p.numel() for p in params) == 432
    assert _Point(loss, params, masks, None).matrix_free


@pytest.mark.parametrize("matrix_free", [False, True])
def test_kinks_without_parameter_dependence(matrix_free, monkeypatch):
    """A kink of a constant (no parameter reaches it: `J = 0`) on either path: it is held,
    with multiplier 0, and the method is plain Newton on the rest: `x = 1` exactly."""
    from bottlenecklab.training import _kink_newton

    monkeypatch.setattr(_kink_newton, "_MATRIX_FREE", matrix_free)
    x = torch.nn.Parameter(torch.tensor([0.3], dtype=F64))
    zero = torch.zeros(1, dtype=F64)

    def loss() -> torch.Tensor:
        return torch.relu(zero).sum() + (x - 1).pow(2).sum()

    state = _solve(loss, [x], radius=10.0)
    assert [int(m.sum()) for m in state.masks] == [1]
    assert float(x.detach()) == pytest.approx(1.0, abs=1e-12)
    point = _kink_newton._Point(loss, [x], state.masks, None)
    assert point.matrix_free == matrix_free and float(point.mu.abs().max()) == 0.0


def _fcnn_piece(kinks: int = 30):
    """A depth-3 ReLU FCNN on the tiny teacher (24 samples, width 6): `(obj, masks)`, the
    kink set its `kinks` entries of smallest `|z| / rms` plus every entry of sample 5's
    first call (a sample with many entries)."""
    from bottlenecklab.training._kink_newton import PieceMode
    from bottlenecklab.training._objective import Objective

    data = TeacherConfig(dims=(4, 2, 4), hidden=8, n_train=24, n_test=16).build(seed=0)
    model = FCNNConfig(depth=3, width=6).build(data.d_in, data.d_out, seed=0, dtype=F64)
    obj = Objective(model, data, "mse", 0.05, F64, "cpu")
    with torch.no_grad(), PieceMode() as rec:
        obj.loss()
    ratios = [z.abs() / z.pow(2).mean().sqrt() for z in rec.z]
    band = torch.kthvalue(torch.cat([r.reshape(-1) for r in ratios]), kinks).values
    masks = [r <= band for r in ratios]
    masks[0][5] = True
    return obj, masks


@pytest.mark.parametrize(("sample_chunk", "rows_chunk"), [(32, 256), (3, 256), (4, 2)])
def test_jacobian_by_samples_equals_the_full_batch_one(sample_chunk, rows_chunk, monkeypatch):
    """`J` formed per sample group (forward passes over the samples holding kink entries
    only) against the batched backward passes over the whole batch: equal within `P eps`
    of `max |J|` (the same products, summed over fewer samples), in groups of any size
    and with a sample holding more entries than a chunk; the groups cover every sample
    holding an entry once, ascending."""
    from bottlenecklab.training import _kink_newton
    from bottlenecklab.training._kink_newton import _Point

    obj, masks = _fcnn_piece()
    monkeypatch.setattr(_kink_newton, "SAMPLE_CHUNK", sample_chunk)
    monkeypatch.setattr(_kink_newton, "JACOBIAN_CHUNK", rows_chunk)
    full = _Point(obj.loss, obj.params, masks, None, matrix_free=False)
    by_samples = _Point(
        obj.loss,
        obj.params,
        masks,
        None,
        matrix_free=False,
        rows_loss_fn=lambda r: obj.loss(None, r),
    )
    samples = by_samples._entry_samples()
    groups = by_samples._sample_groups(samples)
    assert torch.equal(torch.cat(groups), torch.unique(samples))
    assert all(len(g) <= sample_chunk for g in groups)
    J = full.J
    P = J.shape[1]
    assert J.shape[0] == sum(int(m.sum()) for m in masks) > 30
    assert float((by_samples._jacobian_by_samples() - J).abs().max()) <= P * EPS * float(
        J.abs().max()
    )
    assert float((by_samples.J - J).abs().max()) <= P * EPS * float(J.abs().max())


def test_jacobian_by_samples_falls_back_where_samples_are_coupled():
    """A forward pass that mixes samples (each pre-activation shifted by the batch mean):
    the group's pre-activations differ from the full batch's rows of them, so the piece
    forms `J` over the whole batch; its rows are those of the full batch exactly."""
    from bottlenecklab.training._kink_newton import _Point

    g = torch.Generator().manual_seed(0)
    X = torch.randn(10, 3, generator=g, dtype=F64)
    W = torch.nn.Parameter(torch.randn(3, 4, generator=g, dtype=F64))

    def loss_of(rows: torch.Tensor | None = None) -> torch.Tensor:
        x = X if rows is None else X[rows]
        z = x @ W - (X @ W).mean(0) + (x @ W).mean(0)  # full-batch values, group-dependent
        return torch.relu(z).pow(2).sum()

    masks = [torch.zeros(10, 4, dtype=torch.bool)]
    masks[0][[1, 4, 7], [0, 2, 3]] = True
    full = _Point(loss_of, [W], masks, None, matrix_free=False)
    point = _Point(loss_of, [W], masks, None, matrix_free=False, rows_loss_fn=loss_of)
    assert point._jacobian_by_samples() is None
    assert torch.equal(point.J, full.J)


def test_kink_newton_phase_with_rows_equals_the_full_batch_one(monkeypatch):
    """`kink_newton` on a small ReLU FCNN, `J` per sample group (the phase's own) against
    the full batch's: the same losses per step to `1e3 eps` relative (the steps differ by
    rounding only)."""
    from bottlenecklab.training import _kink_newton

    data = TeacherConfig(dims=(4, 2, 4), hidden=8, n_train=24, n_test=16).build(seed=0)
    cfg = TrainConfig(
        lam=0.05,
        phases=(PhaseConfig("adam", 300, 1e-2), PhaseConfig("kink_newton", 10, 1.0)),
        dtype="float64",
        log_every=1,
    )
    losses = {}
    for by_samples in (True, False):
        if not by_samples:
            monkeypatch.setattr(_kink_newton._Point, "_jacobian_by_samples", lambda self: None)
        model = FCNNConfig(depth=3, width=6).build(data.d_in, data.d_out, seed=0, dtype=F64)
        res = train(model, data, cfg, progress=False)
        losses[by_samples] = [r["loss"] for r in res.metrics if r["phase"] == "kink_newton"]
    assert len(losses[True]) == len(losses[False]) > 1
    assert losses[True] == pytest.approx(losses[False], rel=1e3 * EPS)
