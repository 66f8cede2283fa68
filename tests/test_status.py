"""The status is computed from claim roles and hold rates; every expected claim proves it can
fail (issue 28); the device argument is validated everywhere (issue 30)."""

from __future__ import annotations

import ast
import csv
import inspect
import shutil
from pathlib import Path

import pytest

from icml26 import papers, status, status_table
from icml26.claims import ROLES
from icml26.common import resolve_device
from icml26.dashboards.app import cli

ROOT = Path(__file__).resolve().parents[1]
SLUGS = [p.slug for p in papers.built()]
HAS_CUDA = __import__("torch").cuda.is_available()


# --------------------------------------------------------------------------- roles
@pytest.mark.parametrize("slug", SLUGS)
def test_every_claim_row_has_a_role_and_every_paper_a_quoted_headline(slug):
    specs = status.claim_specs(slug)
    for name, row in specs.items():
        assert len(row) == 5, f"{slug}.{name}: (statement, op, threshold, expected, role)"
        assert row[4] in ROLES, f"{slug}.{name}: role {row[4]!r} not in {ROLES}"
    findings = [n for n, row in specs.items() if row[4] == "finding" and row[3]]
    assert not findings, f"{slug}: a finding (beyond the paper) is never expected: {findings}"
    heads = [n for n, row in specs.items() if row[4] == "headline"]
    assert heads, f"{slug}: no headline claim"
    unquoted = [n for n in heads if '"' not in specs[n][0] and "“" not in specs[n][0]]
    assert not unquoted, f"{slug}: headline statements must quote the abstract: {unquoted}"


# --------------------------------------------------------------------------- mutations
def marked_mutations() -> dict[tuple[str, str], list[str]]:
    """``{(paper, claim): [test files]}`` from every ``pytest.mark.mutation(paper, *claims)``
    in tests/ (read from the source, so nothing has to run to know a claim is covered)."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(ROOT.glob("tests/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "mutation"
                    and isinstance(node.func.value, ast.Attribute)
                    and node.func.value.attr == "mark"):
                args = [a.value for a in node.args if isinstance(a, ast.Constant)]
                assert len(args) == len(node.args) >= 2, \
                    f"{path.name}:{node.lineno}: mutation(paper, claim, ...) with literal names"
                for claim in args[1:]:
                    found.setdefault((args[0], claim), []).append(path.name)
    return found


MARKED = marked_mutations()


def test_mutation_markers_name_real_claims():
    bad = [f"{p}.{c} ({', '.join(files)})" for (p, c), files in MARKED.items()
           if p not in SLUGS or c not in status.claim_specs(p)]
    assert not bad, "mutation markers naming no claim: " + "; ".join(bad)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_expected_claim_has_a_mutation_that_fails_it(slug):
    """The rule that would have caught the pacing claims and the fastText baseline: an
    expected claim without a mutation test has never been shown able to fail."""
    specs = status.claim_specs(slug)
    exempt = getattr(status.claims_module(slug), "NO_REALISTIC_FAILURE", {})
    wrong = [n for n in exempt if n not in specs or specs[n][4] != "check"]
    assert not wrong, f"{slug}: only check claims may have no realistic failure: {wrong}"
    missing = [n for n, row in specs.items()
               if row[3] and (slug, n) not in MARKED and n not in exempt]
    assert not missing, (f"{slug}: expected claims with no @pytest.mark.mutation test: "
                         f"{missing}")


# --------------------------------------------------------------------------- the status rule
def rec(name, role, expected=True, held=32, seeds=32):
    rate = None if held is None else status.Rate(held, seeds, 0.0, 1.0, "", "x")
    return status.ClaimRecord(name, role, expected, "s", rate)


@pytest.mark.parametrize("recs, word", [
    ([rec("h", "headline"), rec("m", "mechanism"), rec("c", "check")], "reproduced"),
    ([rec("h", "headline", held=31)], "reproduced"),  # 31/32 = 96.9% >= 95%
    ([rec("h", "headline", held=30), rec("m", "mechanism")], "partial"),  # 93.8% < 95%
    ([rec("h", "headline", expected=False), rec("m", "mechanism")], "partial"),
    ([rec("h", "headline"), rec("m", "mechanism", held=30)], "blocked"),
    ([rec("h", "headline"), rec("m", "mechanism", expected=False)], "blocked"),
    ([rec("h", "headline"), rec("c", "check", held=0)], "blocked"),
    ([rec("h", "headline"), rec("m", "mechanism", held=None)], "blocked"),  # no record
    ([rec("m", "mechanism")], "blocked"),  # no headline
    ([rec("h", "headline"), rec("f", "finding", expected=False, held=0)], "reproduced"),
])
def test_status_rule(recs, word):
    st = status.decide("p", tuple(recs))
    assert st.word == word, st.reason
    if word != "reproduced":  # the reason names the claims that do not hold
        failing = [r.name for r in recs if not r.ok]
        assert all(n in st.reason for n in failing) or "no headline" in st.reason


def test_harness_papers_say_so():
    for p in papers.PAPERS:
        assert ("harness" in p.status_info().label) == p.harness, p.slug
    assert {p.slug for p in papers.PAPERS if p.harness} == {"tritongym", "evoclaw"}


@pytest.mark.parametrize("slug", SLUGS)
def test_hold_rate_record_is_current(slug):
    """benchmarks/hold_rates.csv was measured against the paper's current claims (names,
    targets, expected flags, CLAIMS_VERSION); refresh it with `icml26 sweep` then
    `python benchmarks/hold_rates.py DATASET` when they change."""
    assert status.stale(slug) == []


COMMITTED_RATES = status.hold_rates_path()


def _scratch_copy(tmp_path, monkeypatch, edit):
    path = tmp_path / "hold_rates.csv"
    shutil.copy(COMMITTED_RATES, path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    edit(rows)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setenv("ICML26_HOLD_RATES", str(path))


def _lower(rows, slug, claim, held):
    for r in rows:
        if r["paper"] == slug and r["claim"] == claim:
            r["held"] = str(held)


def test_status_follows_the_hold_rates_in_a_scratch_copy(tmp_path, monkeypatch):
    paper = next((p for p in papers.PAPERS if p.status == "reproduced"), None)
    if paper is None:
        pytest.skip("no paper is reproduced")
    recs = paper.status_info().records
    head = next(r for r in recs if r.role == "headline")
    mech = next((r for r in recs if r.role in ("mechanism", "check")), None)
    _scratch_copy(tmp_path, monkeypatch, lambda rows: _lower(rows, paper.slug, head.name, 0))
    assert paper.status == "partial" and head.name in paper.status_info().reason
    if mech is not None:
        _scratch_copy(tmp_path, monkeypatch,
                      lambda rows: _lower(rows, paper.slug, mech.name, mech.rate.seeds // 2))
        assert paper.status == "blocked" and mech.name in paper.status_info().reason
    # a record measured against other claims (another spec) counts as no record
    _scratch_copy(tmp_path, monkeypatch, lambda rows: [r.update(spec="0" * 12) for r in rows
                                                       if r["paper"] == paper.slug])
    assert paper.status == "blocked" and status.stale(paper.slug)


# --------------------------------------------------------------------------- one table
def test_readme_papers_table_is_generated_and_current():
    readme = (ROOT / "README.md").read_text()
    assert status_table.readme_block() in readme, (
        "README's papers table is stale: regenerate it with "
        "`python -c \"from pathlib import Path; from icml26 import status_table as t; "
        "p = Path('README.md'); p.write_text(t.replace_in(p.read_text()))\"`")


def test_list_and_index_show_the_computed_status(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for p in papers.PAPERS:
        line = next(line for line in out.splitlines() if line.startswith(p.slug + " "))
        assert p.status_info().label in line
    table = status_table.markdown(link="./{slug}")
    for r in status_table.rows():
        assert f"| [{r.slug}](./{r.slug}) |" in table and f"| {r.label} |" in table


# --------------------------------------------------------------------------- device
@pytest.mark.parametrize("slug", SLUGS)
def test_every_paper_takes_a_device(slug):
    sig = inspect.signature(papers.get(slug).module().claims)
    assert list(sig.parameters)[:3] == ["seed", "scale", "device"], sig
    assert sig.parameters["device"].default == "cpu"


@pytest.mark.skipif(HAS_CUDA, reason="checks the no-GPU message")
def test_cuda_without_a_gpu_is_one_clear_line(capsys):
    with pytest.raises(ValueError, match="--device"):
        resolve_device("cuda")
    assert cli.main(["claims", "recruitment", "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--device" in err and "CUDA" in err, err
    assert cli.main(["sweep", "recruitment", "--seeds", "0:1", "--device", "cuda"]) == 2
    assert "--device" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["tpu", "cuda:x", "", 3.5])
def test_unknown_device_is_rejected(bad):
    with pytest.raises(ValueError, match="--device"):
        resolve_device(bad)


def test_cpu_device_spellings_agree():
    import torch

    assert resolve_device("cpu") == resolve_device(torch.device("cpu")) == torch.device("cpu")
