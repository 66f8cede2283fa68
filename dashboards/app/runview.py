"""Views of a Run's results that re-render only when what they show changes.

A ``pn.panel(explorer.some_view)`` re-renders on every change of the parameters it depends
on. For the views of a Run (heavy results, or a "press Run" message when the settings no
longer match them) that means replacing whole plots on every slider step, which costs
latency and, with HoloViews panes updating in the same event, can hold back the live plots'
updates. :func:`run_results` shows the same views but rebuilds them only when their state
(e.g. which result is current, or none) changes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

import panel as pn
import param


def run_results(explorer: param.Parameterized, watch: Iterable[str],
                state: Callable[[], Hashable], build: Callable[[], list],
                **column_kw) -> pn.Column:
    """A column of ``build()``, rebuilt when ``state()`` changes after a change of ``watch``."""
    column = pn.Column(*build(), **column_kw)
    shown = [state()]

    def refresh(*_events) -> None:
        now = state()
        if now != shown[0]:
            shown[0] = now
            column.objects = build()

    explorer.param.watch(refresh, list(watch))
    return column
