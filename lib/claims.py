"""The claims ledger: what each paper says, what we measured, and whether it held.

A paper declares its rows once, beside its code, as ``CLAIM_SPECS = {name: ClaimSpec(...)}``
(:class:`ClaimSpec`: statement, op, threshold, expected, role, unit, source). A :class:`Claim`
is a row plus the paper, its name, the measured value (for a claim over many cases, the worst
case) and a note. ``holds`` is computed from ``measured``, ``op`` and ``threshold``, never set
by hand. ``expected`` records whether the suite expects the claim to hold at quick scale;
tests assert the expected ones. ``role`` says what the claim is for (:data:`ROLES`, decided
from the abstract's words alone), ``unit`` how it is judged over seeds (:data:`UNITS`, fixed
by the claim's kind) and ``source`` quotes the abstract fragment it tests or rests on
(``docs/claims.md``). The paper's status is computed from the roles, units and the hold
rates (:mod:`icml26.status`), never typed by hand.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import NamedTuple

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
FIELDS = ("paper", "name", "statement", "measured", "op", "threshold", "expected", "note",
          "role", "unit", "source")

#: What a claim is for, from the abstract's words alone. ``headline``: a result the abstract
#: states (``source`` quotes it). ``mechanism``: what a headline rests on, said or necessarily
#: implied by the abstract (``source`` quotes that sentence). ``check``: exactness, controls,
#: harness self-tests, guards against a hollow measurement. ``finding``: anything else we
#: measure (a spec's extension, a summary, our own discovery); it may be expected, and it never
#: enters the paper's status. Check and finding rows have ``source == ""``.
ROLES = ("headline", "mechanism", "check", "finding")
#: Roles that quote the abstract in ``source``.
SOURCED_ROLES = ("headline", "mechanism")

#: How a claim is judged over the swept seeds, fixed by its kind. ``each``: a property of
#: every instance (exact, a bound, a guarantee, a property of each trained model, a harness
#: check): it holds when it holds on >= 95% of the seeds. ``mean``: a comparison the paper
#: reports as an average (beats, improves, matches, gains): it holds when the 95% BCa
#: bootstrap interval of its mean over the seeds lies wholly past the threshold.
UNITS = ("each", "mean")


class ClaimSpec(NamedTuple):
    """One static claim row of a paper (``CLAIM_SPECS = {name: ClaimSpec(...)}``)."""

    statement: str   # the claim in one sentence
    op: str          # ">=", "<=", ">", "<"
    threshold: float  # the target; ``holds`` is computed from measured/op/threshold
    expected: bool   # the suite expects it to hold at this scale (CI asserts these)
    role: str        # one of ROLES
    unit: str        # one of UNITS
    source: str      # the verbatim abstract fragment ("" for check/finding)


def spec_problems(name: str, spec: object) -> list[str]:
    """Why ``spec`` is not a valid row (``[]`` when it is): a :class:`ClaimSpec` with a known
    op, role and unit, and a source exactly when its role quotes the abstract."""
    if not isinstance(spec, ClaimSpec):
        return [f"{name}: a spec row is a ClaimSpec(statement, op, threshold, expected, role, "
                f"unit, source), got {type(spec).__name__}"]
    out = []
    if spec.op not in OPS:
        out.append(f"{name}: op must be one of {sorted(OPS)}, got {spec.op!r}")
    if spec.role not in ROLES:
        out.append(f"{name}: role must be one of {ROLES}, got {spec.role!r}")
    if spec.unit not in UNITS:
        out.append(f"{name}: unit must be one of {UNITS}, got {spec.unit!r}")
    if spec.role in SOURCED_ROLES and not spec.source.strip():
        out.append(f"{name}: a {spec.role} row quotes its abstract fragment in source")
    if spec.role in ROLES and spec.role not in SOURCED_ROLES and spec.source:
        out.append(f"{name}: a {spec.role} row has source == ''")
    return out


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper.

    ``holds`` is ``measured <op> threshold``; a NaN measurement never holds, so a failed
    computation reports itself as a failed claim instead of hiding behind an exception.
    """

    paper: str
    name: str
    statement: str
    measured: float
    op: str
    threshold: float
    expected: bool
    note: str = ""
    role: str = ""
    unit: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"op must be one of {sorted(OPS)}, got {self.op!r}")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")
        object.__setattr__(self, "measured", float(self.measured))
        object.__setattr__(self, "threshold", float(self.threshold))
        object.__setattr__(self, "expected", bool(self.expected))

    @property
    def holds(self) -> bool:
        if math.isnan(self.measured):
            return False
        return bool(OPS[self.op](self.measured, self.threshold))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["holds"] = self.holds
        return d


def from_spec(paper: str, name: str, spec: ClaimSpec, measured: float, note: str = "", *,
              statement: str | None = None, expected: bool | None = None) -> Claim:
    """The claim of row ``spec`` measured at ``measured`` (role, unit, source carried over)."""
    return Claim(paper, name, spec.statement if statement is None else statement, measured,
                 spec.op, spec.threshold, spec.expected if expected is None else expected,
                 note, spec.role, spec.unit, spec.source)


def failed(paper: str, rows: Iterable[tuple[str, ClaimSpec]], reason: str) -> list[Claim]:
    """Claims for a computation that could not run: NaN measured, so none holds.

    Each row is ``(name, ClaimSpec)``."""
    return [from_spec(paper, name, spec, math.nan, note=f"computation failed: {reason}")
            for name, spec in rows]


class ClaimTable:
    """Builds one paper's claims from its spec rows.

    ``specs`` maps a claim name to its :class:`ClaimSpec`, written once beside the paper's
    code. ``add`` records a measurement against its row; ``fail`` records NaN claims (so none
    holds) for a computation that raised, naming the error; ``guard`` does that around a
    block, so one failed experiment never hides the other claims.
    """

    def __init__(self, paper: str, specs: dict[str, ClaimSpec]):
        if not isinstance(specs, dict):
            raise ValueError(f"{paper}: specs is a dict name -> ClaimSpec, got "
                             f"{type(specs).__name__}")
        problems = [p for name, spec in specs.items() for p in spec_problems(name, spec)]
        if problems:
            raise ValueError(f"{paper}: " + "; ".join(problems))
        self.paper, self.specs, self.claims = paper, specs, []

    def add(self, name: str, measured: float, note: str = "", *, statement: str | None = None,
            expected: bool | None = None) -> Claim:
        """Record ``measured`` for the row ``name``; ``statement`` / ``expected`` override the
        row where the text depends on the config (e.g. the budget it was measured at)."""
        claim = from_spec(self.paper, name, self.specs[name], measured, note,
                          statement=statement, expected=expected)
        self.claims.append(claim)
        return claim

    def fail(self, names: Iterable[str], reason: str) -> None:
        """NaN claims for ``names`` (none holds), with the reason in their note."""
        self.claims.extend(failed(self.paper, [(n, self.specs[n]) for n in names], reason))

    @contextmanager
    def guard(self, names: Iterable[str]):
        """Run a block; if it raises, record ``names`` as failed with the error text."""
        try:
            yield
        except Exception as err:  # noqa: BLE001 - reported in the claims, never hidden
            self.fail(names, f"{type(err).__name__}: {err}")


def unexpected_failures(claims: Sequence[Claim]) -> list[Claim]:
    return [c for c in claims if c.expected and not c.holds]


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


#: the claim table of ``icml26 claims``: what one seed measured beside the estimate over the
#: committed seeds (:mod:`icml26.estimates`) and its verdict
HEADER = ["paper", "claim", "role", "unit", "measured (this seed)", "target",
          "result (this seed)", "expected", "over seeds", "verdict over seeds", "note"]
#: what ``over`` gives a claim it does not name (no value of its current row is committed)
NO_VALUES = ("no committed values", "pending")

Over = Mapping[tuple[str, str], tuple[str, str]]  # (paper, claim) -> (estimate, verdict)


def table_rows(claims: Sequence[Claim], over: Over | None = None) -> list[list[str]]:
    """One row of :data:`HEADER` per claim. ``result`` is this seed's verdict alone;
    ``expected`` (yes/no) says whether the suite expects the claim to hold, so a failure it
    does not expect stands out without a flag glued to the verdict. ``over`` maps
    ``(paper, claim)`` to the estimate over the committed seeds and its verdict (``holds`` /
    ``FAILS`` / ``pending``), computed by the caller (this module sits below
    :mod:`icml26.estimates`); a claim it does not name gets :data:`NO_VALUES`, and without
    ``over`` both columns say "—"."""
    rows = []
    for c in claims:
        est, verdict = ("—", "—") if over is None else over.get((c.paper, c.name), NO_VALUES)
        rows.append([c.paper, c.name, c.role, c.unit, _fmt(c.measured),
                     f"{c.op} {_fmt(c.threshold)}", "holds" if c.holds else "FAILS",
                     "yes" if c.expected else "no", est, verdict, c.note])
    return rows


def format_table(claims: Sequence[Claim], width: int = 60, over: Over | None = None) -> str:
    """Plain-text table (:func:`table_rows`); long notes are cut to ``width`` characters."""
    rows = [[*r[:-1], (r[-1][: width - 1] + "…") if len(r[-1]) > width else r[-1]]
            for r in table_rows(claims, over)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(HEADER)]
    line = "  ".join(h.ljust(w) for h, w in zip(HEADER, widths))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(out)


def format_markdown(claims: Sequence[Claim], over: Over | None = None) -> str:
    """Markdown table (:func:`table_rows`), notes in full."""
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in table_rows(claims, over):
        out.append("| " + " | ".join(v.replace("|", "\\|") for v in r) + " |")
    return "\n".join(out)


def to_json(claims: Sequence[Claim]) -> str:
    return json.dumps([c.to_dict() for c in claims], indent=1)


def to_frame(claims: Sequence[Claim]):
    """A pandas DataFrame of the claims (notebooks show it)."""
    import pandas as pd

    return pd.DataFrame([c.to_dict() for c in claims],
                        columns=[*FIELDS, "holds"])


class ShownClaims:
    """A paper's claim table as a notebook shows it: plain text and an HTML table, with the
    measured value and target to 4 significant digits (:func:`_fmt`).

    Notebooks commit this output (the cell is marked ``# NBVAL_CHECK_OUTPUT``) and CI
    re-executes them with nbval, which compares it character by character: so the table holds
    only what the code computes (no timings, paths or ids), and ``notes=True`` (notes can
    quote long computed numbers) is for an unpinned cell."""

    COLUMNS = ("claim", "role", "unit", "measured", "target", "expected", "result")

    def __init__(self, claims: Sequence[Claim], notes: bool = False):
        self.claims, self.notes = list(claims), notes

    def rows(self) -> list[list[str]]:
        return [[c.name, c.role, c.unit, _fmt(c.measured), f"{c.op} {_fmt(c.threshold)}",
                 "yes" if c.expected else "no", "holds" if c.holds else "FAILS"]
                for c in self.claims]

    def __repr__(self) -> str:
        header = [*self.COLUMNS, *(["note"] if self.notes else [])]
        rows = [r + ([c.note] if self.notes else []) for r, c in zip(self.rows(), self.claims)]
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(header)]
        lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip()
                 for line in [header, ["-" * w for w in widths], *rows]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        header = [*self.COLUMNS, "statement", *(["note"] if self.notes else [])]
        head = "".join(f"<th>{h}</th>" for h in header)
        body = []
        for r, c in zip(self.rows(), self.claims):
            cells = [*r, c.statement, *([c.note] if self.notes else [])]
            style = "" if c.holds == c.expected else ' style="color:#b00"'
            body.append(f"<tr{style}>" + "".join(f"<td>{html.escape(v)}</td>" for v in cells)
                        + "</tr>")
        return (f'<table class="icml26-claims"><thead><tr>{head}</tr></thead><tbody>'
                + "".join(body) + "</tbody></table>")


def show_claims(claims: Sequence[Claim], notes: bool = False) -> ShownClaims:
    """The claim table a notebook displays (see :class:`ShownClaims`)."""
    return ShownClaims(claims, notes)
