"""Flat parameters: a tool whose arguments nest objects, rewritten with prefixed top-level fields.

``book_hotel(guest={"name", "phone"})`` becomes ``book_hotel(guest_name, guest_phone)``. The
rewrite is mechanical, so it can be applied to every tool and case of a suite without choosing
anything by hand, and an experiment can then ask whether the flat shape helps a model:

- ``flatten_schema``  the flat parameters schema, and where each flat field lives in the nested
  arguments (``Flattening.paths``);
- ``flatten_key``     an answer key for the nested schema, rewritten for the flat one;
- ``nest_arguments``  a flat call's arguments put back in the nested shape, so that flat and
  nested calls are scored by the same checker against the same (nested) answer key;
- ``flat_suite``      a suite with every tool flattened and every case's key rewritten.

Only objects with listed ``properties`` (and nothing that makes their shape open or
conditional) are flattened, at any depth. Lists of objects (``passengers: [{name, age}]``)
stay as they are: one prefixed field cannot hold a list of values per item.

A flat field's description is its parent's description followed by its own, so nothing the
nested schema said is lost. A flat field is required when it and every object above it are
required. A nested key that accepts leaving an optional object out (``["", {...}]``) becomes
flat fields that may each be left out, which is looser than the nested key; scoring through
``nest_arguments`` keeps the nested rule.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from toolkit.bench.argument_checks import OMIT
from toolkit.bench.suite_checks import build_suite
from toolkit.bench.suite_model import Suite
from toolkit.messages import ToolCall

__all__ = ["SEPARATOR", "Flattening", "flatten_schema", "flatten_key", "nest_arguments",
           "nest_calls", "flat_suite", "nested_object_cases"]

SEPARATOR = "_"

# Keywords an object may carry and still be flattened: anything else (anyOf, $ref, an open
# additionalProperties, patternProperties, ...) makes its shape more than a list of fields.
_PLAIN_OBJECT_KEYS = {"type", "properties", "required", "description", "title", "additionalProperties"}


@dataclass(frozen=True)
class Flattening:
    """A flat parameters schema, and for every flat field its path in the nested arguments."""

    schema: dict
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Did flattening move any field (is some path longer than one name)?"""
        return any(len(path) > 1 for path in self.paths.values())


def _flattenable(schema: Any) -> bool:
    return (isinstance(schema, dict) and schema.get("type") == "object"
            and isinstance(schema.get("properties"), dict) and bool(schema["properties"])
            and set(schema) <= _PLAIN_OBJECT_KEYS
            and schema.get("additionalProperties", False) is False)


def _joined(*texts: str | None) -> str | None:
    """Descriptions read one after the other, each earlier one ending as a sentence."""
    parts = [text.strip() for text in texts if isinstance(text, str) and text.strip()]
    if not parts:
        return None
    earlier = [part if part.endswith((".", "!", "?", "。")) else part + "." for part in parts[:-1]]
    return " ".join([*earlier, parts[-1]])


def flatten_schema(schema: Mapping, separator: str = SEPARATOR) -> Flattening:
    """The flat version of an object schema. Raises ``ValueError`` when two fields would get
    the same flat name (``guest_name`` next to ``guest: {name}``)."""
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise ValueError("flatten_schema takes an object schema with 'properties'")
    properties: dict[str, Any] = {}
    required: list[str] = []
    paths: dict[str, tuple[str, ...]] = {}

    def visit(fields: Mapping, needed: Iterable[str], path: tuple[str, ...], all_required: bool,
              parent_description: str | None) -> None:
        needed = set(needed)
        for name, sub in fields.items():
            here = (*path, name)
            is_required = all_required and name in needed
            if _flattenable(sub):
                visit(sub["properties"], sub.get("required", []), here, is_required,
                      _joined(parent_description, sub.get("description")))
                continue
            flat = separator.join(here)
            if flat in properties:
                raise ValueError(f"two fields would both be called {flat!r}: "
                                 f"{'.'.join(paths[flat])} and {'.'.join(here)}")
            leaf = copy.deepcopy(sub)
            if parent_description:
                description = _joined(parent_description, sub.get("description") if isinstance(sub, dict) else None)
                if isinstance(leaf, dict) and description:
                    leaf["description"] = description
            properties[flat] = leaf
            paths[flat] = here
            if is_required:
                required.append(flat)

    visit(schema["properties"], schema.get("required", []), (), True, None)
    flat = {key: copy.deepcopy(value) for key, value in schema.items() if key not in ("properties", "required")}
    flat["properties"] = properties
    if required:
        flat["required"] = required
    return Flattening(flat, paths)


def flatten_key(arguments: Mapping[str, list], flattening: Flattening) -> dict[str, list]:
    """An answer key (parameter -> accepted values) for the nested schema, for the flat one.

    An object's accepted value is a spec (field -> accepted values); its fields become flat
    entries. An object key with more than one accepted spec cannot be split into independent
    fields and raises ``ValueError``.
    """
    by_path = {path: name for name, path in flattening.paths.items()}
    flat: dict[str, list] = {}

    def visit(spec: Mapping, path: tuple[str, ...], optional: bool) -> None:
        for name, options in spec.items():
            here = (*path, name)
            if here in by_path:
                values = copy.deepcopy(list(options))
                if optional and OMIT not in values:
                    values.append(OMIT)
                flat[by_path[here]] = values
                continue
            if not any(p[:len(here)] == here for p in by_path):
                raise ValueError(f"the answer key names {'.'.join(here)}, which the schema does not have")
            objects = [option for option in options if option != OMIT]
            if any(not isinstance(option, Mapping) for option in objects):
                raise ValueError(f"{'.'.join(here)}: an object's accepted values must be field specs")
            if len(objects) > 1:
                raise ValueError(f"{'.'.join(here)}: {len(objects)} accepted objects cannot be split "
                                 "into independent flat fields")
            if objects:  # [""] alone: the object is left out, so none of its fields may be sent
                visit(objects[0], here, optional or OMIT in options)

    visit(arguments, (), False)
    return flat


def nest_arguments(arguments: Mapping[str, Any], flattening: Flattening) -> dict[str, Any]:
    """A flat call's arguments in the nested shape. Names the flat schema does not have are
    kept as they are (the checker then reports them); if one of them is also the name of a
    rebuilt object, the arguments are returned unchanged, and fail as sent."""
    nested: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    for name, value in arguments.items():
        path = flattening.paths.get(name)
        if path is None:
            unknown[name] = value
            continue
        target = nested
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = value
    if set(unknown) & set(nested):
        return dict(arguments)
    return {**nested, **unknown}


def nest_calls(calls: Iterable[Mapping | ToolCall], flattenings: Mapping[str, Flattening]) -> list:
    """Calls (``ToolCall``, or ``{"name", "arguments"}`` with arguments as JSON text or an
    object) with the arguments of every flattened tool put back in the nested shape, each in
    the form it came in. Text that is not a JSON object is left as it is, for the checker."""
    nested = []
    for call in calls:
        is_tool_call = isinstance(call, ToolCall)
        name, arguments = (call.name, call.arguments) if is_tool_call else (call.get("name"), call.get("arguments"))
        flattening = flattenings.get(name)
        parsed = _json_object(arguments)
        if flattening is not None and flattening.changed and parsed is not None:
            back = nest_arguments(parsed, flattening)
            call = (replace(call, arguments=json.dumps(back, ensure_ascii=False)) if is_tool_call
                    else {**call, "arguments": back})
        nested.append(call if is_tool_call else dict(call))
    return nested


def _json_object(arguments: Any) -> dict | None:
    """Arguments as an object: parsed from JSON text, or as given; None when they are not one."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return arguments if isinstance(arguments, dict) else None


def nested_object_cases(suite: Suite, categories: Iterable[str] | None = ("nested",)) -> list[str]:
    """Ids of the cases (of ``categories``; None for all) whose expected tools change when
    flattened: those with an object parameter that has fields of its own."""
    changed = {tool.name or key for key, tool in suite.tools.items()
               if flatten_schema(tool.parameters).changed}
    wanted = None if categories is None else set(categories)
    return [case.id for case in suite.cases
            if (wanted is None or case.category in wanted)
            and any(call.name in changed for call in case.expected)]


def flat_suite(suite: Suite, case_ids: Iterable[str] | None = None) -> tuple[Suite, dict[str, Flattening]]:
    """The suite with every tool's parameters flattened and each chosen case's answer key
    rewritten to match (all cases when ``case_ids`` is None), checked like any suite; and the
    flattening of each tool, by function name, for ``nest_calls``."""
    flattenings: dict[str, Flattening] = {}
    tool_entries = []
    for key, tool in suite.tools.items():
        flattening = flatten_schema(tool.parameters)
        flattenings[tool.name or key] = flattening
        data = tool.model_dump(exclude_none=True)
        data["parameters"] = flattening.schema
        tool_entries.append(("flat", key, data))
    chosen = [case.id for case in suite.cases] if case_ids is None else list(case_ids)
    case_entries = []
    for case_id in chosen:
        case = suite.case(case_id)
        data = case.model_dump(exclude_none=True)
        data["expected"] = [{"name": call.name,
                             "arguments": flatten_key(call.arguments, flattenings[call.name])}
                            for call in case.expected]
        case_entries.append(("flat", data, None))
    return build_suite(tool_entries, case_entries, f"{suite.source} (flattened)"), flattenings
