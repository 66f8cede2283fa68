"""Server and browser settings of every served page, through documented settings only.

1. Bokeh's "expensive error diagnostics" off (its documented setting
   ``BOKEH_PERFORM_ERROR_DIAGNOSTICS``): HoloViews probes every renderer for a ``data_source``
   on every update and swallows the AttributeError; with diagnostics on, each miss builds a
   difflib "did you mean" message over all property names (~14% of an update's server time
   on the gsrq page, py-spy). Only the text of such error messages changes.
2. HoloViews plots drawn with the 2D canvas, not WebGL (the renderer's documented ``webgl``
   parameter): every plot here has at most a few thousand glyphs, where WebGL gains nothing,
   and each WebGL plot pays a copy of its GL canvas on every repaint (software GL in Chromium
   on this machine: the largest single cost of a slider step on multi-plot pages). The live
   figures (:mod:`.live`) set ``output_backend="canvas"`` themselves.
3. Served apps run their callbacks on a pool of threads (Panel's documented ``nthreads``, set
   by :func:`serve`), so a long Run never blocks the server's event loop: other pages and
   sessions keep answering.

The earlier patch of Bokeh's document model manager (it skipped a model-graph walk per
HoloViews update) is gone: it replaced private methods process-wide. The live figures avoid
that walk with public APIs instead (owned data sources, no HoloViews pipeline per step).
"""

from __future__ import annotations

import holoviews as hv
import panel as pn
from bokeh.settings import settings

#: worker threads for callbacks (Panel's ``nthreads``): Runs of two sessions at once, plus
#: the slider steps of others
THREADS = 4


def install() -> None:
    """Apply the page settings (idempotent)."""
    settings.perform_error_diagnostics.set_value(False)
    hv.renderer("bokeh").webgl = False


def serve(apps: dict, **kwargs):
    """``pn.serve(apps, **kwargs)`` with callbacks on a thread pool (one per process)."""
    if not pn.config.nthreads:
        pn.config.nthreads = THREADS
    return pn.serve(apps, **kwargs)
