"""Every Mermaid diagram in the course draws in JupyterLab, which ships Mermaid: the lessons'
diagrams and the README's, each opened in ``jupyter lab`` in headless Chromium. A diagram
Mermaid cannot parse shows a warning box instead of a picture, and fails here.

Each drawn diagram is also saved as a picture in ``/tmp/tool_calling_lab_diagrams/`` to look at.
"""

import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from scripts.browser import CHROMIUM, CHROMIUM_ARGS, free_port, stop, wait_for_http

ROOT = Path(__file__).resolve().parent.parent
MERMAID = re.compile(r"^```mermaid\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
PICTURES = Path(tempfile.gettempdir()) / "tool_calling_lab_diagrams"

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"needs Chromium at {CHROMIUM} (Debian: apt-get install -y chromium)"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                       reason="needs the playwright package (pip install playwright)"),
]


def diagrams_in(notebook: Path) -> int:
    cells = nbformat.read(notebook, as_version=4).cells
    return sum(len(MERMAID.findall(cell.source)) for cell in cells if cell.cell_type == "markdown")


def readme_as_notebook(folder: Path) -> Path:
    """The README's diagrams in a notebook of their own: JupyterLab opens a .md file as text."""
    blocks = MERMAID.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"```mermaid\n{block}```")
                                               for block in blocks])
    path = folder / "README_diagrams.ipynb"
    nbformat.write(notebook, path)
    return path


def test_the_diagram_finder_counts_blocks():
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "n.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_markdown_cell("text\n```mermaid\nflowchart LR\n  a --> b\n```\n"),
            nbformat.v4.new_code_cell("# ```mermaid\n# not a diagram\n# ```")]), path)
        assert diagrams_in(path) == 1


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``jupyter lab`` serving a folder with copies of the notebooks that hold diagrams; every
    cell drawn at once (no windowing), so no diagram waits for a scroll."""
    root = tmp_path_factory.mktemp("lab")
    settings = root / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    notebooks = [path for path in sorted((ROOT / "lessons").glob("*.ipynb")) if diagrams_in(path)]
    for path in notebooks:
        (root / path.name).write_bytes(path.read_bytes())
    names = [path.name for path in notebooks] + [readme_as_notebook(root).name]
    port = free_port()
    log = (root / "jupyter.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.token=",
         "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={root / '.settings'}", f"--LabApp.workspaces_dir={root / '.workspaces'}",
         "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/lab", 120, process)
        yield f"http://127.0.0.1:{port}", root, names
    finally:
        stop(process)
        log.close()


def test_there_are_diagrams_to_draw(lab):
    _, root, names = lab
    assert {"04_native_tool_calls.ipynb", "06_the_loop.ipynb", "13_under_the_hood.ipynb"} <= set(names)
    assert diagrams_in(root / "README_diagrams.ipynb") >= 1


def test_every_diagram_draws_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright

    url, root, names = lab
    PICTURES.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            for name in names:
                expected = diagrams_in(root / name)
                page.goto(f"{url}/lab/tree/{name}?reset")  # this notebook alone, no tabs restored
                shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
                drawn = shown.locator(".jp-RenderedMermaid img")
                warnings = shown.locator(".jp-RenderedMermaid.jp-mod-warning")
                deadline = 120_000
                page.wait_for_function(
                    "n => { const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');"
                    " return panel && panel.querySelectorAll('.jp-RenderedMermaid img').length"
                    " + panel.querySelectorAll('.jp-RenderedMermaid.jp-mod-warning').length >= n; }",
                    arg=expected, timeout=deadline)
                problems = [warnings.nth(i).inner_text()[:500] for i in range(warnings.count())]
                assert not problems, f"{name}: Mermaid could not draw a diagram: {problems}"
                assert drawn.count() == expected, f"{name}: {drawn.count()} of {expected} diagrams drawn"
                for index in range(expected):
                    picture = drawn.nth(index)
                    picture.scroll_into_view_if_needed()
                    # The picture is an SVG in a data URL: read its labels, and Mermaid's error text.
                    svg = picture.evaluate("img => decodeURIComponent(img.src)")
                    labels = len(re.findall(r"<text\b|<foreignObject\b", svg))
                    assert "Syntax error" not in svg, f"{name}: diagram {index + 1} is Mermaid's syntax error"
                    assert labels >= 3, f"{name}: diagram {index + 1} has {labels} labels"
                    picture.screenshot(path=PICTURES / f"{Path(name).stem}-{index + 1}.png")
        finally:
            browser.close()
