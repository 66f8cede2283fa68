"""Every reproduced or partial paper's expected claims hold for seeds 0 and 1 (CONVENTIONS
§2); the blocked papers' own test files assert what holds there."""

from __future__ import annotations

import pytest

from icml26 import papers
from icml26.claims import Claim

CASES = [(p.slug, seed) for p in papers.asserted() for seed in (0, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("slug, seed", CASES, ids=[f"{s}-seed{k}" for s, k in CASES])
def test_expected_claims_hold(slug, seed):
    claims = papers.get(slug).claims(seed=seed, scale="quick")
    assert claims and all(isinstance(c, Claim) and c.paper == slug for c in claims)
    assert len({c.name for c in claims}) == len(claims), "claim names must be unique"
    broken = [f"{c.name}: measured {c.measured:.6g}, target {c.op} {c.threshold:.6g} ({c.note})"
              for c in claims if c.expected and not c.holds]
    assert not broken, "\n".join(broken)
