"""``icml26 report``: a static site of every built paper's notebook, readable offline.

Each notebook is executed at quick scale through the Jupyter machinery (nbclient, the shared
``ICML26_CACHE``) and converted to HTML (nbconvert's ``basic`` template inside our own page,
so no require.js or MathJax from a CDN). The notebooks load BokehJS, HoloViews and Panel
inline, so the plots stay interactive from ``file://``; the few stylesheets Panel's layouts
reference on its CDN are copied next to the pages and the links rewritten; equations are
typeset with the KaTeX that ships inside Panel's wheel. The live explorer cell needs a server:
its output is replaced by a note saying how to run it. A notebook that fails does not stop
the others: its page shows the error (naming the cell) and the index marks it.

This is the test command's only execution of the notebooks: next to the pages it writes each
notebook as executed (``<slug>.ipynb``, stopped at the failing cell if one failed) and
``report.json`` (what was built, what failed); ``tests/test_executed_notebooks.py`` then checks
that no cell raised and that every ``# NBVAL_CHECK_OUTPUT`` cell (the claim table) equals the
committed output under ``tests/nbval_sanitize.cfg``, as nbval did.
"""

from __future__ import annotations

import datetime
import html
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from icml26 import claims as ledger
from icml26 import papers, status_table

PANEL_CDN = re.compile(r"https://cdn\.holoviz\.org/panel/[^/]+/dist/([^\"')?\s]+)(\?v=[^\"')\s]*)?")
EXPLORER_CELL = re.compile(r"^\s*(\w+\.)?Explorer\(", re.M)
CELL_TIMEOUT_S = 900
#: the build's record next to the pages: {"complete": bool, "papers": {slug: {...}}}
MANIFEST = "report.json"

#: what our pages add to nbconvert's "lab" page: KaTeX from Panel's wheel, a link home
HEAD = """<link rel="stylesheet" href="static/katex/katex.min.css">
<script src="static/katex/katex.min.js"></script>
<script src="static/katex/contrib/auto-render.min.js"></script>
<script>document.addEventListener("DOMContentLoaded", () => renderMathInElement(document.body,
  {delimiters: [{left: "$$", right: "$$", display: true},
                {left: "$", right: "$", display: false}], throwOnError: false}));</script>
<style>.failed { color: #b00; } .note { background: #eef5ff; padding: .6em; }
 body { max-width: 1300px; margin: 1em auto; } table { border-collapse: collapse; }
 td, th { border: 1px solid #ddd; padding: 2px 8px; }
 .widget { display: flex; gap: .5em; align-items: center; font-family: monospace; }</style>
"""
#: script tags that load from a CDN (require.js, MathJax, the widget manager): not needed here
CDN_SCRIPT = re.compile(r'<script[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>', re.S)
FONT_FACE = re.compile(r"@font-face\{[^}]*\}")
MATHJAX_CONFIG = re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S)


def plain_page(title: str, body: str) -> str:
    """A plain page of ours (the index, a failed notebook)."""
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title>{HEAD}</head><body>{body}</body></html>")


@dataclass
class PaperPage:
    slug: str
    ok: bool
    seconds: float
    error: str = ""
    held: str = ""


def _panel_dist() -> Path:
    import panel

    return Path(panel.__file__).parent / "dist"


def _copy_static(out: Path, used: set[str]) -> None:
    """KaTeX and the Panel stylesheets the pages link to, next to the pages."""
    dist = _panel_dist()
    katex = next((dist / "bundled" / "katex").glob("katex@*/dist"))
    shutil.copytree(katex, out / "static" / "katex", dirs_exist_ok=True)
    # Panel's wheel ships KaTeX without its font files: typeset with the system's serif
    # fonts rather than ask for files that are not there
    css = out / "static" / "katex" / "katex.min.css"
    css.write_text(FONT_FACE.sub("", css.read_text()))
    for rel in used:
        src = dist / rel
        if src.is_file():
            dst = out / "static" / "panel" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)


def execute(slug: str):
    """The paper's notebook, executed at quick scale (raises on a failing cell)."""
    import nbformat

    path = notebook_path(slug)
    nb = nbformat.read(path, as_version=4)
    run_notebook(nb, path.parent)
    drop_empty_outputs(nb)
    return nb


def drop_empty_outputs(nb) -> None:
    """Remove display outputs with no data (HoloViews and tqdm send some, two per figure or
    bar: nothing to show, and nbconvert warned "mimetype(s) dict_keys([]) is not able to be
    represented" for each, 19 warnings in a report)."""
    for cell in nb.cells:
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if o.get("output_type") not in
                            ("display_data", "execute_result") or o.get("data")]


def run_notebook(nb, cwd: Path) -> None:
    """Execute ``nb`` in place in a kernel of this environment, from ``cwd`` (nbclient: stops
    at the first cell that raises, whose error output it records, and raises)."""
    from nbclient import NotebookClient

    # the kernel logs only errors: its warning that a local kernel talks over TCP without
    # encryption (a kernel on this machine, for this process) said nothing to act on
    NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", store_widget_state=True,
                   extra_arguments=["--IPKernelApp.log_level=ERROR"],
                   resources={"metadata": {"path": str(cwd)}}).execute()


def failed_cell(nb) -> str:
    """``cell I (nbval's Cell K) `first line`: Error: value`` for the first cell of ``nb``
    with an error output, or "" (cell I counts every cell, nbval's K the code cells)."""
    code = -1
    for i, cell in enumerate(nb.cells):
        code += cell.cell_type == "code"
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = next((ln for ln in cell.source.splitlines() if ln.strip()), "")
                return (f"cell {i} (nbval's Cell {code}) `{first[:80]}`: "
                        f"{out.get('ename', '?')}: {out.get('evalue', '')}")
    return ""


#: the comment that makes nbval compare a cell's output with the committed one
CHECK_OUTPUT = "# NBVAL_CHECK_OUTPUT"


def refresh_outputs(slug: str) -> list[int]:
    """Execute ``slug``'s notebook and commit only the outputs of its ``# NBVAL_CHECK_OUTPUT``
    cells (the claim table): every other cell is left without outputs. Returns the indices of
    the pinned cells. The test command executes the notebook once (``icml26 report``) and
    ``tests/test_executed_notebooks.py`` fails when a pinned output differs, so a change that
    moves a claim must refresh its table (run this with ``OMP_NUM_THREADS=1``, as CI does:
    values depend on the thread count)."""
    import nbformat

    path = notebook_path(slug)
    ran = execute(slug)
    nb = nbformat.read(path, as_version=4)
    if [c.source for c in nb.cells] != [c.source for c in ran.cells]:
        raise RuntimeError(f"{path} changed while it was executed; run again")
    pinned = []
    for i, (cell, done) in enumerate(zip(nb.cells, ran.cells)):
        if cell.cell_type != "code":
            continue
        marked = any(line.strip() == CHECK_OUTPUT for line in cell.source.splitlines())
        # nbval skips a cell without an execution count ("unrun") and fails one with outputs
        cell.outputs = list(done.outputs) if marked else []
        cell.execution_count = done.execution_count if marked else None
        if marked:
            pinned.append(i)
    if not pinned:
        raise ValueError(f"{path}: no cell is marked {CHECK_OUTPUT!r}")
    nbformat.write(nb, path)
    return pinned


def notebook_path(slug: str) -> Path:
    path = Path(papers.get(slug).notebook)
    return path if path.is_absolute() else Path(__file__).resolve().parents[2] / path


def _explorer_note(nb, slug: str) -> None:
    import nbformat

    note = (f'<p class="note">The live explorer needs a running server: '
            f"<code>icml26 serve</code>, then open <code>http://127.0.0.1:5006/{slug}</code>."
            f"</p>")
    for cell in nb.cells:
        if cell.cell_type == "code" and EXPLORER_CELL.search(cell.source):
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": note})]


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def static_widgets(nb) -> None:
    """Each widget output (the notebooks' tqdm bars) drawn as HTML from the widget's final
    state, which the execution recorded. The report has no widget manager, and a widget
    output's text/plain is the widget when it was displayed: a tqdm bar frozen at "0/5".
    Outputs of widgets drawn here lose their widget view, and the notebook its widget state
    (nbconvert would load a widget manager from a CDN for it)."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            drawn = view and _widget_html(state, view.get("model_id", ""))
            if drawn:
                output["data"] = {"text/html": drawn}
    nb.metadata.pop("widgets", None)


def _widget_html(state: dict, model_id: str) -> str | None:
    """A box of HTML, label and progress widgets as static HTML (None for other widgets)."""
    model = state.get(model_id)
    if model is None:
        return None
    name, s = model["model_name"], model["state"]
    if name in ("HBoxModel", "VBoxModel"):
        parts = [_widget_html(state, c.removeprefix("IPY_MODEL_")) for c in s.get("children", [])]
        return None if None in parts else f'<div class="widget">{"".join(parts)}</div>'
    if name == "HTMLModel":  # HTML already (tqdm writes &lt; for <)
        return f"<span>{s.get('value', '')}</span>"
    if name == "LabelModel":
        return f"<span>{html.escape(str(s.get('value', '')))}</span>"
    if name in ("FloatProgressModel", "IntProgressModel"):
        return f'<progress value="{s.get("value", 0)}" max="{s.get("max", 100)}"></progress>'
    return None


def to_html(nb, title: str) -> tuple[str, set[str]]:
    """nbconvert's "lab" page without its CDN scripts, Panel's stylesheets local, KaTeX."""
    from nbconvert import HTMLExporter

    text, _ = HTMLExporter(template_name="lab").from_notebook_node(
        nb, resources={"metadata": {"name": title}})
    text = MATHJAX_CONFIG.sub("", CDN_SCRIPT.sub("", text))
    used = {m.group(1) for m in PANEL_CDN.finditer(text)}
    text = PANEL_CDN.sub(lambda m: f"static/panel/{m.group(1)}", text)
    home = '<p><a href="index.html">&larr; all papers</a></p>'
    text = text.replace("</head>", HEAD + "</head>", 1)
    text = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + home, text, count=1)
    return text, used


def executed(slug: str) -> tuple[object, str, float]:
    """``(notebook, error text, seconds)`` of executing ``slug``'s notebook (one task: runs in
    this process or on a Dask worker). On a failure the notebook is as far as it ran (the
    failing cell's error output included; None if it could not be read) and the error text
    starts with the failing cell."""
    import nbformat

    start, nb = time.perf_counter(), None
    try:
        path = notebook_path(slug)
        nb = nbformat.read(path, as_version=4)
        run_notebook(nb, path.parent)
        return nb, "", time.perf_counter() - start
    except Exception as e:  # noqa: BLE001 - one failed notebook must not stop the others
        where = failed_cell(nb) if nb is not None else ""
        error = f"{where}\n\n" if where else ""
        return nb, f"{error}{type(e).__name__}: {e}", time.perf_counter() - start


def build(out: Path, slugs: list[str] | None = None, progress: bool = True,
          workers: int = 1, scheduler: str | None = None) -> list[PaperPage]:
    """Write ``out/index.html`` and one page per built paper; returns what happened.

    The notebooks execute one after another here, or as tasks on Dask when ``workers > 1``
    (a LocalCluster of that many processes) or a ``scheduler`` address is given; the pages
    are written here either way."""
    import nbformat
    from tqdm.auto import tqdm

    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    out.mkdir(parents=True, exist_ok=True)
    chosen = [papers.get(s) for s in slugs] if slugs else papers.built()
    bar = tqdm(total=len(chosen), desc="notebooks", disable=not progress)
    runs = {}
    for slug, run in _executions([p.slug for p in chosen], workers, scheduler):
        runs[slug] = run
        bar.update()
    bar.close()
    pages, used = [], set()
    for paper in chosen:
        nb, error, seconds = runs[paper.slug]
        result = PaperPage(paper.slug, not error, seconds, error=error)
        executed_path = out / f"{paper.slug}.ipynb"
        executed_path.unlink(missing_ok=True)  # never leave a previous build's behind
        try:
            if nb is not None:  # as executed (widget state kept): the notebook check reads it
                nbformat.write(nb, executed_path)
            if result.ok:
                _explorer_note(nb, paper.slug)
                static_widgets(nb)
                text_page, refs = to_html(nb, paper.title)
                used |= refs
                result.held = _held(paper)
        except Exception as e:  # noqa: BLE001 - one failed page must not stop the others
            result.ok, result.error = False, f"{type(e).__name__}: {e}"
        if not result.ok:
            text_page = plain_page(paper.title, (
                f"<p><a href='index.html'>&larr; all papers</a></p>"
                f"<h1>{html.escape(paper.title)}</h1><p class='failed'>The notebook failed:"
                f"</p><pre>{html.escape(_clip(result.error))}</pre>"))
        (out / f"{paper.slug}.html").write_text(text_page)
        pages.append(result)
    _copy_static(out, used)
    (out / "index.html").write_text(index_page(pages))
    write_manifest(out, pages, complete=not slugs)
    return pages


def _clip(text: str, n: int = 5000) -> str:
    """``text``, its middle cut when longer than ``n`` (the failing cell is named first, the
    traceback ends last)."""
    return text if len(text) <= n else f"{text[:600]}\n[...]\n{text[600 - n:]}"


def write_manifest(out: Path, pages: list[PaperPage], complete: bool) -> None:
    """``out/report.json``: whether every built paper was asked for, and each page's result
    (``notebook``: the executed notebook's file name, None when none was written)."""
    record = {"complete": complete, "papers": {
        p.slug: {"ok": p.ok, "seconds": round(p.seconds, 1), "error": p.error,
                 "notebook": f"{p.slug}.ipynb" if (out / f"{p.slug}.ipynb").exists() else None}
        for p in pages}}
    (out / MANIFEST).write_text(json.dumps(record, indent=1))


def _executions(slugs: list[str], workers: int, scheduler: str | None):
    """``(slug, executed(slug))`` as each notebook finishes."""
    if workers <= 1 and not scheduler:
        for slug in slugs:
            yield slug, executed(slug)
        return
    from distributed import as_completed

    from icml26 import sweep

    client = sweep.connect(workers=workers, scheduler=scheduler, dashboard=None)
    try:
        futures = {client.submit(executed, slug, key=f"notebook-{slug}", pure=False): slug
                   for slug in slugs}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        sweep.close(client)


def _held(paper) -> str:
    """Expected claims held at seed 0 (the notebook filled the cache, so this is fast)."""
    try:
        found = paper.claims(seed=0)
    except Exception as e:  # noqa: BLE001
        return f"claims failed: {type(e).__name__}"
    expected = [c for c in found if c.expected]
    return (f"{sum(c.holds for c in expected)}/{len(expected)} expected claims hold "
            f"({len(ledger.unexpected_failures(found))} unexpected failures)")


def index_page(pages: list[PaperPage]) -> str:
    from importlib.metadata import version

    done = {p.slug: p for p in pages}
    status_rows = {r.slug: r for r in status_table.rows()}  # the README's and the index's rows
    rows = []
    for paper in papers.PAPERS:
        st = status_rows[paper.slug]
        page = done.get(paper.slug)
        if page is None:
            link, result = html.escape(paper.slug), "—"
        elif page.ok:
            link = f'<a href="{paper.slug}.html">{paper.slug}</a>'
            result = f"{html.escape(page.held)}; notebook {page.seconds:.0f} s"
        else:
            link = f'<a href="{paper.slug}.html">{paper.slug}</a>'
            result = f'<span class="failed">notebook failed: {html.escape(page.error[:120])}</span>'
        why = "" if st.word == "reproduced" else html.escape(st.reason) + (
            f' (<a href="{paper.slug}.html#Claims">claims</a>)' if page is not None else "")
        heads = "<br>".join(html.escape(h) for h in st.headlines)
        rows.append(f"<tr><td>{link}</td><td>{html.escape(paper.title)}</td>"
                    f"<td>{html.escape(st.label)}</td><td>{heads}</td><td>{why}</td>"
                    f"<td>{result}</td></tr>")
    body = (f"<h1>icml26: ICML 2026 papers, reproduced small</h1><p>Version "
            f"{version('icml26')}, built {datetime.date.today().isoformat()}. Each page is the "
            f"paper's notebook executed at quick scale; claims at seed 0. Status: "
            f"{html.escape(status_table.summary(list(status_rows.values())))}, computed from "
            "the claims' roles, units and committed per-seed values.</p><table><tr>"
            "<th>paper</th><th>title</th><th>status</th><th>headline claims (estimate over "
            "the committed seeds)</th><th>why</th><th>this run</th></tr>"
            + "".join(rows) + "</table>")
    return plain_page("icml26 report", body)
