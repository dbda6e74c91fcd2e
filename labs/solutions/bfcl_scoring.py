"""Reference solution for labs/10_bfcl_scoring.py."""

import json

OMIT = ""  # among the accepted values: the parameter may be left out


def normalise(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def has_type(value, type_name: str) -> bool:
    if isinstance(value, bool):
        return type_name == "boolean"
    return {
        "string": isinstance(value, str),
        "integer": isinstance(value, int),
        "number": isinstance(value, (int, float)),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
        "boolean": False,
    }.get(type_name, True)


def accepted(value, options: list) -> bool:
    for option in options:
        if option == OMIT:
            continue
        if isinstance(option, str) and isinstance(value, str) and normalise(option) == normalise(value):
            return True
        if not isinstance(option, (str, bool)) and not isinstance(value, (str, bool)) and option == value:
            return True
        if isinstance(option, bool) and isinstance(value, bool) and option == value:
            return True
    return False


def score(expected: dict, call: dict):
    """None when the call passes, else the reason it fails (BFCL's AST rules, one call)."""
    if call.get("name") != expected["name"]:
        return "wrong_tool"
    arguments = call.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return "unparsable"
    if not isinstance(arguments, dict):
        return "unparsable"
    schema, key = expected["parameters"], expected["arguments"]
    properties = schema.get("properties", {})
    for name in set(schema.get("required", [])) | set(key):
        if name not in arguments and (name in schema.get("required", []) or OMIT not in key.get(name, [])):
            return "missing_required"
    for name in arguments:
        if name not in properties or name not in key:
            return "unexpected_parameter"
    for name, value in arguments.items():
        if not has_type(value, properties[name].get("type", "")):
            return "wrong_type"
    for name, value in arguments.items():
        if not accepted(value, key[name]):
            return "value_not_accepted"
    return None
