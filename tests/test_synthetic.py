"""The synthetic training conversations: shape, shares, valid calls, and no leak of held-out data."""
import functools
import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from toolkit.bench.suite import load_suite
from toolkit.engine.parser import parse_reply
from training.synthetic import (BANK, HELD_OUT_SPLIT_NAMES, SCALE_KINDS, SECOND_KINDS, SPLIT_CITIES, SPLIT_PEOPLE,
                                WITH_ENUM, _NOT_FOUND, conversations, prompt_and_completion)

try:
    import jsonschema
except ImportError:  # pragma: no cover - the lab's requirements install it
    jsonschema = None


RECIPES = ["first", "second", "scale"]


@pytest.fixture(scope="module", params=RECIPES)
def sample(request):
    return conversations(400, seed=7, recipe=request.param)


@pytest.fixture(scope="module")
def first_sample():
    return conversations(400, seed=7)


@functools.lru_cache(maxsize=1)
def _second(count=2000):
    return conversations(count, seed=5, recipe="second")


def _function(tool):
    """A tool's description and parameters: everything but its name."""
    return {k: v for k, v in tool["function"].items() if k != "name"}


def _tools_by_name(conversation):
    return {t["function"]["name"]: t["function"]["parameters"] for t in conversation.tools}


def _validate(arguments, schema):
    if jsonschema is not None:
        jsonschema.validate(arguments, schema)
        return
    for key in schema.get("required", []):  # a smaller check, without the package
        assert key in arguments
    for key, value in arguments.items():
        spec = schema["properties"][key]
        if "enum" in spec:
            assert value in spec["enum"]


def _required_first(arguments, schema):
    """The grammar writes required properties in schema order, then optional ones."""
    properties, required = list(schema["properties"]), schema.get("required", [])
    expected = [p for p in properties if p in required] + [p for p in properties if p not in required]
    keys = list(arguments)
    assert keys == [p for p in expected if p in arguments]
    for key, value in arguments.items():
        if isinstance(value, dict):
            _required_first(value, schema["properties"][key])


@pytest.mark.parametrize("recipe", RECIPES)
def test_same_seed_same_output_and_different_seeds_differ(recipe):
    a, b, c = (conversations(50, seed=s, recipe=recipe) for s in (1, 1, 2))
    assert [x.__dict__ for x in a] == [x.__dict__ for x in b]
    assert [x.__dict__ for x in a] != [x.__dict__ for x in c]


def _digest(items):
    fields = ("messages", "tools", "reply", "kind", "language", "hidden_names")
    text = json.dumps([{k: getattr(c, k) for k in fields} for c in items], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_first_adapters_data_is_unchanged():
    """The shipped adapter was trained on conversations(800, seed=1234): it must stay reproducible.
    The digests were computed before any second recipe existed."""
    shipped = conversations(800, seed=1234)
    assert _digest(shipped[:50]) == "be29e8b8210bfbe90e2b057921e3fce05f04d1b9d0656540e38484adee919336"
    assert _digest(shipped) == "199b7e557dddd35b27c99eb16ef5e5a1fca7e165a3ea485a37c50cfddb2be5af"


def test_kinds_languages_and_shares(first_sample):
    sample = first_sample
    kinds = Counter(c.kind for c in sample)
    assert set(kinds) == {"single", "parallel", "none", "after_result"}
    for kind, share in {"single": 0.50, "parallel": 0.12, "none": 0.20, "after_result": 0.18}.items():
        assert abs(kinds[kind] / len(sample) - share) < 0.07, kinds
    languages = Counter(c.language for c in sample)
    assert set(languages) == {"en", "zh"} and abs(languages["en"] / len(sample) - 0.5) < 0.08
    assert all(2 <= len(c.tools) <= 6 for c in sample)


def test_bank_is_large_and_bilingual():
    assert len(BANK) >= 30
    for spec in BANK.values():
        assert len(spec.en) >= 2 and len(spec.zh) >= 2, spec.name
        assert spec.tool["function"]["description"]


def test_every_call_names_an_offered_tool_with_valid_arguments(sample):
    seen_calls = 0
    for conversation in sample:
        schemas = _tools_by_name(conversation)
        assert len(schemas) == len(conversation.tools)  # no two offered tools share a name
        content, calls = parse_reply(conversation.reply)
        if conversation.kind in ("single", "parallel", "contrastive"):
            assert content is None and calls and (len(calls) >= 2) == (conversation.kind == "parallel")
        if conversation.kind == "none":
            assert calls == [] and content.strip()
        earlier = [json.loads(c["function"]["arguments"]) and (c["function"]["name"], c["function"]["arguments"])
                   for m in conversation.messages for c in m.get("tool_calls") or []]
        for call in calls:
            earlier.append((call.name, call.arguments))
        for name, text in earlier:
            assert name in schemas, (name, list(schemas))
            arguments = json.loads(text)
            _validate(arguments, schemas[name])
            _required_first(arguments, schemas[name])
            seen_calls += 1
    assert seen_calls > 300


def test_replies_round_trip_through_the_engine_parser(sample):
    for conversation in sample:
        content, calls = parse_reply(conversation.reply)
        if calls:
            rebuilt = "\n".join(
                f'<tool_call>\n{{"name": {json.dumps(c.name, ensure_ascii=False)}, "arguments": {c.arguments}}}\n</tool_call>'
                for c in calls)
            assert rebuilt == conversation.reply
        else:
            assert content == conversation.reply


def test_after_result_conversations_answer_from_the_result_or_call_again(sample):
    followed = [c for c in sample if c.kind == "after_result"]
    texts = [c for c in followed if not parse_reply(c.reply)[1]]
    again = [c for c in followed if parse_reply(c.reply)[1]]
    assert texts and again
    for conversation in followed:
        roles = [m["role"] for m in conversation.messages]
        assert roles[:2] == ["user", "assistant"] and roles[2:] and set(roles[2:]) == {"tool"}
        ids = [c["id"] for c in conversation.messages[1]["tool_calls"]]
        assert ids == [f"call_{i + 1}" for i in range(len(ids))]
        assert [m["tool_call_id"] for m in conversation.messages[2:]] == ids
    for conversation in texts:  # the answer repeats what the results say
        results = [json.loads(m["content"]) for m in conversation.messages[2:]]
        if results == [{"found": False}]:  # nothing found: the reply says so
            assert conversation.reply == _NOT_FOUND[conversation.language]
            continue
        values = [str(v) for r in results for v in r.values()]
        if conversation.language == "zh":  # words are translated; numbers and codes are not
            values = [number for v in values for number in re.findall(r"\d[\d.:-]*", v)]
        if values:
            assert any(v in conversation.reply for v in values), (conversation.reply, results)
    for conversation in again:  # the next call is a different tool from the first
        first = conversation.messages[1]["tool_calls"][0]["function"]["name"]
        assert parse_reply(conversation.reply)[1][0].name != first


@pytest.mark.parametrize("recipe", RECIPES)
def test_optional_parameters_are_sometimes_given_and_sometimes_not(recipe):
    given, left_out = Counter(), Counter()
    for conversation in conversations(1500, seed=3, recipe=recipe):
        schemas = _tools_by_name(conversation)
        for call in parse_reply(conversation.reply)[1]:
            schema = schemas[call.name]
            for name in schema["properties"]:
                if name not in schema.get("required", []):
                    (given if name in json.loads(call.arguments) else left_out)[name] += 1
    both = [name for name in given if left_out[name]]
    assert len(both) >= 5, (given, left_out)


def test_hidden_names_carry_no_information(first_sample):
    sample = first_sample
    hidden = [c for c in sample if c.hidden_names]
    assert all(c.naming == "hidden" for c in hidden)
    assert 0.25 < len(hidden) / len(sample) < 0.55
    real = set(BANK)
    needed_positions = Counter()
    for conversation in hidden:
        names = [t["function"]["name"] for t in conversation.tools]
        assert not real & set(names)
        # Names are given by position in the offered list, whichever tool stands there.
        assert all(re.fullmatch(r"tool_[a-h]|fn_\d|lookup_\d|get_(info|data|item|value|entry|record)", n) for n in names)
        for call in parse_reply(conversation.reply)[1]:
            needed_positions[names.index(call.name)] += 1
    assert len(needed_positions) >= 4  # the needed tool is found anywhere in the list


def test_prompt_and_completion_end_where_the_engine_expects(sample):
    for conversation in sample[:50]:
        prompt, completion = prompt_and_completion(conversation)
        assert prompt.endswith("<|im_start|>assistant\n")
        assert completion.endswith("<|im_end|>") and completion.count("<|im_end|>") == 1


# ---------------------------------------------------------------- held-out data stays held out

@functools.lru_cache(maxsize=2)
def _rendered(count, recipe):
    return [("".join(prompt_and_completion(c)), c) for c in conversations(count, seed=11, recipe=recipe)]


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_suite_question_or_tool_name_leaks(recipe):
    suite = load_suite()
    questions = {case.question.strip().lower() for case in suite.cases if case.question.strip()}
    names = set(suite.tools)
    for text, _ in _rendered(2000, recipe):
        lowered = text.lower()
        leaked = [q for q in questions if q in lowered] + [n for n in names if n in lowered]
        assert not leaked, leaked


def _lesson_and_lab_material() -> tuple[set[str], set[str]]:
    """Every function name and snake_case string in the lessons, labs and their graders, and
    every user message written in them: what the lab measures learners and models with."""
    import ast
    names, questions = set(), set()
    root = Path(__file__).resolve().parents[1]
    for path in [*root.glob("lessons/*.py"), *root.glob("labs/**/*.py")]:
        tree = compile(path.read_text(encoding="utf-8"), str(path), "exec",
                       flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", node.value):
                names.add(node.value)
            elif isinstance(node, ast.Dict):
                fields = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
                role, content = fields.get("role"), fields.get("content")
                if isinstance(role, ast.Constant) and role.value == "user" and isinstance(content, ast.Constant) \
                        and isinstance(content.value, str) and len(content.value.strip()) > 12:
                    questions.add(content.value.strip().lower())
    return names, questions


def test_the_bank_shares_no_tool_name_with_the_lessons_and_labs():
    names, _ = _lesson_and_lab_material()
    assert len(names) > 100  # the walk found the material
    assert not set(BANK) & names, set(BANK) & names


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_lesson_or_lab_question_leaks(recipe):
    _, questions = _lesson_and_lab_material()
    assert len(questions) > 20
    for text, _ in _rendered(2000, recipe):
        lowered = text.lower()
        assert not [q for q in questions if q in lowered]


BFCL_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tool-calling-lab" / "bfcl"


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_bfcl_function_name_is_used(recipe):
    wheels = sorted(BFCL_CACHE.glob("bfcl_eval-*.whl"))
    if not wheels:
        pytest.skip("no bfcl-eval wheel cached; tests/test_bfcl.py downloads it")
    from toolkit.bench.bfcl import import_bfcl_category
    bfcl = set()
    for category in ("simple_python", "multiple"):
        suite = import_bfcl_category(wheels[-1], category)
        bfcl |= {tool.name.lower() for tool in suite.tools.values()}
    ours = {t["function"]["name"].lower() for _, c in _rendered(2000, recipe) for t in c.tools} | set(BANK)
    assert not ours & bfcl, ours & bfcl


@pytest.mark.parametrize("recipe", RECIPES)
def test_held_out_split_names_never_appear_in_training(recipe):
    english = re.compile(r"\b(" + "|".join(re.escape(n[0]) for n in HELD_OUT_SPLIT_NAMES) + r")\b")
    chinese = [n[1] for n in HELD_OUT_SPLIT_NAMES]
    for text, _ in _rendered(2000, recipe):
        assert not english.search(text), english.search(text)
        assert not [n for n in chinese if n in text]


def test_held_out_split_names_are_apart_from_the_training_pools():
    assert len(HELD_OUT_SPLIT_NAMES) >= 24
    training = {n[0] for n in SPLIT_CITIES + SPLIT_PEOPLE}
    held_out = [n[0] for n in HELD_OUT_SPLIT_NAMES]
    assert len(set(held_out)) == len(held_out) and not training & set(held_out)
    assert len(training) == len(SPLIT_CITIES + SPLIT_PEOPLE)


# ---------------------------------------------------------------------------------- the second recipe

def assert_shares(sample, kinds: dict, namings: dict) -> None:
    """Kinds and namings within 4 points of the shares asked for; languages half and half."""
    for attribute, shares in (("kind", kinds), ("naming", namings)):
        counts = Counter(getattr(c, attribute) for c in sample)
        for value, share in shares.items():
            assert abs(counts[value] / len(sample) - share) < 0.04, counts
    assert abs(Counter(c.language for c in sample)["en"] / len(sample) - 0.5) < 0.05

def test_second_recipe_shares_of_kinds_namings_and_languages():
    sample = _second()
    assert len(sample) == 2000
    assert_shares(sample, SECOND_KINDS, {"real": 0.60, "hidden": 0.20, "overlapping": 0.20})
    assert all(c.hidden_names == (c.naming != "real") for c in sample)
    followed = [c for c in sample if c.kind == "after_result"]
    not_found = [c for c in followed if c.messages[-1]["content"] == '{"found": false}']
    again = [c for c in followed if parse_reply(c.reply)[1]]
    assert 0.15 < len(not_found) / len(followed) < 0.35 and 0.1 < len(again) / len(followed) < 0.35


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_second_recipe_uses_split_names_in_single_and_parallel_calls():
    split = {n[2] for n in SPLIT_CITIES + SPLIT_PEOPLE}
    values, kinds = [], Counter()
    for conversation in _second():
        for call in parse_reply(conversation.reply)[1]:
            leaves = _leaves(json.loads(call.arguments))
            values += leaves
            if split & set(leaves):
                kinds[conversation.kind] += 1
    share = sum(v in split for v in values) / len(values)
    assert 0.12 < share < 0.3, share
    assert {"single", "parallel", "contrastive"} <= set(kinds)
    assert {v for v in values if v in split} == split  # every name of the pools is used


def _pairs(sample):
    pairs, i = [], 0
    while i < len(sample):
        if sample[i].kind == "contrastive":
            pairs.append((sample[i], sample[i + 1]))
            i += 2
        else:
            i += 1
    return pairs


def test_contrastive_pairs_swap_descriptions_and_the_call_follows_them():
    pairs = _pairs(_second())
    assert len(pairs) > 100
    bank = [_function(spec.tool) for spec in BANK.values()]
    for a, b in pairs:
        assert b.kind == "contrastive" and a.messages == b.messages and a.language == b.language
        assert a.naming == b.naming and a.naming in ("hidden", "overlapping")
        names = [t["function"]["name"] for t in a.tools]
        assert names == [t["function"]["name"] for t in b.tools]
        changed = [i for i in range(len(names)) if _function(a.tools[i]) != _function(b.tools[i])]
        assert len(changed) == 2
        i, j = changed
        assert _function(a.tools[i]) == _function(b.tools[j]) and _function(a.tools[j]) == _function(b.tools[i])
        (call_a,), (call_b,) = parse_reply(a.reply)[1], parse_reply(b.reply)[1]
        assert {call_a.name, call_b.name} == {names[i], names[j]}
        assert call_a.arguments == call_b.arguments
        # The name called carries the needed tool's description in both conversations.
        needed_a = _function(a.tools[names.index(call_a.name)])
        needed_b = _function(b.tools[names.index(call_b.name)])
        assert needed_a == needed_b and needed_a in bank
        _validate(json.loads(call_a.arguments), needed_a["parameters"])


def test_without_pairs_the_second_recipe_draws_single_calls_in_their_place():
    sample = conversations(2000, seed=3, recipe="second", pairs=False)
    assert len(sample) == 2000 and not [c for c in sample if c.kind == "contrastive"]
    # a pair's draw (half its share, since it makes two) becomes one single call
    draw = SECOND_KINDS["contrastive"] / 2
    expected = (SECOND_KINDS["single"] + draw) / (1 - draw)
    assert abs(Counter(c.kind for c in sample)["single"] / len(sample) - expected) < 0.04
    assert Counter(c.kind for c in conversations(2000, seed=3, recipe="second"))["contrastive"] > 200


def test_overlapping_names_share_a_word_and_hide_the_real_name():
    overlapping = [c for c in _second() if c.naming == "overlapping"]
    assert len(overlapping) > 200
    for conversation in overlapping:
        names = [t["function"]["name"] for t in conversation.tools]
        assert len(set(names)) == len(names) and not set(names) & set(BANK)
        for name in names:
            words = set(name.split("_"))
            assert any(words & set(other.split("_")) for other in names if other != name), names
    hidden = [c for c in _second() if c.naming == "hidden"]
    pattern = r"tool_[a-h]|fn_\d|lookup_\d|get_(info|data|item|value|entry|record)"
    assert all(re.fullmatch(pattern, t["function"]["name"]) for c in hidden for t in c.tools)


def test_the_command_line_prints_second_recipe_conversations(capsys):
    from training.synthetic import main

    main(["--conversations", "--recipe", "second", "--count", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all("naming" in json.loads(line) for line in lines)


@pytest.mark.embedded
def test_split_names_are_split_bare_and_whole_after_a_space():
    """The tokenizer rule the split-name pools were chosen by (loads only the vocabulary)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from toolkit.engine.model import model_path

    vocabulary = llama_cpp.Llama(model_path=model_path(), vocab_only=True, verbose=False)
    for name in [n[2] for n in SPLIT_CITIES + SPLIT_PEOPLE + HELD_OUT_SPLIT_NAMES]:
        bare = vocabulary.tokenize(name.encode(), add_bos=False, special=False)
        spaced = vocabulary.tokenize((" " + name).encode(), add_bos=False, special=False)
        assert len(bare) >= 2 and len(spaced) == 1, (name, bare, spaced)


# ---------------------------------------------------------------------------------- the third recipe

@functools.lru_cache(maxsize=1)
def _scale(count=3000):
    return conversations(count, seed=9, recipe="scale")


def test_scale_recipe_leans_on_names_that_say_nothing_and_on_pairs():
    assert_shares(_scale(), SCALE_KINDS, {"real": 0.40, "hidden": 0.30, "overlapping": 0.30})


def test_scale_recipe_enum_questions_decide_an_enum_value_in_their_own_words():
    enum_kind = [c for c in _scale() if c.kind == "enum"]
    assert len(enum_kind) > 300
    spelled_otherwise = 0
    for conversation in enum_kind:
        (call,) = parse_reply(conversation.reply)[1]
        offered = {t["function"]["name"]: t["function"] for t in conversation.tools}
        arguments = json.loads(call.arguments)
        properties = offered[call.name]["parameters"]["properties"]
        enums = {name: schema["enum"] for name, schema in properties.items() if "enum" in schema}
        # Every enum parameter of the tool is given (the optional ones are always asked for here),
        # with a value the enum allows.
        assert enums and set(enums) <= set(arguments), (conversation.messages[0], arguments)
        assert all(arguments[name] in values for name, values in enums.items())
        question = conversation.messages[0]["content"]
        spelled_otherwise += any(f'{arguments[name]}' not in question for name in enums)
    # Most questions word the value unlike the enum spells it ("in Fahrenheit" for "F").
    assert spelled_otherwise / len(enum_kind) > 0.6
    assert len({c.messages[0]["content"] for c in enum_kind}) > 200  # varied, not a handful repeated


def test_every_tool_with_an_enum_is_asked_in_the_scale_recipe():
    asked = set()
    for conversation in _scale():
        if conversation.kind == "enum" and conversation.naming == "real":
            asked |= {call.name for call in parse_reply(conversation.reply)[1]}
    assert asked == set(WITH_ENUM)


# Computed from the second recipe's code before the third recipe existed.
SECOND_DIGEST = "3e801f264825c65ff4bf2bd0622ab1d6572d7b9a827c4f6e18a6f62a63653a4e"


def test_the_second_recipe_is_unchanged_by_the_third():
    """The third recipe shares the second's machinery; the second's output must not move."""
    digest = hashlib.sha256("".join(json.dumps(c.__dict__, ensure_ascii=False)
                                    for c in conversations(300, seed=3, recipe="second")).encode()).hexdigest()
    assert digest == SECOND_DIGEST


def test_an_unknown_recipe_is_refused_with_the_names_it_could_be():
    with pytest.raises(ValueError, match="'first', 'second' or 'scale'"):
        conversations(3, recipe="third")
