"""The Tool-Calling Lab toolkit: the small library that the lessons build up by hand.

One idea per module:

- ``messages``   chat messages and tool calls as OpenAI spells them
- ``schema``     a Python function's signature + docstring -> JSON Schema; hidden context
- ``tools``      tools, tool sets and providers (which tools this turn offers)
- ``json_schema`` is this dict a valid JSON Schema? (one place that asks ``jsonschema``)
- ``protocol``   the string protocol: ``<tool>{json}</tool>`` in text, regex extraction, JSON repair
- ``protocol_grammar`` the string protocol under a GBNF grammar: a reply that can only be one call
- ``repair``     fixing almost-JSON: a small hand-written repair, and the ``json_repair`` package
- ``client``     one factory for every backend (embedded model or any OpenAI-compatible endpoint)
- ``fake``       a scripted model for tests and exact edge cases (never for measurements)
- ``loop``       runs a conversation turn to the end: calls tools, feeds results back
- ``turn_options`` ``TurnOptions``: everything a turn can be told, with its defaults, in one object
- ``round_trip`` one round of the loop in either protocol: request, the reply's calls, results
- ``execution``  runs a reply's calls: one by one or at once, time-outs, failures as text
- ``trace``      the execution record of a turn: readable text and JSON lines
- ``errors_for_model`` failed calls as short, sanitised text for the model; long results truncated
- ``lab_error``  ``LabError``: a problem worded for the learner (wrong key, unreachable endpoint, ...)
- ``retrieval``  picking the few tools that fit a request, by text similarity
- ``tool_groups`` too many tools: a router picks a group of tools, the group's agent the tool
- ``demo_tools`` a few small tools for the app's playground
- ``responses_api`` chat-style requests sent over OpenAI's Responses API, replies read back
- ``stream_calls`` a streamed reply: each tool started as soon as its call is complete
- ``mcp_server`` the demo tools served over MCP on stdio: ``python -m toolkit.mcp_server``
- ``mcp_tools``  an MCP server's tools as lab tools: start it, list its tools, call through it
- ``display``    ``show``: print a request, reply or schema as the JSON that travels
- ``engine``     the embedded model behind ``/v1/chat/completions``: template, grammar, decisions,
                 parser and the HTTP endpoint (``engine.serve``); the model names, in
                 ``toolkit.engine``. It imports nothing from the client, the loop or the bench
- ``bench``      measuring tool calling: suites, BFCL's data, scoring, trials, experiments, the
                 run database and charts (its own map is in ``toolkit/bench/__init__.py``)
- ``app``        what the app needs besides widgets (no Streamlit, so tests reach it):
                 backends, the scripted test model, factors, inputs, jobs, tables
"""
