"""BFCL's multi-turn categories, read as they ship: questions, answers and function documents.

A multi-turn case is a conversation: the user speaks several times, and between their turns
the model acts on simulated APIs (a file system, a trading bot, a car...) whose state carries
over. BFCL ships four such categories in the ``bfcl-eval`` wheel, 200 cases each:

- ``multi_turn_base``          every turn can be done with the functions offered;
- ``multi_turn_miss_func``     a function is held back: on the turn that needs it the right
                               move is not to call; a later, empty turn offers it
                               ("I have updated some more functions...") and the work resumes;
- ``multi_turn_miss_param``    a turn leaves out a value the call needs: the right move is to
                               ask; the next user turn gives it;
- ``multi_turn_long_context``  the same tasks with the APIs' state padded with long content.

Each category is three kinds of file: ``BFCL_v4_multi_turn_<kind>.json`` (the questions, one JSON
object per line), ``possible_answer/`` (per turn, the calls that do it, as Python call strings)
and ``multi_turn_func_doc/<api>.json`` (each API class's functions, in BFCL's schema dialect).
``import_multi_turn`` reads all three from the wheel itself or from its unpacked ``data/``
folder; the simulated APIs are loaded from the wheel by :mod:`toolkit.bench.multi_turn_apis`.
A file that is not what it should be raises one :class:`SuiteError` naming the file and line.
"""
from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.bench.suite_checks import SuiteError
from toolkit.bench.suite_checks import display_path as _display

__all__ = ["API_DOCS", "MULTI_TURN_CATEGORIES", "NEW_FUNCTIONS_PROMPT", "MultiTurnCase",
           "MultiTurnSuite", "import_multi_turn", "is_multi_turn_file"]

MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                         "multi_turn_long_context")

# Each API class of the multi-turn categories and the file of ``multi_turn_func_doc/`` that
# documents its functions (BFCL's own pairing: the file names do not follow the class names).
API_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}

# What BFCL has the user say on the empty turn where a held-back function is offered.
NEW_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"

_QUESTIONS = re.compile(r"^BFCL_v\d+_(multi_turn_\w+)\.json$")


@dataclass(frozen=True)
class MultiTurnCase:
    """One conversation: what the user says per turn, the world it starts from, the answers.

    ``turns[i]`` is the user's messages of turn ``i``; empty on the turn where held-back
    functions arrive (``held_back[i]`` names them), where BFCL's fixed sentence is said instead.
    ``ground_truth[i]`` is the calls that do turn ``i`` as BFCL writes them
    (``"cd(folder='document')"``); an empty list means the right move is to make no call.
    """

    id: str
    category: str
    turns: tuple[tuple[dict, ...], ...]
    initial_config: dict
    classes: tuple[str, ...]
    functions: tuple[dict, ...]          # BFCL's documents offered from the first turn
    held_back: dict[int, tuple[dict, ...]]
    ground_truth: tuple[tuple[str, ...], ...]

    @property
    def long_context(self) -> bool:
        """Whether the APIs are loaded with their long padding (BFCL's long_context category)."""
        return "long_context" in self.category

    @property
    def abstain_turns(self) -> tuple[int, ...]:
        """The turns whose right move is no call: a function or a value is missing."""
        return tuple(index for index, calls in enumerate(self.ground_truth) if not calls)

    def user_messages(self, turn: int) -> list[dict]:
        """What the user says at ``turn``: BFCL's fixed sentence on a held-back function's turn."""
        if turn in self.held_back and not self.turns[turn]:
            return [{"role": "user", "content": NEW_FUNCTIONS_PROMPT}]
        return [dict(message) for message in self.turns[turn]]


@dataclass(frozen=True)
class MultiTurnSuite:
    category: str
    cases: tuple[MultiTurnCase, ...]
    source: str
    apis: Path | None = None             # the wheel, or the folder holding bfcl_eval/, with the APIs
    docs: dict[str, tuple[dict, ...]] = field(default_factory=dict)  # class -> its documents

    def case(self, case_id: str) -> MultiTurnCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(f"no case {case_id!r} in {self.source}")

    def report(self) -> str:
        turns = sum(len(case.turns) for case in self.cases)
        abstain = sum(len(case.abstain_turns) for case in self.cases)
        return (f"{self.source}: {len(self.cases)} multi-turn cases, {turns} turns, {abstain} "
                f"where the right move is no call")


# ---------------------------------------------------------------- finding and reading files

def is_multi_turn_file(path: str | Path) -> bool:
    """Whether ``path`` names one of BFCL's multi-turn question files (also inside the wheel:
    ``bfcl_eval-....whl/BFCL_v4_multi_turn_base.json``)."""
    return bool(_QUESTIONS.match(Path(path).name))


def import_multi_turn(source: str | Path, category: str | None = None) -> MultiTurnSuite:
    """One multi-turn category, from the ``bfcl-eval`` wheel, its unpacked ``data/`` folder (or
    the folder the wheel was unpacked into), or a question file named directly (then
    ``category`` is read from its name); answers and function documents are found where BFCL
    keeps them, beside the questions."""
    path = Path(source).expanduser()
    if category is None:
        match = _QUESTIONS.match(path.name)
        if not match:
            raise SuiteError([f"{source}: not a BFCL multi-turn question file "
                              f"(BFCL_v4_multi_turn_<kind>.json)"])
        category, path = match.group(1), path.parent
    if category not in MULTI_TURN_CATEGORIES:
        raise SuiteError([f"category {category!r} is not a BFCL multi-turn category; choose one "
                          f"of {', '.join(MULTI_TURN_CATEGORIES)}"])
    files = _Files.at(path)
    name = f"BFCL_v4_{category}.json"
    questions = files.read(name)
    answers = files.read(f"possible_answer/{name}",
                         missing="no answers file: BFCL keeps them in possible_answer/ beside the "
                                 "questions")
    return _build(category, questions, answers, files)


@dataclass(frozen=True)
class _Files:
    """Where BFCL's data lies: inside the wheel (``wheel``) or in the folder ``where``; and
    where its simulated APIs can be loaded from (``apis``: the wheel, the folder the wheel was
    unpacked into, or None when the data folder came without them)."""

    where: Path
    wheel: Path | None
    apis: Path | None

    @classmethod
    def at(cls, path: Path) -> _Files:
        if path.is_file():
            if not zipfile.is_zipfile(path):
                raise SuiteError([f"{_display(path)}: not a wheel or zip file; give the "
                                  f"bfcl-eval wheel or its unpacked data/ folder"])
            return cls(path, path, path)
        for folder in (path, path / "data", path / "bfcl_eval" / "data"):
            if (folder / "multi_turn_func_doc").is_dir() or any(folder.glob("BFCL_v*_multi_turn_*.json")):
                return cls(folder, None, _package_root(folder))
        if not path.exists():
            raise SuiteError([f"{_display(path)}: no such file or folder; give the bfcl-eval "
                              f"wheel or its unpacked data/ folder"])
        raise SuiteError([f"{_display(path)}: no BFCL multi-turn files here, nor in data/ or "
                          f"bfcl_eval/data/; give the bfcl-eval wheel or its unpacked data/ folder"])

    def read(self, relative: str, missing: str = "") -> tuple[str, str]:
        """(where, text) of a file of BFCL's ``data/`` folder."""
        if self.wheel is not None:
            with zipfile.ZipFile(self.wheel) as archive:
                member = next((m for m in archive.namelist() if m.endswith(f"data/{relative}")), None)
                if member is None:
                    raise SuiteError([f"{_display(self.wheel)}: no data/{relative} in it"
                                      + (f" ({missing})" if missing else "; is it the bfcl-eval wheel?")])
                return f"{_display(self.wheel)}:{member}", archive.read(member).decode("utf-8")
        path = self.where / relative
        try:
            return _display(path), path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SuiteError([f"{_display(path)}: no such file" + (f" ({missing})" if missing else "")]) from None
        except OSError as error:
            raise SuiteError([f"{_display(path)}: cannot read ({error.strerror})"]) from error


def _package_root(folder: Path) -> Path | None:
    """The folder holding ``bfcl_eval/`` when ``folder`` is the ``data/`` of an unpacked wheel."""
    root = folder.parent.parent
    return root if (root / "bfcl_eval" / "eval_checker" / "multi_turn_eval").is_dir() else None


def _jsonl(where: str, text: str) -> list[tuple[int, dict]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise SuiteError([f"{where}: line {number}: not valid JSON ({error.msg}); a BFCL file "
                              f"holds one JSON object per line"]) from error
        if not isinstance(record, dict):
            raise SuiteError([f"{where}: line {number}: not a JSON object"])
        records.append((number, record))
    return records


def _build(category: str, questions: tuple[str, str], answers: tuple[str, str],
           files: _Files) -> MultiTurnSuite:
    where_q, where_a = questions[0], answers[0]
    keys: dict[str, Any] = {}
    for number, record in _jsonl(*answers):
        if not isinstance(record.get("id"), str) or not _is_turn_list(record.get("ground_truth")):
            raise SuiteError([f"{where_a}: line {number}: needs a string 'id' and a 'ground_truth' "
                              f"that is a list of turns, each a list of call strings"])
        keys[record["id"]] = record["ground_truth"]
    docs: dict[str, tuple[dict, ...]] = {}
    cases = []
    for number, record in _jsonl(*questions):
        place = f"{where_q}: line {number}"
        case_id = record.get("id")
        if not isinstance(case_id, str) or not case_id.startswith(category + "_"):
            raise SuiteError([f"{place}: the id {case_id!r} is not one of {category}"])
        place += f": case '{case_id}'"
        if case_id not in keys:
            raise SuiteError([f"{place}: no answer with this id in {where_a}"])
        classes = record.get("involved_classes")
        if not isinstance(classes, list) or not classes:
            raise SuiteError([f"{place}: 'involved_classes' must list the APIs the case uses"])
        for name in classes:
            if name not in API_DOCS:
                raise SuiteError([f"{place}: the API class {name!r} is not one of BFCL's multi-turn "
                                  f"APIs ({', '.join(API_DOCS)})"])
            if name not in docs:
                docs[name] = _docs(files, name)
        config = record.get("initial_config", {})
        if not isinstance(config, dict) or (unknown := sorted(set(config) - set(API_DOCS))):
            raise SuiteError([f"{place}: 'initial_config' names an API class that is not one of "
                              f"BFCL's ({', '.join(unknown) if isinstance(config, dict) else 'not an object'})"])
        turns = record.get("question")
        if not isinstance(turns, list) or not all(isinstance(turn, list) for turn in turns):
            raise SuiteError([f"{place}: 'question' must be a list of turns, each a list of messages"])
        truth = keys[case_id]
        if len(truth) != len(turns):
            raise SuiteError([f"{place}: {len(turns)} turns asked but {len(truth)} answered in {where_a}"])
        offered = [doc for name in classes for doc in docs[name]]
        held_back: dict[int, tuple[dict, ...]] = {}
        for turn, names in (record.get("missed_function") or {}).items():
            if not str(turn).isdigit() or int(turn) >= len(turns) or turns[int(turn)]:
                raise SuiteError([f"{place}: a held-back function arrives at turn {turn}, which must "
                                  f"be an empty turn of the conversation"])
            arriving = []
            for function in names:
                doc = next((doc for doc in offered if doc["name"] == function), None)
                if doc is None:
                    raise SuiteError([f"{place}: the held-back function {function!r} is in none of "
                                      f"the case's APIs"])
                offered.remove(doc)
                arriving.append(doc)
            held_back[int(turn)] = tuple(arriving)
        if empty := [index for index, turn in enumerate(turns) if not turn and index not in held_back]:
            raise SuiteError([f"{place}: turn {empty[0]} has no message and brings no function"])
        cases.append(MultiTurnCase(
            id=case_id, category=category, turns=tuple(tuple(turn) for turn in turns),
            initial_config=config, classes=tuple(classes), functions=tuple(offered),
            held_back=held_back, ground_truth=tuple(tuple(calls) for calls in truth)))
    if not cases:
        raise SuiteError([f"{where_q}: no case in it"])
    return MultiTurnSuite(category, tuple(cases), where_q, files.apis, docs)


def _is_turn_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(turn, list) and all(isinstance(call, str) for call in turn) for turn in value)


def _docs(files: _Files, class_name: str) -> tuple[dict, ...]:
    where, text = files.read(f"multi_turn_func_doc/{API_DOCS[class_name]}",
                             missing=f"the function documents of {class_name}")
    docs = []
    for number, record in _jsonl(where, text):
        if not isinstance(record.get("name"), str) or not isinstance(record.get("parameters"), dict):
            raise SuiteError([f"{where}: line {number}: a function document needs a 'name' and "
                              f"'parameters'"])
        docs.append(record)
    return tuple(docs)
