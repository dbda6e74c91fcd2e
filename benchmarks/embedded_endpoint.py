"""How much does the HTTP endpoint cost over calling llama-cpp-python directly?

Sends one fixed set of 20 tool-calling requests (one shared tool list, varied questions)
two ways, interleaved so that background load hits both alike, to the same model instance:

  * through the ``openai`` client and HTTP to the embedded endpoint (what the lab uses);
  * the same prompt tokens and the same grammar straight to llama-cpp-python, in process.

Then the time per request with and without reusing the evaluated prompt prefix.

    python benchmarks/embedded_endpoint.py
"""

from __future__ import annotations

import statistics
import time

from toolkit.client import connect
from toolkit.engine import Engine
from toolkit.engine.grammar import grammar_for
from toolkit.engine.request import parse_request
from toolkit.engine.serve import embedded_engine

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "square_root", "description": "Square root of a number",
     "parameters": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}},
    {"type": "function", "function": {"name": "query_order_status", "description": "Status of an order by its id",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "convert_currency", "description": "Convert an amount between currencies",
     "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "from_currency": {"type": "string"},
                    "to_currency": {"type": "string"}}, "required": ["amount", "from_currency", "to_currency"]}}},
]
QUESTIONS = [
    "What is the weather in Beijing?", "北京今天天气怎么样？", "Is it raining in Shanghai?", "上海现在多少度？",
    "What is the square root of 144?", "计算 2 的平方根", "sqrt of 81 please", "How hot is it in Paris in fahrenheit?",
    "Where is my order A1234?", "查询订单 B5678 的状态", "Has order 998 shipped?", "Convert 100 USD to EUR",
    "把 50 欧元换成人民币", "How many yen is 20 dollars?", "Weather in Tokyo in celsius", "Root of 2?",
    "订单 C42 到哪了？", "Is it sunny in Berlin?", "Convert 5 GBP to USD", "What's the square root of 10000?",
]
SYSTEM = "You are a helpful assistant. Use a tool when one fits the question."
MAX_TOKENS = 48


def requests():
    for question in QUESTIONS:
        yield {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
               "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False,
               "temperature": 0, "seed": 0, "max_tokens": MAX_TOKENS}


def direct(engine: Engine, body: dict, reuse_prefix: bool = True) -> int:
    request = parse_request(body)
    tokens = engine.prompt_tokens(request)
    if not reuse_prefix:
        engine.llm.reset()  # forget the evaluated prompt: the whole prompt is evaluated again
    result = engine.llm.create_completion(prompt=tokens, max_tokens=MAX_TOKENS, temperature=0, seed=0,
                                          grammar=grammar_for(request.tools, request.mode, request.parallel))
    return result["usage"]["completion_tokens"]


def over_http(backend, body: dict) -> int:
    reply = backend.client.chat.completions.create(model=backend.model, **body)
    return reply.usage.completion_tokens


def main() -> None:
    backend = connect()
    # The direct calls use the very model instance the endpoint serves, so both sides share
    # weights, threads and prompt cache. Whichever side goes second on a question finds its
    # whole prompt cached; alternating the order per question gives each side that luck equally.
    engine = embedded_engine()
    bodies = list(requests())
    over_http(backend, bodies[0]), direct(engine, bodies[0])  # warm both: model load, grammar cache
    http_times, direct_times, tokens_http, tokens_direct = [], [], 0, 0
    for index, body in enumerate(bodies):
        order = [("http", over_http, backend), ("direct", direct, engine)]
        for name, run, target in (order if index % 2 == 0 else order[::-1]):
            started = time.perf_counter()
            generated = run(target, body)
            elapsed = time.perf_counter() - started
            if name == "http":
                http_times.append(elapsed)
                tokens_http += generated
            else:
                direct_times.append(elapsed)
                tokens_direct += generated
    per_minute_http = 60 * len(bodies) / sum(http_times)
    per_minute_direct = 60 * len(bodies) / sum(direct_times)
    print(f"{len(bodies)} tool-calling requests, max_tokens={MAX_TOKENS}, temperature 0, interleaved")
    print(f"  direct llama-cpp-python : {per_minute_direct:6.1f} requests/min  ({tokens_direct} tokens generated)")
    print(f"  openai client over HTTP : {per_minute_http:6.1f} requests/min  ({tokens_http} tokens generated)")
    print(f"  endpoint / direct       : {per_minute_http / per_minute_direct:6.3f}  (target >= 0.90)")

    cold_times, warm_times = [], []
    for index, body in enumerate(bodies):
        for reuse, times in ((False, cold_times), (True, warm_times))[:: 1 if index % 2 == 0 else -1]:
            if reuse:  # put the shared prefix back in the cache, as the previous request would have
                engine.llm.reset()
                direct(engine, bodies[index - 1])
            started = time.perf_counter()
            direct(engine, body, reuse_prefix=reuse)
            times.append(time.perf_counter() - started)
    prompt_tokens = [len(engine.prompt_tokens(parse_request(body))) for body in bodies]
    print(f"time per request, prompts of {min(prompt_tokens)}-{max(prompt_tokens)} tokens sharing a system prompt "
          f"and tool list (median of {len(bodies)}):")
    print(f"  without prefix reuse : {statistics.median(cold_times):.3f} s")
    print(f"  with prefix reuse    : {statistics.median(warm_times):.3f} s")
    print(f"  speed-up             : {statistics.median(cold_times) / statistics.median(warm_times):.2f}x")


if __name__ == "__main__":
    main()
