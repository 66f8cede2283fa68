"""The summary of a sweep dataset: per claim, held on k of n seeds with a Wilson 95%
interval and the seeds where it failed (pure functions of the DataFrame ``sweep.read`` gives).
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (NaN when n is 0)."""
    if n == 0:
        return math.nan, math.nan
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def summarize(df) -> dict:
    """``{"claims": [...], "failed_tasks": [...]}``: per (paper, claim) in dataset order, held
    on ``k`` of ``n`` seeds, the Wilson 95% interval, and the seeds where it failed."""
    ok = df[df.error.isna()]
    claims = []
    for (paper, claim), g in ok.groupby(["paper", "claim"], sort=False):
        k, n = int(g.holds.sum()), len(g)
        lo, hi = wilson(k, n)
        claims.append(dict(paper=paper, claim=claim, k=k, n=n, rate=k / n, lo=lo, hi=hi,
                           expected=bool(g.expected.any()),
                           failing_seeds=sorted(int(s) for s in g.seed[~g.holds])))
    failed = [dict(paper=r.paper, seed=int(r.seed), error=r.error)
              for r in df[df.error.notna()].itertuples()]
    return {"claims": claims, "failed_tasks": failed}


def format_summary(summary: dict, max_seeds: int = 8) -> str:
    """Plain-text table: per claim, k/n, the rate with its 95% interval, expected, and the
    seeds where it failed (an expected claim below 100% is marked FINDING)."""
    header = ["paper", "claim", "held", "rate [95% CI]", "expected", "failed on seeds"]
    rows = []
    for c in summary["claims"]:
        seeds = c["failing_seeds"]
        shown = ",".join(map(str, seeds[:max_seeds])) + ("…" if len(seeds) > max_seeds else "")
        flag = "yes" if c["expected"] else "no"
        if c["expected"] and c["k"] < c["n"]:
            flag += " FINDING"
        rows.append([c["paper"], c["claim"], f"{c['k']}/{c['n']}",
                     f"{c['rate']:.0%} [{c['lo']:.0%}, {c['hi']:.0%}]", flag, shown])
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    for f in summary["failed_tasks"]:
        lines.append(f"FAILED TASK {f['paper']} seed {f['seed']}: {f['error']}")
    return "\n".join(lines)
