"""The recorded corpus of real string-protocol replies from the embedded model.

``scripts/protocol_corpus.py generate`` made it; these tests keep it and the parsers honest:
every reply is accounted for, and a repair never loses a call that plain parsing found.
"""


import pytest

from scripts.protocol_corpus import CORPUS, load, shares
from toolkit.protocol import FAILURE_REASONS, extract_calls


@pytest.fixture(scope="module")
def records():
    if not CORPUS.exists():
        pytest.fail(f"{CORPUS} is missing: run 'python scripts/protocol_corpus.py generate'")
    return load(CORPUS)


def test_the_corpus_holds_at_least_200_real_replies(records):
    assert len(records) >= 200
    assert {r["model"] for r in records} == {"SmolLM2-135M-Instruct"}
    assert {r["language"] for r in records} == {"en", "zh"}


def test_every_reply_is_either_calls_or_a_failure_with_a_known_reason(records):
    for record in records:
        result = extract_calls(record["text"], repair="both")
        assert result.calls or result.failures
        assert all(f.reason in FAILURE_REASONS and f.detail for f in result.failures)


def test_repair_only_ever_adds_to_what_plain_parsing_recovers(records):
    figures = shares(records)
    assert figures["attempted"] > 0
    assert figures["regex"] <= figures["hand"] <= figures["attempted"]
    assert figures["regex"] <= figures["library"] <= figures["attempted"]
    for record in records:
        plain = extract_calls(record["text"], repair="none").calls
        repaired = extract_calls(record["text"], repair="hand").calls
        assert [c.arguments for c in plain] == [c.arguments for c in repaired if c.repaired_by is None]
