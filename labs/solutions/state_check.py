"""Reference solution for labs/15_state_check.py."""


def state_differences(made: dict, wanted: dict) -> list[str]:
    """'Class.attribute' for each public attribute whose value differs between the model's world
    (``made``) and the answer's (``wanted``), or that only one of them has; sorted."""
    found = []
    for name, instance in wanted.items():
        other = made[name]
        mine = {key: value for key, value in vars(other).items() if not key.startswith("_")}
        theirs = {key: value for key, value in vars(instance).items() if not key.startswith("_")}
        for key in mine.keys() | theirs.keys():
            if key not in mine or key not in theirs or mine[key] != theirs[key]:
                found.append(f"{name}.{key}")
    return sorted(found)
