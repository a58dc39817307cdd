"""`python -m benchmarks [NAME ...]`: run the speed benchmarks (all by default)."""

from __future__ import annotations

import sys

import torch

from benchmarks import convergence, ensemble, executor, naive, paper_recipe, paper_size, stack

BENCHMARKS = {
    "convergence": convergence.main,
    "ensemble": ensemble.main,
    "executor": executor.main,
    "naive": naive.main,
    "paper-size": paper_size.main,
    "stack": stack.main,
}
# On demand only (over an hour on one core): `python -m benchmarks paper-recipe`.
ON_DEMAND = {"paper-recipe": paper_recipe.main}


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
        print(
            "not in this set: the paper recipe at paper size against ours (over an hour on "
            "one core: `python -m benchmarks paper-recipe`, result in the README); "
            + (
                "GPU step time and ensemble speed-up: run on the GPU machine"
                if torch.cuda.is_available()
                else "GPU step time and ensemble speed-up (no CUDA device here)"
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
