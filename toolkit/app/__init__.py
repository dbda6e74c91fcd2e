"""What the app (``app.py`` and ``app_pages/``) needs besides widgets.

Nothing here imports Streamlit, so the tests reach it directly and the page code stays a thin
view. The page keeps only plain data in its session (ids, texts, numbers); the objects behind
them (a running job, the run database) live in ``jobs``, one per process.

- ``backends``       which model to ask: the sidebar's choice -> a backend; Test connection
- ``scripted_model`` ``LAB_APP_BACKEND=scripted``: a stand-in model so the app can be tested
- ``factors``        the settings an experiment can compare, and how widgets show their values
- ``inputs``         reading what the learner typed (numbers, a JSON schema), with clear errors
- ``jobs``           experiments running in the background; the shared run database
- ``tables``         a stored run as the tables and labels the page shows
"""
