"""A paper's status, computed from its claims' roles, units and committed per-seed values.

Nothing here is typed by hand. Each paper's claims module declares its claim rows
(``CLAIM_SPECS``: statement, op, threshold, ``expected``, ``role``, ``unit``, ``source``);
``benchmarks/claim_values.csv`` commits every swept seed's value of every claim (``icml26
sweep`` -> ``benchmarks/claim_values.py``, :mod:`icml26.ledger`), and :mod:`icml26.estimates`
judges each claim over those seeds by its unit (``each``: holds on >= 95% of the seeds;
``mean``: the 95% BCa interval of its mean lies past the threshold; a seed-independent claim:
its one value holds). The rule (issue 28):

- ``reproduced``: every headline and mechanism claim is expected and holds, and so does every
  check;
- ``partial``: every mechanism claim and check does, some headline does not (named);
- ``blocked``: a mechanism claim or a check does not (named);
- ``pending``: the paper's values do not yet cover the seeds 0-15 every paper is swept on
  (:data:`icml26.estimates.SEEDS`): no verdict on fewer; the estimates so far are shown.

Claims with the role ``finding`` (what this reproduction measured beyond the paper's
statements) are shown with the others but never enter the status.

A tier-C paper (its subject, an LLM agent, cannot run here; what is reproduced is the harness)
says so: its label carries ``harness``. A claim without a value measured against its current
row (:func:`icml26.ledger.spec_of`) counts as not holding ("no values"), so a stale or missing
value can only lower a status, never raise it; :func:`stale` lists such claims and a test fails
on any.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from icml26 import estimates
from icml26.claims import ROLES

# re-exported: the estimate's names, and the paper's claim rows (every value's fingerprint
# reads those too, so they live in the ledger, below the status)
from icml26.estimates import HOLD_RATE, Estimate, Values  # noqa: F401
from icml26.ledger import claim_specs, claims_module, claims_version  # noqa: F401

WORDS = ("reproduced", "partial", "blocked", "pending")


# --------------------------------------------------------------------------- the status
@dataclass(frozen=True)
class ClaimRecord:
    name: str
    role: str
    unit: str
    expected: bool
    statement: str
    estimate: Estimate | None  # None: no value of the claim's current row

    @property
    def ok(self) -> bool:
        """Expected, and holding by its unit's rule over the current values."""
        return self.expected and self.estimate is not None and self.estimate.holds

    def verdict(self) -> str:
        """``holds`` / ``does not hold`` (with the target) / ``no values``."""
        if self.estimate is None:
            return "no values"
        if self.estimate.holds:
            return "holds"
        return f"does not hold (needs {self.estimate.target()})"

    def why(self) -> str:
        """The name and its estimate, e.g. ``x (15/16 seeds (95% 0.72-0.99))``."""
        if self.estimate is None:
            return f"{self.name} (no values of its current row)"
        tag = "" if self.expected else ", not expected"
        return f"{self.name} ({self.estimate.text()}{tag})"


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


def records(slug: str, values: Values | None = None) -> tuple[ClaimRecord, ...]:
    """Each claim's role, unit, expected flag and estimate over its current committed values
    (``values``: :func:`icml26.ledger.read`'s dict, read when None)."""
    est = estimates.estimates(slug, values)
    return tuple(ClaimRecord(name, row.role, row.unit, bool(row.expected), row.statement,
                             est[name]) for name, row in claim_specs(slug).items())


def decide(slug: str, recs: tuple[ClaimRecord, ...], harness: bool = False) -> Status:
    """The rule of the module docstring, applied to ``recs``."""
    unroled = [r.name for r in recs if r.role not in ROLES]
    if unroled:
        return Status(slug, "blocked", harness, "claims without a role: " + ", ".join(unroled),
                      recs)
    swept = [r.estimate.seeds for r in recs if r.estimate is not None]
    missing = sorted(set(estimates.SEEDS) - set.intersection(*map(set, swept))) if swept else \
        list(estimates.SEEDS)
    if missing:  # (a claim without values of its current row counts as not holding, below)
        have = len(estimates.SEEDS) - len(missing)
        return Status(slug, "pending", harness,
                      f"values on {have} of the seeds 0-{estimates.SEEDS[-1]} (re-sweep under "
                      "way; no verdict on fewer)", recs)
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
    n = min(r.estimate.n for r in recs if r.role != "finding")
    return Status(slug, "reproduced", harness,
                  f"every headline, mechanism and check claim holds over >= {n} swept seeds "
                  f"(each: on >= {HOLD_RATE:.0%} of them; mean: its 95% interval clears the "
                  "threshold)", recs)


def status(slug: str, harness: bool = False, values: Values | None = None) -> Status:
    return decide(slug, records(slug, values), harness)


def stale(slug: str, values: Values | None = None) -> list[str]:
    """Why the paper's committed values are out of step with its claims ([] when current):
    :func:`icml26.estimates.stale`."""
    return estimates.stale(slug, values)
