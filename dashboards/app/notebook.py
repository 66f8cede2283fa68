"""The notebooks' extension cell: plots, Panel and HoloViews loaded for JupyterLab offline.

``pn.extension(inline=True)`` puts BokehJS and Panel's JavaScript in the notebook and turns
the stylesheets of what *Panel* displays into inline CSS. HoloViews (1.23) displays an element
through its own renderer, which leaves the stylesheets of the Panel layout it wraps the plot in
as links to Panel's CDN (``theme/default.css``, ``native.css``, ``listpanel.css``,
``loading.css``): four requests off the machine for every HoloViews output, blocked offline.
:func:`extension` loads both extensions and has HoloViews' notebook display go through
``pn.panel(obj)``, Panel's own display, which inlines them: the notebook requests nothing from
the network, in JupyterLab as in the static report.
"""

from __future__ import annotations

import holoviews as hv
import panel as pn


def _plottable(obj) -> bool:
    """Whether the current HoloViews backend draws ``obj`` (a Dataset or a bare Dimensioned
    object is not drawn: HoloViews prints its repr)."""
    renderer = hv.Store.renderers.get(hv.Store.current_backend)
    if renderer is None:
        return False
    try:
        renderer.plotting_class(obj)
    except Exception:  # noqa: BLE001 - HoloViews raises SkipRendering, KeyError, ...
        return False
    return True


def display_through_panel(obj):
    """HoloViews' ``html+js`` display hook: a drawable object as Panel displays it (inline
    stylesheets under ``pn.extension(inline=True)``), anything else as HoloViews would."""
    from holoviews.ipython.display_hooks import pprint_display

    if not _plottable(obj):
        return pprint_display(obj)
    return pn.panel(obj)._repr_mimebundle_()


def extension() -> None:
    """``hv.extension("bokeh", inline=True)`` and ``pn.extension(inline=True)`` (in the same
    cell: nbval's quirk), then HoloViews' display through Panel (:func:`display_through_panel`).
    Call it once, in the notebook's extension cell."""
    hv.extension("bokeh", inline=True, logo=False)  # the logo line ends in "ⓘ", a box in most fonts
    pn.extension(inline=True)
    hv.Store.set_display_hook("html+js", hv.core.dimension.LabelledData, display_through_panel)


def _plain(value):
    """``value`` with numpy scalars (also inside tuples and lists) as Python numbers, so it
    prints as ``0.05``, not ``np.float64(0.05)``."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", None) == 0 \
        else value


def settings(*cfgs):
    """Settings dataclasses (``config_for(SCALE)``) as a table of ``setting`` and ``value``:
    what the notebook runs, readable (a dataclass's repr is one long line). Several are
    indexed by their class name too; a nested dataclass's fields are rows of their own."""
    import dataclasses

    import pandas as pd

    def fields(obj, prefix=""):  # a nested dataclass gives its fields as "game.n_states"
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                yield from fields(value, f"{prefix}{f.name}.")
            else:
                yield f"{prefix}{f.name}", str(_plain(value))

    rows = [(type(cfg).__name__, *row) for cfg in cfgs for row in fields(cfg)]
    table = pd.DataFrame(rows, columns=["config", "setting", "value"])
    return table.set_index(["config", "setting"] if len(cfgs) > 1 else "setting") \
        .drop(columns=[] if len(cfgs) > 1 else ["config"])
