"""Hold rates of every claim over a seed range, as a CSV: the record the papers' status is
computed from (``icml26.status``).

Reads ``icml26 sweep`` datasets (``--out`` folders) and/or per-seed record CSVs
(``benchmarks/<slug>_seeds.csv``: columns seed, claim, holds, expected, ...), keeps the seeds in
``--seeds`` and appends one row per (paper, claim): held on k of n seeds, the Wilson 95%
interval, whether the claim is expected to hold, the seeds where it failed, and ``spec``: the
fingerprint of the paper's claims it was measured against (``icml26.status.fingerprint``). A
record whose ``expected`` flags differ from the paper's current claims is refused: it was
measured against other claims, so it cannot stand for these.

    python benchmarks/hold_rates.py [DATASET ...] [--records CSV ...] [--seeds 0:32]
                                    [--papers SLUG ...] [--no-write]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import sys
from pathlib import Path

from icml26 import status, sweep
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_name("hold_rates.csv")
FIELDS = ("when", "paper", "claim", "expected", "held", "seeds", "seed_range", "rate",
          "wilson_lo", "wilson_hi", "failed_on", "spec")


def from_records(path: Path, seeds: list[int]) -> list[dict]:
    """Per-claim summaries (the shape of ``sweep.summarize``) of a per-seed record CSV."""
    slug = path.name.removesuffix("_seeds.csv")
    per: dict[str, dict] = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if int(r["seed"]) not in seeds:
                continue
            c = per.setdefault(r["claim"], dict(paper=slug, claim=r["claim"], k=0, n=0,
                                                expected=r["expected"] == "True",
                                                failing_seeds=[]))
            c["n"] += 1
            if r["holds"] == "True":
                c["k"] += 1
            else:
                c["failing_seeds"].append(int(r["seed"]))
    for c in per.values():
        c["rate"] = c["k"] / c["n"]
        c["lo"], c["hi"] = sweep.wilson(c["k"], c["n"])
    return list(per.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", help="sweep output folders (icml26 sweep --out)")
    ap.add_argument("--records", nargs="*", default=[],
                    help="per-seed record CSVs (benchmarks/<slug>_seeds.csv)")
    ap.add_argument("--seeds", default="0:32", help="A:B (half open) or a list 3,5,8")
    ap.add_argument("--papers", nargs="*", help="only these papers")
    ap.add_argument("--scale", default="quick")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    seeds = sweep.parse_seeds(args.seeds)
    when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    found: list[dict] = []
    for folder in map(Path, args.datasets):
        found += sweep.summarize(sweep.read(folder, scale=args.scale, seeds=seeds))["claims"]
    for path in map(Path, args.records):
        found += from_records(path, seeds)
    rows, seen, refused = [], set(), []
    for c in found:
        if args.papers and c["paper"] not in args.papers:
            continue
        if (c["paper"], c["claim"]) in seen:  # the first dataset that has it wins
            continue
        seen.add((c["paper"], c["claim"]))
        spec = status.claim_specs(c["paper"]).get(c["claim"])
        if spec is None or bool(spec[3]) != bool(c["expected"]):
            refused.append(f"{c['paper']}.{c['claim']}: the record's expected={c['expected']} "
                           f"but the paper's claims say {None if spec is None else spec[3]}")
            continue
        rows.append(dict(
            when=when, paper=c["paper"], claim=c["claim"], expected=c["expected"],
            held=c["k"], seeds=c["n"], seed_range=args.seeds, rate=round(c["rate"], 4),
            wilson_lo=round(c["lo"], 4), wilson_hi=round(c["hi"], 4),
            failed_on=" ".join(map(str, c["failing_seeds"])),
            spec=status.fingerprint(c["paper"])))
    if refused:
        print("refused (measured against other claims; re-sweep):\n  " + "\n  ".join(refused),
              file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r["paper"], not r["expected"], r["claim"]))
    width = max((len(f"{r['paper']}.{r['claim']}") for r in rows), default=10)
    for r in rows:
        flag = "FINDING" if r["expected"] and r["held"] < r["seeds"] else ""
        print(f"{r['paper'] + '.' + r['claim']:<{width}}  {r['held']:>3}/{r['seeds']:<3} "
              f"{'expected' if r['expected'] else 'reported'}  {flag} {r['failed_on'][:60]}")
    if not args.no_write:
        append_csv(OUT, rows, fields=FIELDS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
