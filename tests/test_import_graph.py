"""The toolkit's modules import each other in one direction only: no module imports, at any
depth and however lazily (inside a function, under ``if __name__ == "__main__"``), a module
that imports it back."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolkit"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the toolkit modules it imports anywhere in its source."""
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the package that holds this module
                    base = name.split(".")
                    base = base[:len(base) - node.level + (1 if is_package else 0)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # "from pkg import sub" imports the submodule pkg.sub where there is one
                targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in files else stem
                           for alias in node.names]
            for target in targets:
                while target and target not in files:  # "import a.b.c" of a name inside a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a list of modules (first == last), or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return []


def test_the_graph_sees_lazy_relative_and_absolute_imports():
    graph = import_graph()
    assert "toolkit.bench.suite_model" in graph["toolkit.bench.suite"]           # from .suite_model import
    assert "toolkit.bench.bfcl" in graph["toolkit.bench.suite"]
    assert {"toolkit.bench.trials", "toolkit.bench.store"} <= graph["toolkit.bench.experiment"]


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_toolkit_imports_itself_back():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


# The house from the ground up: the engine serves the model and knows nothing of who asks it;
# the client and the loop ask it; the bench measures through them; the app shows the bench.
# An arrow from a lower floor to a higher one is an arrow back up the house.
ABOVE = {
    "toolkit.engine": ("toolkit.client", "toolkit.loop", "toolkit.bench", "toolkit.app"),
    "toolkit.bench": ("toolkit.app",),
}


def arrows_back_up(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module in sorted(graph):
        for floor, above in ABOVE.items():
            if module == floor or module.startswith(floor + "."):
                found += [f"{module} -> {target}" for target in sorted(reachable(graph, module))
                          if any(target == a or target.startswith(a + ".") for a in above)]
    return found


def test_arrows_back_up_are_found():
    graph = {"toolkit.engine.x": {"toolkit.messages"}, "toolkit.messages": {"toolkit.client"},
             "toolkit.client": set(), "toolkit.bench.y": set()}
    assert arrows_back_up(graph) == ["toolkit.engine.x -> toolkit.client"]


def test_no_floor_of_the_house_imports_one_above_it():
    found = arrows_back_up(import_graph())
    assert not found, "arrows back up the house:\n" + "\n".join(found)


# ------------------------------------------------------------- one import path per public name

SOURCES = ["toolkit/**/*.py", "lessons/*.py", "labs/**/*.py", "tests/*.py", "app_pages/*.py", "app.py",
           "benchmarks/*.py", "scripts/*.py", "training/*.py"]


def top_level_names(tree: ast.Module) -> set[str]:
    """The names a module defines itself (functions, classes, assignments), not those it imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {each.id for each in ast.walk(target) if isinstance(each, ast.Name)}
    return names


def package_exports(tree: ast.Module) -> set[str]:
    """A package's ``__all__``: what a learner is meant to import from the package itself."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            exports = set()
            for element in node.value.elts:
                if isinstance(element, ast.Constant):
                    exports.add(element.value)
                elif isinstance(element, ast.Starred):  # *_LAZY: the keys of a dict defined above
                    lazy = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                and getattr(n.targets[0], "id", "") == element.value.id)
                    exports |= {key.value for key in lazy.keys}
            return exports
    return set()


def modules() -> dict[str, ast.Module]:
    return {module_name(path): ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in PACKAGE.rglob("*.py")}


def second_paths(sources: dict[str, ast.Module], importers: dict[str, ast.Module]) -> list[str]:
    """Every ``from toolkit.x import name`` where ``x`` does not define ``name`` (nor, for a
    package, list it in ``__all__``), and every private name imported from another module."""
    own = {name: top_level_names(tree) for name, tree in sources.items()}
    exports = {name: package_exports(tree) for name, tree in sources.items()}
    found = []
    for where, tree in importers.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and not node.level and node.module in sources):
                continue
            for alias in node.names:
                if f"{node.module}.{alias.name}" in sources:  # a submodule
                    continue
                if alias.name.startswith("_"):
                    found.append(f"{where}: private {alias.name} from {node.module}")
                elif alias.name not in own[node.module] | exports[node.module]:
                    found.append(f"{where}: {alias.name} from {node.module}, which does not define it")
    return found


def test_second_paths_are_found():
    sources = {"toolkit.a": ast.parse("X = 1\n_y = 2"), "toolkit.b": ast.parse("from toolkit.a import X")}
    importers = {"user.py": ast.parse("from toolkit.b import X\nfrom toolkit.a import X, _y")}
    assert second_paths(sources, importers) == ["user.py: X from toolkit.b, which does not define it",
                                                "user.py: private _y from toolkit.a"]


def parse_cells(path: Path) -> ast.Module:
    """A source file's syntax tree; a lesson's cells may ``await`` at top level, as Jupyter allows."""
    return compile(path.read_text(encoding="utf-8"), str(path), "exec",
                   flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def test_each_public_name_has_one_import_path():
    importers = {str(path.relative_to(ROOT)): parse_cells(path)
                 for pattern in SOURCES for path in sorted(ROOT.glob(pattern))}
    found = second_paths(modules(), importers)
    assert not found, "import each name from the module that defines it:\n" + "\n".join(found)


def test_packages_export_only_what_they_list():
    """A package's ``__init__`` binds by import only names in its ``__all__``, none of them private."""
    for path in PACKAGE.rglob("__init__.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exports = package_exports(tree)
        imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    for alias in node.names} - {"annotations"}
        assert imported <= exports, f"{path}: imports {sorted(imported - exports)} without listing them"
        assert not [name for name in exports if name.startswith("_")], f"{path}: exports a private name"


# ------------------------------------------------------------------- one place sends a request

def dotted(node: ast.AST) -> str:
    """``a.b.c`` for an attribute chain, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(([node.id] if isinstance(node, ast.Name) else ["?"]) + parts[::-1])


def places(tree: ast.Module, ending: str) -> list[int]:
    """Lines where an attribute chain ending in ``ending`` is called or read."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and dotted(node).endswith(ending)]


def test_places_finds_chains():
    tree = ast.parse("x = backend.client.chat.completions.create(**body)\ny = client.api_key")
    assert places(tree, "chat.completions.create") == [1]
    assert places(tree, ".api_key") == [2]


def test_only_the_client_sends_a_chat_request_or_reads_the_key():
    """``Backend.chat`` sends every chat request of the toolkit and ``Backend.api_key`` reads the
    key, so that retries, error wording and hiding the key live in one module."""
    for name, tree in modules().items():
        if name == "toolkit.client":
            continue
        assert not places(tree, "chat.completions.create"), f"{name} sends a chat request itself"
        assert not places(tree, "client.api_key"), f"{name} reads the key from the client itself"


# ------------------------------------------------------------ each model and file name, once

def test_model_and_weight_names_are_written_once():
    """The embedded models' names and the weights' file name are defined in ``toolkit.engine``
    and imported from there everywhere else (tests may spell them, as the contract they check)."""
    from toolkit.engine import BASE_WEIGHTS_FILE, EMBEDDED_MODELS

    names = {*EMBEDDED_MODELS, BASE_WEIGHTS_FILE}
    found = []
    for pattern in SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            where = str(path.relative_to(ROOT))
            if where.startswith("tests/") or where == "toolkit/engine/__init__.py":
                continue
            found += [f"{where}:{node.lineno} {node.value}" for node in ast.walk(parse_cells(path))
                      if isinstance(node, ast.Constant) and node.value in names]
    assert not found, "import these names from toolkit.engine:\n" + "\n".join(found)
