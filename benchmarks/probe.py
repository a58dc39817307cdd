"""The bottleneck probe at scale (spec `probe.md`, "Scale"), each case in a fresh process:

- a 20-layer, width-512 ReLU MLP on `N = 10 000` points (`d_in = 64`, `d_out = 10`),
  `BottleneckProbe(...).summary()` (table, Jacobian and NTK on 256 points) on 2 threads:
  time (target <= 60 s) and peak resident memory of the process (target <= 2 GiB);
- the probe's per-layer table of a paper-size leaky ResNet (`N = 1000`, `w = 200`,
  `L = 50`) against the specialised `measure.leaky_resnet_layers` on the same network and
  data, one thread, best of 2 each: the time ratio (target <= 1.2x).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import torch
from torch import nn

from benchmarks._common import load

SCALE = {"layers": 20, "width": 512, "n": 10_000, "d_in": 64, "d_out": 10, "threads": 2}
PAPER = {"n": 1000, "width": 200, "depth": 50, "leak": 5.0, "d": 20, "lam": 0.002}


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def _scale_child() -> None:
    from bottlenecklab.probe import BottleneckProbe

    torch.set_num_threads(SCALE["threads"])
    torch.manual_seed(0)
    w = SCALE["width"]
    mods: list[nn.Module] = [nn.Linear(SCALE["d_in"], w), nn.ReLU()]
    for _ in range(SCALE["layers"] - 2):
        mods += [nn.Linear(w, w), nn.ReLU()]
    net = nn.Sequential(*mods, nn.Linear(w, SCALE["d_out"]))
    X = torch.randn(SCALE["n"], SCALE["d_in"])
    t0 = time.perf_counter()
    summary = BottleneckProbe(net, X, progress=False).summary()
    seconds = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    peak = use.ru_maxrss / 2**20  # KiB -> GiB
    cpu = use.ru_utime + use.ru_stime  # the whole process, set-up included
    print(
        json.dumps(
            {"seconds": seconds, "cpu_s": cpu, "peak_gib": peak, "rank": summary["bottleneck_rank"]}
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


def _child(name: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", f"from benchmarks.probe import {name}; {name}()"],
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
    s = _child("_scale_child")
    print(
        f"  scale: {SCALE['layers']} layers x width {SCALE['width']}, N = {SCALE['n']}, "
        f"{SCALE['threads']} threads: {s['seconds']:.1f} s (target <= 60 s: "
        f"{_verdict(s['seconds'] <= 60)}), peak RSS {s['peak_gib']:.2f} GiB (target <= 2 GiB: "
        f"{_verdict(s['peak_gib'] <= 2)}); bottleneck rank of the random net {s['rank']}"
    )
    print(
        f"    process CPU time {s['cpu_s']:.1f} s = {s['cpu_s'] / SCALE['threads']:.1f} s on "
        f"{SCALE['threads']} cores (the wall time of an unshared machine, at best)"
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
