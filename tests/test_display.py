import base64
import shutil

import plotly.graph_objects as go
import plotly.io as pio
import plotly.io._base_renderers as base_renderers
import pytest
from pydantic import BaseModel

from toolkit.display import charts_also_as_png, show

HAS_CHROMIUM = any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome"))


class Point(BaseModel):
    x: int
    label: str | None = None


def test_show_prints_indented_json_and_keeps_non_ascii(capsys):
    show({"city": "北京", "n": 1})
    out = capsys.readouterr().out
    assert '"city": "北京"' in out
    assert out.startswith("{\n  ")


def test_show_cuts_long_values_and_says_how_much(capsys):
    show({"text": "x" * 500}, limit=100)
    out = capsys.readouterr().out
    assert out.startswith('{\n  "text": "xxx')
    assert "(cut: " in out and "more characters)" in out
    assert len(out.splitlines()[0] + out.splitlines()[1]) <= 110


def test_show_without_limit_prints_everything(capsys):
    show({"text": "x" * 5000}, limit=None)
    assert "x" * 5000 in capsys.readouterr().out


def test_show_dumps_pydantic_models_without_empty_fields(capsys):
    show(Point(x=3))
    out = capsys.readouterr().out
    assert '"x": 3' in out and "label" not in out


@pytest.fixture
def renderer_restored():
    """plotly's default renderer is process-wide: each test puts it back."""
    before = pio.renderers.default
    yield
    pio.renderers.default = before


def a_chart() -> go.Figure:
    return go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))


def test_charts_get_the_png_renderer_once_beside_the_one_they_had(renderer_restored):
    pio.renderers.default = "plotly_mimetype"
    charts_also_as_png()
    charts_also_as_png()
    assert pio.renderers.default == "plotly_mimetype+png_if_possible"


def test_a_chart_whose_png_cannot_be_drawn_stays_interactive_with_one_note(renderer_restored, monkeypatch,
                                                                             capsys):
    def no_chrome(*args, **kwargs):
        raise RuntimeError("\nKaleido requires Google Chrome to be installed.\n\nEither download ...")

    monkeypatch.setattr(base_renderers, "to_image", no_chrome)  # what kaleido raises without a browser
    pio.renderers.default = "plotly_mimetype"
    charts_also_as_png()
    bundles = [a_chart()._repr_mimebundle_(), a_chart()._repr_mimebundle_()]
    assert all("application/vnd.plotly.v1+json" in b and "image/png" not in b for b in bundles)
    assert capsys.readouterr().out == ("(Charts are interactive only here, with no PNG copy: "
                                       "Kaleido requires Google Chrome to be installed.)\n")


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Chrome or Chromium (Debian: apt-get install -y chromium)")
def test_with_chromium_a_chart_carries_a_png_beside_the_interactive_one(renderer_restored):
    pio.renderers.default = "plotly_mimetype"
    charts_also_as_png()
    bundle = a_chart()._repr_mimebundle_()
    assert "application/vnd.plotly.v1+json" in bundle
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")
