"""Is this dict a valid JSON Schema? One place that asks ``jsonschema``, for the engine's
request checks, hand-written tool specs, suite files and the schema box in the app.

``jsonschema`` is imported on first use, not at the top: with Jupyter installed its import
loads format checkers and takes seconds, which every lesson and the app would pay at start.
"""

from __future__ import annotations

from typing import Any


def validator_for(schema: dict[str, Any]):
    """The ``jsonschema`` validator class for ``schema`` (its ``$schema``, else the newest draft)."""
    import jsonschema

    return jsonschema.validators.validator_for(schema)


def schema_error(schema: dict[str, Any]):
    """None when ``schema`` is a valid JSON Schema; otherwise ``jsonschema``'s ``SchemaError``,
    whose ``message`` and ``absolute_path`` say what is wrong and where."""
    import jsonschema

    try:
        validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        return error
    return None
