from pydantic import BaseModel

from toolkit.display import show


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
