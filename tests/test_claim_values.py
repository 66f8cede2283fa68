"""CI re-measures seeds 0 and 1 of every paper and checks each value against the committed
one (``benchmarks/claim_values.csv``, :mod:`icml26.ledger`): a change that moves a value
without a re-sweep fails here. The claims come from the run's shared cache, so this costs no
training of its own."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from icml26 import ledger, papers, status

CASES = [(p.slug, seed) for p in papers.built() for seed in (0, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("slug, seed", CASES, ids=[f"{s}-seed{k}" for s, k in CASES])
def test_values_are_the_committed_ones(slug, seed):
    claims = papers.get(slug).claims(seed=seed, scale="quick")
    assert ledger.moved(slug, seed, claims) == []


def claim(name, measured):
    return SimpleNamespace(name=name, measured=measured)


def test_a_moved_value_is_named(tmp_path):
    """Mutation: a value that moved by more than the tolerance, a missing value, and a value
    committed against another row are each reported."""
    slug = "recruitment"
    names = list(status.claim_specs(slug))
    path = tmp_path / "values.csv"
    ledger.merge([dict(paper=slug, claim=n, seed=0, scale="quick", device="cpu",
                       measured=1.0, spec=ledger.spec_of(slug, n)) for n in names[:2]]
                 + [dict(paper=slug, claim=names[2], seed=0, scale="quick", device="cpu",
                         measured=1.0, spec="000000000000")], path)
    ok = ledger.moved(slug, 0, [claim(names[0], 1.0 + 1e-12)], path=path)
    assert ok == []  # within the tolerance
    bad = ledger.moved(slug, 0, [claim(names[0], 1.001), claim(names[2], 1.0),
                                 claim(names[3], 1.0)], path=path)
    assert len(bad) == 3 and "committed 1.0" in bad[0] and "re-sweep" in bad[1]
    assert "no committed value" in bad[2]


def test_nan_equals_only_nan():
    assert ledger.same(math.nan, math.nan)
    assert not ledger.same(math.nan, 0.0) and not ledger.same(0.0, math.nan)


def test_merge_replaces_rows_of_the_same_key(tmp_path):
    path = tmp_path / "values.csv"
    row = dict(paper="p", claim="c", seed=3, scale="quick", device="cpu", measured=1.5,
               spec="s")
    assert ledger.merge([row], path) == 1
    assert ledger.merge([{**row, "measured": 2.5}, {**row, "seed": 4}], path) == 2
    assert ledger.read(path)[("p", "c", 3, "quick", "cpu")] == (2.5, "s")


def test_merge_drops_values_of_a_claim_the_paper_no_longer_has(tmp_path):
    """A renamed or removed claim's values go when its paper is re-recorded (the change log
    keeps its history); another paper's rows and unknown papers' rows stay."""
    path = tmp_path / "values.csv"
    name = next(iter(status.claim_specs("recruitment")))
    row = dict(paper="recruitment", claim="a_renamed_claim", seed=0, scale="quick",
               device="cpu", measured=1.0, spec="s")
    ledger.merge([row, {**row, "paper": "promotion"}, {**row, "paper": "p"}], path)
    assert ledger.merge([{**row, "claim": name}], path) == 3
    kept = ledger.read(path)
    assert ("recruitment", "a_renamed_claim", 0, "quick", "cpu") not in kept
    assert ("recruitment", name, 0, "quick", "cpu") in kept
    assert ("promotion", "a_renamed_claim", 0, "quick", "cpu") in kept
