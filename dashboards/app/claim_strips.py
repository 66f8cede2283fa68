"""Every claim of a paper over its committed seeds: one strip per claim, and the estimates table.

The notebooks' *Claims* section recomputes one seed; this shows what the paper's status rests
on: each claim's value on every committed seed (``benchmarks/claim_values.csv`` through
:mod:`icml26.estimates`, quick scale, CPU, the rows of the claim's current spec) against its
threshold, judged by its unit (:mod:`icml26.estimates`):

- ``each``: held on k of n seeds, with the Wilson 95% interval of k/n (drawn in the row's text:
  it is an interval of a rate, not of the value);
- ``mean``: the mean over the seeds with its 95% BCa bootstrap interval, drawn as a bar under
  the seeds' points;
- a claim whose value is the same on every seed is one measurement: one point, shown once.

:func:`claims_over_seeds` gives the figure (a column of small panels, one per claim, headlines
first, then mechanism, check and finding claims in the paper's order; each panel on the
claim's own scale, a log axis where the values span three decades and more, the side of the
threshold where the claim holds shaded) and the table (role, unit, estimate, target, verdict);
:func:`status_markdown` the paper's status as one generated paragraph. Both read the same
source as ``icml26 list`` (:mod:`icml26.status`), so no sentence of a notebook states a status
by hand.
"""

from __future__ import annotations

import html
import math
import textwrap
from dataclasses import dataclass
from typing import NamedTuple

import holoviews as hv

from icml26 import ledger, papers, status
from icml26.claims import OPS, ROLES
from icml26.dashboards.app import hvstyle
from icml26.dashboards.app.axes import plain_labels
from icml26.estimates import Estimate, fmt

#: colours of the figure standard's palette: a seed whose value holds, one that does not
HOLDS, FAILS = "#1f77b4", "#d62728"
#: the side of the threshold where a value holds, and the mean's interval
SIDE, BAR = "#2ca02c", "black"
WIDTH, HEIGHT = 760, 120  # px per panel: the notebooks' single-figure width
TITLE_CHARS, TITLE_LINE_PX = 112, 14  # a 9pt bold title line: characters that fit WIDTH, px
NO_VALUES = "no committed values"
#: a positive axis spanning this factor or more is drawn in log scale
LOG_SPAN = 1e3
#: rows of the strip: the seeds' points spread over [POINTS_LO, POINTS_HI], the interval below
POINTS_LO, POINTS_HI, BAR_Y, Y_RANGE = 0.2, 0.9, -0.35, (-0.8, 1.2)


@dataclass(frozen=True)
class Strip:
    """One claim's row: its spec, its record (estimate over the committed seeds) and verdict."""

    name: str
    role: str
    unit: str
    op: str
    threshold: float
    expected: bool
    estimate: Estimate | None  # None: no committed value of the claim's current row

    @property
    def verdict(self) -> str:
        if self.estimate is None:
            return NO_VALUES
        held = "holds" if self.estimate.holds else \
            f"does not hold (needs {self.estimate.target()})"
        return held if self.expected else f"{held}; not expected"

    @property
    def text(self) -> str:
        """The estimate in words (k/n with its Wilson interval, the mean with its BCa interval,
        or the one value of a seed-independent claim)."""
        return NO_VALUES if self.estimate is None else self.estimate.text()

    @property
    def target(self) -> str:
        return f"{self.op} {fmt(self.threshold)}"


def strips(slug: str, values: status.Values | None = None) -> list[Strip]:
    """The paper's claims in role order (headline, mechanism, check, finding; the paper's own
    order within a role), each with its estimate over the committed seeds."""
    specs = ledger.claim_specs(slug)
    recs = status.records(slug, values)
    rank = {role: i for i, role in enumerate(ROLES)}
    ordered = sorted(recs, key=lambda r: rank.get(r.role, len(ROLES)))
    return [Strip(r.name, r.role, r.unit, specs[r.name].op, float(specs[r.name].threshold),
                  r.expected, r.estimate) for r in ordered]


# --------------------------------------------------------------------------- the table
class EstimatesTable:
    """The claims' estimates over the committed seeds, as text and as an HTML table."""

    COLUMNS = ("claim", "role", "unit", "estimate over the committed seeds", "target",
               "verdict")

    def __init__(self, rows: list[Strip]):
        self.strips = list(rows)

    def rows(self) -> list[list[str]]:
        return [[s.name, s.role, s.unit, s.text, s.target, s.verdict] for s in self.strips]

    def __repr__(self) -> str:
        rows = self.rows()
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(self.COLUMNS)]
        return "\n".join("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip()
                         for line in [list(self.COLUMNS), ["-" * w for w in widths], *rows])

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in self.COLUMNS)
        body = []
        for s, r in zip(self.strips, self.rows()):
            ok = s.estimate is not None and s.estimate.holds == s.expected
            style = "" if ok else ' style="color:#b00"'
            body.append(f"<tr{style}>" + "".join(f"<td>{html.escape(v)}</td>" for v in r)
                        + "</tr>")
        return (f'<table class="icml26-claims"><thead><tr>{head}</tr></thead><tbody>'
                + "".join(body) + "</tbody></table>")


# --------------------------------------------------------------------------- the figure
def _x_axis(s: Strip) -> tuple[bool, tuple[float, float]]:
    """Whether the strip's axis is logarithmic, and its range: the seeds' values and the
    threshold, padded (in log space on a log axis) so no point sits on the frame."""
    xs = [*(s.estimate.finite if s.estimate else ()), s.threshold]
    lo, hi = min(xs), max(xs)
    if lo > 0 and hi / lo >= LOG_SPAN:
        a, b = math.log10(lo), math.log10(hi)
        pad = 0.08 * (b - a)
        return True, (10 ** (a - pad), 10 ** (b + pad))
    span = hi - lo
    if span == 0:
        span = abs(hi) * 0.2 or 1.0
    pad = 0.08 * span
    return False, (lo - pad, hi + pad)


def _points(s: Strip) -> hv.Points:
    """One point per seed (a seed-independent claim: one point), spread over the strip's
    height in a fixed pattern so equal values stay visible; coloured by whether they hold."""
    est = s.estimate
    if est is None:
        rows = []
    elif est.constant:
        rows = [(est.values[0], (POINTS_LO + POINTS_HI) / 2, f"all {est.n}",
                 "holds" if est.holds else "fails")]
    else:
        rows = [(v, POINTS_LO + (POINTS_HI - POINTS_LO) * ((i * 0.618034) % 1), str(seed),
                 "holds" if OPS[s.op](v, s.threshold) else "fails")
                for i, (seed, v) in enumerate(zip(est.seeds, est.values)) if not math.isnan(v)]
    return hv.Points(rows, ["value", "y"], ["seed", "verdict"]).opts(
        color=hv.dim("verdict").categorize({"holds": HOLDS, "fails": FAILS}, default=FAILS),
        size=11 if est is not None and est.constant else 7, alpha=0.8,
        marker="diamond" if est is not None and est.constant else "circle",
        tools=["hover"], hover_tooltips=[("seed", "@seed"), ("value", "@value")])


def _interval(s: Strip) -> hv.Overlay | None:
    """A mean claim's 95% BCa interval as a bar with its mean marked (None for the others)."""
    est = s.estimate
    if est is None or est.constant or s.unit != "mean" or not est.finite:
        return None
    lo, hi = est.interval
    bar = hv.Segments([(lo, BAR_Y, hi, BAR_Y)], ["value", "y", "x1", "y1"]).opts(
        color=BAR, line_width=4)
    mean = hv.Points([(est.mean, BAR_Y)], ["value", "y"]).opts(
        color="white", line_color=BAR, size=9, marker="circle")
    return bar * mean


def _title(s: Strip) -> str:
    """Two lines (more where the estimate and verdict do not fit the panel's width)."""
    head = f"{s.role} · {s.name} ({s.unit}, target {s.target})"
    return "\n".join([head, *textwrap.wrap(f"{s.text}: {s.verdict}", TITLE_CHARS)])


def strip_panel(s: Strip) -> hv.Overlay:
    """The claim's panel: its seeds' values, the threshold (dashed) with the holding side
    shaded, a mean claim's interval as a bar, the estimate and verdict in the title."""
    log, (x0, x1) = _x_axis(s)
    holds_right = s.op in (">=", ">")
    side = hv.VSpan(s.threshold, x1) if holds_right else hv.VSpan(x0, s.threshold)
    layers = [side.opts(color=SIDE, alpha=0.08),
              hv.VLine(s.threshold).opts(color="grey", line_dash="dashed", line_width=1.5)]
    interval = _interval(s)
    if interval is not None:
        layers.append(interval)
    layers.append(_points(s))
    if s.estimate is None:
        layers.append(hv.Text(s.threshold, (POINTS_LO + POINTS_HI) / 2, NO_VALUES).opts(
            text_color=FAILS, text_font_size="10pt"))
    plain = {} if log else {"xformatter": plain_labels()}  # -0.002, not -2.000e-3
    title = _title(s)
    height = HEIGHT + TITLE_LINE_PX * (title.count("\n") - 1)  # the frame keeps its height
    return hv.Overlay(layers, label=s.name).opts(
        width=WIDTH, height=height, logx=log, xlim=(x0, x1), ylim=Y_RANGE, yaxis=None,
        xlabel="value on each seed", title=title,
        fontsize={"title": "9pt", "xticks": "8pt", "xlabel": "8pt"},
        toolbar=None, show_legend=False, default_tools=[], **plain)


def strips_figure(rows: list[Strip]) -> hv.Layout:
    """One panel per claim, in the order of ``rows``, in one column, each on its own x axis."""
    hvstyle.apply()  # the figure standard (idempotent): padding, log tickers
    panels = [strip_panel(s) for s in rows]
    return hv.Layout(panels).cols(1).opts(shared_axes=False, toolbar=None)


class ClaimsOverSeeds(NamedTuple):
    """The figure and the table of :func:`claims_over_seeds`; a notebook displays both (the
    table first), a plain console the table."""

    figure: hv.Layout
    table: EstimatesTable

    def __repr__(self) -> str:
        return f"{self.table!r}\n(figure: {len(self.figure)} strips)"

    def __panel__(self):
        import panel as pn

        return pn.Column(pn.pane.HTML(self.table._repr_html_()), pn.pane.HoloViews(self.figure))

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.__panel__()._repr_mimebundle_(include, exclude)


def claims_over_seeds(slug: str, values: status.Values | None = None) -> ClaimsOverSeeds:
    """Every claim of ``slug`` over its committed seeds: ``(figure, table)``.

    ``values``: :func:`icml26.ledger.read`'s dict (read when None)."""
    values = ledger.read() if values is None else values
    rows = strips(slug, values)
    return ClaimsOverSeeds(strips_figure(rows), EstimatesTable(rows))


# --------------------------------------------------------------------------- the status
def _seeds(recs) -> str:
    """``the 16 seeds 0-15`` (runs of consecutive seeds joined: ``0-1, 100-104``)."""
    seeds = sorted(set().union(*(set(r.estimate.seeds) for r in recs
                                 if r.estimate is not None)))
    if not seeds:
        return "no committed seed"
    runs: list[list[int]] = []
    for seed in seeds:
        if runs and seed == runs[-1][1] + 1:
            runs[-1][1] = seed
        else:
            runs.append([seed, seed])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"seed {text}" if len(seeds) == 1 else f"the {len(seeds)} seeds {text}"


def _role_counts(st: status.Status) -> str:
    parts = []
    for role in ROLES:
        recs = [r for r in st.records if r.role == role]
        if not recs:
            continue
        held = sum(r.estimate is not None and r.estimate.holds for r in recs)
        noun = role if len(recs) == 1 else f"{role}s"
        parts.append(f"{len(recs)} {noun} ({held} holding)")
    return ", ".join(parts)


def status_text(slug: str, values: status.Values | None = None) -> str:
    """The paper's status as one Markdown paragraph: the verdict, why, the seeds it rests on
    and how many claims of each role hold (all computed by :mod:`icml26.status`)."""
    st = status.status(slug, papers.get(slug).harness, values)
    findings = ("; findings never enter the status"
                if any(r.role == "finding" for r in st.records) else "")
    harness = (" Tier C: what is reproduced is the harness, not the paper's LLM results."
               if st.harness else "")
    return (f"**Status: {st.label}**, computed by `icml26.status` from the committed values of "
            f"{_seeds(st.records)} (`benchmarks/claim_values.csv`, quick scale, CPU): "
            f"{st.reason}. Claims: {_role_counts(st)}{findings}.{harness}")


def status_markdown(slug: str, values: status.Values | None = None):
    """:func:`status_text` as IPython Markdown, for a notebook cell."""
    from IPython.display import Markdown

    return Markdown(status_text(slug, values))
