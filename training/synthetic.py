"""Synthetic tool-calling questions, invented here and nowhere else.

The lab measures itself on its scenario suite and on BFCL. Anything the engine or a model is
fitted to must come from somewhere else, or those measurements stop meaning anything. This
module is that somewhere else: its own bank of invented tools and question templates, in
English and Chinese. A test checks that no suite question or tool name appears in its output.

Each ``Example`` is one user question, the tools offered with it, and the calls a good model
would make (none for a question that needs no tool, several for a parallel one).

    python -m training.synthetic --count 5      # print a few examples
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required}}}


def _text(description: str) -> dict:
    return {"type": "string", "description": description}


# The bank. Names and descriptions are invented for this file; none is a suite tool.
TOOLS = {
    "lookup_flight": _tool("lookup_flight", "Status of a flight (on time, delayed, landed) by its flight number",
                           {"flight": _text("Flight number, e.g. LH400")}, ["flight"]),
    "get_forecast": _tool("get_forecast", "Tomorrow's weather forecast for a town",
                          {"town": _text("Town name"),
                           "scale": {"type": "string", "enum": ["C", "F"], "description": "Temperature scale"}}, ["town"]),
    "convert_length": _tool("convert_length", "Convert a length between metres, feet and inches",
                            {"value": {"type": "number", "description": "The length to convert"},
                             "from_unit": {"type": "string", "enum": ["m", "ft", "in"]},
                             "to_unit": {"type": "string", "enum": ["m", "ft", "in"]}},
                            ["value", "from_unit", "to_unit"]),
    "find_recipe": _tool("find_recipe", "Find a cooking recipe that uses an ingredient",
                         {"ingredient": _text("Main ingredient, e.g. tofu"),
                          "max_minutes": {"type": "integer", "description": "Longest cooking time allowed"}}, ["ingredient"]),
    "track_parcel": _tool("track_parcel", "Where a parcel is now, by its tracking code",
                          {"code": _text("Tracking code, e.g. ZX123")}, ["code"]),
    "reserve_table": _tool("reserve_table", "Reserve a table at a restaurant",
                           {"restaurant": _text("Restaurant name"), "people": {"type": "integer"},
                            "time": _text("Time of day, HH:MM")}, ["restaurant", "people", "time"]),
    "count_words": _tool("count_words", "Count the words in a piece of text",
                         {"text": _text("The text to count")}, ["text"]),
    "time_in_zone": _tool("time_in_zone", "The current local time in a city",
                          {"city": _text("City name")}, ["city"]),
    "search_library": _tool("search_library", "Search the library catalogue for books by an author",
                            {"author": _text("Author's name")}, ["author"]),
    "play_song": _tool("play_song", "Play a song on the speaker",
                       {"title": _text("Song title"), "volume": {"type": "integer", "description": "0 to 10"}}, ["title"]),
}

# (tool, English templates, Chinese templates, slot values). Each slot value is
# (English text, Chinese text, argument value).
_TOWNS = [("Lyon", "里昂", "Lyon"), ("Kyoto", "京都", "Kyoto"), ("Cairo", "开罗", "Cairo"), ("Perth", "珀斯", "Perth"),
          ("Quito", "基多", "Quito"), ("Nairobi", "内罗毕", "Nairobi"), ("Lima", "利马", "Lima"), ("Oslo", "奥斯陆", "Oslo")]
_FLIGHTS = [(f, f, f) for f in ("LH400", "AF22", "UA90", "QF1", "KL605", "EK7", "CA981")]
_CODES = [(c, c, c) for c in ("ZX123", "PK9981", "TR400A", "MM77", "QQ5150")]
_INGREDIENTS = [("tofu", "豆腐", "tofu"), ("mushrooms", "蘑菇", "mushrooms"), ("lentils", "扁豆", "lentils"),
                ("spinach", "菠菜", "spinach"), ("salmon", "三文鱼", "salmon")]
_AUTHORS = [("Jane Austen", "简·奥斯汀", "Jane Austen"), ("Lu Xun", "鲁迅", "Lu Xun"),
            ("Ursula K. Le Guin", "勒古恩", "Ursula K. Le Guin"), ("Mo Yan", "莫言", "Mo Yan")]
_SONGS = [("Yellow Submarine", "黄色潜水艇", "Yellow Submarine"), ("Moon River", "月亮河", "Moon River"),
          ("Clair de Lune", "月光", "Clair de Lune")]

_SINGLE = {
    "get_forecast": (["Will it rain in {0} tomorrow?", "What will the weather be like in {0} tomorrow?"],
                     ["{0}明天会下雨吗？", "{0}明天天气怎么样？"], _TOWNS, "town"),
    "lookup_flight": (["Is flight {0} on time?", "Has flight {0} landed yet?"],
                      ["{0}航班准点吗？", "{0}航班落地了吗？"], _FLIGHTS, "flight"),
    "track_parcel": (["Where is my parcel {0}?", "Track parcel {0} for me."],
                     ["我的包裹{0}到哪了？", "帮我查一下包裹{0}。"], _CODES, "code"),
    "find_recipe": (["Give me a recipe with {0}.", "What can I cook with {0}?"],
                    ["给我一个用{0}做的菜谱。", "用{0}能做什么菜？"], _INGREDIENTS, "ingredient"),
    "time_in_zone": (["What time is it in {0} right now?", "Tell me the local time in {0}."],
                     ["{0}现在几点？", "告诉我{0}的当地时间。"], _TOWNS, "city"),
    "search_library": (["Does the library have books by {0}?", "Find books written by {0}."],
                       ["图书馆有{0}的书吗？", "找一下{0}写的书。"], _AUTHORS, "author"),
    "play_song": (["Play {0}.", "Put on the song {0}, please."],
                  ["播放{0}。", "请放一首{0}。"], _SONGS, "title"),
}
_JOINERS = {"en": (" and ", ", "), "zh": ("和", "、")}
_PARALLEL = {
    "get_forecast": ("What's tomorrow's forecast for {0}?", "{0}明天的天气预报是什么？"),
    "lookup_flight": ("Are flights {0} on time?", "{0}这几个航班准点吗？"),
    "track_parcel": ("Where are my parcels {0}?", "我的包裹{0}都到哪了？"),
    "time_in_zone": ("What time is it in {0}?", "{0}现在几点？"),
}
_NO_TOOL = {
    "en": ["Tell me a joke about penguins.", "Who painted the Mona Lisa?", "Write a short poem about rain.",
           "What is the capital of Canada?", "Hello! How are you today?", "Explain what a prime number is.",
           "Give me three tips for sleeping better.", "Why is the sky blue?", "Thank you, that was helpful.",
           "Summarise the plot of Romeo and Juliet in one sentence."],
    "zh": ["给我讲个关于企鹅的笑话。", "《蒙娜丽莎》是谁画的？", "写一首关于雨的短诗。", "加拿大的首都是哪里？",
           "你好！今天怎么样？", "解释一下什么是质数。", "给我三个改善睡眠的建议。", "天空为什么是蓝色的？"],
}


@dataclass
class Example:
    question: str
    tools: list[dict]
    calls: list[dict] = field(default_factory=list)  # [{"name": ..., "arguments": {...}}]
    language: str = "en"

    @property
    def kind(self) -> str:
        return "none" if not self.calls else ("single" if len(self.calls) == 1 else "parallel")


def _offer(rng: random.Random, needed: list[str], extra: int) -> list[dict]:
    """The needed tools plus ``extra`` others from the bank, shuffled."""
    others = [name for name in TOOLS if name not in needed]
    names = needed + rng.sample(others, min(extra, len(others)))
    rng.shuffle(names)
    return [TOOLS[name] for name in names]


def single(rng: random.Random, language: str, extra: int = 2) -> Example:
    tool = rng.choice(sorted(_SINGLE))
    english, chinese, slots, parameter = _SINGLE[tool]
    slot = rng.choice(slots)
    template = rng.choice(english if language == "en" else chinese)
    question = template.format(slot[0] if language == "en" else slot[1])
    return Example(question, _offer(rng, [tool], extra), [{"name": tool, "arguments": {parameter: slot[2]}}], language)


def parallel(rng: random.Random, language: str, extra: int = 2) -> Example:
    tool = rng.choice(sorted(_PARALLEL))
    _, _, slots, parameter = _SINGLE[tool]
    chosen = rng.sample(slots, rng.choice([2, 2, 3]))
    words = [s[0] if language == "en" else s[1] for s in chosen]
    last, comma = _JOINERS[language]
    listed = comma.join(words[:-1]) + last + words[-1]
    question = _PARALLEL[tool][0 if language == "en" else 1].format(listed)
    calls = [{"name": tool, "arguments": {parameter: s[2]}} for s in chosen]
    return Example(question, _offer(rng, [tool], extra), calls, language)


def no_tool(rng: random.Random, language: str, extra: int = 2) -> Example:
    return Example(rng.choice(_NO_TOOL[language]), _offer(rng, [], extra + 1), [], language)


def examples(count: int, seed: int = 0, mix: tuple[float, float, float] = (0.5, 0.2, 0.3)) -> list[Example]:
    """``count`` examples: shares of single-call, parallel and no-tool questions given by ``mix``."""
    rng = random.Random(seed)
    makers = rng.choices([single, parallel, no_tool], weights=mix, k=count)
    return [make(rng, rng.choice(["en", "zh"]), extra=rng.randint(0, 3)) for make in makers]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print synthetic tool-calling examples as JSON lines.")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for example in examples(args.count, args.seed):
        print(json.dumps({"question": example.question, "kind": example.kind, "calls": example.calls,
                          "tools": [t["function"]["name"] for t in example.tools]}, ensure_ascii=False))


if __name__ == "__main__":
    main()
