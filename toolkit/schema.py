"""From a Python function to what the model sees: a description and a JSON Schema.

A model never sees your code. It sees a tool's name, a description and a JSON Schema for the
arguments, and it writes the arguments back as JSON text. Everything here derives those from one
source, the function itself, so that the schema, the docs and the checks cannot drift apart:

- the parameters and their type hints become the schema (pydantic writes it, we only tidy it);
- the docstring gives the tool's description and each parameter's description;
- the pydantic validator that wrote the schema also checks the arguments the model sends.

Two parameter types are hidden from the model: ``MemoryId`` and ``InvocationContext``. They stay
out of the schema and are filled in by the code that runs the tool (``hidden_values``).
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Collection, Iterable, NewType, Union

import docstring_parser
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from typing_extensions import NotRequired, TypedDict  # pydantic needs this TypedDict before 3.12

# --- Hidden context: values the tool needs but the model must never see or fill in -------------

MemoryId = NewType("MemoryId", str)
"""Type a parameter ``MemoryId`` to receive the conversation's memory id (user or chat id)."""


@dataclass(frozen=True)
class InvocationContext:
    """Who is asking and on whose behalf. Type a parameter with it to receive it."""

    user: str | None = None
    tenant: str | None = None
    trace_id: str | None = None
    memory_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def hidden_kind(annotation: Any) -> type | None:
    """``MemoryId`` or ``InvocationContext`` if the annotation asks for one (even Optional)."""
    members = [m for m in _union_members(annotation) if m is not type(None)]
    if len(members) == 1 and members[0] in (MemoryId, InvocationContext):
        return members[0]
    return None


def hidden_values(hidden: dict[str, type], context: InvocationContext | None) -> dict[str, Any]:
    """The keyword arguments that fill the hidden parameters from the invocation context."""
    context = context or InvocationContext()  # tools read fields, never check for None
    return {
        name: context if kind is InvocationContext else context.memory_id
        for name, kind in hidden.items()
    }


# --- Errors that list every problem at once -----------------------------------------------------


class ToolRegistrationError(ValueError):
    """A function or spec cannot become a tool. Lists every problem, not just the first."""

    def __init__(self, subject: str, problems: list[str]):
        self.subject, self.problems = subject, list(problems)
        super().__init__(subject + ":\n" + "\n".join(f"- {p}" for p in self.problems))


class ToolArgumentsError(ValueError):
    """The arguments the model wrote do not fit the tool's schema. Lists each problem by name."""

    def __init__(self, tool_name: str, problems: list[str]):
        self.tool_name, self.problems = tool_name, list(problems)
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"Invalid arguments for tool {tool_name!r}:\n{lines}")


# --- Signature + docstring -> JSON Schema ------------------------------------------------------


@dataclass
class FunctionSchema:
    """What ``function_schema`` learned about a function.

    Problems are collected rather than raised, so that the caller can add its own (a bad name,
    a missing description) and report them all in one error.
    """

    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object the model writes
    arguments: TypeAdapter | None  # validates that object; None when there are problems
    hidden: dict[str, type]  # parameter name -> MemoryId or InvocationContext
    problems: list[str]


def function_schema(function: Callable, description: str | None = None,
                    require_descriptions: bool = False) -> FunctionSchema:
    """Read a function's signature and docstring; build its arguments schema with pydantic."""
    docstring = docstring_parser.parse(function.__doc__ or "")  # Google, reST, numpy, Epydoc
    if description is None:
        parts = (docstring.short_description, docstring.long_description)
        description = "\n\n".join(part for part in parts if part)
    documented = {param.arg_name: param.description for param in docstring.params}

    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:  # usually a NameError from a forward reference that cannot resolve
        return FunctionSchema(description, {}, None, {}, [f"type hints cannot be read: {exc}"])

    fields: dict[str, Any] = {}
    hidden: dict[str, type] = {}
    problems = []
    if require_descriptions and not description.strip():
        problems.append("the tool has no description")
    for param in inspect.signature(function).parameters.values():
        name, annotation = param.name, hints.get(param.name, param.empty)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"parameter {name!r}: *args and **kwargs cannot be described to a "
                            "model; name each parameter")
            continue
        if param.kind is param.POSITIONAL_ONLY:
            problems.append(f"parameter {name!r} is positional-only, but the model passes "
                            "every argument by name")
        if kind := hidden_kind(annotation):
            hidden[name] = kind
            continue  # the model never sees it, so it needs no description either
        own_schema = None
        if annotation is param.empty:
            problems.append(f"parameter {name!r} has no type annotation")
        elif (own_schema := _json_schema_or_none(annotation)) is None:
            problems.append(f"parameter {name!r}: pydantic cannot make a JSON Schema for type "
                            f"{inspect.formatannotation(annotation)}")
        else:
            fields[name] = _argument_field(param, annotation, documented.get(name))
        described = documented.get(name) or (own_schema or {}).get("description")
        if require_descriptions and not described:
            problems.append(f"parameter {name!r} has no description")
    if problems:
        return FunctionSchema(description, {}, None, hidden, problems)

    # The arguments are one JSON object, so a TypedDict describes them exactly. (A BaseModel
    # would also work, but a parameter called `json` or `copy` would clash with its methods.)
    arguments_type = TypedDict(f"{function.__name__}_arguments", fields)
    arguments_type.__pydantic_config__ = ConfigDict(extra="forbid")  # unknown names are errors
    try:
        adapter = TypeAdapter(arguments_type)
        parameters = tidy_schema(adapter.json_schema())
    except (PydanticUserError, TypeError, ValueError) as exc:  # e.g. a default with no JSON form
        return FunctionSchema(description, {}, None, hidden, [f"no JSON Schema: {exc}"])
    return FunctionSchema(description, parameters, adapter, hidden, [])


def _argument_field(param: inspect.Parameter, annotation: Any, doc: str | None) -> Any:
    """The TypedDict entry for one parameter: its type plus description and default."""
    options: dict[str, Any] = {}
    if doc and FieldInfo.from_annotation(annotation).description is None:
        options["description"] = doc  # an explicit Annotated[..., Field(description=)] wins
    if param.default is not param.empty:
        options["default"] = param.default
    elif type(None) in _union_members(annotation):
        options["default"] = None  # Optional[X] with no default: the model may leave it out
    entry = Annotated[annotation, Field(**options)]
    return NotRequired[entry] if "default" in options else entry


def _json_schema_or_none(annotation: Any) -> dict[str, Any] | None:
    """The JSON Schema pydantic writes for one type, or None if it cannot write one."""
    try:
        return TypeAdapter(annotation).json_schema()
    except (PydanticUserError, TypeError):
        return None


def _union_members(annotation: Any) -> list[Any]:
    """``X | Y | None`` -> [X, Y, NoneType]; any other type -> [itself]. Sees through Annotated."""
    if typing.get_origin(annotation) is Annotated:
        return _union_members(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return list(typing.get_args(annotation))
    return [annotation]


def missing_descriptions(description: str, parameters: dict[str, Any]) -> list[str]:
    """Problems to report when descriptions are required: the tool's and each parameter's."""
    problems = [] if description.strip() else ["the tool has no description"]
    for name, schema in parameters.get("properties", {}).items():
        if not schema.get("description"):
            problems.append(f"parameter {name!r} has no description")
    return problems


# --- Tidying pydantic's JSON Schema into the shape tool APIs expect ----------------------------

_NAME_MAPS = {"properties", "patternProperties", "$defs", "definitions"}  # name -> schema
_DATA_KEYWORDS = {"default", "const", "enum", "examples"}  # values are data, not schemas


def tidy_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$ref``s (unless recursive), drop ``title``s, put type/properties/required first."""
    schema = drop_titles(inline_refs(schema))
    if schema.get("type") != "object":
        return schema
    return {"type": "object", "properties": {}, "required": [], **schema}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every ``{"$ref": "#/$defs/X"}`` with the definition of X itself.

    Small models follow a schema more easily when it reads top to bottom. A recursive type
    (a tree of nodes) would inline forever, so then the schema keeps its ``$defs``.
    """
    definitions = schema.get("$defs", {})
    if not definitions or _is_recursive(definitions):
        return schema

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:  # keywords next to the $ref (a field's description) win
            target = definitions[node["$ref"].removeprefix("#/$defs/")]
            return resolve({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        resolved = {key: resolve(value) for key, value in node.items() if key != "$defs"}
        if isinstance(resolved.get("discriminator"), dict):
            # the mapping points into $defs, which no longer exist; oneOf + const still say it
            resolved["discriminator"] = {
                k: v for k, v in resolved["discriminator"].items() if k != "mapping"}
        return resolved

    return resolve(schema)


def _is_recursive(definitions: dict[str, Any]) -> bool:
    """Does any definition refer back to itself, directly or through others?"""
    refers_to = {name: _refs_in(body) for name, body in definitions.items()}
    for start in refers_to:
        seen, stack = set(), list(refers_to[start])
        while stack:
            name = stack.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                stack.extend(refers_to.get(name, ()))
    return False


def _refs_in(node: Any) -> set[str]:
    if isinstance(node, list):
        return set().union(*map(_refs_in, node))
    if not isinstance(node, dict):
        return set()
    found = {node["$ref"].removeprefix("#/$defs/")} if "$ref" in node else set()
    return found.union(*map(_refs_in, node.values()))


def _without_keywords(schema: Any, keywords: Collection[str]) -> Any:
    """``schema`` with the schema keywords in ``keywords`` removed wherever they occur as
    keywords; a parameter *named* like one (inside ``properties``) stays, and so do values that
    are data (a default of ``{"title": ...}``)."""
    if isinstance(schema, list):
        return [_without_keywords(item, keywords) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {}
    for keyword, value in schema.items():
        if keyword in keywords:
            continue
        if keyword in _DATA_KEYWORDS:
            kept[keyword] = value
        elif keyword in _NAME_MAPS and isinstance(value, dict):
            kept[keyword] = {name: _without_keywords(sub, keywords) for name, sub in value.items()}
        else:
            kept[keyword] = _without_keywords(value, keywords)
    return kept


def drop_titles(schema: Any) -> Any:
    """Remove pydantic's ``title`` keywords, which only repeat names, to save prompt tokens.

    Only the keyword goes: a parameter that is *named* ``title`` (inside ``properties``) stays,
    and so do values that are data (a default of ``{"title": ...}``).
    """
    return _without_keywords(schema, {"title"})


VALUE_CONSTRAINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                     "pattern", "minLength", "maxLength", "minItems", "maxItems")
"""The keywords that limit a value beyond its type (``enum`` aside: it is the type's own set)."""


def without_constraints(schema: Any) -> Any:
    """``schema`` with every ``VALUE_CONSTRAINTS`` keyword removed, for comparing what a model
    (and a grammar) does with and without them. Parameters of those names stay."""
    return _without_keywords(schema, VALUE_CONSTRAINTS)


# --- Turning pydantic's validation errors into text a model (and a person) can act on ----------


def argument_problems(error: ValidationError) -> list[str]:
    """One line per problem, each starting with the parameter's path (``order.items[0].sku``)."""
    problems = []
    for item in error.errors(include_url=False):
        where = json_path(item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"{where}: required, but missing")
        elif item["type"] == "extra_forbidden":
            problems.append(f"{where}: unexpected, the tool has no parameter of that name")
        else:
            problems.append(f"{where}: {item['msg']} (got {item['input']!r})")
    return problems


def json_path(location: Iterable[str | int]) -> str:
    """``("order", "items", 0, "sku")`` -> ``order.items[0].sku``."""
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)
    return path.lstrip(".")
