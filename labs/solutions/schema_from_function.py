"""Reference solution for labs/05_schema_from_function.py."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Literal, Union

import docstring_parser

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_schema(annotation: Any) -> dict:
    """The JSON Schema of one type hint: basic types, Literal, list[...] and Optional[...]."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        values = list(arguments)
        kinds = {JSON_TYPES[type(value)] for value in values}
        return {"enum": values, "type": kinds.pop()} if len(kinds) == 1 else {"enum": values}
    if origin is list:
        return {"type": "array", "items": type_schema(arguments[0]) if arguments else {}}
    if origin in (Union, types.UnionType):
        return {"anyOf": [{"type": "null"} if member is type(None) else type_schema(member)
                          for member in arguments]}
    return {"type": JSON_TYPES[annotation]}


def schema_from_function(fn) -> dict:
    """An OpenAI tool dict for a typed function with a Google-style docstring."""
    docstring = docstring_parser.parse(fn.__doc__ or "")
    description = "\n\n".join(part for part in (docstring.short_description,
                                                 docstring.long_description) if part)
    documented = {param.arg_name: param.description for param in docstring.params}
    hints = typing.get_type_hints(fn)
    properties, required = {}, []
    for param in inspect.signature(fn).parameters.values():
        prop = type_schema(hints[param.name])
        if documented.get(param.name):
            prop["description"] = documented[param.name]
        if param.default is param.empty:
            required.append(param.name)
        else:
            prop["default"] = param.default
        properties[param.name] = prop
    return {"type": "function", "function": {
        "name": fn.__name__,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False},
    }}
