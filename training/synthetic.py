"""Synthetic tool-calling questions, invented here and nowhere else.

The lab measures itself on its scenario suite and on BFCL. Anything the engine or a model is
fitted to must come from somewhere else, or those measurements stop meaning anything. This
module is that somewhere else: its own bank of invented tools and question templates, in
English and Chinese. A test checks that no suite question or tool name appears in its output.

Each ``Example`` is one user question, the tools offered with it, and the calls a good model
would make (none for a question that needs no tool, several for a parallel one).

    python -m training.synthetic --count 5      # print a few examples
    python -m training.synthetic --conversations --recipe second --count 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
from dataclasses import dataclass, field

from toolkit.engine.template import render_call, render_prompt


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


# ---------------------------------------------------------------------------------------------
# Conversations for fine-tuning
#
# ``examples()`` above is a small sample for calibrating the engine. What follows is the larger
# generator a LoRA fine-tune learns from: a bank of ~40 invented tools, questions in English and
# Chinese, and for each one the assistant's next turn written exactly as the engine's template
# writes it. What the model must learn decides the shape of the data:
#
# - copy values from the question into the arguments, typed as the schema says (so slot values
#   come from generous lists, and numbers stay numbers);
# - let the question's wording choose an enum value, and leave out optional parameters the
#   question does not mention;
# - choose a tool by its description, not its name (so many examples hide the names);
# - answer in plain text when no offered tool fits, even when a tool is close to the topic;
# - after a tool result, answer from it, or make the next call it makes possible.
# ---------------------------------------------------------------------------------------------



def _s(description: str) -> dict:
    return {"type": "string", "description": description}


def _i(description: str) -> dict:
    return {"type": "integer", "description": description}


def _n(description: str) -> dict:
    return {"type": "number", "description": description}


def _e(values: list[str], description: str) -> dict:
    return {"type": "string", "enum": values, "description": description}


def _strings(description: str) -> dict:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _object(description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "object", "description": description, "properties": properties, "required": required}


def _same(*values) -> list[tuple]:
    """Slot values written the same way in both languages: codes, numbers, e-mail addresses."""
    return [(str(v), str(v), v) for v in values]


class _Many:
    """A slot filled with 2 to 3 distinct values from a pool: an array argument."""

    def __init__(self, pool: list[tuple], low: int = 2, high: int = 3):
        self.pool, self.low, self.high = pool, low, high


@dataclass
class _Spec:
    """One tool of the bank, and everything needed to ask for it and answer from it.

    Templates name required parameters as ``{path}`` (``{address.city}`` for a nested one) and
    mark with ``{opt}`` where the phrases of mentioned optional parameters go. ``optional`` maps
    a parameter to (English phrase, Chinese phrase, values); the phrase holds ``{}`` for the
    value's text. ``many`` makes parallel questions: (parameter, English, Chinese template).
    ``result`` invents what the tool returns; ``answer`` turns it into a reply, per language.
    ``near`` holds questions close to the tool's topic that it cannot answer, with replies.
    """
    tool: dict
    en: list[str]
    zh: list[str]
    slots: dict
    optional: dict = field(default_factory=dict)
    many: tuple | None = None
    result: object = None
    answer: tuple | None = None
    near: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.tool["function"]["name"]


# Generous slot pools, so that the model learns to copy rather than to remember.
_CITIES = [("Lyon", "里昂", "Lyon"), ("Kyoto", "京都", "Kyoto"), ("Cairo", "开罗", "Cairo"),
           ("Perth", "珀斯", "Perth"), ("Quito", "基多", "Quito"), ("Nairobi", "内罗毕", "Nairobi"),
           ("Lima", "利马", "Lima"), ("Oslo", "奥斯陆", "Oslo"), ("Porto", "波尔图", "Porto"),
           ("Hanoi", "河内", "Hanoi"), ("Tbilisi", "第比利斯", "Tbilisi"), ("Valencia", "瓦伦西亚", "Valencia"),
           ("Zurich", "苏黎世", "Zurich"), ("Busan", "釜山", "Busan"), ("Reykjavik", "雷克雅未克", "Reykjavik"),
           ("Marrakesh", "马拉喀什", "Marrakesh"), ("Kunming", "昆明", "Kunming"), ("Xiamen", "厦门", "Xiamen"),
           ("Harbin", "哈尔滨", "Harbin"), ("Lhasa", "拉萨", "Lhasa"), ("Dalian", "大连", "Dalian"),
           ("Montreal", "蒙特利尔", "Montreal"), ("Krakow", "克拉科夫", "Krakow"), ("Seville", "塞维利亚", "Seville")]
_PEOPLE = [("Nadia", "娜迪亚", "Nadia"), ("Tomas", "托马斯", "Tomas"), ("Chen Jing", "陈静", "Chen Jing"),
           ("Liu Yang", "刘洋", "Liu Yang"), ("Amara", "阿玛拉", "Amara"), ("Yuki", "由纪", "Yuki"),
           ("Sun Hao", "孙浩", "Sun Hao"), ("Ingrid", "英格丽", "Ingrid"), ("Zhou Min", "周敏", "Zhou Min"),
           ("Rafael", "拉斐尔", "Rafael"), ("Gao Lin", "高琳", "Gao Lin"), ("Priya", "普丽娅", "Priya")]
# Place and person names that SmolLM2's tokenizer splits when they stand alone (as after a JSON
# quote: "Beijing" is "Be" + "ijing") but holds as one token after a space (" Beijing", as in the
# question). A model that copies the spaced token into the argument writes "B Beijing"; these
# pools give the second recipe values that teach the split spelling. Chosen with the tokenizer of
# the lab's GGUF (vocab_only): a bare form of two or more tokens, a spaced form of exactly one.
# None of them is in the pools above; tests/test_synthetic.py checks the rule with the tokenizer.
SPLIT_CITIES = [("Beijing", "北京", "Beijing"), ("Shanghai", "上海", "Shanghai"), ("Moscow", "莫斯科", "Moscow"),
                ("Tokyo", "东京", "Tokyo"), ("Toronto", "多伦多", "Toronto"), ("Sydney", "悉尼", "Sydney"),
                ("Melbourne", "墨尔本", "Melbourne"), ("Dublin", "都柏林", "Dublin"), ("Budapest", "布达佩斯", "Budapest"),
                ("Warsaw", "华沙", "Warsaw"), ("Athens", "雅典", "Athens"), ("Istanbul", "伊斯坦布尔", "Istanbul"),
                ("Milan", "米兰", "Milan"), ("Naples", "那不勒斯", "Naples"), ("Venice", "威尼斯", "Venice"),
                ("Florence", "佛罗伦萨", "Florence"), ("Barcelona", "巴塞罗那", "Barcelona"),
                ("Amsterdam", "阿姆斯特丹", "Amsterdam"), ("Brussels", "布鲁塞尔", "Brussels"), ("Geneva", "日内瓦", "Geneva"),
                ("Munich", "慕尼黑", "Munich"), ("Hamburg", "汉堡", "Hamburg"), ("Frankfurt", "法兰克福", "Frankfurt"),
                ("Copenhagen", "哥本哈根", "Copenhagen"), ("Stockholm", "斯德哥尔摩", "Stockholm"), ("Dallas", "达拉斯", "Dallas"),
                ("Atlanta", "亚特兰大", "Atlanta"), ("Miami", "迈阿密", "Miami"), ("Vancouver", "温哥华", "Vancouver"),
                ("Mumbai", "孟买", "Mumbai"), ("Delhi", "德里", "Delhi"), ("Singapore", "新加坡", "Singapore"),
                ("Seoul", "首尔", "Seoul"), ("Wuhan", "武汉", "Wuhan"), ("Edinburgh", "爱丁堡", "Edinburgh"),
                ("Manchester", "曼彻斯特", "Manchester"), ("Auckland", "奥克兰", "Auckland")]
SPLIT_PEOPLE = [("Emma", "艾玛", "Emma"), ("Olivia", "奥利维亚", "Olivia"), ("Jessica", "杰西卡", "Jessica"),
                ("Christopher", "克里斯托弗", "Christopher"), ("Anthony", "安东尼", "Anthony"), ("Kevin", "凯文", "Kevin"),
                ("Brian", "布莱恩", "Brian"), ("Steven", "史蒂文", "Steven"), ("Laura", "劳拉", "Laura"),
                ("Rebecca", "丽贝卡", "Rebecca"), ("Sophie", "苏菲", "Sophie"), ("Charlotte", "夏洛特", "Charlotte"),
                ("Lucas", "卢卡斯", "Lucas"), ("Julia", "茱莉亚", "Julia"), ("Catherine", "凯瑟琳", "Catherine"),
                ("Patricia", "帕特里夏", "Patricia"), ("Linda", "琳达", "Linda"), ("Susan", "苏珊", "Susan"),
                ("Karen", "凯伦", "Karen"), ("Helen", "海伦", "Helen"), ("Amanda", "阿曼达", "Amanda"),
                ("Melissa", "梅丽莎", "Melissa"), ("Stephanie", "斯蒂芬妮", "Stephanie"), ("Nicole", "妮可", "Nicole"),
                ("Jonathan", "乔纳森", "Jonathan"), ("Benjamin", "本杰明", "Benjamin"), ("Jason", "杰森", "Jason"),
                ("Ryan", "瑞安", "Ryan"), ("Ethan", "伊森", "Ethan"), ("Aaron", "亚伦", "Aaron"), ("Oscar", "奥斯卡", "Oscar"),
                ("Hugo", "雨果", "Hugo"), ("Felix", "费利克斯", "Felix")]
# Names of the same kind (split bare, one token spaced) that no training conversation of any
# recipe contains: for measuring whether a model copies such names exactly, on names it never saw.
HELD_OUT_SPLIT_NAMES = [("Havana", "哈瓦那", "Havana"), ("Madrid", "马德里", "Madrid"), ("Vienna", "维也纳", "Vienna"),
                        ("Prague", "布拉格", "Prague"), ("Lisbon", "里斯本", "Lisbon"), ("Seattle", "西雅图", "Seattle"),
                        ("Denver", "丹佛", "Denver"), ("Houston", "休斯顿", "Houston"), ("Manila", "马尼拉", "Manila"),
                        ("Tehran", "德黑兰", "Tehran"), ("Glasgow", "格拉斯哥", "Glasgow"), ("Brisbane", "布里斯班", "Brisbane"),
                        ("Dubai", "迪拜", "Dubai"), ("Helsinki", "赫尔辛基", "Helsinki"),
                        ("Jennifer", "詹妮弗", "Jennifer"), ("Rachel", "瑞秋", "Rachel"), ("Hannah", "汉娜", "Hannah"),
                        ("Oliver", "奥利弗", "Oliver"), ("Patrick", "帕特里克", "Patrick"), ("Margaret", "玛格丽特", "Margaret"),
                        ("Nathan", "内森", "Nathan"), ("Samantha", "萨曼莎", "Samantha"), ("Gregory", "格雷戈里", "Gregory"),
                        ("Sandra", "桑德拉", "Sandra"), ("Timothy", "蒂莫西", "Timothy"), ("Michelle", "米歇尔", "Michelle")]
_DATES = _same("2026-01-09", "2026-02-14", "2026-03-03", "2026-04-21", "2026-05-30", "2026-07-12",
               "2026-08-08", "2026-09-17", "2026-10-26", "2026-11-05", "2026-12-19")
_TIMES = _same("06:45", "07:30", "08:15", "09:00", "12:30", "13:45", "16:20", "18:00", "19:30", "21:10")
_INGREDIENTS = [("tofu", "豆腐", "tofu"), ("mushrooms", "蘑菇", "mushrooms"), ("lentils", "扁豆", "lentils"),
                ("spinach", "菠菜", "spinach"), ("salmon", "三文鱼", "salmon"), ("eggplant", "茄子", "eggplant"),
                ("chickpeas", "鹰嘴豆", "chickpeas"), ("pumpkin", "南瓜", "pumpkin"), ("shrimp", "虾仁", "shrimp"),
                ("potatoes", "土豆", "potatoes"), ("duck", "鸭肉", "duck"), ("cabbage", "白菜", "cabbage")]
_DISHES = [("lasagne", "千层面", "lasagne"), ("dumplings", "饺子", "dumplings"), ("curry", "咖喱", "curry"),
           ("pancakes", "煎饼", "pancakes"), ("mapo tofu", "麻婆豆腐", "mapo tofu"), ("paella", "西班牙海鲜饭", "paella")]
_ROOMS = [("living room", "客厅", "living_room"), ("bedroom", "卧室", "bedroom"), ("kitchen", "厨房", "kitchen"),
          ("study", "书房", "study"), ("bathroom", "浴室", "bathroom")]
_CURRENCIES = _same("EUR", "GBP", "JPY", "CHF", "AUD", "CAD", "SGD", "NZD", "SEK", "KRW", "INR", "THB")
_SONGS = [("Moon River", "月亮河", "Moon River"), ("Clair de Lune", "月光", "Clair de Lune"),
          ("Blue in Green", "Blue in Green", "Blue in Green"), ("Jasmine Flower", "茉莉花", "Jasmine Flower"),
          ("Take Five", "Take Five", "Take Five"), ("Autumn Rain", "秋雨", "Autumn Rain"),
          ("River Flows in You", "River Flows in You", "River Flows in You"), ("The Swan", "天鹅", "The Swan")]
_ARTISTS = [("Nina Simone", "妮娜·西蒙", "Nina Simone"), ("Teresa Teng", "邓丽君", "Teresa Teng"),
            ("Miles Davis", "迈尔斯·戴维斯", "Miles Davis"), ("Faye Wong", "王菲", "Faye Wong"),
            ("Ennio Morricone", "莫里康内", "Ennio Morricone"), ("Jay Chou", "周杰伦", "Jay Chou")]
_TEAMS = [("Rivertown Rovers", "河镇流浪者", "Rivertown Rovers"), ("Harbour City", "海港城", "Harbour City"),
          ("Northfield United", "北田联", "Northfield United"), ("Lakeside Hawks", "湖畔雄鹰", "Lakeside Hawks"),
          ("Granite Bears", "花岗岩熊", "Granite Bears"), ("Jade Dragons", "玉龙", "Jade Dragons")]
_LEAGUES = [("Coastal League", "海岸联赛", "Coastal League"), ("Mountain Cup", "山地杯", "Mountain Cup"),
            ("Metro Division", "都市分区", "Metro Division")]
_WORDS = [("good night", "good night", "good night"), ("where is the station", "where is the station",
          "where is the station"), ("happy birthday", "happy birthday", "happy birthday"),
          ("I am allergic to nuts", "I am allergic to nuts", "I am allergic to nuts"),
          ("two coffees please", "two coffees please", "two coffees please")]
_SHORT_TEXTS = _same("the quick brown fox jumps over the lazy dog", "rain again on a quiet street",
                     "keep calm and carry on", "meet me at the old bridge at noon", "all roads lead home")
_KEYWORDS = [("budget", "预算", "budget"), ("garden", "花园", "garden"), ("birthday", "生日", "birthday"),
             ("passwords", "密码", "passwords"), ("holiday", "假期", "holiday"), ("books", "读书", "books")]
_ITEMS = [("running shoes", "跑鞋", "running shoes"), ("desk lamp", "台灯", "desk lamp"),
          ("rice cooker", "电饭煲", "rice cooker"), ("yoga mat", "瑜伽垫", "yoga mat"),
          ("umbrella", "雨伞", "umbrella"), ("tea set", "茶具", "tea set"), ("backpack", "双肩包", "backpack")]
_STREETS = [("12 Elm Road", "榆树路12号", "12 Elm Road"), ("8 Harbour Lane", "海港巷8号", "8 Harbour Lane"),
            ("45 Maple Street", "枫树街45号", "45 Maple Street"), ("3 Orchard Way", "果园路3号", "3 Orchard Way")]
_PHONES = _same("+44 7700 900123", "+86 139 0000 4321", "+33 6 12 34 56 78", "+61 412 555 019")
_FLIGHTS = _same("LH400", "AF22", "UA90", "QF1", "KL605", "EK7", "CA981", "MU587", "SQ32", "TK1824")
_PARCELS = _same("ZX123", "PK9981", "TR400A", "MM77", "QQ5150", "JD20871", "SF88412")
_FOLDERS = _same("/home/ana/docs", "/srv/photos", "~/projects", "/data/exports")
_PATTERNS = _same("*.pdf", "*.csv", "invoice_*", "*.jpg", "notes_*.txt")
_SKIES = [("sunny", "晴"), ("light rain", "小雨"), ("cloudy", "多云"), ("snow showers", "阵雪"), ("windy", "大风")]
_STATES = [("on time", "准点"), ("delayed by 40 minutes", "延误40分钟"), ("boarding", "正在登机"), ("landed", "已落地")]


_ORIGINS, _DESTINATIONS = _CITIES[:12], _CITIES[12:]  # disjoint, so that no train goes to where it starts


def _num(*values) -> list[tuple]:
    return _same(*values)


def _result_sky(rng, args):
    sky = rng.choice(_SKIES)
    temp = rng.randint(-5, 33)
    if args.get("scale") == "F":
        temp = round(temp * 9 / 5 + 32)
    return {"temperature": temp, "unit": args.get("scale", "C"), "sky": sky}


def _rate(rng, args):
    return {"rate": round(rng.uniform(0.5, 9.5), 4)}


SPECS: list[_Spec] = [
    # Travel
    _Spec(_tool("fetch_forecast", "Weather forecast for a town, for today or a few days ahead",
                {"town": _s("Town name"), "days_ahead": _i("0 for today, 1 for tomorrow, up to 7"),
                 "scale": _e(["C", "F"], "Temperature scale, C unless asked otherwise")}, ["town"]),
          ["Will it rain in {town}{opt}?", "What's the forecast for {town}{opt}?",
           "Do I need a coat in {town}{opt}?"],
          ["{town}{opt}会下雨吗？", "{town}的天气预报{opt}怎么样？", "去{town}要带外套吗{opt}？"],
          {"town": _CITIES},
          {"days_ahead": (" in {} days", "，{}天后", _num(1, 2, 3, 4, 5)),
           "scale": ("{}", "{}", [(" (in Fahrenheit)", "，用华氏度", "F"), (" (in Celsius)", "，用摄氏度", "C")])},
          many=("town", "What's the forecast for {town}?", "{town}的天气预报怎么样？"),
          result=_result_sky,
          answer=("In {town}: {temperature} °{unit} and {sky}.", "{town}：{temperature}°{unit}，{sky}。"),
          near={"en": [("Why do clouds form?", "Clouds form when moist air rises, cools and its water vapour condenses into tiny droplets."),
                       ("What is the difference between weather and climate?", "Weather is what the sky does on a given day; climate is the average over many years.")],
                "zh": [("云是怎么形成的？", "湿润的空气上升冷却后，水汽凝结成小水滴，就形成了云。"),
                       ("天气和气候有什么区别？", "天气是某一天的大气状况，气候是多年天气的平均情况。")]}),
    _Spec(_tool("flight_status", "Live status of a flight (on time, delayed, landed) and where it lands, by flight number",
                {"flight": _s("Flight number, e.g. LH400")}, ["flight"]),
          ["Is flight {flight} on time?", "Has {flight} landed yet?", "Any delay on flight {flight}?"],
          ["{flight}航班准点吗？", "{flight}落地了吗？", "{flight}航班有没有延误？"],
          {"flight": _FLIGHTS},
          many=("flight", "Are flights {flight} on time?", "{flight}这几个航班准点吗？"),
          result=lambda rng, args: {"state": rng.choice(_STATES), "arrives_in": rng.choice(_CITIES)[2]},
          answer=("Flight {flight} is {state}, arriving in {arrives_in}.", "{flight}航班{state}，目的地{arrives_in}。"),
          near={"en": [("Why do planes leave white trails in the sky?", "Those are contrails: water vapour in the hot exhaust freezes into ice crystals in the cold air.")],
                "zh": [("飞机为什么会在天上留下白线？", "那是尾迹云：发动机排出的水汽在高空冷空气中凝结成了冰晶。")]}),
    _Spec(_tool("hotel_search", "Search hotels with free rooms in a city for a number of nights",
                {"city": _s("City"), "nights": _i("How many nights"),
                 "max_price": _n("Highest price per night, in euros"),
                 "sort": _e(["price_asc", "price_desc", "rating"], "Order of the results")}, ["city", "nights"]),
          ["Find me a hotel in {city} for {nights} nights{opt}.", "Any rooms in {city} for {nights} nights{opt}?"],
          ["帮我找{city}的酒店，住{nights}晚{opt}。", "{city}有没有能住{nights}晚的房间{opt}？"],
          {"city": _CITIES, "nights": _num(1, 2, 3, 4, 5, 7, 10)},
          {"max_price": (", under {} euros a night", "，每晚不超过{}欧元", _num(60, 80, 95, 120, 150, 200)),
           "sort": ("{}", "{}", [(", cheapest first", "，按价格从低到高", "price_asc"),
                                 (", most expensive first", "，按价格从高到低", "price_desc"),
                                 (", best rated first", "，按评分排序", "rating")])}),
    _Spec(_tool("train_times", "Train departures between two stations on a date",
                {"origin": _s("Departure city"), "destination": _s("Arrival city"), "date": _s("Date, YYYY-MM-DD")},
                ["origin", "destination", "date"]),
          ["Which trains go from {origin} to {destination} on {date}?", "Train times {origin} to {destination}, {date}?"],
          ["{date}从{origin}到{destination}有哪些火车？", "查一下{date}{origin}去{destination}的车次。"],
          {"origin": _ORIGINS, "destination": _DESTINATIONS, "date": _DATES}),
    _Spec(_tool("local_time", "The current local time in a city",
                {"city": _s("City name")}, ["city"]),
          ["What time is it in {city} right now?", "Tell me the local time in {city}."],
          ["{city}现在几点？", "告诉我{city}的当地时间。"],
          {"city": _CITIES},
          many=("city", "What time is it now in {city}?", "{city}现在分别是几点？"),
          result=lambda rng, args: {"time": f"{rng.randint(0, 23):02d}:{rng.choice([5, 10, 25, 40, 55]):02d}"},
          answer=("It is {time} in {city}.", "{city}现在是{time}。"),
          near={"en": [("Why do we have time zones?", "Because the sun is overhead at different moments around the globe, so each region keeps a clock that matches its daylight.")],
                "zh": [("为什么会有时区？", "因为地球自转，各地正午时刻不同，划分时区让时钟和当地日照大致对应。")]}),
    # Cooking
    _Spec(_tool("recipe_finder", "Find a recipe that uses an ingredient",
                {"ingredient": _s("Main ingredient"), "max_minutes": _i("Longest cooking time allowed"),
                 "diet": _e(["vegan", "vegetarian", "gluten_free"], "Dietary need")}, ["ingredient"]),
          ["Give me a recipe with {ingredient}{opt}.", "What can I cook with {ingredient}{opt}?"],
          ["给我一个用{ingredient}做的菜谱{opt}。", "{ingredient}能做什么菜{opt}？"],
          {"ingredient": _INGREDIENTS},
          {"max_minutes": (" in under {} minutes", "，{}分钟以内", _num(15, 20, 30, 45, 60)),
           "diet": ("{}", "{}", [(", vegan please", "，要纯素的", "vegan"), (", something vegetarian", "，要素食", "vegetarian"),
                                 (", gluten-free", "，不含麸质", "gluten_free")])},
          result=lambda rng, args: {"dish": rng.choice([("stir-fry", "小炒"), ("soup", "汤"), ("stew", "炖菜")]),
                                    "minutes": rng.choice([15, 25, 35, 50])},
          answer=("Try a {ingredient} {dish}: it takes about {minutes} minutes.", "可以做{ingredient}{dish}，大约{minutes}分钟。"),
          near={"en": [("Why do onions make you cry?", "Cutting onions releases a sulphur compound that irritates your eyes, so they water.")],
                "zh": [("切洋葱为什么会流泪？", "切洋葱会释放一种含硫化合物，刺激眼睛，所以会流泪。")]}),
    _Spec(_tool("scale_recipe", "Rewrite a dish's ingredient amounts for a different number of servings",
                {"dish": _s("Dish name"), "servings_from": _i("Servings the recipe makes now"),
                 "servings_to": _i("Servings wanted")}, ["dish", "servings_from", "servings_to"]),
          ["My {dish} recipe serves {servings_from}; adjust it for {servings_to}.", "Scale the {dish} from {servings_from} to {servings_to} servings."],
          ["我的{dish}菜谱是{servings_from}人份，改成{servings_to}人份。", "把{dish}的用量从{servings_from}人份换算成{servings_to}人份。"],
          {"dish": _DISHES, "servings_from": _num(2, 4, 6), "servings_to": _num(3, 5, 8, 10, 12)}),
    # Money
    _Spec(_tool("loan_payment", "Monthly repayment of a loan",
                {"principal": _n("Amount borrowed"), "annual_rate": _n("Yearly interest rate in percent"),
                 "years": _i("Length of the loan in years")}, ["principal", "annual_rate", "years"]),
          ["What's the monthly payment on {principal} borrowed at {annual_rate}% for {years} years?",
           "I borrow {principal} at {annual_rate} percent over {years} years. How much a month?"],
          ["贷款{principal}，年利率{annual_rate}%，{years}年还清，每月还多少？", "借{principal}元，利率{annual_rate}%，分{years}年，月供多少？"],
          {"principal": _num(5000, 12000, 20000, 150000, 320000), "annual_rate": _num(3.5, 4.2, 5, 6.75, 7.9),
           "years": _num(2, 5, 10, 20, 30)}),
    _Spec(_tool("tip_amount", "Tip and total for a restaurant bill, optionally split between people",
                {"bill": _n("The bill before tip"), "percent": _n("Tip percentage"),
                 "split": _i("Number of people sharing")}, ["bill", "percent"]),
          ["What's a {percent}% tip on {bill}{opt}?", "Our bill is {bill}; add {percent} percent tip{opt}."],
          ["账单{bill}，给{percent}%小费是多少{opt}？", "消费{bill}，加{percent}%的小费{opt}。"],
          {"bill": _num(42.5, 58, 76.2, 120, 233.4, 89.9), "percent": _num(10, 12, 15, 18, 20)},
          {"split": (", split between {} people", "，{}个人平摊", _num(2, 3, 4, 5, 6))},
          result=lambda rng, args: {"total": round(args["bill"] * (1 + args["percent"] / 100), 2)},
          answer=("With the tip, the total comes to {total}.", "加上小费，总共{total}。")),
    _Spec(_tool("get_rate", "Exchange rate between two currencies (how much of the quote currency one unit of the base buys)",
                {"base": _s("Currency code to convert from, e.g. EUR"), "quote": _s("Currency code to convert to")},
                ["base", "quote"]),
          ["What's the exchange rate from {base} to {quote}?", "How many {quote} does one {base} buy today?"],
          ["{base}兑{quote}的汇率是多少？", "一{base}现在能换多少{quote}？"],
          {"base": _CURRENCIES[:6], "quote": _CURRENCIES[6:]},
          result=_rate, answer=("One {base} buys {rate} {quote}.", "1 {base}可以换{rate} {quote}。")),
    _Spec(_tool("get_rates", "Current bank interest rates for a kind of loan or account",
                {"product": _e(["mortgage", "car_loan", "savings"], "Kind of product")}, ["product"]),
          ["What interest rates are banks offering on {product} now?", "Show me today's {product} rates."],
          ["现在{product}的利率是多少？", "查一下今天的{product}利率。"],
          {"product": [("mortgages", "房贷", "mortgage"), ("car loans", "车贷", "car_loan"), ("savings accounts", "存款", "savings")]},
          near={"en": [("What does APR stand for?", "APR means annual percentage rate: the yearly cost of a loan including fees.")],
                "zh": [("什么是复利？", "复利就是利息也会产生利息，本金和利息一起滚动增长。")]}),
    _Spec(_tool("savings_growth", "How much a deposit grows to with yearly compounding",
                {"deposit": _n("Starting amount"), "rate": _n("Yearly rate in percent"), "years": _i("Number of years")},
                ["deposit", "rate", "years"]),
          ["If I put {deposit} away at {rate}% a year, what will I have after {years} years?",
           "Grow {deposit} at {rate} percent for {years} years."],
          ["存{deposit}，年利率{rate}%，{years}年后有多少？", "{deposit}按{rate}%复利存{years}年是多少钱？"],
          {"deposit": _num(1000, 2500, 8000, 10000, 50000), "rate": _num(1.5, 2, 3.25, 4, 5.5), "years": _num(3, 5, 8, 15, 25)}),
    # Units
    _Spec(_tool("convert_length", "Convert a length between metres, kilometres, feet, inches and miles",
                {"value": _n("The length"), "from_unit": _e(["m", "km", "ft", "in", "mi"], "Unit of the value"),
                 "to_unit": _e(["m", "km", "ft", "in", "mi"], "Unit wanted")}, ["value", "from_unit", "to_unit"]),
          ["How many {to_unit} is {value} {from_unit}?", "Convert {value} {from_unit} to {to_unit}."],
          ["{value}{from_unit}是多少{to_unit}？", "把{value}{from_unit}换算成{to_unit}。"],
          {"value": _num(3, 12, 42.195, 100, 5280, 1.5), "from_unit": [("metres", "米", "m"), ("miles", "英里", "mi"), ("feet", "英尺", "ft")],
           "to_unit": [("kilometres", "公里", "km"), ("inches", "英寸", "in")]},
          result=lambda rng, args: {"converted": round(rng.uniform(1, 900), 2)},
          answer=("{value} {from_unit} is {converted} {to_unit}.", "{value}{from_unit}等于{converted}{to_unit}。")),
    _Spec(_tool("convert_weight", "Convert a weight between kilograms, grams, pounds and ounces",
                {"value": _n("The weight"), "from_unit": _e(["kg", "g", "lb", "oz"], "Unit of the value"),
                 "to_unit": _e(["kg", "g", "lb", "oz"], "Unit wanted")}, ["value", "from_unit", "to_unit"]),
          ["What is {value} {from_unit} in {to_unit}?", "Turn {value} {from_unit} into {to_unit}."],
          ["{value}{from_unit}是多少{to_unit}？", "{value}{from_unit}换成{to_unit}是多少？"],
          {"value": _num(2, 7.5, 16, 250, 0.8), "from_unit": [("pounds", "磅", "lb"), ("grams", "克", "g")],
           "to_unit": [("kilograms", "千克", "kg"), ("ounces", "盎司", "oz")]}),
    _Spec(_tool("temp_convert", "Convert a temperature to another scale",
                {"value": _n("The temperature"), "to_scale": _e(["C", "F", "K"], "Scale wanted")}, ["value", "to_scale"]),
          ["What is {value} degrees {to_scale}?", "Give me {value} degrees {to_scale}."],
          ["{value}度{to_scale}是多少？", "把{value}度{to_scale}。"],
          {"value": _num(-10, 0, 21.5, 37, 100, 451),
           "to_scale": [("in Fahrenheit", "换成华氏度", "F"), ("in Celsius", "换成摄氏度", "C"), ("in kelvin", "换成开尔文", "K")]}),
    # Calendar
    _Spec(_tool("calendar_add", "Add an event to the user's calendar",
                {"title": _s("What the event is"), "date": _s("Date, YYYY-MM-DD"), "time": _s("Start time, HH:MM"),
                 "guests": _strings("Names of people to invite")}, ["title", "date"]),
          ["Put '{title}' in my calendar on {date}{opt}.", "Add {title} on {date} to my calendar{opt}."],
          ["在日历上{date}加一个“{title}”{opt}。", "把{title}加到{date}的日程里{opt}。"],
          {"title": [("dentist", "看牙", "dentist"), ("yoga class", "瑜伽课", "yoga class"), ("team lunch", "团队午餐", "team lunch"),
                     ("piano lesson", "钢琴课", "piano lesson"), ("car service", "汽车保养", "car service")], "date": _DATES},
          {"time": (" at {}", "，{}开始", _TIMES), "guests": (", and invite {}", "，邀请{}", _Many(_PEOPLE))}),
    _Spec(_tool("day_agenda", "List what is in the user's calendar on a date",
                {"date": _s("Date, YYYY-MM-DD")}, ["date"]),
          ["What's on my calendar on {date}?", "Am I busy on {date}?"],
          ["我{date}有什么安排？", "{date}我忙吗？"], {"date": _DATES},
          result=lambda rng, args: {"events": rng.choice([("a dentist visit at 10:00", "10:00看牙"), ("nothing", "没有安排"),
                                                         ("a piano lesson at 17:30", "17:30钢琴课")])},
          answer=("On {date} you have {events}.", "{date}你的安排：{events}。")),
    _Spec(_tool("days_between", "Number of days between two dates",
                {"start": _s("First date, YYYY-MM-DD"), "end": _s("Second date, YYYY-MM-DD")}, ["start", "end"]),
          ["How many days are there between {start} and {end}?", "Count the days from {start} to {end}."],
          ["{start}到{end}之间有多少天？", "从{start}到{end}一共几天？"],
          {"start": _DATES[:5], "end": _DATES[5:]}),
    # Home
    _Spec(_tool("thermostat_set", "Set the heating target temperature of a room, in degrees Celsius",
                {"room": _e(["living_room", "bedroom", "kitchen", "study", "bathroom"], "Room"),
                 "degrees": _n("Target temperature in °C")}, ["room", "degrees"]),
          ["Set the {room} to {degrees} degrees.", "Heat the {room} to {degrees} °C."],
          ["把{room}温度调到{degrees}度。", "{room}加热到{degrees}摄氏度。"],
          {"room": _ROOMS, "degrees": _num(18, 19.5, 21, 22, 23.5)}),
    _Spec(_tool("switch_lights", "Turn the lights of a room on or off, optionally at a brightness",
                {"room": _e(["living_room", "bedroom", "kitchen", "study", "bathroom"], "Room"),
                 "state": _e(["on", "off"], "On or off"), "brightness": _i("Brightness in percent, 1 to 100")},
                ["room", "state"]),
          ["Could you {state} the {room} lights{opt}?", "Please {state} the light in the {room}{opt}."],
          ["把{room}的灯{state}{opt}。", "{room}的灯{state}{opt}。"],
          {"room": _ROOMS, "state": [("turn on", "打开", "on"), ("switch off", "关掉", "off")]},
          {"brightness": (" at {} percent", "，亮度{}%", _num(20, 35, 50, 75, 100))},
          near={"en": [("How does an LED make light?", "In an LED, electrons crossing a semiconductor junction release energy as light.")],
                "zh": [("LED灯为什么比白炽灯省电？", "LED直接把电能变成光，发热少，而白炽灯大部分能量都变成了热。")]}),
    _Spec(_tool("door_lock", "Lock or unlock one of the house doors",
                {"door": _e(["front", "back", "garage"], "Which door"), "action": _e(["lock", "unlock"], "What to do")},
                ["door", "action"]),
          ["Please {action} the {door} door.", "Can you {action} the {door} door?"],
          ["把{door}门{action}。", "帮我{action}{door}门。"],
          {"door": [("front", "前", "front"), ("back", "后", "back"), ("garage", "车库", "garage")],
           "action": [("lock", "锁上", "lock"), ("unlock", "打开", "unlock")]}),
    # Shopping
    _Spec(_tool("catalog_search", "Search the shop's catalogue for items",
                {"query": _s("What to look for"), "max_price": _n("Highest price"),
                 "order": _e(["price_asc", "price_desc", "rating", "newest"], "Order of results")}, ["query"]),
          ["Look for a {query}{opt}.", "Show me {query} offers{opt}."],
          ["帮我找{query}{opt}。", "看看有什么{query}{opt}。"],
          {"query": _ITEMS},
          {"max_price": (" under {}", "，{}以内", _num(20, 35, 49.99, 80, 150)),
           "order": ("{}", "{}", [(", cheapest first", "，便宜的排前面", "price_asc"), (", priciest first", "，贵的排前面", "price_desc"),
                                  (", best reviewed first", "，好评优先", "rating"), (", newest first", "，最新上架的优先", "newest")])}),
    _Spec(_tool("track_parcel", "Where a parcel is now, by its tracking code",
                {"code": _s("Tracking code")}, ["code"]),
          ["Where is my parcel {code}?", "Track parcel {code} for me."],
          ["我的包裹{code}到哪了？", "帮我查一下包裹{code}。"], {"code": _PARCELS},
          many=("code", "Where are my parcels {code}?", "包裹{code}都到哪了？"),
          result=lambda rng, args: {"where": rng.choice([("at the local depot", "在本地网点"), ("out for delivery", "正在派送"),
                                                        ("in customs", "在清关"), ("delivered", "已送达")])},
          answer=("Parcel {code} is {where}.", "包裹{code}{where}。")),
    _Spec(_tool("ship_gift", "Send a gift-wrapped item to someone at an address",
                {"item": _s("What to send"), "recipient": _s("Who receives it"),
                 "address": _object("Delivery address", {"street": _s("Street and number"), "city": _s("City")}, ["street", "city"])},
                ["item", "recipient", "address"]),
          ["Send a {item} as a gift to {recipient} at {address.street}, {address.city}.",
           "Gift-wrap a {item} for {recipient}; the address is {address.street} in {address.city}."],
          ["把一个{item}作为礼物寄给{recipient}，地址是{address.city}{address.street}。", "给{recipient}送一个{item}，寄到{address.city}{address.street}。"],
          {"item": _ITEMS, "recipient": _PEOPLE, "address.street": _STREETS, "address.city": _CITIES}),
    # Music
    _Spec(_tool("speaker_play", "Play a song on the living-room speaker",
                {"title": _s("Song title"), "volume": _i("Volume from 0 to 10")}, ["title"]),
          ["Play {title}{opt}.", "Put on {title}{opt}, please."],
          ["播放{title}{opt}。", "请放一首{title}{opt}。"], {"title": _SONGS},
          {"volume": (" at volume {}", "，音量{}", _num(2, 4, 5, 7, 9))},
          near={"en": [("Who composed Clair de Lune?", "Clair de Lune was composed by Claude Debussy.")],
                "zh": [("什么是爵士乐？", "爵士乐起源于美国新奥尔良，以即兴演奏和摇摆节奏为特点。")]}),
    _Spec(_tool("playlist_create", "Create a playlist from a list of song titles",
                {"name": _s("Playlist name"), "songs": _strings("Song titles, in order")}, ["name", "songs"]),
          ["Make a playlist called {name} with {songs}.", "Create a '{name}' playlist: {songs}."],
          ["建一个叫{name}的歌单，放{songs}。", "新建歌单“{name}”，包括{songs}。"],
          {"name": [("Sunday", "周日", "Sunday"), ("Focus", "专注", "Focus"), ("Road trip", "自驾", "Road trip")], "songs": _Many(_SONGS)}),
    _Spec(_tool("artist_tracks", "The most played songs of an artist",
                {"artist": _s("Artist name")}, ["artist"]),
          ["What are {artist}'s best-known songs?", "Top tracks by {artist}?"],
          ["{artist}最有名的歌是哪些？", "{artist}的热门歌曲有哪些？"], {"artist": _ARTISTS},
          result=lambda rng, args: {"top": rng.choice(_SONGS)[2]},
          answer=("{artist}'s most played song is {top}.", "{artist}播放最多的歌是{top}。")),
    # Sports
    _Spec(_tool("match_score", "Score of a team's latest match in a sport",
                {"team": _s("Team name"), "sport": _e(["football", "basketball", "hockey"], "Sport")}, ["team", "sport"]),
          ["How did {team} do in their last {sport} game?", "What was the score of the {team} {sport} match?"],
          ["{team}上一场{sport}比赛比分多少？", "{team}最近的{sport}比赛结果怎么样？"],
          {"team": _TEAMS, "sport": [("football", "足球", "football"), ("basketball", "篮球", "basketball"), ("hockey", "冰球", "hockey")]},
          result=lambda rng, args: {"score": f"{rng.randint(0, 5)}-{rng.randint(0, 5)}", "opponent": rng.choice(_TEAMS)[2]},
          answer=("{team} played {opponent}: the score was {score}.", "{team}对阵{opponent}，比分{score}。"),
          near={"en": [("How long is a football match?", "A football match lasts 90 minutes: two halves of 45, plus stoppage time.")],
                "zh": [("篮球比赛一共几节？", "篮球比赛通常分四节，NBA每节12分钟。")]}),
    _Spec(_tool("league_table", "Current standings of a league",
                {"league": _s("League name"), "top": _i("Show only this many teams")}, ["league"]),
          ["Show the {league} standings{opt}.", "Who leads the {league}{opt}?"],
          ["{league}积分榜{opt}。", "{league}现在谁排第一{opt}？"], {"league": _LEAGUES},
          {"top": (", top {} only", "，只看前{}名", _num(3, 5, 10))}),
    # Language and text
    _Spec(_tool("phrase_translate", "Put a short phrase into another language",
                {"text": _s("The phrase"), "target": _e(["fr", "es", "de", "ja", "zh"], "Language wanted")}, ["text", "target"]),
          ["How do I say '{text}' {target}?", "What's '{text}' {target}?"],
          ["“{text}”{target}怎么说？", "把“{text}”说成{target}。"],
          {"text": _WORDS, "target": [("in French", "用法语", "fr"), ("in Spanish", "用西班牙语", "es"),
                                      ("in German", "用德语", "de"), ("in Japanese", "用日语", "ja")]}),
    _Spec(_tool("count_words", "Count the words in a piece of text",
                {"text": _s("The text")}, ["text"]),
          ["How many words are in '{text}'?", "Count the words of: {text}"],
          ["“{text}”有几个单词？", "数一下这段话的单词数：{text}"], {"text": _SHORT_TEXTS},
          result=lambda rng, args: {"words": len(args["text"].split())},
          answer=("That text has {words} words.", "这段文字有{words}个单词。")),
    _Spec(_tool("text_case", "Change the letter case of a text",
                {"text": _s("The text"), "style": _e(["upper", "lower", "title"], "Case wanted")}, ["text", "style"]),
          ["Write '{text}' {style}.", "Make this {style}: {text}"],
          ["把“{text}”{style}。", "{style}：{text}"],
          {"text": _SHORT_TEXTS, "style": [("in capitals", "全部改成大写", "upper"), ("in lower case", "全部改成小写", "lower"),
                                           ("in title case", "每个单词首字母大写", "title")]}),
    # Maths
    _Spec(_tool("is_prime", "Whether a whole number is prime", {"n": _i("The number")}, ["n"]),
          ["Is {n} a prime number?", "Is {n} prime?"], ["{n}是质数吗？", "{n}是不是素数？"],
          {"n": _num(91, 97, 221, 257, 1001, 7919)},
          many=("n", "Which of {n} are prime?", "{n}里哪些是质数？"),
          result=lambda rng, args: {"prime": ("prime", "是质数") if args["n"] in (97, 257, 7919) else ("not prime", "不是质数")},
          answer=("{n} is {prime}.", "{n}{prime}。"),
          near={"en": [("Who proved that there are infinitely many primes?", "Euclid proved it, around 300 BC.")],
                "zh": [("为什么1不是质数？", "质数要有恰好两个因数，1只有一个因数，所以不算质数。")]}),
    _Spec(_tool("mean_of", "The average of a list of numbers",
                {"numbers": {"type": "array", "items": {"type": "number"}, "description": "The numbers"}}, ["numbers"]),
          ["What's the average of {numbers}?", "Mean of {numbers}, please."],
          ["{numbers}的平均数是多少？", "求{numbers}的平均值。"],
          {"numbers": _Many(_num(4, 9, 12.5, 17, 23, 31, 40), 3, 4)}),
    # Files and notes
    _Spec(_tool("file_search", "Find files whose names match a pattern",
                {"pattern": _s("Name pattern, e.g. *.pdf"), "folder": _s("Folder to search in")}, ["pattern"]),
          ["Find files matching {pattern}{opt}.", "Where are my {pattern} files{opt}?"],
          ["找一下匹配{pattern}的文件{opt}。", "我的{pattern}文件在哪{opt}？"],
          {"pattern": _PATTERNS}, {"folder": (" in {}", "，在{}里找", _FOLDERS)}),
    _Spec(_tool("folder_zip", "Pack a folder into a zip archive", {"path": _s("Folder path")}, ["path"]),
          ["Zip up {path}.", "Make an archive of the folder {path}."], ["把{path}打包成zip。", "压缩文件夹{path}。"],
          {"path": _FOLDERS}),
    _Spec(_tool("note_save", "Save a note with a title and text",
                {"title": _s("Note title"), "body": _s("Note text"), "tags": _strings("Tags")}, ["title", "body"]),
          ["Save a note titled {title}: {body}{opt}", "Note down under '{title}': {body}{opt}"],
          ["存一条标题为{title}的笔记：{body}{opt}", "记一下，标题“{title}”，内容：{body}{opt}"],
          {"title": _KEYWORDS, "body": _SHORT_TEXTS}, {"tags": (". Tags: {}", "。标签：{}", _Many(_KEYWORDS, 2, 2))}),
    _Spec(_tool("notes_find", "Search the user's notes for a word", {"keyword": _s("Word to look for")}, ["keyword"]),
          ["Do I have notes about {keyword}?", "Search my notes for {keyword}."],
          ["我有关于{keyword}的笔记吗？", "在笔记里搜一下{keyword}。"], {"keyword": _KEYWORDS}),
    # Alarms and contacts
    _Spec(_tool("alarm_create", "Set an alarm on the phone",
                {"time": _s("Time, HH:MM"), "label": _s("What the alarm is for"),
                 "repeat": {"type": "array", "items": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]},
                            "description": "Days it repeats on"}}, ["time"]),
          ["Wake me at {time}{opt}.", "Set an alarm for {time}{opt}."],
          ["{time}叫我起床{opt}。", "定一个{time}的闹钟{opt}。"],
          {"time": _TIMES},
          {"label": (" labelled {}", "，备注{}", [("gym", "健身", "gym"), ("medicine", "吃药", "medicine"), ("bus", "赶车", "bus")]),
           "repeat": (" on {}", "，每逢{}", _Many([("Mondays", "周一", "mon"), ("Wednesdays", "周三", "wed"),
                                                 ("Fridays", "周五", "fri"), ("Sundays", "周日", "sun")], 2, 2))}),
    _Spec(_tool("contact_lookup", "Find a person's phone number in the address book",
                {"name": _s("Person's name")}, ["name"]),
          ["What's {name}'s number?", "Find {name} in my contacts."],
          ["{name}的电话是多少？", "在通讯录里找一下{name}。"], {"name": _PEOPLE},
          result=lambda rng, args: {"phone": rng.choice(_PHONES)[2]},
          answer=("{name}'s number is {phone}.", "{name}的电话是{phone}。")),
    _Spec(_tool("sms_send", "Send a text message to a phone number",
                {"phone": _s("Phone number"), "message": _s("Text to send")}, ["phone", "message"]),
          ["Text {phone}: {message}", "Send '{message}' to {phone}."],
          ["给{phone}发短信：{message}", "发一条“{message}”到{phone}。"],
          {"phone": _PHONES, "message": _same("running late, sorry", "see you at eight", "call me back")}),
]
BANK = {spec.name: spec for spec in SPECS}

# Tools whose names differ by a letter but whose jobs differ: the description decides.
_TWINS = {"get_rate": "get_rates", "get_rates": "get_rate", "notes_find": "note_save", "note_save": "notes_find",
          "convert_length": "convert_weight", "convert_weight": "convert_length"}

# Questions no offered tool can answer, with a short reply. Tools near their topic come from
# each spec's ``near``; these are chit-chat, general knowledge and writing requests.
_CHAT = {
    "en": [("Tell me a joke about penguins.", "Why don't penguins fly? They can't afford the plane tickets, so they waddle."),
           ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa, in the early 1500s."),
           ("Write a two-line poem about rain.", "Soft rain on the window,\nthe street hums a grey lullaby."),
           ("What is the capital of Canada?", "The capital of Canada is Ottawa."),
           ("Hello! How are you today?", "Hello! I'm doing well, thanks. How can I help?"),
           ("Explain what a prime number is.", "A prime number is a whole number above 1 whose only divisors are 1 and itself, like 7 or 13."),
           ("Give me one tip for sleeping better.", "Keep the same bedtime every day, even at weekends."),
           ("Thank you, that was helpful.", "You're welcome! Glad I could help."),
           ("What's a good name for a grey cat?", "How about Ash, Pebble or Smokey?"),
           ("How many legs does a spider have?", "A spider has eight legs.")],
    "zh": [("给我讲个关于企鹅的笑话。", "企鹅为什么不飞？因为买不起机票，只好走路。"),
           ("《蒙娜丽莎》是谁画的？", "《蒙娜丽莎》是达·芬奇在16世纪初画的。"),
           ("写两句关于雨的诗。", "细雨敲窗轻，长街入梦深。"),
           ("加拿大的首都是哪里？", "加拿大的首都是渥太华。"),
           ("你好！今天怎么样？", "你好！我很好，有什么可以帮你的吗？"),
           ("解释一下什么是质数。", "质数是大于1、只能被1和它本身整除的整数，比如7和13。"),
           ("谢谢，帮大忙了。", "不客气，很高兴能帮上忙！"),
           ("蜘蛛有几条腿？", "蜘蛛有八条腿。"),
           ("给灰色的猫起个名字吧。", "可以叫它“小灰”、“煤球”或者“烟烟”。"),
           ("长城有多长？", "明长城全长约8851公里。")],
}

# Three multi-step tasks: the first result holds what the second call needs.
# (first tool, first slot pool, second tool, English, Chinese, result field, second call's args)
_CHAINS = [
    ("flight_status", "flight", "fetch_forecast", "Flight {x} — what will the weather be where it lands?",
     "{x}航班落地的城市天气怎么样？", lambda result: {"town": result["arrives_in"]}),
    ("contact_lookup", "name", "sms_send", "Text {x} 'see you at eight'.", "给{x}发短信：see you at eight",
     lambda result: {"phone": result["phone"], "message": "see you at eight"}),
    ("artist_tracks", "artist", "speaker_play", "Play the most popular song by {x}.", "播放{x}最火的那首歌。",
     lambda result: {"title": result["top"]}),
]


@dataclass
class Conversation:
    messages: list[dict]  # OpenAI chat messages: the user turn, then any tool calls and results
    tools: list[dict]  # OpenAI function tools, as offered
    reply: str  # the assistant's next turn, exactly as the engine's template writes it
    kind: str  # "single" | "parallel" | "none" | "after_result"; the second recipe adds "contrastive", the third "enum"
    language: str  # "en" | "zh"
    hidden_names: bool = False  # tool names carry no meaning; only descriptions tell them apart
    naming: str = ""  # "real" | "hidden" | "overlapping"; left empty, it follows hidden_names

    def __post_init__(self):
        if not self.naming:
            self.naming = "hidden" if self.hidden_names else "real"
        self.hidden_names = self.naming != "real"


# Uninformative naming schemes for the "descriptions only" examples.
_HIDDEN = [lambda i: f"tool_{'abcdefgh'[i]}", lambda i: f"fn_{i + 1}", lambda i: f"lookup_{i + 1}",
           lambda i: ["get_info", "get_data", "get_item", "get_value", "get_entry", "get_record"][i]]


def _join(words: list[str], language: str) -> str:
    if len(words) == 1:
        return words[0]
    last, comma = _JOINERS[language]
    return comma.join(words[:-1]) + last + words[-1]


def _draw(rng: random.Random, pool, language: str) -> tuple[str, object]:
    """(text for the question, argument value) for one slot."""
    index = 0 if language == "en" else 1
    if isinstance(pool, _Many):
        chosen = rng.sample(pool.pool, rng.randint(pool.low, pool.high))
        return _join([c[index] for c in chosen], language), [c[2] for c in chosen]
    choice = rng.choice(pool)
    return choice[index], choice[2]


_FIELD = re.compile(r"\{([\w.]*)\}")


def _fill(template: str, texts: dict) -> str:
    return _FIELD.sub(lambda m: str(texts[m.group(1)]), template)


def _ordered(schema: dict, flat: dict, prefix: str = "") -> dict:
    """Arguments in the order the engine's grammar writes them: required properties in schema
    order, then the optional ones given, in schema order."""
    properties, required = schema["properties"], schema.get("required", [])
    out = {}
    for name in [p for p in properties if p in required] + [p for p in properties if p not in required]:
        path = prefix + name
        if properties[name].get("type") == "object" and any(k.startswith(path + ".") for k in flat):
            out[name] = _ordered(properties[name], flat, path + ".")
        elif path in flat:
            out[name] = flat[path]
    return out


def _ask(rng: random.Random, spec: _Spec, language: str, with_optional: bool = True,
         always: tuple[str, ...] = ()) -> tuple[str, dict, dict]:
    """(question, arguments, texts) for one call of ``spec``; texts feed the answer template.
    Optional parameters are mentioned half the time, those named in ``always`` every time."""
    templates = spec.en if language == "en" else spec.zh
    if always:  # only a template with room for optional phrases can mention them
        templates = [t for t in templates if "{opt}" in t]
    template = rng.choice(templates)
    texts, flat = {}, {}
    for path, pool in spec.slots.items():
        texts[path], flat[path] = _draw(rng, pool, language)
    phrases = []
    for path, (english, chinese, pool) in spec.optional.items():
        if with_optional and "{opt}" in template and (path in always or rng.random() < 0.5):
            text, flat[path] = _draw(rng, pool, language)
            phrases.append((english if language == "en" else chinese).replace("{}", text))
    texts["opt"] = "".join(phrases)
    return _fill(template, texts), _ordered(spec.tool["function"]["parameters"], flat), texts


def _offer_tools(rng: random.Random, needed: list[str]) -> list[dict]:
    """2 to 6 tools: the needed ones, a confusable twin when there is one, others at random."""
    names = list(dict.fromkeys(needed))
    for name in list(names):
        if name in _TWINS and _TWINS[name] not in names and rng.random() < 0.7:
            names.append(_TWINS[name])
    total = max(len(names), rng.randint(2, 6))
    others = [n for n in BANK if n not in names]
    names += rng.sample(others, total - len(names))
    rng.shuffle(names)
    return [BANK[n].tool for n in names]


def _call_message(calls: list[dict], first_id: int = 1) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{first_id + i}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
        for i, c in enumerate(calls)]}


def _result_message(call_id: str, result: dict) -> dict:
    # Results read as the tool would send them: English JSON, whatever the user's language.
    content = {k: (v[0] if isinstance(v, tuple) else v) for k, v in result.items()}
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content, ensure_ascii=False)}


def _in_language(result: dict, language: str) -> dict:
    return {k: (v[0 if language == "en" else 1] if isinstance(v, tuple) else v) for k, v in result.items()}


def _single(rng, language, split=0.0):
    # ``split``: how often to ask one of the place or person tools with the split-name pools.
    if split and rng.random() < split:
        spec = _with_split_names(BANK[rng.choice(_PLACE_OR_PERSON)])
    else:
        spec = BANK[rng.choice(sorted(BANK))]
    question, arguments, _ = _ask(rng, spec, language)
    return [{"role": "user", "content": question}], [spec.name], [{"name": spec.name, "arguments": arguments}], None


def _parallel(rng, language, split=0.0):
    if rng.random() < 0.5:  # one tool, two or three values
        if split and rng.random() < split:
            spec = _with_split_names(BANK[rng.choice(_MANY_PLACES_OR_PEOPLE)])
        else:
            spec = BANK[rng.choice(sorted(n for n in BANK if BANK[n].many))]
        path, english, chinese = spec.many
        chosen = rng.sample(spec.slots[path], rng.choice([2, 2, 3]))
        index = 0 if language == "en" else 1
        question = _fill(english if language == "en" else chinese, {path: _join([c[index] for c in chosen], language)})
        calls = [{"name": spec.name, "arguments": {path: c[2]}} for c in chosen]
        return [{"role": "user", "content": question}], [spec.name], calls, None
    first, second = rng.sample(sorted(BANK), 2)  # two tools in one question
    specs = [BANK[first], BANK[second]]
    if split:
        specs = [_with_split_names(spec) if rng.random() < split else spec for spec in specs]
    q1, a1, _ = _ask(rng, specs[0], language)
    q2, a2, _ = _ask(rng, specs[1], language)
    question = f"{q1} Also, {q2[0].lower() + q2[1:]}" if language == "en" else f"{q1}另外，{q2}"
    calls = [{"name": first, "arguments": a1}, {"name": second, "arguments": a2}]
    return [{"role": "user", "content": question}], [first, second], calls, None


def _none(rng, language):
    if rng.random() < 0.5:  # near an offered tool's topic, but not what it does
        spec = BANK[rng.choice(sorted(n for n in BANK if BANK[n].near))]
        question, answer = rng.choice(spec.near[language])
        return [{"role": "user", "content": question}], [spec.name], [], answer
    question, answer = rng.choice(_CHAT[language])
    return [{"role": "user", "content": question}], [], [], answer


def _after_result(rng, language):
    if rng.random() < 0.3:  # the first result makes the next call possible
        first, slot, second, english, chinese, follow = rng.choice(_CHAINS)
        text, value = _draw(rng, BANK[first].slots[slot], language)
        question = _fill(english if language == "en" else chinese, {"x": text})
        made = BANK[first].result(rng, {slot: value})
        content = {k: (v[0] if isinstance(v, tuple) else v) for k, v in made.items()}
        messages = [{"role": "user", "content": question}, _call_message([{"name": first, "arguments": {slot: value}}]),
                    _result_message("call_1", made)]
        nxt = _ordered(BANK[second].tool["function"]["parameters"], follow(content))
        return messages, [first, second], [{"name": second, "arguments": nxt}], None
    # Answer from the results, of one call or of the same tool called for several values.
    spec = BANK[rng.choice(sorted(n for n in BANK if BANK[n].result))]
    rounds = rng.choice([1, 1, 1, 2]) if spec.many else 1
    # Several values share one question, so none of them may bring its own optional phrase.
    asks = [_ask(rng, spec, language, with_optional=rounds == 1) for _ in range(rounds)]
    if spec.many:
        path = spec.many[0]
        asks = [a for i, a in enumerate(asks) if a[1][path] not in [b[1][path] for b in asks[:i]]]
    if len(asks) == 1:
        question = asks[0][0]
    else:
        path, english, chinese = spec.many
        question = _fill(english if language == "en" else chinese, {path: _join([a[2][path] for a in asks], language)})
    calls = [{"name": spec.name, "arguments": a[1]} for a in asks]
    messages = [{"role": "user", "content": question}, _call_message(calls)]
    answers = []
    for i, (_, arguments, texts) in enumerate(asks):
        made = spec.result(rng, arguments)
        messages.append(_result_message(f"call_{i + 1}", made))
        answers.append(_fill(spec.answer[0 if language == "en" else 1], {**texts, **_in_language(made, language)}))
    return messages, [spec.name], [], (" " if language == "en" else "").join(answers)


_KINDS = {"single": (_single, 0.50), "parallel": (_parallel, 0.12), "none": (_none, 0.20),
          "after_result": (_after_result, 0.18)}


def _rename(tools, messages, calls, mapping):
    tools = [{"type": "function", "function": {**t["function"], "name": mapping[t["function"]["name"]]}} for t in tools]
    renamed = []
    for message in messages:
        if message.get("tool_calls"):
            message = {**message, "tool_calls": [
                {**c, "function": {**c["function"], "name": mapping[c["function"]["name"]]}} for c in message["tool_calls"]]}
        renamed.append(message)
    return tools, renamed, [{**c, "name": mapping[c["name"]]} for c in calls]


def _names_for(rng: random.Random, naming: str, tools: list[dict]) -> dict:
    """Real name -> offered name, for "hidden" or "overlapping" names, given by position."""
    if naming == "hidden":
        scheme = rng.choice(_HIDDEN)
        offered = [scheme(i) for i in range(len(tools))]
    else:
        offered = _overlapping_names(rng, len(tools))
    return {t["function"]["name"]: name for t, name in zip(tools, offered)}


def render_reply(calls: list[dict]) -> str:
    """The assistant turn the engine's grammar lets the model write for these calls."""
    return "\n".join(render_call(c["name"], json.dumps(c["arguments"], ensure_ascii=False)) for c in calls)


def conversation(rng: random.Random, kind: str, language: str) -> Conversation:
    messages, needed, calls, text = _KINDS[kind][0](rng, language)
    tools = _offer_tools(rng, needed)
    hidden = rng.random() < 0.4
    if hidden:  # same descriptions, names that say nothing: the model must read
        tools, messages, calls = _rename(tools, messages, calls, _names_for(rng, "hidden", tools))
    reply = render_reply(calls) if calls else text
    return Conversation(messages, tools, reply, kind, language, hidden)


def conversations(count: int, seed: int = 0, recipe: str = "first", pairs: bool = True) -> list[Conversation]:
    """``count`` training conversations. The first recipe (the shipped adapter's): about 50%
    single calls, 12% parallel, 20% no tool, 18% continuing after tool results, 40% with hidden
    names; half English, half Chinese. The second recipe is described at ``second_recipe``, the
    third (``"scale"``, for training at scale) at ``scale_recipe``."""
    if recipe == "second":
        return second_recipe(count, seed, pairs=pairs)
    if recipe == "scale":
        return scale_recipe(count, seed, pairs=pairs)
    if recipe != "first":
        raise ValueError(f"unknown recipe {recipe!r}: 'first', 'second' or 'scale'")
    rng = random.Random(seed)
    kinds = rng.choices(list(_KINDS), weights=[w for _, w in _KINDS.values()], k=count)
    return [conversation(rng, kind, rng.choice(["en", "zh"])) for kind in kinds]


def prompt_and_completion(conversation: Conversation) -> tuple[str, str]:
    """What the model reads, and what it should write next (up to and including its end)."""
    return render_prompt(conversation.messages, conversation.tools), conversation.reply + "<|im_end|>"


# ---------------------------------------------------------------------------------------------
# After-result turns, for calibrating the engine's third decision
#
# When the messages end with tool results, the engine decides between answering and calling
# again (``toolkit.engine.decide.opens_call_after_results``). Its threshold is fitted on these:
# results that answer the question, results that make a next call necessary, and results that
# say "not found" or report an error, which must be answered, never asked for again.
# ---------------------------------------------------------------------------------------------

_NOT_FOUND = {"en": "I couldn't find anything for that: the tool found no match.",
              "zh": "没有找到相关结果，工具没有查到匹配的记录。"}
_FAILED = {"en": "The tool failed ({error}), so I can't answer that right now.",
           "zh": "工具出错了（{error}），暂时无法回答。"}
_ERRORS = ["Error: the service is unavailable. Try again later.", "Error: request timed out after 10 seconds.",
           "Error: ValueError: that value is not accepted."]


@dataclass
class AfterResult:
    conversation: Conversation
    outcome: str  # "answers" | "next_call" | "not_found" | "error"

    @property
    def needs_call(self) -> bool:
        return self.outcome == "next_call"


def _failed_result(rng: random.Random, language: str, outcome: str):
    """A single call whose result says "not found" or reports an error."""
    spec = BANK[rng.choice(sorted(BANK))]
    question, arguments, _ = _ask(rng, spec, language)
    if outcome == "not_found":
        result, reply = {"found": False}, _NOT_FOUND[language]
    else:
        result, reply = rng.choice(_ERRORS), None
        reply = _FAILED[language].format(error=result.removeprefix("Error: ").rstrip("."))
    content = result if isinstance(result, str) else json.dumps(result)
    messages = [{"role": "user", "content": question}, _call_message([{"name": spec.name, "arguments": arguments}]),
                {"role": "tool", "tool_call_id": "call_1", "content": content}]
    return messages, [spec.name], [], reply


def after_result_turns(count: int, seed: int = 0,
                       shares: tuple[float, float, float, float] = (0.4, 0.3, 0.15, 0.15)) -> list[AfterResult]:
    """``count`` conversations that end with tool results; ``shares`` of results that answer,
    results that make a next call necessary, "not found" and errors. Half English, half Chinese."""
    rng = random.Random(seed)
    outcomes = rng.choices(["answers", "next_call", "not_found", "error"], weights=shares, k=count)
    turns = []
    for outcome in outcomes:
        language = rng.choice(["en", "zh"])
        if outcome in ("answers", "next_call"):
            while True:  # _after_result draws chains and answers itself: keep the kind asked for
                messages, needed, calls, text = _after_result(rng, language)
                if bool(calls) == (outcome == "next_call"):
                    break
        else:
            messages, needed, calls, text = _failed_result(rng, language, outcome)
        tools = _offer_tools(rng, needed)
        reply = render_reply(calls) if calls else text
        turns.append(AfterResult(Conversation(messages, tools, reply, "after_result", language), outcome))
    return turns


# ---------------------------------------------------------------------------------------------
# The second recipe
#
# The adapter trained on the first recipe learned to answer after tool results, but it stopped
# trusting tool names without learning to read descriptions, and it wrote values like
# "B Beijing". The second recipe keeps most names real, makes the names that say nothing harder
# to guess from, puts the same question side by side with the descriptions swapped, and adds
# values whose spelling after a JSON quote the tokenizer splits.
# ---------------------------------------------------------------------------------------------

# Conversation shares of each kind; a contrastive draw makes two conversations.
SECOND_KINDS = {"single": 0.35, "parallel": 0.12, "none": 0.18, "after_result": 0.20, "contrastive": 0.15}
# Names outside contrastive pairs. The pairs always use names that say nothing, half hidden and
# half overlapping, so that over all conversations this comes to about 60% / 20% / 20%.
SECOND_NAMING = {"real": 0.70, "hidden": 0.15, "overlapping": 0.15}
_SPLIT_SHARE = 0.40  # single and parallel draws that ask a place or person tool with split names
_NOT_FOUND_SHARE = 0.25  # after-result conversations whose result says "not found"

# Which pool of the bank each split-name pool stands in for.
_SPLIT_SWAPS = [(_CITIES, SPLIT_CITIES), (_ORIGINS, SPLIT_CITIES[::2]), (_DESTINATIONS, SPLIT_CITIES[1::2]),
                (_PEOPLE, SPLIT_PEOPLE)]


def _with_split_names(spec: _Spec) -> _Spec:
    """The same tool, its city and person slots filled from the split-name pools."""
    swapped = {path: next((new for old, new in _SPLIT_SWAPS if pool is old), pool) for path, pool in spec.slots.items()}
    return dataclasses.replace(spec, slots=swapped)


_PLACE_OR_PERSON = sorted(name for name, spec in BANK.items()
                          if any(pool is old for pool in spec.slots.values() for old, _ in _SPLIT_SWAPS))
_MANY_PLACES_OR_PEOPLE = [name for name in _PLACE_OR_PERSON if BANK[name].many]

# Words for overlapping names: a family of names shares its noun (get_status, set_status,
# status_check), so a name tells its tool apart from no neighbour. None is a bank name.
_OVERLAP_VERBS = ["get", "set", "search", "find", "check", "fetch", "list", "update", "read", "show"]
_OVERLAP_NOUNS = ["record", "entry", "item", "status", "state", "info", "data", "value", "details", "result"]


def _overlapping_names(rng: random.Random, count: int) -> list[str]:
    """``count`` (two or more) distinct names, in families of two or three that share a noun."""
    sizes = [2] * (count // 2)
    sizes[-1] += count % 2
    names = []
    for noun, size in zip(rng.sample(_OVERLAP_NOUNS, len(sizes)), sizes):
        names += [f"{noun}_{verb}" if rng.random() < 0.3 else f"{verb}_{noun}" for verb in rng.sample(_OVERLAP_VERBS, size)]
    rng.shuffle(names)
    return names


def _single_split(rng, language):
    return _single(rng, language, split=_SPLIT_SHARE)


def _parallel_split(rng, language):
    return _parallel(rng, language, split=_SPLIT_SHARE)


def _after_result_or_not_found(rng, language):
    """The first recipe's after-result turns, and results that found nothing, said so."""
    if rng.random() < _NOT_FOUND_SHARE:
        return _failed_result(rng, language, "not_found")
    return _after_result(rng, language)


_SECOND_MAKERS = {"single": _single_split, "parallel": _parallel_split, "none": _none,
                  "after_result": _after_result_or_not_found}


def _second_conversation(rng: random.Random, kind: str, language: str,
                         namings: dict[str, float] = SECOND_NAMING) -> Conversation:
    messages, needed, calls, text = _SECOND_MAKERS[kind](rng, language)
    tools = _offer_tools(rng, needed)
    naming = rng.choices(list(namings), weights=list(namings.values()))[0]
    if naming != "real":
        tools, messages, calls = _rename(tools, messages, calls, _names_for(rng, naming, tools))
    reply = render_reply(calls) if calls else text
    return Conversation(messages, tools, reply, kind, language, naming=naming)


def _with_function(tool: dict, other: dict) -> dict:
    """``tool``'s name on ``other``'s description and parameters."""
    return {"type": "function", "function": {**other["function"], "name": tool["function"]["name"]}}


def contrastive_pair(rng: random.Random, language: str) -> list[Conversation]:
    """Two conversations from one draw: the same question and the same names that say nothing,
    with the needed tool's description and parameters swapped with another offered tool's. The
    call follows the description: to the needed tool's name in the first, the other's in the second."""
    messages, needed, calls, _ = _single_split(rng, language)
    tools = _offer_tools(rng, needed)
    naming = rng.choice(["hidden", "overlapping"])
    tools, messages, calls = _rename(tools, messages, calls, _names_for(rng, naming, tools))
    names = [t["function"]["name"] for t in tools]
    needed_at = names.index(calls[0]["name"])
    other_at = rng.choice([i for i in range(len(tools)) if i != needed_at])
    swapped = list(tools)
    swapped[needed_at] = _with_function(tools[needed_at], tools[other_at])
    swapped[other_at] = _with_function(tools[other_at], tools[needed_at])
    moved = [{**calls[0], "name": names[other_at]}]
    return [Conversation(messages, tools, render_reply(calls), "contrastive", language, naming=naming),
            Conversation(list(messages), swapped, render_reply(moved), "contrastive", language, naming=naming)]


def second_recipe(count: int, seed: int = 0, pairs: bool = True) -> list[Conversation]:
    """``count`` conversations of the second recipe, in the shares of ``SECOND_KINDS`` and
    ``SECOND_NAMING``; half English, half Chinese. A contrastive pair stays together. Without
    ``pairs`` (an ablation), each pair's draw is one single call instead, with names as any other."""
    return _mixed(count, seed, SECOND_KINDS, SECOND_NAMING, pairs)


def _mixed(count: int, seed: int, shares: dict[str, float], namings: dict[str, float],
           pairs: bool = True) -> list[Conversation]:
    """``count`` conversations drawn in ``shares`` of kinds, named in ``namings`` outside pairs."""
    rng = random.Random(seed)
    kinds = list(shares)
    draws = [share / 2 if kind == "contrastive" else share for kind, share in shares.items()]
    out: list[Conversation] = []
    while len(out) < count:
        kind = rng.choices(kinds, weights=draws)[0]
        language = rng.choice(["en", "zh"])
        if kind == "contrastive" and pairs and len(out) + 2 <= count:
            out += contrastive_pair(rng, language)
        else:  # no room left for a pair: a single call instead
            out.append(_second_conversation(rng, "single" if kind == "contrastive" else kind, language, namings))
    return out


# ---------------------------------------------------------------------------------------------
# The third recipe, for training at scale
#
# At CPU scale neither adapter learned to read descriptions, and enum values are where the base
# model was weakest (1 of 14 suite enum cases with every argument right, in the table of
# training/README.md). This mix leans on both:
# more names that say nothing (so only the description can decide), more description-swapped
# pairs, and a kind of its own for questions whose words decide an enum value spelled otherwise
# ("in Fahrenheit" -> "F", "华氏度" -> "F", "cheapest first" -> "price_asc").
# ---------------------------------------------------------------------------------------------

SCALE_KINDS = {"single": 0.20, "enum": 0.15, "parallel": 0.10, "none": 0.15, "after_result": 0.20,
               "contrastive": 0.20}
# Outside pairs; with the pairs' names that say nothing this comes to about 40% real, 30% hidden
# and 30% overlapping over all conversations.
SCALE_NAMING = {"real": 0.50, "hidden": 0.25, "overlapping": 0.25}


def _enum_parameters(spec: _Spec) -> list[str]:
    properties = spec.tool["function"]["parameters"]["properties"]
    return [name for name, schema in properties.items() if "enum" in schema]


# Tools with an enum whose value the question states in its own words: a required enum is always
# asked for, an optional one is mentioned every time (``_ask``'s ``always``).
WITH_ENUM = sorted(name for name, spec in BANK.items() if _enum_parameters(spec))


def _enum_single(rng, language):
    """A single call whose question decides at least one enum value, in words unlike its spelling."""
    spec = BANK[rng.choice(WITH_ENUM)]
    optional = tuple(path for path in _enum_parameters(spec) if path in spec.optional)
    question, arguments, _ = _ask(rng, spec, language, always=optional)
    return [{"role": "user", "content": question}], [spec.name], [{"name": spec.name, "arguments": arguments}], None


# The third recipe's own kind; SECOND_KINDS never draws it, so the second recipe is unchanged.
_SECOND_MAKERS["enum"] = _enum_single


def scale_recipe(count: int, seed: int = 0, pairs: bool = True) -> list[Conversation]:
    """``count`` conversations of the third recipe, in the shares of ``SCALE_KINDS`` and
    ``SCALE_NAMING``; half English, half Chinese; pairs as in the second recipe."""
    return _mixed(count, seed, SCALE_KINDS, SCALE_NAMING, pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print synthetic tool-calling examples as JSON lines.")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conversations", action="store_true",
                        help="print training conversations (messages, tools, reply) instead")
    parser.add_argument("--recipe", choices=["first", "second", "scale"], default="first",
                        help="which recipe of training conversations (with --conversations)")
    args = parser.parse_args(argv)
    if args.conversations:
        for item in conversations(args.count, args.seed, recipe=args.recipe):
            print(json.dumps(item.__dict__, ensure_ascii=False))
        return
    for example in examples(args.count, args.seed):
        print(json.dumps({"question": example.question, "kind": example.kind, "calls": example.calls,
                          "tools": [t["function"]["name"] for t in example.tools]}, ensure_ascii=False))


if __name__ == "__main__":
    main()
