"""The parts of the app's page, one module per part; ``app.py`` puts them together.

These modules draw widgets with Streamlit and nothing more: whatever can be worked out without
a page (reaching a model, reading inputs, running jobs, shaping tables) is in ``toolkit.app``,
where the tests reach it directly.

- ``experiment``       the Experiment tab: build an experiment, run it, follow its progress
- ``experiment_form``  the form's harder widgets: values to compare, fixed settings, custom texts
- ``run_view``         one stored run: rates, charts, and every trial's request and reply
- ``history``          the History tab: past runs side by side, a CSV or run file export, an import
- ``playground``       the Playground tab: chat with demo tools and see every round of the loop

The folder is not called ``pages`` on purpose: Streamlit would turn a ``pages/`` folder next
to ``app.py`` into extra pages of a multipage app.
"""
