"""The counts of issue 42 (quantities declared once and typed), from the source tree.

    python tools/quantity_counts.py [--names RUN_FOLDER]

Prints, one per line:

- `scalar-key reads`: string literals under `src/bottlenecklab/experiments/` that read a
  per-point scalar by name: a subscript (`scalars["x"]`, `top["x"]`), the first argument
  of `.get(...)`, `.values(...)`, `.value(...)`, an element of `Reads((...))`, or a
  `PREV + "x"` key; a literal counts when its value (or `prev_`/`cert_`/`ext_` + it) is
  a scalar name of the run folder's `summary.parquet` files (default `/tmp/smoke-base`,
  a `bottlenecklab reproduce --preset smoke` folder), so dict keys of other tables do not;
- `claim ids retyped in tests`: string literals under `tests/` equal to a declared claim
  id (or a tagged one, `id(lam=...)`): distinct ids and occurrences; the same for
  `experiments/_findings.py` and `_awaiting.py`;
- `experiment module lines`: the median and largest line count of the experiment modules;
- `hand-written measure()`: experiment modules that define `measure`, and its lines;
- `re-export lines`: lines of the import statements and `__all__` lists of the package
  faces (every `__init__.py` and the public modules of `measure` and `theory`).
"""

from __future__ import annotations

import argparse
import ast
import glob
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "bottlenecklab"
PREFIXES = ("", "prev_", "cert_", "ext_")


def scalar_names(folder: str) -> set[str]:
    """The per-point scalar names of a reproduce folder (`metric.*` columns)."""
    import pandas as pd

    names: set[str] = set()
    for f in glob.glob(f"{folder}/**/summary.parquet", recursive=True):
        cols = pd.read_parquet(f).columns
        names |= {c[7:] for c in cols if c.startswith("metric.")}
    return names


def _is_scalar(value: object, names: set[str]) -> bool:
    if not isinstance(value, str) or not value:
        return False
    return any(p + value in names for p in PREFIXES)


def scalar_reads(names: set[str]) -> tuple[int, dict[str, int]]:
    """Scalar reads by string key under experiments/ (total, per file)."""
    per: dict[str, int] = {}
    for path in sorted((SRC / "experiments").rglob("*.py")):
        tree = ast.parse(path.read_text())
        keys: list[ast.AST] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                keys.append(node.slice)
            elif isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr in ("get", "values", "value"):
                    keys.extend(node.args[:1])
                elif isinstance(f, ast.Name) and f.id == "Reads" and node.args:
                    first = node.args[0]
                    keys.extend(first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first])
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                if isinstance(node.left, ast.Name) and node.left.id == "PREV":
                    keys.append(node.right)
        n = sum(isinstance(k, ast.Constant) and _is_scalar(k.value, names) for k in keys)
        if n:
            per[str(path.relative_to(SRC))] = n
    return sum(per.values()), per


def claim_ids() -> set[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from bottlenecklab.experiments import EXPERIMENTS

    return {s.id for e in EXPERIMENTS.values() for s in e.specs}


def retyped(ids: set[str], files: list[Path]) -> tuple[int, int]:
    """(distinct claim ids, occurrences) written as string literals in `files`."""
    seen: list[str] = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                base = node.value.split("(")[0]
                if base in ids:
                    seen.append(base)
    return len(set(seen)), len(seen)


def module_lines() -> tuple[float, int, int]:
    mods = [p for p in (SRC / "experiments").glob("*/*.py") if not p.name.startswith("_")]
    lines = [len(p.read_text().splitlines()) for p in mods]
    return statistics.median(lines), max(lines), len(mods)


def measure_functions() -> tuple[int, int]:
    """(experiment modules with a hand-written `measure`, their lines in all)."""
    n = lines = 0
    for path in (SRC / "experiments").glob("*/*.py"):
        if path.name.startswith("_"):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == "measure":
                n += 1
                lines += node.end_lineno - node.lineno + 1
    return n, lines


def reexport_lines() -> int:
    faces = list(SRC.rglob("__init__.py"))
    for pkg in ("measure", "theory"):
        faces += [p for p in (SRC / pkg).glob("*.py") if not p.name.startswith("_")]
    total = 0
    for path in faces:
        for node in ast.parse(path.read_text()).body:
            is_all = isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            )
            if isinstance(node, ast.ImportFrom) and node.module != "__future__" or is_all:
                total += node.end_lineno - node.lineno + 1
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default="/tmp/smoke-base", help="a reproduce folder")
    ap.add_argument("--per-file", action="store_true")
    args = ap.parse_args()
    names = scalar_names(args.names)
    if not names:
        sys.exit(f"no summary.parquet under {args.names}")
    total, per = scalar_reads(names)
    print(f"scalar-key reads under experiments/: {total} ({len(names)} scalar names)")
    if args.per_file:
        for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
            print(f"  {v:4d} {k}")
    ids = claim_ids()
    d, n = retyped(ids, sorted((ROOT / "tests").rglob("*.py")))
    print(f"claim ids retyped in tests: {d} of {len(ids)} ids, {n} occurrences")
    regs = [SRC / "experiments" / "_findings.py", SRC / "experiments" / "_awaiting.py"]
    d, n = retyped(ids, [p for p in regs if p.exists()])
    print(f"claim ids retyped in _findings/_awaiting: {d} ids, {n} occurrences")
    med, top, count = module_lines()
    print(f"experiment module lines: median {med}, largest {top} ({count} modules)")
    n, lines = measure_functions()
    print(f"hand-written measure(): {n} modules, {lines} lines")
    print(f"re-export lines: {reexport_lines()}")


if __name__ == "__main__":
    main()
