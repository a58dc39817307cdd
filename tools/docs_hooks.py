"""MkDocs hooks of the documentation site (`hooks:` in mkdocs.yml), run at build time.

- `on_config`: appends a "Lab notes" section holding every page of `docs/lab-notes/`
  (`index.md` first, then by name), so a new area page needs no edit of mkdocs.yml.
- `on_page_markdown`: replaces `<!-- experiments: 000 -->` (one or more source numbers)
  with a table of the registered experiments of those papers, and
  `<!-- cli-help: run -->` with the `--help` text of that subcommand (or of the program
  for `<!-- cli-help: -->`), so the tables and the options never drift from the code.

The hooks import the `bottlenecklab` of this checkout (`src/` next to mkdocs.yml), not an
installed copy.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

LAB_NOTES = "lab-notes"
_EXPERIMENTS = re.compile(r"<!--\s*experiments:\s*([0-9 ]+?)\s*-->")
_CLI_HELP = re.compile(r"<!--\s*cli-help:\s*([a-z]*)\s*-->")


def on_config(config, **kwargs):
    src = Path(config.config_file_path).resolve().parent / "src"
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))
    notes = Path(config.docs_dir) / LAB_NOTES
    pages = sorted(notes.glob("*.md"), key=lambda p: (p.name != "index.md", p.name))
    if pages and config.nav is not None:
        config.nav.append({"Lab notes": [f"{LAB_NOTES}/{p.name}" for p in pages]})
    return config


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    markdown = _EXPERIMENTS.sub(lambda m: _experiment_table(m.group(1).split()), markdown)
    return _CLI_HELP.sub(lambda m: _cli_help(m.group(1)), markdown)


def _cell(text: str) -> str:
    """Plain text safe inside a Markdown table cell."""
    for char in "\\|*_`[]":
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;")


def _experiment_table(sources: list[str]) -> str:
    from bottlenecklab.experiments import EXPERIMENTS

    rows = [
        f"| `{name}` | {_cell(exp.source)} | {_cell(exp.title)} |"
        for name, exp in sorted(EXPERIMENTS.items())
        if exp.source.split()[0] in sources
    ]
    if not rows:
        raise ValueError(f"no registered experiment has source {sources}")
    return "\n".join(["| experiment | source | reproduces |", "|---|---|---|", *rows])


def _cli_help(command: str) -> str:
    from bottlenecklab.cli import build_parser

    parser = build_parser()
    if command:
        sub = next(a for a in parser._actions if a.dest == "command")
        parser = sub.choices[command]
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal width
    try:
        text = parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return f"```text\n{text.rstrip()}\n```"
