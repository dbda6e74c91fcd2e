"""How often the lab's scorer and BFCL's own AST checker give the same verdict, on BFCL's cases.

For every case the lab imports from the answer-keyed categories, this writes calls a model
could send: each value BFCL's answer key accepts (one parameter at a time, the others at their
first value, values the importer dropped included), each optional parameter left out, a wrong
value, a value of the wrong type, an extra parameter, a required parameter left out, another
offered function, and parallel calls in reverse order. Each call list is judged by
``toolkit.bench.scoring.check`` and by BFCL's ``ast_checker``, read from the ``bfcl-eval`` wheel,
and the verdicts are compared. Every disagreement is grouped by why it happens; a kind the
lab's data README does not explain makes the run exit with 1.

    python benchmarks/bfcl_agreement.py                      # all eight categories
    python benchmarks/bfcl_agreement.py --categories live_multiple --show 5

BFCL's checker is imported from the wheel as it is, except that its model table (which imports
every provider's client) is replaced by one entry that keeps dotted names: the calls here use
BFCL's own function names. Nothing of the wheel is copied into the lab.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import types
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from toolkit.bench.bfcl import import_bfcl_category, openai_name  # noqa: E402
from toolkit.bench.scoring import check  # noqa: E402

WHEEL = Path("~/.cache/tool-calling-lab/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl").expanduser()
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple",
              "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
MODEL = "any-model"  # the stub model table's only entry

# Why the two checkers part, where they do on purpose (data/README.md, "Where this checker
# differs from BFCL"). A disagreement is put under the first kind whose test it meets.
EXPLAINED = {
    "off_enum": "a value outside the schema's enum: BFCL never reads enums, the lab does",
    "wrong_type": "a value of another type than the schema's (BFCL reads some as variable names)",
    "null": "null for a parameter whose default is not null: its type does not allow it",
    "greedy_pairing": "parallel calls BFCL pairs greedily; the lab finds a full matching",
}


def load_ast_checker(wheel: Path, into: Path) -> Callable:
    """BFCL's ``ast_checker`` and its ``Language``, imported from the wheel's own files."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith(("bfcl_eval/eval_checker/ast_eval/", "bfcl_eval/constants/enums",
                                  "bfcl_eval/constants/type_mappings")):
                archive.extract(member, into)
    for package in ("bfcl_eval", "bfcl_eval/constants", "bfcl_eval/eval_checker"):
        init = into / package / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        init.touch()
    # The real table imports every provider's SDK; the checker only asks it whether dots in a
    # function name become underscores, and the calls written here keep BFCL's names.
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = {MODEL.replace("_", "/"): types.SimpleNamespace(underscore_to_dot=False)}
    sys.modules["bfcl_eval.constants.model_config"] = stub
    sys.path.insert(0, str(into))
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def bfcl_verdict(functions: list, calls: list[dict], answer: list, category: str) -> bool:
        result = ast_checker(functions, calls, answer, Language.PYTHON, category, MODEL)
        return bool(result["valid"])

    return bfcl_verdict


def raw_records(wheel: Path, category: str) -> tuple[dict, dict]:
    """BFCL's questions and answer keys of one category, by id, as the wheel holds them."""
    with zipfile.ZipFile(wheel) as archive:
        def read(suffix: str) -> dict:
            member = next(m for m in archive.namelist() if m.endswith(suffix))
            lines = archive.read(member).decode("utf-8").splitlines()
            return {record["id"]: record for record in map(json.loads, filter(str.strip, lines))}
        return (read(f"data/BFCL_v4_{category}.json"),
                read(f"data/possible_answer/BFCL_v4_{category}.json"))


# ---------------------------------------------------------------- calls a model could send

def first_values(spec: dict) -> dict:
    """One call's arguments: each parameter at its first accepted value, left out where ""."""
    return {name: options[0] for name, options in spec.items() if options and options[0] != ""}


def wrong_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 7.5
    if isinstance(value, str):
        return value + " and something else"
    if isinstance(value, list):
        return value + value[:1] if value else ["something"]
    if isinstance(value, dict):
        return {}
    return "something"


def wrong_type(value: Any) -> Any:
    return 12345 if isinstance(value, str) else "12345"


def variants(answer: list[dict], functions: list[dict]) -> list[tuple[str, list[dict]]]:
    """(what was changed, BFCL-style calls [{name: {param: value}}]) for one case."""
    base = [{name: first_values(spec)} for call in answer for name, spec in call.items()]
    out = [("first values", base)]

    def changed(index: int, name: str, arguments: dict) -> list[dict]:
        calls = copy.deepcopy(base)
        calls[index] = {name: arguments}
        return calls

    by_name = {f["name"]: f for f in functions}
    for index, call in enumerate(answer):
        [(name, spec)] = call.items()
        arguments = base[index][name]
        required = by_name[name]["parameters"].get("required", [])
        for param, options in spec.items():
            for position, option in enumerate(options[1:], start=1):
                edited = dict(arguments)
                if option == "":
                    edited.pop(param, None)
                else:
                    edited[param] = option
                out.append((f"accepted value {position} of {param}", changed(index, name, edited)))
            if param in arguments:
                out.append((f"wrong value of {param}",
                            changed(index, name, {**arguments, param: wrong_value(arguments[param])})))
                out.append((f"wrong type of {param}",
                            changed(index, name, {**arguments, param: wrong_type(arguments[param])})))
                if param in required:
                    left_out = {k: v for k, v in arguments.items() if k != param}
                    out.append((f"required {param} left out", changed(index, name, left_out)))
        out.append(("extra parameter", changed(index, name, {**arguments, "unasked_for": 1})))
        others = [f["name"] for f in functions if f["name"] != name]
        if others:
            calls = copy.deepcopy(base)
            calls[index] = {others[0]: arguments}
            out.append(("another function", calls))
    if len(base) > 1:
        out.append(("reverse order", list(reversed(base))))
    return out


def lab_calls(calls: list[dict]) -> list[dict]:
    return [{"name": openai_name(name), "arguments": arguments}
            for call in calls for name, arguments in call.items()]


# ---------------------------------------------------------------- why a verdict differs

def explain(calls: list[dict], answer: list[dict], functions: list[dict]) -> str:
    """The kind of a disagreement, from the values the calls send."""
    by_name = {f["name"]: f for f in functions}
    for call in calls:
        for name, arguments in call.items():
            parameters = by_name.get(name, {}).get("parameters", {})
            kind = _value_kind(arguments, parameters)
            if kind:
                return kind
    if len(calls) > 1:
        return "greedy_pairing"
    return "unexplained"


_PYTHON = {"string": str, "any": str, "integer": int, "float": (int, float), "number": (int, float),
           "boolean": bool, "array": list, "tuple": list, "dict": dict, "object": dict}


def _value_kind(value: Any, schema: dict) -> str | None:
    """Why a value breaks its BFCL schema ("null", "off_enum", "wrong_type"), or None."""
    declared = schema.get("type")
    if value is None:
        return None if schema.get("default", "") is None else "null"
    if isinstance(declared, str) and declared in _PYTHON:
        python = _PYTHON[declared]
        if (isinstance(value, bool) and declared != "boolean") or not isinstance(value, python):
            return "wrong_type"
    if "enum" in schema and value not in schema["enum"]:
        return "off_enum"
    if isinstance(value, dict):
        for key, item in value.items():
            kind = _value_kind(item, schema.get("properties", {}).get(key, {}))
            if kind:
                return kind
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            kind = _value_kind(item, schema["items"])
            if kind:
                return kind
    return None


# ---------------------------------------------------------------- the run

def compare(wheel: Path, categories: tuple[str, ...], bfcl_verdict: Callable) -> dict:
    counts: Counter = Counter()
    kinds: dict[str, list] = defaultdict(list)
    for category in categories:
        suite = import_bfcl_category(wheel, category)
        questions, answers = raw_records(wheel, category)
        for case in suite.cases:
            functions = questions[case.id]["function"]
            answer = answers[case.id]["ground_truth"]
            for what, calls in variants(answer, functions):
                lab = check(case, lab_calls(calls)).arguments_ok
                bfcl = bfcl_verdict(functions, copy.deepcopy(calls), answer, category)
                counts["verdicts"] += 1
                counts["both pass" if lab and bfcl else "both fail" if not (lab or bfcl)
                       else "only BFCL passes" if bfcl else "only the lab passes"] += 1
                if lab != bfcl:
                    kind = explain(calls, answer, functions)
                    kinds[kind].append((case.id, what, "BFCL" if bfcl else "lab", calls))
    return {"counts": counts, "kinds": kinds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, default=WHEEL)
    parser.add_argument("--categories", nargs="+", default=list(CATEGORIES), choices=CATEGORIES)
    parser.add_argument("--show", type=int, default=3, help="examples printed per kind")
    args = parser.parse_args(argv)
    if not args.wheel.is_file():
        print(f"no BFCL wheel at {args.wheel}: pip download bfcl-eval==2026.3.23 --no-deps "
              f"-d {args.wheel.parent}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        result = compare(args.wheel, tuple(args.categories), load_ast_checker(args.wheel, Path(folder)))
    counts, kinds = result["counts"], result["kinds"]
    total = counts["verdicts"]
    same = counts["both pass"] + counts["both fail"]
    print(f"{total} verdicts over {', '.join(args.categories)}")
    print(f"same verdict: {same} ({same / total:.2%}); both pass {counts['both pass']}, "
          f"both fail {counts['both fail']}")
    print(f"only BFCL passes: {counts['only BFCL passes']}; only the lab passes: "
          f"{counts['only the lab passes']}")
    for kind, items in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        why = EXPLAINED.get(kind, "NOT EXPLAINED in data/README.md")
        print(f"\n{kind}: {len(items)} ({why})")
        for case_id, what, passes, calls in items[:args.show]:
            print(f"  {case_id}: {what}; passes in {passes}: {json.dumps(calls, ensure_ascii=False)[:160]}")
    return 1 if "unexplained" in kinds else 0


if __name__ == "__main__":
    raise SystemExit(main())
