"""The Tool-Calling Lab toolkit: the small library that the lessons build up by hand.

One idea per module:

- ``messages``   chat messages and tool calls as OpenAI spells them
- ``schema``     a Python function's signature + docstring -> JSON Schema; hidden context
- ``tools``      tools, tool sets and providers (which tools this turn offers)
- ``json_schema`` is this dict a valid JSON Schema? (one place that asks ``jsonschema``)
- ``protocol``   the string protocol: ``<tool>{json}</tool>`` in text, regex extraction, JSON repair
- ``repair``     fixing almost-JSON: a small hand-written repair, and the ``json_repair`` package
- ``client``     one factory for every backend (embedded model or any OpenAI-compatible endpoint)
- ``fake``       a scripted model for tests and exact edge cases (never for measurements)
- ``loop``       runs a conversation turn to the end: calls tools, feeds results back
- ``round_trip`` one round of the loop in either protocol: request, the reply's calls, results
- ``execution``  runs a reply's calls: one by one or at once, time-outs, failures as text
- ``trace``      the execution record of a turn: readable text and JSON lines
- ``errors``     failed calls as short, sanitised text for the model; long results truncated
- ``engine``     the embedded model: template + grammar + parser behind ``/v1/chat/completions``
- ``serve``      the HTTP endpoint that serves the engine
- ``scoring``    BFCL-style checking of a reply's calls against an answer key
- ``argument_checks`` BFCL's rules for one call's arguments: the schema, then the answer key
- ``verdict``    what a check says: selection right or not, arguments right or not, and why
- ``rates``      what many verdicts add up to: rates with Wilson intervals, counts per reason
- ``score_file`` scoring a file of recorded calls, and ``python -m toolkit.scoring``
- ``suite``      scenario suites: loading their JSON files
- ``suite_model`` what a suite file holds: tools with two descriptions, cases, answer keys
- ``suite_checks`` checking a suite as a whole, every problem gathered into one error
- ``suite_variants`` ``Suite``: picking cases; clear or vague descriptions, enums off, distractors
- ``bfcl``       the BFCL importer: BFCL's question and answer files as a suite
- ``trials``     one experiment trial: settings (the variants) -> the exact request
- ``experiment`` plans a grid of trials and runs it on any backend
- ``store``      every finished trial in SQLite, so nothing is lost and re-runs resume
- ``experiment_cli`` ``python -m toolkit.experiment``: run an experiment headless, export CSV
- ``charts``     plotly figures for the app
- ``retrieval``  picking the few tools that fit a request, by text similarity
- ``demo_tools`` a few small tools for the app's playground
- ``responses_api`` chat-style requests sent over OpenAI's Responses API, replies read back
- ``stream_calls`` a streamed reply: each tool started as soon as its call is complete
- ``protocol_grammar`` a GBNF grammar for the ``<tool>`` string protocol, from the tools' schemas
- ``flatten``    object parameters as flat prefixed fields, and calls put back in the nested shape
- ``mcp_server`` the demo tools served over MCP on stdio: ``python -m toolkit.mcp_server``
- ``mcp_tools``  an MCP server's tools as lab tools: start it, list its tools, call through it
- ``display``    ``show``: print a request, reply or schema as the JSON that travels
- ``app``        what the app needs besides widgets (no Streamlit, so tests reach it):
                 backends, the scripted test model, factors, inputs, jobs, tables
"""
