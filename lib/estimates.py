"""Each claim's estimate over the swept seeds, from its committed per-seed values.

The values are ``benchmarks/claim_values.csv`` (:mod:`icml26.ledger`): one row per (paper,
claim, seed, scale, device) with ``spec``, the fingerprint of the claim's row it was measured
against (:func:`icml26.ledger.spec_of`: the paper's ``CLAIMS_VERSION`` and the row's name, op,
threshold, expected flag, role, unit and source). An estimate rests on the rows of scale
``quick`` and device ``cpu`` whose ``spec`` is the claim's current one; a row of another spec
is stale and ignored (:func:`stale` names it). The claim's ``unit`` decides how it is judged:

- ``each``: held on k of n seeds (``measured <op> threshold``; NaN never holds), with the Wilson
  95% interval of k/n; it holds when k/n >= 95%.
- ``mean``: the mean over the seeds with its 95% BCa bootstrap interval
  (:func:`scipy.stats.bootstrap`, 9999 resamples, a fixed generator); it holds when the
  interval lies wholly on the claim's side of the threshold (``>=``: lo >= threshold, ``>``:
  lo > threshold, ``<=``: hi <= threshold, ``<``: hi < threshold). A NaN on any seed means it
  does not hold. The hold rate k/n (the probability of improvement) is shown beside it.
- A claim whose value is the same on every seed (at least two) is seed-independent: it is one
  measurement, shown once, and it holds when that value holds (either unit).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from icml26 import ledger
from icml26.claims import OPS
from icml26.sweep_summary import wilson

#: the share of swept seeds on which an ``each`` claim must hold
HOLD_RATE = 0.95
CONFIDENCE = 0.95
N_RESAMPLES = 9999
#: the rows an estimate rests on
SCALE, DEVICE = "quick", "cpu"
#: every paper is swept on at least these seeds (CONVENTIONS §2)
SEEDS = tuple(range(16))

Values = dict[tuple[str, str, int, str, str], tuple[float, str]]  # what ledger.read() gives


def fmt(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def _holds(op: str, value: float, threshold: float) -> bool:
    return not math.isnan(value) and bool(OPS[op](value, threshold))


@lru_cache(maxsize=4096)
def bca_mean(values: tuple[float, ...]) -> tuple[float, float]:
    """The 95% BCa bootstrap interval of the mean of ``values`` (finite). Equal values (one
    included) give the zero-width interval at that value: BCa is degenerate there."""
    if not values:
        return math.nan, math.nan
    if min(values) == max(values):
        return values[0], values[0]
    from scipy import stats

    with warnings.catch_warnings():  # a degenerate resample says so by a NaN bound
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        ci = stats.bootstrap((np.asarray(values),), np.mean, method="BCa",
                             confidence_level=CONFIDENCE, n_resamples=N_RESAMPLES,
                             random_state=np.random.default_rng(0)).confidence_interval
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class Estimate:
    """One claim judged over its swept seeds (see the module docstring)."""

    unit: str
    op: str
    threshold: float
    seeds: tuple[int, ...]
    values: tuple[float, ...]  # in the order of ``seeds``

    @property
    def n(self) -> int:
        """The number of seeds the estimate rests on."""
        return len(self.values)

    @property
    def held(self) -> int:
        """Seeds on which the value holds (NaN never does)."""
        return sum(_holds(self.op, v, self.threshold) for v in self.values)

    @property
    def nan(self) -> int:
        return sum(math.isnan(v) for v in self.values)

    @property
    def finite(self) -> tuple[float, ...]:
        return tuple(v for v in self.values if not math.isnan(v))

    @property
    def constant(self) -> bool:
        """The same value on every seed (at least two; NaN on all counts): seed-independent."""
        return self.n >= 2 and len({fmt(v) if math.isnan(v) else v for v in self.values}) == 1

    @property
    def rate(self) -> float:
        return self.held / self.n if self.n else math.nan

    @property
    def mean(self) -> float:
        """The mean over the seeds without NaN (NaN if none)."""
        return float(np.mean(self.finite)) if self.finite else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """``each``: the Wilson 95% interval of k/n; ``mean``: the BCa 95% interval of the
        mean (over the seeds without NaN)."""
        if self.unit == "each":
            return wilson(self.held, self.n)
        return bca_mean(self.finite)

    @property
    def holds(self) -> bool:
        if self.n == 0:
            return False
        if self.constant:
            return _holds(self.op, self.values[0], self.threshold)
        if self.unit == "each":
            return self.rate >= HOLD_RATE
        if self.nan:
            return False
        lo, hi = self.interval
        return _holds(self.op, lo if self.op in (">=", ">") else hi, self.threshold)

    def text(self) -> str:
        """``k/n seeds (95% lo-hi)``, ``mean m (95% CI lo to hi), P(improve) k/n`` or
        ``v on every seed (n seeds)``."""
        if self.n == 0:
            return "no values"
        if self.constant:
            return f"{fmt(self.values[0])} on every seed ({self.n} seeds)"
        nan = f", NaN on {self.nan} of {self.n} seeds" if self.nan else ""
        lo, hi = self.interval
        if self.unit == "each":
            return f"{self.held}/{self.n} seeds (95% {lo:.2f}-{hi:.2f}){nan}"
        if not self.finite:
            return f"NaN on all {self.n} seeds"
        over = f" of {len(self.finite)} seeds" if self.nan else ""
        return (f"mean {fmt(self.mean)}{over} (95% CI {fmt(lo)} to {fmt(hi)}){nan}, "
                f"P(improve) {self.held}/{self.n}")

    def target(self) -> str:
        """What it is judged against, in words."""
        if self.constant:
            return f"{self.op} {fmt(self.threshold)}"
        if self.unit == "each":
            return f"{self.op} {fmt(self.threshold)} on >= {HOLD_RATE:.0%} of seeds"
        side = "lo" if self.op in (">=", ">") else "hi"
        return f"interval {side} {self.op} {fmt(self.threshold)}"


def estimate(values: Sequence[float], op: str, threshold: float, unit: str,
             seeds: Sequence[int] | None = None) -> Estimate:
    seeds = tuple(range(len(values))) if seeds is None else tuple(int(s) for s in seeds)
    if len(seeds) != len(values):
        raise ValueError("one seed per value")
    return Estimate(unit, op, float(threshold), seeds, tuple(float(v) for v in values))


# --------------------------------------------------------------------------- the ledger
def rows_of(slug: str, values: Values | None = None) -> dict[str, dict[int, tuple[float, str]]]:
    """``{claim: {seed: (measured, spec)}}``: the paper's committed rows at quick scale on CPU,
    whatever their spec."""
    values = ledger.read() if values is None else values
    out: dict[str, dict[int, tuple[float, str]]] = {}
    for (paper, claim, seed, scale, device), v in values.items():
        if paper == slug and scale == SCALE and device == DEVICE:
            out.setdefault(claim, {})[seed] = v
    return out


def estimates(slug: str, values: Values | None = None) -> dict[str, Estimate | None]:
    """``{claim: Estimate}`` from the rows of the claim's current spec; ``None`` for a claim
    with no such row."""
    have = rows_of(slug, values)
    out: dict[str, Estimate | None] = {}
    for name, row in ledger.claim_specs(slug).items():
        spec = ledger.spec_of(slug, name)
        seeds = sorted(s for s, (_, sp) in have.get(name, {}).items() if sp == spec)
        out[name] = (estimate([have[name][s][0] for s in seeds], row.op, row.threshold,
                              row.unit, seeds) if seeds else None)
    return out


def _ranges(seeds: Sequence[int]) -> str:
    out, seeds = [], sorted(seeds)
    for s in seeds:
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def stale(slug: str, values: Values | None = None) -> list[str]:
    """Why the paper's committed values are out of step with its claims ([] when current): a
    claim with no value, a value committed against another row (the row changed, no re-sweep),
    a claim missing seeds that others of the paper have, and values of a claim the paper no
    longer has. (A paper swept on fewer than the seeds 0-15 is current but ``pending``: see
    :func:`icml26.status.decide`.)"""
    have = rows_of(slug, values)
    names = set(ledger.claim_specs(slug))
    swept = set().union(*(set(v) for v in have.values()))
    again = "(re-sweep: icml26 sweep, then benchmarks/claim_values.py)"
    out = []
    for name in sorted(names):
        rows = have.get(name, {})
        if not rows:
            out.append(f"{slug}.{name}: no committed values")
            continue
        spec = ledger.spec_of(slug, name)
        other = sorted(s for s, (_, sp) in rows.items() if sp != spec)
        if other:
            specs = sorted({rows[s][1] or "(none)" for s in other})
            out.append(f"{slug}.{name}: seeds {_ranges(other)} committed against row "
                       f"{'/'.join(specs)}, the row is now {spec} {again}")
        missing = sorted(swept - set(rows))
        if missing:
            out.append(f"{slug}.{name}: no value for seeds {_ranges(missing)} {again}")
    out += [f"{slug}.{c}: values committed for a claim the paper no longer has"
            for c in sorted(set(have) - names)]
    return out
