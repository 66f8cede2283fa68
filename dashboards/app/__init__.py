"""What every app shares: the Explorer base (settings alert, live figures, the Run), the
page, the index, the live figures, the page settings, the static report and the ``icml26``
command line.

The names below load lazily, so the command line (``icml26 claims``) never imports panel.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"Chart": "live", "Series": "live", "show": "live", "ExplorerBase": "page",
            "app_factory": "page", "cell_labels": "hvstyle", "message_plot": "page",
            "paper_page": "page", "rows": "layout", "run_chart": "layout"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
