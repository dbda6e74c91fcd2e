"""What the lab installs: requirements.txt and pyproject.toml agree, and a toolkit installed
from a wheel (not the editable checkout) carries the scenario suite and loads it."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def requirement_lines() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def name_of(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_requirements_install_the_lab_with_its_extras():
    lines = requirement_lines()
    extras = set(project()["optional-dependencies"])
    assert lines[-1] == f"-e .[{','.join(sorted(extras))}]", lines[-1]


def test_each_package_named_in_requirements_has_pyproject_bounds():
    project_data = project()
    declared = project_data["dependencies"] + sum(project_data["optional-dependencies"].values(), [])
    bounds = {name_of(each): each for each in declared}
    # A line may carry pip's options for that one package after its bounds ("... --config-settings=...").
    named = [line.split(" --")[0] for line in requirement_lines() if not line.startswith("-e")]
    assert {name_of(line) for line in named} >= {"streamlit", "jupyterlab", "openai", "pandas", "plotly",
                                                 "pydantic"}
    for line in named:
        assert name_of(line) in bounds, f"{line} is not declared in pyproject.toml"
        assert line.replace(" ", "") == bounds[name_of(line)].replace(" ", ""), (line, bounds[name_of(line)])


def test_llama_cpp_is_built_for_any_cpu_not_tuned_to_the_one_it_compiles_on():
    # -march=native brings in AMX kernels that crash where a virtual machine lists AMX but forbids it.
    line = next(line for line in requirement_lines() if name_of(line) == "llama-cpp-python")
    assert line.endswith(" --config-settings=cmake.args=-DGGML_NATIVE=OFF"), line


def test_a_wheel_install_from_another_folder_loads_the_suite(tmp_path):
    # Built from a copy of what the wheel is made of, so the build's leftovers (build/, egg-info)
    # land in the copy; the installed build backend, so no network is needed.
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in ("toolkit", "labs", "app_pages"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "wheel"), str(source)], check=True, cwd=tmp_path)
    wheel = next((tmp_path / "wheel").glob("tool_calling_lab-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        shipped = [name for name in names if name.startswith("toolkit/bench/scenarios/")]
    assert "toolkit/bench/scenarios/tools.json" in shipped and len(shipped) >= 8, shipped
    assert "toolkit/bench/effects.json" in names  # the app's "what this setting did here" notes
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(tmp_path / "site"), str(wheel)], check=True, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = ("import toolkit; from toolkit.bench.suite import load_suite; "
             "print(toolkit.__file__); print(len(load_suite().cases))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=elsewhere, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, check=True)
    where, cases = result.stdout.split()
    assert Path(where).is_relative_to(tmp_path / "site"), where  # the wheel's copy, not the checkout
    assert int(cases) > 50
