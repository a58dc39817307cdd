"""The `bottlenecklab` command (spec README, "Command-line contract").

Bad input is answered with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import json
import sys
import warnings
from pathlib import Path

from bottlenecklab.config import ConfigError, parse_assignment, to_dict

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class BadInput(Exception):
    """A wrong option, value or file: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise BadInput(f"{self.prog}: {message} (see --help)")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _one_line_warnings() -> None:
    def show(message, category, filename, lineno, file=None, line=None):
        _say(f"warning: {message}")

    warnings.showwarning = show


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    p = _Parser(prog="bottlenecklab", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sub.add_parser("list", help="every experiment: name, source, one line")

    r = sub.add_parser("run", help="run one experiment")
    r.add_argument("name")
    r.add_argument("--preset", default="quick", help="smoke | quick | paper (default quick)")
    r.add_argument("--out", type=Path, help="run folder (default runs/NAME/<timestamp>)")
    r.add_argument("--seed", type=int)
    r.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--device", default="auto", help="auto | cpu | cuda")
    r.add_argument("--resume", action="store_true", help="continue the run in --out (or latest)")
    r.add_argument("--strict", action="store_true", help="exit 1 when a claim fails")
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    rp = sub.add_parser("reproduce", help="run every (or --only GLOB) experiment and a report")
    rp.add_argument("--preset", default="quick")
    rp.add_argument("--out", type=Path)
    rp.add_argument("--only", default="*", metavar="GLOB")
    rp.add_argument("--executor", default="local", help="local | ray")
    rp.add_argument("--device", default="auto")
    rp.add_argument("--strict", action="store_true")
    rp.add_argument("--quiet", action="store_true")

    rep = sub.add_parser("report", help="(re)build DIR/report.html from the runs under DIR")
    rep.add_argument("dir", type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    _one_line_warnings()
    try:
        args = build_parser().parse_args(argv)
        return {"list": _list, "run": _run, "reproduce": _reproduce, "report": _report}[
            args.command
        ](args)
    except (BadInput, ConfigError) as e:
        _say(f"error: {e}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("interrupted: finished points and checkpoints are kept; rerun with --resume")
        return EXIT_INTERRUPTED


def _list(args) -> int:
    from bottlenecklab.experiments import EXPERIMENTS

    width = max(len(n) for n in EXPERIMENTS)
    for name, exp in sorted(EXPERIMENTS.items()):
        print(f"{name:<{width}}  {exp.source:<14}  {exp.title}")
    return 0


def _experiment(name: str):
    from bottlenecklab.experiments import UnknownExperiment, get

    try:
        return get(name)
    except UnknownExperiment as e:
        raise BadInput(str(e)) from None


def _overrides(items: list[str]) -> dict[str, str]:
    return dict(parse_assignment(s) for s in items)


def _latest_run(name: str) -> Path:
    base = Path("runs") / name
    runs = (
        sorted(p for p in base.glob("*") if (p / "config.json").is_file()) if base.is_dir() else []
    )
    if not runs:
        raise BadInput(f"--resume: no earlier run of {name} under {base} (give --out DIR)")
    return runs[-1]


def _run(args) -> int:
    from bottlenecklab.experiments import resolve_config, resolve_device

    exp = _experiment(args.name)
    device = resolve_device(args.device)
    overrides = _overrides(args.overrides)
    if args.resume:
        out = args.out or _latest_run(exp.name)
        cfg, preset, overrides = _saved_config(exp, out, args, overrides)
    else:
        cfg = resolve_config(exp, args.preset, overrides, args.seed)
        preset = args.preset
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = args.out or Path("runs") / exp.name / stamp
        if (out / "config.json").exists():
            raise BadInput(f"{out} already holds a run: use --resume or another --out")
    resume = "strict" if args.resume else False
    record = _execute(exp, cfg, out, preset, overrides, device, resume, args.quiet)
    return 1 if args.strict and not all(c.passed for c in record.claims) else 0


def _saved_config(exp, out: Path, args, overrides):
    from bottlenecklab.config import from_dict

    f = out / "config.json"
    if not f.is_file():
        raise BadInput(f"--resume: no run to resume in {out} (config.json missing)")
    try:
        meta = json.loads(f.read_text())
        cfg = from_dict(type(exp.config), meta["config"])
    except (ValueError, KeyError, TypeError) as e:
        raise BadInput(f"--resume: {f} is not a readable run config ({e})") from None
    if meta.get("experiment") != exp.name:
        raise BadInput(f"--resume: {out} is a run of {meta.get('experiment')}, not {exp.name}")
    if overrides or args.seed is not None:
        raise BadInput("--resume continues the saved config: drop --set/--seed")
    return cfg, meta.get("preset", "?"), meta.get("overrides", {})


def _execute(exp, cfg, out, preset, overrides, device, resume, quiet):
    from bottlenecklab.experiments import check_resumable, run_experiment
    from bottlenecklab.report import render_run
    from bottlenecklab.training import CheckpointError

    try:
        if resume == "strict":
            check_resumable(out, exp, cfg)
        record = run_experiment(
            exp,
            cfg,
            out,
            preset=preset,
            overrides=overrides,
            device=device,
            resume=resume,
            progress=False if quiet else None,
            log=_say,
        )
    except CheckpointError as e:
        raise BadInput(f"--resume: {e}") from None
    except KeyboardInterrupt:
        _say(
            f"interrupted: checkpoints kept; continue with: bottlenecklab run {exp.name} "
            f"--resume --out {out}"
        )
        raise SystemExit(EXIT_INTERRUPTED) from None
    summary = render_run(record)
    passed = sum(c.passed for c in record.claims)
    _say(f"{exp.name}: {passed}/{len(record.claims)} claims pass")
    for c in record.claims:
        _say(
            f"  [{'PASS' if c.passed else 'FAIL'}] {c.id}: measured {c.measured}, "
            f"expected {c.expected}"
        )
    _say(f"  summary: {summary}")
    _say(f"  figures: {out / 'figures'}")
    return record


def _reproduce(args) -> int:
    from bottlenecklab.experiments import EXPERIMENTS, resolve_config, resolve_device
    from bottlenecklab.report import build_report

    device = resolve_device(args.device)
    if args.executor != "local":
        raise BadInput(f"--executor must be local, got {args.executor!r}")
    names = sorted(n for n in EXPERIMENTS if fnmatch.fnmatch(n, args.only))
    if not names:
        raise BadInput(f"--only {args.only!r} matches no experiment; see `bottlenecklab list`")
    root = args.out or Path("runs") / f"reproduce-{args.preset}"
    failed = 0
    for name in names:
        exp = EXPERIMENTS[name]
        cfg = resolve_config(exp, args.preset)
        out = root / name
        resume = False
        if (out / "config.json").is_file():
            saved = json.loads((out / "config.json").read_text()).get("config")
            if saved != json.loads(json.dumps(to_dict(cfg))):
                raise BadInput(f"{out} holds a run with another config: use another --out")
            resume = True  # same config: finished points are reused, the rest continued
        record = _execute(exp, cfg, out, args.preset, {}, device, resume, args.quiet)
        failed += sum(not c.passed for c in record.claims)
    report = build_report(root)
    _say(f"report: {report}")
    return 1 if args.strict and failed else 0


def _report(args) -> int:
    from bottlenecklab.report import build_report, find_runs

    if not args.dir.is_dir():
        raise BadInput(f"report: {args.dir} is not a folder")
    if not find_runs(args.dir):
        raise BadInput(f"report: no runs (claims.json + config.json) under {args.dir}")
    _say(f"report: {build_report(args.dir)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
