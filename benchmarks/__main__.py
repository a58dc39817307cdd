"""`python -m benchmarks [NAME ...]`: run the speed benchmarks (all by default)."""

from __future__ import annotations

import sys

from benchmarks import ensemble, executor, naive, stack

BENCHMARKS = {
    "ensemble": ensemble.main,
    "executor": executor.main,
    "naive": naive.main,
    "stack": stack.main,
}


def main(argv: list[str]) -> int:
    """Run the named benchmarks (or all); returns the exit status."""
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    print("benchmarks: ratios from one process each; the machine may be shared (noisy)")
    for name in names:
        BENCHMARKS[name]()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
