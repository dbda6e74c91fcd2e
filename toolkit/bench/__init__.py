"""The bench: measuring how well a model calls tools, on a scenario suite or on BFCL's data.

The lessons need none of this to teach tool calling; the app's Experiment tab, lesson 10 and
the benchmarks stand on it. From the suite to the chart:

- ``suite``           loading a suite: the shipped one (``scenarios/``, package data), a file of
                      your own, or a BFCL question file
- ``suite_model``     what a suite holds: ``SuiteTool`` (two descriptions), ``Case`` (messages
                      and an answer key), and ``Suite``, which hands out a trial's variants
                      (clear or vague descriptions, enums off, distractors)
- ``suite_checks``    checking a suite as a whole, every problem gathered into one error
- ``bfcl``            BFCL's question and answer files as a suite
- ``argument_checks`` BFCL's rules for one call's arguments: the schema, then the answer key
- ``verdict``         what a check says: selection right or not, arguments right or not, and why
- ``scoring``         checking a reply's calls against an answer key; ``python -m toolkit.bench.scoring``
                      scores a file of calls recorded elsewhere
- ``parameters``      arguments judged one parameter at a time, by kind of value (enum, free
                      text, number...), so an effect on one parameter shows on its own
- ``rates``           what many verdicts add up to: rates with Wilson intervals
- ``trials``          one trial: its settings and the exact request they make
- ``experiment``      plans a grid of trials, runs it on any backend, scores every reply;
                      ``python -m toolkit.bench.experiment`` (``experiment_cli``) runs one headless
- ``store``           every finished trial in SQLite, so nothing is lost and re-runs resume
- ``run_file``        one stored run as one file, exported on one machine and imported on
                      another, where its charts come back with no model asked
- ``charts``          plotly figures of the rates
- ``flatten``         object parameters as flat prefixed fields, and calls put back in the
                      nested shape (lesson 10 and ``benchmarks/flat_vs_nested.py``)
- ``effects``         what each setting did on each embedded model, measured once by
                      ``benchmarks/effects_table.py`` and kept in ``effects.json`` for the app

BFCL's multi-turn conversations, where the user speaks several times and the model acts on
simulated APIs whose state carries over, have four modules of their own:

- ``multi_turn_data``  the four categories' questions, answers and function documents
- ``multi_turn_apis``  the simulated APIs, imported from the wheel, called by name (never ``eval``)
- ``multi_turn_check`` BFCL's verdict by state after each turn, a verdict per turn, pass^k
- ``multi_turn_run``   a conversation run turn by turn with the loop; ``python -m
                      toolkit.bench.multi_turn_run`` runs a category and prints its rates
"""
