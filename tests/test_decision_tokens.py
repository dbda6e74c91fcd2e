"""How training reads a tool choice: greedy within the grammar of the offered names, as the engine
decodes, so a likeliest token the grammar would never allow does not count as a wrong choice."""

from training.decision_tokens import choice_points, grammar_greedy_right, name_span, name_token_choices

COMPLETION = '<tool_call>\n{"name": "ship_gift", "arguments": {"item": "rice"}}\n</tool_call>'


def characters(text: str) -> list[int]:
    """A tokenizer with one token per character: token ids are the characters' code points."""
    return [ord(each) for each in text]


def scores(*rows: dict[int, float], size: int = 256) -> list[list[float]]:
    """Score rows over a small vocabulary: every token 0 except the ones given."""
    return [[row.get(token, 0.0) for token in range(size)] for row in rows]


def test_the_name_span_covers_the_tool_name_and_text_has_none():
    first, last = name_span(lambda text: len(characters(text)), COMPLETION)
    assert COMPLETION[first:last] == "ship_gift"
    assert name_span(len, "The weather is fine.") is None


def test_each_offered_name_is_tokenized_in_place_of_the_replys_name():
    assert name_token_choices(characters, COMPLETION, ["ship_gift", "shop"]) == [characters("ship_gift"),
                                                                                 characters("shop")]


def test_a_likeliest_token_outside_the_grammar_does_not_count_against_the_choice():
    wanted = [1, 2]
    choices = [[1, 2], [3, 4]]
    # token 9 scores highest, but no offered name starts with it; of those allowed, 1 wins
    assert grammar_greedy_right(scores({9: 5.0, 1: 2.0, 3: 1.0}, {2: 1.0}), wanted, choices)


def test_another_allowed_name_scoring_higher_is_a_wrong_choice():
    assert not grammar_greedy_right(scores({1: 1.0, 3: 2.0}, {2: 1.0}), [1, 2], [[1, 2], [3, 4]])


def test_names_sharing_a_first_token_are_told_apart_at_the_token_where_they_part():
    choices = [[5, 1], [5, 2]]
    assert grammar_greedy_right(scores({}, {1: 3.0, 2: 1.0}), [5, 1], choices)  # token 5 is forced
    assert not grammar_greedy_right(scores({}, {1: 1.0, 2: 3.0}), [5, 1], choices)


def test_choice_points_are_where_names_part_with_the_tokens_allowed_there():
    # [5, 1, 7] and [5, 2, 7] part at the second token; [4] parts from both at the first
    assert choice_points([5, 1, 7], [[5, 1, 7], [5, 2, 7], [4]]) == [(0, [4, 5]), (1, [1, 2])]
    assert choice_points([5, 1], [[5, 1]]) == []  # one name offered: the grammar writes it all
