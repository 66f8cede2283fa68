"""The notebooks offline (issue 32): HoloViews output in a kernel links no stylesheet on Panel's
CDN once ``notebook.extension()`` ran (it does without it: the check can fail), every
notebook's extension cell uses it, a settings dataclass shows as a table of plain numbers, and
the report draws a tqdm bar from its final state (100%), not the "0/5" of its text fallback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from icml26 import papers
from icml26.dashboards.app import notebook, report

ROOT = Path(__file__).resolve().parents[2]
CDN = "cdn.holoviz.org"


def _run(cells: list[str]):
    """A scratch notebook of ``cells`` executed as the report executes one (nbclient, widget
    state kept)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True).execute()
    return nb


def _text(cell) -> str:
    return json.dumps(cell.get("outputs", []))


@pytest.fixture(scope="module")
def scratch():
    """One kernel: HoloViews output before and after ``notebook.extension()``, a tqdm bar."""
    return _run([
        'import holoviews as hv\nimport panel as pn\nimport numpy as np\n'
        'hv.extension("bokeh", inline=True)\npn.extension(inline=True)',
        'x = np.arange(5.0)\nhv.Curve((x, x), "step", "value")',  # 1: HoloViews' own display
        "from icml26.dashboards.app import notebook\nnotebook.extension()",
        'hv.Curve((x, x), "step", "value") + hv.Scatter((x, x), "step", "value")',  # 3
        'hv.Dataset((x, x), "step", "value")',  # 4: not drawn, shown as text
        'from tqdm.auto import tqdm\nwith tqdm(total=5, desc="fits") as bar:\n'
        "    for _ in range(5):\n        bar.update()",  # 5
    ])


def test_holoviews_output_links_no_cdn_stylesheet_after_the_helper(scratch):
    # the mutation: HoloViews' own display under pn.extension(inline=True) links Panel's CDN
    assert CDN in _text(scratch.cells[1]), "the scratch check no longer sees the CDN links"
    after = _text(scratch.cells[3])
    assert "text/html" in after and CDN not in after
    assert not re.search(r"https?://[^\"' ]+\.css", after), re.findall(r"https?://\S+css", after)
    assert ":Dataset" in _text(scratch.cells[4])  # what is not drawn keeps HoloViews' repr
    assert not [o for c in scratch.cells for o in c.get("outputs", [])
                if o.get("output_type") in ("error",) or o.get("name") == "stderr"]


def test_report_draws_a_progress_bar_from_its_final_state(scratch):
    import copy

    nb = copy.deepcopy(scratch)
    bar = _text(nb.cells[5])
    assert "0/5" in bar and report.WIDGET_VIEW in bar  # the text fallback is the first state
    report.static_widgets(nb)
    drawn = _text(nb.cells[5])
    assert report.WIDGET_VIEW not in drawn and "0/5" not in drawn, drawn
    assert "100%" in drawn and "5/5" in drawn and '<progress value=\\"5.0\\" max=\\"5.0\\">' \
        in drawn, drawn
    assert "widgets" not in nb.metadata


def test_a_widget_the_report_cannot_draw_keeps_its_output():
    import nbformat

    view = {"model_id": "m1", "version_major": 2, "version_minor": 0}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("display_data", data={report.WIDGET_VIEW: view,
                                                     "text/plain": "IntSlider(value=3)"})])])
    nb.metadata["widgets"] = {report.WIDGET_STATE: {"state": {
        "m1": {"model_name": "IntSliderModel", "state": {"value": 3}}}}}
    report.static_widgets(nb)
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "IntSlider(value=3)"


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_every_notebook_loads_the_extensions_through_the_helper(slug):
    sources = ["".join(c["source"]) for c in json.loads(
        report.notebook_path(slug).read_text())["cells"] if c["cell_type"] == "code"]
    code = "\n".join(sources)
    assert code.count("notebook.extension()") == 1, "the extension cell must call it once"
    assert not re.search(r"^\s*(hv|pn)\.extension\(", code, re.M), \
        "hv/pn.extension called directly: HoloViews would link Panel's CDN stylesheets"
    assert not any(s.strip().splitlines()[-1].strip() == "cfg" for s in sources if s.strip()), \
        "a bare cfg shows the dataclass's repr: notebook.settings(cfg)"


def test_settings_shows_plain_numbers():
    from dataclasses import dataclass

    import numpy as np

    @dataclass
    class Cfg:
        eps: tuple = tuple(np.linspace(0, 0.1, 3))  # np.float64 values, as np.linspace gives
        n: int = np.int64(4)

    table = notebook.settings(Cfg()).to_string()
    assert "np.float64" not in table and "np.int64" not in table
    assert "(0.0, 0.05, 0.1)" in table, table
    assert "np.float64" in repr(Cfg())  # what the table replaces


def test_settings_expands_a_nested_config():
    from dataclasses import dataclass, field

    @dataclass
    class GameConfig:
        tau: float = 0.3

    @dataclass
    class Cfg:
        game: GameConfig = field(default_factory=GameConfig)
        steps: int = 5

    table = notebook.settings(Cfg())
    assert list(table.index) == ["game.tau", "steps"] and "Config(" not in table.to_string()
