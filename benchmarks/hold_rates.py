"""Hold rates of every claim over a seed range, from `icml26 sweep` datasets, as a CSV.

Reads one or more sweep datasets (``--out`` folders of ``icml26 sweep``), keeps the seeds in
``--seeds`` and writes one row per (paper, claim): held on k of n seeds, the Wilson 95%
interval, whether the claim is expected to hold, and the seeds where it failed. A paper whose
sweep has not covered the whole range is written with the seeds it has (``n`` says how many).

    python benchmarks/hold_rates.py DATASET [DATASET ...] [--seeds 0:32] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from icml26 import papers, sweep
from icml26.kernels.bench import append_csv

OUT = Path(__file__).with_name("hold_rates.csv")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", help="sweep output folders (icml26 sweep --out)")
    ap.add_argument("--seeds", default="0:32", help="A:B (half open) or a list 3,5,8")
    ap.add_argument("--scale", default="quick")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    seeds = sweep.parse_seeds(args.seeds)
    status = {p.slug: p.status for p in papers.PAPERS}
    when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    rows, seen = [], set()
    for folder in map(Path, args.datasets):
        df = sweep.read(folder, scale=args.scale, seeds=seeds)
        for c in sweep.summarize(df)["claims"]:
            if (c["paper"], c["claim"]) in seen:  # the first dataset that has it wins
                continue
            seen.add((c["paper"], c["claim"]))
            rows.append(dict(
                when=when, paper=c["paper"], status=status.get(c["paper"], "?"),
                claim=c["claim"], expected=c["expected"], held=c["k"], seeds=c["n"],
                seed_range=args.seeds, rate=round(c["rate"], 4), wilson_lo=round(c["lo"], 4),
                wilson_hi=round(c["hi"], 4),
                failed_on=" ".join(map(str, c["failing_seeds"]))))
    rows.sort(key=lambda r: (r["paper"], not r["expected"], r["claim"]))
    width = max(len(f"{r['paper']}.{r['claim']}") for r in rows)
    for r in rows:
        flag = "FINDING" if r["expected"] and r["held"] < r["seeds"] else ""
        print(f"{r['paper'] + '.' + r['claim']:<{width}}  {r['held']:>3}/{r['seeds']:<3} "
              f"{'expected' if r['expected'] else 'reported'}  {flag} {r['failed_on'][:60]}")
    if not args.no_write:
        append_csv(OUT, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
