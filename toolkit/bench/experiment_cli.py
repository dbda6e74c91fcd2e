"""The experiment bench from a shell: ``python -m toolkit.bench.experiment --help``.

    python -m toolkit.bench.experiment --factor description --values clear vague --cases 10 --repeats 2
    python -m toolkit.bench.experiment --factor enums --values true false \\
        --base-url https://api.deepseek.com/v1 --model deepseek-chat --concurrency 4 --csv out.csv

    python -m toolkit.bench.experiment --suite bfcl_eval/data/BFCL_v4_simple_python.json --cases 20

    python -m toolkit.bench.experiment export 3 runs/run-3.jsonl     # one stored run as one file
    python -m toolkit.bench.experiment import runs/run-3.jsonl       # into this machine's database

Runs on the embedded model unless a base URL is given (the key comes from LAB_API_KEY),
shows a progress bar, then prints the rates of each variant with 95% Wilson intervals and each
value against the first, paired on the same cases (difference, interval, exact McNemar p).
Before a run it says how large a difference the plan can show, from the effects table.
``export`` and ``import`` carry a run to another machine, to replay it there with no model and
no network (the file's format: ``toolkit.bench.run_file``); both take ``--db``.
``--suite`` takes the lab's own suite files or a BFCL question file (``BFCL_v4_<category>.json``,
also named inside the bfcl-eval wheel: ``bfcl_eval-....whl/BFCL_v4_simple_python.json``), whose
answers are read from ``possible_answer/`` beside it unless ``--answers`` names them.
Exit codes: 0 the run finished, 1 it failed or was stopped, 2 the arguments were wrong.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from toolkit.bench.effects import plan_power
from toolkit.bench.experiment import run_experiment
from toolkit.bench.paired import paired_differences
from toolkit.bench.parameters import format_parameter_table, parameter_table
from toolkit.bench.power import after_run
from toolkit.bench.rates import rate_table
from toolkit.bench.run_file import add_read_run, export_run, read_run_file
from toolkit.bench.store import DEFAULT_PATH, Store
from toolkit.bench.suite import load_suite
from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.suite_model import CATEGORIES
from toolkit.bench.trials import FACTORS, Settings, plan, with_setting
from toolkit.client import connect
from toolkit.lab_error import LabError


class ArgumentProblem(ValueError):
    """Arguments that parse but do not make an experiment; reported with exit code 2."""


def _value(text: str) -> Any:
    # "none" is the only spelling argparse cannot hand to pydantic as it is.
    return None if text.lower() in ("none", "null", "unset") else text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.bench.experiment",
        description="Run a tool-calling experiment: one or two settings varied over suite cases.",
        epilog="A stored run travels as one file: 'export RUN_ID FILE' writes it, 'import FILE' "
               "adds it to another database (each with its own --help).")
    parser.add_argument("--suite", default=None,
                        help="suite file or directory, or a BFCL question file "
                             "BFCL_v4_<category>.json (default: the shipped suite)")
    parser.add_argument("--answers", default=None,
                        help="the BFCL answers file of that question file (default: "
                             "possible_answer/<same name> beside it, where BFCL keeps them)")
    parser.add_argument("--factor", choices=FACTORS, help="the setting to vary")
    parser.add_argument("--values", nargs="+", default=[], help="its values, e.g. clear vague")
    parser.add_argument("--second-factor", choices=FACTORS, help="a second setting to vary")
    parser.add_argument("--second-values", nargs="+", default=[], help="its values")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a fixed setting, e.g. --set temperature=0.7 (repeatable)")
    parser.add_argument("--cases", type=int, default=None,
                        help="how many cases, spread over the categories (default: all)")
    parser.add_argument("--categories", nargs="+", choices=CATEGORIES, help="only these categories")
    parser.add_argument("--repeats", type=int, default=1, help="trials per case and variant")
    parser.add_argument("--db", default=str(DEFAULT_PATH), help=f"SQLite file (default {DEFAULT_PATH})")
    parser.add_argument("--csv", help="also write the trials to this CSV file")
    parser.add_argument("--name", default="", help="a name for the run")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the embedded model)")
    parser.add_argument("--model", help="model name at that endpoint")
    parser.add_argument("--concurrency", type=int, default=1, help="requests at once (remote endpoints)")
    parser.add_argument("--order", choices=["prefix", "as_planned"], default="prefix",
                        help="run trials that share a prompt prefix back to back (default)")
    return parser


def _experiment(args: argparse.Namespace):
    if args.repeats < 1 or args.concurrency < 1 or (args.cases is not None and args.cases < 1):
        raise ArgumentProblem("--repeats, --cases and --concurrency must be at least 1")
    if bool(args.factor) != bool(args.values):
        raise ArgumentProblem("give --factor and --values together")
    if bool(args.second_factor) != bool(args.second_values):
        raise ArgumentProblem("give --second-factor and --second-values together")
    if args.second_factor and not args.factor:
        raise ArgumentProblem("--second-factor needs a --factor first")
    if args.base_url and not args.model:
        raise ArgumentProblem("--base-url needs --model too")
    base = Settings()
    for item in args.set:
        name, equals, text = item.partition("=")
        if not equals:
            raise ArgumentProblem(f"--set {item!r}: write NAME=VALUE, e.g. temperature=0.7")
        base = with_setting(base, name.strip(), _value(text.strip()))
    suite = load_suite(args.suite, args.answers)
    if args.categories:
        suite = suite.filter(categories=args.categories)
    if not len(suite):
        raise ArgumentProblem("no case is left to run")
    trials = plan(suite, base, args.factor, [_value(v) for v in args.values], args.second_factor,
                  [_value(v) for v in args.second_values] or None, cases=args.cases,
                  repeats=args.repeats)
    return suite, trials


class ProgressLine:
    """Progress on stderr: a tqdm bar on a terminal; anywhere else (a log file, a pipe, CI) a
    plain line every tenth of the trials, since a bar redrawn with carriage returns would
    leave hundreds of copies of itself there."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty()
        self.started = time.perf_counter()
        self.bar: tqdm | None = None
        self.tenths = 0  # tenths of the run reported so far, off a terminal

    def __call__(self, done: int, total: int, row: dict) -> None:
        mark = "ok" if row.get("arguments_ok") else (row.get("reason") or "?")
        if self.terminal:
            if self.bar is None:
                self.bar = tqdm(total=total, file=self.stream, unit="trial", dynamic_ncols=True)
            self.bar.set_postfix_str(f"{row['case_id'][:32]} {mark}", refresh=False)
            self.bar.update(done - self.bar.n)
            if done >= total:
                self.bar.close()
            return
        tenths = 10 * done // max(total, 1)
        if tenths > self.tenths or done >= total:
            self.tenths = tenths
            elapsed = time.perf_counter() - self.started
            print(f"{done}/{total} trials ({done / max(total, 1):.0%}) after {elapsed:.0f} s; "
                  f"last {row['case_id']}: {mark}", file=self.stream, flush=True)


def _plan_power(model: str, factor: str, trials) -> str | None:
    """What the plan can show, where the effects table measured this setting on this model."""
    suite = getattr(trials, "suite", None)
    categories = sorted({suite.case(t.case_id).category for t in trials}) if suite is not None else None
    return plan_power(model, factor, len({trial.case_id for trial in trials}), categories=categories)


def _paired(frame, factor: str, second: str | None) -> str:
    """Each value against the first on the same cases, and whether the plan was large enough."""
    differences = paired_differences(frame, factor, within=second)
    if not differences:
        return "\npaired: one value only, nothing to compare"
    lines = ["\npaired, each value against the first on the same cases"]
    for d in differences:
        lines.append(f"- {d.sentence()}")
        if d.pairs:
            lines.append(f"  {after_run(d.low, d.high, d.discordance(), d.real, d.method == 'clustered')}")
    return "\n".join(lines)


def _table(frame) -> str:
    shown = frame.copy()
    for aspect in ("selection", "arguments"):
        shown[aspect] = [f"{rate:6.1%} [{low:5.1%}, {high:5.1%}]" for rate, low, high in
                         zip(shown[f"{aspect}_rate"], shown[f"{aspect}_low"], shown[f"{aspect}_high"])]
    keep = [c for c in frame.columns if c not in
            ("n", *[f"{a}_{p}" for a in ("selection", "arguments")
                    for p in ("successes", "rate", "low", "high")])]
    return shown[[*keep, "n", "selection", "arguments"]].to_string(index=False)


def _transfer_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolkit.bench.experiment",
        description="Carry a stored run to another machine as one file, to replay it with no model.")
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write one stored run to a file")
    export.add_argument("run_id", type=int, metavar="RUN_ID", help="the run's id, as History or a run's report shows it")
    export.add_argument("file", metavar="FILE", help="the file to write (never overwritten), e.g. runs/run-3.jsonl")
    imported = commands.add_parser("import", help="add the run of an exported file to the database")
    imported.add_argument("file", metavar="FILE", help="a file written by export or by the app's History")
    for command in (export, imported):
        command.add_argument("--db", default=str(DEFAULT_PATH), help=f"SQLite file (default {DEFAULT_PATH})")
    return parser


def _transfer(argv: list[str]) -> int:
    """``export RUN_ID FILE`` and ``import FILE``: 0 done, 2 refused (nothing written)."""
    args = _transfer_parser().parse_args(argv)  # exits with 2 on malformed arguments
    try:
        if args.command == "export":
            if not Path(args.db).exists():
                raise LabError(f"no run database at {args.db}")
            with Store(args.db) as store:
                path = export_run(store, args.run_id, args.file)
                n = len(store.trials(args.run_id))
            print(f"run {args.run_id} written to {path} ({n} trials, {path.stat().st_size / 1024:.0f} KB)")
            return 0
        try:
            data = Path(args.file).read_bytes()
        except OSError as problem:
            raise LabError(f"cannot read {args.file}: {problem.strerror or problem}") from None
        run, trials = read_run_file(data, args.file)  # a bad file is refused before the database opens
        with Store(args.db) as store:
            run_id = add_read_run(store, run, trials, args.file)
            frame = store.trials(run_id)
        factors = [f for f in run["plan"].get("factors") or [] if f in frame.columns]
    except (LabError, KeyError) as problem:
        print(f"error: {problem.args[0] if isinstance(problem, KeyError) else problem}", file=sys.stderr)
        return 2
    print(f"run {run_id} imported from {args.file} into {args.db}: {len(frame)} trials of "
          f"{run['backend']}, recorded {run['created']}; nothing was sent to a model")
    if len(frame):
        print("\nall trials")
        print(_table(rate_table(frame)))
        for by in ([factors] if factors else []) + [["category"]]:
            print(f"\nby {' and '.join(by)}")
            print(_table(rate_table(frame, by)))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["export"], ["import"]):
        return _transfer(argv)
    parser = _parser()
    args = parser.parse_args(argv)  # exits with 2 on malformed arguments
    try:
        suite, trials = _experiment(args)
    except (ArgumentProblem, SuiteError, ValueError, KeyError) as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        backend = connect(args.base_url, args.model)
    except LabError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{len(trials)} trials on {backend.label}", file=sys.stderr)
    if args.factor and (power := _plan_power(backend.model, args.factor, trials)):
        print(power, file=sys.stderr)
    with Store(args.db) as store:
        try:
            run_id = run_experiment(trials, backend, store, name=args.name, progress=ProgressLine(),
                                    concurrency=args.concurrency, order=args.order, suite=suite)
        except KeyboardInterrupt:
            print("\nstopped; the finished trials are kept and a re-run resumes", file=sys.stderr)
            return 1
        run = store.run(run_id)
        frame = store.trials(run_id)
        parameters = parameter_table(store.trials(run_id, full=True), suite,
                                     [f for f in (args.factor, args.second_factor) if f])
        if args.csv:
            store.export_csv(run_id, args.csv)
    print(f"run {run_id}: {run['status']} ({len(frame)} of {len(trials)} trials, "
          f"{int(frame['cached'].sum()) if len(frame) else 0} read back from {args.db})")
    if run["error"]:
        print(f"error: {run['error']}", file=sys.stderr)
    if len(frame):
        print("\nall trials")
        print(_table(rate_table(frame)))
        factors = [f for f in (args.factor, args.second_factor) if f]
        if factors:
            print(f"\nby {' and '.join(factors)}")
            print(_table(rate_table(frame, factors)))
        if args.factor:
            print(_paired(frame, args.factor, args.second_factor))
        print("\nby category")
        print(_table(rate_table(frame, ["category"])))
        print("\nright values per parameter kind (in calls to the right tool)")
        print(format_parameter_table(parameters))
    if args.csv:
        print(f"\ntrials written to {args.csv}")
    return 0 if run["status"] == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
