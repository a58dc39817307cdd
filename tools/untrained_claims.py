"""Vacuity check: an experiment's claims on its untrained networks (spec `depth-and-rank.md`,
fourth review, "Vacuity rule").

    python tools/untrained_claims.py fcnn/bottleneck-bounds --preset quick --out /tmp/audit

Runs the experiment through the ordinary runner with every training phase cut to zero
steps (the networks stay at their seeded initialization), then judges each claim's own
criterion again on those points, gate aside: an asserted claim whose criterion also holds
there (`criterion` = `holds`) cannot tell a trained network from an untrained one and is
vacuous unless the claim is a statement about every network (an identity or a theorem,
`ungated` in the experiment; judge those on a wrong input instead). The runner's verdict
(`state`, normally `not-converged`) is printed beside it. One Markdown table row per
claim on stdout: experiment, claim, criterion, untrained value, criterion's result,
state. An experiment that does not train (`Experiment.trains` false) but optimizes on its
own (escape directions, COI minima) runs only with `--set` cutting that optimizer's steps
(e.g. `--set steps=0`); one without an optimizer has no untrained state at all. Exit 2
with one line on a bad argument.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from bottlenecklab.config import ConfigError, apply_overrides
from bottlenecklab.experiments import (
    EXPERIMENTS,
    Claim,
    Experiment,
    UnknownExperiment,
    get,
    load_run,
    resolve_config,
    run_experiment,
    state_of,
)
from bottlenecklab.training import TrainConfig


def untrained_config(exp: Experiment, cfg: Any) -> Any:
    """`cfg` with every phase of each of its `TrainConfig` fields (`train`, or e.g. `fit`
    and `linear_fit` where `train` is derived) at zero steps and no early stop.

    An experiment whose `train` is a property computed from other fields (a plan of step
    counts) is left as it is: cut its steps with `--set` on those fields."""
    overrides: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if isinstance(value, TrainConfig):
            overrides[f"{f.name}.phases"] = tuple(
                dataclasses.replace(p, steps=0) for p in value.phases
            )
            overrides[f"{f.name}.stop_fraction"] = 0.0
    return apply_overrides(cfg, overrides)


def untrained_claims(
    name: str, preset: str, out: Path, overrides: dict[str, str] | None = None
) -> list[tuple[Claim, Claim]]:
    """`(raw, judged)` per claim of experiment `name` run untrained into `out/<name>`:
    `raw` is the experiment's own criterion (`Experiment.claims`), `judged` the runner's
    verdict (`claims.json`)."""
    exp = get(name)
    if not exp.trains and not overrides:
        raise ConfigError(
            f"{name} does not train: give its own solver's steps with --set (e.g. steps=0), "
            "or judge its claims on a wrong input"
        )
    cfg = resolve_config(exp, preset, overrides)
    if exp.trains:
        cfg = untrained_config(exp, cfg)
    folder = Path(out) / name.replace("/", "__")
    record = run_experiment(exp, cfg, folder, preset=preset, progress=False, threads=1)
    raw = exp.evaluate(cfg, load_run(folder, EXPERIMENTS).points)
    judged = {c.id: c for c in record.claims}
    return [(c, judged.get(c.id, c)) for c in raw]


def _cell(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def rows(name: str, pairs: list[tuple[Claim, Claim]]) -> list[str]:
    """One Markdown row per claim (asserted ones; reported ones are marked)."""
    out = []
    for raw, judged in pairs:
        if not raw.asserted:
            result = "reported"
        else:
            result = "holds" if raw.passed else "fails"
        cells = [name, raw.id, raw.expected, raw.measured, result, state_of(judged)]
        out.append(
            "| "
            + " | ".join(f"`{_cell(c)}`" if i < 2 else _cell(c) for i, c in enumerate(cells))
            + " |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="+", help="experiment names (`bottlenecklab list`)")
    ap.add_argument("--preset", default="quick", help="smoke | quick | paper (default quick)")
    ap.add_argument("--out", default="/tmp/untrained", help="folder for the untrained runs")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    overrides = dict(s.split("=", 1) for s in args.set)
    print("| experiment | claim | criterion | untrained value | criterion | state |")
    print("|---|---|---|---|---|---|")
    for name in args.names:
        try:
            pairs = untrained_claims(name, args.preset, Path(args.out), overrides)
        except (ConfigError, UnknownExperiment) as e:
            print(f"untrained_claims: {e}", file=sys.stderr)
            return 2
        print("\n".join(rows(name, pairs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
