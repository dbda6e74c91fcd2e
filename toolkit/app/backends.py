"""Which model the app asks: the sidebar's choice turned into a backend, and a quick check
that it answers.

Every failure becomes a ``LabError`` with a sentence a learner can act on, because the page
shows it as is: a traceback in the sidebar would teach nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Literal

from typing import TYPE_CHECKING

from toolkit.app import scripted_model
from toolkit.lab_error import LabError

# The client (and openai with it) loads when a model is first asked, not with the page.
if TYPE_CHECKING:
    from toolkit.client import Backend

EMBEDDED_NOTE = (
    "**SmolLM2-135M-Instruct** runs here offline, with no key. Its calls always parse (the "
    "lab's grammar), but it reads tool names more than descriptions: expect small effects, "
    "or point the lab at a stronger OpenAI-compatible endpoint."
)
"""The sidebar's note on the embedded model: three lines, so the API choice stays in view."""

EMBEDDED_DETAIL = (
    "SmolLM2-135M-Instruct has 135 million parameters and was never trained for tool calling. "
    "Forced to call one tool, it usually picks the one whose name echoes the question, but "
    "**clear and vague descriptions score the same**, and more than half its arguments are wrong. "
    "Under \"auto\" the engine weighs how likely the model is to open a call: it calls on most "
    "questions that need a tool, but also on some that need none.\n\n"
    "**SmolLM2-135M-Instruct+tools** is the same model with a small adapter the lab trained on "
    "invented tool-calling conversations. It leans on tool names far less than the base model: paired "
    "on the suite's 146 simple and multiple questions, hiding the names takes its right tools from "
    "65% to 62%, where the base model falls from 68% to 45%. It is not the default: it calls a tool "
    "on 19 of the first 20 BFCL questions that need none. Clear and vague descriptions move neither "
    "its choice of tool nor its arguments more than chance does, even with names hidden (the suite's "
    "vague descriptions still name each tool's topic in a word), but enums move its arguments: paired on "
    "the suite's 70 enum questions, switching enums off costs it 14 points of right arguments (real "
    "by McNemar's test). Pick it and compare enums on and off to see a chart move offline.\n\n"
    "**SmolLM2-135M-Instruct+tools2** has a second adapter, trained to read the tool list itself. "
    "It too leans on names less than the base model: on the same 146 questions, hiding them takes "
    "its right tools from 57% to 51%. But it does not read descriptions either: with names hidden, "
    "clear ones give it 51% right tools and vague ones 54%. Under \"auto\" it calls a tool on all of "
    "the first 20 BFCL questions that need none, so it is not the default either. Compare the three "
    "with the `model` factor; docs/bench.md has the paired figures, training/README.md those of its "
    "training.\n\n"
    "A stronger OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, a local Ollama or vLLM) shows "
    "the effects of descriptions and enums clearly."
)
"""What the note leaves out, one click away (an expander at the foot of the sidebar)."""


API_LABELS = {"chat": "Chat Completions (POST /chat/completions)",
              "responses": "Responses API (POST /responses)"}
API_HELP = ("Which of OpenAI's two APIs carries the requests. The lab reads both replies the same "
            "way; the raw request and reply viewer shows the real JSON of the one chosen. The "
            "embedded model serves both; many OpenAI-compatible servers serve chat completions only.")


def default_api() -> str:
    """The API the sidebar starts on: LAB_API when it names one, else chat completions."""
    api = os.environ.get("LAB_API", "").strip().lower()
    return api if api in API_LABELS else "chat"


def embedded_model_names() -> list[str]:
    """The embedded endpoint's models, the default first."""
    from toolkit.engine import embedded_models  # loads llama-cpp-python: only when asked

    return list(embedded_models())


@dataclass(frozen=True)
class BackendChoice:
    """Which model to ask. The key stays in memory only: it is never shown or stored."""

    kind: Literal["embedded", "remote"] = "embedded"
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)
    api: Literal["chat", "responses"] = "chat"


def open_backend(choice: BackendChoice, *, timeout: float | None = None,
                 max_retries: int | None = None) -> Backend:
    """A backend for the choice; ``LabError`` says what is missing or wrong."""
    from toolkit.client import connect, connect_embedded

    # Looked up on the module at each call, so a test can swap in its own scripted model.
    if (mode := scripted_model.scripted_mode()) is not None:
        return scripted_model.scripted_backend(mode)
    if choice.kind == "embedded":
        # The embedded model answers one request at a time on a shared CPU: a slow answer is
        # not a lost one, and a resent request would only queue behind the one still running.
        timeout = timeout if timeout is not None else float(os.environ.get("LAB_TIMEOUT", 600))
        max_retries = 0 if max_retries is None else max_retries
        if os.environ.get("LAB_BASE_URL"):
            # connect() would follow the variable, but the learner picked the embedded model.
            return connect_embedded(choice.model or None, timeout=timeout, max_retries=max_retries, api=choice.api)
        return connect(model=choice.model or None, timeout=timeout, max_retries=max_retries, api=choice.api)
    base_url = choice.base_url.strip()
    if not base_url:
        raise LabError("Enter the endpoint's base URL, e.g. https://api.deepseek.com/v1.")
    if not base_url.startswith(("http://", "https://")):
        raise LabError(f"The base URL {base_url!r} must start with http:// or https://, "
                       "e.g. https://api.deepseek.com/v1.")
    if not choice.model.strip():
        raise LabError(f"Enter the name of a model served at {base_url}, e.g. deepseek-chat.")
    return connect(base_url, choice.model.strip(), choice.api_key.strip() or None,
                   timeout=timeout, max_retries=max_retries, api=choice.api)


def check_connection(choice: BackendChoice, timeout: float = 20.0) -> str:
    """Send one tiny request; return a sentence saying who answered and how fast.

    Raises ``LabError`` with a sentence a learner can act on (never a traceback).
    """
    try:
        local = choice.kind == "embedded"  # it may be busy, but it will answer
        backend = open_backend(choice, timeout=None if local else timeout, max_retries=0)
        started = time.perf_counter()
        # OpenAI's Responses API refuses max_output_tokens below 16.
        backend.chat(messages=[{"role": "user", "content": "Reply with the word OK."}],
                     max_tokens=16 if choice.api == "responses" else 5, temperature=0)
    except LabError:
        raise
    except Exception as error:  # a malformed URL and the like: still a sentence, not a trace
        raise LabError(f"Could not reach the endpoint: {type(error).__name__}: {error}") from None
    return f"{backend.label} answered in {time.perf_counter() - started:.1f} s."
