"""`python -m benchmarks [NAME ...]`: run the speed benchmarks (all by default)."""

from __future__ import annotations

import sys

import torch

from benchmarks import (
    adaptive_overhead,
    certificate_cost,
    compiled,
    continuation,
    convergence,
    ensemble,
    executor,
    gpu,
    kink_newton_step,
    naive,
    paper_recipe,
    paper_size,
    point_memory,
    probe,
    stack,
    time_to_certified,
    trust_region,
)

BENCHMARKS = {
    "adaptive-overhead": adaptive_overhead.main,
    "certificate-cost": certificate_cost.main,
    "compiled": compiled.main,
    "continuation": continuation.main,
    "convergence": convergence.main,
    "ensemble": ensemble.main,
    "executor": executor.main,
    "naive": naive.main,
    "paper-size": paper_size.main,
    "point-memory": point_memory.main,
    "probe": probe.main,
    "stack": stack.main,
    "time-to-certified": time_to_certified.main,
    "trust-region": trust_region.main,
}
if torch.cuda.is_available():
    BENCHMARKS["gpu"] = gpu.main
# On demand only (over an hour on one core): `python -m benchmarks paper-recipe`,
# `time-to-certified-all`; minutes: `python -m benchmarks kink-newton-step`.
ON_DEMAND = {
    "paper-recipe": paper_recipe.main,
    "gpu": gpu.main,
    "kink-newton-step": kink_newton_step.main,
    "time-to-certified-all": time_to_certified.main_all,
}


def main(argv: list[str]) -> int:
    """Run the named benchmarks (or all); returns the exit status."""
    every = {**BENCHMARKS, **ON_DEMAND}
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in every]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(every)}", file=sys.stderr)
        return 2
    print("benchmarks: ratios from one process each; the machine may be shared (noisy)")
    for name in names:
        every[name]()
    if not argv:
        paper_recipe.summary()
        if not torch.cuda.is_available():
            gpu.main()  # says what is not measured
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
