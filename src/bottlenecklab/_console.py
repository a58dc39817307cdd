"""Console conventions shared by the command line and worker processes."""

from __future__ import annotations

import sys
import warnings

__all__ = ["one_line_warnings"]


def one_line_warnings() -> None:
    """Show every warning as one `warning: ...` line on stderr (no file/line/source echo)."""

    def show(message, category, filename, lineno, file=None, line=None):
        print("warning: " + " ".join(str(message).split()), file=sys.stderr, flush=True)

    warnings.showwarning = show
