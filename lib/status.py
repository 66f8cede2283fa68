"""A paper's status, computed from its claims' roles and their hold rates over swept seeds.

Nothing here is typed by hand. Each paper's claims module declares its claim rows
(``CLAIM_SPECS``: statement, op, threshold, ``expected``, ``role``); ``benchmarks/hold_rates.csv``
records, per claim, on how many of the swept seeds it held (``icml26 sweep`` ->
``benchmarks/hold_rates.py``). The rule (issue 28):

- ``reproduced``: every headline and mechanism claim is expected and holds on >= 95% of the
  swept seeds, and so does every check;
- ``partial``: every mechanism claim and check does, some headline does not (named);
- ``blocked``: a mechanism claim or a check does not (named).

Claims with the role ``finding`` (what this reproduction measured beyond the paper's
statements) are shown with the others but never enter the status.

A tier-C paper (its subject, an LLM agent, cannot run here; what is reproduced is the harness)
says so: its label carries ``harness``. A claim without a current hold-rate record counts as not
holding ("no record"), so a stale or missing record can only lower a status, never raise it;
:func:`stale` lists such records and a test fails on any.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from icml26.claims import ROLES

#: the share of swept seeds on which a claim must hold to count as holding
HOLD_RATE = 0.95

WORDS = ("reproduced", "partial", "blocked")


def hold_rates_path() -> Path:
    """``$ICML26_HOLD_RATES``, else ``benchmarks/hold_rates.csv`` of this checkout."""
    env = os.environ.get("ICML26_HOLD_RATES")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "benchmarks" / \
        "hold_rates.csv"


# --------------------------------------------------------------------------- the claim rows
def claims_module(slug: str):
    return importlib.import_module(f"icml26.{slug}.claims")


def claim_specs(slug: str) -> dict[str, tuple]:
    """The paper's static claim rows ``name -> (statement, op, threshold, expected, role)``."""
    specs = getattr(claims_module(slug), "CLAIM_SPECS", None)
    if not isinstance(specs, dict) or not specs:
        raise LookupError(f"icml26.{slug}.claims has no CLAIM_SPECS dict")
    return specs


def claims_version(slug: str) -> int:
    return int(getattr(claims_module(slug), "CLAIMS_VERSION", 1))


def fingerprint(slug: str) -> str:
    """What a hold-rate record was measured against: every claim's name, op, threshold and
    ``expected`` flag, and the module's ``CLAIMS_VERSION`` (bumped when a measurement changes).
    Roles and statements are not in it: they change no measured value."""
    specs = claim_specs(slug)
    rows = sorted((name, row[1], float(row[2]), bool(row[3])) for name, row in specs.items())
    blob = json.dumps([claims_version(slug), rows]).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


# --------------------------------------------------------------------------- hold rates
@dataclass(frozen=True)
class Rate:
    held: int
    seeds: int
    lo: float
    hi: float
    failed_on: str
    spec: str

    @property
    def rate(self) -> float:
        return self.held / self.seeds if self.seeds else math.nan


def read_rates(path: Path | None = None) -> dict[tuple[str, str], Rate]:
    """``{(paper, claim): Rate}``: the last row written for each claim (the file is appended)."""
    path = hold_rates_path() if path is None else Path(path)
    out: dict[tuple[str, str], Rate] = {}
    if not path.exists():
        return out
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out[(r["paper"], r["claim"])] = Rate(
                int(r["held"]), int(r["seeds"]), float(r["wilson_lo"]), float(r["wilson_hi"]),
                r.get("failed_on") or "", r.get("spec") or "")
    return out


# --------------------------------------------------------------------------- the status
@dataclass(frozen=True)
class ClaimRecord:
    name: str
    role: str
    expected: bool
    statement: str
    rate: Rate | None

    @property
    def ok(self) -> bool:
        """Expected, and held on >= 95% of the swept seeds of a current record."""
        return (self.expected and self.rate is not None and self.rate.seeds > 0
                and self.rate.rate >= HOLD_RATE)

    def why(self) -> str:
        if self.rate is None:
            return f"{self.name} (no hold-rate record)"
        held = f"{self.rate.held}/{self.rate.seeds} seeds"
        return f"{self.name} ({held}{'' if self.expected else ', not expected'})"


@dataclass(frozen=True)
class Status:
    slug: str
    word: str  # one of WORDS
    harness: bool
    reason: str
    records: tuple[ClaimRecord, ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.word} (harness)" if self.harness else self.word

    @property
    def headlines(self) -> tuple[ClaimRecord, ...]:
        return tuple(r for r in self.records if r.role == "headline")


def records(slug: str, rates: dict[tuple[str, str], Rate] | None = None
            ) -> tuple[ClaimRecord, ...]:
    """Each claim's role, expected flag and current hold-rate record (None if stale/absent)."""
    rates = read_rates() if rates is None else rates
    fp = fingerprint(slug)
    out = []
    for name, (statement, _op, _thr, expected, *role) in claim_specs(slug).items():
        rate = rates.get((slug, name))
        out.append(ClaimRecord(name, role[0] if role else "", bool(expected), statement,
                               rate if rate is not None and rate.spec == fp else None))
    return tuple(out)


def decide(slug: str, recs: tuple[ClaimRecord, ...], harness: bool = False) -> Status:
    """The rule of the module docstring, applied to ``recs``."""
    unroled = [r.name for r in recs if r.role not in ROLES]
    if unroled:
        return Status(slug, "blocked", harness, "claims without a role: " + ", ".join(unroled),
                      recs)
    # findings (measurements beyond what the paper states) are reported, not the paper's
    failing = {role: [r for r in recs if r.role == role and not r.ok] for role in ROLES}
    if not any(r.role == "headline" for r in recs):
        return Status(slug, "blocked", harness, "no headline claim", recs)
    if failing["mechanism"] or failing["check"]:
        bad = failing["mechanism"] + failing["check"]
        return Status(slug, "blocked", harness,
                      "not holding: " + "; ".join(f"{r.role} {r.why()}" for r in bad), recs)
    if failing["headline"]:
        return Status(slug, "partial", harness, "headline not holding: " +
                      "; ".join(r.why() for r in failing["headline"]), recs)
    n = min(r.rate.seeds for r in recs if r.rate is not None)
    return Status(slug, "reproduced", harness,
                  f"every headline, mechanism and check claim holds on >= {HOLD_RATE:.0%} of "
                  f">= {n} swept seeds", recs)


def status(slug: str, harness: bool = False,
           rates: dict[tuple[str, str], Rate] | None = None) -> Status:
    return decide(slug, records(slug, rates), harness)


def stale(slug: str, rates: dict[tuple[str, str], Rate] | None = None) -> list[str]:
    """Why the paper's hold-rate record is out of step with its claims ([] when current)."""
    rates = read_rates() if rates is None else rates
    fp, names = fingerprint(slug), set(claim_specs(slug))
    have = {c: r for (p, c), r in rates.items() if p == slug}
    out = [f"{slug}.{c}: no hold-rate record" for c in sorted(names - set(have))]
    out += [f"{slug}.{c}: recorded for a claim the paper no longer has"
            for c in sorted(set(have) - names)]
    out += [f"{slug}.{c}: recorded against spec {r.spec or '(none)'}, the claims are now {fp} "
            "(re-sweep: icml26 sweep, then benchmarks/hold_rates.py)"
            for c, r in sorted(have.items()) if c in names and r.spec != fp]
    return out
