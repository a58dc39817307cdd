"""Compare the claims tables of two runs field by field (a refactor must not move them).

    python tools/compare_claims.py BASE NEW [--rtol 0]

BASE and NEW are each a run folder (`bottlenecklab run ... --out DIR`, holding
`claims.json`) or a `bottlenecklab reproduce` folder (`AREA/NAME/claims.json` below it);
in the latter case every experiment that NEW holds is compared with BASE's. For each
claim it compares the ids (same order), `state`, `expected`, `measured` and `margin`
(numbers equal up to `--rtol`, default exact). Prints one line per difference and a
summary; exit 1 when anything differs, 2 on a bad folder.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

FIELDS = ("state", "expected", "measured", "margin")


def tables(folder: Path) -> dict[str, list[dict]]:
    """`experiment (relative folder) -> claims` of a run or reproduce folder."""
    if (folder / "claims.json").exists():
        return {".": json.loads((folder / "claims.json").read_text())}
    found = sorted(folder.glob("*/*/claims.json"))
    return {str(p.parent.relative_to(folder)): json.loads(p.read_text()) for p in found}


def same(a: object, b: object, rtol: float) -> bool:
    """Equal, numbers up to `rtol` (nan equals nan)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)
    return a == b


def compare(base: list[dict], new: list[dict], rtol: float) -> list[str]:
    """The differences between two claims tables, one line each."""
    out = []
    ids_a, ids_b = [c["id"] for c in base], [c["id"] for c in new]
    if ids_a != ids_b:
        out.append(f"ids differ: {ids_a} != {ids_b}")
    by_id = {c["id"]: c for c in base}
    for c in new:
        b = by_id.get(c["id"])
        if b is None:
            continue
        for f in FIELDS:
            if not same(b.get(f), c.get(f), rtol):
                out.append(f"{c['id']}.{f}: {b.get(f)!r} -> {c.get(f)!r}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rtol", type=float, default=0.0)
    args = ap.parse_args()
    old, new = tables(args.base), tables(args.new)
    if not new or not old:
        print(f"no claims.json in {args.base if not old else args.new}", file=sys.stderr)
        sys.exit(2)
    if list(new) == ["."] and list(old) != ["."]:
        print("NEW is one run: give BASE's experiment folder", file=sys.stderr)
        sys.exit(2)
    bad = 0
    for name, claims in new.items():
        if name not in old:
            print(f"{name}: not in {args.base}")
            bad += 1
            continue
        diffs = compare(old[name], claims, args.rtol)
        bad += bool(diffs)
        status = "equal" if not diffs else f"{len(diffs)} differences"
        print(f"{name}: {len(claims)} claims, {status}")
        for d in diffs:
            print(f"  {d}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
