"""Landing page of ``icml26 serve``: every paper, its status and a link to its app."""

from __future__ import annotations

import panel as pn

from icml26 import papers
from icml26.dashboards.app import perf


def index_markdown() -> str:
    rows = ["| paper | title | arXiv | status |", "|---|---|---|---|"]
    for p in papers.PAPERS:
        name = f"[{p.slug}](./{p.slug})" if p.built else p.slug
        arxiv = f"[{p.arxiv}]({p.url})" if p.arxiv else "—"
        rows.append(f"| {name} | {p.title} | {arxiv} | {p.status} |")
    return "\n".join(rows)


def create_index() -> pn.viewable.Viewable:
    pn.extension()
    perf.install()
    done, built = len(papers.reproduced()), len(papers.built())
    return pn.Column(pn.pane.Markdown(
            "# icml26: ICML 2026 papers, reproduced and explorable\n\n"
            f"{done} of {len(papers.PAPERS)} papers are reproduced and {built - done} built "
            "but blocked (a binding claim fails; the app says which); each link opens its "
            "explorer. Every claim and whether it held: `icml26 claims`; how often each "
            "holds over many seeds (Dask, live): [claim robustness](./robustness).\n\n"
            + index_markdown(), sizing_mode="stretch_width"), sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_index().servable()
