"""Every paper's claims on one device, compared with the committed CPU values.

``benchmarks/claim_values.csv`` (:mod:`icml26.ledger`) holds every paper's claims at quick
scale, per seed, as the CPU computes them on the pinned numeric paths (the values the device
plumbing must leave bit-identical on the CPU). This script
recomputes claims for the papers and seeds asked, on the device asked, one paper per process
(``--jobs`` at once, each under ``--timeout`` seconds), and writes

- ``OUT/claims.csv``: paper, claim, seed, scale, device, measured, holds, expected, role,
  cpu_measured, abs_diff, rel_diff, seconds;
- ``OUT/summary.md``: per paper, the wall seconds, the expected claims that fail, and the
  largest relative difference from the CPU ledger.

    python benchmarks/claims_ledger.py --device cuda --out DIR [--papers ...] [--seeds 0 1]
    python benchmarks/claims_ledger.py --record            # commit these CPU values (CPU only)
    python benchmarks/claims_ledger.py --check [--papers]  # CPU values == committed, bit for bit

Imports no panel: it runs on the GPU machine from a mirror tree on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

LEDGER = Path(__file__).with_name("claim_values.csv")
FIELDS = ("paper", "claim", "seed", "scale", "device", "measured", "holds", "expected", "role",
          "cpu_measured", "abs_diff", "rel_diff", "seconds", "error")


def one(slug: str, seed: int, scale: str, device: str) -> list[dict]:
    """The claims of one (paper, seed) in this process, as rows."""
    from icml26 import papers

    start = time.perf_counter()
    claims = papers.get(slug).claims(seed=seed, scale=scale, device=device)
    seconds = time.perf_counter() - start
    return [dict(paper=slug, claim=c.name, seed=seed, scale=scale, device=device,
                 measured=c.measured, holds=c.holds, expected=c.expected, role=c.role,
                 seconds=round(seconds, 2), error="") for c in claims]


def in_subprocess(slug: str, seed: int, scale: str, device: str, timeout: float) -> list[dict]:
    """:func:`one` in a fresh process (a crash or a hang costs one paper, not the run)."""
    code = (f"import json, sys; sys.path[:0] = [{str(Path(__file__).parent)!r}]; "
            f"import claims_ledger as m; "
            f"print(json.dumps(m.one({slug!r}, {int(seed)}, {scale!r}, {device!r})))")
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout)  # the caller's OMP_NUM_THREADS: values
        # depend on torch's thread count (float reductions, then training), the ledger's on 1
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
        error = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    except subprocess.TimeoutExpired:
        error = f"timed out after {timeout:.0f} s"
    return [dict(paper=slug, claim="", seed=seed, scale=scale, device=device,
                 measured=math.nan, holds=False, expected=False, role="",
                 seconds=round(time.perf_counter() - start, 2), error=error)]


def read_ledger(scale: str = "quick") -> dict[tuple[str, str, int], float]:
    """The committed CPU values ``{(paper, claim, seed): measured}`` at ``scale``."""
    from icml26 import ledger

    return {(p, c, s): v for (p, c, s, sc, d), (v, _spec) in ledger.read(LEDGER).items()
            if sc == scale and d == "cpu"}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", nargs="*", help="default: all 19")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0])
    ap.add_argument("--scale", choices=["quick", "paper"], default="quick")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=None, help="folder for claims.csv and summary.md")
    ap.add_argument("--jobs", type=int, default=1, help="papers at once (one process each)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per (paper, seed)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--record", action="store_true", help="rewrite the CPU ledger")
    mode.add_argument("--check", action="store_true", help="exit 1 unless CPU == ledger")
    args = ap.parse_args(argv)
    from icml26 import papers
    from icml26.common import resolve_device

    try:
        device = str(resolve_device(args.device))
        slugs = args.papers or [p.slug for p in papers.PAPERS]
        for s in slugs:
            papers.get(s)
    except ValueError as e:
        print(f"claims_ledger: {e}", file=sys.stderr)
        return 2
    if (args.record or args.check) and device != "cpu":
        print("claims_ledger: --record and --check are for the CPU ledger", file=sys.stderr)
        return 2
    tasks = [(s, seed) for s in slugs for seed in args.seeds]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:  # threads wait on processes
        done = list(pool.map(lambda t: in_subprocess(t[0], t[1], args.scale, device,
                                                     args.timeout), tasks))
    rows = [r for rs in done for r in rs]
    ledger = read_ledger(args.scale)
    for r in rows:
        cpu = ledger.get((r["paper"], r["claim"], r["seed"]), math.nan)
        r["cpu_measured"] = cpu
        r["abs_diff"] = abs(r["measured"] - cpu)
        r["rel_diff"] = r["abs_diff"] / max(abs(cpu), 1e-12)
    if args.record:
        from icml26 import ledger as committed

        new = [dict(paper=r["paper"], claim=r["claim"], seed=r["seed"], scale=r["scale"],
                    device="cpu", measured=r["measured"],
                    spec=committed.spec_of(r["paper"], r["claim"]))
               for r in rows if not r["error"]]
        committed.merge(new, LEDGER)
        print(f"ledger: {len(new)} rows for {len(tasks)} (paper, seed) pairs -> {LEDGER}")
        return 1 if any(r["error"] for r in rows) else 0
    if args.check:
        bad = [f"{r['paper']}.{r['claim']} seed {r['seed']}: {r['measured']!r} vs ledger "
               f"{r['cpu_measured']!r}" for r in rows
               if r["error"] or not same(r["measured"], r["cpu_measured"])]
        print("\n".join(bad) or f"bit-identical: {len(rows)} claims of {len(tasks)} pairs")
        return 1 if bad else 0
    out = Path(args.out or f"claims-{device.replace(':', '')}")
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "claims.csv", rows, FIELDS)
    (out / "summary.md").write_text(summary(rows, device, args.scale))
    print((out / "summary.md").read_text())
    return 0


def summary(rows: list[dict], device: str, scale: str) -> str:
    lines = [f"# claims on {device}, {scale} scale", "",
             "| paper | seed | seconds | expected claims failing | max rel. diff vs CPU | error |",
             "|---|---|---|---|---|---|"]
    pairs = dict.fromkeys((r["paper"], r["seed"]) for r in rows)
    for slug, seed in pairs:
        rs = [r for r in rows if r["paper"] == slug and r["seed"] == seed]
        failing = [r["claim"] for r in rs if r["expected"] and not r["holds"]]
        diffs = [r["rel_diff"] for r in rs if not math.isnan(r["rel_diff"])]
        lines.append(f"| {slug} | {seed} | {rs[0]['seconds']} | {', '.join(failing) or '-'} | "
                     f"{max(diffs):.2e} | {rs[0]['error'] or '-'} |" if diffs else
                     f"| {slug} | {seed} | {rs[0]['seconds']} | {', '.join(failing) or '-'} | "
                     f"- | {rs[0]['error'] or '-'} |")
    return "\n".join(lines) + "\n"


def _write(path: Path, rows: list[dict], fields) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    raise SystemExit(main())
