"""Committed notebooks show outputs free of the machine they were executed on.

Lessons are committed executed, so a reader sees exactly what a cell printed. A traceback, a
warning or a printed path would carry the folder the repository sat in, the kernel's scratch
files or the Python installation (``/work/...``, ``/tmp/ipykernel_...``,
``.../site-packages/...``): details of one machine that mean nothing to a reader, and that
lesson 9 teaches never to show. A cell that needs a path prints it relative to the repository.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "lessons").glob("*.ipynb")) + sorted((ROOT / "labs").glob("*.ipynb"))

MACHINE_PATH = re.compile(
    # A Unix absolute path (not the tail of a URL). "/home/user/" is left alone: it is the
    # placeholder home that models and examples write (BFCL's file-system questions lead the
    # model to make such paths up), where a real home folder carries a real user's name.
    r"(?<![\w.:/-])/(?:work|home(?!/user/)|root|tmp|usr)/"
    r"|site-packages"  # an installed package's file, on any system
    r"|(?<![\w])[A-Za-z]:\\(?:Users|Windows|Program Files|ProgramData|[^\\\s\"']+\\)"  # C:\Users\..., C:\x\...
)


def output_texts(output: dict) -> list[str]:
    """Every piece of text an output shows: a stream, an error's traceback, a value's text forms."""
    texts = []
    if output.get("output_type") == "stream":
        texts.append(output.get("text", ""))
    if output.get("output_type") == "error":
        texts += [output.get("ename", ""), output.get("evalue", ""), *output.get("traceback", [])]
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/"):  # text/plain and text/html above all
            texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def machine_paths(notebook) -> list[str]:
    """'cell N: ...the path in context...' for every machine path in the notebook's outputs."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            for text in output_texts(output):
                for match in MACHINE_PATH.finditer(text):
                    context = text[max(0, match.start() - 40): match.end() + 40].replace("\n", " ")
                    found.append(f"cell {index}: ...{context}...")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_committed_output_shows_a_machine_path(path):
    found = machine_paths(nbformat.read(path, as_version=4))
    assert not found, f"{path.relative_to(ROOT)} shows machine paths in its outputs:\n" + "\n".join(found)


def test_there_are_committed_notebooks_to_check():
    assert len([p for p in NOTEBOOKS if p.parent.name == "lessons"]) >= 14
    assert any(p.parent.name == "labs" for p in NOTEBOOKS)


@pytest.mark.parametrize("leak", [
    'Traceback (most recent call last):\n  File "/work/main/toolkit/tools.py", line 165, in invoke',
    'File "/tmp/ipykernel_4242/123456.py", line 14',
    "/usr/lib/python3.12/json/decoder.py:353: UserWarning",
    "see /home/someone/lab/data.json",
    "/root/.cache/model.gguf",
    "C:\\Users\\someone\\lab\\lessons\\x.py",
    "lib/python3.12/site-packages/openai/_base_client.py",
])
@pytest.mark.parametrize("kind", ["stream", "error", "text/plain", "text/html"])
def test_the_check_finds_a_path_in_every_kind_of_output(leak, kind):
    if kind == "stream":
        output = nbformat.v4.new_output("stream", name="stdout", text=leak)
    elif kind == "error":
        output = nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=["", leak])
    else:
        output = nbformat.v4.new_output("display_data", data={kind: leak})
    cell = nbformat.v4.new_code_cell("x", outputs=[output])
    assert machine_paths(nbformat.v4.new_notebook(cells=[cell]))


@pytest.mark.parametrize("harmless", [
    "http://127.0.0.1:42729/v1 is rate-limiting this key (429)",
    'File "toolkit/tools.py", line 165, in invoke',
    'File "<this cell>", line 14, in <module>',
    "settings in /srv/reports/conf/db.yaml",  # lesson 9's made-up leak: a path of no real machine
    "find({'path': '/home/user/test/test.txt'})",  # a model's made-up path in a BFCL call
    "https://example.com/home/page and a/tmp/b",
    "{'text': 'value:\\nnext line'}",
])
def test_the_check_leaves_relative_paths_and_urls_alone(harmless):
    cell = nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout", text=harmless)])
    assert not machine_paths(nbformat.v4.new_notebook(cells=[cell]))
