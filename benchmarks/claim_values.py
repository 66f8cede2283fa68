"""Commit every seed's value: ``icml26 sweep`` datasets -> ``benchmarks/claim_values.csv``.

Each row of a sweep dataset (``icml26 sweep ... --out DIR``) becomes one committed row
(paper, claim, seed, scale, device, measured, spec), ``spec`` being the fingerprint of the
claim's row now (:func:`icml26.ledger.spec_of`). Rows of the same key are replaced. A dataset
row with an error (a task that raised, or a worker that was not on the pinned numeric paths)
is refused and named; nothing is written then.

    icml26 sweep PAPER ... --seeds 0:16 --out DIR   # on the pinned paths (the default)
    python benchmarks/claim_values.py DIR [DIR ...] [--papers ...] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26 import ledger, status, sweep


def rows_of(folder: Path, papers: list[str] | None) -> tuple[list[dict], list[str]]:
    df = sweep.read(folder)
    rows, refused = [], []
    for r in df.to_dict("records"):
        if papers and r["paper"] not in papers:
            continue
        if isinstance(r.get("error"), str) and r["error"]:  # NaN / None / "": none
            refused.append(f"{r['paper']} seed {r['seed']}: {r['error']}")
            continue
        names = status.claim_specs(r["paper"])
        if r["claim"] not in names:
            refused.append(f"{r['paper']}.{r['claim']}: not a claim of the paper any more")
            continue
        device = "cuda" if "+cuda" in str(r.get("version", "")) else "cpu"
        rows.append(dict(paper=r["paper"], claim=r["claim"], seed=int(r["seed"]),
                         scale=r["scale"], device=device, measured=float(r["measured"]),
                         spec=ledger.spec_of(r["paper"], r["claim"])))
    return rows, refused


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--papers", nargs="*")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    rows, refused = [], []
    for folder in args.datasets:
        got, bad = rows_of(folder, args.papers)
        rows += got
        refused += bad
    if refused:
        print("refused:\n  " + "\n  ".join(refused), file=sys.stderr)
        return 2
    pairs = sorted({(r["paper"], r["seed"]) for r in rows})
    print(f"{len(rows)} values of {len(pairs)} (paper, seed) pairs")
    if not args.no_write:
        print(f"{ledger.merge(rows)} rows in {ledger.values_path()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
