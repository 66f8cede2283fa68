"""The claim ledger's change log: every change to a claim row since the baseline, with its reason.

``benchmarks/claim_rows_baseline.csv`` is a snapshot of every paper's rows (``CLAIM_SPECS``,
:class:`icml26.claims.ClaimSpec`) taken when the rows became ClaimSpecs (issue 44), before any
role was revised; ``benchmarks/claim_changes.csv`` lists, in order, every change made to a row
after it (``date, paper, claim, field, old, new, reason``). :func:`replay` applies the log to
the baseline; a test asserts that the result is the current rows on every logged field
(:data:`LOGGED`), so a name, op, threshold, expected flag, role, unit or source cannot change
without a log row saying why. Statements are not logged: rewording changes no verdict.

A ``name`` row renames a claim (``old`` -> ``new``); ``old == ""`` adds a claim (its other
fields then come from rows with ``old == ""``), ``new == ""`` removes one.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from icml26.claims import ClaimSpec, spec_problems

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "benchmarks" / "claim_rows_baseline.csv"
CHANGES = ROOT / "benchmarks" / "claim_changes.csv"

#: the columns of the baseline snapshot (one row per claim)
ROW_FIELDS = ("paper", "claim", "statement", "op", "threshold", "expected", "role", "unit",
              "source")
#: the columns of the change log
CHANGE_FIELDS = ("date", "paper", "claim", "field", "old", "new", "reason")
#: the fields a change row may name (``statement`` is not logged)
LOGGED = ("name", "op", "threshold", "expected", "role", "unit", "source")


def _cell(field: str, value) -> str:
    if field == "threshold":
        return repr(float(value))
    if field == "expected":
        return str(bool(value))
    return str(value)


def _same(field: str, a: str, b: str) -> bool:
    """``a == b`` for a field's CSV text (thresholds as floats, flags as booleans)."""
    if field == "threshold":
        try:
            x, y = float(a), float(b)
        except ValueError:
            return a == b
        return x == y or (math.isnan(x) and math.isnan(y))
    if field == "expected":
        return a.strip().lower() == b.strip().lower()
    return a == b


def row_of(paper: str, claim: str, spec: ClaimSpec) -> dict[str, str]:
    """One CSV row (all text) of a paper's ClaimSpec."""
    return {"paper": paper, "claim": claim,
            **{f: _cell(f, getattr(spec, f)) for f in ROW_FIELDS[2:]}}


def snapshot_rows(slugs: Iterable[str] | None = None) -> list[dict[str, str]]:
    """Every paper's current rows (registry order, then each paper's row order)."""
    from icml26 import papers, status

    slugs = [p.slug for p in papers.PAPERS if p.built] if slugs is None else list(slugs)
    return [row_of(slug, name, spec) for slug in slugs
            for name, spec in status.claim_specs(slug).items()]


def write_rows(path: Path, rows: Sequence[dict], fields: Sequence[str]) -> Path:
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(fields), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_baseline(path: Path = BASELINE) -> Path:
    """Write the snapshot of the current rows (done once, when the rows became ClaimSpecs)."""
    return write_rows(path, snapshot_rows(), ROW_FIELDS)


def apply(rows: list[dict[str, str]], change: dict[str, str]) -> list[dict[str, str]]:
    """``rows`` with one logged change applied; ValueError when the change does not fit (an
    unknown field, a claim that is not there, an ``old`` that is not the row's value)."""
    paper, claim, field = change["paper"], change["claim"], change["field"]
    old, new = change["old"], change["new"]
    where = f"{paper}.{claim} {field} ({change.get('date', '')})"
    if field not in LOGGED:
        raise ValueError(f"{where}: field must be one of {LOGGED}")
    if not change.get("reason", "").strip():
        raise ValueError(f"{where}: a change says why (reason)")
    at = [i for i, r in enumerate(rows) if r["paper"] == paper and r["claim"] == claim]
    if field == "name":
        key = old or new
        have = [i for i, r in enumerate(rows) if r["paper"] == paper and r["claim"] == key]
        if not old:  # a new claim
            if have:
                raise ValueError(f"{where}: {paper}.{new} already exists")
            return [*rows, {"paper": paper, "claim": new, **{f: "" for f in ROW_FIELDS[2:]}}]
        if not have:
            raise ValueError(f"{where}: no row {paper}.{old} to rename")
        if not new:  # a removed claim
            return [r for i, r in enumerate(rows) if i != have[0]]
        return [({**r, "claim": new} if i == have[0] else r) for i, r in enumerate(rows)]
    if len(at) != 1:
        raise ValueError(f"{where}: no row {paper}.{claim} in the rows replayed so far")
    row = rows[at[0]]
    if not _same(field, row[field], old):
        raise ValueError(f"{where}: the log says old = {old!r} but the row has {row[field]!r}")
    return [({**r, field: new} if i == at[0] else r) for i, r in enumerate(rows)]


def replay(baseline: Sequence[dict] | None = None,
           changes: Sequence[dict] | None = None) -> list[dict[str, str]]:
    """The baseline with every logged change applied in order (the files by default)."""
    rows = [dict(r) for r in (read_rows(BASELINE) if baseline is None else baseline)]
    for change in (read_rows(CHANGES) if changes is None else changes):
        rows = apply(rows, change)
    return rows


def spec_of(row: dict[str, str]) -> ClaimSpec:
    """The ClaimSpec a CSV row describes (statement included)."""
    return ClaimSpec(row["statement"], row["op"], float(row["threshold"]),
                     row["expected"].strip().lower() == "true", row["role"], row["unit"],
                     row["source"])


def problems(rows: Sequence[dict[str, str]]) -> list[str]:
    """Each row's contract problems (:func:`icml26.claims.spec_problems`: a known op, role
    and unit, a source exactly for headline and mechanism rows)."""
    return [f"{r['paper']}.{p}" for r in rows for p in spec_problems(r["claim"], spec_of(r))]


def differences(replayed: Sequence[dict[str, str]],
                current: Sequence[dict[str, str]]) -> list[str]:
    """Where the replayed log and the current rows disagree on a logged field (``[]`` when
    every change to a row has its log row)."""
    key = {(r["paper"], r["claim"]): r for r in replayed}
    now = {(r["paper"], r["claim"]): r for r in current}
    out = [f"{p}.{c}: a current claim the log never adds" for p, c in now if (p, c) not in key]
    out += [f"{p}.{c}: in the log, not among the current claims" for p, c in key
            if (p, c) not in now]
    for k in now.keys() & key.keys():
        out += [f"{k[0]}.{k[1]}: {f} is {now[k][f]!r}, the log says {key[k][f]!r}"
                for f in LOGGED[1:] if not _same(f, now[k][f], key[k][f])]
    return sorted(out)
