"""The training loop: phases, logs, learning rates, divergence, checkpoints and resume."""

from __future__ import annotations

import math

import pytest
import torch

from bottlenecklab.config import ConfigError
from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.tasks import Dataset, data_cost
from bottlenecklab.training import (
    CheckpointError,
    PhaseConfig,
    TrainConfig,
    TrainingDiverged,
    load_checkpoint,
    train,
)


def _net(data: Dataset, dtype=torch.float64, **kw):
    cfg = LeakyResNetConfig(**{"width": 5, "depth": 4, "leak": 1.0, **kw})
    return cfg.build(data.d_in, data.d_out, seed=1, dtype=dtype)


def _params(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_phases_run_in_order_with_their_step_counts(tiny_data):
    phases = (PhaseConfig("adam", 7, 1e-2), PhaseConfig("sgd", 5, 1e-2), PhaseConfig("lbfgs", 3))
    cfg = TrainConfig(lam=0.01, phases=phases, dtype="float64", log_every=1)
    res = train(_net(tiny_data), tiny_data, cfg, progress=False)
    assert res.steps == 15
    assert [r["step"] for r in res.metrics] == list(range(1, 16))
    assert [r["phase"] for r in res.metrics] == ["adam"] * 7 + ["sgd"] * 5 + ["lbfgs"] * 3


def test_zero_step_phase_is_skipped(tiny_data):
    phases = (PhaseConfig("adam", 0), PhaseConfig("sgd", 3, 1e-2))
    cfg = TrainConfig(lam=0.01, phases=phases, dtype="float64", log_every=1)
    res = train(_net(tiny_data), tiny_data, cfg, progress=False)
    assert [r["phase"] for r in res.metrics] == ["sgd"] * 3


@pytest.mark.parametrize(
    "log_every, steps, logged",
    [(1, 3, [1, 2, 3]), (4, 10, [4, 8, 10]), (5, 10, [5, 10]), (100, 7, [7])],
)
def test_metrics_rows_every_log_every_and_at_the_end(tiny_data, log_every, steps, logged):
    cfg = TrainConfig(
        lam=0.01, phases=(PhaseConfig("adam", steps, 1e-2),), dtype="float64", log_every=log_every
    )
    res = train(_net(tiny_data), tiny_data, cfg, progress=False)
    assert [r["step"] for r in res.metrics] == logged


def test_metrics_row_content(tiny_data):
    net = _net(tiny_data)
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 2, 1e-2),), dtype="float64")
    row = train(net, tiny_data, cfg, progress=False).metrics[-1]
    assert set(row) >= {"step", "phase", "lr", "loss", "cost", "reg", "test_cost", "grad_norm"}
    with torch.no_grad():
        cost = float(
            data_cost(net(torch.tensor(tiny_data.x_train)), torch.tensor(tiny_data.y_train))
        )
        test = float(data_cost(net(torch.tensor(tiny_data.x_test)), torch.tensor(tiny_data.y_test)))
        reg = float(net.regularization(0.01))
    assert row["cost"] == pytest.approx(cost, rel=1e-12)
    assert row["test_cost"] == pytest.approx(test, rel=1e-12)
    assert row["reg"] == pytest.approx(reg, rel=1e-12)
    assert row["loss"] == pytest.approx(cost + reg, rel=1e-12)


@pytest.mark.parametrize("lr_per_depth", [False, True])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_lr_per_depth_divides_the_learning_rate_by_the_depth(tiny_data, lr_per_depth, optimizer):
    net = _net(tiny_data, depth=4)
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig(optimizer, 3, 0.02),),
        lr_per_depth=lr_per_depth,
        dtype="float64",
        log_every=1,
    )
    res = train(net, tiny_data, cfg, progress=False)
    expected = 0.02 / 4 if lr_per_depth else 0.02
    assert [r["lr"] for r in res.metrics] == pytest.approx([expected] * 3)


def test_lr_per_depth_changes_the_sgd_step(tiny_data):
    """One SGD step moves the weights by `lr / L` times the gradient."""
    net, ref = _net(tiny_data), _net(tiny_data)
    X, Y = torch.tensor(tiny_data.x_train), torch.tensor(tiny_data.y_train)
    (data_cost(ref(X), Y) + ref.regularization(0.01)).backward()
    expected = ref.weights.detach() - 0.02 / 4 * ref.weights.grad
    cfg = TrainConfig(
        lam=0.01, phases=(PhaseConfig("sgd", 1, 0.02),), lr_per_depth=True, dtype="float64"
    )
    train(net, tiny_data, cfg, progress=False)
    torch.testing.assert_close(net.weights.detach(), expected, rtol=1e-12, atol=1e-14)


def test_cosine_schedule_decays_to_zero(tiny_data):
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig("adam", 4, 0.1, schedule="cosine"),),
        dtype="float64",
        log_every=1,
    )
    res = train(_net(tiny_data), tiny_data, cfg, progress=False)
    expected = [0.1 * 0.5 * (1 + math.cos(math.pi * t / 4)) for t in range(4)]
    assert [r["lr"] for r in res.metrics] == pytest.approx(expected)


def test_training_lowers_the_loss_and_the_regularizer_is_in_it(tiny_data):
    cfg = TrainConfig(
        lam=0.01, phases=(PhaseConfig("adam", 60, 1e-2),), dtype="float64", log_every=10
    )
    res = train(_net(tiny_data), tiny_data, cfg, progress=False, checkpoint=None)
    assert res.metrics[-1]["loss"] < res.metrics[0]["loss"]
    assert res.metrics[-1]["reg"] > 0


def test_trains_the_fcnn_too(tiny_data):
    net = FCNNConfig(depth=3, width=8).build(tiny_data.d_in, tiny_data.d_out, dtype=torch.float64)
    cfg = TrainConfig(
        lam=1e-3, phases=(PhaseConfig("adam", 30, 1e-2),), dtype="float64", log_every=10
    )
    res = train(net, tiny_data, cfg, progress=False)
    assert res.metrics[-1]["loss"] < res.metrics[0]["loss"]


def test_adaptive_schedule_updates_rho_during_first_order_steps(tiny_data):
    net = _net(tiny_data, schedule="adaptive", adaptive_every=2)
    before = net.rho.clone()
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 4, 1e-2),), dtype="float64")
    train(net, tiny_data, cfg, progress=False)
    assert not torch.equal(net.rho, before)
    assert float(net.rho.sum()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_dtype(tiny_data, dtype):
    net = _net(tiny_data, dtype=torch.float32)
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 1, 1e-2),), dtype=dtype)
    train(net, tiny_data, cfg, progress=False)
    assert net.weights.dtype == {"float32": torch.float32, "float64": torch.float64}[dtype]


# --- divergence ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "steps, log_every",
    [(1, 1), (2, 1), (20, 1), (20, 5)],
    ids=["at-the-last-step", "second-step", "log-every-step", "log-every-5"],
)
def test_divergence_raises_keeps_the_last_good_state_and_checkpoints(
    tiny_data, tmp_path, steps, log_every
):
    """An absurd learning rate overflows float32 within a step or two."""
    net = _net(tiny_data, dtype=torch.float32)
    initial = _params(net)
    ckpt = tmp_path / "checkpoint.pt"
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig("sgd", steps, 1e30),),
        dtype="float32",
        log_every=log_every,
    )
    with pytest.raises(TrainingDiverged) as info:
        train(net, tiny_data, cfg, progress=False, checkpoint=ckpt)
    msg = str(info.value)
    assert "\n" not in msg and "loss became" in msg and "kept the state of step 0" in msg
    state = _params(net)
    for k, v in state.items():
        assert bool(torch.isfinite(v).all()), k
        torch.testing.assert_close(v, initial[k])  # no finite log row after step 0
    saved = load_checkpoint(ckpt)["model"]
    for k, v in state.items():
        assert torch.equal(saved[k], v)


def test_divergence_keeps_the_last_logged_finite_state(tiny_data):
    """A few good Adam steps (logged), then SGD with an absurd rate: the model holds the
    state of the last logged step before the blow-up."""
    net = _net(tiny_data, dtype=torch.float32)
    good = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 3, 1e-2),), dtype="float32")
    train(net, tiny_data, good, progress=False)
    after_good = _params(net)
    net2 = _net(tiny_data, dtype=torch.float32)
    cfg = TrainConfig(
        lam=0.01,
        phases=(PhaseConfig("adam", 3, 1e-2), PhaseConfig("sgd", 5, 1e30)),
        dtype="float32",
        log_every=3,
    )
    with pytest.raises(TrainingDiverged, match="kept the state of step 3"):
        train(net2, tiny_data, cfg, progress=False)
    for k, v in _params(net2).items():
        torch.testing.assert_close(v, after_good[k])


# --- checkpoints and resume ---------------------------------------------------------------


def test_checkpoint_written_at_the_end(tiny_data, tmp_path):
    ckpt = tmp_path / "run" / "checkpoint.pt"
    net = _net(tiny_data)
    cfg = TrainConfig(
        lam=0.01, phases=(PhaseConfig("adam", 6, 1e-2),), dtype="float64", checkpoint_every=4
    )
    res = train(net, tiny_data, cfg, progress=False, checkpoint=ckpt)
    state = load_checkpoint(ckpt)
    assert state["steps"] == res.steps == 6
    assert state["phase"] == 1  # past the last phase: nothing left to do
    assert len(state["metrics"]) == len(res.metrics)
    for k, v in net.state_dict().items():
        assert torch.equal(state["model"][k], v)
    assert sorted(p.name for p in ckpt.parent.iterdir()) == ["checkpoint.pt", "checkpoint.pt.prev"]


RESUME_CASES = {
    "adam": ((PhaseConfig("adam", 20, 1e-2),), 10, {}),
    "adam-cosine": ((PhaseConfig("adam", 20, 1e-2, schedule="cosine"),), 10, {}),
    "sgd-momentum-then-adam": (
        (PhaseConfig("sgd", 10, 1e-2, momentum=0.9), PhaseConfig("adam", 10, 1e-2)),
        10,
        {},
    ),
    "adam-then-lbfgs": ((PhaseConfig("adam", 8, 1e-2), PhaseConfig("lbfgs", 8, 1.0)), 12, {}),
    # 24 samples in batches of 5: the crash at step 10 falls mid-epoch (the order resumes)
    "minibatch-sgd": (
        (PhaseConfig("sgd", 20, 5e-2, lr_power=-1.0, batch_size=5, seed=3),),
        10,
        {},
    ),
    "adaptive-steps": (
        (PhaseConfig("adam", 20, 1e-2),),
        10,
        {"schedule": "adaptive", "adaptive_every": 3},
    ),
    # killed inside a smoothed phase (`PhaseConfig.smooth`); an FCNN: its ReLU calls
    "smoothed-adam-then-lbfgs": (
        (PhaseConfig("adam", 12, 1e-2, smooth=20.0), PhaseConfig("lbfgs", 8, 1.0)),
        6,
        {"fcnn": True},
    ),
}


def _resume_net(data: Dataset, model_kw: dict):
    """The network of a `RESUME_CASES` entry (`{"fcnn": True}`: a depth-3 ReLU FCNN)."""
    if model_kw.get("fcnn"):
        cfg = FCNNConfig(depth=3, width=6)
        return cfg.build(data.d_in, data.d_out, seed=1, dtype=torch.float64)
    return _net(data, **model_kw)


@pytest.mark.parametrize("case", list(RESUME_CASES))
def test_resume_after_a_crash_equals_uninterrupted_training(tiny_data, crash_at, case):
    """N steps in two halves (crash right after the checkpoint at N/2, then `resume=True`)
    give the same parameters, steps and metrics as N steps in one go (float64)."""
    phases, crash_step, model_kw = RESUME_CASES[case]
    cfg = TrainConfig(
        lam=0.01, phases=phases, dtype="float64", log_every=2, checkpoint_every=crash_step // 2
    )
    straight = _resume_net(tiny_data, model_kw)
    ref = train(straight, tiny_data, cfg, progress=False)

    ckpt = crash_at(_resume_net(tiny_data, model_kw), tiny_data, cfg, crash_step)
    assert load_checkpoint(ckpt)["steps"] == crash_step

    resumed = _resume_net(tiny_data, model_kw)
    res = train(resumed, tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    assert res.steps == ref.steps
    for k, v in straight.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[k], v, rtol=1e-10, atol=1e-12)

    def numbers(rows):
        keys = ("step", "lr", "loss", "cost", "reg", "test_cost")
        return [r[k] for r in rows for k in keys]

    assert [r["phase"] for r in res.metrics] == [r["phase"] for r in ref.metrics]
    assert numbers(res.metrics) == pytest.approx(numbers(ref.metrics), rel=1e-10)


def test_minibatch_order_is_in_the_checkpoint(tiny_data, crash_at):
    """A mini-batch `sgd` phase checkpoints its batch order (generator, permutation,
    position): crashed mid-epoch and resumed, it ends bitwise where an uninterrupted run
    does."""
    phase = PhaseConfig("sgd", 12, 5e-2, lr_power=-1.0, batch_size=5, seed=3)
    cfg = TrainConfig(lam=0.0, phases=(phase,), dtype="float64", log_every=2, checkpoint_every=6)
    straight = _net(tiny_data)
    train(straight, tiny_data, cfg, progress=False)
    ckpt = crash_at(_net(tiny_data), tiny_data, cfg, 6)
    batches = load_checkpoint(ckpt)["optimizer"]["batches"]
    assert batches["pos"] == 10 and batches["order"].shape == (24,)  # step 6: 2nd of epoch 2
    resumed = _net(tiny_data)
    train(resumed, tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    for k, v in straight.state_dict().items():
        assert torch.equal(resumed.state_dict()[k], v)


def test_resume_of_a_finished_run_trains_nothing(tiny_data, tmp_path):
    ckpt = tmp_path / "checkpoint.pt"
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 4, 1e-2),), dtype="float64")
    net = _net(tiny_data)
    train(net, tiny_data, cfg, progress=False, checkpoint=ckpt)
    again = _net(tiny_data)
    res = train(again, tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    assert res.steps == 4
    for k, v in net.state_dict().items():
        assert torch.equal(again.state_dict()[k], v)


def test_resume_without_a_checkpoint_file(tiny_data, tmp_path):
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 2, 1e-2),), dtype="float64")
    with pytest.raises(CheckpointError):
        train(
            _net(tiny_data),
            tiny_data,
            cfg,
            progress=False,
            checkpoint=tmp_path / "x.pt",
            resume=True,
        )
    with pytest.raises(CheckpointError):
        train(_net(tiny_data), tiny_data, cfg, progress=False, checkpoint=None, resume=True)


def test_resume_from_a_corrupted_checkpoint(tiny_data, tmp_path):
    ckpt = tmp_path / "checkpoint.pt"
    ckpt.write_bytes(b"\x00garbage")
    cfg = TrainConfig(lam=0.01, phases=(PhaseConfig("adam", 2, 1e-2),), dtype="float64")
    with pytest.raises(CheckpointError, match="corrupted"):
        train(_net(tiny_data), tiny_data, cfg, progress=False, checkpoint=ckpt, resume=True)
    assert ckpt.read_bytes() == b"\x00garbage"


# --- config -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {"lam": -1.0},
        {"phases": ()},
        {"log_every": 0},
        {"checkpoint_every": 0},
    ],
)
def test_train_config_rejects_out_of_range(kw):
    with pytest.raises(ConfigError):
        TrainConfig(**kw)


@pytest.mark.parametrize(
    "kw", [{"steps": -1}, {"lr": 0.0}, {"lr": -1e-3}, {"momentum": 1.0}, {"history": 0}]
)
def test_phase_config_rejects_out_of_range(kw):
    with pytest.raises(ConfigError):
        PhaseConfig(**kw)


def test_total_steps():
    cfg = TrainConfig(phases=(PhaseConfig("adam", 3), PhaseConfig("sgd", 4)))
    assert cfg.total_steps == 7


def test_lbfgs_iterates_do_not_depend_on_the_logging_interval(tiny_data):
    """L-BFGS runs in chunks between logs; the chunking must not change the result."""

    finals = []
    for log_every in (3, 100):
        net = LeakyResNetConfig(width=6, depth=4, leak=1.0).build(
            tiny_data.d_in, tiny_data.d_out, seed=0, dtype=torch.float64
        )
        cfg = TrainConfig(
            lam=0.01,
            dtype="float64",
            phases=(PhaseConfig("lbfgs", 200, 1.0),),
            log_every=log_every,
            checkpoint_every=1000,
        )
        train(net, tiny_data, cfg, progress=False)
        finals.append(net.weights.detach().clone())
    assert torch.allclose(finals[0], finals[1], rtol=0, atol=1e-10)


def test_cross_entropy_cost_is_the_mean_over_samples():
    from bottlenecklab.tasks import COSTS, cross_entropy_cost

    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
    Y = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], dtype=torch.float64)
    expected = torch.nn.functional.cross_entropy(logits, Y.argmax(1))
    assert float(cross_entropy_cost(logits, Y)) == pytest.approx(float(expected), rel=1e-12)
    assert COSTS["cross_entropy"] is cross_entropy_cost


def test_backtracking_gd_halves_a_step_that_raises_the_loss(tiny_data):
    from bottlenecklab.models import FCNNConfig

    net = FCNNConfig(depth=3, width=8).build(
        tiny_data.d_in, tiny_data.d_out, seed=0, dtype=torch.float64
    )
    # lr 50 overshoots: every accepted step lowers the loss, rejected ones halve the lr.
    cfg = TrainConfig(
        lam=1e-3,
        dtype="float64",
        log_every=1,
        phases=(PhaseConfig("sgd", 30, 50.0, backtrack=True),),
    )
    res = train(net, tiny_data, cfg, progress=False)
    losses = [r["loss"] for r in res.metrics]
    lrs = [r["lr"] for r in res.metrics]
    assert all(b <= a + 1e-12 for a, b in zip(losses[:-1], losses[1:]))
    assert lrs[-1] < 50.0 and all(b <= a for a, b in zip(lrs[:-1], lrs[1:]))


def test_backtracking_is_for_gd_only():
    with pytest.raises(ConfigError):
        PhaseConfig("adam", 10, 1e-3, backtrack=True)
