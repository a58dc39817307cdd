"""The batched-ensemble trainer equals the per-run trainer (float64)."""

import pytest
import torch

from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import (
    PhaseConfig,
    TrainConfig,
    ensemble_phases,
    load_checkpoint,
    train,
    train_ensemble,
)

TASK = TeacherConfig(dims=(6, 2, 6), hidden=16, n_train=48, n_test=48)
PHASES = (
    PhaseConfig("adam", 40, 1e-2, schedule="cosine"),
    PhaseConfig("sgd", 20, 1e-3, momentum=0.5),
)
# Batched and single GEMMs round differently (and differently on each CPU): the two code
# paths agree to round-off amplified over the steps, not necessarily bitwise (they were
# bitwise equal on the machine this was written on; another CPU need not be). Half the
# float64 digits is far above round-off and far below any real discrepancy.
TOL = torch.finfo(torch.float64).eps ** 0.5
SWEEPS = {
    "seeds": dict(seeds=[0, 1, 2, 3], leaks=[2.0] * 4, lams=[0.02] * 4),
    "lambda": dict(seeds=[0] * 3, leaks=[2.0] * 3, lams=[0.005, 0.02, 0.08]),
    "leak": dict(seeds=[0] * 3, leaks=[1.0, 2.0, 4.0], lams=[0.02] * 3),
}


def _members(seeds, leaks, lams, schedule):
    data = [TASK.build(seed=s) for s in seeds]
    models = [
        LeakyResNetConfig(width=8, depth=8, leak=leak, schedule=schedule).build(
            d.d_in, d.d_out, seed=s + 1, dtype=torch.float64
        )
        for s, leak, d in zip(seeds, leaks, data)
    ]
    cfgs = [TrainConfig(lam=lam, phases=PHASES, dtype="float64", log_every=10) for lam in lams]
    return models, data, cfgs


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("schedule", ["equidistant", "adaptive"])
@pytest.mark.parametrize("sweep", SWEEPS.values(), ids=SWEEPS.keys())
def test_ensemble_equals_per_run_training(sweep, schedule):
    models, data, cfgs = _members(**sweep, schedule=schedule)
    ref = [train(m, d, c, progress=False) for m, d, c in zip(models, data, cfgs)]
    batch, data2, _ = _members(**sweep, schedule=schedule)
    got = train_ensemble(batch, data2, cfgs)
    for a, b, m1, m2 in zip(ref, got, models, batch):
        assert [r["step"] for r in a.metrics] == [r["step"] for r in b.metrics]
        for ra, rb in zip(a.metrics, b.metrics):
            for key in ("loss", "cost", "reg", "test_cost", "grad_norm", "lr"):
                assert rb[key] == pytest.approx(ra[key], rel=TOL, abs=TOL), key
        torch.testing.assert_close(m2.weights, m1.weights, rtol=TOL, atol=TOL)
        torch.testing.assert_close(m2.rho, m1.rho, rtol=TOL, atol=TOL)


def test_lbfgs_and_mixed_shapes_are_refused():
    models, data, cfgs = _members([0, 1], [2.0, 2.0], [0.02, 0.02], "equidistant")
    lbfgs = [TrainConfig(lam=0.02, phases=(PhaseConfig("lbfgs", 5, 1.0),))] * 2
    with pytest.raises(ValueError, match="starts with lbfgs"):
        train_ensemble(models, data, lbfgs)
    other = LeakyResNetConfig(width=9, depth=8).build(6, 6)
    with pytest.raises(ValueError, match="shape"):
        train_ensemble([models[0], other], data, cfgs)


def _same_training(a, b, m1, m2):
    assert [r["step"] for r in a.metrics] == [r["step"] for r in b.metrics]
    assert [r["phase"] for r in a.metrics] == [r["phase"] for r in b.metrics]
    for ra, rb in zip(a.metrics, b.metrics):
        for key in ("loss", "cost", "reg", "test_cost", "grad_norm", "lr"):
            assert rb[key] == pytest.approx(ra[key], rel=TOL, abs=TOL), (ra["step"], key)
    assert a.steps == b.steps
    torch.testing.assert_close(m2.weights, m1.weights, rtol=TOL, atol=TOL)


@pytest.mark.filterwarnings("ignore")
def test_ensemble_then_resumed_lbfgs_equals_per_run_training(tmp_path):
    """Adam as an ensemble, then each member's L-BFGS by `train(resume=True)`."""
    phases = (PHASES[0], PhaseConfig("lbfgs", 30, 1.0))
    models, data, _ = _members([0, 1, 2], [2.0, 1.0, 4.0], [0.02, 0.01, 0.05], "adaptive")
    cfgs = [
        TrainConfig(lam=lam, phases=phases, dtype="float64", log_every=10)
        for lam in (0.02, 0.01, 0.05)
    ]
    assert ensemble_phases(cfgs[0]) == 1
    ref = [train(m, d, c, progress=False) for m, d, c in zip(models, data, cfgs)]
    batch, data2, _ = _members([0, 1, 2], [2.0, 1.0, 4.0], [0.02, 0.01, 0.05], "adaptive")
    paths = [tmp_path / f"m{e}.pt" for e in range(3)]
    logged: list[list[dict]] = [[], [], []]
    part = train_ensemble(batch, data2, cfgs, checkpoints=paths, on_log=[x.append for x in logged])
    assert all(p.steps == phases[0].steps for p in part)
    assert [r["step"] for r in logged[0]] == [10, 20, 30, 40]
    for e in range(3):
        fresh = LeakyResNetConfig(width=8, depth=8, leak=[2.0, 1.0, 4.0][e], schedule="adaptive")
        net = fresh.build(data2[e].d_in, data2[e].d_out, seed=99, dtype=torch.float64)
        got = train(net, data2[e], cfgs[e], checkpoint=paths[e], resume=True, progress=False)
        _same_training(ref[e], got, models[e], net)
        torch.testing.assert_close(net.rho, models[e].rho, rtol=TOL, atol=TOL)


@pytest.mark.filterwarnings("ignore")
def test_mid_phase_member_checkpoint_resumes_like_the_per_run_trainer(tmp_path):
    """A member checkpoint taken inside an Adam phase carries that member's Adam state."""
    cfg = TrainConfig(lam=0.02, phases=PHASES, dtype="float64", log_every=10, checkpoint_every=15)
    models, data, _ = _members([0, 1], [2.0, 2.0], [0.02, 0.02], "equidistant")
    ref = [train(m, d, cfg, progress=False) for m, d in zip(models, data)]
    batch, data2, _ = _members([0, 1], [2.0, 2.0], [0.02, 0.02], "equidistant")
    paths = [tmp_path / f"m{e}.pt" for e in range(2)]
    kept = tmp_path / "at30.pt"

    def grab(row):  # at step 40 the file on disk is the mid-phase checkpoint of step 30
        if row["step"] == 40:
            kept.write_bytes(paths[1].read_bytes())

    train_ensemble(batch, data2, [cfg, cfg], checkpoints=paths, on_log=[lambda r: None, grab])
    assert load_checkpoint(kept)["steps"] == 30
    net = LeakyResNetConfig(width=8, depth=8, leak=2.0).build(6, 6, seed=7, dtype=torch.float64)
    got = train(net, data2[1], cfg, checkpoint=kept, resume=True, progress=False)
    _same_training(ref[1], got, models[1], net)
