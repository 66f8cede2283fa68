"""Every seed's value of every claim, committed: ``benchmarks/claim_values.csv``.

One row per (paper, claim, seed, scale, device): the value ``claims(seed, scale, device)``
measured on the pinned numeric paths (:mod:`icml26.numerics`), and ``spec``, the fingerprint of
the claim's row it was measured against (:func:`spec_of`: the paper's ``CLAIMS_VERSION`` and the
row's op, threshold, expected flag, role, unit and source). The file is written from
``icml26 sweep`` datasets by ``benchmarks/claim_values.py``; CI re-measures seeds 0 and 1 and
compares each value with the committed one (``tests/test_claim_values.py``), so a change that
moves a value without a re-sweep fails.

The tolerance of that comparison (:data:`REL_TOL`, :data:`ABS_TOL`) is what one machine's pinned
paths cannot promise another's: the pins make MKL, oneDNN, ATen, OpenBLAS and numpy run the same
code on every x86-64 CPU with AVX2 of one vendor (measured bit-identical under every variation
this machine can emulate, ``benchmarks/numerics_pins.csv``), but libm (``exp``, ``log`` in
glibc) may differ by an ulp between distributions. A trained model that moved would move far
beyond it.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

FIELDS = ("paper", "claim", "seed", "scale", "device", "measured", "spec")
REL_TOL = 1e-9
ABS_TOL = 1e-12


def values_path() -> Path:
    """``$ICML26_CLAIM_VALUES``, else ``benchmarks/claim_values.csv`` of this checkout."""
    env = os.environ.get("ICML26_CLAIM_VALUES")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "benchmarks" / \
        "claim_values.csv"


def claims_module(slug: str):
    """The paper's claims module, ``icml26.<slug>.claims`` (imported on first use)."""
    return importlib.import_module(f"icml26.{slug}.claims")


def claim_specs(slug: str) -> dict:
    """The paper's static claim rows ``{name: ClaimSpec}`` (re-exported by
    :mod:`icml26.status`; here, below it, because every value's fingerprint reads them)."""
    specs = getattr(claims_module(slug), "CLAIM_SPECS", None)
    if not isinstance(specs, dict) or not specs:
        raise LookupError(f"icml26.{slug}.claims has no CLAIM_SPECS dict")
    return specs


def claims_version(slug: str) -> int:
    """The paper's ``CLAIMS_VERSION`` (1 when unset), bumped when a measurement changes."""
    return int(getattr(claims_module(slug), "CLAIMS_VERSION", 1))


def spec_of(slug: str, name: str) -> str:
    """What a value was measured against: the claim's row and the paper's measurement
    version (a row's statement wording is not in it; every other field is)."""
    row = claim_specs(slug)[name]
    fields = [claims_version(slug), name, row.op, float(row.threshold),
              bool(row.expected), row.role, getattr(row, "unit", ""), getattr(row, "source", "")]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:12]


def _is_paper(slug: str) -> bool:
    """Whether ``slug`` is a built paper (it has claim rows)."""
    try:
        claim_specs(slug)
    except (ImportError, LookupError):
        return False
    return True


def read(path: Path | None = None) -> dict[tuple[str, str, int, str, str], tuple[float, str]]:
    """``{(paper, claim, seed, scale, device): (measured, spec)}``."""
    path = values_path() if path is None else Path(path)
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {(r["paper"], r["claim"], int(r["seed"]), r["scale"], r["device"]):
                (float(r["measured"]), r["spec"]) for r in csv.DictReader(f)}


def committed(slug: str, seed: int, scale: str = "quick", device: str = "cpu",
              path: Path | None = None) -> dict[str, tuple[float, str]]:
    """The committed ``{claim: (measured, spec)}`` of one (paper, seed)."""
    return {c: v for (p, c, s, sc, d), v in read(path).items()
            if p == slug and s == seed and sc == scale and d == device}


def same(measured: float, committed_value: float) -> bool:
    """Equal within the cross-machine tolerance (NaN equals NaN: a gated-out claim)."""
    if math.isnan(measured) or math.isnan(committed_value):
        return math.isnan(measured) and math.isnan(committed_value)
    return math.isclose(measured, committed_value, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def moved(slug: str, seed: int, claims: Iterable, scale: str = "quick",
          device: str = "cpu", path: Path | None = None) -> list[str]:
    """Each claim whose value differs from the committed one, or has none, or was committed
    against another row (a sentence each; [] when every value stands)."""
    have = committed(slug, seed, scale, device, path)
    out = []
    for c in claims:
        if c.name not in have:
            out.append(f"{slug}.{c.name} seed {seed}: no committed value")
            continue
        value, spec = have[c.name]
        if spec != spec_of(slug, c.name):
            out.append(f"{slug}.{c.name} seed {seed}: committed against row {spec}, the row is "
                       f"now {spec_of(slug, c.name)} (re-sweep)")
        elif not same(c.measured, value):
            out.append(f"{slug}.{c.name} seed {seed}: measured {c.measured!r}, committed "
                       f"{value!r}")
    return out


def merge(rows: Iterable[dict], path: Path | None = None) -> int:
    """Write ``rows`` into the committed file, replacing rows of the same key; sorted by
    paper, seed, claim. Returns the number of rows written. For every paper ``rows`` name,
    the committed values of claims the paper no longer has are dropped (a removed or renamed
    claim: ``benchmarks/claim_changes.csv`` keeps its history)."""
    path = values_path() if path is None else Path(path)
    rows = list(rows)
    current = {slug: set(claim_specs(slug)) for slug in {r["paper"] for r in rows}
               if _is_paper(slug)}
    table = {k: {"measured": v[0], "spec": v[1]} for k, v in read(path).items()
             if k[0] not in current or k[1] in current[k[0]]}
    for r in rows:
        key = (r["paper"], r["claim"], int(r["seed"]), r["scale"], r["device"])
        table[key] = {"measured": float(r["measured"]), "spec": r["spec"]}
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FIELDS)
        for (p, c, s, sc, d), v in sorted(table.items(), key=lambda kv: (kv[0][0], kv[0][3],
                                                                         kv[0][4], kv[0][2],
                                                                         kv[0][1])):
            w.writerow([p, c, s, sc, d, repr(v["measured"]), v["spec"]])
    return len(table)
