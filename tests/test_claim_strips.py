"""The notebooks' claims over the committed seeds (issue 44 item 6): one strip per claim in role
order, a mean claim's BCa interval drawn, a seed-independent claim shown once, a claim without
committed values visibly so, and the generated status paragraph equal to the computed status.

The figure tests use synthetic per-seed values for a real paper's claim rows (fingerprinted
with :func:`icml26.ledger.spec_of`, as the committed file is), so they hold whatever the
committed values are; the status test reads the committed file, as the notebooks do."""

from __future__ import annotations

import pytest

hv = pytest.importorskip("holoviews")

from icml26 import estimates, ledger, papers, status  # noqa: E402
from icml26.claims import ROLES  # noqa: E402
from icml26.dashboards.app import claim_strips  # noqa: E402
from icml26.dashboards.app.claim_strips import (  # noqa: E402
    NO_VALUES,
    claims_over_seeds,
    status_markdown,
)

SLUG = "recruitment"  # rows of every role and both units; its claims module imports fast
SEEDS = range(16)


def synthetic(slug: str = SLUG, constant: str | None = None) -> dict:
    """Values of every claim of ``slug`` on seeds 0-15 against its current row, each on the
    holding side of its threshold: varying with the seed, except ``constant``'s (the same on
    every seed)."""
    out = {}
    for name, row in ledger.claim_specs(slug).items():
        spec = ledger.spec_of(slug, name)
        side = 1 if row.op in (">=", ">") else -1
        for seed in SEEDS:
            value = 1.0 if name == constant else row.threshold + side * (0.5 + 0.1 * seed)
            out[(slug, name, seed, "quick", "cpu")] = (value, spec)
    return out


def first(unit: str, role: str | None = None, slug: str = SLUG) -> str:
    return next(n for n, row in ledger.claim_specs(slug).items()
                if row.unit == unit and role in (None, row.role))


def panels(figure) -> dict:
    return {p.label: p for p in figure}


def layers(panel, kind) -> list:
    return [e for e in panel.traverse(lambda e: e, [kind])]


def title(panel) -> str:
    return hv.Store.lookup_options("bokeh", panel, "plot").kwargs["title"]


def test_one_strip_per_claim_in_role_order():
    specs = ledger.claim_specs(SLUG)
    figure = claims_over_seeds(SLUG, synthetic()).figure
    names = [p.label for p in figure]
    assert sorted(names) == sorted(specs), "one strip per claim, no other"
    ranks = [ROLES.index(specs[n].role) for n in names]
    assert ranks == sorted(ranks), f"headline, mechanism, check, finding: {names}"
    for role in ROLES:  # the paper's own order within a role
        assert [n for n in names if specs[n].role == role] == \
            [n for n, row in specs.items() if row.role == role]
    assert names and specs[names[0]].role == "headline"
    for panel in figure:
        assert title(panel).startswith(f"{specs[panel.label].role} · {panel.label} ")


def test_a_mean_claims_interval_is_drawn_and_an_each_claims_is_not():
    values = synthetic()
    figure = panels(claims_over_seeds(SLUG, values).figure)
    est = estimates.estimates(SLUG, values)
    mean, each = first("mean"), first("each")
    (bar,) = layers(figure[mean], hv.Segments)
    lo, hi = est[mean].interval
    assert lo < hi  # varying values: a real interval
    assert (bar.data["value"].iloc[0], bar.data["x1"].iloc[0]) == pytest.approx((lo, hi))
    assert f"95% CI {estimates.fmt(lo)} to {estimates.fmt(hi)}" in title(figure[mean])
    assert not layers(figure[each], hv.Segments), "k/n has no interval on the value axis"
    points = [p for p in layers(figure[each], hv.Points) if "seed" in p.vdims]
    assert len(points) == 1 and len(points[0]) == len(SEEDS), "one point per seed"


def test_a_seed_independent_claim_appears_as_one_value():
    name = first("each")
    values = synthetic(constant=name)
    shown = claims_over_seeds(SLUG, values)
    (points,) = [p for p in layers(panels(shown.figure)[name], hv.Points) if "seed" in p.vdims]
    assert len(points) == 1 and points.data["value"].iloc[0] == 1.0
    row = next(r for r in shown.table.rows() if r[0] == name)
    assert row[3] == f"1 on every seed ({len(SEEDS)} seeds)"


def test_a_claim_without_committed_values_shows_so():
    """Mutation: one claim's rows dropped (or committed against another row) from the values:
    its strip, its title and its table row say "no committed values", and it does not hold."""
    name = first("mean")
    dropped = {k: v for k, v in synthetic().items() if k[1] != name}
    restated = {k: (v[0], "0123456789ab") if k[1] == name else v
                for k, v in synthetic().items()}
    for values in (dropped, restated):
        shown = claims_over_seeds(SLUG, values)
        panel = panels(shown.figure)[name]
        assert [t.text for t in layers(panel, hv.Text)] == [NO_VALUES]
        assert NO_VALUES in title(panel)
        assert not [p for p in layers(panel, hv.Points) if len(p)]
        row = next(r for r in shown.table.rows() if r[0] == name)
        assert row[3] == NO_VALUES and row[5] == NO_VALUES
        assert NO_VALUES in repr(shown.table) and NO_VALUES in shown.table._repr_html_()
    complete = panels(claims_over_seeds(SLUG, synthetic()).figure)[name]
    assert not layers(complete, hv.Text) and NO_VALUES not in title(complete)


def test_the_table_has_role_unit_estimate_and_verdict_in_text_and_html():
    values = synthetic()
    table = claims_over_seeds(SLUG, values).table
    text = repr(table).splitlines()
    assert text[0].split()[:3] == ["claim", "role", "unit"] and "verdict" in text[0]
    assert len(text) == 2 + len(ledger.claim_specs(SLUG))
    recs = {r.name: r for r in status.records(SLUG, values)}
    for row in table.rows():
        rec = recs[row[0]]
        assert row[1:4] == [rec.role, rec.unit, rec.estimate.text()]
        assert row[5].startswith("holds" if rec.estimate.holds else "does not hold")
    assert table._repr_html_().count("<tr") == 1 + len(recs)


def test_a_wide_positive_range_gets_a_log_axis_and_every_panel_draws():
    values = synthetic()
    name = first("each")
    for seed in SEEDS:  # 1e-15 .. 1e-9: six decades
        values[(SLUG, name, seed, "quick", "cpu")] = (10.0 ** (-15 + seed * 0.4),
                                                       ledger.spec_of(SLUG, name))
    figure = claims_over_seeds(SLUG, values).figure
    opts = hv.Store.lookup_options("bokeh", panels(figure)[name], "plot").kwargs
    row = ledger.claim_specs(SLUG)[name]
    assert opts["logx"] is (row.threshold > 0 and row.threshold / 1e-15 >= 1e3)
    lo, hi = opts["xlim"]
    assert lo < 1e-15 and hi > 10.0 ** (-15 + 15 * 0.4), "no point on the frame's edge"
    hv.render(figure, backend="bokeh")  # every panel builds its Bokeh model


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_status_markdown_is_the_computed_status(slug):
    values = ledger.read()
    st = status.status(slug, papers.get(slug).harness, values)
    text = status_markdown(slug, values).data
    assert text.startswith(f"**Status: {st.label}**, computed")
    assert st.reason in text
    assert ("harness" in text) == st.harness
    for word in set(status.WORDS) - {st.word}:
        assert f"Status: {word}" not in text


def test_status_markdown_follows_the_values():
    """The same paper, values changed: the sentence changes with the computed status (pending on
    two seeds, a claim's seeds dropped: not holding)."""
    values = synthetic()
    two = {k: v for k, v in values.items() if k[2] < 2}
    assert claim_strips.status_text(SLUG, two).startswith("**Status: pending**")
    assert "values of the 2 seeds 0-1 (" in claim_strips.status_text(SLUG, two)
    assert claim_strips.status_text(SLUG, values).startswith("**Status: reproduced**")
    name = first("mean", "headline")
    dropped = {k: v for k, v in values.items() if k[1] != name}
    st = status.status(SLUG, False, dropped)
    assert st.word != "reproduced" and name in st.reason
    assert claim_strips.status_text(SLUG, dropped).startswith(f"**Status: {st.label}**")
