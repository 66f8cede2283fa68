"""Dashboard latency in Chromium: slider key press -> updated plot, median per app.

Serves every reproduced app plus a trivial one-curve app in the same process and run, so
the ratio to the trivial app is comparable across machines. Appends to
``benchmarks/dashboard_latency.csv`` and prints a table. Budget (DEVELOPERS.md): analytic
papers <= 1.3x the trivial app; heavy papers <= 1 s.

    python benchmarks/dashboard_latency.py [--presses 15] [SLUG ...]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
from pathlib import Path

from icml26 import papers
from icml26.dashboards.browser import (
    all_apps,
    launch,
    median,
    open_app,
    serve_in_thread,
    slider_latency,
)

OUT = Path(__file__).with_name("dashboard_latency.csv")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slugs", nargs="*", help="papers (default: every reproduced one)")
    ap.add_argument("--presses", type=int, default=15)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    slugs = args.slugs or [p.slug for p in papers.reproduced()]
    server, port = serve_in_thread(all_apps())
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            for app in ["trivial", *slugs]:
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                open_app(page, f"http://127.0.0.1:{port}/{app}")
                slider_latency(page, presses=2)  # warm-up: first updates compile/cache
                times = slider_latency(page, presses=args.presses)
                rows.append({"app": app, "median_s": median(times), "max_s": max(times)})
                page.context.close()
            browser.close()
    finally:
        server.stop()
    base = rows[0]["median_s"]
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    print(f"{'app':18s} {'median (s)':>11s} {'max (s)':>8s} {'x trivial':>9s}")
    for r in rows:
        r.update(ratio_to_trivial=r["median_s"] / base, presses=args.presses, when=stamp,
                 machine=f"{platform.machine()} {os.cpu_count()} cpu")
        print(f"{r['app']:18s} {r['median_s']:11.3f} {r['max_s']:8.3f} "
              f"{r['ratio_to_trivial']:9.2f}")
    if not args.no_write:
        new = not OUT.exists()
        with OUT.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["when", "machine", "app", "presses", "median_s",
                                              "max_s", "ratio_to_trivial"])
            if new:
                w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
