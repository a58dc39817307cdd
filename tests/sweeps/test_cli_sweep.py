"""`bottlenecklab sweep`: a tiny sweep file end to end, then a re-run that trains nothing."""

from bottlenecklab.cli import main
from bottlenecklab.sweeps import read_rows

SPEC = """
experiment: leaky-resnet/hamiltonian-vs-depth
preset: smoke
set:
  train.phases: [{optimizer: adam, steps: 20, lr: 0.01}]
grid:
  train.lam: [0.01, 0.02]
  model.leak: [1.0]
seeds: 2
options: {order: random}
"""


def test_sweep_command_collects_and_rerun_trains_nothing(tmp_path, capsys):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    rows = read_rows(out / "summary.parquet")
    assert len(rows) == 4 and {r["status"] for r in rows} == {"DONE"}
    assert {(r["config.train.lam"], r["config.seed"]) for r in rows} == {
        (0.01, 0),
        (0.01, 1),
        (0.02, 0),
        (0.02, 1),
    }
    assert len(read_rows(out / "layers.parquet")) == 4 * 6  # 4 runs x depth 6
    assert read_rows(out / "spectra.parquet")
    mtimes = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/result.json")}
    capsys.readouterr()
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    assert "(4 already done)" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
