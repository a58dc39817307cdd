"""Console conventions: warnings on one line."""

from __future__ import annotations

import warnings

from bottlenecklab._console import one_line_warnings


def test_warnings_are_printed_on_one_line(capsys, monkeypatch):
    """Even a warning whose message spans lines (torch emits some) takes one line."""
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)
    one_line_warnings()
    warnings.showwarning("first line\nsecond line", UserWarning, "x.py", 1)
    assert capsys.readouterr().err == "warning: first line second line\n"
