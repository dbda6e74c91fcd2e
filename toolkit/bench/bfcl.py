"""Importing the Berkeley Function Calling Leaderboard's single-turn categories as a suite.

BFCL ships each category as two JSON-lines files: the questions (``BFCL_v4_<category>.json``)
and the possible answers (``possible_answer/BFCL_v4_<category>.json``). They come in the
``bfcl-eval`` wheel. ``import_bfcl_category`` reads them from the wheel itself or from an
unpacked ``data/`` folder, ``import_bfcl`` from a question file; both return the same
:class:`~toolkit.bench.suite.Suite` that ``load_suite`` reads from this lab's own files, so BFCL
cases are sent, filtered and scored like any other.

BFCL's files do not all follow the rules a lab suite follows: answer keys list values the
schema rules out, schemas list enum values of the wrong type, function names have dots that
OpenAI's API refuses. A case with such a quirk is normalised the way BFCL's own checker treats
it, or skipped with a reason; it never rejects the whole file. What was normalised and what
was skipped travels with the suite (:class:`BfclSuite`), and ``report()`` prints it. Files
that are not what they should be (not JSON lines, no answers, a multi-turn category) raise
one :class:`SuiteError` naming the file and the line: nothing is half-imported.
The quirks and what happens to each are listed in ``data/README.md``.
"""
from __future__ import annotations

import json
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from toolkit.bench.argument_checks import OMIT, matches_type, normalise, short_json
from toolkit.bench.suite_checks import SuiteError, build_suite
from toolkit.bench.suite_checks import display_path as _display
from toolkit.bench.suite_model import Case, Suite, SuiteTool

__all__ = ["BFCL_CATEGORIES", "BfclSuite", "Skipped", "import_bfcl", "import_bfcl_category",
           "is_bfcl_file", "json_schema", "openai_name"]

# The single-turn categories BFCL scores without running anything: by its AST checker, or by
# whether a call was made at all (irrelevance, relevance).
BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
                   "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                   "live_irrelevance", "live_relevance")

# The other categories of the wheel, and why they are refused as a whole.
_REFUSED = {
    "simple_java": "BFCL scores Java and JavaScript cases after converting every argument from "
                   "Java or JavaScript syntax; the lab compares JSON values, so only "
                   "simple_python is imported",
    "multi_turn": "multi-turn categories are scored by running the calls against BFCL's "
                  "simulated APIs, not by this importer: run them with `python -m "
                  "toolkit.bench.multi_turn_run`, or choose \"BFCL multi-turn conversations\" "
                  "as the app's suite",
    "memory": "agentic categories are not supported: BFCL scores the final answer, not the calls",
    "web_search": "agentic categories are not supported: BFCL scores the final answer, not the "
                  "calls",
    "format_sensitivity": "format_sensitivity is not supported: it re-asks other categories' "
                          "cases in BFCL's prompt formats",
}

# BFCL id prefix -> the lab's category. "simple" is how older BFCL versions named simple_python.
_ID = re.compile(r"^(?:live_)?(simple_python|simple|parallel_multiple|parallel|multiple|"
                 r"irrelevance|relevance)_\d")
_CATEGORY = {"simple_python": "simple"}
_NO_ANSWERS = ("irrelevance", "relevance")  # categories that have no answer file

# BFCL's types as JSON Schema. "any" is sent as a string and checked as one by BFCL.
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string",
          "object": "object", "number": "number", "array": "array", "string": "string",
          "integer": "integer", "boolean": "boolean", "null": "null"}

_OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FILE_NAME = re.compile(r"^BFCL_v\d+_\w+\.json$")  # how BFCL names its question files


class Skipped(NamedTuple):
    """A BFCL case left out of the suite: where it is, why (shared by similar cases), details."""

    case_id: str
    where: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class BfclSuite(Suite):
    """A suite imported from BFCL, with what the import had to do to get it.

    ``bfcl_names`` maps each tool key to BFCL's own function name: the suite's tools (and the
    answer keys) use OpenAI-legal names, so a model's calls are scored as they come.
    """

    total: int = 0                                   # questions in BFCL's file
    skipped: tuple[Skipped, ...] = ()
    normalised: Mapping[str, int] = field(default_factory=dict)  # quirk -> times normalised
    bfcl_names: Mapping[str, str] = field(default_factory=dict)

    def bfcl_name(self, case: Case | str, name: str) -> str:
        """BFCL's name of the function that ``case`` offers under ``name`` (the name sent)."""
        case = self.case(case) if isinstance(case, str) else case
        for key in case.tools:
            if self.tools[key].name == name:
                return self.bfcl_names[key]
        raise KeyError(f"case {case.id!r} offers no function named {name!r}")

    def report(self) -> str:
        """How many cases were imported, why the others were skipped, what was normalised."""
        lines = [f"{self.source}: {len(self.cases)} of {self.total} cases imported"]
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)}:")
            for reason, count in Counter(s.reason for s in self.skipped).most_common():
                ids = [s.case_id for s in self.skipped if s.reason == reason]
                shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
                lines.append(f"  {count:5}  {reason} ({shown})")
        if self.normalised:
            lines.append("normalised:")
            lines += [f"  {count:5}  {quirk}"
                      for quirk, count in Counter(self.normalised).most_common()]
        return "\n".join(lines)


# ---------------------------------------------------------------- finding and reading files

def import_bfcl_category(source: str | Path, category: str) -> BfclSuite:
    """One category (``"simple_python"``, ``"live_multiple"``, ...; see ``BFCL_CATEGORIES``)
    from the ``bfcl-eval`` wheel, or from its unpacked ``data/`` folder (or the folder the
    wheel was unpacked into)."""
    _refuse(category, f"category {category!r}")
    if category not in BFCL_CATEGORIES:
        raise SuiteError([f"category {category!r} is not a BFCL single-turn category; choose "
                          f"one of {', '.join(BFCL_CATEGORIES)}"])
    source = Path(source).expanduser()
    name = f"BFCL_v4_{category}.json"
    if source.is_file():
        return _from_wheel(source, name)
    for folder in (source, source / "data", source / "bfcl_eval" / "data"):
        if (folder / name).is_file():
            return import_bfcl(folder / name)
    raise SuiteError([f"{_display(source)}: no {name} here, nor in data/ or bfcl_eval/data/; "
                      f"give the bfcl-eval wheel or its unpacked data/ folder"])


def is_bfcl_file(path: str | Path) -> bool:
    """Whether ``path`` is a BFCL question file rather than one of the lab's suite files: named
    as BFCL names them (``BFCL_v4_<category>.json``, also inside the wheel:
    ``bfcl_eval-....whl/BFCL_v4_<category>.json``), or a file whose first line is one JSON
    object with BFCL's ``id`` and ``question`` fields (a lab suite file is one JSON object with
    ``format_version``, over many lines)."""
    path = Path(path).expanduser()
    if _in_wheel(path) or (path.is_file() and _FILE_NAME.match(path.name)):
        return True
    if not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as file:
            first = next((line for line in file if line.strip()), "")
        record = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and isinstance(record.get("id"), str) and "question" in record


def import_bfcl(questions: str | Path, answers: str | Path | None = None) -> BfclSuite:
    """The cases of a BFCL question file; its answers are read from ``answers``, or else from
    ``possible_answer/`` beside the questions, where BFCL keeps them. The question file may be
    named inside the wheel: ``bfcl_eval-....whl/BFCL_v4_simple_python.json``."""
    questions = Path(questions).expanduser()
    answers = None if answers is None else Path(answers).expanduser()
    if _in_wheel(questions):
        return _from_wheel(questions.parent, questions.name, answers)
    if answers is None and (questions.parent / "possible_answer" / questions.name).is_file():
        answers = questions.parent / "possible_answer" / questions.name
    found = None if answers is None else (_display(answers), _read(answers))
    return _import((_display(questions), _read(questions)), found,
                   f"no answers file: BFCL keeps them in possible_answer/{questions.name} beside "
                   f"the questions; put it there, or name it with --answers (answers= in Python)")


def _in_wheel(path: Path) -> bool:
    return path.parent.suffix == ".whl" and path.parent.is_file()


def _from_wheel(wheel: Path, name: str, answers: Path | None = None) -> BfclSuite:
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = archive.namelist()
            found = {}
            for kind, suffix in (("questions", f"data/{name}"),
                                 ("answers", f"data/possible_answer/{name}")):
                member = next((m for m in members if f"/{m}".endswith(f"/{suffix}")), None)
                if member is not None:
                    found[kind] = (f"{_display(wheel)}:{member}",
                                   archive.read(member).decode("utf-8"))
    except zipfile.BadZipFile as error:
        raise SuiteError([f"{_display(wheel)}: not a wheel or zip file ({error}); give the "
                          f"bfcl-eval wheel or its unpacked data/ folder"]) from error
    if "questions" not in found:
        raise SuiteError([f"{_display(wheel)}: no data/{name} in it; is it the bfcl-eval wheel?"])
    if answers is not None:
        found["answers"] = (_display(answers), _read(answers))
    return _import(found["questions"], found.get("answers"),
                   f"no answers file: the wheel has no data/possible_answer/{name}; name one "
                   f"with --answers (answers= in Python)")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise SuiteError([f"{_display(path)}: cannot read ({error.strerror})"]) from error


def _jsonl(where: str, text: str) -> list[tuple[int, dict]]:
    """The records of a JSON-lines file, each with its line number; the first bad line raises."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise SuiteError([f"{where}: line {number}: not valid JSON ({error.msg}); a BFCL file "
                              f"holds one JSON object per line"]) from error
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise SuiteError([f"{where}: line {number}: needs a string 'id'; is this a BFCL "
                              f"question or answer file?"])
        records.append((number, record))
    return records


def _refuse(prefix: str, what: str) -> None:
    for start, why in _REFUSED.items():
        if prefix.startswith(start):
            raise SuiteError([f"{what}: {why}; use a single-turn category instead "
                              f"({', '.join(BFCL_CATEGORIES)})"])


# ---------------------------------------------------------------- the import

class _Unusable(Exception):
    """The case cannot be scored by the lab: ``reason`` is shared by similar cases."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def _import(questions: tuple[str, str], answers: tuple[str, str] | None,
            no_answers: str) -> BfclSuite:
    where_q, records = questions[0], _jsonl(*questions)
    categories = {}
    for number, record in records:
        match = _ID.match(record["id"])
        if not match:
            _refuse(re.sub(r"^live_", "", record["id"]),
                    f"{where_q}: line {number}: case '{record['id']}'")
            raise SuiteError([f"{where_q}: line {number}: case '{record['id']}': the id prefix is "
                              f"not a category this importer knows ({', '.join(BFCL_CATEGORIES)})"])
        categories[record["id"]] = _CATEGORY.get(match.group(1), match.group(1))
    keys = _answer_keys(answers, {record["id"] for _, record in records})
    for number, record in records:
        if categories[record["id"]] not in _NO_ANSWERS and record["id"] not in keys:
            raise SuiteError([f"{where_q}: {no_answers}" if answers is None else
                              f"{where_q}: line {number}: case '{record['id']}': no possible "
                              f"answer with this id in {answers[0]}"])

    tools: dict[str, SuiteTool] = {}
    bfcl_names: dict[str, str] = {}  # tool key -> BFCL's function name
    definitions: dict[str, list[tuple[str, dict]]] = {}  # BFCL name -> (key, definition)s
    cases: list[Case] = []
    skipped: list[Skipped] = []
    normalised: Counter = Counter()
    for number, record in records:
        case_id, category = record["id"], categories[record["id"]]
        where = f"{where_q}: line {number}"
        answer_where, ground_truth = keys.get(case_id, (None, []))
        notes: Counter = Counter()  # counted only when the case is imported
        try:
            if category == "relevance":
                raise _Unusable("BFCL only checks that some call is made; the lab's scorer "
                                "needs an answer key")
            functions = _functions(record.get("function"), notes)
            case = {"id": case_id, "category": category, "language": _language(record),
                    "messages": _messages(record.get("question")),
                    "expected": _expected(ground_truth, functions, notes)}
            # A function offered again in another case keeps its key; one that shares its name
            # with a different definition gets the case id appended to the key.
            offered = {}
            for bfcl_name, tool in functions.items():
                variants = definitions.get(bfcl_name, [])
                key = next((k for k, known in variants if known == tool),
                           f"{bfcl_name}#{case_id}" if variants else bfcl_name)
                offered[key] = (bfcl_name, tool)
            case["tools"] = list(offered)
            # The lab's own checks, one case at a time: whatever they still reject is skipped
            # rather than rejecting the file.
            checked = build_suite([(where, key, tool) for key, (_, tool) in offered.items()],
                                  [(where, case, answer_where)], where)
        except _Unusable as why:
            skipped.append(Skipped(case_id, where, why.reason, why.detail))
            continue
        except SuiteError as error:
            skipped.append(Skipped(case_id, where, "the lab's suite checks reject it",
                                   error.problems[0]))
            continue
        for key, (bfcl_name, tool) in offered.items():
            if key not in tools:
                tools[key], bfcl_names[key] = checked.tools[key], bfcl_name
                definitions.setdefault(bfcl_name, []).append((key, tool))
        cases.append(checked.cases[0])  # checked with its tools: their schemas are attached
        normalised.update(notes)
    return BfclSuite(tools, tuple(cases), where_q, total=len(records), skipped=tuple(skipped),
                     normalised=dict(normalised), bfcl_names=bfcl_names)


def _answer_keys(answers: tuple[str, str] | None, asked: set[str]) -> dict[str, tuple[str, Any]]:
    """Case id -> (where its answer is, its ground truth)."""
    if answers is None:
        return {}
    where, text = answers
    keys: dict[str, tuple[str, Any]] = {}
    for number, record in _jsonl(where, text):
        place = f"{where}: line {number}: case '{record['id']}'"
        if record["id"] in keys:
            raise SuiteError([f"{place}: a second answer for this id"])
        if record["id"] not in asked:
            raise SuiteError([f"{place}: no question with this id; are these the answers to "
                              f"this question file?"])
        keys[record["id"]] = (f"{where}: line {number}", record.get("ground_truth"))
    return keys


def _language(record: dict) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", json.dumps(record.get("question"),
                                                            ensure_ascii=False)) else "en"


def _messages(question: Any) -> list:
    """BFCL's question is a list of turns, each a list of messages; single-turn has one."""
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    if isinstance(question, list) and question and all(isinstance(t, list) for t in question):
        if len(question) != 1:
            raise _Unusable("the question has more than one turn", f"{len(question)} turns")
        return question[0]
    if isinstance(question, list):
        return question
    raise _Unusable("the question is not a list of messages")


# ---------------------------------------------------------------- functions and names

def openai_name(name: str) -> str:
    """A function name as OpenAI's API accepts it (``^[A-Za-z0-9_-]{1,64}$``): every other
    character, BFCL's dots above all, becomes "_", as BFCL itself sends them."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _functions(functions: Any, notes: Counter) -> dict[str, dict]:
    """BFCL name -> the suite's tool for it, named the OpenAI way."""
    functions = [functions] if isinstance(functions, dict) else functions
    if not isinstance(functions, list) or not functions:
        raise _Unusable("the question offers no function")
    tools: dict[str, dict] = {}
    for index, function in enumerate(functions):
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise _Unusable("a function has no name", f"function[{index}]")
        name = function["name"]
        legal = openai_name(name)
        if not _OPENAI_NAME.match(legal):
            raise _Unusable("a function name is longer than OpenAI's 64 characters", name)
        if legal in (tool["name"] for tool in tools.values()) or name in tools:
            # Two names that differ only where "." and "_" stand would be one name once sent.
            raise _Unusable("two functions share one OpenAI-legal name", legal)
        if legal != name:
            notes["function name made OpenAI-legal (\".\" sent as \"_\")"] += 1
        parameters = _schema(function.get("parameters", {"type": "dict"}),
                             f"{name}.parameters", notes)
        parameters.setdefault("properties", {})
        description = function.get("description") or name
        tools[name] = {"name": legal, "clear": description, "vague": description,
                       "parameters": parameters}
    return tools


def json_schema(parameters: dict, where: str = "parameters") -> dict:
    """A BFCL function document's ``parameters`` as JSON Schema (types renamed, enums repaired,
    null allowed where the default is null); ``ValueError`` naming the place if it cannot be."""
    try:
        converted = _schema(parameters, where, Counter())
    except _Unusable as why:
        raise ValueError(f"{why.reason}: {why.detail}" if why.detail else why.reason) from None
    converted.setdefault("properties", {})
    return converted


def _schema(schema: Any, where: str, notes: Counter) -> dict:
    """BFCL's schema as JSON Schema: its types renamed, its enums repaired."""
    if not isinstance(schema, dict):
        raise _Unusable("a function's parameters are not a schema", where)
    converted = {}
    for key, value in schema.items():
        if key == "type":
            if not isinstance(value, str) or value not in _TYPES:
                raise _Unusable("a type this importer does not know", f"{where}.type {value!r}")
            converted["type"] = _TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: _allow_null_default(_schema(sub, f"{where}.{name}", notes), notes)
                              for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            converted[key] = _schema(value, f"{where}.{key}", notes)
        else:
            converted[key] = value
    if "enum" in converted:
        _repair_enum(converted, notes)
    return converted


def _allow_null_default(schema: dict, notes: Counter) -> dict:
    """A parameter whose default is null takes null: ``{"type": "string", "default": null}``
    becomes ``{"type": ["string", "null"], ...}``, and an enum gets ``null`` among its values,
    as OpenAI's strict mode writes an optional parameter. BFCL's functions are Python ones,
    where passing ``None`` is passing the default, and BFCL's checker passes a ``null`` the
    answer key lists; JSON Schema needs the type to say so."""
    declared = schema.get("type")
    if "default" in schema and schema["default"] is None and isinstance(declared, str) \
            and declared != "null":
        schema["type"] = [declared, "null"]
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        notes["parameter whose default is null: null added to its type"] += 1
    return schema


def _repair_enum(schema: dict, notes: Counter) -> None:
    """Make an enum one JSON Schema can hold and a model can follow. BFCL's checker never looks
    at enums, so none of this changes which calls pass there."""
    enum = schema["enum"]
    if not isinstance(enum, list):
        notes["enum written as a single value, made a list"] += 1
        enum = schema["enum"] = [enum]
    if schema.get("type") == "array" and not all(isinstance(v, list) for v in enum):
        # The values are the items' ones: an array can never equal one of them.
        del schema["enum"]
        items = schema.setdefault("items", {})
        if "enum" not in items:
            notes["enum of an array moved to its items"] += 1
            items["enum"] = enum
            _repair_enum(items, notes)
        return
    declared = schema.get("type")
    if not isinstance(declared, str) or all(matches_type(v, declared) for v in enum):
        return
    # "1" for an integer, "True" for a boolean: read in the declared type, or dropped when it
    # has none ("dontcare" for an integer).
    typed = [v if matches_type(v, declared) else _as_type(v, declared) for v in enum]
    kept = [v for v in typed if v is not _UNREADABLE]
    notes["enum values of another type than the parameter's converted or dropped"] += 1
    if kept:
        schema["enum"] = kept
    else:
        del schema["enum"]


_UNREADABLE = object()  # not None: null could be an enum value


def _as_type(value: Any, type_name: str) -> Any:
    """An enum value written as a string ("2", "True"), read as the type it stands for."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value.lower() if type_name == "boolean" else value)
        except json.JSONDecodeError:
            return _UNREADABLE
        if matches_type(parsed, type_name):
            return parsed
    return _UNREADABLE


# ---------------------------------------------------------------- answer keys

# Accepted values that a call following the schema could never send. The lab's scorer checks
# types before the answer key, so such a value could never pass; it is dropped, and a case is
# skipped only when a parameter is left with nothing to accept.
_NULL = "null, which the parameter's type does not allow"
_WRONG_TYPE = "of another type than the schema's"
_OFF_ENUM = "outside the schema's enum"
_OMIT_REQUIRED = "\"\" (may be left out), but the parameter is required"
_DROPPED = (_NULL, _WRONG_TYPE, _OFF_ENUM, _OMIT_REQUIRED)


def _expected(ground_truth: Any, functions: dict[str, dict], notes: Counter) -> list[dict]:
    if isinstance(ground_truth, dict):
        ground_truth = [ground_truth]
    if not isinstance(ground_truth, list):
        raise _Unusable("the answer key is not a list of calls")
    calls = []
    for index, item in enumerate(ground_truth):
        if not isinstance(item, dict) or len(item) != 1:
            raise _Unusable("an answer-key call does not name exactly one function",
                            f"ground_truth[{index}]")
        [(name, arguments)] = item.items()
        if name not in functions:
            raise _Unusable("the answer key calls a function the question does not offer", name)
        if not isinstance(arguments, dict):
            raise _Unusable("an answer-key call's arguments are not an object", name)
        tool = functions[name]
        calls.append({"name": tool["name"],
                      "arguments": _spec(arguments, tool["parameters"], name, notes)})
    return calls


def _spec(spec: dict, schema: dict, where: str, notes: Counter) -> dict:
    """An answer-key object (key -> accepted values) that fits ``schema``, or _Unusable."""
    properties = schema.get("properties")
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    cleaned = {}
    for name, options in spec.items():
        path = f"{where}.{name}"
        if isinstance(properties, dict) and name not in properties \
                and not schema.get("additionalProperties"):
            # BFCL fails a call that sends it, and one that leaves it out unless "" is listed.
            if isinstance(options, list) and OMIT in options:
                notes["answer-key parameter the function lacks, may be left out: dropped"] += 1
                continue
            raise _Unusable("the answer key needs a parameter the function does not have", path)
        sub = properties.get(name, {}) if isinstance(properties, dict) else {}
        cleaned[name] = _accepted(options, sub, name in required, path, notes)
    for name in required:
        if name not in cleaned:
            raise _Unusable("the answer key leaves out a required parameter", f"{where}.{name}")
    return cleaned


def _accepted(options: Any, schema: dict, required: bool, where: str, notes: Counter) -> list:
    """The accepted values of one parameter that a call following the schema can send."""
    if not isinstance(options, list) or not options:
        raise _Unusable("the answer key accepts no value for a parameter: no call can pass, "
                        "in BFCL either", where)
    kept, dropped = [], []
    for option in options:
        try:
            if option == OMIT and required:
                # BFCL checks required parameters first: leaving one out never passes there.
                raise _Unusable(_OMIT_REQUIRED, where)
            kept.append(option if option == OMIT else _value(option, schema, where, notes))
        except _Unusable as why:
            dropped.append(why)
    if not kept:
        first = dropped[0]
        if first.reason not in _DROPPED:  # from deeper down: already says what is wrong
            raise first
        raise _Unusable(f"every accepted value of a parameter is {first.reason}", first.detail)
    for why in dropped:
        notes[f"accepted value dropped: {why.reason}"] += 1
    return kept


def _value(value: Any, schema: dict, where: str, notes: Counter) -> Any:
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if value is None and "null" not in types:
        raise _Unusable(_NULL, where)
    if types and not any(matches_type(value, t) for t in types):
        raise _Unusable(_WRONG_TYPE, f"{where}: {short_json(value)} is not {' or '.join(types)}")
    if isinstance(value, dict):
        if not all(isinstance(options, list) for options in value.values()):
            # BFCL compares an object inside an object as it is, not as a spec: each of its
            # values is the only one accepted.
            notes["object in an object read as a spec with one accepted value each"] += 1
            value = {key: [item] for key, item in value.items()}
        return _spec(value, schema, where, notes)
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_value(item, items, f"{where}[{i}]", notes) for i, item in enumerate(value)]
    enum = schema.get("enum")
    if enum is None or any(type(value) is type(e) and value == e for e in enum):
        return value
    # BFCL compares strings without case, spaces or punctuation: "bronze" means "Bronze".
    same = [e for e in enum if isinstance(e, str) and isinstance(value, str)
            and normalise(e) == normalise(value)]
    if not same:
        raise _Unusable(_OFF_ENUM, f"{where}: {short_json(value)}")
    notes["accepted string respelled as the enum value it matches"] += 1
    return same[0]
