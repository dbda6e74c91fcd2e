"""Schema constraints beyond enum (minimum / maximum, pattern, minItems / maxItems): what does
the embedded model write with them in the schema, and without?

    python benchmarks/schema_constraints.py            # prints the table; about a minute on 2 cores

Four tools of this script's own, each with one kind of constraint written with pydantic's
``Field`` (``ge``/``le`` become minimum/maximum, ``pattern`` stays pattern, ``min_length`` and
``max_length`` on a list become minItems/maxItems). Each question is asked twice, with only
that question's tool offered and ``tool_choice="required"``:

- **with**: the tool's schema as ``@tool`` writes it, constraints included. The model reads them
  in its prompt, and the engine's grammar enforces those it can (``toolkit.engine.grammar``);
- **without**: the same schema with the constraint keywords removed (``without_constraints``).

Either way the arguments go to the same tool-side validator, the pydantic model that wrote
the constrained schema, which is what a real tool would run. Two numbers per row:
*satisfied* (no constraint keyword is broken, checked with ``jsonschema`` on the constrained
schema) and *rejected* (the validator refuses the arguments, for any reason).

Some questions ask for a value the constraint forbids (40 degrees where 30 is the most): under
a grammar the model cannot write it, so it writes *some* allowed value instead. The detail
lines show which. Temperature 0, seed 0: a second run prints the same table.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file from anywhere: the toolkit is beside this folder
    sys.path.insert(0, str(ROOT))

from pydantic import Field  # noqa: E402

from toolkit.client import connect  # noqa: E402
from toolkit.json_schema import validator_for  # noqa: E402
from toolkit.schema import VALUE_CONSTRAINTS, ToolArgumentsError, without_constraints  # noqa: E402
from toolkit.tools import tool  # noqa: E402

COMMAND = "python benchmarks/schema_constraints.py"
SETTINGS = {"temperature": 0, "seed": 0, "max_tokens": 80, "tool_choice": "required"}


# The descriptions do not repeat the limits: only the schema keywords differ between the arms.
@tool
def set_thermostat(room: str, celsius: Annotated[int, Field(ge=10, le=30)]) -> str:
    """Set the target temperature of a room's thermostat.

    Args:
        room: The room, e.g. kitchen.
        celsius: Target temperature in degrees Celsius.
    """
    return "set"


@tool
def book_seats(show: str, seats: Annotated[int, Field(ge=1, le=8)]) -> str:
    """Book theatre seats for a show.

    Args:
        show: Name of the show.
        seats: How many seats to book.
    """
    return "booked"


@tool
def ship_parcel(zip_code: Annotated[str, Field(pattern=r"^\d{5}$")],
                weight_kg: Annotated[float, Field(gt=0, le=30)]) -> str:
    """Ship a parcel within the country.

    Args:
        zip_code: Destination zip code.
        weight_kg: Weight of the parcel in kilograms.
    """
    return "shipped"


@tool
def compare_prices(products: Annotated[list[str], Field(min_length=2, max_length=4)]) -> str:
    """Compare the prices of several products.

    Args:
        products: The products to compare, one name each.
    """
    return "compared"


# (tool, the parameter the question is about, the constraint it tests, question, asks for a
# value the constraint forbids?)
QUESTIONS = [
    (set_thermostat, "celsius", "integer min/max", "Set the bedroom to 21 degrees.", False),
    (set_thermostat, "celsius", "integer min/max", "Set the bedroom thermostat to 40 degrees.", True),
    (set_thermostat, "celsius", "integer min/max", "Turn the garage heating down to 5 degrees.", True),
    (book_seats, "seats", "integer min/max", "Book 3 seats for tonight's Hamlet.", False),
    (book_seats, "seats", "integer min/max", "Book 12 seats for the jazz concert.", True),
    (book_seats, "seats", "integer min/max", "We are 20 people: book seats for Swan Lake.", True),
    (ship_parcel, "zip_code", "pattern", "Ship a 2 kg parcel to zip code 94103.", False),
    (ship_parcel, "zip_code", "pattern", "Send a 1 kg box to zip 9410.", True),
    (ship_parcel, "zip_code", "pattern", "Ship 3 kg to postcode SW1A 1AA.", True),
    (ship_parcel, "weight_kg", "number min/max", "Ship a 45 kg crate to zip 10001.", True),
    (compare_prices, "products", "minItems/maxItems", "Compare the prices of the Kindle and the Kobo.", False),
    (compare_prices, "products", "minItems/maxItems", "Compare prices for the Kindle.", True),
    (compare_prices, "products", "minItems/maxItems",
     "Compare the prices of milk, bread, eggs, butter, cheese and jam.", True),
]


def spec(tool_, constrained: bool) -> dict:
    spec_ = tool_.spec()
    if not constrained:
        spec_["function"]["parameters"] = without_constraints(spec_["function"]["parameters"])
    return spec_


def ask(backend, tool_, question: str, constrained: bool) -> dict:
    """One request; what the model wrote and what the constrained checks say about it."""
    completion = backend.chat(messages=[{"role": "user", "content": question}],
                              tools=[spec(tool_, constrained)], **SETTINGS)
    calls = completion.choices[0].message.tool_calls or []
    raw = calls[0].function.arguments if calls else None
    try:
        arguments = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        arguments = None
    schema = tool_.parameters  # the constrained schema is the truth in both arms
    broken = sorted({error.validator for error in validator_for(schema)(schema).iter_errors(arguments or {})
                     if error.validator in VALUE_CONSTRAINTS})
    try:
        tool_.validate(raw or "")
        problems = []
    except ToolArgumentsError as error:
        problems = error.problems
    return {"arguments": arguments, "raw": raw, "broken": broken, "problems": problems}


def main() -> int:
    backend = connect()
    started = time.perf_counter()
    rows = []
    for tool_, parameter, kind, question, forbidden in QUESTIONS:
        for constrained in (False, True):
            outcome = ask(backend, tool_, question, constrained)
            rows.append({"kind": kind, "parameter": parameter, "question": question, "forbidden": forbidden,
                         "arm": "with" if constrained else "without", **outcome})
    seconds = time.perf_counter() - started

    print(f"{COMMAND}  ({backend.model}, temperature 0, seed 0, tool_choice required; {seconds:.0f} s)\n")
    print(f"{'constraint':<18} {'schema':<8} {'calls':>5} {'satisfied':>10} {'rejected':>9}")
    for kind in dict.fromkeys(row["kind"] for row in rows):
        for arm in ("without", "with"):
            group = [row for row in rows if row["kind"] == kind and row["arm"] == arm]
            # satisfied: the parameter is there and breaks no constraint
            satisfied = sum(not row["broken"] and row["parameter"] in (row["arguments"] or {}) for row in group)
            rejected = sum(bool(row["problems"]) for row in group)
            print(f"{kind:<18} {arm:<8} {len(group):>5} {satisfied:>6}/{len(group):<3} {rejected:>5}/{len(group):<3}")
    print("\nWhat was written for the parameter each question is about (without -> with):")
    for without, with_ in zip(rows[::2], rows[1::2]):
        def value(row):
            if row["arguments"] is None:  # e.g. a list that ran on until max_tokens cut it off
                return "(unparsable)"
            return json.dumps(row["arguments"].get(row["parameter"], "(missing)"), ensure_ascii=False)[:40]
        mark = "*" if without["forbidden"] else " "
        print(f" {mark} {without['question']:<66} {value(without):>20} -> {value(with_)}")
    print("\n* the question asks for a value the constraint forbids.")
    print("Validator messages (with constraints):")
    for row in rows:
        if row["arm"] == "with" and row["problems"]:
            print(f"  {row['question'][:40]:<40} {'; '.join(row['problems'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
