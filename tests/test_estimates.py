"""Each claim is judged over its committed per-seed values by its unit (issue 44): ``each``
holds on >= 95% of the seeds, ``mean`` when the 95% BCa interval of its mean clears the
threshold, a seed-independent claim when its one value holds; values of another row are stale
and ignored (synthetic value files, ``ICML26_CLAIM_VALUES``)."""

from __future__ import annotations

import math
import warnings

import pytest

from icml26 import estimates, ledger, status, status_table
from icml26.claims import ClaimSpec
from icml26.sweep_summary import wilson

SLUG = "recruitment"  # a real claims module whose rows the tests replace
SEEDS = range(16)
SPREAD = [(-1) ** i * (1 + i // 2) / 8 for i in range(16)]  # mean 0, sd ~0.6, never 0


def row(op=">=", threshold=0.0, role="headline", unit="each", expected=True):
    source = "q" if role in ("headline", "mechanism") else ""
    return ClaimSpec("s", op, threshold, expected, role, unit, source)


@pytest.fixture
def paper(tmp_path, monkeypatch):
    """``commit(specs, {claim: [value per seed]})``: the paper's rows become ``specs`` and its
    committed values (current spec, quick, cpu) these, in a scratch file."""
    path = tmp_path / "claim_values.csv"
    monkeypatch.setenv("ICML26_CLAIM_VALUES", str(path))

    def commit(specs, values, seeds=SEEDS, spec=None):
        monkeypatch.setattr(status.claims_module(SLUG), "CLAIM_SPECS", dict(specs))
        ledger.merge([dict(paper=SLUG, claim=c, seed=s, scale="quick", device="cpu",
                           measured=v, spec=spec or ledger.spec_of(SLUG, c))
                      for c, vs in values.items() for s, v in zip(seeds, vs)], path)
        return path

    return commit


# --------------------------------------------------------------------------- each
def test_each_holds_at_16_of_16_not_at_15_of_16():
    good = [0.5 + i / 100 for i in SEEDS]
    est = estimates.estimate(good, ">=", 0.5, "each")
    assert (est.held, est.n, est.holds, est.constant) == (16, 16, True, False)
    assert est.text() == "16/16 seeds (95% 0.81-1.00)"
    bad = estimates.estimate([0.4] + good[1:], ">=", 0.5, "each")
    lo, hi = wilson(15, 16)
    assert (bad.held, bad.holds) == (15, False)  # 93.75% < 95%
    assert bad.text() == f"15/16 seeds (95% {lo:.2f}-{hi:.2f})"


def test_each_nan_never_holds():
    est = estimates.estimate([math.nan] + [1.0 + i for i in range(15)], ">=", 0.0, "each")
    assert (est.held, est.nan, est.holds) == (15, 1, False)
    assert "NaN on 1 of 16 seeds" in est.text()


# --------------------------------------------------------------------------- mean
def test_a_mean_that_clears_the_threshold_with_an_interval_that_does_not():
    est = estimates.estimate([0.1 + d for d in SPREAD], ">", 0.0, "mean")
    lo, hi = est.interval
    assert est.mean == pytest.approx(0.1) and est.mean > 0
    assert lo < 0 < hi and not est.holds
    assert est.text().startswith(f"mean 0.1 (95% CI {estimates.fmt(lo)} to "
                                 f"{estimates.fmt(hi)}), P(improve) ")
    assert est.text().endswith(f"P(improve) {est.held}/16") and 0 < est.held < 16


def test_a_mean_whose_interval_clears_the_threshold():
    est = estimates.estimate([0.5 + d / 10 for d in SPREAD], ">", 0.0, "mean")
    lo, hi = est.interval
    assert 0 < lo < est.mean < hi and est.holds and est.held == 16
    # the interval is scipy's BCa with a fixed generator: the same on every call
    assert estimates.bca_mean.__wrapped__(est.finite) == (lo, hi)
    # "<=": the upper end must lie below the threshold
    assert estimates.estimate([0.5 + d / 10 for d in SPREAD], "<=", hi + 1e-9, "mean").holds
    assert not estimates.estimate([0.5 + d / 10 for d in SPREAD], "<=", hi - 1e-9,
                                  "mean").holds
    assert not estimates.estimate([0.5 + d / 10 for d in SPREAD], ">", lo, "mean").holds
    assert estimates.estimate([0.5 + d / 10 for d in SPREAD], ">=", lo, "mean").holds


def test_a_nan_seed_fails_a_mean_claim_and_is_counted():
    values = [0.5 + d / 10 for d in SPREAD]
    est = estimates.estimate([math.nan, math.nan] + values[2:], ">", 0.0, "mean")
    lo, _ = est.interval
    assert lo > 0 and est.nan == 2 and not est.holds
    assert "of 14 seeds" in est.text() and "NaN on 2 of 16 seeds" in est.text()


# --------------------------------------------------------------------------- seed-independent
@pytest.mark.parametrize("unit", ["each", "mean"])
def test_a_value_equal_on_every_seed_is_one_measurement(unit):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # BCa is degenerate here: no warning, no NaN
        est = estimates.estimate([0.031] * 16, "<=", 0.05, unit)
        assert est.constant and est.holds and est.interval == ((0.031, 0.031) if unit == "mean"
                                                               else wilson(16, 16))
        assert est.text() == "0.031 on every seed (16 seeds)" and "16/16" not in est.text()
        assert not estimates.estimate([0.031] * 16, ">=", 0.05, unit).holds
    assert not estimates.estimate([math.nan] * 16, "<=", 0.05, unit).holds


# --------------------------------------------------------------------------- from the ledger
def test_the_status_follows_the_committed_values(paper):
    specs = {"h_each": row(), "h_mean": row(unit="mean"), "m": row(role="mechanism"),
             "c": row(role="check"), "f": row(role="finding", expected=False)}
    good = [1 + i for i in SEEDS]
    paper(specs, {"h_each": good, "h_mean": [0.5 + d / 10 for d in SPREAD], "m": good,
                  "c": [0.0] * 16, "f": [-1.0] * 16})
    assert status.stale(SLUG) == []
    st = status.status(SLUG)
    assert st.word == "reproduced", st.reason
    assert ">= 16 swept seeds" in st.reason
    heads = {r.name: status_table.headline_text(r) for r in st.headlines}
    assert heads["h_each"] == "h_each: 16/16 seeds (95% 0.81-1.00); holds"
    assert heads["h_mean"].startswith("h_mean: mean 0.5 (95% CI ")
    assert heads["h_mean"].endswith("), P(improve) 16/16; holds")
    assert status.records(SLUG)[3].estimate.text() == "0 on every seed (16 seeds)"
    # the mean's interval no longer clears: partial, and the reason names its estimate
    paper(specs, {"h_mean": [0.1 + d for d in SPREAD]})
    st = status.status(SLUG)
    mean = next(r for r in st.records if r.name == "h_mean")
    assert st.word == "partial" and f"h_mean ({mean.estimate.text()})" in st.reason
    assert "does not hold (needs interval lo >= 0)" in status_table.headline_text(mean)
    # one mechanism seed fails: 15/16 < 95%, blocked, named with its estimate
    paper(specs, {"m": [-1.0] + good[1:]})
    st = status.status(SLUG)
    assert st.word == "blocked" and "mechanism m (15/16 seeds (95% " in st.reason


def test_values_of_another_row_are_ignored_and_named(paper):
    specs = {"h": row(), "m": row(role="mechanism")}
    good = [1 + i for i in SEEDS]
    paper(specs, {"h": good, "m": good})
    # four more seeds of "h", failing, committed against an older row
    paper(specs, {"h": [-1.0] * 4}, seeds=range(16, 20), spec="0" * 12)
    est = estimates.estimates(SLUG)
    assert (est["h"].n, est["h"].held, est["h"].holds) == (16, 16, True)
    assert status.status(SLUG).word == "reproduced"
    gone = status.stale(SLUG)
    assert any(s.startswith(f"{SLUG}.h: seeds 16-19 committed against row 000000000000")
               for s in gone), gone
    assert any(s.startswith(f"{SLUG}.m: no value for seeds 16-19") for s in gone), gone


def test_a_row_changed_without_a_re_sweep_is_stale(paper, monkeypatch):
    """The ledger's mutation: any field of the fingerprint changed, no re-sweep."""
    specs = {"h": row(), "m": row(role="mechanism")}
    good = [1 + i for i in SEEDS]
    paper(specs, {"h": good, "m": good})
    assert status.stale(SLUG) == [] and status.status(SLUG).word == "reproduced"
    for field, value in [("threshold", 0.5), ("role", "check"), ("unit", "mean"),
                         ("source", "another quote"), ("expected", False), ("op", ">")]:
        moved = dict(specs, m=specs["m"]._replace(**{field: value}))
        monkeypatch.setattr(status.claims_module(SLUG), "CLAIM_SPECS", moved)
        assert status.stale(SLUG) and all(s.startswith(f"{SLUG}.m:")
                                          for s in status.stale(SLUG)), field
        rec = next(r for r in status.records(SLUG) if r.name == "m")
        assert rec.estimate is None and "no values" in rec.why(), field


def test_missing_values_are_stale_and_a_short_sweep_is_pending(paper):
    paper({"h": row(), "m": row(role="mechanism")}, {"h": [1.0 + i for i in range(8)]},
          seeds=range(8))
    gone = status.stale(SLUG)
    assert gone == [f"{SLUG}.m: no committed values"]
    st = status.status(SLUG)
    assert st.word == "pending" and "values on 8 of the seeds 0-15" in st.reason
    paper({"h": row(), "m": row(role="mechanism")},
          {"h": [1.0 + i for i in range(8)], "m": [1.0] * 8}, seeds=range(8))
    assert status.stale(SLUG) == []
    st = status.status(SLUG)  # 8 seeds hold everywhere: still no verdict on fewer than 16
    assert st.word == "pending" and "values on 8 of the seeds 0-15" in st.reason
