"""BFCL's simulated APIs, loaded from the wheel, and a safe way to call them.

BFCL checks a multi-turn case by running calls against Python classes that imitate a file
system, a trading bot, a car and so on, and comparing the objects' state afterwards. The
classes ship in the ``bfcl-eval`` wheel; ``api_classes`` imports them from it at run time
(from the zip itself, with Python's zipimport: nothing is copied into the lab, and none of
the package's other modules or heavy dependencies are loaded). ``MathAPI`` needs ``mpmath``.

BFCL runs a model's calls by handing strings to ``eval``. The lab never does: a ``World``
holds the instances of one case, and a call reaches one of their *public* methods by name,
with arguments that are data (JSON from a model, or literals read from BFCL's answer strings
with ``ast.literal_eval``). ``toolset`` wraps each documented function as a lab ``Tool``, so
the loop checks the model's arguments against BFCL's document before anything runs, and an
unknown, private or mistyped call comes back to the model as a tool error.
"""
from __future__ import annotations

import ast
import copy
import glob
import importlib
import inspect
import json
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from toolkit.bench.bfcl import json_schema, openai_name
from toolkit.bench.multi_turn_data import MultiTurnCase
from toolkit.lab_error import LabError
from toolkit.tools import Tool, ToolSet

__all__ = ["BFCL_VERSION", "DESCRIPTIONS", "Call", "World", "api_classes", "cached_wheel", "describe", "parse_call",
           "toolset"]

BFCL_VERSION = "2026.3.23"  # the wheel .ci/run downloads

# Where each class lives in the wheel, under bfcl_eval/eval_checker/multi_turn_eval/func_source_code/.
_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
_STATELESS = {"MathAPI"}  # built without a scenario, as BFCL builds it


def cached_wheel() -> Path | None:
    """The bfcl-eval wheel where ``.ci/run`` keeps it (``pip download bfcl-eval --no-deps``)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tool-calling-lab" / "bfcl"
    found = sorted(glob.glob(str(cache / f"bfcl_eval-{BFCL_VERSION}-*.whl")))
    return Path(found[-1]) if found else None


def api_classes(apis: Path | None, names: Iterable[str]) -> dict[str, type]:
    """The simulated API classes called ``names``, imported from ``apis``: the bfcl-eval wheel,
    or the folder it was unpacked into (None: the cached wheel)."""
    apis = apis or cached_wheel()
    if apis is None:
        raise LabError("BFCL's simulated APIs come in the bfcl-eval wheel, which is not in the "
                       "cache; fetch it once (it needs the network) with: python -m pip download "
                       f"bfcl-eval=={BFCL_VERSION} --no-deps -d ~/.cache/tool-calling-lab/bfcl")
    _mount(Path(apis))
    classes = {}
    for name in names:
        if name not in _MODULES:
            raise LabError(f"{name} is not one of BFCL's multi-turn APIs ({', '.join(_MODULES)})")
        try:
            module = importlib.import_module(f"{_PACKAGE}.{_MODULES[name]}")
        except ModuleNotFoundError as error:
            if error.name and not error.name.startswith("bfcl_eval"):
                raise LabError(f"BFCL's {name} needs the {error.name} package: "
                               f"python -m pip install {error.name}") from error
            raise LabError(f"{apis}: no {_MODULES[name]}.py among BFCL's simulated APIs; is it the "
                           f"bfcl-eval wheel ({BFCL_VERSION})?") from error
        if not isinstance(getattr(module, name, None), type):
            raise LabError(f"{apis}: {_MODULES[name]}.py defines no class {name}")
        classes[name] = getattr(module, name)
    return classes


def _mount(apis: Path) -> None:
    """Make ``bfcl_eval``'s packages importable from ``apis`` without running the package's
    own ``__init__`` files or putting the wheel on ``sys.path``: each package not yet imported
    becomes an empty module whose ``__path__`` points into the wheel, where zipimport finds
    the modules. A package already imported (installed, or mounted before) is left as it is."""
    parts = _PACKAGE.split(".")
    if _PACKAGE in sys.modules:
        return
    if not apis.exists():
        raise LabError(f"{apis}: no such file; BFCL's simulated APIs come in the bfcl-eval wheel")
    if apis.is_file() and apis.suffix != ".whl":
        raise LabError(f"{apis}: not a wheel; give the bfcl-eval wheel or the folder it was unpacked into")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(apis.joinpath(*parts[:depth]))]
            sys.modules[name] = package


# ---------------------------------------------------------------- a call, as data

@dataclass(frozen=True)
class Call:
    """One function call as data: a name and keyword arguments."""

    name: str
    arguments: dict

    def text(self) -> str:
        """The call as BFCL writes it: ``cd(folder='document')``."""
        return f"{self.name}({', '.join(f'{key}={value!r}' for key, value in self.arguments.items())})"


def parse_call(text: str) -> tuple[str, list, dict]:
    """BFCL's call string as (name, positional values, keyword values), every value a Python
    literal: ``sort('final_report.pdf')`` -> ("sort", ["final_report.pdf"], {}). ``ValueError``
    for anything that is not one plain call with literal arguments; nothing is evaluated."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a call of a plain function name")
        return (node.func.id, [ast.literal_eval(arg) for arg in node.args],
                {keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords})
    except (SyntaxError, ValueError, TypeError) as error:
        raise ValueError(f"{text!r} is not a call with literal arguments ({error})") from None


# ---------------------------------------------------------------- one case's world

class World:
    """The API instances of one case, fresh from its ``initial_config``, and its methods by name.

    Built as BFCL builds them: each involved class instantiated, and loaded with a deep copy of
    its part of the configuration (``long_context`` padding in that category). When two classes
    have a method of the same name, the later class's is the one called, as in BFCL."""

    def __init__(self, case: MultiTurnCase, classes: dict[str, type]):
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for name in case.classes:
            instance = classes[name]()
            if name not in _STATELESS:
                instance._load_scenario(copy.deepcopy(case.initial_config.get(name, {})),
                                        long_context=case.long_context)
            self.instances[name] = instance
            for method, bound in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method.startswith("_"):
                    self.methods[method] = bound

    def bind(self, name: str, args: list | tuple = (), kwargs: dict | None = None) -> Call:
        """The call with positional values named after the method's parameters; ``TypeError``
        when they do not fit its signature, ``NameError`` when there is no such public method."""
        method = self._method(name)
        bound = inspect.signature(method).bind(*args, **(kwargs or {}))
        return Call(name, dict(bound.arguments))

    def run(self, call: Call) -> str:
        """Run one call; its result as BFCL records it: text as it is, a dict as JSON, anything
        else as ``str``, and a failure as ``"Error during execution: ..."`` (never raised)."""
        try:
            result = self._method(call.name)(**call.arguments)
        except Exception as error:  # the simulated APIs raise on bad input as real code would
            return f"Error during execution: {error}"
        if isinstance(result, str):
            return result
        if isinstance(result, dict):
            try:
                return json.dumps(result)
            except (TypeError, ValueError):
                return str(result)
        return str(result)

    def run_text(self, text: str) -> str:
        """Run one of BFCL's answer strings (parsed, never evaluated)."""
        try:
            name, args, kwargs = parse_call(text)
            call = self.bind(name, args, kwargs)
        except (ValueError, TypeError, NameError) as error:
            return f"Error during execution: {error}"
        return self.run(call)

    def state(self) -> dict[str, dict[str, Any]]:
        """Each stateful instance's public attributes (what BFCL compares), copied."""
        return {name: {key: copy.deepcopy(value) for key, value in vars(instance).items()
                       if not key.startswith("_")}
                for name, instance in self.instances.items() if name not in _STATELESS}

    def _method(self, name: str):
        if name.startswith("_") or name not in self.methods:
            raise NameError(f"name {name!r} is not defined")
        return self.methods[name]


DESCRIPTIONS = ("full", "short", "none")
"""How much of BFCL's descriptions a model is shown: ``full`` as written; ``short`` without the
sentence every function of an API repeats ("This tool belongs to the Gorilla file system. It
is a simple file system that ... Tool description: "), about a quarter of the prompt; ``none``:
names and parameters only."""


def describe(document: dict, descriptions: str = "full") -> str:
    """A function's description as ``descriptions`` asks (see ``DESCRIPTIONS``)."""
    text = document.get("description") or ""
    if descriptions == "short":
        return text.split("Tool description: ", 1)[-1]
    if descriptions == "none":
        return ""
    if descriptions != "full":
        raise ValueError(f"descriptions must be one of {', '.join(DESCRIPTIONS)}, not {descriptions!r}")
    return text


def toolset(world: World, documents: Iterable[dict], descriptions: str = "full") -> ToolSet:
    """The documented functions as lab tools that run on ``world``. Each tool's schema is its
    BFCL document's (as JSON Schema), so the loop rejects a missing or mistyped argument before
    any method runs; the result the model reads is the text BFCL would record."""
    tools = []
    for document in documents:
        name = document["name"]
        if name not in world.methods:
            raise LabError(f"BFCL documents {name}, but none of the case's APIs has a public method "
                           f"of that name")
        spec = {"name": openai_name(name), "description": describe(document, descriptions),
                "parameters": json_schema(document["parameters"], f"{name}.parameters")}

        def execute(arguments: dict, context: Any = None, _name: str = name) -> str:
            return world.run(Call(_name, arguments))

        tools.append(Tool.from_spec(spec, execute))
    return ToolSet(tools)
