"""The Tool-Calling Lab toolkit: the small library that the lessons build up by hand.

One idea per module:

- ``messages``   chat messages and tool calls as OpenAI spells them
- ``schema``     tools from Python functions (signature + docstring -> JSON Schema)
- ``protocol``   the string protocol: ``<tool>{json}</tool>`` in text, regex extraction, JSON repair
- ``repair``     fixing almost-JSON: a small hand-written repair, and the ``json_repair`` package
- ``client``     one factory for every backend (embedded model or any OpenAI-compatible endpoint)
- ``fake``       a scripted model for tests and exact edge cases (never for measurements)
- ``loop``       runs a conversation turn to the end: calls tools, feeds results back
- ``engine``     the embedded model: template + grammar + parser behind ``/v1/chat/completions``
- ``serve``      the HTTP endpoint that serves the engine
- ``scoring``    BFCL-style checking of calls against an answer key, Wilson intervals
- ``score_file`` scoring a file of recorded calls, and ``python -m toolkit.scoring``
- ``suite``      scenario files: loading and checking them
- ``bfcl``       the BFCL importer: BFCL's question and answer files as a suite
- ``experiment`` runs a grid of trials, stores every one in SQLite
- ``charts``     plotly figures for the app
"""
