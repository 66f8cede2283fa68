"""The notebooks as the report executed them (issue 45): the test command executes every built
paper's notebook once, in ``icml26 report`` (it writes ``<slug>.ipynb`` as executed and
``report.json`` next to the pages), and this module checks them as nbval did: no cell raised,
every cell ran, and every ``# NBVAL_CHECK_OUTPUT`` cell (the claim table) equals its committed
output once both are sanitized with ``tests/nbval_sanitize.cfg`` (nbval's own parser, stream
coalescing and skipped keys). ``ICML26_REPORT`` points at the report (tests/run.sh sets it after
building the report; without it the per-paper test skips).

The checker's own tests run on tiny synthetic notebooks: a committed output that differs from
the executed one fails with a diff, a difference the sanitizer masks passes, a raising cell
fails naming the notebook and the cell.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import (
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    transform_streams_for_comparison,
)

from icml26 import papers
from icml26.dashboards.app import report

ROOT = Path(__file__).resolve().parents[1]
SANITIZER = ROOT / "tests" / "nbval_sanitize.cfg"
SITE = os.environ.get("ICML26_REPORT", "")
#: the output keys nbval leaves out of a comparison (IPyNbFile.skip_compare, without --nbdime)
SKIP_COMPARE = ("metadata", "traceback", "prompt_number", "output_type", "name",
                "execution_count", "application/vnd.jupyter.widget-view+json",
                "image/png", "image/jpeg")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def sanitize_patterns(path: Path = SANITIZER) -> list[tuple[str, str]]:
    """``(regex, replacement)`` pairs of the sanitizer file, in nbval's order (it keeps them in
    a dict keyed by regex: a repeated regex keeps its first place and its last replacement)."""
    return list(dict(get_sanitize_patterns(path.read_text())).items())


def _sanitized(value, patterns):
    if not isinstance(value, str):
        return value
    for regex, replace in patterns:
        value = re.sub(regex, replace, value)
    return value


def cell_options(cell) -> dict:
    """nbval's options of a cell under ``--nbval-lax``: metadata tags, then comment markers
    (``check`` False unless marked ``# NBVAL_CHECK_OUTPUT``)."""
    options = dict(find_metadata_tags(cell.metadata))
    options.update(find_comment_markers(cell.source))
    options.setdefault("check", False)
    return options


def _flattened(outputs, patterns) -> dict[str, list]:
    """nbval's view of a cell's outputs: streams coalesced, each MIME type and key a list of
    sanitized values."""
    outs = transform_streams_for_comparison(
        coalesce_streams([nbformat.from_dict(copy.deepcopy(o)) for o in outputs]))
    flat = defaultdict(list)
    for out in outs:
        for key, value in out.items():
            if key in SKIP_COMPARE:
                continue
            if key == "data":
                for mime, v in value.items():
                    if mime not in SKIP_COMPARE:
                        flat[mime].append(_sanitized(v, patterns))
            else:
                flat[key].append(_sanitized(value, patterns))
    return flat


def _lines(key: str, value) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True)
    return re.sub(r"(?=<tr)", "\n", text).splitlines() if key == "text/html" \
        else text.splitlines()


def compare_outputs(committed, executed, patterns) -> str:
    """"" when nbval would pass the cell, else why not (a diff of the sanitized values)."""
    ref, test = _flattened(committed, patterns), _flattened(executed, patterns)
    if set(ref) != set(test):
        return (f"output fields differ: committed {sorted(ref)}, executed {sorted(test)}"
                f" (missing {sorted(set(ref) - set(test))}, unexpected "
                f"{sorted(set(test) - set(ref))})")
    for key in sorted(ref, key=lambda k: k != "text/plain"):  # the plain table diffs best
        if len(ref[key]) != len(test[key]):
            return (f"{len(ref[key])} committed outputs of {key!r}, {len(test[key])} executed:\n"
                    + "\n".join(map(str, ref[key] + ["=" * 12] + test[key])))
        for old, new in zip(ref[key], test[key]):
            if old != new:
                diff = difflib.unified_diff(_lines(key, old), _lines(key, new),
                                            "committed (sanitized)", "executed (sanitized)",
                                            lineterm="", n=1)
                return f"{key!r} differs:\n" + "\n".join(diff)
    return ""


def _first_line(cell) -> str:
    return next((ln.strip() for ln in cell.source.splitlines()
                 if ln.strip() and not ln.strip().startswith("# NBVAL")), "")[:80]


def problems(committed, executed, name: str, error: str = "",
             patterns: list[tuple[str, str]] | None = None) -> list[str]:
    """What nbval would have failed in the executed notebook, one readable entry each."""
    if executed is None:
        return [f"{name}: the report wrote no executed notebook: {error or 'no error recorded'}"]
    if [c.source for c in committed.cells] != [c.source for c in executed.cells]:
        return [f"{name}: the executed notebook's cells are not the committed ones (edited "
                "after the report was built? build it again)"]
    patterns = sanitize_patterns() if patterns is None else patterns
    found, stopped, code = [], None, -1
    for i, (ref, run) in enumerate(zip(committed.cells, executed.cells)):
        if ref.cell_type != "code":
            continue
        code += 1
        where = f"{name}, cell {i} (nbval's Cell {code}) `{_first_line(ref)}`"
        options = cell_options(ref)
        if options.get("skip"):
            continue
        raised = [o for o in run.outputs if o.output_type == "error"]
        if raised and not options.get("check_exception"):
            tb = ANSI.sub("", "\n".join(raised[0].get("traceback", []))).splitlines()
            found.append(f"{where} raised {raised[0].ename}: {raised[0].evalue}\n"
                         + "\n".join(tb[-25:]))
            continue
        if ref.execution_count is None and ref.outputs:
            found.append(f"{where}: unrun reference cell has outputs (nbval fails it)")
            continue
        if run.execution_count is None and ref.source.strip():
            stopped = stopped or where
            continue
        if options["check"] and ref.execution_count is not None:
            diff = compare_outputs(ref.outputs, run.outputs, patterns)
            if diff:
                found.append(f"{where}: the output differs from the committed one after "
                             f"{SANITIZER.name} (refresh it with `icml26 notebooks "
                             f"--refresh-outputs` if the change is meant):\n{diff}")
    if stopped:
        found.append(f"{name}: execution stopped before {stopped}")
    if error and not found:
        found.append(f"{name}: the report failed: {error[:3000]}")
    return found


@pytest.fixture(scope="module")
def built_report() -> tuple[Path, dict]:
    if not SITE:
        pytest.skip("no report: icml26 report --out site, then ICML26_REPORT=site pytest "
                    "tests/test_executed_notebooks.py (tests/run.sh does)")
    manifest = Path(SITE) / report.MANIFEST
    if not manifest.exists():
        pytest.fail(f"ICML26_REPORT={SITE} has no {report.MANIFEST}: build it with icml26 report")
    return Path(SITE), json.loads(manifest.read_text())


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_executed_notebook_ran_and_matches_its_committed_outputs(built_report, slug):
    site, manifest = built_report
    entry = manifest["papers"].get(slug)
    if entry is None:
        if manifest["complete"]:
            pytest.fail(f"{slug} is built but missing from the report")
        pytest.skip(f"{slug} is not in this report (built with --papers)")
    path = site / f"{slug}.ipynb"
    executed = nbformat.read(path, as_version=4) if entry["notebook"] and path.exists() else None
    committed = nbformat.read(report.notebook_path(slug), as_version=4)
    found = problems(committed, executed, f"notebooks/{slug}.ipynb",
                     "" if entry["ok"] else entry["error"])
    if found:
        pytest.fail("\n\n".join(found), pytrace=False)


# ---------------------------------------------------------------- the checker on tiny notebooks
TABLE = '''# NBVAL_CHECK_OUTPUT
import time
t0 = time.perf_counter()
print("claim   role   unit  measured  op  target  result")
print("-----   ----   ----  --------  --  ------  ------")
print("exact   check  each  0.0123    <=  0.5     holds")
print("gain    headline mean 0.61    >=  0.5     holds")
print(f"computed in {time.perf_counter() - t0 + 1:.3f} s at /tmp/run-{id(t0)}")'''


def _notebook(*sources: str):
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# tiny")]
        + [nbformat.v4.new_code_cell(s) for s in sources])


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """A tiny notebook executed as the report executes one: an unpinned cell, the pinned
    claim table (timing and path in it), a cell after it."""
    nb = _notebook("x = 41\nprint('unpinned', x)", TABLE, "x + 1")
    report.run_notebook(nb, tmp_path_factory.mktemp("nb"))
    return nb


def _committed(ran, edit=lambda text: text):
    """The executed notebook as if committed, its pinned cell's stdout passed through
    ``edit``."""
    nb = copy.deepcopy(ran)
    out = nb.cells[2].outputs[0]
    assert out.output_type == "stream" and "holds" in out.text
    out.text = edit(out.text)
    return nb


def test_sanitizer_file_is_the_one_nbval_read():
    patterns = sanitize_patterns()
    assert len(patterns) == len(get_sanitize_patterns(SANITIZER.read_text())) >= 5
    assert any("headline|mechanism|check|finding" in regex for regex, _ in patterns)


def test_an_identical_run_passes(ran):
    assert problems(_committed(ran), ran, "tiny.ipynb") == []


def test_a_difference_the_sanitizer_masks_passes(ran):
    """Another machine's measured values, another timing, another temporary path; and an
    unpinned cell's output that differs (nbval-lax compares only pinned cells)."""
    def other_machine(text):
        text = text.replace("0.0123", "0.0131").replace("0.61 ", "0.6 ")
        return re.sub(r"\d+\.\d+ s at /tmp/\S+", "12.5 s at /tmp/elsewhere-7", text)

    committed = _committed(ran, other_machine)
    committed.cells[1].outputs[0].text = "unpinned 40\n"
    assert committed.cells[2].outputs != ran.cells[2].outputs
    assert problems(committed, ran, "tiny.ipynb") == []


def test_a_changed_verdict_fails_with_a_diff_naming_the_cell(ran):
    committed = _committed(ran, lambda t: t.replace("mean 0.61    >=  0.5     holds",
                                                    "mean 0.61    >=  0.5     FAILS"))
    (found,) = problems(committed, ran, "notebooks/tiny.ipynb")
    assert found.startswith("notebooks/tiny.ipynb, cell 2 (nbval's Cell 1) `import time`")
    assert "-gain    headline mean MEASURED" in found and "FAILS" in found
    assert "+gain    headline mean MEASURED" in found and "holds" in found.split("+gain")[1]


def test_a_missing_or_extra_output_fails(ran):
    committed = _committed(ran)
    committed.cells[2].outputs = []
    assert "output fields differ" in problems(committed, ran, "tiny.ipynb")[0]
    committed.cells[2].outputs = ran.cells[2].outputs * 2
    assert "differs" in problems(committed, ran, "tiny.ipynb")[0]


def test_an_unrun_committed_cell_with_outputs_fails_as_in_nbval(ran):
    committed = _committed(ran)
    committed.cells[2].execution_count = None
    assert "unrun reference cell has outputs" in problems(committed, ran, "tiny.ipynb")[0]


def test_a_cell_that_raises_fails_naming_the_notebook_and_cell(tmp_path):
    from nbclient.exceptions import CellExecutionError

    nb = _notebook("x = 1", "y = 2\nraise ValueError(f'bad input {x}')", TABLE)
    committed = copy.deepcopy(nb)
    with pytest.raises(CellExecutionError):
        report.run_notebook(nb, tmp_path)
    assert report.failed_cell(nb) == ("cell 2 (nbval's Cell 1) `y = 2`: ValueError: "
                                      "bad input 1")
    found = problems(committed, nb, "notebooks/tiny.ipynb", error="CellExecutionError: ...")
    assert found[0].startswith("notebooks/tiny.ipynb, cell 2 (nbval's Cell 1) `y = 2` raised "
                               "ValueError: bad input 1")
    assert "raise ValueError" in found[0]  # the traceback, without colour codes
    assert "\x1b[" not in found[0]
    assert found[1] == "notebooks/tiny.ipynb: execution stopped before notebooks/tiny.ipynb, " \
                       "cell 3 (nbval's Cell 2) `import time`"


def test_a_notebook_the_report_could_not_write_fails_with_its_error(ran):
    found = problems(_committed(ran), None, "notebooks/tiny.ipynb", "DeadKernelError: gone")
    assert found == ["notebooks/tiny.ipynb: the report wrote no executed notebook: "
                     "DeadKernelError: gone"]
    edited = _committed(ran)
    edited.cells[1].source += "\n"
    assert "not the committed ones" in problems(edited, ran, "tiny.ipynb")[0]
