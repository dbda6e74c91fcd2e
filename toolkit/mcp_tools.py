"""Tools from an MCP server: start it from a command, list its tools, run calls through it.

    with McpTools(["python", "-m", "toolkit.mcp_server"]) as server:
        result = run_turn(backend, messages, server.toolset)   # or providers=[server]

MCP (the Model Context Protocol) lets one program offer tools to any client: the client starts
the server as a subprocess, and they talk JSON-RPC over its stdin and stdout. Each tool the
server lists (name, description, ``inputSchema``) becomes an ordinary lab ``Tool`` made with
``Tool.from_spec``, so everything the loop does with tools holds unchanged: the model sees the
same spec, ``jsonschema`` checks its arguments against the listed schema before anything is
sent, and whatever fails (an unknown tool, bad arguments, a tool that reports an error, a
server that dies in the middle of a turn) reaches the model as the lab's usual "Error: ..."
text through ``toolkit.execution``.

A server that cannot be used at all (it does not start, does not answer, or lists tools the lab
cannot offer) raises one ``McpServerError`` that names its command.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import shlex
import sys
import tempfile
import threading
from typing import Any, Iterable, Sequence

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp import types as mcp_types

from toolkit.lab_error import LabError
from toolkit.schema import ToolRegistrationError
from toolkit.tools import Tool, ToolRequest, ToolSet

__all__ = ["McpTools", "McpServerError", "McpToolError", "parse_command"]


class McpServerError(LabError):
    """An MCP server that could not be started, did not answer, stopped, or listed tools that
    the lab cannot offer. The message names the server's command."""


class McpToolError(Exception):
    """A tool call the server answered with ``isError``: the tool ran and failed."""


def parse_command(command: str | Sequence[str]) -> list[str]:
    """A command as a list of arguments; a string is split as a shell would split it.

    A leading ``python`` means the interpreter running the lab, so that the server imports
    the same packages whatever ``python`` on the PATH happens to be.
    """
    args = shlex.split(command) if isinstance(command, str) else [str(each) for each in command]
    if not args:
        raise McpServerError("The MCP server command is empty: give a program and its arguments, "
                             "e.g. python -m toolkit.mcp_server")
    if args[0] in ("python", "python3"):
        args[0] = sys.executable
    return args


class McpTools:
    """An MCP server's tools, as a ``ToolSet`` and as a tool provider. A context manager: the
    server runs from ``__enter__`` (or ``start()``) to ``__exit__`` (or ``close()``).

    ``startup_timeout`` bounds starting the server and listing its tools; ``call_timeout``
    bounds each call. ``env`` adds environment variables for the server: by default it gets
    only a few safe ones (PATH, HOME, ...), never the lab's API keys.
    """

    def __init__(self, command: str | Sequence[str], *, startup_timeout: float = 30.0,
                 call_timeout: float = 30.0, env: dict[str, str] | None = None,
                 cwd: str | None = None):
        self.command = parse_command(command)
        # How error messages name the server: as typed, with "python" rather than a long path.
        shown = shlex.split(command) if isinstance(command, str) else [str(each) for each in command]
        self.label = f"`{shlex.join(shown)}`"
        self.startup_timeout, self.call_timeout = startup_timeout, call_timeout
        self.env, self.cwd = env, cwd
        self.toolset = ToolSet()
        self.server_name: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._serving: concurrent.futures.Future | None = None
        self._session: ClientSession | None = None
        self._stop: asyncio.Event | None = None
        self._stderr = None

    # --- Starting and stopping ---------------------------------------------------------------
    #
    # The lab's loop is synchronous, but the MCP SDK is async, and its connection is a pair of
    # async context managers (the subprocess, then the session) that must be entered and left
    # by one task on one event loop. So the connection lives in one coroutine, ``_serve``, on
    # an event loop of its own in a background thread: it starts the server, lists the tools,
    # reports back, then waits until ``close()`` tells it to leave. Each tool call is one more
    # coroutine handed to that loop, and the calling thread waits for its result.

    def __enter__(self) -> McpTools:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def start(self) -> McpTools:
        """Start the server and read its tools. Raises ``McpServerError`` if it cannot."""
        if self._loop is not None:
            return self
        # The server's stderr goes to a file, so that a failure can quote its last lines.
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"mcp-client {self.label}")
        self._thread.start()
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._serving = asyncio.run_coroutine_threadsafe(self._serve(ready), self._loop)
        try:
            # The coroutine's own time-out fires first; this one only guards against a bug.
            listed = ready.result(timeout=self.startup_timeout + 30)
            self.toolset = self._lab_tools(listed)
        except Exception as error:
            message = self._startup_error(error)
            self.close()
            raise McpServerError(message) from error
        except BaseException:  # Ctrl-C while waiting: stop the server, then let it through
            self.close()
            raise
        return self

    async def _serve(self, ready: concurrent.futures.Future) -> None:
        self._stop = asyncio.Event()
        step = "start"
        try:
            parameters = StdioServerParameters(command=self.command[0], args=self.command[1:],
                                               env=self.env, cwd=self.cwd)
            async with stdio_client(parameters, errlog=self._stderr) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(self.startup_timeout):
                        step = "initialize"
                        info = await session.initialize()
                        step = "tools/list"
                        listed = await _list_all_tools(session)
                    self.server_name = info.server_info.name
                    self._session = session
                    ready.set_result(listed)
                    await self._stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(_StartupFailed(step, _innermost(error)))
            elif not isinstance(error, (Exception, asyncio.CancelledError)):
                raise
        finally:
            self._session = None

    def close(self) -> None:
        """Stop the server (its stdin is closed, then it is terminated if it lingers) and the
        background loop. Safe to call more than once."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if self._stop is not None:
            loop.call_soon_threadsafe(self._stop.set)
        if self._serving is not None:
            try:
                # The SDK's shutdown is bounded: stdin closed, 2 s, SIGTERM, 2 s, SIGKILL.
                self._serving.result(timeout=15)
            except concurrent.futures.TimeoutError:
                self._serving.cancel()  # still starting: the SDK's shutdown runs on cancel too
            except Exception:  # the server already failed; that was reported where it happened
                pass
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            loop.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # --- The tools ---------------------------------------------------------------------------

    def _lab_tools(self, listed: list[mcp_types.Tool]) -> ToolSet:
        """The listing as lab tools, or one error naming every tool the lab cannot offer."""
        tools, problems = ToolSet(), []
        for each in listed:
            spec = {"name": each.name, "description": each.description or "",
                    "parameters": each.input_schema}
            try:
                tools.add(Tool.from_spec(spec, self._executor(each.name)))
            except ToolRegistrationError as error:
                problems.append(f"{error.subject}: " + "; ".join(error.problems))
        if problems:
            raise McpServerError(f"The MCP server {self.label} lists tools the lab cannot "
                                 f"offer to a model: " + " | ".join(problems))
        return tools

    def _executor(self, name: str):
        def run_on_server(arguments: dict, context: Any = None) -> Any:
            return self.call(name, arguments)

        run_on_server.__qualname__ = f"MCP server {self.label}"  # how errors name the tool's origin
        return run_on_server

    def specs(self) -> list[dict[str, Any]]:
        """The server's tools as OpenAI's ``tools`` list, the same dicts a ``ToolSet`` gives."""
        return self.toolset.specs()

    @property
    def names(self) -> list[str]:
        return self.toolset.names

    def __call__(self, request: ToolRequest) -> Iterable[Tool]:
        """A tool provider (``run_turn(..., providers=[server])``): offers every tool."""
        return list(self.toolset)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run one tool on the server; return its text. Raises ``McpToolError`` when the tool
        reports an error, ``McpServerError`` when the server does not answer."""
        session, loop = self._session, self._loop
        if session is None or loop is None or self._serving is None or self._serving.done():
            raise McpServerError(f"The MCP server {self.label} is not running{self._last_words()}")
        future = asyncio.run_coroutine_threadsafe(
            session.call_tool(name, arguments, read_timeout_seconds=self.call_timeout), loop)
        try:
            result = future.result(timeout=self.call_timeout + 5)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpServerError(f"The MCP server {self.label} did not answer a call to "
                                 f"{name!r} within {self.call_timeout:g} s") from None
        except MCPError as error:
            if error.code == mcp_types.REQUEST_TIMEOUT:
                raise McpServerError(f"The MCP server {self.label} did not answer a call to "
                                     f"{name!r} within {self.call_timeout:g} s") from error
            if error.code != mcp_types.CONNECTION_CLOSED:
                raise McpServerError(f"The MCP server {self.label} refused a call to {name!r}: "
                                     f"{error.message}") from error
            self._session = None  # gone for good: later calls say so at once
            raise McpServerError(f"The MCP server {self.label} stopped during a call to "
                                 f"{name!r}{self._last_words()}") from error
        except Exception as error:
            raise McpServerError(f"The MCP server {self.label} failed during a call to {name!r}: "
                                 f"{_describe(error)}{self._last_words()}") from error
        text = "\n".join(_content_text(block) for block in result.content)
        if result.is_error:
            raise McpToolError(text or "the server reported an error and gave no text")
        if not text and result.structured_content is not None:
            return result.structured_content  # rendered as JSON for the model
        return text

    # --- Error messages ----------------------------------------------------------------------

    def _startup_error(self, error: BaseException) -> str:
        if isinstance(error, McpServerError):
            return str(error)
        if isinstance(error, concurrent.futures.TimeoutError):
            return f"The MCP server {self.label} did not start within {self.startup_timeout:g} s"
        step, cause = (error.step, error.cause) if isinstance(error, _StartupFailed) else ("start", error)
        if isinstance(cause, OSError) and step == "start":
            return f"Cannot start the MCP server {self.label}: {_describe(cause)}"
        if isinstance(cause, TimeoutError):
            return (f"The MCP server {self.label} did not answer {step} within "
                    f"{self.startup_timeout:g} s{self._last_words()}")
        if "Connection closed" in str(cause):
            return (f"The MCP server {self.label} exited before it answered {step}"
                    f"{self._last_words()}")
        return (f"The MCP server {self.label} failed at {step}: {_describe(cause)}"
                f"{self._last_words()}")

    def _last_words(self) -> str:
        """The last lines the server wrote on stderr, which usually say why it stopped."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return f". Its stderr ends with: {' / '.join(lines[-3:])[-400:]}" if lines else ""

    def __repr__(self) -> str:
        state = "running" if self._session is not None else "stopped"
        return f"McpTools({self.label}, {state}, {self.names})"


class _StartupFailed(Exception):
    def __init__(self, step: str, cause: BaseException):
        super().__init__(step, cause)
        self.step, self.cause = step, cause


async def _list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every tool, following the pages a large server may split its listing into."""
    result = await session.list_tools()
    tools = list(result.tools)
    while result.next_cursor:
        result = await session.list_tools(
            params=mcp_types.PaginatedRequestParams(cursor=result.next_cursor))
        tools.extend(result.tools)
    return tools


def _innermost(error: BaseException) -> BaseException:
    """The first real error inside the exception groups that anyio's task groups wrap it in."""
    while getattr(error, "exceptions", None):  # an ExceptionGroup (a backport's on Python 3.10)
        error = error.exceptions[0]
    return error


def _describe(error: BaseException) -> str:
    error = _innermost(error)
    if type(error).__name__ == "ValidationError":  # pydantic: the listing has the wrong shape
        first = error.errors()[0] if error.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"the reply does not follow the protocol ({where}: {first.get('msg', error)})"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _content_text(block: Any) -> str:
    """A content block as text: text as it is, anything else named by its kind."""
    if isinstance(block, mcp_types.TextContent):
        return block.text
    return f"[{getattr(block, 'type', 'content')} content]"
