"""The `bottlenecklab` command (spec README, "Command-line contract").

Bad input is answered with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import json
import sys
from pathlib import Path

from bottlenecklab._console import one_line_warnings
from bottlenecklab.config import ConfigError, parse_assignment, to_dict
from bottlenecklab.files import FolderLocked, WriteError

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class BadInput(Exception):
    """A wrong option, value or file: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise BadInput(f"{self.prog}: {message} (see --help)")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expects a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def _ensemble_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects 0 (off) or a size >= 2, got {text!r}") from None
    if value < 0 or value == 1:
        raise argparse.ArgumentTypeError(f"expects 0 (off) or a size >= 2, got {value}")
    return value


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
    _add_execution(r, executor=False, jobs_default=None)

    rp = sub.add_parser("reproduce", help="run every (or --only GLOB) experiment and a report")
    rp.add_argument("--preset", default="quick")
    rp.add_argument("--out", type=Path)
    rp.add_argument(
        "--only", default="*", metavar="GLOB[,GLOB]", help="experiments to run (default: all)"
    )
    rp.add_argument("--seed", type=int, help="every experiment's seed (default: its own)")
    rp.add_argument("--device", default="auto")
    rp.add_argument("--strict", action="store_true")
    rp.add_argument("--quiet", action="store_true")
    _add_execution(rp, executor=True, jobs_default=None)

    sw = sub.add_parser("sweep", help="run a sweep file (grid x seeds) into a run store")
    sw.add_argument("spec", type=Path, metavar="SPEC_FILE")
    sw.add_argument("--out", type=Path, help="sweep folder (default runs/sweeps/<file stem>)")
    sw.add_argument("--device", default=None, help="auto | cpu | cuda (default: the file's)")
    sw.add_argument("--quiet", action="store_true")
    _add_execution(sw, executor=True, jobs_default=None)

    rep = sub.add_parser("report", help="(re)build DIR/report.html from the runs under DIR")
    rep.add_argument("dir", type=Path)

    an = sub.add_parser("analyze", help="measure the bottleneck of your own model (probe.md)")
    an.add_argument("model", metavar="MODEL", help="FILE.pt2 (torch.export) or pkg.module:factory")
    an.add_argument("data", type=Path, metavar="DATA", help=".npz (X, Y) | .npy | .csv | .pt")
    an.add_argument("--weights", type=Path, help="weights of pkg.module:factory (.safetensors/.pt)")
    an.add_argument("--layers", default="auto", metavar="GLOB", help="layer names (default: all)")
    an.add_argument("--lam", type=float, help="weight decay lambda (with Y: the regularized loss)")
    an.add_argument(
        "--cost",
        default="mse",
        metavar="COST",
        help="training cost of the loss and certificate: mse | cross_entropy (Y: one-hot "
        "rows or class labels [N]; default mse)",
    )
    an.add_argument("--out", type=Path, help="output folder (default runs/analyze/<timestamp>)")
    an.add_argument("--device", default="cpu", help="cpu | cuda | auto (default cpu)")
    an.add_argument(
        "--output",
        metavar="KEY",
        help="the output of a forward returning a tuple (an index) or a dict (a key); "
        "default: its first tensor",
    )
    an.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _add_execution(
    p: argparse.ArgumentParser, *, executor: bool, jobs_default: int | None = 1
) -> None:
    """Options of the sweep executors (`bottlenecklab.sweeps`)."""
    if executor:
        p.add_argument("--executor", default="local", help="local | ray (default local)")
        p.add_argument(
            "--address", default="auto", help="ray: HOST:PORT of a cluster, or auto (default)"
        )
        p.add_argument("--gpus-per-run", type=float, default=None, help="ray: GPUs per run")
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=jobs_default,
        help="local: runs at once (processes; default: one per core, at most one per run)",
    )
    p.add_argument(
        "--threads", type=_positive_int, default=None, help="torch threads per run (default 1)"
    )
    p.add_argument(
        "--job-memory",
        type=_positive_float,
        default=None,
        metavar="GB",
        help="local: memory budget of a run; runs start only while the memory available "
        "holds it (default 2, raised to the largest peak a run has shown)",
    )
    p.add_argument(
        "--ensemble",
        type=_ensemble_size,
        default=None,
        metavar="N",
        help="train same-shape runs' Adam/SGD phases as ensembles of up to N networks first "
        "(pays on a GPU; on a CPU only with --jobs 1 --threads <cores>; default off)",
    )


def _device(args, device: str) -> str:
    """`auto` stays `auto` on Ray (each worker looks for its own GPU); else resolved here."""
    from bottlenecklab.experiments import resolve_device

    if getattr(args, "executor", "local") == "ray" and device == "auto":
        return device
    return resolve_device(device)


def _auto_jobs(args, runs: int, threads: int) -> int:
    """`--jobs`, or one job per core (each of `threads` threads) and per `--job-memory`
    of the memory available now, at most one per run."""
    import os

    from bottlenecklab.sweeps import JOB_MEMORY_MB, available_mb

    if args.jobs is not None:
        return args.jobs
    cores = (os.cpu_count() or 1) // max(threads, 1)
    free = available_mb()
    budget = _job_memory_mb(args) or JOB_MEMORY_MB
    by_memory = int(free // budget) if free is not None else cores
    return max(1, min(runs, cores, by_memory))


def _job_memory_mb(args) -> float | None:
    """`--job-memory` in MiB (None: not given)."""
    gb = getattr(args, "job_memory", None)
    return None if gb is None else gb * 1024


def _make_executor(args, *, jobs: int | None = None, threads: int = 1, gpus: float = 0.0):
    from bottlenecklab.sweeps import make_executor

    name = getattr(args, "executor", "local")
    jobs = jobs if jobs is not None else (args.jobs or 1)
    if jobs < 1 or threads < 1:
        raise BadInput("--jobs and --threads must be >= 1")
    if name not in ("local", "ray"):
        raise BadInput(f"--executor must be local or ray, got {name!r}")
    if name == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise BadInput("--executor ray needs Ray: pip install 'bottlenecklab[ray]'") from None
    address = getattr(args, "address", "auto")
    return make_executor(
        name,
        jobs=jobs,
        threads=threads,
        address=address,
        gpus_per_run=gpus,
        memory_mb=_job_memory_mb(args),
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    one_line_warnings()
    try:
        args = build_parser().parse_args(argv)
        return {
            "list": _list,
            "run": _run,
            "reproduce": _reproduce,
            "report": _report,
            "sweep": _sweep,
            "analyze": _analyze,
        }[args.command](args)
    except (BadInput, ConfigError, FolderLocked, WriteError) as e:
        _say(f"error: {e}")
        return EXIT_BAD_INPUT
    except OSError as e:  # a path that cannot be used: permissions, a file for a folder...
        where = f"{e.filename}: " if e.filename else ""
        _say(f"error: {where}{e.strerror or e}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("interrupted: finished runs and checkpoints are kept; run the same command again")
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


def _out_folder(path: Path) -> Path:
    """An output folder: refused in one line when the path is an existing file."""
    if path.exists() and not path.is_dir():
        raise BadInput(f"--out {path} is a file, not a folder")
    return path


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
    from bottlenecklab.experiments import resolve_config, resolve_device, state_of

    exp = _experiment(args.name)
    device = resolve_device(args.device)
    overrides = _overrides(args.overrides)
    if args.resume:
        out = _out_folder(args.out or _latest_run(exp.name))
        cfg, preset, overrides = _saved_config(exp, out, args, overrides)
    else:
        cfg = resolve_config(exp, args.preset, overrides, args.seed)
        preset = args.preset
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = _out_folder(args.out or Path("runs") / exp.name / stamp)
        if (out / "config.json").exists():
            raise BadInput(f"{out} already holds a run: use --resume or another --out")
    resume = "strict" if args.resume else False
    from bottlenecklab.experiments import expand_points

    threads = args.threads or 1
    jobs = _auto_jobs(args, len(expand_points(exp, cfg)), threads)
    executor = _make_executor(args, jobs=jobs, threads=threads)
    record = _execute(
        exp,
        cfg,
        out,
        preset,
        overrides,
        device,
        resume,
        args.quiet,
        executor,
        args.threads or 1,
        args.ensemble or 0,
    )
    unmet = any(state_of(c) != "passed" for c in record.claims if c.asserted)
    return 1 if args.strict and unmet else 0


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


def _execute(exp, cfg, out, preset, overrides, device, resume, quiet, executor, threads, ensemble):
    from bottlenecklab.experiments import Job

    job = Job(exp, cfg, out, preset, overrides, resume)
    return _execute_all([job], device, quiet, executor, threads, ensemble)[0]


def _execute_all(jobs, device, quiet, executor, threads, ensemble):
    """Run `jobs` (`run_experiments`), print each one's verdicts and render its summary."""
    from bottlenecklab.experiments import check_resumable, run_experiments, state_of, states_line
    from bottlenecklab.report import render_run
    from bottlenecklab.training import CheckpointError

    def report(record) -> None:
        summary = render_run(record)
        _say(f"{record.name}: {states_line(record.claims)}")
        for c in record.claims:
            mark = state_of(c).upper()
            why = f" ({c.certificate['reason']})" if (c.certificate or {}).get("reason") else ""
            _say(f"  [{mark}] {c.id}: measured {c.measured}, expected {c.expected}{why}")
        _say(f"  summary: {summary}")
        _say(f"  figures: {record.out / 'figures'}")

    try:
        for job in jobs:
            if job.resume == "strict":
                check_resumable(job.out, job.exp, job.cfg)
        return run_experiments(
            jobs,
            device=device,
            progress=False if quiet else None,
            log=_say,
            executor=executor,
            threads=threads,
            ensemble=ensemble,
            on_record=report,
        )
    except CheckpointError as e:
        raise BadInput(f"--resume: {e}") from None
    except KeyboardInterrupt:
        if len(jobs) == 1:
            hint = f"bottlenecklab run {jobs[0].exp.name} --resume --out {jobs[0].out}"
        else:
            hint = "the same reproduce command (finished points are kept)"
        _say(f"interrupted: checkpoints kept; continue with: {hint}")
        raise SystemExit(EXIT_INTERRUPTED) from None


def _reproduce(args) -> int:
    from bottlenecklab.experiments import EXPERIMENTS
    from bottlenecklab.report import build_report

    device = _device(args, args.device)
    threads = args.threads or 1
    jobs = _auto_jobs(args, 10**6, threads)  # experiments have several points each
    executor = _make_executor(args, jobs=jobs, threads=threads, gpus=args.gpus_per_run or 0.0)
    globs = [g.strip() for g in args.only.split(",") if g.strip()]
    names = sorted(n for n in EXPERIMENTS if any(fnmatch.fnmatch(n, g) for g in globs))
    if not names:
        raise BadInput(f"--only {args.only!r} matches no experiment; see `bottlenecklab list`")
    root = _out_folder(args.out or Path("runs") / f"reproduce-{args.preset}")
    try:
        failed = _reproduce_all(args, names, root, device, executor, threads)
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    report = build_report(root)
    _say(f"report: {report}")
    return 1 if args.strict and failed else 0


def _reproduce_all(args, names, root, device, executor, threads) -> int:
    """Every experiment of `names` into `root/NAME`, their points queued together on one
    executor (`run_experiments`); a folder with the same config is continued."""
    from bottlenecklab.experiments import EXPERIMENTS, Job, resolve_config, state_of

    jobs = []
    for name in names:
        exp = EXPERIMENTS[name]
        cfg = resolve_config(exp, args.preset, seed=args.seed)
        out = root / name
        resume = False
        if (out / "config.json").is_file():
            saved = json.loads((out / "config.json").read_text()).get("config")
            if saved != json.loads(json.dumps(to_dict(cfg))):
                raise BadInput(f"{out} holds a run with another config: use another --out")
            resume = True  # same config: finished points are reused, the rest continued
        jobs.append(Job(exp, cfg, out, args.preset, {}, resume))
    records = _execute_all(jobs, device, args.quiet, executor, threads, args.ensemble or 0)
    return sum(state_of(c) != "passed" for r in records for c in r.claims if c.asserted)


def _sweep(args) -> int:
    import os

    from bottlenecklab.experiments import run_sweep_spec, sweep_requests
    from bottlenecklab.sweeps import Progress, SpecError, load_spec

    try:
        spec = load_spec(args.spec)
        runs = len(sweep_requests(spec)[1])
    except SpecError as e:
        raise BadInput(str(e)) from None
    device = _device(args, args.device or spec.device)
    threads = args.threads or spec.threads
    jobs = args.jobs or spec.jobs or max(1, min(runs, (os.cpu_count() or 1) // threads))
    gpus = args.gpus_per_run if args.gpus_per_run is not None else spec.gpus_per_run
    executor = _make_executor(args, jobs=jobs, threads=threads, gpus=gpus)
    out = _out_folder(args.out or Path("runs") / "sweeps" / args.spec.stem)
    where = f"{jobs} job(s)" if args.executor == "local" else f"ray at {args.address}"
    _say(f"sweep {args.spec}: {runs} run(s) into {out} ({args.executor}, {where})")
    try:
        report, tables = run_sweep_spec(
            spec,
            out,
            executor,
            device=device,
            threads=threads,
            progress=Progress(runs, quiet=args.quiet),
            ensemble=args.ensemble,
        )
    except SpecError as e:
        raise BadInput(str(e)) from None
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    _say(
        f"sweep: {report.done + report.skipped}/{report.total} done "
        f"({report.skipped} already done), {report.failed} failed"
    )
    for rid in report.failed_ids:
        _say(f"  FAILED {rid}: see {out / 'runs' / rid / 'traceback.txt'}")
    _say(f"  summary: {tables['summary']}")
    return 1 if report.failed else 0


def _report(args) -> int:
    from bottlenecklab.report import build_report, find_runs

    if not args.dir.is_dir():
        raise BadInput(f"report: {args.dir} is not a folder")
    if not find_runs(args.dir):
        raise BadInput(f"report: no runs (claims.json + config.json) under {args.dir}")
    _say(f"report: {build_report(args.dir)}")
    return 0


def _output_key(key: str | None) -> int | str | None:
    """`--output`: an index when it is a whole number, else a dict key."""
    return int(key) if key is not None and key.lstrip("-").isdigit() else key


def _analyze(args) -> int:
    """`bottlenecklab analyze`: the probe's table, summary, figures and report into --out;
    any bad input is one line and exit 2, before anything is written."""
    import warnings

    from bottlenecklab.probe import BottleneckProbe, CaptureError, ProbeError, load_data, load_model

    out = _out_folder(
        args.out or Path("runs") / "analyze" / _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    # Library warnings while reading and measuring (torch deprecations, numpy on an empty
    # file) would break the one-line answer to bad input: the error says what matters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if args.cost not in ("mse", "cross_entropy"):
                raise BadInput(f"analyze: --cost must be mse or cross_entropy, got {args.cost!r}")
            model = load_model(args.model, args.weights)
            X, Y = load_data(args.data)
            if args.lam is not None and Y is None:
                raise BadInput(f"--lam needs targets Y in {args.data} (an .npz or .pt with Y)")
            probe = BottleneckProbe(
                model,
                X,
                Y,
                args.lam,
                args.cost,
                layers=args.layers,
                device=args.device,
                progress=False if args.quiet else None,
                output=_output_key(args.output),
            )
            summary = probe.summary()  # everything is computed before anything is written
        except (ProbeError, CaptureError) as e:
            raise BadInput(f"analyze: {e}") from None
        report = probe.report(out)
    _say(f"analyze: {summary['verdicts']['bottleneck']}")
    _say(f"  table: {out / 'layers.parquet'}  summary: {out / 'summary.json'}")
    _say(f"  figures: {out / 'figures'}  report: {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
