"""Which tool the model picks, read the way the engine reads it: greedy, within the grammar.

The engine never lets the model write a tool name it was not offered: at each token of the name
the grammar allows only the tokens that continue some offered name, and the likeliest of those
is taken. So "did the model pick the right tool?" is not "is its likeliest token the name's
next token?" (SmolLM2's likeliest first token of a name is often a fragment such as "kil" or
"2"); it is "among the tokens the grammar allows here, is the right one the likeliest?", at
every token of the name. This module answers that from one teacher-forced pass, without torch,
so that training and the tests share one rule.
"""

from __future__ import annotations

from typing import Callable, Sequence

NAME_MARKER = '"name": "'


def name_span(count: Callable[[str], int], completion: str) -> tuple[int, int] | None:
    """The reply tokens that spell the first call's tool name, as (first, last); None for text.

    ``count(text)`` is the number of tokens ``text`` has, so that the name's tokens are where
    the tokenizer puts them in the reply (the call's opening before them is the engine's to
    write, not the model's to choose).
    """
    start = completion.find(NAME_MARKER)
    if start < 0:
        return None
    end = completion.index('"', start + len(NAME_MARKER))
    return count(completion[:start + len(NAME_MARKER)]), count(completion[:end])


def name_token_choices(tokenize: Callable[[str], list[int]], completion: str, names: Sequence[str]) -> list[list[int]]:
    """Each offered name's tokens, as the tokenizer writes them in place of the reply's name."""
    start = completion.find(NAME_MARKER) + len(NAME_MARKER)
    prefix = tokenize(completion[:start])
    return [tokenize(completion[:start] + name)[len(prefix):] for name in names]


def choice_points(wanted: Sequence[int], choices: Sequence[Sequence[int]]) -> list[tuple[int, list[int]]]:
    """Where the model, not the grammar, chooses: each position of ``wanted`` at which more than
    one token continues an offered name still possible, with those tokens (sorted).

    ``choices`` are the token sequences of every offered name. A position with one way on is
    the grammar's to write, so it is left out.
    """
    points = []
    for position in range(len(wanted)):
        allowed = {choice[position] for choice in choices
                   if len(choice) > position and list(choice[:position]) == list(wanted[:position])}
        if len(allowed) > 1:
            points.append((position, sorted(allowed)))
    return points


def grammar_greedy_right(scores: Sequence[Sequence[float]], wanted: Sequence[int],
                         choices: Sequence[Sequence[int]]) -> bool:
    """Would greedy decoding within the grammar write ``wanted``?

    ``scores[i]`` are the model's next-token scores at the name's i-th token, given the wanted
    tokens before it (one teacher-forced pass); ``choices`` are the token sequences of every
    offered name. At each choice point the wanted token must score highest among those allowed.
    """
    return right_at(scores, wanted, choice_points(wanted, choices))


def right_at(scores: Sequence[Sequence[float]], wanted: Sequence[int],
             points: Sequence[tuple[int, Sequence[int]]]) -> bool:
    """``grammar_greedy_right`` given the choice points already found (``choice_points``)."""
    return all(max(allowed, key=lambda each: scores[position][each]) == wanted[position]
               for position, allowed in points)
