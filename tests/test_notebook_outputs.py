"""The notebooks' committed claim tables (issue 33): each built paper's notebook pins its claim
table (a cell marked ``# NBVAL_CHECK_OUTPUT``, committed with its output by ``icml26 notebooks
--refresh-outputs``), CI re-executes it with nbval (``tests/run.sh``), and a committed value
whose verdicts differ from the computed ones fails. The measured column is masked by the
sanitizer (``tests/nbval_sanitize.cfg``: its values differ between machines in the 3rd-4th
digit); names, roles, targets, expected flags and verdicts are compared.

The static checks here are cheap (they read the files); the scratch-copy test runs nbval once
on one notebook whose committed table had one verdict changed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from icml26 import papers, status
from icml26.dashboards.app.report import CHECK_OUTPUT, notebook_path

ROOT = Path(__file__).resolve().parents[1]
SANITIZER = ROOT / "tests" / "nbval_sanitize.cfg"
BUILT = [p.slug for p in papers.built()]


def _cells(slug: str) -> list[dict]:
    return json.loads(notebook_path(slug).read_text())["cells"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def _pinned(cells: list[dict]) -> list[dict]:
    return [c for c in cells if c["cell_type"] == "code"
            and any(line.strip() == CHECK_OUTPUT for line in _source(c).splitlines())]


def _text(output: dict, mime: str) -> str:
    value = output["data"][mime]
    return value if isinstance(value, str) else "".join(value)


@pytest.mark.parametrize("slug", BUILT)
def test_notebook_commits_its_claim_table_and_nothing_else(slug):
    cells = _cells(slug)
    pinned = _pinned(cells)
    assert len(pinned) == 1, f"{slug}: one cell marked {CHECK_OUTPUT!r}, found {len(pinned)}"
    cell = pinned[0]
    assert _source(cell).rstrip().endswith("show_claims(claims)"), \
        f"{slug}: the pinned cell ends with show_claims(claims)"
    assert cell["execution_count"], f"{slug}: nbval skips a pinned cell without a count"
    results = [o for o in cell["outputs"] if o["output_type"] == "execute_result"]
    assert len(results) == 1 and {"text/plain", "text/html"} <= set(results[0]["data"]), \
        f"{slug}: the table is committed as text and HTML (a code host renders it)"
    others = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and c is not cell
              and c.get("outputs")]
    assert not others, f"{slug}: cells {others} commit outputs (only the claim table is pinned)"


@pytest.mark.parametrize("slug", BUILT)
def test_committed_claim_table_names_the_current_claims(slug):
    """Stale tables fail here without executing anything: a claim added, renamed, given a new
    target, role or expected flag changes the committed text (then refresh it)."""
    cell = _pinned(_cells(slug))[0]
    text = _text(next(o for o in cell["outputs"] if o["output_type"] == "execute_result"),
                 "text/plain")
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:]}
    specs = status.claim_specs(slug)
    for name, row in specs.items():
        assert name in rows, f"{slug}: claim {name} is missing from the committed table"
        _, got_role, got_unit, _measured, got_op, got_threshold, got_expected, _result = \
            rows[name]
        assert (got_role, got_unit, got_op) == (row.role, row.unit, row.op), (slug, name)
        assert float(got_threshold) == pytest.approx(row.threshold, rel=5e-4), (slug, name)
        assert got_expected == ("yes" if row.expected else "no"), (slug, name)


def _result(nb: dict) -> dict:
    cell = _pinned(nb["cells"])[0]
    return next(o for o in cell["outputs"] if o["output_type"] == "execute_result")


def _set(result: dict, mime: str, text: str) -> None:
    result["data"][mime] = text


def _sanitized(text: str) -> str:
    """``text`` as nbval compares it under tests/nbval_sanitize.cfg (nbval's own parser)."""
    from nbval.plugin import get_sanitize_patterns

    for regex, replace in get_sanitize_patterns(SANITIZER.read_text()):
        text = re.sub(regex, replace, text)
    return text


def _first_row_measured(text: str) -> str:
    return text.splitlines()[2].split()[3]  # claim, role, unit, measured


def test_sanitizer_masks_measured_values_and_keeps_verdicts():
    """Another machine's measured values (other digits, another column width) compare equal;
    a flipped verdict, in the text or the HTML table, does not."""
    result = _result(json.loads(notebook_path("spurious_dpo").read_text()))
    for mime in ("text/plain", "text/html"):
        text = _text(result, mime)
        value = _first_row_measured(_text(result, "text/plain"))
        other = text.replace(f" {value} " if mime == "text/plain" else f">{value}<",
                             f" {value}123 " if mime == "text/plain" else f">{value}123<", 1)
        assert other != text and _sanitized(other) == _sanitized(text), mime
        flipped = text.replace("holds", "FAILS", 1)
        assert flipped != text and _sanitized(flipped) != _sanitized(text), mime


@pytest.mark.slow
def test_nbval_fails_when_a_committed_verdict_differs(tmp_path):
    """A scratch copy of one notebook with one committed verdict changed (text and HTML) fails
    nbval on exactly that cell; every other cell passes (so the failure is the comparison, not
    the run)."""
    slug = "spurious_dpo"  # the fastest notebook (its claims are analytic and cached)
    nb = json.loads(notebook_path(slug).read_text())
    result = _result(nb)
    for mime in ("text/plain", "text/html"):
        _set(result, mime, _text(result, mime).replace("holds", "FAILS", 1))
    copy = tmp_path / f"{slug}.ipynb"
    copy.write_text(json.dumps(nb))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "ICML26_SCALE": "quick"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(copy), "--nbval-lax", "--nbval-current-env",
         "--nbval-sanitize-with", str(SANITIZER), "-p", "no:cacheprovider", "-q",
         "--rootdir", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-3000:]
    assert "1 failed" in out and "reference_output == test_output" in out, out[-3000:]


def test_the_report_drops_display_outputs_without_data():
    """HoloViews and tqdm send display outputs with no data; nbconvert warned for each ("Your
    element with mimetype(s) dict_keys([]) is not able to be represented", 19 per report)."""
    import warnings

    import nbformat

    from icml26.dashboards.app.report import drop_empty_outputs, to_html

    def notebook():
        cell = nbformat.v4.new_code_cell("x = 1")
        cell.outputs = [nbformat.v4.new_output("display_data", data={}),
                        nbformat.v4.new_output("display_data", data={"text/plain": "1"})]
        return nbformat.v4.new_notebook(cells=[cell])

    with warnings.catch_warnings(record=True) as before:
        warnings.simplefilter("always")
        to_html(notebook(), "t")
    assert any("not able to be represented" in str(w.message) for w in before)  # the cause
    nb = notebook()
    drop_empty_outputs(nb)
    assert [o["data"] for o in nb.cells[0].outputs] == [{"text/plain": "1"}]
    with warnings.catch_warnings(record=True) as after:
        warnings.simplefilter("always")
        to_html(nb, "t")
    assert not any("not able to be represented" in str(w.message) for w in after)
