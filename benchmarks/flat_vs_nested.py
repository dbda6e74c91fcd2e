"""Flat or nested parameters: does the embedded model fill prefixed top-level fields better than
an object inside the arguments?

    python benchmarks/flat_vs_nested.py                 # writes data/flat_vs_nested.json

The cases are the scenario suite's nested cases whose tools have an object parameter with fields
of its own (``toolkit.bench.flatten.nested_object_cases``: the hotel guest, the search filters). Each
case is asked twice, once with the suite's tools as written and once with every tool flattened
by ``toolkit.bench.flatten.flat_suite``; nothing else in the request differs. Flat calls are put back in
the nested shape (``nest_calls``) and both are scored by ``toolkit.bench.scoring.check`` against the
suite's own answer key. Every setting is fixed below and was fixed before the first run; the
suite is held out, so nothing here was tuned on it.

Settings: tool_choice "required", parallel_tool_calls false (each case needs one call),
temperature 0, seed 0, max_tokens 160, clear descriptions, enums on, 3 distractor tools (so that
choosing the tool is a real choice), the embedded base model. ``--distractors 0 3`` and
``--tuned`` add more variants; each trial takes seconds on an idle machine and minutes on a busy
one, so the default is the smallest run that measures both selection and arguments. The file is
rewritten after every trial, so a run cut short still leaves what it measured.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file from anywhere: the toolkit is beside this folder
    sys.path.insert(0, str(ROOT))

from toolkit.bench.experiment import read_calls  # noqa: E402
from toolkit.bench.flatten import flat_suite, nest_calls, nested_object_cases  # noqa: E402
from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.bench.scoring import check  # noqa: E402
from toolkit.bench.suite import lesson_suite  # noqa: E402
from toolkit.bench.trials import Settings, build_request  # noqa: E402
from toolkit.client import connect  # noqa: E402
from toolkit.engine import TUNED_MODEL  # noqa: E402

OUT = ROOT / "data" / "flat_vs_nested.json"
COMMAND = "python benchmarks/flat_vs_nested.py"
BASE = Settings(tool_choice="required", parallel_tool_calls=False, temperature=0.0, seed=0,
                max_tokens=160, description="clear", enums=True)
DISTRACTORS = (3,)


def trials(suite, flat, case_ids, models, distractor_counts=DISTRACTORS):
    """Every (case, shape, distractors, model), with its request. Each case is asked nested,
    then flat, before the next case: a run cut short has compared the shapes on the same cases."""
    planned = []
    for model in models:
        for distractors in distractor_counts:
            settings = BASE.model_copy(update={"distractors": distractors, "model": model})
            for case_id in case_ids:
                for shape, variant in (("nested", suite), ("flat", flat)):
                    body = build_request(variant.case(case_id), variant, settings)
                    if model:
                        body["model"] = model
                    planned.append({"case_id": case_id, "shape": shape, "distractors": distractors,
                                    "model": model, "body": body})
    return planned


def run(backend, suite, flat, flattenings, planned, progress=print, save=None):
    rows = []
    for number, trial in enumerate(planned, 1):
        started = time.perf_counter()
        completion = backend.chat(**trial["body"])
        seconds = time.perf_counter() - started
        calls, text, parse_error = read_calls(completion, "native")
        calls = [{"name": call.name, "arguments": call.arguments} for call in calls]  # as the JSON record keeps them
        case = suite.case(trial["case_id"])
        scored = nest_calls(calls, flattenings) if trial["shape"] == "flat" else calls
        verdict = check(case, scored, parse_error=parse_error)
        row = {key: trial[key] for key in ("case_id", "shape", "distractors")}
        row.update({"model": trial["model"] or backend.model, "language": case.language,
                    "calls": calls, "scored_as": scored, "parse_error": parse_error,
                    "selection_ok": verdict.selection_ok, "arguments_ok": verdict.arguments_ok,
                    "reason": verdict.reason, "detail": verdict.detail,
                    "completion_tokens": getattr(completion.usage, "completion_tokens", None),
                    "seconds": round(seconds, 2)})
        if trial["shape"] == "flat":  # the flat key must agree with scoring through the nested one
            row["flat_key_arguments_ok"] = check(flat.case(trial["case_id"]), calls,
                                                 parse_error=parse_error).arguments_ok
        rows.append(row)
        if save:
            save(rows)
        progress(f"{number:>3}/{len(planned)} {row['model'][:24]:<24} d={row['distractors']} "
                 f"{row['shape']:<6} {row['case_id']:<28} {row['reason'] or 'ok':<20} {seconds:5.1f} s")
    return rows


def rate(rows, aspect):
    successes, n = sum(r[f"{aspect}_ok"] for r in rows), len(rows)
    low, high = wilson_interval(successes, n)
    return {"successes": successes, "n": n, "rate": successes / n if n else None,
            "low": round(low, 3), "high": round(high, 3)}


def table(rows):
    """One line per (model, distractors, shape), with "all" pooling the distractor counts when
    there are several; and the paired view: cases right in one shape and wrong in the other."""
    lines, paired = [], []
    counts = list(dict.fromkeys(r["distractors"] for r in rows))
    for model in dict.fromkeys(r["model"] for r in rows):
        for distractors in counts + (["all"] if len(counts) > 1 else []):
            for shape in ("nested", "flat"):
                group = [r for r in rows if r["model"] == model and r["shape"] == shape
                         and distractors in ("all", r["distractors"])]
                lines.append({"model": model, "distractors": distractors, "shape": shape,
                              "selection": rate(group, "selection"),
                              "arguments": rate(group, "arguments")})
            pairs = {}
            for r in rows:
                if r["model"] == model and distractors in ("all", r["distractors"]):
                    pairs.setdefault((r["case_id"], r["distractors"]), {})[r["shape"]] = r["arguments_ok"]
            complete = [p for p in pairs.values() if len(p) == 2]
            paired.append({"model": model, "distractors": distractors,
                           "flat_only": sum(p["flat"] and not p["nested"] for p in complete),
                           "nested_only": sum(p["nested"] and not p["flat"] for p in complete),
                           "both": sum(p["flat"] and p["nested"] for p in complete),
                           "neither": sum(not p["flat"] and not p["nested"] for p in complete)})
    return lines, paired


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--distractors", type=int, nargs="+", default=list(DISTRACTORS),
                        help="distractor tools offered beside the case's own (default: 3)")
    parser.add_argument("--tuned", action="store_true", help="also run the tool-tuned model")
    args = parser.parse_args(argv)
    suite = lesson_suite()
    case_ids = nested_object_cases(suite)
    flat, flattenings = flat_suite(suite, case_ids)
    backend = connect()
    models = [None, TUNED_MODEL] if args.tuned else [None]
    planned = trials(suite, flat, case_ids, models, tuple(args.distractors))
    command = COMMAND + ("" if tuple(args.distractors) == DISTRACTORS else
                         " --distractors " + " ".join(map(str, args.distractors))) + (" --tuned" if args.tuned else "")
    started = time.perf_counter()

    def save(rows):
        lines, paired = table(rows)
        result = {
            "command": command,
            "date": datetime.date.today().isoformat(),
            "backend": backend.label,
            "settings": {**BASE.model_dump(exclude={"distractors", "model"}),
                         "distractors": list(args.distractors), "models": [m or backend.model for m in models]},
            "cases": case_ids,
            "trials_planned": len(planned), "trials_done": len(rows),
            "seconds": round(time.perf_counter() - started, 1),
            "flat_tools": {name: flat.tools[name].parameters for name in ("book_hotel", "search_products")},
            "table": lines, "paired": paired, "trials": rows,
        }
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return lines, paired

    rows = run(backend, suite, flat, flattenings, planned, save=save)
    lines, paired = save(rows)
    print(f"\nwrote {args.out} ({len(rows)} trials, {time.perf_counter() - started:.0f} s)")
    for line in lines:
        s, a = line["selection"], line["arguments"]
        print(f"{line['model']:<32} d={line['distractors']!s:<4} {line['shape']:<7} "
              f"selection {s['successes']:>2}/{s['n']:<2} [{s['low']:.2f}, {s['high']:.2f}]   "
              f"arguments {a['successes']:>2}/{a['n']:<2} [{a['low']:.2f}, {a['high']:.2f}]")
    for line in paired:
        print(f"{line['model']:<32} d={line['distractors']!s:<4} arguments right only flat: {line['flat_only']}, "
              f"only nested: {line['nested_only']}, both: {line['both']}, neither: {line['neither']}")
    disagree = [r["case_id"] for r in rows if r["shape"] == "flat" and r["flat_key_arguments_ok"] != r["arguments_ok"]]
    if disagree:
        print("flat key and nested scoring disagree on:", disagree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
