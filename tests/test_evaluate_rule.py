"""The shipping rule's measurements, end to end on the embedded models, on a slice small enough
for the suite: every model gets its row, and the new adapter gets the rule's verdict.
Asserts on structure only: the figures are the models' to give."""
import re

import pytest

import benchmarks.after_results as after_results
from toolkit.engine import BASE_MODEL, TUNED_MODEL
from toolkit.engine.model import SECOND_ADAPTER, TUNED_MODELS
from training import evaluate

pytestmark = pytest.mark.embedded


def test_rule_measures_every_model_and_judges_the_new_adapter(monkeypatch, capsys):
    conversations = after_results.load()
    one_step = [c for c in conversations if c["kind"] in after_results.ONE_STEP][:2]
    monkeypatch.setattr(after_results, "load", lambda: one_step)
    # One shipped adapter beside the base, to keep the slice small (every trial runs the model);
    # the second shipped adapter stands in for a new one, served under the new name.
    monkeypatch.setattr(evaluate, "TUNED_MODELS", TUNED_MODELS[:1])
    evaluate.main(["rule", "--adapter", str(SECOND_ADAPTER), "--per-category", "1", "--seeds", "1", "--rounds", "1"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| SmolLM2")]
    assert [row.split(" | ")[0][2:] for row in rows] == [BASE_MODEL, TUNED_MODEL, evaluate.NEW_MODEL]
    for row in rows:
        cells = row.strip("|").split(" | ")
        assert len(cells) == 7
        assert re.search(r"[+-]\d+ \[[+-]\d+, [+-]\d+\], p ", cells[1])  # the paired difference, interval, p
        assert re.fullmatch(r"\d+/2 = \d+% \[\d+%, \d+%\]", cells[4].strip())  # facts: of the 2 conversations
    assert rows[0].rstrip(" |").endswith("1.00")  # speed is against the base
    assert out.count("## The rule for") == 1 and f"## The rule for {evaluate.NEW_MODEL}" in out
    assert re.search(r"Branch: \*\*(default|another model|not shipped)\*\*", out)
    verdict = out[out.index("## The rule for"):]
    # six checks, and the fallback's where the six do not all hold
    assert verdict.count("| yes |") + verdict.count("| no |") in (6, 7)


def test_rule_refuses_an_adapter_file_that_is_not_there(tmp_path):
    with pytest.raises(SystemExit, match="no adapter file"):
        evaluate.main(["rule", "--adapter", str(tmp_path / "missing.gguf")])
