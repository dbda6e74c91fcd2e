"""Every lesson and lab notebook runs top to bottom, offline, as a learner would run it.

Notebooks are stored as jupytext percent-format ``.py`` files. Labs run twice: as handed out
(the graders must report the stubs as not done, without crashing) and with each cell tagged
``exercise`` replaced by the reference solution, where every ``report*`` must pass.
Outputs that vary between runs (a model's words) are never asserted.
"""

from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py"))
LABS = sorted((ROOT / "labs").glob("[0-9][0-9]_*.py"))

pytestmark = [pytest.mark.lessons, pytest.mark.embedded]


def execute(notebook, folder: Path):
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute()
    return notebook


def outputs_text(notebook) -> str:
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text", "") or str(output.get("data", {}).get("text/plain", "")))
    return "\n".join(texts)


def test_there_are_lessons_and_labs():
    assert len(LESSONS) >= 13 and len(LABS) >= 1


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_runs_top_to_bottom(path):
    execute(jupytext.read(path), path.parent)


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_as_handed_out_runs_and_reports_not_done(path):
    notebook = execute(jupytext.read(path), path.parent)
    assert "not done yet" in outputs_text(notebook)


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_lab_with_the_reference_solution_passes(path, monkeypatch):
    # Graders that make up their cases draw a new seed each time; the capstone's, graded on the
    # model, passes the reference on 36 of 40 unseen seeds, so a drawn seed would fail one run in
    # ten. Seed 3000, the first of those 40, repeats one grading exactly (temperature 0, seed 0).
    monkeypatch.setenv("LAB_CASE_SEED", "3000")
    notebook = jupytext.read(path)
    exercises = [cell for cell in notebook.cells if "exercise" in cell.get("metadata", {}).get("tags", [])]
    assert exercises, f"{path.name} has no cell tagged 'exercise'"
    for cell in exercises:
        cell.source = f"from labs.solutions.{path.stem.split('_', 1)[1]} import *  # the reference solution"
    notebook.cells.append(nbformat.v4.new_code_cell(
        "_reports = {k: v for k, v in globals().items() if k.startswith('report')}\n"
        "assert _reports, 'the lab defines no report'\n"
        "assert all(r.passed for r in _reports.values()), '\\n'.join(map(str, _reports.values()))"
    ))
    execute(notebook, path.parent)
