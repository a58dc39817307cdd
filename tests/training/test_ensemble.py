"""The batched-ensemble trainer equals the per-run trainer (float64)."""

import pytest
import torch

from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import TeacherConfig
from bottlenecklab.training import PhaseConfig, TrainConfig, train, train_ensemble

TASK = TeacherConfig(dims=(6, 2, 6), hidden=16, n_train=48, n_test=48)
PHASES = (
    PhaseConfig("adam", 40, 1e-2, schedule="cosine"),
    PhaseConfig("sgd", 20, 1e-3, momentum=0.5),
)
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
                assert rb[key] == pytest.approx(ra[key], rel=1e-9, abs=1e-12), key
        torch.testing.assert_close(m2.weights, m1.weights, rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(m2.rho, m1.rho, rtol=1e-9, atol=1e-12)


def test_lbfgs_and_mixed_shapes_are_refused():
    models, data, cfgs = _members([0, 1], [2.0, 2.0], [0.02, 0.02], "equidistant")
    lbfgs = [TrainConfig(lam=0.02, phases=(PhaseConfig("lbfgs", 5, 1.0),))] * 2
    with pytest.raises(ValueError, match="L-BFGS"):
        train_ensemble(models, data, lbfgs)
    other = LeakyResNetConfig(width=9, depth=8).build(6, 6)
    with pytest.raises(ValueError, match="shape"):
        train_ensemble([models[0], other], data, cfgs)
