"""Every headline and mechanism row quotes its paper's abstract (issue 44).

A row's ``source`` is the verbatim abstract fragment it tests (headline) or is a premise of
(mechanism); check and finding rows quote nothing. The abstracts are read from
``docs/abstracts.txt`` (the 19 abstracts as published, committed so CI always checks them);
each paper's abstract is found by its registry title (:mod:`icml26.papers`), and
both sides are compared after normalising whitespace, case, LaTeX markup (``$``, ``\\``,
``{}``), emphasis asterisks and typographic quotes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from icml26 import papers, status
from icml26.claims import ROLES, SOURCED_ROLES, UNITS

ROOT = Path(__file__).resolve().parents[1]
SLUGS = [p.slug for p in papers.built()]


def abstracts_path() -> Path:
    return ROOT / "docs" / "abstracts.txt"


def normalise(text: str) -> str:
    """Lower case, LaTeX markup ($, backslashes, braces), emphasis and typographic quotes
    dropped or straightened, whitespace collapsed."""
    text = text.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'}))
    text = re.sub(r"[$\\{}*]", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _words(text: str) -> set[str]:
    return {w[:6] for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3}


def split_abstracts(text: str) -> list[str]:
    """The file's abstracts (paragraphs; its one-line heading is not one)."""
    paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [p for p in paras if len(p.split()) > 20]


@cache
def abstracts() -> dict[str, str]:
    """``{slug: abstract}``: each paper's abstract is the one sharing the most (rare) title
    words with its registry title; the match must be one-to-one and clear."""
    path = abstracts_path()
    texts = split_abstracts(path.read_text(encoding="utf-8"))
    df = Counter(w for t in texts for w in _words(t))
    out: dict[str, str] = {}
    for p in papers.PAPERS:
        title = _words(p.title)
        scores = sorted(((sum(math.log(len(texts) / df[w]) for w in title & _words(t)), i)
                         for i, t in enumerate(texts)), reverse=True)
        (best, i), (second, _) = scores[0], scores[1]
        assert best > 1.3 * second, f"{p.slug}: no clear abstract for {p.title!r}"
        out[p.slug] = texts[i]
    assert len(set(out.values())) == len(out), "two papers matched the same abstract"
    return out


def source_problems(slug: str, specs: dict) -> list[str]:
    """Rows whose source breaks the rule: a headline / mechanism without a source or with one
    that is not in the paper's abstract, a check / finding with one, a unit not in UNITS."""
    abstract = normalise(abstracts()[slug]) if any(
        r.role in SOURCED_ROLES and r.source for r in specs.values()) else ""
    out = []
    for name, row in specs.items():
        if row.unit not in UNITS:
            out.append(f"{slug}.{name}: unit {row.unit!r} not in {UNITS}")
        if row.role in SOURCED_ROLES:
            if not row.source.strip():
                out.append(f"{slug}.{name}: a {row.role} quotes its abstract fragment")
            elif normalise(row.source) not in abstract:
                out.append(f"{slug}.{name}: source not in the abstract: {row.source!r}")
        elif row.source:
            out.append(f"{slug}.{name}: a {row.role} has no source, got {row.source!r}")
    return out


def test_every_paper_has_one_abstract():
    found = abstracts()
    assert set(found) == {p.slug for p in papers.PAPERS}


@pytest.mark.parametrize("slug", SLUGS)
def test_rows_have_units_and_quote_the_abstract(slug):
    specs = status.claim_specs(slug)
    assert all(r.role in ROLES for r in specs.values())
    assert source_problems(slug, specs) == []


@pytest.mark.parametrize("slug", SLUGS)
def test_only_headlines_and_mechanisms_have_a_source(slug):
    """Needs no abstract: check and finding rows quote nothing, the others something."""
    for name, row in status.claim_specs(slug).items():
        assert bool(row.source.strip()) == (row.role in SOURCED_ROLES), f"{slug}.{name}"
        assert row.unit in UNITS, f"{slug}.{name}: unit {row.unit!r}"


def test_normalise_drops_markup_on_both_sides():
    assert normalise(r"with $\ell_2$  Distortion") == normalise("with ell_2 distortion")
    assert normalise("up to 25\\% over *TritonGym*") == "up to 25% over tritongym"
    assert normalise("the agent’s") == "the agent's"


def test_mutation_fabricated_source_fails():
    slug = "recruitment"
    specs = dict(status.claim_specs(slug))
    name = next(n for n, r in specs.items() if r.role == "headline")
    specs[name] = specs[name]._replace(source="the greedy solution beats every baseline by 2x")
    assert any(name in p for p in source_problems(slug, specs))
    # a fragment of ANOTHER paper's abstract is not this paper's
    other = normalise(abstracts()["panda"])
    assert "panda" in other
    specs[name] = specs[name]._replace(source="PANDA avoids computing UL hypergradients")
    assert any(name in p for p in source_problems(slug, specs))


def test_mutation_missing_or_misplaced_source_and_bad_unit_fail():
    slug = "recruitment"
    specs = dict(status.claim_specs(slug))
    head = next(n for n, r in specs.items() if r.role == "headline")
    check = next(n for n, r in specs.items() if r.role == "check")
    bad = {**specs, head: specs[head]._replace(source=""),
           check: specs[check]._replace(source=specs[head].source, unit="median")}
    found = source_problems(slug, bad)
    assert any(head in p for p in found)
    assert sum(check in p for p in found) == 2
