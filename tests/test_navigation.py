"""The README and the lessons lead a learner to every lesson and every lab, and the links work."""

import ast
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py"))
LABS = sorted((ROOT / "labs").glob("[0-9][0-9]_*.py"))
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")  # a Markdown link's target, anchor included


def _links(text: str) -> list[str]:
    """The relative link targets of a Markdown page, without their anchors (code blocks skipped)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code: `table[name](value)` is not a link
    targets = [t.split("#", 1)[0] for t in LINK.findall(text)]
    return [t for t in targets if t and not t.startswith(("http://", "https://", "mailto:"))]


def test_lessons_are_numbered_from_01_without_gaps_and_there_are_at_least_ten_labs():
    # A lesson may have an optional second part under the same number (05_schemas_in_depth);
    # a new lesson takes the next number.
    numbers = sorted({p.name[:2] for p in LESSONS})
    assert len(numbers) >= 14 and numbers == [f"{n:02d}" for n in range(1, len(numbers) + 1)]
    assert len(LABS) >= 10


def test_a_second_part_says_it_is_optional_and_the_first_part_points_to_it():
    for number in sorted({p.name[:2] for p in LESSONS}):
        first, *others = [p for p in LESSONS if p.name[:2] == number]
        for other in others:
            assert "optional" in other.read_text(encoding="utf-8")[:2000].lower(), f"{other.name} does not say it is optional"
            assert other.name in first.read_text(encoding="utf-8"), f"{first.name} does not point to {other.name}"


def test_every_relative_link_in_the_readme_and_the_docs_points_at_a_file():
    pages = [ROOT / "README.md", *DOCS]
    assert len(pages) > 1 and _links(README)
    missing = [f"{page.relative_to(ROOT)} -> {target}" for page in pages
               for target in _links(page.read_text(encoding="utf-8")) if not (page.parent / target).exists()]
    assert not missing, f"links to files that do not exist: {missing}"


def test_a_link_to_a_missing_file_is_caught():
    assert _links("[a](lessons/nowhere.ipynb#top) [b](https://example.org) [c](#here)") == ["lessons/nowhere.ipynb"]
    assert _links("```\n[a](inside/a/code/block.md)\n```\n") == []
    assert _links("call `ALLOWED[name](value)` here") == []


def test_the_readme_links_every_lesson_and_every_lab_as_a_notebook():
    listed = set(_links(README))
    for path in LESSONS + LABS:
        notebook = path.with_suffix(".ipynb").relative_to(ROOT).as_posix()
        assert notebook in listed, f"README does not link {notebook}"


def test_every_lab_is_linked_from_the_lesson_with_its_number():
    last = LESSONS[-1].name[:2]  # a lab numbered past the last lesson (the capstone) draws on all: the last points to it
    for lab in LABS:
        lesson = next(p for p in LESSONS if p.name[:2] == min(lab.name[:2], last))
        assert lab.name in lesson.read_text(encoding="utf-8"), f"{lesson.name} does not point to {lab.name}"


def test_every_notebook_says_what_its_paired_script_says():
    """Learners open the .ipynb in JupyterLab; the tests run the .py. They must not drift apart."""
    import jupytext

    scripts = LESSONS + LABS
    for script in scripts:
        notebook = script.with_suffix(".ipynb")
        assert notebook.exists(), f"{notebook.name} is missing: run jupytext --sync {script}"
        ours = [(c.cell_type, c.source) for c in jupytext.read(script).cells]
        theirs = [(c.cell_type, c.source) for c in jupytext.read(notebook).cells]
        assert ours == theirs, f"{notebook.name} differs from {script.name}: run jupytext --sync {script}"


def _shows_something(source: str) -> bool:
    """Does a code cell print or display when it runs (a definition that would print later does
    not count), or end on a bare value, which Jupyter shows?"""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # IPython-only syntax: judge by the text alone
        return "print(" in source or "display(" in source
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("print", "display"):
                return True
    return bool(body) and isinstance(body[-1], ast.Expr) and not isinstance(body[-1].value, ast.Call)


def test_lesson_notebooks_are_committed_with_their_outputs():
    """A learner reads the .ipynb without running it, so every cell that shows something must
    carry what it showed (``python -m scripts.execute_lessons`` regenerates them all)."""
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        silent = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
                  and _shows_something(cell.source) and not cell.get("outputs")]
        assert not silent, (f"{path.name}: code cells {silent} show something but carry no output; "
                            "run python -m scripts.execute_lessons")
        errors = [index for index, cell in enumerate(notebook.cells)
                  if any(output.get("output_type") == "error" for output in cell.get("outputs", []))]
        assert not errors, f"{path.name}: code cells {errors} were saved with an error"


def test_every_chart_in_a_committed_lesson_also_carries_a_picture():
    """A plotly chart is JSON that JavaScript draws; a viewer that shows saved outputs without
    running JavaScript shows it blank. Each one must carry a PNG beside it
    (``toolkit.display.charts_also_as_png``, drawn when the lesson is executed)."""
    charts = 0
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for index, cell in enumerate(notebook.cells):
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if "application/vnd.plotly.v1+json" in data:
                    charts += 1
                    assert data.get("image/png"), f"{path.name}: the chart of cell {index} has no PNG copy"
    assert charts >= 3  # lessons 10 and 11 chart their measurements


def test_a_silent_cell_is_told_apart_from_one_that_shows_something():
    assert _shows_something("x = 1\nprint(x)") and _shows_something("table = 1\ntable")
    assert not _shows_something("x = 1") and not _shows_something("server.shutdown()")
    assert not _shows_something("def show(x):\n    print(x)")
    assert _shows_something("for x in range(2):\n    print(x)")


def _markdown_of(script: Path) -> str:
    import jupytext

    return "\n\n".join(c.source for c in jupytext.read(script).cells if c.cell_type == "markdown")


def test_every_lesson_opens_with_a_link_to_the_glossary():
    for lesson in LESSONS:
        import jupytext

        first = next(c.source for c in jupytext.read(lesson).cells if c.cell_type == "markdown")
        assert "../docs/glossary.md" in _links(first), f"{lesson.name}'s first cell does not link the glossary"


def test_every_relative_link_in_a_lesson_or_lab_points_at_a_file():
    missing = [f"{script.relative_to(ROOT)} -> {target}" for script in LESSONS + LABS
               for target in _links(_markdown_of(script)) if not (script.parent / target).exists()]
    assert not missing, f"links to files that do not exist: {missing}"
