"""The status is computed from claim roles, units and the committed per-seed values (issue 28,
issue 44); every expected claim proves it can fail (issue 28); the device argument is
validated everywhere (issue 30)."""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import pytest

from icml26 import estimates, ledger, papers, status, status_table
from icml26.claims import ROLES, ClaimSpec
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
        assert isinstance(row, ClaimSpec), f"{slug}.{name}: a ClaimSpec"
        assert row.role in ROLES, f"{slug}.{name}: role {row.role!r} not in {ROLES}"
    heads = [n for n, row in specs.items() if row.role == "headline"]
    assert heads, f"{slug}: no headline claim"
    unquoted = [n for n in heads if '"' not in specs[n].statement
                and "“" not in specs[n].statement]
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
    wrong = [n for n in exempt if n not in specs or specs[n].role != "check"]
    assert not wrong, f"{slug}: only check claims may have no realistic failure: {wrong}"
    missing = [n for n, row in specs.items()
               if row.expected and (slug, n) not in MARKED and n not in exempt]
    assert not missing, (f"{slug}: expected claims with no @pytest.mark.mutation test: "
                         f"{missing}")


# --------------------------------------------------------------------------- the status rule
SPREAD = [(-1) ** i * (1 + i // 2) / 8 for i in range(32)]  # mean 0, never 0


def rec(name, role, expected=True, held=32, seeds=32, unit="each", mean=None):
    """A claim ">= 0" held on ``held`` of ``seeds`` seeds (``held=None``: no values); a
    ``mean`` claim: the seeds' values have mean ``mean`` and a spread of about 0.6."""
    if held is None:
        return status.ClaimRecord(name, role, unit, expected, "s", None)
    values = ([1.0 + i for i in range(held)] + [-1.0 - i for i in range(seeds - held)]
              if mean is None else [mean + d for d in SPREAD[:seeds]])
    return status.ClaimRecord(name, role, unit, expected, "s",
                              estimates.estimate(values, ">=", 0.0, unit))


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
    ([rec("h", "headline", unit="mean", mean=1.0)], "reproduced"),  # interval clears 0
    ([rec("h", "headline", unit="mean", mean=0.1)], "partial"),  # mean > 0, interval not
    ([rec("h", "headline"), rec("m", "mechanism", unit="mean", mean=0.1)], "blocked"),
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
def test_committed_values_are_current(slug):
    """benchmarks/claim_values.csv holds a value of every claim on every swept seed (0-15 at
    least), measured against the claim's current row (ledger.spec_of: CLAIMS_VERSION, name, op,
    threshold, expected, role, unit, source); when a row changes, re-sweep (`icml26 sweep`,
    then `python benchmarks/claim_values.py DATASET`)."""
    assert status.stale(slug) == []


def _holding(spec, seed: int) -> float:
    """A value on the claim's side of its threshold, different on every seed."""
    step = 1.0 + seed / 16
    return spec.threshold + step if spec.op in (">=", ">") else spec.threshold - step


def _commit(path, slug, edit=lambda name, seed, value: value, spec=None):
    path.unlink(missing_ok=True)
    ledger.merge([dict(paper=slug, claim=name, seed=seed, scale="quick", device="cpu",
                       measured=edit(name, seed, _holding(row, seed)),
                       spec=spec or ledger.spec_of(slug, name))
                  for name, row in status.claim_specs(slug).items()
                  for seed in estimates.SEEDS], path)


def test_status_follows_the_values_in_a_scratch_file(tmp_path, monkeypatch):
    """A paper's real rows over synthetic values: every value holding reproduces it; a
    headline failing on a seed makes it partial, a mechanism or check blocks it, values of
    another row count as none."""
    paper = next((p for p in papers.built() if all(
        r.expected for r in status.claim_specs(p.slug).values() if r.role != "finding")
        and any(r.role in ("mechanism", "check") for r in status.claim_specs(p.slug).values())),
        None)
    if paper is None:
        pytest.skip("every paper has an unexpected headline, mechanism or check")
    path = tmp_path / "claim_values.csv"
    monkeypatch.setenv("ICML26_CLAIM_VALUES", str(path))
    specs = status.claim_specs(paper.slug)
    _commit(path, paper.slug)
    assert status.stale(paper.slug) == [] and paper.status == "reproduced"
    head = next(n for n, r in specs.items() if r.role == "headline")
    mech = next(n for n, r in specs.items() if r.role in ("mechanism", "check"))
    for name, word in [(head, "partial"), (mech, "blocked")]:
        # NaN on seed 0: an each claim holds on 15/16 < 95%, a mean claim has a NaN seed
        _commit(path, paper.slug, lambda n, s, v, name=name: math.nan if (n, s) == (name, 0)
                else v)
        assert paper.status == word and f"{name} (" in paper.status_info().reason
    _commit(path, paper.slug, spec="0" * 12)  # every value of another row: none is current
    assert paper.status == "pending" and status.stale(paper.slug)


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
