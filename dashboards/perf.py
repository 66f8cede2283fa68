"""Cost of a live update: three fixes for what profiling found (py-spy on the server,
the DevTools CPU profile in Chromium).

1. Skip Bokeh's full model-graph walk when a frozen update changed no references.

Bokeh recomputes the set of all models in a document (a walk over every model reachable from
its roots) whenever the outermost ``document.models.freeze()`` exits, whether or not the
model graph changed. HoloViews wraps every plot update in such a freeze, so each slider step
pays a walk proportional to the size of the whole page: on this suite's multi-plot pages it
was about 70% of the server's time per update (py-spy, place_fields). Outside a freeze,
Bokeh itself relies on :meth:`DocumentModelManager.invalidate` — called by every property
change whose old or new value holds model references — to keep that set right; :func:`install`
makes a freeze rely on the same signal: it recomputes at the outermost exit only when
``invalidate`` was called inside, or when the document's roots changed (``add_root``,
``remove_root``, ``clear`` change ``roots`` inside a freeze without invalidating).

2. Turn off Bokeh's "expensive error diagnostics" (its documented setting
``BOKEH_PERFORM_ERROR_DIAGNOSTICS``). HoloViews probes every renderer for a ``data_source``
on every update (``dtype_fix_hook``) and swallows the AttributeError; with diagnostics on,
each miss builds a difflib "did you mean" message over all property names: ~14% of an
update's server time on the gsrq page. Only the text of such error messages changes.

3. Draw with the 2D canvas, not WebGL (HoloViews' default). Every plot here has at most a
few thousand glyphs, where WebGL gains nothing, and each WebGL plot pays a copy of its GL
canvas into the page's canvas on every repaint: in Chromium on this machine (software GL)
that copy was the largest single cost of a slider step on pages with several live plots
(CPU profile via the DevTools protocol), e.g. spurious_dpo 1.65x -> 1.22x the trivial app,
which gets the same setting.
"""

from __future__ import annotations

import param
from bokeh.document.models import DocumentModelManager
from bokeh.settings import settings

_installed = False


def install() -> None:
    """Patch :class:`DocumentModelManager` and set the setting, once per process."""
    global _installed
    if _installed:
        return
    settings.perform_error_diagnostics.set_value(False)
    from holoviews.plotting.bokeh import BokehRenderer

    BokehRenderer.webgl = False
    original_invalidate = DocumentModelManager.invalidate

    def _push_freeze(self) -> None:
        if self._freeze_count == 0:
            self._icml26_dirty = False
            doc = self._document()
            self._icml26_roots = tuple(doc.roots) if doc is not None else ()
        self._freeze_count += 1

    def _pop_freeze(self) -> None:
        self._freeze_count -= 1
        if self._freeze_count == 0:
            doc = self._document()
            roots = tuple(doc.roots) if doc is not None else ()
            if getattr(self, "_icml26_dirty", True) or roots != getattr(self, "_icml26_roots",
                                                                        None):
                self.recompute()

    def invalidate(self) -> None:
        if self._freeze_count:
            self._icml26_dirty = True
        else:
            original_invalidate(self)

    DocumentModelManager._push_freeze = _push_freeze
    DocumentModelManager._pop_freeze = _pop_freeze
    DocumentModelManager.invalidate = invalidate
    _installed = True


def settings_key(explorer: param.Parameterized) -> str:
    """A key of every parameter's current value, to memoise what a slider step computes once
    but several views (and the error check) ask for."""
    return repr(sorted(explorer.param.values().items()))
