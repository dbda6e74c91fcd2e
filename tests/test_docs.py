"""The README is a short front door, the pages under docs/ hold the rest, and every figure they
quote is read back from the committed file it came from."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    """A page's text with its line breaks and runs of spaces made single spaces, so a figure
    is found whether or not a sentence wraps around it."""
    return " ".join(text.split())


# --- the README as a front door -------------------------------------------------------------

def test_the_readme_is_short():
    words = len(README.split())  # what `wc -w` counts, code blocks included
    assert words <= 1100, f"README has {words} words; move detail to a page under docs/"


def ci_test_command() -> str:
    """The last command .ci/run runs: the README's test command."""
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [line for line in lines if line and not line.startswith("#") and line not in ("fi", "done")]
    return commands[-1]


def test_the_install_app_and_test_commands_are_on_the_first_screen():
    first = README.splitlines()[:40]
    for command in ("pip install -r requirements.txt", "streamlit run app.py", ci_test_command()):
        assert command in [line.strip() for line in first], f"{command!r} is not a line of the README's first 40"


def test_the_readmes_test_command_is_the_one_ci_runs():
    assert ci_test_command() == "python -m pytest"
    commands = [line.strip() for block in FENCE.findall(README) for line in block.splitlines()]
    assert ci_test_command() in commands


def test_jupyterlab_starts_from_the_repository_root():
    commands = [line.strip() for block in FENCE.findall(README) for line in block.splitlines()]
    assert "jupyter lab" in commands
    assert not any(line.startswith("jupyter lab ") for line in commands), "start JupyterLab from the root, so labs/ is reachable"


def test_the_readme_draws_the_whole_lab_in_mermaid():
    blocks = re.findall(r"^```mermaid\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1
    for part in ("lessons", "labs", "app", "toolkit", "loop", "client", "bench", "OpenAI-compatible endpoint",
                 "llama.cpp", "remote", "tools"):
        assert part in blocks[0], f"the diagram does not show {part}"


def test_the_readme_keeps_the_endpoint_variables():
    for name in ("LAB_BASE_URL", "LAB_MODEL", "LAB_API_KEY", "OPENAI_API_KEY"):
        assert f"{name}" in README


# --- the docs pages ----------------------------------------------------------------------------

def test_every_docs_page_says_what_it_is_and_links_back_to_the_readme_which_links_it():
    assert len(DOCS) >= 7
    for path in DOCS:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert lines[0].startswith("# "), f"{path.name} does not start with a title"
        assert "](../README.md" in lines[1], f"{path.name}: its first line does not link back to the README"
        assert f"(docs/{path.name})" in README, f"the README does not link docs/{path.name}"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def links(path: Path) -> list[tuple[Path, str]]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        found.append(((path.parent / file).resolve() if file else path, anchor))
    return found


def test_every_relative_link_in_the_readme_and_the_docs_resolves_with_its_anchor():
    broken = []
    for path in [ROOT / "README.md", *DOCS]:
        for target, anchor in links(path):
            if not target.exists():
                broken.append(f"{path.name} -> {target.relative_to(ROOT)}")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                broken.append(f"{path.name} -> {target.relative_to(ROOT)}#{anchor}")
    assert not broken, broken


def test_a_broken_anchor_is_told_apart_from_a_good_one():
    assert slug("BFCL multi-turn: conversations judged by the state they leave") == \
        "bfcl-multi-turn-conversations-judged-by-the-state-they-leave"
    assert slug("`suite/`: the scenario suite") == "suite-the-scenario-suite"
    assert "use-another-endpoint" in anchors(ROOT / "README.md")
    assert "no-such-section" not in anchors(ROOT / "README.md")


# --- figures, read back from the committed files -----------------------------------------------

def percent(successes: int, n: int) -> str:
    return f"{round(100 * successes / n)}%"


def points_text(points: int) -> str:
    """How a page writes a number of points: "1 point", "4 points"."""
    return f"{abs(points)} point{'' if abs(points) == 1 else 's'}"


def test_the_base_models_whole_suite_figure_is_the_shipped_recording():
    recording = ROOT / "data" / "recorded_runs" / "scenario-suite-embedded-defaults.jsonl"
    header, *trials = [json.loads(line) for line in recording.read_text(encoding="utf-8").splitlines()]
    assert header["run"]["model"] == "SmolLM2-135M-Instruct" and len(trials) == header["trials"]
    settings = header["run"]["plan"]["base"]
    assert settings["tool_choice"] == "auto" and settings["parallel_tool_calls"] is None  # OpenAI's defaults
    n = len(trials)
    tool = sum(t["selection_ok"] for t in trials)
    arguments = sum(t["arguments_ok"] for t in trials)
    models = flat(page("models.md"))
    assert f"{tool} of {n} ({percent(tool, n)})" in models
    assert f"{arguments} of {n} ({percent(arguments, n)})" in models
    row = re.search(r"^\| suite, first (\d+) cases, OpenAI's defaults: selection / arguments \| (\d+)% / (\d+)% \|",
                    page("models.md"), flags=re.MULTILINE)
    assert row, "the held-out table has no whole-suite row"
    assert (int(row[1]), f"{row[2]}%", f"{row[3]}%") == (n, percent(tool, n), percent(arguments, n))
    # The training record's older rows point at the recording, with its figures.
    training = flat((ROOT / "training" / "README.md").read_text(encoding="utf-8"))
    assert f"gives {tool}/{n} and {arguments}/{n}" in training


def effects(model="SmolLM2-135M-Instruct"):
    from toolkit.bench.effects import load_effects

    return {row["setting"]: row for row in load_effects() if row["model"] == model and "selection_paired" in row}


def test_the_base_models_summary_is_the_stored_effects_table():
    rows = effects()
    models = flat(page("models.md"))
    description, tool_choice, enums = rows["description"], rows["tool_choice"], rows["enums"]
    (clear, vague), n = description["selection"], description["cases"]
    assert f"On the {n} simple, multiple and irrelevance questions" in models
    assert f"right tool in {clear['successes']} with clear descriptions and in {vague['successes']} with vague ones" in models
    assert not description["selection_paired"]["real"]  # "chance explains that difference"
    args_clear, args_vague = description["arguments"]
    assert f"right in only {args_clear['successes']} of those {n} ({args_vague['successes']} with vague" in models
    assert f"right in {enums['arguments'][0]['successes']} of {enums['cases']} questions" in models
    auto, required = tool_choice["selection"], tool_choice["arguments"]
    assert tool_choice["values"] == ["auto", "required"] and auto[0]["successes"] == clear["successes"]
    assert (f"{auto[1]['successes']} of {tool_choice['cases']} right tools, "
            f"{required[1]['successes']} of {tool_choice['cases']} with the right arguments") in models


def test_the_bench_pages_sentences_are_the_stored_effects_table():
    from toolkit.bench.effects import MARKDOWN_HEADER

    rows, bench = effects(), flat(page("bench.md"))
    assert flat(MARKDOWN_HEADER) in bench
    points = {setting: -row["selection_paired"]["points"] for setting, row in rows.items()}
    temperature = rows["temperature"]
    arguments, selection = temperature["arguments_paired"], temperature["selection_paired"]
    assert arguments["real"] and not selection["real"]  # "costs ... of right arguments; ... within chance"
    assert (f"Temperature 1.0 costs {-arguments['points']} points of right arguments "
            f"({arguments['only_first']} cases lost against {arguments['only_second']} gained); the "
            f"{points['temperature']} points of right tools it costs are within chance "
            f"({selection['only_first']} cases lost against {selection['only_second']} gained, "
            f"p {selection['p']:.3f})") in bench
    assert (f'`tool_choice="required"` costs {points["tool_choice"]} points of right tools and '
            f'{-rows["tool_choice"]["arguments_paired"]["points"]} of right arguments') in bench
    guidance = rows["system_prompt"]
    assert (f"leaves the right tool where it was ({guidance['selection_paired']['only_first']} cases lost, "
            f"{guidance['selection_paired']['only_second']} gained) and adds "
            f"{guidance['arguments_paired']['points']} points of right arguments "
            f"({guidance['arguments_paired']['only_first']} lost, {guidance['arguments_paired']['only_second']} "
            f"gained, p {guidance['arguments_paired']['p']:.3f})") in bench
    assert f"hidden names cost {points['names']} points of right tools, and eight distractors cost {points['distractors']}" in bench
    paired = rows["description"]["selection_paired"]
    changed = paired["only_first"] + paired["only_second"]
    assert (f"changed {changed} of {paired['pairs']} cases, {paired['only_first']} one way and "
            f"{paired['only_second']} the other (p {paired['p']:.3f})") in bench
    paired = rows["enums"]["selection_paired"]
    assert f"changed the right tool in {paired['only_first'] + paired['only_second']} of {paired['pairs']} cases" in bench
    native, string = rows["protocol"]["selection"]
    assert (f"costs {points['protocol']} points of right tools (native {percent(native['successes'], native['n'])} "
            f"against {percent(string['successes'], string['n'])})") in bench
    assert f"wins back {-points['retrieval']}" in bench
    assert f"At the {percent(changed, rows['description']['cases'])} of answers that descriptions" in bench

    tuned = effects("SmolLM2-135M-Instruct+tools")
    enum_values = tuned["enums"]["parameters"]
    assert (f"right {enum_values['on']['enum']['right']} times in {enum_values['on']['enum']['values']} with the enum "
            f"in the schema and {enum_values['off']['enum']['right']} in {enum_values['off']['enum']['values']} without") in bench
    paired = tuned["enums"]["arguments_paired"]
    assert paired["real"]  # "where enums move the chart offline"
    assert (f"Without enums it fills {-paired['points']} points fewer calls right ({paired['only_first']} cases "
            f"lost, {paired['only_second']} gained)") in bench
    paired = tuned["description"]["arguments_paired"]
    assert not paired["real"] and not tuned["description"]["selection_paired"]["real"]  # "do not move it"
    assert (f"and {points_text(paired['points'])} now ({paired['only_first']} "
            f"lost, {paired['only_second']} gained, p {paired['p']:.3f})") in bench


def test_the_bench_pages_sentences_on_the_second_tuned_model_are_its_stored_rows():
    from toolkit.bench.effects import SETTINGS_MEASURED

    bench = flat(page("bench.md"))
    second, first = effects("SmolLM2-135M-Instruct+tools2"), effects("SmolLM2-135M-Instruct+tools")
    names = second["names"]
    real, hidden = (percent(rate["successes"], rate["n"]) for rate in names["selection"])
    paired = names["selection_paired"]
    assert not paired["real"]  # "within chance"
    assert (f"hiding them takes its right tools from {real} to {hidden} ({paired['only_first']} cases lost, "
            f"{paired['only_second']} gained, p {paired['p']:.3f}: within chance)") in bench
    parallel, first_parallel = second["parallel_tool_calls"], first["parallel_tool_calls"]
    assert parallel["selection_paired"]["real"]
    assert (f"Turning `parallel_tool_calls` off costs it {-parallel['selection_paired']['points']} points of right "
            f"tools, as it costs the first {-first_parallel['selection_paired']['points']}") in bench
    off = parallel["selection"][1]
    assert off["successes"] == 0  # "it then picks the right tools for none"
    assert f"of the {off['n']} questions that need several calls at once, it then picks the right tools for none" in bench
    distractors, retrieval = second["distractors"]["selection_paired"], second["retrieval"]["selection_paired"]
    assert distractors["real"] and retrieval["real"] and retrieval["p"] < 0.001
    assert (f"Eight distractors cost it {-distractors['points']} points of right tools ({distractors['only_first']} "
            f"cases lost, {distractors['only_second']} gained), fewer than the "
            f"{-first['distractors']['selection_paired']['points']} they cost the first") in bench
    assert (f"retrieval by embeddings wins back {retrieval['points']} of them ({retrieval['only_second']} cases "
            f"gained, {retrieval['only_first']} lost, p < 0.001)") in bench
    protocol, first_protocol = second["protocol"], first["protocol"]["selection_paired"]
    native, string = (percent(rate["successes"], rate["n"]) for rate in protocol["selection"])
    paired = protocol["selection_paired"]
    assert paired["real"] and first_protocol["real"]
    assert (f"The string protocol costs it {-paired['points']} points of right tools (from {native} to {string}; "
            f"{paired['only_first']} cases lost, {paired['only_second']} gained), where it costs the first "
            f"{-first_protocol['points']}.") in bench
    guidance, first_guidance = second["system_prompt"]["selection_paired"], first["system_prompt"]["selection_paired"]
    assert not guidance["real"] and first_guidance["real"]  # "moves it by no more than chance"
    assert (f"The guidance in the system prompt, which costs the first {-first_guidance['points']} points, moves it "
            f"by no more than chance ({guidance['only_first']} cases lost, {guidance['only_second']} gained, "
            f"p {guidance['p']:.3g})") in bench
    # Every setting is measured on it, as on the other models: the page and the models page say so.
    assert set(SETTINGS_MEASURED) == set(second) and "not measured yet" not in bench
    assert "every setting on both" in flat(page("models.md"))


def test_the_system_prompt_figures_are_the_recorded_run():
    recorded = json.loads((ROOT / "data" / "system_prompt_guidance.json").read_text(encoding="utf-8"))
    cells = {(m["model"], r["need"], r["guidance"]): r for m in recorded["models"] for r in m["by_need"]}
    bench = flat(page("bench.md"))
    base, tuned = "SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct+tools"

    def right(model, need, guidance):
        return cells[(model, need, guidance)]["selection"]["successes"]

    n = cells[(base, "needs a tool", "off")]["n"]
    assert (f"On the {n} questions that need a tool, the right tool goes from {right(base, 'needs a tool', 'off')}/{n} to "
            f"{right(base, 'needs a tool', 'on')}/{n} on the base model, and from {right(tuned, 'needs a tool', 'off')}/{n} "
            f"to {right(tuned, 'needs a tool', 'on')}/{n} on the tuned one") in bench
    n = cells[(base, "needs no tool", "off")]["n"]
    assert right(base, "needs no tool", "off") == right(base, "needs no tool", "on")
    assert (f"On the {n} questions that need none, {right(base, 'needs no tool', 'on')}/{n} stay right on the base "
            f"model, and {right(tuned, 'needs no tool', 'off')} become {right(tuned, 'needs no tool', 'on')}") in bench


def names_hidden_line(row: dict) -> str:
    """A row of the names-hidden record as bench.md's table shows it."""
    from toolkit.bench.effects import paired_cell
    from toolkit.engine import BASE_MODEL

    verdict = row["markdown"].strip("| \n").split(" | ")[-1]
    cells = [row["model"].removeprefix(BASE_MODEL) or "base",
             " vs ".join(f"{p['successes']}/{p['n']}" for p in row["selection"]),
             paired_cell(row["selection_paired"]), paired_cell(row["arguments_paired"]), verdict]
    return "| " + " | ".join(cells) + " |"


def test_the_names_hidden_figures_are_the_recorded_run():
    from toolkit.engine import EMBEDDED_MODELS

    recorded = json.loads((ROOT / "data" / "descriptions_names_hidden.json").read_text(encoding="utf-8"))
    rows = {row["model"]: row for row in recorded["rows"]}
    assert set(rows) == set(EMBEDDED_MODELS) and recorded["command"] == "python benchmarks/descriptions_names_hidden.py"
    bench = page("bench.md")
    for row in rows.values():
        assert row["fixed"] == {"names": "hidden"} and row["values"] == ["clear", "vague"]
        assert names_hidden_line(row) in bench, row["model"]
    # "None of the three differences is real", and the base model's comes closest
    assert not any(row["selection_paired"]["real"] or row["arguments_paired"]["real"] for row in rows.values())
    base = rows["SmolLM2-135M-Instruct"]["selection_paired"]
    assert min(row["selection_paired"]["p"] for row in rows.values()) == base["p"]
    assert (f"vague descriptions cost it {points_text(-base['points'])} of right tools ({base['only_first']} cases "
            f"lost, {base['only_second']} gained, p {base['p']:.3f})") in flat(bench)
    vague = rows["SmolLM2-135M-Instruct+tools"]["selection"][1]
    assert f"still picks the right tool for {percent(vague['successes'], vague['n'])} of the questions" in flat(bench)


def test_the_sidebar_says_how_often_the_tuned_models_call_where_no_tool_is_needed_as_the_models_page_does():
    from toolkit.app.backends import EMBEDDED_DETAIL

    row = re.search(r"^\| BFCL `irrelevance`, first (\d+) \(right = no call\) \| (\d+)% \| (\d+)% \| (\d+)% \|",
                    page("models.md"), flags=re.MULTILINE)
    assert row, "the held-out table has no irrelevance row"
    asked, tuned_right = int(row[1]), int(row[3])
    calls = asked - round(asked * tuned_right / 100)
    detail = " ".join(EMBEDDED_DETAIL.split())
    assert f"it calls a tool on {calls} of the first {asked} BFCL questions that need none" in detail
    assert int(row[4]) == 0  # the second tuned model: "on all of the first 20"
    assert f"it calls a tool on all of the first {asked} BFCL questions that need none" in detail


def test_the_tool_group_figures_are_the_recorded_run():
    recorded = json.loads((ROOT / "data" / "tool_groups.json").read_text(encoding="utf-8"))["summary"]
    bench = flat(page("bench.md"))
    n = recorded["routed"]["selection"]["n"]
    assert (f"right tool {recorded['routed']['selection']['successes']}/{n} routed and "
            f"{recorded['all_at_once']['selection']['successes']}/{n} with all") in bench
    assert recorded["routed"]["arguments"]["successes"] == recorded["all_at_once"]["arguments"]["successes"]
    assert f"right in {recorded['routed']['arguments']['successes']}/{n} both ways" in bench
    paired = recorded["paired"]["selection"]
    assert f"{paired['only_routed']} questions were won and {paired['only_all_at_once']} lost" in bench
    assert f"right group for only {recorded['router_right_group']['successes']}/{n}" in bench
    assert f"the agents got {recorded['perfect_router']['selection']['successes']}/{n}" in bench
    tokens = recorded["mean_prompt_tokens"]
    assert f"about {round(tokens['all_at_once']):,} tokens per question to about {round(tokens['routed']):,}" in bench


def test_the_engines_thresholds_on_the_endpoint_page_are_the_codes():
    from toolkit.engine.decide import CALL_THRESHOLD
    from toolkit.engine.model import TUNED_THRESHOLDS

    endpoint = flat(page("endpoint.md"))
    assert f"clears a threshold ({CALL_THRESHOLD})" in endpoint
    assert f"a threshold of its own ({TUNED_THRESHOLDS.after_results}," in endpoint


def test_the_training_page_quotes_the_committed_run_settings():
    training = flat(page("training.md"))
    for run in ("tools", "prompt"):
        config = json.loads((ROOT / "training" / "runs" / run / "config.json").read_text(encoding="utf-8"))
        assert (config["conversations"], config["batch"], config["rank"], config["alpha"], config["lr"]) == \
            (800, 8, 8, 16, 3e-4), run
    assert "800 invented conversations" in training and "rank 8, alpha 16" in training
    assert "batch 8" in training and "peak learning rate 3e-4" in training
    for adapter in (ROOT / "toolkit" / "engine" / "adapters").glob("*.gguf"):
        assert round(adapter.stat().st_size / 1e6, 1) == 4.9, adapter.name


@pytest.mark.parametrize("stale", ["63% / 27%", "86%"])
def test_figures_no_committed_file_backs_are_gone(stale):
    for path in [ROOT / "README.md", *DOCS]:
        if path.name == "workshop.md":
            continue
        assert stale not in path.read_text(encoding="utf-8"), f"{path.name} still says {stale}"


def test_lesson_10s_reading_of_the_effects_table_is_the_stored_table():
    """Lesson 10 prints the stored rows, then reads them in prose: the prose's figures are the rows'."""
    lesson = flat(" ".join(line.removeprefix("#") for line in
                           (ROOT / "lessons" / "10_description_quality.py").read_text("utf-8").splitlines()))
    rows = effects()
    names, temperature = rows["names"]["selection_paired"], rows["temperature"]["arguments_paired"]
    guidance, description = rows["system_prompt"]["arguments_paired"], rows["description"]["selection_paired"]
    real = [row for setting, row in rows.items() if setting in ("names", "description", "enums", "temperature",
            "system_prompt") and (row["selection_paired"]["real"] or row["arguments_paired"]["real"])]
    assert len(real) == 3  # "three of the five are real"
    assert (f"Hidden names cost {-names['points']} points of right tools: {names['only_first']} cases went from "
            f"right to wrong and {names['only_second']} the other way") in lesson
    assert (f"Temperature 1.0 costs {-temperature['points']} points of right arguments ({temperature['only_first']} "
            f"cases lost, {temperature['only_second']} gained), and the system prompt's guidance adds "
            f"{guidance['points']} ({guidance['only_first']} lost, {guidance['only_second']} gained)") in lesson
    assert (f"vague descriptions move the right tool by {points_text(description['points'])} "
            f"({description['only_first']} cases one way, "
            f"{description['only_second']} the other, p {description['p']:.3f})") in lesson
    values = rows["enums"]["parameters"]
    on, off = values["on"]["enum"], values["off"]["enum"]
    assert (f"{on['right']} of the {on['values']} enum values judged in calls to the right tool were right with "
            f"enums on, and {off['right']} of {off['values']} with them off") in lesson
