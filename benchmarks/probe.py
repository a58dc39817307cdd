"""The bottleneck probe at scale (spec `probe.md`, "Scale"), each case in a fresh process:

- a 20-layer, width-512 ReLU MLP (`d_in = 64`, `d_out = 10`) through the CLI's code path
  (`bottlenecklab analyze` on a `torch.export` archive and an `.npz`: table, summary,
  figures, report) at `N = 10 000` and `N = 100 000` points on 2 threads: time (target at
  `N = 1e5`: <= 3 min) and peak resident memory of the process (target <= 2 GiB), with the
  split between the forward passes and the per-layer spectra;
- the probe's per-layer table of a paper-size leaky ResNet (`N = 1000`, `w = 200`,
  `L = 50`) against the specialised `measure.leaky_resnet_layers` on the same network and
  data, one thread, best of 2 each: the time ratio (target <= 1.2x).

`python -m benchmarks probe [scale|overhead|both]`.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from benchmarks._common import load

SCALE = {"layers": 20, "width": 512, "d_in": 64, "d_out": 10, "threads": 2}
SIZES = (10_000, 100_000)
TARGET_S = {10_000: 60.0, 100_000: 180.0}
PAPER = {"n": 1000, "width": 200, "depth": 50, "leak": 5.0, "d": 20, "lam": 0.002}


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def _mlp() -> nn.Sequential:
    torch.manual_seed(0)
    w = SCALE["width"]
    mods: list[nn.Module] = [nn.Linear(SCALE["d_in"], w), nn.ReLU()]
    for _ in range(SCALE["layers"] - 2):
        mods += [nn.Linear(w, w), nn.ReLU()]
    return nn.Sequential(*mods, nn.Linear(w, SCALE["d_out"]))


def _scale_child(n: str) -> None:
    """`bottlenecklab analyze MODEL.pt2 DATA.npz` on `n` points, timed in this process."""
    from bottlenecklab.cli import main as cli
    from bottlenecklab.measure import _representation

    torch.set_num_threads(SCALE["threads"])
    n_rows = int(n)
    spectra = {"s": 0.0}  # time in the per-layer quantities (spectra, costs of identity)
    quantities = _representation.RepresentationAccumulator.quantities

    def timed_quantities(self, **kw):
        t = time.perf_counter()
        out = quantities(self, **kw)
        spectra["s"] += time.perf_counter() - t
        return out

    _representation.RepresentationAccumulator.quantities = timed_quantities
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        batch = {"input": {0: torch.export.Dim.DYNAMIC}}
        ep = torch.export.export(_mlp(), (torch.randn(4, SCALE["d_in"]),), dynamic_shapes=batch)
        torch.export.save(ep, folder / "mlp.pt2")
        X = np.random.default_rng(0).standard_normal((n_rows, SCALE["d_in"]))
        np.savez(folder / "data.npz", X=X.astype(np.float32))
        t0 = time.perf_counter()
        rc = cli(
            ["analyze", str(folder / "mlp.pt2"), str(folder / "data.npz")]
            + ["--out", str(folder / "out"), "--quiet"]
        )
        seconds = time.perf_counter() - t0
        summary = json.loads((folder / "out" / "summary.json").read_text())
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "rc": rc,
                "seconds": seconds,
                "spectra_s": spectra["s"],
                "cpu_s": use.ru_utime + use.ru_stime,  # the whole process, set-up included
                "peak_gib": use.ru_maxrss / 2**20,  # KiB -> GiB
                "min_rank": summary["min_hidden_rank"],
                "verdict": summary["verdicts"]["bottleneck"].split(":")[0],
            }
        )
    )


def _best(fn, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _overhead_child() -> None:
    from bottlenecklab.measure import leaky_resnet_layers
    from bottlenecklab.models import LeakyResNetConfig
    from bottlenecklab.probe import BottleneckProbe

    torch.set_num_threads(1)
    torch.manual_seed(0)
    p = PAPER
    cfg = LeakyResNetConfig(width=p["width"], depth=p["depth"], leak=p["leak"])
    net = cfg.build(p["d"], p["d"], seed=0, dtype=torch.float64)
    X, Y = torch.randn(p["n"], p["d"]), torch.randn(p["n"], p["d"])
    table = _best(lambda: leaky_resnet_layers(net, X, Y, p["lam"]))
    probe = _best(lambda: BottleneckProbe(net, X, progress=False).analyze())
    print(json.dumps({"table_s": table, "probe_s": probe}))


def _child(name: str, *args: str) -> dict:
    call = f"{name}({', '.join(repr(a) for a in args)})"
    out = subprocess.run(
        [sys.executable, "-c", f"from benchmarks.probe import {name}; {call}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(which: str = "both") -> None:
    """Run the scale case, the overhead case, or both (`which`)."""
    print(f"probe ({load()}):")
    if which in ("both", "scale"):
        _scale()
    if which in ("both", "overhead"):
        _overhead()


def _scale() -> None:
    for n in SIZES:
        s = _child("_scale_child", str(n))
        target = TARGET_S[n]
        print(
            f"  analyze (CLI path): {SCALE['layers']} layers x width {SCALE['width']}, "
            f"N = {n}, {SCALE['threads']} threads: {s['seconds']:.1f} s (target <= "
            f"{target:.0f} s: {_verdict(s['seconds'] <= target)}), of which per-layer spectra "
            f"{s['spectra_s']:.1f} s; peak RSS {s['peak_gib']:.2f} GiB (target <= 2 GiB: "
            f"{_verdict(s['peak_gib'] <= 2)}); {s['verdict']} (smallest hidden rank "
            f"{s['min_rank']})"
        )
        print(
            f"    process CPU time {s['cpu_s']:.1f} s = {s['cpu_s'] / SCALE['threads']:.1f} s "
            f"on {SCALE['threads']} cores (the wall time of an unshared machine, at best)"
        )


def _overhead() -> None:
    o = _child("_overhead_child")
    ratio = o["probe_s"] / o["table_s"]
    print(
        f"  overhead at paper size (N = {PAPER['n']}, w = {PAPER['width']}, L = "
        f"{PAPER['depth']}, 1 thread): probe table {o['probe_s']:.2f} s vs "
        f"leaky_resnet_layers {o['table_s']:.2f} s = {ratio:.2f}x (target <= 1.2x: "
        f"{_verdict(ratio <= 1.2)})"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "both")
