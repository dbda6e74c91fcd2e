"""Tools, tool sets and tool providers.

A ``Tool`` pairs what the model sees (name, description, JSON Schema) with code to run. It is
made one of two ways, the same two that LangChain4j offers:

- from a function, with the ``@tool`` decorator (LangChain4j's ``@Tool``): the schema comes
  from the signature and docstring (see ``toolkit.schema``);
- by hand, with ``Tool.from_spec(spec, executor)`` (LangChain4j's ToolSpecification plus
  ToolExecutor): you write the JSON Schema, ``jsonschema`` checks the arguments against it.

A ``ToolSet`` is the tools offered in one request. A tool provider is any function that looks
at the request (the user's message, who is asking) and offers more tools for that turn only;
``tools_for_turn`` merges them with the static set.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, get_args

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from toolkit.json_schema import schema_error, validator_for
from toolkit.schema import (
    InvocationContext,
    ToolArgumentsError,
    ToolRegistrationError,
    argument_problems,
    function_schema,
    hidden_values,
    json_path,
    missing_descriptions,
)

ReturnBehavior = Literal["to_model", "immediate", "immediate_if_last"]
"""Where a tool's result goes: back to the model (default), straight to the user, or straight
to the user only when it is the last call of the turn."""

RETURN_BEHAVIORS: tuple[str, ...] = get_args(ReturnBehavior)

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # OpenAI's rule; most other APIs accept it too


class Tool:
    """A tool the model can call. Call it like the function it wraps, ``invoke`` it with the
    raw arguments the model wrote, or ``run`` it on arguments already validated."""

    def __init__(self, *, name: str, description: str, parameters: dict[str, Any],
                 check: Callable[[dict], dict],
                 run: Callable[[dict, InvocationContext | None], Any],
                 origin: str, function: Callable | None = None,
                 return_behavior: ReturnBehavior = "to_model", timeout: float | None = None):
        # Use the ``tool`` decorator or ``Tool.from_spec``; they check everything first.
        self.name, self.description, self.parameters = name, description, parameters
        self.return_behavior, self.timeout = return_behavior, timeout
        self.origin = origin  # where the tool came from, for error messages
        self.function = function  # the Python function, if the tool was made from one
        self._check, self._execute = check, run
        if function is not None:
            functools.update_wrapper(self, function, updated=())  # keep its name and docstring

    @classmethod
    def from_function(cls, function: Callable, *, name: str | None = None,
                      description: str | None = None,
                      return_behavior: ReturnBehavior = "to_model", timeout: float | None = None,
                      require_descriptions: bool = False) -> Tool:
        """Make a tool from a typed, documented function. Raises one error listing all problems."""
        name = name or function.__name__
        schema = function_schema(function, description, require_descriptions)
        problems = _settings_problems(name, return_behavior, timeout) + schema.problems
        if problems:
            raise ToolRegistrationError(f"Cannot make a tool from {_origin(function)}", problems)

        def check(arguments: dict) -> dict:
            try:
                return schema.arguments.validate_python(arguments)
            except ValidationError as error:
                raise ToolArgumentsError(name, argument_problems(error)) from None

        def run(arguments: dict, context: InvocationContext | None) -> Any:
            return function(**arguments, **hidden_values(schema.hidden, context))

        return cls(name=name, description=schema.description, parameters=schema.parameters,
                   check=check, run=run, origin=_origin(function), function=function,
                   return_behavior=return_behavior, timeout=timeout)

    @classmethod
    def from_spec(cls, spec: dict[str, Any],
                  executor: Callable[[dict, InvocationContext | None], Any], *,
                  return_behavior: ReturnBehavior = "to_model",
                  timeout: float | None = None) -> Tool:
        """Make a tool from a hand-written spec and an executor.

        ``spec`` is an OpenAI tool dict (``{"type": "function", "function": {...}}``) or just
        its inner ``{"name", "description", "parameters"}``. The executor is called with the
        arguments (checked against ``parameters`` by ``jsonschema``) and the invocation context.
        """
        declared = spec.get("function", spec)
        name = declared.get("name", "")
        description = declared.get("description", "")
        # a copy, so that later edits to the caller's dict change neither schema nor validator
        parameters = copy.deepcopy(declared.get("parameters", {"type": "object", "properties": {}}))
        problems = _settings_problems(name, return_behavior, timeout)
        if (error := schema_error(parameters)) is not None:
            problems.append(f"parameters is not a valid JSON Schema: {error.message}")
        if parameters.get("type") != "object":
            problems.append("parameters must describe a JSON object (\"type\": \"object\")")
        if not callable(executor):
            problems.append("the executor is not callable")
        if problems:
            raise ToolRegistrationError(f"Cannot make a tool from the spec {name!r}", problems)
        validator = validator_for(parameters)(parameters)

        def check(arguments: dict) -> dict:
            found = [f"{json_path(error.absolute_path) or 'arguments'}: {error.message}"
                     for error in validator.iter_errors(arguments)]
            if found:
                raise ToolArgumentsError(name, found)
            return dict(arguments)

        return cls(name=name, description=description, parameters=parameters,
                   check=check, run=executor, origin=f"{_origin(executor)} (spec {name!r})",
                   return_behavior=return_behavior, timeout=timeout)

    def spec(self) -> dict[str, Any]:
        """The tool as OpenAI's ``tools`` list expects it. A copy: edit it freely."""
        return {"type": "function", "function": {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }}

    def validate(self, arguments: str | dict) -> dict[str, Any]:
        """Check the model's arguments (raw JSON text or a dict); return the keyword arguments.

        Raises ``ToolArgumentsError`` with one line per problem, naming the parameter, in words
        that can be sent back to the model so that it can correct itself.
        """
        if isinstance(arguments, str):
            if not arguments.strip():
                arguments = "{}"  # some models send "" for a tool without parameters
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as error:
                raise ToolArgumentsError(self.name, [
                    f"arguments are not valid JSON: {error.msg} at line {error.lineno} "
                    f"column {error.colno}"]) from None
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(self.name, [
                f"arguments must be a JSON object, not {type(arguments).__name__}"])
        return self._check(arguments)

    def run(self, arguments: dict[str, Any], context: InvocationContext | None = None) -> Any:
        """Run the tool on arguments already validated (what ``validate`` returns), with the
        hidden parameters filled from ``context``; return its raw result. Checks nothing."""
        return self._execute(arguments, context)

    @property
    def is_async(self) -> bool:
        """Whether ``run`` gives a coroutine to await: the tool is an ``async def`` function, or
        was made from a spec with an ``async def`` executor."""
        return inspect.iscoroutinefunction(self.function if self.function is not None else self._execute)

    def invoke(self, arguments: str | dict, context: InvocationContext | None = None) -> Any:
        """Validate the model's arguments, then ``run`` the tool: ``validate`` + ``run``."""
        return self.run(self.validate(arguments), context)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.function is None:
            raise TypeError(f"tool {self.name!r} was made from a spec; use .invoke(arguments)")
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, from {self.origin})"


def tool(function: Callable | None = None, /, *, name: str | None = None,
         description: str | None = None, return_behavior: ReturnBehavior = "to_model",
         timeout: float | None = None,
         require_descriptions: bool = False) -> Tool | Callable[[Callable], Tool]:
    """Turn a function into a ``Tool``. Use as ``@tool`` or ``@tool(name=..., ...)``.

    The name defaults to the function's name, the description to its docstring.
    """
    def make(function: Callable) -> Tool:
        return Tool.from_function(function, name=name, description=description,
                                  return_behavior=return_behavior, timeout=timeout,
                                  require_descriptions=require_descriptions)
    return make if function is None else make(function)


def _settings_problems(name: str, return_behavior: str, timeout: float | None) -> list[str]:
    problems = []
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        problems.append(f"name {name!r} must be 1 to 64 ASCII letters, digits, '_' or '-'")
    if return_behavior not in RETURN_BEHAVIORS:
        problems.append(f"return_behavior {return_behavior!r} must be one of {RETURN_BEHAVIORS}")
    is_seconds = (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
                  and timeout > 0)
    if timeout is not None and not is_seconds:
        problems.append(f"timeout {timeout!r} must be a positive number of seconds, or None")
    return problems


def _origin(function: Callable) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


# --- Results -----------------------------------------------------------------------------------


def render_result(value: Any) -> str:
    """What the model reads as a tool's result: ``None`` -> "success", text as it is, anything
    else as JSON (pydantic models, dataclasses, enums, dates; sets become lists)."""
    if value is None:
        return "success"  # nothing to report, but the model must still learn the call worked
    if isinstance(value, str):
        return value
    # ensure_ascii=False keeps non-English text readable, and shorter in tokens
    return json.dumps(to_jsonable_python(value, fallback=repr), ensure_ascii=False)


# --- A set of tools, and tools that depend on the request --------------------------------------


class ToolSet:
    """The tools offered to the model in a request, by unique name."""

    def __init__(self, tools: Iterable[Tool | Callable] = (), *,
                 require_descriptions: bool = False):
        self.require_descriptions = require_descriptions
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable) -> Tool:
        """Add a tool, or a plain function (made into a tool). Names must be unique."""
        if isinstance(item, Tool):
            new = item
            if self.require_descriptions and (
                    problems := missing_descriptions(new.description, new.parameters)):
                raise ToolRegistrationError(f"Cannot add the tool {new.name!r} "
                                            f"from {new.origin}", problems)
        else:
            new = Tool.from_function(item, require_descriptions=self.require_descriptions)
        if existing := self._tools.get(new.name):
            raise ToolRegistrationError(f"Two tools are named {new.name!r}",
                                        [f"{existing.origin} and {new.origin} both use it"])
        self._tools[new.name] = new
        return new

    def get(self, name: str) -> Tool | None:
        """The tool with this name, or None (the model may ask for a tool that does not exist)."""
        return self._tools.get(name)

    def specs(self) -> list[dict[str, Any]]:
        """The ``tools`` list of a chat completions request."""
        return [each.spec() for each in self]

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, item: object) -> bool:
        return (item.name if isinstance(item, Tool) else item) in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolSet({self.names})"


@dataclass(frozen=True)
class ToolRequest:
    """What a tool provider may look at to decide which tools to offer this turn."""

    user_message: str
    memory_id: str | None = None
    context: InvocationContext | None = None


ToolProvider = Callable[[ToolRequest], Iterable[Tool] | None]
"""Any callable that offers tools for one request, or None to offer nothing."""


def tools_for_turn(static: ToolSet, providers: Iterable[ToolProvider],
                   request: ToolRequest) -> ToolSet:
    """The static tools plus whatever each provider offers for this request.

    A provider's tool may not reuse a name already taken: the model could not tell them apart.
    """
    merged = ToolSet(static, require_descriptions=static.require_descriptions)
    for provider in providers:
        for offered in provider(request) or ():
            if not isinstance(offered, Tool):
                offered = Tool.from_function(offered)
            if existing := merged.get(offered.name):
                raise ToolRegistrationError(
                    f"Tool provider {_origin(provider)} offers a tool named {offered.name!r}",
                    [f"that name is already taken by {existing.origin}"])
            merged.add(offered)
    return merged
