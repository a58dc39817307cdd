"""Rewrite call sites to the concept names of `bottlenecklab.measure` and `bottlenecklab.theory`
(issue 35, item 2: one name per quantity, concept names instead of paper numbers).

    python tools/rename_concepts.py           # src tests benchmarks tools examples docs README.md
    python tools/rename_concepts.py --check   # list what would change, exit 1 if anything would
    python tools/rename_concepts.py PATH ...  # only these files or folders

Idempotent: a second run changes nothing. What it rewrites:

- Python files that use `bottlenecklab.measure` / `bottlenecklab.theory` (or live in them):
  every identifier token (`tokenize` NAME) equal to an old name of `NAMES` whose package
  the file uses, in `import` lines and uses alike (`from bottlenecklab.theory import eq6`,
  `eq6(phi)`, `theory.eq6`, `M.loss_grad_norm`); old names inside backtick spans of
  docstrings and comments (a name in `AMBIGUOUS`, which is also a claim id, only as
  `pkg.name` or `name(`); the `__all__` entries of the packages' own files; dotted paths
  and `from PKG import _mod` of the private modules in `MODULES`. Other strings (claim
  ids, table and column names such as `"eq6"`) are never touched. Docstring and comment
  lines a longer name pushed past the line length are reflowed; then `ruff check --select
  I,RUF022 --fix` and `ruff format` run on the files it changed. A file that ends up
  importing one new name twice (two old names merged into one, from two packages) is
  reported and the run exits 1.
- Markdown outside `docs/lab-notes/` and `CHANGELOG.md` (dated records keep the names of
  their day): old names inside inline code spans and fenced code blocks. Names that are
  also claim ids (`AMBIGUOUS`) are left alone in table rows.

Lines marked `rename-concepts: keep` and files marked `rename-concepts: skip-file` are left
alone. The old names that dated records still use stay importable as deprecated aliases (module
`__getattr__` of the package, `DeprecationWarning` on access); the rest are gone.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = ("src", "tests", "benchmarks", "tools", "examples", "docs", "README.md")
SKIP_MARKDOWN = ("docs/lab-notes/", "CHANGELOG.md")

# old name -> (package, new name). One row per renamed public name.
NAMES: dict[str, tuple[str, str]] = {
    # measure: one quantity, one name (`regularized_loss(...)["grad_norm"]`)
    "loss_grad_norm": ("measure", "gradient_norm"),
    # (measure's Thm 4 rows, theorem4* and window_summary, are gone: their new names are
    # used by leaky-resnet/path-bounds alone and live off the face, in measure._path_bounds)
    # theory: paper 000, Thm 4 (2) -> the window around a layer's speed
    "thm4_layer_window": ("theory", "speed_window"),
    "Thm4Window": ("theory", "SpeedWindow"),
    # theory: paper 000, Prop 1 -> the COI lower bound
    "prop1_sweep": ("theory", "coi_lower_bound_sweep"),
    # theory: paper 001, Example 20 -> a function whose optimal representations are not
    # uniformly Lipschitz
    "example20_target": ("theory", "non_lipschitz_target"),
    "example20_weights": ("theory", "non_lipschitz_weights"),
    "example20_norm_sq": ("theory", "non_lipschitz_norm_sq"),
    "example20_excess": ("theory", "non_lipschitz_excess"),
    # theory: paper 003, Eq. 6 -> the width-1 speed on the circle in closed form
    "eq6": ("theory", "circle_width1_speed"),
    # theory: paper 003, Thm 3.1 and Prop 3.4 -> low rank at escape directions
    "thm31_bound": ("theory", "escape_low_rank_bound"),
    "thm31_constant": ("theory", "escape_low_rank_constant"),
    "prop34_terms": ("theory", "escape_low_rank_budget"),
    # theory: paper 004, Remark 23 -> the full-width fit of the bipartite target
    "remark23_weights": ("theory", "bipartite_full_width_weights"),
}

# old private module -> new (renamed or merged by concept)
MODULES: dict[str, str] = {
    "bottlenecklab.measure._balancedness": "bottlenecklab.measure._balance",
    "bottlenecklab.measure._fcnn_balance": "bottlenecklab.measure._balance",
    "bottlenecklab.measure._cnn": "bottlenecklab.measure._frequency",
    "bottlenecklab.measure._fcnn_layers": "bottlenecklab.measure._layer_ranks",
    "bottlenecklab.measure._l2_balance": "bottlenecklab.measure._forces",
    "bottlenecklab.measure._l2_reformulation": "bottlenecklab.measure._reformulation",
    "bottlenecklab.measure._l2_sparsity": "bottlenecklab.measure._sparsity",
    "bottlenecklab.measure._l2_views": "bottlenecklab.measure._views",
    "bottlenecklab.measure._pca": "bottlenecklab.measure._views",
    "bottlenecklab.measure._rank_groups": "bottlenecklab.measure._rank_depth",
    "bottlenecklab.measure._saddle": "bottlenecklab.measure._saddles",
    "bottlenecklab.theory._thm4": "bottlenecklab.theory._speed_window",
    "bottlenecklab.theory._l2_forces": "bottlenecklab.theory._forces",
    "bottlenecklab.theory._l2_merging": "bottlenecklab.theory._merging",
    "bottlenecklab.theory._l2_reformulation": "bottlenecklab.theory._reformulation",
    "bottlenecklab.theory._l2_sparsity": "bottlenecklab.theory._sparsity",
}

# old names that are also claim ids (left alone in markdown table rows)
AMBIGUOUS = {"eq6"}

LINE = 100  # ruff's line-length (pyproject.toml)


def _uses(text: str, path: Path) -> set[str]:
    """The packages (`measure`, `theory`) whose names `text` may use."""
    parts = path.resolve().parts
    found = {pkg for pkg in ("measure", "theory") if ("bottlenecklab", pkg) == parts[-3:-1]}
    for pkg in ("measure", "theory"):
        if re.search(rf"bottlenecklab\.{pkg}\b", text) or re.search(
            rf"from\s+bottlenecklab\s+import\s+[^\n]*\b{pkg}\b", text
        ):
            found.add(pkg)
    return found


def _rename_modules(text: str) -> str:
    for old, new in MODULES.items():
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        pkg, mod = old.rsplit(".", 1)
        new_mod = new.rsplit(".", 1)[1]
        text = re.sub(rf"(from\s+{re.escape(pkg)}\s+import\s+){mod}\b", rf"\g<1>{new_mod}", text)
    return text


def _in_package(path: Path) -> str | None:
    parts = path.resolve().parts
    home = parts[-3:-1]
    return home[1] if home in {("bottlenecklab", "measure"), ("bottlenecklab", "theory")} else None


def _code_spans(text: str, old: dict[str, str]) -> str:
    """Old names replaced inside the backtick spans of a docstring or comment; a name that
    is also a claim id only as `pkg.name` or `name(`."""

    def span(m: re.Match) -> str:
        seg = m.group(0)
        for name, new in old.items():
            ok = rf"(?<=\.){re.escape(name)}(?![\w\-])|(?<![\w\-]){re.escape(name)}(?=\()"
            pat = ok if name in AMBIGUOUS else rf"(?<![\w\-]){re.escape(name)}(?![\w\-])"
            seg = re.sub(pat, new, seg)
        return seg

    return re.sub(r"`[^`\n]+`", span, text)


def rewrite_python(text: str, path: Path) -> str:
    """`text` with the old names of the packages it uses replaced: identifier tokens, names
    in backtick spans of strings and comments, and (inside the packages) `__all__` entries.
    Lines marked `rename-concepts: keep` are left alone."""
    pkgs = _uses(text, path)
    text = _rename_modules(text)
    old = {name: new for name, (pkg, new) in NAMES.items() if pkg in pkgs}
    if not old:
        return text
    home = _in_package(path)
    own = {name: new for name, (pkg, new) in NAMES.items() if pkg == home}
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    keep = {i + 1 for i, line in enumerate(lines) if "rename-concepts: keep" in line}
    edits: list[tuple[int, int, str]] = []  # (start, end, new text)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.start[0] in keep:
            continue
        a = starts[tok.start[0] - 1] + tok.start[1]
        b = starts[tok.end[0] - 1] + tok.end[1]
        if tok.type == tokenize.NAME and tok.string in old:
            edits.append((a, b, old[tok.string]))
        elif tok.type == tokenize.STRING and tok.string[1:-1] in own and tok.string[0] in "\"'":
            edits.append((a, b, tok.string[0] + own[tok.string[1:-1]] + tok.string[-1]))
        elif tok.type in (tokenize.STRING, tokenize.COMMENT) or tok.type == getattr(
            tokenize, "FSTRING_MIDDLE", -1
        ):
            new = _code_spans(tok.string, old)
            if new != tok.string:
                edits.append((a, b, new))
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return _wrap_prose(text, set(old.values()))


def _wrap_prose(text: str, names: set[str]) -> str:
    """Reflow the docstring and comment lines that a new name made longer than `LINE`: the
    words past the limit move to the start of the next line of the same paragraph (or to a
    new line). Code lines are left to `ruff format`."""
    prose: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            prose.update(range(tok.start[0], tok.end[0] + 1))
    lines = text.splitlines(keepends=True)
    starts = (" ", "-", "*", "|", "`", '"""', "Args", "Returns")
    i, carried = 0, False
    while i < len(lines):
        body, end = lines[i].rstrip("\n"), lines[i][len(lines[i].rstrip("\n")) :]
        touched = carried or any(n in body for n in names)
        carried = False
        if i + 1 not in prose or len(body) <= LINE or not touched:
            i += 1
            continue
        indent = body[: len(body) - len(body.lstrip())]
        if body.lstrip().startswith("#"):
            indent += "# "
        cut = body.rfind(" ", 0, LINE + 1)
        if cut <= len(indent):
            i += 1
            continue
        head, rest = body[:cut].rstrip(), body[cut + 1 :]
        nxt = lines[i + 1].rstrip("\n") if i + 1 < len(lines) else ""
        same = (
            i + 2 in prose
            and nxt.strip()
            and nxt[: len(indent)] == indent
            and not nxt[len(indent) :].startswith(starts)
        )
        lines[i] = head + end
        if same:
            lines[i + 1] = indent + rest + " " + nxt[len(indent) :] + lines[i + 1][len(nxt) :]
        else:
            lines.insert(i + 1, indent + rest + end)
        i, carried = i + 1, True
    return "".join(lines)


def _md_sub(segment: str, table_row: bool) -> str:
    for name, (_, new) in NAMES.items():
        if table_row and name in AMBIGUOUS:
            continue
        segment = re.sub(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", new, segment)
    return segment


def rewrite_markdown(text: str) -> str:
    """Old names replaced inside inline code spans and fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(_md_sub(_rename_modules(line), False))
            continue
        row = line.lstrip().startswith("|")
        out.append(
            re.sub(r"`[^`\n]+`", lambda m, r=row: _md_sub(_rename_modules(m.group(0)), r), line)
        )
    return "".join(out)


def duplicate_imports(text: str) -> list[str]:
    """Names bound twice by `from ... import` statements of one module (top level)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    seen: dict[str, str] = {}
    dup = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound in seen and seen[bound] != node.module:
                    dup.append(bound)
                seen[bound] = node.module or ""
    return dup


def files(paths: list[str]) -> list[Path]:
    out = []
    for p in paths:
        path = ROOT / p
        if path.is_dir():
            out += sorted(q for q in path.rglob("*") if q.suffix in {".py", ".md"})
        elif path.is_file():
            out.append(path)
    this = Path(__file__).resolve()
    return [q for q in out if q.resolve() != this and ".venv" not in q.parts]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    ap.add_argument("--check", action="store_true", help="only list the files that would change")
    args = ap.parse_args(argv)
    changed, problems = [], []
    for path in files(args.paths):
        rel = path.resolve().relative_to(ROOT).as_posix()
        text = path.read_text()
        if "rename-concepts: skip-file" in text:
            continue
        if path.suffix == ".py":
            new = rewrite_python(text, path)
        elif any(rel.startswith(s) for s in SKIP_MARKDOWN):
            continue
        else:
            new = rewrite_markdown(text)
        if new == text:
            continue
        changed.append(path)
        print(("would rewrite " if args.check else "rewrote ") + rel)
        if path.suffix == ".py" and (dup := duplicate_imports(new)):
            problems.append(f"{rel}: imports {', '.join(sorted(set(dup)))} twice")
        if not args.check:
            path.write_text(new)
    py = [str(p) for p in changed if p.suffix == ".py"]
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if py and not args.check and Path(ruff).exists():
        subprocess.run([ruff, "check", "--select", "I,RUF022", "--fix", "--quiet", *py], cwd=ROOT)
        subprocess.run([ruff, "format", "--quiet", *py], cwd=ROOT)
    for p in problems:
        print("problem:", p, file=sys.stderr)
    return 1 if problems or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
