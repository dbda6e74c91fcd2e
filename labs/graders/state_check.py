"""Grader for labs/15_state_check.py: compare two worlds by their public state.

Besides the cases written below, the grader makes up APIs while it grades: classes with new
names, public and private attributes of every kind (numbers, text, lists, dicts, objects that
compare by value), and methods that change them. It runs a trajectory of calls on one fresh
instance and a changed trajectory on another (a call dropped, a value changed, the order of
two calls swapped, a call that touches only private state), and knows from the instances
themselves which attributes must be reported. They are new every time, so only a check that
reads the attributes passes.
"""

from __future__ import annotations

import random

from labs.grading import Hints, Report, attempt, case_seed


class Folder:
    """A value that compares by content, as BFCL's file-system folders do: == not ``is``."""

    def __init__(self, name, files):
        self.name, self.files = name, dict(files)

    def __eq__(self, other):
        return isinstance(other, Folder) and (self.name, self.files) == (other.name, other.files)

    def __repr__(self):
        return f"Folder({self.name!r}, {self.files!r})"


class Lamp:
    def __init__(self, on=False, level=3):
        self.on, self.level, self._switched = on, level, 0


class Shelf:
    def __init__(self, books=None, home=None):
        self.books = list(books or ["Dune"])
        self.home = home or Folder("/shelf", {"index.txt": "Dune"})
        self._cache = {}


def _expected(made: dict, wanted: dict) -> list[str]:
    """The reference: every public attribute whose values differ, or that only one side has."""
    found = []
    for name, instance in wanted.items():
        other = made[name]
        keys = {k for k in vars(instance) if not k.startswith("_")} | {k for k in vars(other) if not k.startswith("_")}
        for key in sorted(keys):
            if key not in vars(instance) or key not in vars(other) or getattr(other, key) != getattr(instance, key):
                found.append(f"{name}.{key}")
    return sorted(found)


def _written_cases() -> list[tuple[str, dict, dict]]:
    lamp_on = Lamp(on=True)
    moved = Shelf(home=Folder("/shelf", {"index.txt": "Dune", "new.txt": ""}))
    extra = Lamp()
    extra.colour = "red"  # a call that created a public attribute the answer's world lacks
    private = Lamp()
    private._switched = 5
    return [
        ("two equal worlds: nothing to report", {"Lamp": Lamp()}, {"Lamp": Lamp()}),
        ("a public attribute differs", {"Lamp": lamp_on}, {"Lamp": Lamp()}),
        ("two public attributes differ", {"Lamp": Lamp(on=True, level=5)}, {"Lamp": Lamp()}),
        ("a private attribute differs: not reported", {"Lamp": private}, {"Lamp": Lamp()}),
        ("equal lists built apart are equal (compare with ==, not is)", {"Shelf": Shelf()}, {"Shelf": Shelf()}),
        ("an object that compares by content", {"Shelf": moved}, {"Shelf": Shelf()}),
        ("an attribute only the model's world has", {"Lamp": extra}, {"Lamp": Lamp()}),
        ("an attribute only the answer's world has", {"Lamp": Lamp()}, {"Lamp": extra}),
        ("two classes, one changed", {"Lamp": Lamp(), "Shelf": Shelf(books=["Dune", "Emma"])},
         {"Lamp": Lamp(), "Shelf": Shelf()}),
    ]


_SYLLABLES = ["ko", "ra", "mi", "tel", "vo", "zen", "da", "pli", "nu", "gar"]
_KINDS = ["number", "text", "list", "dict", "folder"]


def _made_up_api(rng: random.Random):
    """A class with three to five public attributes of various kinds, one private, and methods."""
    name = "".join(rng.choice(_SYLLABLES).capitalize() for _ in range(2)) + rng.choice(["API", "Desk", "Bot"])
    fields = {}
    for _ in range(rng.randint(3, 5)):
        stem = "".join(rng.choice(_SYLLABLES) for _ in range(2))
        field = f"{stem}_{rng.choice(['count', 'items', 'map', 'home', 'note'])}"
        fields[field] = rng.choice(_KINDS)

    def fresh(kind):
        return {"number": 0, "text": "", "list": [], "dict": {}, "folder": Folder("/", {})}[kind]

    def __init__(self):
        for field, kind in fields.items():
            setattr(self, field, fresh(kind))
        self._calls = 0

    def change(self, field, value):
        self._calls += 1
        kind = fields[field]
        if kind == "number":
            setattr(self, field, getattr(self, field) + value)
        elif kind == "text":
            setattr(self, field, getattr(self, field) + str(value))
        elif kind == "list":
            getattr(self, field).append(value)
        elif kind == "dict":
            getattr(self, field)[str(value)] = value
        else:
            folder = getattr(self, field)
            setattr(self, field, Folder(folder.name, {**folder.files, f"f{value}.txt": str(value)}))

    def touch(self):
        self._calls += 100  # private only: nothing public changes

    return name, type(name, (), {"__init__": __init__, "change": change, "touch": touch}), list(fields)


def made_up_cases(seed: int) -> list[tuple[str, dict, dict]]:
    rng = random.Random(seed)
    cases = []
    for number in range(6):
        name, api, fields = _made_up_api(rng)
        calls = [("change", rng.choice(fields), rng.randint(1, 9)) for _ in range(rng.randint(3, 6))]
        mutation = rng.choice(["drop", "value", "swap", "private", "none"])
        changed = list(calls)
        if mutation == "drop":
            changed.pop(rng.randrange(len(changed)))
        elif mutation == "value":
            index = rng.randrange(len(changed))
            method, field, value = changed[index]
            changed[index] = (method, field, value + 1)
        elif mutation == "swap":
            changed[0], changed[-1] = changed[-1], changed[0]
        elif mutation == "private":
            changed.insert(rng.randrange(len(changed) + 1), ("touch",))
        worlds = []
        for trajectory in (changed, calls):
            instance = api()
            for call in trajectory:
                getattr(instance, call[0])(*call[1:])
            worlds.append({name: instance})
        cases.append((f"made-up API {number + 1} ({name}, a trajectory with {mutation} changed)", *worlds))
    return cases


def grade(state_differences, seed: int | None = None) -> Report:
    """Grade on the written cases and on APIs and trajectories made up from ``seed``."""
    seed = case_seed(seed)
    report = Report(f"Lab 15 - compare two worlds by their public state (made-up APIs from seed {seed})")
    for case, made, wanted in _written_cases() + made_up_cases(seed):
        expected = _expected(made, wanted)
        done, got = attempt(report, case, state_differences, made, wanted)
        if not done:
            if report.failures[-1].note.startswith("not done yet"):
                return report
            continue
        if not isinstance(got, list):
            report.fail(case, "return a list of 'Class.attribute' strings", expected, got)
        elif sorted(got) != got:
            report.fail(case, "sort the list, so the same differences always read the same", sorted(got), got)
        else:
            missed = sorted(set(expected) - set(got))
            extra = sorted(set(got) - set(expected))
            note = "; ".join(part for part in (
                f"not reported: {', '.join(missed)}" if missed else "",
                f"reported but the same (or private): {', '.join(extra)}" if extra else "") if part)
            report.check(case, expected, got, note)
    return report


hints = Hints([
    "vars(instance) is the instance's attributes as a dict. Keep the keys that do not start "
    "with '_': those are the public state, the part BFCL compares.",
    "For each class name in the answer's world, take the union of both instances' public keys; "
    "an attribute differs when one side lacks it or when the two values are not == (use ==, "
    "never 'is': two lists built apart are equal but not the same object).",
    "Collect f\"{name}.{key}\" for each difference and return sorted(...) of the list.",
])
