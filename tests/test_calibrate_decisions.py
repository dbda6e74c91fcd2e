"""The calibration script's command line: a missing adapter file is a clear error, not a
calibration quietly run on the shipped adapter or on the base model."""

import pytest

from scripts.calibrate_decisions import main


def test_an_adapter_file_that_is_not_there_is_refused_before_any_model_loads(tmp_path, capsys):
    missing = tmp_path / "adapter-800.gguf"
    with pytest.raises(SystemExit) as stop:
        main(["--count", "4", "--model", "SmolLM2-135M-Instruct+tools", "--adapter", str(missing)])
    assert stop.value.code == 2
    assert f"no adapter file at {missing}" in capsys.readouterr().err


def test_a_model_that_is_not_embedded_is_refused_with_the_names_there_are(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--count", "4", "--model", "SmolLM2-135M-Instruct+tools3"])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "no embedded model is called 'SmolLM2-135M-Instruct+tools3'" in error
    assert "SmolLM2-135M-Instruct+tools2" in error
