"""One name per thing across the course: in the lessons and labs a name means one signature.

A learner who meets ``calculate`` in lesson 3 and again in lesson 7 should meet the same tool.
So, reading every lesson and lab source with ``ast`` (nothing is run):

- the demo tools (``toolkit/demo_tools.py``) own their names: a function defined under one of
  them, and a tool spec dict whose ``name`` is one of them, must take the demo tool's
  parameters;
- any other function name defined in more than one place must take the same parameters
  everywhere. A function imported from the toolkit by name counts as defined there, with the
  toolkit's signature, so a lab cannot reuse a toolkit helper's name for something else.

Compared: the parameters' names, kinds and order, and which have defaults; not annotations (a
lesson may annotate loosely before it teaches types) and not the default values. Left out:
methods (their class names them), private names (``_x``, used only in their own module) and
each grader's entry point ``grade``, always called through its module (``graders.x.grade``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import defaultdict
from pathlib import Path

from toolkit.demo_tools import DEMO_TOOLS

ROOT = Path(__file__).resolve().parents[1]
COURSE = ["lessons/*.py", "labs/*.py", "labs/graders/*.py", "labs/solutions/*.py"]
NOT_COMPARED = {"grade"}


def demo_signatures() -> dict[str, tuple[str, ...]]:
    """Each demo tool's parameters, as ``signature_of`` writes them."""
    return {each.name: signature_of_inspected(inspect.signature(each.function)) for each in DEMO_TOOLS}


def signature_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """``("a", "b=", "*args", "c=", "**options")``: names, kinds, order and which have defaults."""
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    first_default = len(positional) - len(arguments.defaults)
    parts = [each.arg + ("=" if index >= first_default else "") for index, each in enumerate(positional)]
    if arguments.vararg:
        parts.append("*" + arguments.vararg.arg)
    elif arguments.kwonlyargs:
        parts.append("*")
    parts += [each.arg + ("=" if default is not None else "")
              for each, default in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg:
        parts.append("**" + arguments.kwarg.arg)
    return tuple(parts)


def signature_of_inspected(signature: inspect.Signature) -> tuple[str, ...]:
    """The same form for a function that is imported, not parsed."""
    parts, star_written = [], False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            parts.append("*" + parameter.name)
            star_written = True
        elif parameter.kind is parameter.VAR_KEYWORD:
            parts.append("**" + parameter.name)
        else:
            if parameter.kind is parameter.KEYWORD_ONLY and not star_written:
                parts.append("*")
                star_written = True
            parts.append(parameter.name + ("" if parameter.default is parameter.empty else "="))
    return tuple(parts)


def spec_signature(properties: list[str], required: list[str]) -> frozenset[str]:
    """A tool spec's parameters, order aside: ``{"city", "unit="}``."""
    return frozenset(name + ("" if name in required else "=") for name in properties)


def _tool_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name given by ``@tool(name="...")``, if the function is registered under another name."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "tool":
            for keyword in decorator.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return keyword.value.value
    return None


def _constant_keys(node: ast.Dict) -> dict[str, ast.AST]:
    return {key.value: value for key, value in zip(node.keys, node.values)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)}


def _as_dict(node: ast.AST, assigned: dict[str, ast.AST]) -> ast.Dict | None:
    """A dict literal, following module-level names and constant subscripts: ``SPEC["function"]``."""
    if isinstance(node, ast.Name) and node.id in assigned:
        return _as_dict(assigned[node.id], assigned)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        outer = _as_dict(node.value, assigned)
        inner = _constant_keys(outer).get(node.slice.value) if outer else None
        return _as_dict(inner, assigned) if inner is not None else None
    return node if isinstance(node, ast.Dict) else None


def _spec_parameters(node: ast.Dict, assigned: dict[str, ast.AST]) -> frozenset[str] | None:
    """The parameters of a tool spec dict (OpenAI ``parameters`` or MCP ``inputSchema``), or None."""
    keys = _constant_keys(node)
    schema = keys.get("parameters", keys.get("inputSchema"))
    schema = _as_dict(schema, assigned) if schema is not None else None
    if schema is None:
        return None
    schema_keys = _constant_keys(schema)
    properties = _as_dict(schema_keys.get("properties", ast.Dict([], [])), assigned)
    required = schema_keys.get("required", ast.List([]))
    if properties is None or not isinstance(required, (ast.List, ast.Tuple)):
        return None
    return spec_signature(list(_constant_keys(properties)),
                          [each.value for each in required.elts if isinstance(each, ast.Constant)])


def definitions(path: str, source: str):
    """Yield (kind, name, signature, where) for each function, toolkit import and tool spec."""
    # A lesson's cells may ``await`` at top level, as Jupyter allows.
    tree = compile(source, path, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    assigned = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    methods = {id(member) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for member in node.body}
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in methods:
            signature = signature_of(node)
            yield "function", node.name, signature, where
            if (registered := _tool_name(node)) and registered != node.name:
                yield "function", registered, signature, where
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolkit"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                imported = getattr(module, alias.name, None)
                if inspect.isfunction(imported):
                    yield ("import", alias.asname or alias.name,
                           signature_of_inspected(inspect.signature(imported)), where)
        elif isinstance(node, ast.Dict):
            name = _constant_keys(node).get("name")
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                parameters = _spec_parameters(node, assigned)
                if parameters is not None:
                    yield "spec", name.value, parameters, where


def conflicts(sources: dict[str, str], demo: dict[str, tuple[str, ...]]) -> list[str]:
    """Every name defined with a second signature, one line each, with every place it is defined."""
    def written(signature) -> str:
        return "(" + ", ".join(sorted(signature) if isinstance(signature, frozenset) else signature) + ")"

    problems, functions = [], defaultdict(list)
    for path, source in sources.items():
        for kind, name, signature, where in definitions(path, source):
            if name in demo:
                own = demo[name]
                if kind == "spec":  # a spec lists its parameters in no order
                    own = spec_signature([part.rstrip("=") for part in own],
                                         [part for part in own if not part.endswith("=")])
                if signature != own:
                    problems.append(f"{where}: {name} is a demo tool of toolkit/demo_tools.py, {written(own)}, "
                                    f"but this {kind} takes {written(signature)}")
            elif kind != "spec" and not name.startswith("_") and name not in NOT_COMPARED:
                functions[name].append((signature, where))
    for name, places in sorted(functions.items()):
        signatures = {signature for signature, _ in places}
        if len(signatures) > 1:
            problems.append(f"{name} has {len(signatures)} signatures: "
                            + "; ".join(f"{where} {written(signature)}" for signature, where in places))
    return problems


def course_sources() -> dict[str, str]:
    paths = sorted(path for pattern in COURSE for path in ROOT.glob(pattern))
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


def test_every_name_in_the_lessons_and_labs_has_one_signature():
    sources = course_sources()
    assert len(sources) > 40  # every lesson, lab, grader and solution was read
    problems = conflicts(sources, demo_signatures())
    assert not problems, "\n".join(problems)


# --- The checker itself, on planted sources ------------------------------------------------------

DEMO = {"calculate": ("expression",), "get_weather": ("city", "unit=")}


def test_a_second_calculator_is_found_as_a_function_and_as_a_spec():
    planted = {"lesson.py": (
        "def calculate(a, operator, b):\n    return a\n"
        "SPEC = {'type': 'function', 'function': {'name': 'calculate', 'parameters': {\n"
        "    'type': 'object', 'properties': {'a': {}, 'b': {}}, 'required': ['a', 'b']}}}\n")}
    problems = conflicts(planted, DEMO)
    assert len(problems) == 2
    assert problems[0].startswith("lesson.py:1: calculate is a demo tool") and "(a, operator, b)" in problems[0]
    assert problems[1].startswith("lesson.py:3: calculate is a demo tool") and "this spec takes (a, b)" in problems[1]


def test_a_spec_is_followed_through_names_and_subscripts_and_its_order_does_not_count():
    planted = {"grader.py": (
        "SCHEMA = {'type': 'object', 'properties': {'city': {}}, 'required': ['city']}\n"
        "WRAPPED = {'function': {'parameters': SCHEMA}}\n"
        "MCP = {'name': 'get_weather', 'inputSchema': SCHEMA}\n"
        "CHAT = {'name': 'get_weather', 'parameters': WRAPPED['function']['parameters']}\n"
        "FINE = {'name': 'get_weather', 'parameters': {'properties': {'unit': {}, 'city': {}}, 'required': ['city']}}\n"
        "CALL = {'name': 'get_weather', 'arguments': {'town': 'Paris'}}\n")}  # a call, not a spec
    problems = conflicts(planted, DEMO)
    assert [problem.split(":")[1] for problem in problems] == ["3", "4"]
    assert all("this spec takes (city)" in problem for problem in problems)


def test_one_helper_with_two_signatures_is_found_with_both_places():
    planted = {"lessons/03.py": "def run_turn_by_hand(backend, question, max_rounds=3):\n    pass\n",
               "lessons/06.py": "def run_turn_by_hand(backend, messages, tools_by_name, **options):\n    pass\n",
               "labs/06.py": "def run_turn_by_hand(backend, messages, tools_by_name, **options) -> list:\n    pass\n"}
    assert conflicts(planted, DEMO) == [
        "run_turn_by_hand has 2 signatures: lessons/03.py:1 (backend, question, max_rounds=); "
        "lessons/06.py:1 (backend, messages, tools_by_name, **options); "
        "labs/06.py:1 (backend, messages, tools_by_name, **options)"]


def test_a_lab_function_named_like_an_imported_toolkit_function_is_found():
    planted = {"lessons/09.py": "from toolkit.errors_for_model import sanitize\n",
               "labs/09.py": "def sanitize(exc, secrets):\n    pass\n"}
    (problem,) = conflicts(planted, DEMO)
    assert problem.startswith("sanitize has 2 signatures: ")
    assert "lessons/09.py:1 (text, secrets=, limit=)" in problem and "labs/09.py:1 (exc, secrets)" in problem


def test_a_registered_name_counts_and_annotations_defaults_methods_private_names_and_grade_do_not():
    planted = {"a.py": ("from typing import Literal\n"
                        "@tool(name='calculate')\ndef calculate_by_symbol(a, operator, b):\n    pass\n"
                        "def get_weather(city: str, unit: Literal['celsius', 'fahrenheit'] = 'celsius'):\n    pass\n"
                        "def _call(name):\n    pass\n"
                        "def grade(extract_calls):\n    pass\n"
                        "class Report:\n    def check(self, case):\n        pass\n"),
               "b.py": ("def get_weather(city, unit='fahrenheit'):\n    pass\n"
                        "def _call(id, name):\n    pass\n"
                        "def grade(sanitize_error, seed=None):\n    pass\n"
                        "class Other:\n    def check(self):\n        pass\n")}
    (problem,) = conflicts(planted, DEMO)
    assert problem.startswith("a.py:3: calculate is a demo tool") and "(a, operator, b)" in problem


def test_the_demo_signatures_are_read_from_the_demo_tools():
    assert demo_signatures() == {"get_weather": ("city", "unit="), "calculate": ("expression",),
                                 "get_order_status": ("order_id",),
                                 "convert_currency": ("amount", "from_currency", "to_currency")}
