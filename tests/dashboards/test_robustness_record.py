"""The robustness page before any Run: the committed record (each claim's estimate over its
committed per-seed values, as the status computes it), not an empty frame; the Wilson
intervals drawn on top of the bars (issue 32, issue 44)."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from icml26 import estimates, ledger, status  # noqa: E402
from icml26.dashboards.app.sweep_page import RobustnessExplorer  # noqa: E402


def _value(slug: str, name: str, seed: int) -> float:
    """Holding on every seed but 0, varying by seed; ``bound_monotone`` the same on all."""
    row = status.claim_specs(slug)[name]
    step = (1.0 + seed / 16) * (1 if row.op in (">=", ">") else -1)
    if name == "bound_monotone":
        return row.threshold + step / (1.0 + seed / 16)
    return row.threshold + (-step if seed == 0 else step)


@pytest.fixture
def committed(tmp_path, monkeypatch):
    """A scratch value file: recruitment's and panda's claims on seeds 0-15 (every claim
    fails on seed 0 but one, the same on every seed)."""
    path = tmp_path / "claim_values.csv"
    ledger.merge([dict(paper=slug, claim=name, seed=seed, scale="quick", device="cpu",
                       measured=_value(slug, name, seed), spec=ledger.spec_of(slug, name))
                  for slug in ("recruitment", "panda") for name in status.claim_specs(slug)
                  for seed in estimates.SEEDS], path)
    monkeypatch.setenv("ICML26_CLAIM_VALUES", str(path))
    return path


def test_the_page_opens_on_the_committed_record(committed):
    recs = status.records("recruitment")
    expect = {("recruitment", r.name): (r.estimate.held, r.estimate.n) for r in recs}
    assert set(expect.values()) == {(15, 16), (16, 16)}
    page = RobustnessExplorer()
    assert page.hold_rates() == expect
    assert len(page.source.data["label"]) == len(expect) == len(page.figure.y_range.factors)
    assert "Showing the committed record" in page.status and "Press **Run**" in page.status
    assert "claim_values.csv" in page.status and "16 swept seeds" in page.status
    # beside each bar the estimate the status uses, by the claim's unit, with its verdict
    text = dict(zip(page.source.data["label"], page.source.data["text"]))
    detail = dict(zip(page.source.data["label"], page.source.data["detail"]))
    by = {r.name: r for r in recs}
    mean = next(n for n, r in by.items() if r.unit == "mean")
    each = next(n for n, r in by.items() if r.unit == "each" and n != "bound_monotone")
    assert text[f"recruitment · {each}"] == "15/16 ✗"
    assert detail[f"recruitment · {each}"].startswith("15/16 seeds (95% ")
    assert text[f"recruitment · {mean}"].startswith("mean ")
    assert detail[f"recruitment · {mean}"] == (f"{by[mean].estimate.text()}; "
                                               f"{by[mean].verdict()}")
    assert "P(improve) 15/16" in detail[f"recruitment · {mean}"]
    assert text["recruitment · bound_monotone"].endswith("on all ✓")
    assert detail["recruitment · bound_monotone"].endswith("on every seed (16 seeds); holds")
    page.papers = ["recruitment", "panda"]  # the record follows the chosen papers
    assert {p for p, _ in page.hold_rates()} == {"recruitment", "panda"}


def test_values_of_another_row_are_not_shown(committed):
    rows = {k: (v, "0" * 12 if k[0] == "panda" else spec)
            for k, (v, spec) in ledger.read().items()}
    committed.unlink()
    ledger.merge([dict(paper=p, claim=c, seed=s, scale=sc, device=d, measured=v, spec=sp)
                  for (p, c, s, sc, d), (v, sp) in rows.items()], committed)
    page = RobustnessExplorer(papers=["recruitment", "panda"])
    assert {p for p, _ in page.hold_rates()} == {"recruitment"}
    assert "No current committed record for panda" in page.status


def test_a_paper_without_a_current_record_is_said_so(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CLAIM_VALUES", str(tmp_path / "none.csv"))
    page = RobustnessExplorer(papers=["recruitment"])
    assert page.hold_rates() == {}
    assert "No current committed record for recruitment" in page.status


def test_the_wilson_intervals_are_drawn_over_the_bars():
    """A Whisker defaults to the "underlay" level: an 8/8 bar (interval 0.68-1) hid it."""
    page = RobustnessExplorer()
    (whisker,) = [m for m in page.figure.center if type(m).__name__ == "Whisker"]
    assert whisker.level == "overlay" and whisker.line_width >= 2
    (bars,) = [r for r in page.figure.renderers if type(r.glyph).__name__ == "HBar"]
    assert bars.glyph.fill_alpha < 1  # the interval shows through the bar as well
