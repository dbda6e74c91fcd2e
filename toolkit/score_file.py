"""Scoring a file of recorded tool calls against a suite: the names, kept importable from here.

``score_file``, ``format_table``, ``CallsFileError`` and the command line ``main`` live in
:mod:`toolkit.scoring`, next to the ``check`` they use; the command is run as
``python -m toolkit.scoring`` and documented in ``data/README.md``.
"""
from __future__ import annotations

from .scoring import CallsFileError, format_table, main, score_file

__all__ = ["CallsFileError", "score_file", "format_table", "main"]
