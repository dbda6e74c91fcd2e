"""``show``: print a value as the JSON that travels over the wire; ``charts_also_as_png``:
save every chart as a picture too.

Lessons and labs print requests, replies and schemas all the time; one helper keeps them
printed the same way everywhere. Pydantic models and the ``openai`` client's reply objects are
turned into plain dicts first, so what you see is what was (or will be) sent.

A plotly chart in a notebook is a piece of JSON that JavaScript draws; where no JavaScript runs
(a web viewer that only shows a notebook's saved outputs) it is blank. ``charts_also_as_png``
makes every chart carry a PNG beside it, drawn by kaleido in a headless Chrome or Chromium;
Jupyter still shows the interactive chart, and a viewer that cannot draws the picture.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["charts_also_as_png", "show"]


def _plain(value: Any) -> Any:
    # The openai client's replies and our own pydantic models both have model_dump().
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    return value


def show(value: Any, limit: int | None = 2000) -> None:
    """Print ``value`` as indented JSON (non-ASCII kept readable), cut after ``limit``
    characters so that one long schema does not bury the rest of the page."""
    text = json.dumps(_plain(value), indent=2, ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n... (cut: {len(text) - limit} more characters)"
    print(text)


_PNG_RENDERER = "png_if_possible"


def charts_also_as_png() -> None:
    """From now on, every plotly figure this kernel displays carries a PNG copy beside the
    interactive chart. Where the copy cannot be drawn (kaleido is not installed, or it finds no
    Chrome or Chromium) the chart is shown interactive only, with one note saying why."""
    import plotly.io as pio
    from plotly.io.base_renderers import PngRenderer  # plotly's own PNG renderer, kaleido-backed

    class PngIfPossible(PngRenderer):
        noted = False

        def to_mimebundle(self, fig_dict):
            try:
                return super().to_mimebundle(fig_dict)
            except Exception as error:  # a missing picture must never cost the learner the chart
                if not PngIfPossible.noted:
                    PngIfPossible.noted = True
                    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                    print(f"(Charts are interactive only here, with no PNG copy: {reason})")
                return {}

    # Widths and heights as plotly's own defaults, and twice the pixels, so the picture stays sharp.
    pio.renderers[_PNG_RENDERER] = PngIfPossible(scale=2)
    names = (pio.renderers.default or "plotly_mimetype").split("+")
    if _PNG_RENDERER not in names:  # calling it twice adds the picture once
        pio.renderers.default = "+".join(names + [_PNG_RENDERER])
