"""Landing page of ``icml26 serve``: every paper, its status and a link to its app."""

from __future__ import annotations

import panel as pn

from icml26 import papers, status_table
from icml26.dashboards.app import perf


def index_markdown() -> str:
    """The papers table of the README and ``icml26 list``, linked to the apps."""
    return status_table.markdown(link="./{slug}")


def create_index() -> pn.viewable.Viewable:
    pn.extension()
    perf.install()
    return pn.Column(pn.pane.Markdown(
            "# icml26: ICML 2026 papers, reproduced and explorable\n\n"
            f"All {len(papers.built())} papers are built, tested and served; each link opens "
            "its explorer. A status is computed, never typed: `reproduced` when every headline, "
            "mechanism and check claim holds over the seeds 0-15 (a property of each run on "
            ">= 95% of them; a comparison by the 95% interval of its mean), `partial` when a "
            "headline does not, `blocked` when a mechanism claim or a check does not, `pending` "
            "while the seeds 0-15 are not all swept. Every claim and "
            "whether it held: `icml26 claims`; how often each holds over many seeds (Dask, "
            "live): [claim robustness](./robustness).\n\n"
            + index_markdown(), sizing_mode="stretch_width"), sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_index().servable()
